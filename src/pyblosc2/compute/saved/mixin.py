"""What every lazy array has for saving: ``save``/``to_cframe`` (:mod:`.writer`), the user's
``vlmeta`` (``attrs``), kept in memory and written with the array (vlmeta
``_b2o_user_vlmeta``), and the context-manager protocol python-blosc2's ``blosc2.open``
results have. A lazy array opened from a file keeps its carrier (``array``, ``schunk``):
changing its vlmeta then writes the carrier (refused when it was opened read-only).

>>> import numpy as np; from pyblosc2 import asarray
>>> e = asarray(np.arange(3)) + 1
>>> e.vlmeta["units"] = "m"; dict(e.vlmeta), e.attrs["units"]
({'units': 'm'}, 'm')
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

from .layout import USER_VLMETA
from .writer import save, to_cframe

__all__ = ["LazyArrayVLMeta", "SavedMixin"]


class LazyArrayVLMeta(MutableMapping[str, Any]):
    """The user metadata of a lazy array (python-blosc2's ``LazyArrayVLMeta``)."""

    def __init__(self, owner: SavedMixin) -> None:
        self._owner = owner

    def __getitem__(self, key: str) -> Any:
        return self._owner._get_user_vlmeta()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        data = dict(self._owner._get_user_vlmeta())
        data[key] = value
        self._owner._set_user_vlmeta(data)

    def __delitem__(self, key: str) -> None:
        data = dict(self._owner._get_user_vlmeta())
        del data[key]
        self._owner._set_user_vlmeta(data)

    def __iter__(self) -> Iterator[str]:
        return iter(self._owner._get_user_vlmeta())

    def __len__(self) -> int:
        return len(self._owner._get_user_vlmeta())

    def getall(self) -> dict[str, Any]:
        """Every entry (a copy)."""
        return dict(self._owner._get_user_vlmeta())

    def __repr__(self) -> str:
        return repr(self.getall())


class SavedMixin:
    """``save``, ``to_cframe``, ``vlmeta``/``attrs`` and ``with`` for lazy arrays."""

    def _get_user_vlmeta(self) -> dict[str, Any]:
        data = self.__dict__.get("_vlmeta_user")
        if data is None:
            array = self.__dict__.get("array")
            data = {}
            if array is not None and USER_VLMETA in array.schunk.vlmeta:
                stored = array.schunk.vlmeta[USER_VLMETA]
                data = dict(stored) if isinstance(stored, dict) else {}
            self.__dict__["_vlmeta_user"] = data
        return data

    def _set_user_vlmeta(self, metadata: dict[str, Any], *, sync: bool = True) -> None:
        array = self.__dict__.get("array")
        if sync and array is not None:
            array.schunk.vlmeta[USER_VLMETA] = dict(metadata)  # refused in reading mode
        self.__dict__["_vlmeta_user"] = dict(metadata)

    @property
    def vlmeta(self) -> LazyArrayVLMeta:
        """The user's variable-length metadata (saved with the array)."""
        return LazyArrayVLMeta(self)

    @property
    def attrs(self) -> LazyArrayVLMeta:
        """The user's attributes: :attr:`vlmeta` by its other name."""
        return self.vlmeta

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def save(self, urlpath: Any = None, **kwargs: Any) -> None:
        """Save this lazy array at ``urlpath`` as python-blosc2 does (its b2o carrier; a UDF
        of a plain Python function in the legacy ``_LazyArray`` form): its recipe and
        references to its operands, which must be stored on disk inside the directory it
        is saved to. ``kwargs`` are storage arguments of the carrier (``cparams``,
        ``meta``...). Reopen it with ``pyblosc2.open(urlpath, deserialize="full")``.

        >>> import os, tempfile, numpy as np, pyblosc2
        >>> d = tempfile.mkdtemp()
        >>> a = pyblosc2.asarray(np.arange(4.0), urlpath=os.path.join(d, "a.b2nd"), mode="w")
        >>> (a * 2).save(os.path.join(d, "e.b2nd"))
        >>> pyblosc2.open(os.path.join(d, "e.b2nd"), deserialize="full")[:].tolist()
        [0.0, 2.0, 4.0, 6.0]
        """
        save(self, urlpath, **kwargs)

    def to_cframe(self) -> bytes:
        """The saved form as an in-memory frame (python-blosc2's ``to_cframe``: operand
        paths as the operands give them)."""
        return to_cframe(self)
