"""Turning the buffers users pass (bytes, bytearray, memoryview, numpy arrays) into byte views."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .errors import ParamError, ParamTypeError

__all__ = ["BufferLike", "as_array", "as_view", "fill_bytes", "same_bytes", "writable_view"]

if TYPE_CHECKING:
    from typing_extensions import Buffer

    #: What the functions taking data accept: any object with the buffer protocol
    #: (``bytes``, ``bytearray``, ``memoryview``, ``array.array``, ``mmap``...) or a numpy
    #: array or scalar (not necessarily contiguous: it is copied when it is not).
    BufferLike: TypeAlias = Buffer | np.ndarray | np.generic
else:
    BufferLike: TypeAlias = bytes | bytearray | memoryview | np.ndarray | np.generic


def as_view(obj: BufferLike, name: str = "src") -> memoryview:
    """A read-only 1-D byte ``memoryview`` of ``obj`` without copying when it is contiguous.

    >>> len(as_view(np.arange(3, dtype=np.int32)))
    12
    """
    if isinstance(obj, bytes | bytearray):
        return memoryview(obj)
    if isinstance(obj, np.generic):
        obj = np.asarray(obj)
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous:
            obj = np.ascontiguousarray(obj)
        return obj.reshape(-1).view(np.uint8).data
    if isinstance(obj, str):
        raise ParamTypeError(f"{name} must be a bytes-like object or numpy array, got str")
    try:
        mv = memoryview(obj)
    except TypeError:
        raise ParamTypeError(
            f"{name} must be a bytes-like object or numpy array, got {type(obj).__name__}"
        ) from None
    if not mv.c_contiguous:
        mv = memoryview(mv.tobytes())
    return mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv


def as_array(obj: BufferLike, name: str = "src") -> np.ndarray:
    """A read-only 1-D ``uint8`` array view of ``obj``."""
    return np.frombuffer(as_view(obj, name), dtype=np.uint8)


def writable_view(obj: BufferLike, name: str = "dst") -> np.ndarray:
    """A writable 1-D ``uint8`` array aliasing ``obj`` (bytearray, writable memoryview, array)."""
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous or not obj.flags.writeable:
            raise ParamError(f"{name} must be a writable C-contiguous array")
        return obj.reshape(-1).view(np.uint8)
    if isinstance(obj, np.generic):
        raise ParamError(f"{name} must be a writable contiguous buffer")
    try:
        mv = memoryview(obj)
    except TypeError:
        raise ParamTypeError(
            f"{name} must be a writable buffer, got {type(obj).__name__}"
        ) from None
    if mv.readonly or not mv.c_contiguous:
        raise ParamError(f"{name} must be a writable contiguous buffer")
    return np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv, dtype=np.uint8)


# -- bytes without a final copy ------------------------------------------------------------
# CPython's PyBytes_FromStringAndSize(NULL, n) makes an uninitialised bytes object that its
# creator may fill before anyone else sees it; its bytes start at a fixed offset in the object
# (ob_sval, bytes.__basicsize__ - 1). Decoding straight into it saves the full-size copy of
# ``ndarray.tobytes()`` and keeps a whole read's peak memory at the result's size. Checked
# once at import; anywhere else (or if the check fails) ``fill_bytes`` copies.
_SVAL = bytes.__basicsize__ - 1
_MIN_DIRECT = 1 << 16  # below this a copy costs less than the ctypes call


class _Raw:
    """Exposes the bytes of a fresh ``bytes`` object to numpy (and keeps it alive)."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner: bytes) -> None:
        self.owner = owner
        self.__array_interface__ = {
            "data": (id(owner) + _SVAL, False),
            "shape": (len(owner),),
            "typestr": "|u1",
            "version": 3,
        }


def _bytes_maker() -> Any:
    if sys.implementation.name != "cpython" or sys.getsizeof(b"") != bytes.__basicsize__:
        return None
    try:
        make = ctypes.pythonapi.PyBytes_FromStringAndSize
    except AttributeError:  # pragma: no cover - CPython always has it
        return None
    make.restype = ctypes.py_object
    make.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t)
    probe = make(None, 4)
    np.asarray(_Raw(probe))[:] = (1, 2, 3, 4)
    return make if probe == b"\x01\x02\x03\x04" else None


_new_bytes = _bytes_maker()


def fill_bytes(n: int, fill: Callable[[np.ndarray], object]) -> bytes:
    """A new ``bytes`` of ``n`` bytes whose contents ``fill(view)`` writes into ``view`` (a
    writable ``uint8`` array over them); no copy of the result is made.

    >>> fill_bytes(3, lambda v: v.__setitem__(slice(None), 7))
    b'\\x07\\x07\\x07'
    """
    if _new_bytes is None or n < _MIN_DIRECT:
        arr = np.empty(n, np.uint8)
        fill(arr)
        return arr.tobytes()
    out = _new_bytes(None, n)
    fill(np.asarray(_Raw(out)))
    return out


def same_bytes(a: bytes | memoryview, b: bytes | memoryview) -> bool:
    """Whether ``a`` and ``b`` hold the same bytes, compared as ``bytes`` (a memoryview's
    ``==`` compares item by item: 41 us for 11 KB against 0.3 us).

    >>> same_bytes(b"ab", memoryview(b"xab")[1:]), same_bytes(memoryview(b"ab"), b"ac")
    (True, False)
    >>> same_bytes(memoryview(b"ab")[::-1], b"ab")
    False
    """
    return _as_bytes(a) == _as_bytes(b)


def _as_bytes(x: bytes | memoryview) -> bytes:
    if isinstance(x, memoryview):
        obj = x.obj
        if type(obj) is bytes and len(obj) == x.nbytes and x.c_contiguous:  # the whole object
            return obj
        return bytes(x)
    return x if type(x) is bytes else bytes(x)
