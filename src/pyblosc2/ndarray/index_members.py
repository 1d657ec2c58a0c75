"""NDArray's index methods (python-blosc2 4.x's ``create_index``, ``index``, ``indexes``,
``drop_index``, ``rebuild_index``, ``compact_index``), answered by the registered index
provider (:mod:`.indexhook`; :mod:`pyblosc2.indexes` registers itself on import).

>>> import numpy as np; from pyblosc2 import asarray, IndexKind
>>> a = asarray(np.arange(100), chunks=(50,), blocks=(10,))
>>> a.create_index(kind=IndexKind.SUMMARY)["kind"], [i.kind for i in a.indexes]
('summary', [<IndexKind.SUMMARY: 'summary'>])
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .indexhook import provider

__all__ = ["NDArrayIndexes"]


def _call(fn: str, array: Any, /, *args: Any, **kwargs: Any) -> Any:
    p = provider()
    if p is None:
        raise NotImplementedError(f"{fn}: indexes need pyblosc2.indexes (import pyblosc2)")
    return p.call(fn, array, *args, **kwargs)


class NDArrayIndexes:
    """The index methods of :class:`~pyblosc2.NDArray`."""

    def _indexes_mutated(self) -> None:
        """After a write or resize: the array's indexes (if any) are stale."""
        p = provider()
        if p is not None:
            p.mutated(self)

    def create_index(self, field: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """Build an index of this 1-d array, one of its fields or an expression of them;
        returns its descriptor. Keywords: ``expression``, ``operands``, ``kind`` (an
        :class:`~pyblosc2.IndexKind`, default BUCKET), ``optlevel`` (0..9, default 5),
        ``persistent``, ``build``, ``name``, ``tmpdir``, ``cparams``, ``method``,
        ``opsi_max_cycles``.

        >>> import numpy as np; from pyblosc2 import asarray, IndexKind
        >>> asarray(np.arange(10)).create_index(kind=IndexKind.FULL)["target"]
        {'source': 'field', 'field': None}
        """
        return _call("create_index", self, field, **kwargs)

    def drop_index(self, field: str | None = None, name: str | None = None) -> None:
        """Remove an index and its pieces.

        >>> import numpy as np; from pyblosc2 import asarray, IndexKind
        >>> a = asarray(np.arange(10)); _ = a.create_index(kind=IndexKind.FULL)
        >>> a.drop_index(); a.indexes
        []
        """
        _call("drop_index", self, field=field, name=name)

    def rebuild_index(self, field: str | None = None, name: str | None = None) -> dict[str, Any]:
        """Build an index again from the array as it is now (after a write made it stale).

        >>> import numpy as np; from pyblosc2 import asarray, IndexKind
        >>> a = asarray(np.arange(10)); _ = a.create_index(kind=IndexKind.FULL)
        >>> a[0] = 5; a.index().stale, a.rebuild_index()["stale"]
        (True, False)
        """
        return _call("rebuild_index", self, field=field, name=name)

    def compact_index(self, field: str | None = None, name: str | None = None) -> dict[str, Any]:
        """Merge the sorted runs ``append`` added to a FULL index.

        >>> import numpy as np; from pyblosc2 import asarray, IndexKind
        >>> a = asarray(np.arange(10)); _ = a.create_index(kind=IndexKind.FULL)
        >>> _ = a.append([3]); len(a.index()["full"]["runs"]), a.compact_index()["full"]["runs"]
        (1, [])
        """
        return _call("compact_index", self, field=field, name=name)

    def index(self, field: str | None = None, name: str | None = None) -> Any:
        """The handle of one index (the only one when neither ``field`` nor ``name``).

        >>> import numpy as np; from pyblosc2 import asarray, IndexKind
        >>> a = asarray(np.arange(10)); _ = a.create_index(kind=IndexKind.OPSI)
        >>> a.index().kind
        <IndexKind.OPSI: 'opsi'>
        """
        return _call("index", self, field=field, name=name)

    def iter_sorted(
        self,
        order: str | list[str] | None = None,
        *,
        start: int | None = None,
        stop: int | None = None,
        step: int | None = None,
        batch_size: int | None = None,
    ) -> Iterator[Any]:
        """The items in the order of ``order`` (fields, or expressions of fields; the first
        needs a FULL index), stable; ``start``/``stop``/``step`` slice that sequence, and
        ``batch_size`` items are read at a time.

        >>> import numpy as np; from pyblosc2 import asarray, IndexKind
        >>> a = asarray(np.array([3, 1, 2])); _ = a.create_index(kind=IndexKind.FULL)
        >>> [int(v) for v in a.iter_sorted()]
        [1, 2, 3]
        """
        keys = [order] if isinstance(order, str) else order
        if keys is None:
            keys = list(self.dtype.names or ()) or ["__self__"]  # type: ignore[attr-defined]
        pos = _call("iter_order", self, list(keys))[slice(start, stop, step)]
        size = max(1, int(batch_size or 4096))
        for at in range(0, len(pos), size):
            yield from self[pos[at : at + size]]  # type: ignore[index]

    @property
    def indexes(self) -> list[Any]:
        """The handles of all the indexes, by token.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> asarray(np.arange(3)).indexes
        []
        """
        return _call("indexes", self)
