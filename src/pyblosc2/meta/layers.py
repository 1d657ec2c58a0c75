"""The ``meta``/``vlmeta`` mappings of a container (frame-format.md §9.1, §9.2): entries stored
as bytes, decoded on access by :mod:`.values` (errors name the entry).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..errors import ParamError, ParamTypeError
from .values import pack_vlmeta, packb, unpack_vlmeta, unpackb

__all__ = ["Meta", "MetaHost", "RawMetalayer", "VLMeta"]


class RawMetalayer(bytes):
    """Metalayer content stored as given (not msgpack-encoded), e.g. ``b2nd``."""


class MetaHost(Protocol):
    """What :class:`Meta` and :class:`VLMeta` need from a container (SChunk implements it)."""

    @property
    def metalayers(self) -> tuple[tuple[str, bytes], ...]:
        """``(name, content)`` of every metalayer, in stored order."""
        ...

    def update_metalayer(self, name: str, content: bytes) -> None:
        """Replace an existing metalayer's content (same length)."""
        ...

    @property
    def vlmeta_entries(self) -> tuple[tuple[str, bytes], ...]:
        """``(name, stored bytes)`` of every user-visible vlmeta entry."""
        ...

    def set_vlmeta_entries(self, entries: tuple[tuple[str, bytes], ...]) -> None:
        """Make ``entries`` the user-visible vlmeta entries (one commit)."""
        ...

    @property
    def vlmeta_nthreads(self) -> int:
        """Threads used to compress vlmeta values."""
        ...

    def holding_lock(self) -> AbstractContextManager[Any]:
        """Hold the container for a change: an edit reads the entries it changes inside."""
        ...


def _whole_slice(key: slice) -> None:
    if (key.start, key.stop, key.step) != (None, None, None):
        raise NotImplementedError("Slicing is not supported, unless [:]")


class _Layers(Mapping[str, Any]):
    """The read side shared by :class:`Meta` and :class:`VLMeta`: entries stored as bytes,
    decoded on access."""

    def __init__(self, host: MetaHost) -> None:
        self._host = host

    def _items(self) -> dict[str, bytes]:
        raise NotImplementedError

    def _decode(self, name: str, stored: bytes) -> Any:
        raise NotImplementedError

    def __getitem__(self, key: str | slice) -> Any:
        if isinstance(key, slice):  # [:] is every entry, as python-blosc2 allows
            _whole_slice(key)
            return self.getall()
        items = self._items()
        if key not in items:
            raise KeyError(key)
        return self._decode(key, items[key])

    def __contains__(self, key: object) -> bool:
        # the names only: nothing decoded, no KeyError raised and caught (a reader polling
        # a writer's flag asks this every poll)
        return key in self._items()

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return repr(self.getall())  # the contents, as python-blosc2 shows them

    __str__ = __repr__

    def getall(self) -> dict[str, Any]:
        """Every entry, decoded."""
        return {k: self._decode(k, v) for k, v in self._items().items()}

    def to_dict(self) -> dict[bytes, Any]:
        """Every entry, decoded, keyed by the name as bytes (python-blosc2's ``to_dict``).

        >>> from pyblosc2 import SChunk
        >>> s = SChunk(); s.vlmeta["a"] = (1, 2); s.vlmeta.to_dict()
        {b'a': (1, 2)}
        """
        return {k.encode(): v for k, v in self.getall().items()}

    @property
    def mode(self) -> str | None:
        """The access mode of the container (``'r'``, ``'a'`` or ``'w'``).

        >>> from pyblosc2 import SChunk
        >>> SChunk().vlmeta.mode, SChunk().vlmeta.urlpath
        ('a', None)
        """
        return getattr(self._host, "mode", None)

    @property
    def urlpath(self) -> str | None:
        """Where the container is stored (None in memory)."""
        return getattr(self._host, "urlpath", None)


class Meta(_Layers):
    """Fixed-size metalayers in the header (update in place with same-size content)."""

    def _decode(self, name: str, stored: bytes) -> Any:
        return unpackb(stored, f"metalayer {name!r}")

    def _items(self) -> dict[str, bytes]:
        return dict(self._host.metalayers)

    def __setitem__(self, key: str, value: Any) -> None:
        raw = isinstance(value, RawMetalayer)
        content = bytes(value) if raw else packb(value, f"metalayer {key!r}")
        self._host.update_metalayer(key, content)

    def __delitem__(self, key: str) -> None:
        raise NotImplementedError("Cannot remove a metalayer")


class VLMeta(_Layers, MutableMapping[str, Any]):
    """Variable-length metalayers in the trailer, values stored as python-blosc2 does."""

    MAX_ENTRIES = 16

    def _decode(self, name: str, stored: bytes) -> Any:
        return unpack_vlmeta(stored, f"vlmeta {name!r}")

    def _items(self) -> dict[str, bytes]:
        return dict(self._host.vlmeta_entries)

    def __setitem__(self, key: str | slice, value: Any) -> None:
        if isinstance(key, slice):  # vlmeta[:] = {...}: every entry of the mapping, one commit
            _whole_slice(key)
            if not isinstance(value, Mapping):
                raise ParamTypeError(f"vlmeta[:] takes a mapping, got {type(value).__name__}")
            self.update_all(value)
            return
        self.update_all({key: value})

    def update_all(self, values: Mapping[str, Any]) -> None:
        """Set several entries in one commit.

        >>> from pyblosc2 import SChunk
        >>> s = SChunk(); s.vlmeta[:] = {"a": 1, "b": [2]}; s.vlmeta[:]
        {'a': 1, 'b': [2]}
        """
        packed = {}
        for key, value in values.items():
            if not isinstance(key, str) or not 1 <= len(key.encode()) <= 31:
                raise ParamError(f"vlmeta names must be str of 1..31 bytes, got {key!r}")
            packed[key] = pack_vlmeta(value, self._host.vlmeta_nthreads, f"vlmeta {key!r}")
        with self._host.holding_lock():  # the entries kept are read under the same hold
            entries = {**dict(self._host.vlmeta_entries), **packed}
            if len(entries) > self.MAX_ENTRIES:
                raise ParamError(f"an SChunk holds at most {self.MAX_ENTRIES} vlmeta entries")
            self._host.set_vlmeta_entries(tuple(entries.items()))

    def clear(self) -> None:
        """Remove every entry (one commit)."""
        self._host.set_vlmeta_entries(())

    def __delitem__(self, key: str) -> None:
        with self._host.holding_lock():
            entries = self._host.vlmeta_entries
            if key not in dict(entries):
                raise KeyError(key)
            self._host.set_vlmeta_entries(tuple((k, v) for k, v in entries if k != key))
