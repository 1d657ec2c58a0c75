"""Turning the buffers users pass (bytes, bytearray, memoryview, numpy arrays) into byte views."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from .errors import ParamError, ParamTypeError

__all__ = ["BufferLike", "as_array", "as_view", "writable_view"]

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
