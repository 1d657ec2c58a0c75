"""A contiguous b2nd frame read by byte ranges: what a
:class:`~pyblosc2.proxy_source.ByteRangeNDSource` knows of the frame it serves.

Everything is read through ``read(offset, size)`` and checked before it is used:

* the header (frame-format.md §2-3), from a generous first read of the frame's head (a guess
  that falls short costs the exact read the format asks for), with its b2nd metalayer (§8.1);
* the chunk offsets (§4), read on the first chunk asked for: the index chunk after the data
  area, from a read of the frame's tail capped by ``index_prefetch``; offsets become absolute
  positions (negative: a special chunk stored in the offset);
* how many bytes to read at each chunk's offset (up to the next thing stored, capped by the
  most a chunk can weigh), so a chunk costs one read;
* a chunk's layout (its header and block starts, chunk-format.md §6.2), from one read of its
  first ``32 + 4 * nblocks`` bytes, for a chunk taken apart block by block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..chunk.header import OFF_CBYTES, ChunkHeader
from ..chunk.layout import BSTART_LEN, ChunkLayout
from ..constants import EXTENDED_HEADER_LENGTH, MAX_OVERHEAD
from ..errors import FormatError, NotAFrameError
from ..frame.header import (
    FRAME_MAGIC,
    HEADER_MINLEN,
    POS_HEADER_LEN,
    POS_MAGIC,
    SPARSE,
    FrameHeader,
)
from ..frame.index import OffsetIndex
from ..ndarray.b2nd_meta import B2NDMeta
from .splice import spliceable

__all__ = ["BlockLayout", "FrameHead", "block_plan", "chunk_extents", "read_offsets"]

ReadFn = Callable[[int, int], bytes]


@dataclass(frozen=True, slots=True)
class FrameHead:
    """A frame's checked header and b2nd geometry."""

    raw: bytes
    header: FrameHeader
    meta: B2NDMeta

    @classmethod
    def read(cls, read: ReadFn, url: str, head: bytes) -> FrameHead:
        """Parse the header from ``head`` (the frame's first bytes), reading the whole
        header through ``read`` when it is longer."""
        if len(head) < HEADER_MINLEN or head[POS_MAGIC : POS_MAGIC + 8] != FRAME_MAGIC:
            got = bytes(head[POS_MAGIC : POS_MAGIC + 8]) if len(head) >= HEADER_MINLEN else "short"
            raise NotAFrameError(url, "magic", POS_MAGIC, "a Blosc2 contiguous frame", got)
        header_len = int.from_bytes(head[POS_HEADER_LEN : POS_HEADER_LEN + 4], "big", signed=True)
        if header_len <= HEADER_MINLEN:
            raise FormatError(url, "header_len", POS_HEADER_LEN, f"> {HEADER_MINLEN}", header_len)
        raw = bytes(head[:header_len]) if header_len <= len(head) else bytes(read(0, header_len))
        if len(raw) < header_len:
            raise FormatError(url, "header_len", POS_HEADER_LEN, f"<= {len(raw)}", header_len)
        h = FrameHeader.from_bytes(raw)
        if h.frame_type == SPARSE:
            raise NotImplementedError(f"{url} is a sparse frame: read it with cache_storage=")
        layers = dict(h.metalayers)
        if "b2nd" not in layers:
            raise NotImplementedError(
                f"{url} has no b2nd metalayer, so it is a plain SChunk rather than an NDArray; "
                "read it whole or with cache_storage= instead"
            )
        meta = B2NDMeta.from_bytes(layers["b2nd"], h.typesize)
        padded = math.prod(
            -(-c // b) * b if b else c for c, b in zip(meta.chunks, meta.blocks, strict=True)
        )
        if meta.dtype.itemsize != h.typesize or (h.nbytes and h.chunksize != padded * h.typesize):
            raise FormatError(
                url,
                "b2nd chunks",
                None,
                f"chunksize {h.chunksize} = the chunk padded to whole blocks, times the itemsize",
                f"{meta.chunks} in blocks {meta.blocks} of {meta.dtype}",
            )
        return cls(raw, h, meta)

    @property
    def header_len(self) -> int:
        return self.header.header_len

    @property
    def nchunks(self) -> int:
        m = self.meta
        if any(c == 0 for c in m.chunks):
            return 0
        return math.prod(math.ceil(s / c) for s, c in zip(m.shape, m.chunks, strict=True))

    @property
    def blocks_per_chunk(self) -> int:
        m = self.meta
        if not all(m.blocks):
            return 1
        return math.prod(math.ceil(c / b) for c, b in zip(m.chunks, m.blocks, strict=True))

    @property
    def index_pos(self) -> int:
        return self.header_len + self.header.cbytes


def read_offsets(
    read: ReadFn, fh: FrameHead, head: bytes | None, prefetch: int, url: str
) -> np.ndarray:
    """The absolute position of every chunk (negative: special), checked against the data
    area. ``head``: the frame's first bytes, which hold the index when the frame is small."""
    h = fh.header
    if h.nbytes == 0 or fh.nchunks == 0:
        return np.empty(0, np.int64)
    ipos = fh.index_pos
    if head is not None and len(head) >= h.frame_len:
        index = bytes(head[ipos : h.frame_len])
    else:
        index = bytes(read(ipos, max(min(h.frame_len - ipos, prefetch), 0)))
    if len(index) < OFF_CBYTES + 4:  # not even the index chunk's size: its header, then
        index = bytes(read(ipos, EXTENDED_HEADER_LENGTH))
    cbytes = int.from_bytes(index[OFF_CBYTES : OFF_CBYTES + 4], "little", signed=True)
    if cbytes > len(index):
        if cbytes > h.frame_len - ipos:
            raise FormatError(
                url, "index cbytes", ipos + OFF_CBYTES, f"<= {h.frame_len - ipos}", cbytes
            )
        index = bytes(read(ipos, cbytes))
    offsets = OffsetIndex.open(index, fh.nchunks, ipos).all()
    stored = offsets >= 0
    bad = np.flatnonzero(stored & (offsets > h.cbytes - EXTENDED_HEADER_LENGTH))
    if bad.size:
        n = int(bad[0])
        raise FormatError(url, f"offset[{n}]", None, f"at most {h.cbytes - 32}", int(offsets[n]))
    return np.where(stored, offsets + fh.header_len, offsets)


def chunk_extents(offsets: np.ndarray, fh: FrameHead) -> np.ndarray:
    """How many bytes to read at each chunk's offset to hold it whole: up to the next thing
    stored (another chunk, or the index chunk), at most what a chunk can weigh."""
    bounds = np.unique(np.append(offsets[offsets >= 0], fh.index_pos))
    nxt = bounds[np.minimum(np.searchsorted(bounds, offsets, side="right"), len(bounds) - 1)]
    extents = np.where(offsets >= 0, nxt - offsets, 0)
    return np.minimum(extents, fh.header.chunksize + 2 * MAX_OVERHEAD)


@dataclass(frozen=True, slots=True)
class BlockLayout:
    """Where the blocks of one stored chunk lie: its 32-byte header, and each block's start
    and size inside the chunk."""

    header: bytes
    starts: np.ndarray
    sizes: np.ndarray

    @property
    def section(self) -> bytes:
        """The bytes it was read from (the header and the block starts)."""
        return self.header + self.starts.astype("<i4").tobytes()

    @classmethod
    def parse(cls, section: bytes, nblocks: int) -> BlockLayout | None:
        """The layout ``section`` (a chunk's first ``32 + 4 * nblocks`` bytes) says, or None
        for a chunk that cannot be taken apart: a special or memcpyed one, one of a single
        block, one with a dictionary, VL blocks or no extended header, one whose blocks are
        not the frame's."""
        need = EXTENDED_HEADER_LENGTH + BSTART_LEN * nblocks
        if len(section) < need or nblocks <= 1:
            return None
        h = ChunkHeader.from_bytes(section)
        if h.special or h.memcpyed or h.vl_blocks or h.use_dict or h.nblocks != nblocks:
            return None
        if h.header_len != EXTENDED_HEADER_LENGTH or h.cbytes < need:
            return None
        layout = ChunkLayout.parse(h, lambda p, n: section[p : p + n])
        if not spliceable(layout):
            return None
        starts = layout.bstarts
        sizes = np.array([b - a for a, b in layout.spans], np.int64)
        return cls(bytes(section[:EXTENDED_HEADER_LENGTH]), starts, sizes)


def block_plan(
    layout: BlockLayout, base: int, blocks: Sequence[int], gap: int
) -> list[tuple[int, int, tuple[tuple[int, int, int], ...]]]:
    """The range reads covering ``blocks`` of the chunk at frame position ``base``: blocks in
    file order, neighbours closer than ``gap`` bytes merged into one read. Each read is
    ``(offset, size, ((block, offset in the read, size), ...))``."""
    plan: list[tuple[int, int, list[tuple[int, int, int]]]] = []
    for j in sorted(blocks, key=lambda b: int(layout.starts[b])):
        start, size = int(layout.starts[j]), int(layout.sizes[j])
        if plan and start - (plan[-1][0] + plan[-1][1]) <= gap:
            first, length, members = plan[-1]
            plan[-1] = (first, max(length, start + size - first), [*members, (j, start, size)])
        else:
            plan.append((start, size, [(j, start, size)]))
    return [
        (base + first, length, tuple((j, s - first, n) for j, s, n in members))
        for first, length, members in plan
    ]
