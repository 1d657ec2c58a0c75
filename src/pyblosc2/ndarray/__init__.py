"""Typed N-d arrays over super-chunks: the ``b2nd`` metalayer (frame-format.md §8).

The key helpers python-blosc2 exposes from ``blosc2.ndarray`` are re-exported here.
"""

from .keys import (
    _SUBSAMPLE_GATHER_MAX_COORDS,
    detect_aligned_chunks,
    get_chunks_idx,
    get_ndarray_start_stop,
)
from .ndarray import NDArray

__all__ = [
    "_SUBSAMPLE_GATHER_MAX_COORDS",
    "NDArray",
    "detect_aligned_chunks",
    "get_chunks_idx",
    "get_ndarray_start_stop",
]
