"""VL-block chunks (spec §12): blocks of any size, each with its own decoded size.

The size rules are checked before anything is allocated; each block is then decoded and its
filters undone on its own (every VL block is its own DELTA reference).
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import FormatError
from .header import OFF_NBYTES
from .layout import VL_SIZE_LEN, gather_i32
from .pipeline import scratch_pair
from .streams import ChunkStreams

__all__ = ["check_vl_sizes", "decode_vl"]

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


def decode_vl(r: ChunkStreams, out: np.ndarray) -> None:
    """Decode a VL-block chunk (§12) into ``out``: each block is its own filter reference."""
    h = r.header
    ends = [*r.bstarts[1:].tolist(), h.cbytes]
    pos_out = 0
    for j, (start, end) in enumerate(zip(r.bstarts.tolist(), ends, strict=True)):
        where = f"VL block {j}"
        if end - start <= VL_SIZE_LEN:
            raise FormatError(
                where, "bstarts", start, f"a span of more than {VL_SIZE_LEN} bytes", end - start
            )
        size = _I32.unpack_from(r.buf, start)[0]
        if size <= 0 or pos_out + size > h.nbytes:
            raise FormatError(
                where, "nbytes", start, f"1..{h.nbytes - pos_out} (rest of nbytes)", size
            )
        dst = out[pos_out : pos_out + size]
        payload = r.buf[start + VL_SIZE_LEN : end]
        filtered = bool(r.pipeline.backward_steps)
        target, aux = scratch_pair(size) if filtered else (dst, None)
        if len(payload) == size:
            target[:] = np.frombuffer(payload, np.uint8)
        else:
            r.decode_stream(where, start + VL_SIZE_LEN, payload, target)
        if filtered:
            r.pipeline.backward(target, dst, None, aux)  # each VL block is its own ref
        pos_out += size
    if pos_out != h.nbytes:
        raise FormatError(
            "VL-block chunk",
            "nbytes",
            OFF_NBYTES,
            f"the sum of block sizes {pos_out}",
            h.nbytes,
        )
