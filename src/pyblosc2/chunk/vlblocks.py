"""VL-block chunks (spec §12): blocks of any size, each with its own decoded size.

The size rules are checked before anything is allocated; each block is then decoded and its
filters undone on its own (every VL block is its own DELTA reference).
"""

from __future__ import annotations

import struct

import numpy as np

from .._threads import run_parallel
from ..errors import BoundsError, FormatError
from .header import OFF_NBYTES
from .layout import VL_SIZE_LEN, gather_i32
from .pipeline import scratch_pair
from .streams import ChunkStreams

__all__ = ["check_vl_sizes", "decode_vl", "decode_vl_block", "decode_vl_blocks"]

_I32 = struct.Struct("<i")


def check_vl_sizes(r: ChunkStreams) -> None:
    """The size rules of a VL-block chunk (§12), before the output is allocated."""
    h = r.header
    starts = r.bstarts
    ends = np.append(starts[1:], h.cbytes)
    short = ends - starts <= VL_SIZE_LEN
    sizes = gather_i32(r.arr, np.where(short, 0, starts)).astype(np.int64)
    before = np.cumsum(sizes) - sizes  # output bytes of the blocks before each one
    bad = short | (sizes <= 0) | (before + sizes > h.nbytes)
    if bad.any():
        j = int(np.argmax(bad))
        start = int(starts[j])
        if short[j]:
            raise FormatError(
                f"VL block {j}",
                "bstarts",
                start,
                f"a span of more than {VL_SIZE_LEN} bytes",
                int(ends[j] - starts[j]),
            )
        raise FormatError(
            f"VL block {j}",
            "nbytes",
            start,
            f"1..{h.nbytes - int(before[j])} (rest of nbytes)",
            int(sizes[j]),
        )
    total = int(sizes.sum())
    if total != h.nbytes:
        raise FormatError(
            "VL-block chunk", "nbytes", OFF_NBYTES, f"the sum of block sizes {total}", h.nbytes
        )
    if r.codec is None and np.any(sizes != ends - starts - VL_SIZE_LEN):
        r.raise_no_codec("VL-block chunk")


def _block_span(r: ChunkStreams, j: int) -> tuple[int, int, int]:
    """``(start, end, size)`` of VL block ``j``: its stored bytes and decoded size (checked
    against the chunk, §12)."""
    h = r.header
    start = int(r.bstarts[j])
    end = int(r.bstarts[j + 1]) if j + 1 < len(r.bstarts) else h.cbytes
    if end - start <= VL_SIZE_LEN:
        raise FormatError(
            f"VL block {j}",
            "bstarts",
            start,
            f"a span of more than {VL_SIZE_LEN} bytes",
            end - start,
        )
    size = _I32.unpack_from(r.buf, start)[0]
    if not 0 < size <= h.nbytes:
        raise FormatError(f"VL block {j}", "nbytes", start, f"1..{h.nbytes}", size)
    return start, end, size


def _decode_block(r: ChunkStreams, j: int, dst: np.ndarray) -> None:
    """Decode VL block ``j`` into ``dst`` (its decoded size): its own filter reference."""
    start, end, size = _block_span(r, j)
    where = f"VL block {j}"
    payload = r.buf[start + VL_SIZE_LEN : end]
    filtered = bool(r.pipeline.backward_steps)
    target, aux = scratch_pair(size) if filtered else (dst, None)
    if len(payload) == size:
        target[:] = np.frombuffer(payload, np.uint8)
    else:
        r.decode_stream(where, start + VL_SIZE_LEN, payload, target)
    if filtered:
        r.pipeline.backward(target, dst, None, aux)  # each VL block is its own ref


def decode_vl(r: ChunkStreams, out: np.ndarray) -> None:
    """Decode a VL-block chunk (§12) into ``out``: the blocks one after the other."""
    h = r.header
    pos_out = 0
    for j in range(len(r.bstarts)):
        size = _block_span(r, j)[2]
        if pos_out + size > h.nbytes:
            raise FormatError(
                f"VL block {j}",
                "nbytes",
                int(r.bstarts[j]),
                f"1..{h.nbytes - pos_out} (rest of nbytes)",
                size,
            )
        _decode_block(r, j, out[pos_out : pos_out + size])
        pos_out += size
    if pos_out != h.nbytes:
        raise FormatError(
            "VL-block chunk",
            "nbytes",
            OFF_NBYTES,
            f"the sum of block sizes {pos_out}",
            h.nbytes,
        )


def decode_vl_block(r: ChunkStreams, j: int) -> bytes:
    """VL block ``j`` decoded on its own (C's ``blosc2_vldecompress_block_ctx``)."""
    nblocks = len(r.bstarts)
    if not 0 <= j < nblocks:
        raise BoundsError(f"VL block {j} out of range for {nblocks} blocks")
    out = np.empty(_block_span(r, j)[2], np.uint8)
    _decode_block(r, j, out)
    return out.tobytes()


def decode_vl_blocks(r: ChunkStreams, nthreads: int = 1) -> list[bytes]:
    """Every VL block decoded on its own (C's ``blosc2_vldecompress_ctx``), in order."""
    return run_parallel(lambda j: decode_vl_block(r, j), range(len(r.bstarts)), nthreads)
