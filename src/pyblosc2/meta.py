"""Metalayer and vlmeta values: msgpack as python-blosc2 writes them (frame-format.md §9.1).

``bytes`` → bin, ``str`` → str, tuples → ``["__tuple__", *items]``, complex → ext 44, set →
ext 45, numpy arrays → ext 46. Ext 42/43 (embedded containers, references) are refused on read,
as python-blosc2's default ``deserialize="safe"`` does.
"""

from __future__ import annotations

import ast
import struct
from typing import Any

import msgpack
import numpy as np

from .errors import FormatError

__all__ = ["RawMetalayer", "packb", "unpackb"]


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
            body = {"values": obj.ravel().tolist(), "shape": list(obj.shape)}
        else:
            dt = {"descr": obj.dtype.descr} if obj.dtype.kind == "V" else {"str": obj.dtype.str}
            body = {
                "dtype": dt,
                "shape": list(obj.shape),
                "data": np.ascontiguousarray(obj).tobytes(),
            }
        return msgpack.ExtType(EXT_NDARRAY, packb(body))
    raise TypeError(f"cannot serialize {type(obj).__name__} into a metalayer")


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
