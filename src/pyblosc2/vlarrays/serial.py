"""Values as python-blosc2's containers store them: msgpack with its extension rules
(``blosc2/msgpack_utils.py``), the body of every ObjectArray entry and BatchArray block.

Writing (``packb(value, use_bin_type=True, strict_types=True)``, then for what msgpack does
not take):

==========================================  =================================================
value                                       stored as
==========================================  =================================================
NDArray, SChunk, ObjectArray, BatchArray,   ext 42: the container's cframe
ListArray's containers, registered kinds
:class:`~.ref.Ref`                          ext 43: msgpack ``{"kind": "ref", "version": 1,
                                            "ref": ref.to_dict()}``
numpy array                                 ext 46: msgpack ``{"dtype": {"str"|"descr"},
                                            "shape", "data"}``, or ``{"values", "shape"}``
                                            for object arrays
complex                                     ext 44: ``>dd`` (real, imag)
set, frozenset                              ext 45: the msgpack of its items as a list
numpy scalars                               the Python int, float, bool, bytes or str
tuple                                       ``["__tuple__", *items]``
==========================================  =================================================

Reading undoes these (lists starting with ``"__tuple__"`` become tuples). Ext 42 and 43 are
*active* (:mod:`.policy`): ``deserialize="safe"`` refuses them with
:class:`~.policy.UnsafeDeserializationError`. Ext 43 payloads for C2Array, LazyExpr and LazyUDF
(python-blosc2 objects pyblosc2 does not implement) raise :class:`NotImplementedError` naming
them. Every size is bounded by the payload (msgpack's limits default to the buffer length); a
numpy payload must hold exactly ``prod(shape) * itemsize`` bytes.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import msgpack
import numpy as np

from ..errors import FormatError, ParamError
from .kinds import cframe_types, from_cframe
from .policy import DeserializeMode, UnsafeDeserializationError, normalize_deserialize
from .ref import Ref

__all__ = [
    "EXT_CFRAME",
    "EXT_COMPLEX",
    "EXT_NDARRAY",
    "EXT_SET",
    "EXT_STRUCTURED",
    "packb",
    "unpackb",
]

EXT_CFRAME = 42
EXT_STRUCTURED = 43
EXT_COMPLEX = 44
EXT_SET = 45
EXT_NDARRAY = 46
STRUCTURED_VERSION = 1
_TUPLE = "__tuple__"
_COMPLEX = struct.Struct(">dd")
#: ext 43 kinds python-blosc2 writes for objects pyblosc2 does not implement
_FOREIGN = {
    "c2array": "C2Array (Caterva2 remote arrays)",
    "lazyexpr": "LazyExpr (lazy expressions)",
    "lazyudf": "LazyUDF (lazy user-defined functions)",
}


def _dtype_value(dtype: np.dtype) -> dict[str, Any]:
    return {"descr": dtype.descr} if dtype.fields is not None else {"str": dtype.str}


def _field(field: list[Any]) -> tuple[Any, ...]:
    if not isinstance(field, list | tuple) or len(field) not in (2, 3):
        raise FormatError("ndarray value", "dtype descr", None, "[name, spec(, shape)]", field)
    name, spec, *shape = field
    if isinstance(name, list):
        name = tuple(name)  # a titled field: (title, name)
    if isinstance(spec, list) and len(spec) == 2 and isinstance(spec[1], dict):
        spec = spec[0]  # h5py's (dtype, metadata)
    elif isinstance(spec, list):
        spec = [_field(item) for item in spec]
    return (name, spec, tuple(shape[0])) if shape else (name, spec)


def _dtype_from_value(value: Any) -> np.dtype:
    try:
        if isinstance(value, dict) and isinstance(value.get("str"), str):
            return np.dtype(value["str"])
        if isinstance(value, dict) and isinstance(value.get("descr"), list):
            return np.dtype([_field(f) for f in value["descr"]])
    except (TypeError, ValueError) as exc:
        got = f"{value!r} ({exc})"
        raise FormatError("ndarray value", "dtype", None, "a numpy dtype", got) from None
    raise FormatError("ndarray value", "dtype", None, '{"str": ...} or {"descr": [...]}', value)


def _default(obj: Any) -> Any:
    if isinstance(obj, cframe_types()):
        return msgpack.ExtType(EXT_CFRAME, obj.to_cframe())  # type: ignore[attr-defined]
    if isinstance(obj, Ref):
        payload = {"kind": "ref", "version": STRUCTURED_VERSION, "ref": obj.to_dict()}
        return msgpack.ExtType(EXT_STRUCTURED, msgpack.packb(payload, use_bin_type=True))
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            body: dict[str, Any] = {"values": obj.ravel().tolist(), "shape": list(obj.shape)}
        else:
            body = {
                "dtype": _dtype_value(obj.dtype),
                "shape": list(obj.shape),
                "data": obj.tobytes(),
            }
        return msgpack.ExtType(EXT_NDARRAY, packb(body))
    if isinstance(obj, complex | np.complexfloating):
        return msgpack.ExtType(EXT_COMPLEX, _COMPLEX.pack(float(obj.real), float(obj.imag)))
    if isinstance(obj, set | frozenset):
        return msgpack.ExtType(EXT_SET, packb(list(obj)))
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bytes_):
        return bytes(obj)
    if isinstance(obj, np.str_):
        return str(obj)
    if isinstance(obj, tuple):
        return [_TUPLE, *obj]
    return obj  # msgpack then refuses it with a TypeError naming the type


def packb(value: Any) -> bytes:
    """``value`` as python-blosc2 stores it (module docstring).

    >>> packb((1, {2, 3}, 1j)).hex()
    '94a95f5f7475706c655f5f01c7032d920203d82c00000000000000003ff0000000000000'
    """
    return msgpack.packb(value, default=_default, strict_types=True, use_bin_type=True)


def _list_hook(obj: list[Any]) -> Any:
    if obj and type(obj[0]) is str and obj[0] == _TUPLE:
        return tuple(obj[1:])
    return obj


def _ndarray(data: bytes, mode: DeserializeMode) -> np.ndarray:
    body = unpackb(data, mode)
    shape = body.get("shape") if isinstance(body, dict) else None
    if not isinstance(shape, list) or any(
        isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in shape
    ):
        raise FormatError("ndarray value", "shape", None, "a list of sizes >= 0", shape)
    count = math.prod(shape)
    if "values" in body:
        values = body["values"]
        if not isinstance(values, list) or len(values) != count:
            raise FormatError("ndarray value", "values", None, f"{count} items", values)
        out = np.empty(count, dtype=object)
        out[:] = values
        return out.reshape(shape)
    dtype = _dtype_from_value(body.get("dtype"))
    raw = body.get("data")
    if dtype.hasobject or not isinstance(raw, bytes) or len(raw) != count * dtype.itemsize:
        got = len(raw) if isinstance(raw, bytes) else type(raw).__name__
        raise FormatError("ndarray value", "data", None, f"{count * dtype.itemsize} bytes", got)
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


def _structured(data: bytes, mode: DeserializeMode) -> Any:
    try:
        payload = msgpack.unpackb(data, raw=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
        payload = None
    kind = payload.get("kind") if isinstance(payload, dict) else None
    if mode is DeserializeMode.SAFE:
        raise UnsafeDeserializationError(kind if isinstance(kind, str) else "structured reference")
    if not isinstance(payload, dict):
        raise FormatError("structured value", "payload", None, "a msgpack map", type(payload))
    if payload.get("version") != STRUCTURED_VERSION:
        raise FormatError(
            "structured value", "version", None, STRUCTURED_VERSION, payload.get("version")
        )
    if kind == "ref":
        return Ref.from_dict(payload.get("ref"))
    if kind in _FOREIGN:
        raise NotImplementedError(f"stored {_FOREIGN[kind]}: not implemented by pyblosc2")
    raise FormatError("structured value", "kind", None, "ref, c2array, lazyexpr or lazyudf", kind)


def _ext_hook(mode: DeserializeMode) -> Any:
    def hook(code: int, data: bytes) -> Any:
        if code == EXT_COMPLEX:
            if len(data) != _COMPLEX.size:
                raise FormatError("complex value", "length", None, _COMPLEX.size, len(data))
            re, im = _COMPLEX.unpack(data)
            return complex(re, im)
        if code == EXT_SET:
            items = unpackb(data, mode)
            if not isinstance(items, list):
                raise FormatError("set value", "items", None, "a list", type(items).__name__)
            return set(items)
        if code == EXT_NDARRAY:
            return _ndarray(data, mode)
        if code == EXT_STRUCTURED:
            return _structured(data, mode)
        if code == EXT_CFRAME:
            if mode is DeserializeMode.SAFE:
                raise UnsafeDeserializationError("embedded cframe")
            return from_cframe(data, copy=True, deserialize=DeserializeMode.FULL)
        if mode is DeserializeMode.SAFE:
            raise UnsafeDeserializationError(f"MessagePack extension code {code}")
        return msgpack.ExtType(code, data)

    return hook


def unpackb(payload: Any, deserialize: Any = DeserializeMode.FULL) -> Any:
    """A stored value read back under policy ``deserialize`` (module docstring).

    >>> unpackb(packb((1, {2, 3}, 1j)))
    (1, {2, 3}, 1j)
    """
    mode = normalize_deserialize(deserialize)
    try:
        return msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=False,
            list_hook=_list_hook,
            ext_hook=_ext_hook(mode),
        )
    except (FormatError, ParamError, UnsafeDeserializationError, NotImplementedError):
        raise
    except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError) as exc:
        raise FormatError(
            "stored value", "msgpack", None, "a msgpack value", f"undecodable ({exc})"
        ) from None
