"""The numpy kernel set: the reference every other set is proved byte-identical to."""

from __future__ import annotations

from . import blosclz_np, delta_np, shuffle_np
from .base import KernelSet

__all__ = ["NUMPY"]

NUMPY = KernelSet(
    name="numpy",
    shuffle=shuffle_np.shuffle,
    unshuffle=shuffle_np.unshuffle,
    unshuffle_blocks=shuffle_np.unshuffle_blocks,
    shuffle_blocks=shuffle_np.shuffle_blocks,
    bitshuffle=shuffle_np.bitshuffle,
    bitunshuffle=shuffle_np.bitunshuffle,
    bitunshuffle_blocks=shuffle_np.bitunshuffle_blocks,
    unshuffle_runs=shuffle_np.unshuffle_runs,
    prefix_xor=delta_np.prefix_xor,
    channel_cumsum=delta_np.channel_cumsum,
    blosclz_compress=blosclz_np.compress,
    blosclz_decompress=blosclz_np.decompress,
    blosclz_decompress_into=blosclz_np.decompress_into,
    blosclz_decompress_streams=blosclz_np.decompress_streams,
)
