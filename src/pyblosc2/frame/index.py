"""The index chunk: one int64 LE per logical chunk, or a special value (frame-format.md §4).

Non-negative offsets are positions relative to the end of the header (contiguous frames) or
chunk-file ids (sparse frames); negative ones encode a chunk with no stored bytes.
"""

from __future__ import annotations

import numpy as np

from ..chunk.decode import ChunkReader
from ..chunk.header import OFF_NBYTES, OFF_TYPESIZE
from ..constants import SpecialValue
from ..errors import FormatError

__all__ = [
    "SPECIAL_OFFSETS",
    "SPECIAL_OFFSET_OF",
    "STORABLE_SPECIALS",
    "decode_index",
    "special_of",
]

# byte 7 of the LE int64 is 0x80 | special id; bytes 0-6 are zero
SPECIAL_OFFSETS = {
    np.int64(-0x7F00000000000000): SpecialValue.ZERO,  # 0x8100000000000000
    np.int64(-0x7E00000000000000): SpecialValue.NAN,  # 0x8200000000000000
    np.int64(-0x7C00000000000000): SpecialValue.UNINIT,  # 0x8400000000000000
}
SPECIAL_OFFSET_OF = {v: k for k, v in SPECIAL_OFFSETS.items()}
# the special chunks an index can record as offsets (no bytes stored)
STORABLE_SPECIALS = tuple(SPECIAL_OFFSET_OF)
MAX_NCHUNKS = 268_435_455  # INT32_MAX / 8


def decode_index(chunk: bytes | memoryview, nchunks: int | None, where: int) -> np.ndarray:
    """The offsets of an index chunk at frame position ``where``; ``nchunks`` None when the
    frame has variable-size chunks (then the index decides)."""
    reader = ChunkReader.open(chunk)
    h = reader.header
    if h.typesize != 8:
        raise FormatError("index chunk", "typesize", where + OFF_TYPESIZE, "8", h.typesize)
    if h.nbytes % 8 or h.nbytes // 8 > MAX_NCHUNKS:
        raise FormatError(
            "index chunk",
            "nbytes",
            where + OFF_NBYTES,
            f"a multiple of 8, at most {8 * MAX_NCHUNKS}",
            h.nbytes,
        )
    if nchunks is not None and h.nbytes != 8 * nchunks:
        raise FormatError(
            "index chunk", "nbytes", where + OFF_NBYTES, f"8 * nchunks = {8 * nchunks}", h.nbytes
        )
    offsets = reader.decode().view("<i8").astype(np.int64)
    bad = np.flatnonzero((offsets < 0) & ~np.isin(offsets, list(SPECIAL_OFFSETS)))
    if bad.size:
        raise FormatError(
            "index chunk",
            f"offset[{int(bad[0])}]",
            None,
            "non-negative or a special value (0x81/0x82/0x84 << 56)",
            hex(int(offsets[bad[0]]) & 0xFFFFFFFFFFFFFFFF),
        )
    return offsets


def special_of(offset: int) -> SpecialValue:
    """The special value of a negative offset (NOT_SPECIAL for a stored chunk)."""
    return SPECIAL_OFFSETS.get(np.int64(offset), SpecialValue.NOT_SPECIAL)
