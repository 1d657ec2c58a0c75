"""The numba kernel set: the hot loops compiled by numba (``pip install pyblosc2[fast]``),
each proved byte-identical to its numpy twin by ``tests/unit/test_kernels.py``.

Importing this module imports numba (only :func:`~.select.active` does, when the set is
first chosen). The kernels are cached on disk: next to this package when it is writable,
else in numba's user-wide cache directory (``NUMBA_CACHE_DIR`` overrides both), so a new
process loads them instead of compiling them again.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from . import blosclz_nb, delta_nb, shuffle_nb
from .base import KernelSet

__all__ = ["NUMBA", "warm_steps", "warm_up"]

NUMBA = KernelSet(
    name="numba",
    shuffle=shuffle_nb.shuffle,
    unshuffle=shuffle_nb.unshuffle,
    unshuffle_blocks=shuffle_nb.unshuffle_blocks,
    shuffle_blocks=shuffle_nb.shuffle_blocks,
    bitshuffle=shuffle_nb.bitshuffle,
    bitunshuffle=shuffle_nb.bitunshuffle,
    bitunshuffle_blocks=shuffle_nb.bitunshuffle_blocks,
    unshuffle_runs=shuffle_nb.unshuffle_runs,
    prefix_xor=delta_nb.prefix_xor,
    channel_cumsum=delta_nb.channel_cumsum,
    blosclz_compress=blosclz_nb.compress,
    blosclz_decompress=blosclz_nb.decompress,
    blosclz_decompress_into=blosclz_nb.decompress_into,
    blosclz_decompress_streams=blosclz_nb.decompress_streams,
    fast_unshuffle=True,
)


#: the byte-shuffle group sizes a typical read or write meets (1 is a plain copy, no kernel)
WARM_TYPESIZES = (2, 4, 8)
#: the bit-shuffle item sizes warmed (the bit kernels take it as an argument: one compiled
#: kernel each way; these add the byte kernels of their byte planes)
WARM_BIT_TYPESIZES = (4, 8)


def warm_up(full: bool = False) -> None:
    """Compile (or load from the cache) one kernel, so that a numba that cannot compile is
    found when the set is chosen, not in the middle of a read; ``full``: then every step of
    :func:`warm_steps` too.
    """
    src = np.arange(16, dtype=np.uint8)
    dst = np.empty_like(src)
    NUMBA.unshuffle(src, dst, 4)
    if dst[1] != 4:
        raise RuntimeError("the numba unshuffle kernel gave wrong bytes")
    if full:
        for step in warm_steps():
            step()


def warm_steps() -> list[Callable[[], None]]:
    """The kernel specialisations a typical read or write meets, in steps (the most common
    first): the byte shuffles for :data:`WARM_TYPESIZES`, the bit shuffles for
    :data:`WARM_BIT_TYPESIZES`, the BloscLZ codec over read-only and writable sources, the
    delta prefixes for 1-8 byte items, each checked against the numpy kernel's bytes (a
    step raises RuntimeError on a difference). numba compiles one specialisation per
    typesize and per array type met, and loads each from its disk cache on first use (5-20
    ms each; the whole list ~0.15-0.2 s from a warm cache, ~30 s of compiling from a cold
    one): the background loader runs these before it swaps numba in, so that the first
    read after the swap loads none.
    """
    from .numpy_set import NUMPY

    block = np.tile(np.arange(32, dtype=np.uint8), 8)  # repeats: BloscLZ emits a stream
    rows = block.reshape(4, 64)
    words = np.tile(block, 4)  # 1,024 bytes: 2 rows of 64 * 8 bytes

    def both(kernel: str, src: np.ndarray, *args: int | bool) -> None:
        got, want = np.empty_like(src), np.empty_like(src)
        getattr(NUMBA, kernel)(src, got, *args)
        getattr(NUMPY, kernel)(src, want, *args)
        _same(kernel, got, want)

    def byte_shuffles(g: int) -> None:
        for kernel in ("unshuffle", "shuffle"):
            both(kernel, block, g)
        for kernel in ("unshuffle_blocks", "shuffle_blocks"):
            both(kernel, rows, g)
        q = len(block) // g  # the runs of a slab read: two runs of items out of the planes
        table = np.array([[0, 0, q // 2], [q // 2, q // 2 * g, q - q // 2]], np.int64)
        got, want = np.empty_like(block), np.empty_like(block)
        for ks, dst in ((NUMBA, got), (NUMPY, want)):
            if ks.unshuffle_runs(block, q, dst, table, g) != -1:
                raise RuntimeError(f"the {ks.name} kernel unshuffle_runs refused a run in bounds")
        _same("unshuffle_runs", got, want)

    def bit_shuffles(g: int) -> None:
        for kernel in ("bitunshuffle", "bitshuffle"):
            both(kernel, block, g, False)
        # blocks of whole 64-bit words (64 * typesize divides them) take the word kernels
        both("bitunshuffle", words, g, False)
        both("bitunshuffle_blocks", words.reshape(2, -1), g, False)

    def blosclz() -> None:
        stream = NUMBA.blosclz_compress(block, 5, len(block))
        _same("blosclz_compress", stream, NUMPY.blosclz_compress(block, 5, len(block)))
        if not stream:
            raise RuntimeError("the numba blosclz_compress kernel gave no stream")
        table = np.array([[0, len(stream), 0, len(block)]], np.int64)
        # read-only sources (bytes, a read-only map) and writable ones: two array types
        for src in (np.frombuffer(stream, np.uint8), np.frombuffer(bytearray(stream), np.uint8)):
            out = np.empty_like(block)
            NUMBA.blosclz_decompress_into(src, out)
            _same("blosclz_decompress_into", out, block)
            out = np.empty_like(block)
            if NUMBA.blosclz_decompress_streams(src, table, out) != -1:
                raise RuntimeError("the numba blosclz_decompress_streams kernel refused a stream")
            _same("blosclz_decompress_streams", out, block)

    def deltas() -> None:
        for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
            y = block.view(dtype)
            got, want = np.empty_like(y), np.empty_like(y)
            NUMBA.prefix_xor(y, got)
            NUMPY.prefix_xor(y, want)
            _same("prefix_xor", got, want)
        both("channel_cumsum", rows)

    return [
        *(partial(byte_shuffles, g) for g in sorted(WARM_TYPESIZES, reverse=True)),
        *(partial(bit_shuffles, g) for g in WARM_BIT_TYPESIZES),
        blosclz,
        deltas,
    ]


def _same(kernel: str, got: np.ndarray | bytes, want: np.ndarray | bytes) -> None:
    if isinstance(got, bytes) and isinstance(want, bytes):
        ok = got == want
    else:
        ok = np.array_equal(got, want)
    if not ok:
        raise RuntimeError(f"the numba {kernel} kernel gave wrong bytes")
