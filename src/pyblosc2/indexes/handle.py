"""The handle of one index (python-blosc2's ``blosc2.indexing.Index``): a live, read-only
mapping over its descriptor, with its sizes and ``drop``/``rebuild``/``compact``.

>>> import numpy as np; from pyblosc2 import asarray
>>> a = asarray(np.arange(100), chunks=(50,), blocks=(10,))
>>> _ = a.create_index(kind=IndexKind.PARTIAL)
>>> idx = a.index(); idx.kind, idx.stale, idx["field"]
(<IndexKind.PARTIAL: 'partial'>, False, None)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from typing import Any

from .descriptor import components
from .kinds import IndexKind
from .manage import compact_index, drop_index, rebuild_index
from .store import load_store, open_sidecar

__all__ = ["Index"]


class Index(Mapping[str, Any]):
    """An index of an NDArray, read live from the array's store (a dropped index raises
    ``KeyError``).

    >>> import numpy as np; from pyblosc2 import asarray
    >>> a = asarray(np.arange(10)); _ = a.create_index(kind=IndexKind.FULL)
    >>> a.indexes[0].name
    '__self__'
    """

    def __init__(self, array: Any, token: str) -> None:
        self._array = array
        self._token = token

    def _descriptor(self) -> dict[str, Any]:
        d = load_store(self._array)["indexes"].get(self._token)
        if d is None:
            raise KeyError("index not found")
        return d

    @property
    def descriptor(self) -> dict[str, Any]:
        """A copy of the descriptor.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> a = asarray(np.arange(4)); _ = a.create_index(kind=IndexKind.SUMMARY)
        >>> a.index().descriptor["kind"]
        'summary'
        """
        return copy.deepcopy(self._descriptor())

    @property
    def kind(self) -> IndexKind:
        """The kind (an :class:`IndexKind`)."""
        return IndexKind(self._descriptor()["kind"])

    @property
    def field(self) -> str | None:
        """The field indexed (None for the array itself or an expression)."""
        return self._descriptor().get("field")

    @property
    def name(self) -> str | None:
        """The name given at creation (the token by default)."""
        return self._descriptor().get("name")

    @property
    def target(self) -> dict[str, Any]:
        """What is indexed: ``{"source": "field", "field": ...}`` or an expression."""
        return self.descriptor["target"]

    @property
    def persistent(self) -> bool:
        """Whether the pieces are files next to the array."""
        return bool(self._descriptor()["persistent"])

    @property
    def stale(self) -> bool:
        """Whether a write since the build makes the index unusable until rebuilt."""
        return bool(self._descriptor().get("stale", False))

    def _sizes(self) -> tuple[int, int]:
        d = self._descriptor()
        nbytes = cbytes = 0
        for c in components(self._array, d):
            h = open_sidecar(self._array, d, c.category, c.name, c.path, c.dtype, c.length)
            nbytes += int(h.nbytes)
            cbytes += int(h.cbytes)
        return nbytes, cbytes

    @property
    def nbytes(self) -> int:
        """Uncompressed size of the pieces."""
        return self._sizes()[0]

    @property
    def cbytes(self) -> int:
        """Compressed size of the pieces."""
        return self._sizes()[1]

    @property
    def cratio(self) -> float:
        """``nbytes / cbytes``."""
        nbytes, cbytes = self._sizes()
        return math.inf if cbytes == 0 else nbytes / cbytes

    def storage_stats(self) -> tuple[int, int, float] | None:
        """``(nbytes, cbytes, cratio)``."""
        nbytes, cbytes = self._sizes()
        return nbytes, cbytes, math.inf if cbytes == 0 else nbytes / cbytes

    def drop(self) -> None:
        """Remove the index and its pieces."""
        d = self._descriptor()
        drop_index(self._array, field=d.get("field"), name=d.get("name"))

    def rebuild(self) -> Index:
        """Build it again from the array as it is; returns this handle."""
        d = self._descriptor()
        rebuild_index(self._array, field=d.get("field"), name=d.get("name"))
        return self

    def compact(self) -> Index:
        """Merge a FULL index's appended runs; returns this handle."""
        d = self._descriptor()
        compact_index(self._array, field=d.get("field"), name=d.get("name"))
        return self

    def __getitem__(self, key: str) -> Any:
        return self.descriptor[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.descriptor)

    def __len__(self) -> int:
        return len(self._descriptor())

    def __repr__(self) -> str:
        try:
            d = self._descriptor()
        except KeyError:
            return "Index(<dropped>)"
        return (
            f"Index(kind={d['kind']!r}, field={d.get('field')!r}, "
            f"name={d.get('name')!r}, stale={d.get('stale')!r})"
        )
