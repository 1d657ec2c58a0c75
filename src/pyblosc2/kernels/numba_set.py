"""The numba kernel set: the hot loops compiled by numba (``pip install pyblosc2[fast]``),
each proved byte-identical to its numpy twin by ``tests/unit/test_kernels.py``.

Importing this module imports numba (only :func:`~.select.active` does, when the set is
first chosen). The kernels are cached on disk: next to this package when it is writable,
else in numba's user-wide cache directory (``NUMBA_CACHE_DIR`` overrides both), so a new
process loads them instead of compiling them again.
"""

from __future__ import annotations

import numpy as np

from . import blosclz_nb, delta_nb, shuffle_nb
from .base import KernelSet

__all__ = ["NUMBA", "warm_up"]

NUMBA = KernelSet(
    name="numba",
    shuffle=shuffle_nb.shuffle,
    unshuffle=shuffle_nb.unshuffle,
    unshuffle_blocks=shuffle_nb.unshuffle_blocks,
    shuffle_blocks=shuffle_nb.shuffle_blocks,
    bitshuffle=shuffle_nb.bitshuffle,
    bitunshuffle=shuffle_nb.bitunshuffle,
    bitunshuffle_blocks=shuffle_nb.bitunshuffle_blocks,
    prefix_xor=delta_nb.prefix_xor,
    channel_cumsum=delta_nb.channel_cumsum,
    blosclz_compress=blosclz_nb.compress,
    blosclz_decompress=blosclz_nb.decompress,
    blosclz_decompress_into=blosclz_nb.decompress_into,
    blosclz_decompress_streams=blosclz_nb.decompress_streams,
    fast_unshuffle=True,
)


def warm_up() -> None:
    """Compile (or load from the cache) one kernel, so that a numba that cannot compile is
    found when the set is chosen, not in the middle of a read."""
    src = np.arange(16, dtype=np.uint8)
    dst = np.empty_like(src)
    NUMBA.unshuffle(src, dst, 4)
    if dst[1] != 4:
        raise RuntimeError("the numba unshuffle kernel gave wrong bytes")
