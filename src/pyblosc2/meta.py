"""Metalayers and vlmeta: values as python-blosc2 writes them (frame-format.md §9.1), and the
``meta``/``vlmeta`` mappings of a container.

Values are msgpack: ``bytes`` → bin, ``str`` → str, tuples → ``["__tuple__", *items]``,
complex → ext 44, set → ext 45, numpy arrays → ext 46. Ext 42/43 (embedded containers,
references) are refused on read, as python-blosc2's default ``deserialize="safe"`` does. A
metalayer holds the msgpack bytes; a vlmeta entry holds them compressed as a Blosc2 chunk
(zstd, clevel 5, typesize 1).
"""

from __future__ import annotations

import ast
import struct
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import msgpack
import numpy as np

from .chunk.decode import ChunkReader
from .chunk.encode import EncodeSpec, encode_chunk
from .constants import Codec
from .errors import FormatError, ParamError, ParamTypeError

__all__ = [
    "Meta",
    "MetaHost",
    "RawMetalayer",
    "VLMeta",
    "pack_vlmeta",
    "packb",
    "unpack_vlmeta",
    "unpackb",
]


class RawMetalayer(bytes):
    """Metalayer content stored as given (not msgpack-encoded), e.g. ``b2nd``."""


_TUPLE = "__tuple__"
EXT_COMPLEX, EXT_SET, EXT_NDARRAY = 44, 45, 46


def _default(obj: Any) -> Any:
    if isinstance(obj, tuple):
        return [_TUPLE, *obj]
    if isinstance(obj, np.generic) and not isinstance(obj, np.ndarray):
        return obj.item()
    if isinstance(obj, complex):
        return msgpack.ExtType(EXT_COMPLEX, struct.pack(">dd", obj.real, obj.imag))
    if isinstance(obj, set | frozenset):
        return msgpack.ExtType(EXT_SET, packb(list(obj)))
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind == "O":
            body: dict[str, Any] = {"values": obj.ravel().tolist(), "shape": list(obj.shape)}
        else:
            dt = {"descr": obj.dtype.descr} if obj.dtype.kind == "V" else {"str": obj.dtype.str}
            body = {
                "dtype": dt,
                "shape": list(obj.shape),
                "data": np.ascontiguousarray(obj).tobytes(),
            }
        return msgpack.ExtType(EXT_NDARRAY, packb(body))
    raise ParamTypeError(f"cannot serialize {type(obj).__name__} into a metalayer")


def packb(value: Any) -> bytes:
    """Encode ``value`` as python-blosc2 does.

    >>> packb((1, 2)).hex()
    '93a95f5f7475706c655f5f0102'
    """
    return msgpack.packb(value, use_bin_type=True, strict_types=True, default=_default)


def _ext_hook(code: int, data: bytes) -> Any:
    if code == EXT_COMPLEX:
        re, im = struct.unpack(">dd", data)
        return complex(re, im)
    if code == EXT_SET:
        return set(unpackb(data))
    if code == EXT_NDARRAY:
        body = unpackb(data)
        if "values" in body:
            return np.array(body["values"], dtype=object).reshape(body["shape"])
        dt = body["dtype"]
        dtype = (
            np.dtype(dt["str"])
            if "str" in dt
            else np.dtype([tuple(f) for f in ast.literal_eval(repr(dt["descr"]))])
        )
        return np.frombuffer(body["data"], dtype=dtype).reshape(body["shape"]).copy()
    raise FormatError(
        "metalayer value",
        "msgpack ext type",
        None,
        "44, 45 or 46 (42/43 are refused as python-blosc2's safe mode does)",
        code,
    )


def _untuple(obj: Any) -> Any:
    if isinstance(obj, list):
        items = [_untuple(x) for x in obj]
        if items and items[0] == _TUPLE:
            return tuple(items[1:])
        return items
    if isinstance(obj, dict):
        return {k: _untuple(v) for k, v in obj.items()}
    return obj


def unpackb(data: bytes) -> Any:
    """Decode a value written by python-blosc2 (or :func:`packb`)."""
    try:
        raw = msgpack.unpackb(
            data, raw=False, strict_map_key=False, ext_hook=_ext_hook, use_list=True
        )
    except FormatError:
        raise
    except Exception as exc:
        raise FormatError(
            "metalayer value", "msgpack", None, "valid msgpack", f"undecodable ({exc})"
        ) from None
    return _untuple(raw)


def pack_vlmeta(value: Any, nthreads: int = 1) -> bytes:
    """A vlmeta entry's stored form: :func:`packb`, then a zstd Blosc2 chunk.

    >>> unpack_vlmeta(pack_vlmeta({"a": (1, 2)}))
    {'a': (1, 2)}
    """
    raw = packb(value)
    spec = EncodeSpec(typesize=1, clevel=5, codec=Codec.ZSTD, nthreads=nthreads)
    return encode_chunk(memoryview(raw), spec)


def unpack_vlmeta(stored: bytes) -> Any:
    """The value of a stored vlmeta entry."""
    return unpackb(ChunkReader.open(stored).decode().tobytes())


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

    def _decode(self, stored: bytes) -> Any:
        raise NotImplementedError

    def __getitem__(self, key: str | slice) -> Any:
        if isinstance(key, slice):  # [:] is every entry, as python-blosc2 allows
            _whole_slice(key)
            return self.getall()
        items = self._items()
        if key not in items:
            raise KeyError(key)
        return self._decode(items[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return repr(self.getall())  # the contents, as python-blosc2 shows them

    __str__ = __repr__

    def getall(self) -> dict[str, Any]:
        """Every entry, decoded."""
        return {k: self._decode(v) for k, v in self._items().items()}

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

    def _decode(self, stored: bytes) -> Any:
        return unpackb(stored)

    def _items(self) -> dict[str, bytes]:
        return dict(self._host.metalayers)

    def __setitem__(self, key: str, value: Any) -> None:
        content = bytes(value) if isinstance(value, RawMetalayer) else packb(value)
        self._host.update_metalayer(key, content)

    def __delitem__(self, key: str) -> None:
        raise NotImplementedError("Cannot remove a metalayer")


class VLMeta(_Layers, MutableMapping[str, Any]):
    """Variable-length metalayers in the trailer, values stored as python-blosc2 does."""

    MAX_ENTRIES = 16

    def _decode(self, stored: bytes) -> Any:
        return unpack_vlmeta(stored)

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
            packed[key] = pack_vlmeta(value, self._host.vlmeta_nthreads)
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
