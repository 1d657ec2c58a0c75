"""Turning the buffers users pass (bytes, bytearray, memoryview, numpy arrays) into byte views."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ParamError

__all__ = ["as_array", "as_view", "writable_view"]


def as_view(obj: Any, name: str = "src") -> memoryview:
    """A read-only 1-D byte ``memoryview`` of ``obj`` without copying when it is contiguous.

    >>> len(as_view(np.arange(3, dtype=np.int32)))
    12
    """
    if isinstance(obj, bytes | bytearray):
        return memoryview(obj)
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous:
            obj = np.ascontiguousarray(obj)
        return memoryview(obj.reshape(-1).view(np.uint8))
    if isinstance(obj, str):
        raise ParamError(f"{name} must be a bytes-like object or numpy array, got str")
    try:
        mv = memoryview(obj)
    except TypeError:
        raise ParamError(
            f"{name} must be a bytes-like object or numpy array, got {type(obj).__name__}"
        ) from None
    if not mv.c_contiguous:
        mv = memoryview(mv.tobytes())
    return mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv


def as_array(obj: Any, name: str = "src") -> np.ndarray:
    """A read-only 1-D ``uint8`` array view of ``obj``."""
    return np.frombuffer(as_view(obj, name), dtype=np.uint8)


def writable_view(obj: Any, name: str = "dst") -> np.ndarray:
    """A writable 1-D ``uint8`` array aliasing ``obj`` (bytearray, writable memoryview, array)."""
    if isinstance(obj, np.ndarray):
        if not obj.flags.c_contiguous or not obj.flags.writeable:
            raise ParamError(f"{name} must be a writable C-contiguous array")
        return obj.reshape(-1).view(np.uint8)
    try:
        mv = memoryview(obj)
    except TypeError:
        raise ParamError(f"{name} must be a writable buffer, got {type(obj).__name__}") from None
    if mv.readonly or not mv.c_contiguous:
        raise ParamError(f"{name} must be a writable contiguous buffer")
    return np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv, dtype=np.uint8)
