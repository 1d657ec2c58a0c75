"""Metalayer and vlmeta values as python-blosc2 4.14.1 writes and reads them (frame-format.md
§9.1, §9.2).

Values are msgpack: ``bytes`` → bin, ``str`` → str, tuples → ``["__tuple__", *items]``,
complex → ext 44, set → ext 45, numpy arrays → ext 46. Ext 42/43 (embedded containers,
references) are refused on read, as python-blosc2's default ``deserialize="safe"`` does. A
metalayer holds the msgpack bytes; a vlmeta entry holds them compressed as a Blosc2 chunk
(zstd, clevel 5, typesize 1).

Reading is bounded (:mod:`.scan`): the structure is checked before decoding, and extension
payloads are decoded innermost first, each by one msgpack call that is not nested in another,
so neither the C stack nor Python's recursion grows with the value's nesting. Writing is
symmetric: a value is refused (:class:`ParamError`) unless it reads back as written — nesting
deeper than :data:`MAX_DEPTH`, map keys that are not ``str``/``bytes``, lists whose first item
is the string ``"__tuple__"`` (they would read back as tuples), sets holding sets or arrays
(they would read back unhashable), structured dtypes that their ``descr`` does not rebuild,
and numpy scalars python-blosc2 does not convert.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from typing import Any

import msgpack
import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.encode import EncodeSpec, encode_chunk
from ..constants import Codec
from ..errors import FormatError, ParamError, ParamTypeError
from .scan import EXT_COMPLEX, EXT_NDARRAY, EXT_SET, MAX_DEPTH, scan

__all__ = ["pack_vlmeta", "packb", "unpack_vlmeta", "unpackb"]

_TUPLE = "__tuple__"
_COMPLEX = struct.Struct(">dd")


# -- numpy dtypes as python-blosc2 names them ---------------------------------------------------


def _dtype_value(dt: np.dtype) -> dict[str, Any]:
    return {"descr": dt.descr} if dt.fields is not None else {"str": dt.str}


def _field(spec: Any) -> tuple[Any, ...]:
    """A ``descr`` entry ``[name, spec, *shape]`` as numpy takes it (a titled name and a
    shape come back from msgpack as lists; h5py's ``[dtype, metadata]`` keeps the dtype)."""
    name, sub, *shape = spec
    if isinstance(name, list):
        name = tuple(name)
    if isinstance(sub, list | tuple) and len(sub) == 2 and isinstance(sub[1], dict):
        sub = sub[0]
    elif isinstance(sub, list):
        sub = [_field(s) for s in sub]  # nesting is bounded by the value's (MAX_DEPTH)
    return (name, sub, tuple(shape[0])) if shape else (name, sub)


def _dtype_from_value(value: Any) -> np.dtype:
    if not isinstance(value, dict):
        raise TypeError(f"a dtype map, got {type(value).__name__}")
    if "str" in value:
        return np.dtype(value["str"])
    return np.dtype([_field(f) for f in value["descr"]])


# -- writing ------------------------------------------------------------------------------------


class _Packer:
    """One value's packing: the msgpack ``default`` hook, with the counts that tell whether
    the value reads back as written."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.tuples = 0
        self.ext_depth = 0

    def pack(self, value: Any) -> bytes:
        self.ext_depth += 1
        if self.ext_depth > MAX_DEPTH:
            raise ParamError(f"{self.where}: nested deeper than {MAX_DEPTH} levels")
        try:
            return msgpack.packb(value, use_bin_type=True, strict_types=True, default=self.default)
        finally:
            self.ext_depth -= 1

    def default(self, obj: Any) -> Any:
        if isinstance(obj, tuple):
            self.tuples += 1
            return [_TUPLE, *obj]
        if isinstance(obj, np.ndarray):
            return msgpack.ExtType(EXT_NDARRAY, self.pack(self._array_body(obj)))
        if isinstance(obj, complex | np.complexfloating):
            return msgpack.ExtType(EXT_COMPLEX, _COMPLEX.pack(obj.real, obj.imag))
        if isinstance(obj, set | frozenset):
            return msgpack.ExtType(EXT_SET, self.pack(list(obj)))
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.bytes_):
            return bytes(obj)
        if isinstance(obj, np.str_):
            return str(obj)
        raise ParamTypeError(f"cannot serialize {type(obj).__name__} into a metalayer")

    def _array_body(self, a: np.ndarray) -> dict[str, Any]:
        dt = a.dtype
        if dt.kind == "O":
            return {"values": a.ravel().tolist(), "shape": list(a.shape)}
        if dt.hasobject:
            raise ParamError(f"{self.where}: a structured dtype with object fields ({dt})")
        value = _dtype_value(dt)
        if dt.itemsize == 0 or _dtype_from_value(value) != dt:
            raise ParamError(f"{self.where}: the dtype {dt} does not read back from {value}")
        return {"dtype": value, "shape": list(a.shape), "data": np.ascontiguousarray(a).tobytes()}


def packb(value: Any, where: str = "metalayer value") -> bytes:
    """Encode ``value`` as python-blosc2 does, refusing what would not read back the same.

    >>> packb((1, 2)).hex()
    '93a95f5f7475706c655f5f0102'
    >>> try:
    ...     packb(["__tuple__", 1], "vlmeta 'x'")
    ... except ParamError as exc:
    ...     print(exc)
    vlmeta 'x': a list whose first item is '__tuple__' reads back as a tuple
    """
    packer = _Packer(where)
    try:
        out = packer.pack(value)
    except (ParamError, ParamTypeError):
        raise
    except TypeError as exc:
        raise ParamTypeError(f"{where}: {exc}") from None
    except (ValueError, OverflowError) as exc:  # msgpack: nesting over 512, ints over 64 bits
        raise ParamError(f"{where}: cannot be stored ({exc})") from None
    try:
        spans = scan(out, where)
    except FormatError as exc:
        raise ParamError(f"{exc} (the value would not read back)") from None
    if spans.tuple_heads != packer.tuples:
        raise ParamError(f"{where}: a list whose first item is {_TUPLE!r} reads back as a tuple")
    if any(
        c == EXT_SET and kids for (c, _, _), kids in zip(spans.spans, spans.children, strict=True)
    ):
        raise ParamError(f"{where}: a set holding a set or an array reads back unhashable")
    return out


# -- reading ------------------------------------------------------------------------------------


def _tuple_hook(items: list[Any]) -> Any:
    if items and isinstance(items[0], str) and items[0] == _TUPLE:
        return tuple(items[1:])
    return items


def _decode(buf: memoryview, exts: list[tuple[int, Any]], where: str, base: int) -> Any:
    """One msgpack call over ``buf``, whose set/array extensions (in byte order) are the
    already decoded ``exts``."""
    pending: Iterator[tuple[int, Any]] = iter(exts)

    def ext_hook(code: int, payload: bytes) -> Any:
        if code == EXT_COMPLEX:
            re, im = _COMPLEX.unpack(payload)
            return complex(re, im)
        want, value = next(pending, (None, None))
        if want != code:  # the scan and msgpack disagree: never happens on scanned bytes
            raise FormatError(where, "msgpack ext type", base, want, code)
        return value

    try:
        return msgpack.unpackb(
            buf,
            raw=False,
            strict_map_key=True,
            use_list=True,
            list_hook=_tuple_hook,
            ext_hook=ext_hook,
        )
    except FormatError:
        raise
    except Exception as exc:
        raise FormatError(where, "msgpack", base, "valid msgpack", f"undecodable ({exc})") from None


def _as_set(items: Any, where: str, base: int) -> set[Any]:
    field = "msgpack extension 45 (set)"
    if not isinstance(items, list | tuple):
        raise FormatError(where, field, base, "an array", type(items).__name__)
    try:
        return set(items)
    except TypeError as exc:
        raise FormatError(where, field, base, "hashable items", exc) from None


def _as_ndarray(body: Any, where: str, base: int) -> np.ndarray:
    """An ext-46 payload as python-blosc2's safe mode checks it: a shape of non-negative
    ints, ``values`` of that many items (object arrays), or a dtype without objects whose
    itemsize times the item count is the length of ``data``."""

    def bad(expected: str, got: object) -> FormatError:
        return FormatError(where, "msgpack extension 46 (ndarray)", base, expected, got)

    if not isinstance(body, dict):
        raise bad("a map", type(body).__name__)
    shape = body.get("shape")
    if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
        raise bad("a shape of non-negative ints", shape)
    count = math.prod(shape)
    if "values" in body:
        values = body["values"]
        if not isinstance(values, list) or len(values) != count:
            raise bad(f"a list of {count} values", type(values).__name__)
        out = np.empty(count, dtype=object)
        for i, v in enumerate(values):  # item by item: a nested list stays one item
            out[i] = v
        return out.reshape(shape)
    try:
        dtype = _dtype_from_value(body.get("dtype"))
    except Exception as exc:
        raise bad("a numpy dtype", f"{body.get('dtype')!r} ({exc})") from None
    data = body.get("data")
    if dtype.hasobject or dtype.itemsize == 0:
        raise bad("a dtype without objects and with a size", dtype)
    if not isinstance(data, bytes) or len(data) != count * dtype.itemsize:
        got = len(data) if isinstance(data, bytes) else type(data).__name__
        raise bad(f"{count * dtype.itemsize} data bytes", got)
    try:
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    except ValueError as exc:  # more dimensions than numpy allows
        raise bad("a shape numpy can build", f"{shape} ({exc})") from None


def unpackb(data: bytes | memoryview, where: str = "metalayer value") -> Any:
    """Decode a value written by python-blosc2 (or :func:`packb`); ``where`` names it in
    errors (offsets are positions in ``data``).

    >>> unpackb(bytes.fromhex("93a95f5f7475706c655f5f0102"))
    (1, 2)
    """
    buf = memoryview(data).cast("B") if isinstance(data, memoryview) else memoryview(data)
    spans = scan(buf, where)
    done: list[tuple[int, Any]] = [(0, None)] * len(spans.spans)
    for i in range(len(spans.spans) - 1, -1, -1):  # innermost first: children follow parents
        code, start, stop = spans.spans[i]
        inner = _decode(buf[start:stop], [done[c] for c in spans.children[i]], where, start)
        build = _as_set if code == EXT_SET else _as_ndarray
        done[i] = (code, build(inner, where, start))
        for c in spans.children[i]:
            done[c] = (0, None)  # each payload is decoded once and owned by its parent
    return _decode(buf, [done[c] for c in spans.top], where, 0)


# -- vlmeta entries ------------------------------------------------------------------------------


def pack_vlmeta(value: Any, nthreads: int = 1, where: str = "vlmeta value") -> bytes:
    """A vlmeta entry's stored form: :func:`packb`, then a zstd Blosc2 chunk.

    >>> unpack_vlmeta(pack_vlmeta({"a": (1, 2)}))
    {'a': (1, 2)}
    """
    raw = packb(value, where)
    spec = EncodeSpec(typesize=1, clevel=5, codec=Codec.ZSTD, nthreads=nthreads)
    return encode_chunk(memoryview(raw), spec)


def unpack_vlmeta(stored: bytes | memoryview, where: str = "vlmeta value") -> Any:
    """The value of a stored vlmeta entry. A special-value chunk (a run of zeros, NaNs or
    uninitialized bytes) longer than one byte is never a msgpack value: it is refused before
    it is expanded."""
    reader = ChunkReader.open(stored)
    h = reader.header
    if h.special and h.nbytes > 1:
        raise FormatError(where, "chunk special", None, "a msgpack value", f"a run of {h.nbytes}")
    return unpackb(reader.decode().data.cast("B"), where)
