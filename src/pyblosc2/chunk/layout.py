"""Where the parts of a chunk lie: its kind (spec §1), block starts and dictionary (§6.2, §11,
§12) and each block's byte span, validated by the checks of §15 that need more than the header.

:class:`ChunkLayout` is read through a ``read(pos, n)`` callable, so the same code (and the
same checks) serve a chunk held in memory and a chunk read piece by piece from storage
(:mod:`.ranged`). Every size read from the bytes is checked against ``cbytes`` before it drives
a read or an allocation. Stream headers inside the blocks are checked by the decoder
(:mod:`.decode`), which needs the codec.
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

import numpy as np

from ..constants import MAX_DICT_SIZE, Filter, SpecialValue
from ..errors import FormatError
from .header import (
    BIGENDIAN,
    INSTR_CODEC,
    OFF_BLOCKSIZE,
    OFF_BLOSC2_FLAGS,
    OFF_CBYTES,
    ChunkHeader,
)

__all__ = [
    "BSTART_LEN",
    "CSIZE_LEN",
    "DSIZE_LEN",
    "VL_SIZE_LEN",
    "ChunkKind",
    "ChunkLayout",
    "ReadFn",
    "gather_i32",
    "merge_spans",
]

#: ``read(pos, n)``: bytes ``[pos, pos + n)`` of one chunk (exactly ``n`` bytes)
ReadFn = Callable[[int, int], bytes | bytearray | memoryview]

_I32 = struct.Struct("<i")
DSIZE_LEN = 4  # the int32 dictionary size after the block starts (§11)
BSTART_LEN = 4  # each block start is an int32 (§6.2)
CSIZE_LEN = 4  # each stream starts with its int32 csize (§6.3)
VL_SIZE_LEN = 4  # each VL block starts with its int32 uncompressed size (§12)
_NO_BLOCKS = np.empty(0, np.int64)
#: chunks of at most this many regular blocks have their block starts checked in Python
_FEW_BLOCKS = 32


class ChunkKind(Enum):
    """How a chunk stores its data (spec §1)."""

    SPECIAL = "special"  # §4: a header (and a value), no blocks
    MEMCPYED = "memcpyed"  # §5: the data follows the header verbatim
    EMPTY = "empty"  # nbytes 0: only a header
    BLOCKS = "blocks"  # §6: fixed-size blocks of streams
    VL_BLOCKS = "vl_blocks"  # §12: variable-length blocks


@dataclass(frozen=True, slots=True)
class ChunkLayout:
    """A chunk's validated layout.

    ``bstarts`` holds the block offsets (``int64``; empty for chunks without blocks),
    ``dict_offset``/``dict_size`` the span of the dictionary bytes (size 0: none) and
    ``data_start`` the first byte after the block starts and the dictionary.

    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> c = encode_chunk(memoryview(bytes(range(256)) * 64), EncodeSpec(1, 5, 1, blocksize=4096))
    >>> lay = ChunkLayout.parse(ChunkHeader.from_bytes(c), lambda p, n: c[p : p + n])
    >>> lay.kind.name, len(lay.bstarts), lay.data_start, lay.block_spans([1, 2]) == [
    ...     (int(lay.bstarts[1]), int(lay.bstarts[3]))]
    ('BLOCKS', 4, 48, True)
    """

    header: ChunkHeader
    kind: ChunkKind
    bstarts: np.ndarray
    dict_offset: int = 0
    dict_size: int = 0
    data_start: int = 0
    #: per block, its (start, end) byte span as Python ints (regular blocks; else empty):
    #: a block ends at the next larger block start, or at ``cbytes``
    spans: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, header: ChunkHeader, read: ReadFn, spans: bool = True) -> ChunkLayout:
        """The layout of the chunk whose (validated) ``header`` is given; ``read`` returns
        bytes of the chunk and is only asked for bytes before ``header.cbytes``. ``spans``
        false: the block spans (for reads of a stored chunk by ranges) are not derived."""
        h = header
        kind = _kind(h)
        if kind in (ChunkKind.SPECIAL, ChunkKind.MEMCPYED, ChunkKind.EMPTY):
            return cls(h, kind, _NO_BLOCKS, data_start=h.header_len)
        hl, nblocks, cbytes = h.header_len, h.nblocks, h.cbytes
        if nblocks > (cbytes - hl) // BSTART_LEN:
            raise FormatError(
                "chunk",
                "bstarts",
                hl,
                f"{nblocks} offsets within cbytes={cbytes}",
                "beyond the chunk end",
            )
        if (
            not h.vl_blocks
            and not h.dont_split
            and h.typesize > 1
            and h.effective_blocksize % h.typesize
            and h.nbytes >= h.effective_blocksize
        ):
            raise FormatError(
                "chunk header",
                "blocksize",
                OFF_BLOCKSIZE,
                f"a multiple of typesize {h.typesize} for split blocks",
                h.effective_blocksize,
            )
        data_start = hl + BSTART_LEN * nblocks
        extra = DSIZE_LEN if h.use_dict else 0
        if data_start + extra > cbytes:
            raise FormatError("chunk", "dsize", data_start, "4 bytes within cbytes", "missing")
        meta = read(hl, data_start + extra - hl)
        bstarts = np.frombuffer(meta, "<i4", nblocks).astype(np.int64)
        dict_offset = dict_size = 0
        if h.use_dict:
            dsize = _I32.unpack_from(meta, data_start - hl)[0]
            if not 0 < dsize <= MAX_DICT_SIZE or data_start + DSIZE_LEN + dsize > cbytes:
                raise FormatError(
                    "chunk",
                    "dsize",
                    data_start,
                    f"1..{MAX_DICT_SIZE} and within cbytes={cbytes}",
                    dsize,
                )
            dict_offset, dict_size = data_start + DSIZE_LEN, dsize
            data_start = dict_offset + dsize
        block_spans: tuple[tuple[int, int], ...] = ()
        if kind == ChunkKind.BLOCKS and 0 < nblocks <= _FEW_BLOCKS:
            # the same checks and spans in Python: numpy's per-call cost dominates here
            starts = bstarts.tolist()
            if min(starts) < data_start or max(starts) >= cbytes:
                _check_bstarts(h, bstarts, data_start)  # raises, naming the first bad one
            if spans:
                order = sorted(set(starts))
                order.append(cbytes)
                block_spans = tuple((b, order[bisect_right(order, b)]) for b in starts)
        else:
            _check_bstarts(h, bstarts, data_start)
            if spans and kind == ChunkKind.BLOCKS and nblocks:
                order_np = np.unique(bstarts)
                ends = np.append(order_np, cbytes)[np.searchsorted(order_np, bstarts, side="right")]
                block_spans = tuple(zip(bstarts.tolist(), ends.tolist(), strict=True))
        return cls(h, kind, bstarts, dict_offset, dict_size, data_start, block_spans)

    # -- derived ------------------------------------------------------------------------
    @property
    def has_delta(self) -> bool:
        """Whether DELTA is in the pipeline: every block then needs block 0 (§9.3)."""
        return any(fid == Filter.DELTA for fid, _ in self.header.pipeline)

    def blocks_for(self, start: int, stop: int) -> range:
        """The blocks holding bytes ``[start, stop)`` of the decoded chunk (clipped to it)."""
        h = self.header
        start, stop = max(0, start), min(stop, h.nbytes)
        if stop <= start or self.kind != ChunkKind.BLOCKS:
            return range(0)
        bs = h.effective_blocksize
        return range(start // bs, (stop - 1) // bs + 1)

    def needed_blocks(self, start: int, stop: int) -> list[int]:
        """:meth:`blocks_for`, plus block 0 when the pipeline has DELTA."""
        blocks = list(self.blocks_for(start, stop))
        if blocks and blocks[0] != 0 and self.has_delta:
            blocks.insert(0, 0)
        return blocks

    def block_spans(self, blocks: Iterable[int]) -> list[tuple[int, int]]:
        """The byte spans ``(start, end)`` holding these blocks, sorted, adjacent and
        overlapping spans merged. A block ends at the next larger block start, or at
        ``cbytes`` (blocks need not be stored in order)."""
        spans = self.spans
        if not spans:  # (a layout made without its spans)
            return self._computed_spans(blocks)
        return merge_spans([spans[j] for j in blocks])

    def _computed_spans(self, blocks: Iterable[int]) -> list[tuple[int, int]]:
        idx = np.fromiter(blocks, np.int64)
        if idx.size == 0:
            return []
        order = np.unique(self.bstarts)
        starts = np.unique(self.bstarts[idx])
        nxt = np.searchsorted(order, starts, side="right")
        ends = np.append(order, self.header.cbytes)[nxt]
        return merge_spans(zip(starts.tolist(), ends.tolist(), strict=True))

    @property
    def dict_span(self) -> tuple[int, int] | None:
        """``(start, end)`` of the dictionary bytes, or None."""
        return (self.dict_offset, self.dict_offset + self.dict_size) if self.dict_size else None


def gather_i32(arr: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The little-endian int32 at each offset of ``pos`` in the byte array ``arr``.

    >>> gather_i32(np.arange(8, dtype=np.uint8), np.array([0, 4])).tolist()
    [50462976, 117835012]
    """
    quads = arr[pos[:, None] + np.arange(4)]  # a new C-contiguous (n, 4) uint8 array
    return quads.view("<i4").reshape(-1)


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ``(start, end)`` spans with adjacent or overlapping ones merged.

    >>> merge_spans([(10, 20), (0, 5), (5, 8), (15, 30)])
    [(0, 8), (10, 30)]
    """
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _kind(h: ChunkHeader) -> ChunkKind:
    """The chunk's kind, after the header checks that need ``cbytes`` and flags together."""
    if h.special > SpecialValue.UNINIT:
        raise FormatError(
            "chunk header",
            "blosc2_flags",
            OFF_BLOSC2_FLAGS,
            "a special value id in 0..4",
            h.special,
        )
    if h.memcpyed and h.cbytes != h.nbytes + h.header_len:
        raise FormatError(
            "chunk header",
            "cbytes",
            OFF_CBYTES,
            f"nbytes + {h.header_len} = {h.nbytes + h.header_len} (memcpyed)",
            h.cbytes,
        )
    if h.special:
        return ChunkKind.SPECIAL
    if h.memcpyed:
        return ChunkKind.MEMCPYED
    if h.nbytes == 0:
        if h.cbytes != h.header_len:
            raise FormatError(
                "chunk header",
                "cbytes",
                OFF_CBYTES,
                f"{h.header_len} for an empty chunk (nbytes 0)",
                h.cbytes,
            )
        return ChunkKind.EMPTY
    if h.lazy:
        raise NotImplementedError(
            "lazy chunks (blosc2_flags bit 3) hold no data: read them through their frame"
        )
    if h.blosc2_flags & INSTR_CODEC:
        raise NotImplementedError("instrumentation chunks (blosc2_flags bit 7) hold no data")
    if h.blosc2_flags & BIGENDIAN:
        raise NotImplementedError("big-endian chunks (blosc2_flags bit 1)")
    return ChunkKind.VL_BLOCKS if h.vl_blocks else ChunkKind.BLOCKS


def _check_bstarts(h: ChunkHeader, bstarts: np.ndarray, data_start: int) -> None:
    """Every block starts inside the data area; VL blocks in strictly increasing order."""
    hl = h.header_len
    bad = np.flatnonzero((bstarts < data_start) | (bstarts >= h.cbytes))
    if bad.size:
        j = int(bad[0])
        raise FormatError(
            "chunk",
            f"bstarts[{j}]",
            hl + BSTART_LEN * j,
            f"in {data_start}..{h.cbytes - 1}",
            int(bstarts[j]),
        )
    if h.vl_blocks and len(bstarts) > 1:
        down = np.flatnonzero(np.diff(bstarts) <= 0)
        if down.size:
            j = int(down[0]) + 1
            raise FormatError(
                "chunk",
                f"bstarts[{j}]",
                hl + BSTART_LEN * j,
                "strictly increasing offsets (VL-block chunk)",
                int(bstarts[j]),
            )
