"""The streams of a chunk's blocks (spec §6.3, §15): the parts a decoder works on.

:class:`ChunkStreams` holds a validated chunk's layout, bytes, filter pipeline, codec and
dictionary, and reads what every decoder needs from them: the stream headers of a block
(checked against ``cbytes`` before anything is decoded, for all blocks at once), one stream
decoded into its place, a block's streams, a block through its pipeline. The readers built on
it (:class:`~pyblosc2.chunk.decode.ChunkReader`, the fused path of :mod:`.fused`, VL blocks of
:mod:`.vlblocks`) take these parts, so none of them imports another.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from ..codecs.base import BaseCodec, StreamDecoder
from ..codecs.blosclz import BloscLZCodec
from ..codecs.registry import UDCODEC_FORMAT
from ..errors import CodecError, FormatError
from ..kernels import active
from .header import OFF_FLAGS, OFF_UDCOMPCODE, ChunkHeader
from .layout import CSIZE_LEN, ChunkLayout, gather_i32
from .pipeline import Pipeline, scratch_pair

__all__ = ["MAX_RUN", "ChunkStreams", "walk_streams"]

_I32 = struct.Struct("<i")
# From this many blocks on, stream headers are checked with numpy passes over the blocks:
# those cost ~100 us plus ~40 us per stream index, the walk ~2 us per block plus ~0.5 us per
# stream (opening a 4 MiB chunk of 32 one-stream blocks: 90 us walked, 149 us vectorised; 64
# blocks of 8 streams: 300 / 430 us; 49 blocks, an offsets index: 145-221 / 264-374 us; 128
# one-stream blocks: 294 / 250 us).
_VECTOR_MIN_BLOCKS = 128
#: a block's stream headers: (csizes, data starts, data ends), one entry per stream
StreamRow = tuple[list[int], list[int], list[int]]
MAX_RUN = 255  # a run stream's csize is -value, value in 1..255 (§6.3)


@dataclass(frozen=True, slots=True)
class ChunkStreams:
    """A validated chunk's parts and the stream-level reading every decoder shares (built by
    :class:`~pyblosc2.chunk.decode.ChunkReader`'s constructors, which check the layout and
    every stream header first)."""

    layout: ChunkLayout
    buf: memoryview
    arr: np.ndarray
    pipeline: Pipeline
    codec: BaseCodec | None = None
    dict_: bytes | None = None
    #: the only blocks whose bytes ``buf`` holds (a ranged read), or None: all of them
    present: frozenset[int] | None = None
    # layout.header and layout.bstarts, as fields: the per-block path reads them often
    header: ChunkHeader = field(init=False, repr=False, compare=False)
    bstarts: np.ndarray = field(init=False, repr=False, compare=False)
    #: the checked stream headers of the blocks :meth:`_check_streams` saw, per block
    #: ``j``: ``(csizes, data starts, data ends)`` of its streams (§6.3), so that decoding
    #: a block reads no csize again (empty until checked)
    streams: dict[int, StreamRow] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "header", self.layout.header)
        object.__setattr__(self, "bstarts", self.layout.bstarts)
        object.__setattr__(self, "streams", {})

    # -- stream checks ----------------------------------------------------------------
    def _check_streams(self, blocks: Sequence[int]) -> None:
        """Validate every csize (and run token) of these blocks before anything is decoded,
        and keep them in :attr:`streams`.

        Few blocks are walked with :meth:`stream_header`; more are walked vectorised over
        blocks (one numpy pass per stream index) with the same conditions, and the first bad
        block is then re-walked by :meth:`stream_header` to raise the precise error.
        """
        h = self.header
        nblocks, cbytes, arr = h.nblocks, h.cbytes, self.arr
        table = self.streams
        needs_codec = False
        if len(blocks) < _VECTOR_MIN_BLOCKS:
            # (the walk of _walk_block, with what every block shares taken once)
            spans, bstarts, buf = self.layout.spans, self.bstarts, self.buf
            bs, final, leftover = h.effective_blocksize, nblocks - 1, h.leftover
            nst_full = h.nstreams(0) if nblocks else 1
            codec = self.codec
            for j in blocks:
                nst, bsize = (1, leftover) if leftover and j == final else (nst_full, bs)
                pos = spans[j][0] if spans else int(bstarts[j])
                row = walk_streams(buf, pos, nst, cbytes)
                if len(row[0]) < nst or bsize < nst:  # a bad stream: named by the walk
                    row = self._walk_block(j, bsize)
                table[j] = row
                if codec is None:
                    neblock = bsize // nst
                    needs_codec = needs_codec or any(c > 0 and c != neblock for c in row[0])
        else:
            idx = np.asarray(blocks)
            last = (idx == nblocks - 1) if h.leftover else np.zeros(len(idx), bool)
            groups = [(idx[~last], h.nstreams(0), h.block_size(0)), (idx[last], 1, h.leftover)]
            for group, nst, bsize in groups:
                if not group.size:  # (a full group implies block 0 is full)
                    continue
                neblock = bsize // nst
                at = self.bstarts[group]
                cols = []
                for _ in range(nst):
                    # A csize field cut by cbytes makes ``end`` exceed cbytes as well.
                    sizes = gather_i32(arr, np.minimum(at, cbytes - CSIZE_LEN))
                    run = sizes < 0
                    end = at + CSIZE_LEN + np.where(run, 1, np.maximum(sizes, 0))
                    bad = (end > cbytes) | (sizes < -MAX_RUN)
                    bad |= run & ((arr[np.minimum(end - 1, cbytes - 1)] & 1) == 0)
                    if bad.any():
                        self._raise_block_error(int(group[np.argmax(bad)]))
                    if self.codec is None:
                        needs_codec = needs_codec or bool(np.any((sizes > 0) & (sizes != neblock)))
                    cols.append((sizes, at + CSIZE_LEN, end))
                    at = end
                # (3, blocks, streams) -> per block: its csizes, starts and ends
                per = np.stack([np.stack(c, axis=1) for c in zip(*cols, strict=True)], 1)
                table.update(zip(group.tolist(), map(tuple, per.tolist()), strict=True))
        if needs_codec and self.codec is None:
            self.raise_no_codec("chunk")

    def check_blocks(self, blocks: Sequence[int]) -> None:
        """Check (and keep) the stream headers of ``blocks``, for a reader built without
        checking them (:meth:`~pyblosc2.chunk.decode.ChunkReader.with_bytes`)."""
        self._check_streams(blocks)

    def _raise_block_error(self, j: int) -> NoReturn:
        """Re-walk the stream headers of block ``j`` (known bad) to raise the exact error."""
        h = self.header
        nst = h.nstreams(j)
        neblock = h.block_size(j) // nst
        pos = int(self.bstarts[j])
        for s in range(nst):
            pos = self.stream_header(j, s, pos, neblock)[2]
        raise FormatError(f"block {j}", "streams", int(self.bstarts[j]), "valid streams", "bad")

    # -- decoding streams -----------------------------------------------------------
    def decode_block(self, j: int, dst: np.ndarray, ref: np.ndarray | None) -> None:
        """Decode regular block ``j`` into ``dst`` (its exact size); ``ref`` = decoded block 0
        when the pipeline has DELTA and ``j > 0``."""
        bsize = len(dst)
        filtered = bool(self.pipeline.backward_steps)
        target, aux = scratch_pair(bsize) if filtered else (dst, None)
        self.decode_streams(j, target)
        if filtered:
            self.pipeline.backward(target, dst, ref, aux)

    def decode_streams(
        self, j: int, target: np.ndarray, decode: StreamDecoder | None = None
    ) -> None:
        """Decode the streams of regular block ``j`` into ``target`` (its exact size);
        ``decode``: this thread's :meth:`~pyblosc2.codecs.base.BaseCodec.stream_decoder` of the
        chunk's codec when the caller bound it for a run of blocks (else bound here)."""
        bsize = len(target)
        row = self.streams.get(j)
        if row is None or bsize < len(row[0]):  # (unchecked, or too small: the walk names it)
            row = self._walk_block(j, bsize)
        sizes, starts, ends = row
        neblock = bsize // len(sizes)
        codec = self.codec
        if type(codec) is BloscLZCodec:  # its streams decoded together by one kernel call
            batch = []
            for s, (csize, start, end) in enumerate(zip(sizes, starts, ends, strict=True)):
                if 0 < csize != neblock:
                    batch.append((start, end, s * neblock, (s + 1) * neblock))
                else:
                    seg = target[s * neblock : (s + 1) * neblock]
                    self._fill_stream(seg, csize, start, end, (j, s))
            if batch:
                self._decode_blosclz(j, batch, target)
            return
        if decode is None and codec is not None:
            decode = codec.stream_decoder(self.dict_)
        mv, buf = target.data, self.buf
        for s, (csize, start, end) in enumerate(zip(sizes, starts, ends, strict=True)):
            if 0 < csize != neblock and decode is not None:
                part = mv[s * neblock : (s + 1) * neblock]
                got = decode(buf[start:end], part)
                if got is None:  # refused: decoded again by the path that names it
                    seg = target[s * neblock : (s + 1) * neblock]
                    self.decode_stream((j, s), start - CSIZE_LEN, buf[start:end], seg)
                elif got is not part:
                    part[:] = got  # the codec's own new buffer, copied into place
            else:
                seg = target[s * neblock : (s + 1) * neblock]
                self._fill_stream(seg, csize, start, end, (j, s))

    def _fill_stream(
        self, seg: np.ndarray, csize: int, start: int, end: int, where: tuple[int, int]
    ) -> None:
        """A stream stored raw (``csize`` its size) or as a run into ``seg``; a compressed
        one with no codec to decode it is a named error."""
        if csize == len(seg):
            seg[:] = self.arr[start:end]
        elif csize == 0:
            seg[:] = 0
        elif csize < 0:
            seg[:] = (-csize) & 0xFF
        else:
            self.decode_stream(where, start - CSIZE_LEN, self.buf[start:end], seg)

    def _decode_blosclz(
        self, j: int, batch: list[tuple[int, int, int, int]], target: np.ndarray
    ) -> None:
        """Decode block ``j``'s BloscLZ streams ``(data start, data end, target start, target
        end)`` in one kernel call; from the first one refused on, stream by stream, so that
        the error names the stream as :meth:`decode_stream` does."""
        bad = active().blosclz_decompress_streams(self.arr, np.array(batch, np.int64), target)
        if bad < 0:
            return
        neblock = batch[0][3] - batch[0][2]
        for start, end, a, b in batch[bad:]:
            where = (j, a // neblock)
            self.decode_stream(where, start - CSIZE_LEN, self.buf[start:end], target[a:b])

    def block_streams(self, j: int) -> StreamRow:
        """The checked stream headers of regular block ``j``: :attr:`streams`, or read and
        checked now (a reader built without checking, e.g. for a ranged read)."""
        row = self.streams.get(j)
        return self._walk_block(j, self.header.block_size(j)) if row is None else row

    def _walk_block(self, j: int, bsize: int) -> StreamRow:
        """The stream headers of block ``j`` (``bsize`` bytes), read and checked in order
        (§6.3, §15): every byte a stream uses lies before ``cbytes``, a run's csize is in
        ``-MAX_RUN..-1`` and its token has bit 0 set. A bad one is re-read by
        :meth:`stream_header`, which names it."""
        nst = self.header.nstreams(j)
        neblock = bsize // nst
        if neblock == 0:
            raise FormatError(f"block {j}", "size", None, "at least one byte per stream", 0)
        spans = self.layout.spans
        pos = spans[j][0] if spans else int(self.bstarts[j])
        row = walk_streams(self.buf, pos, nst, self.header.cbytes)
        if len(row[0]) < nst:  # the stream after the last good one is bad: named here
            s = len(row[0])
            at = row[2][-1] if s else pos
            self.stream_header(j, s, at, neblock)
            raise FormatError(f"block {j}", "streams", at, "valid streams", "bad")
        return row

    def stream_header(self, j: int, s: int, pos: int, neblock: int) -> tuple[int, int, int]:
        """Read the csize of block ``j`` stream ``s`` at ``pos`` (§6.3): ``(csize, data
        start, next stream offset)``. Every byte the stream uses must lie before ``cbytes``."""
        cbytes = self.header.cbytes
        if pos + CSIZE_LEN > cbytes:
            raise FormatError(
                f"block {j} stream {s}",
                "csize",
                pos,
                f"{CSIZE_LEN} bytes before cbytes={cbytes}",
                "truncated",
            )
        csize = _I32.unpack_from(self.buf, pos)[0]
        start = pos + CSIZE_LEN
        if csize > 0:
            if start + csize > cbytes:
                raise FormatError(
                    f"block {j} stream {s}",
                    "csize",
                    pos,
                    f"at most {cbytes - start} (bytes left in the chunk)",
                    csize,
                )
            return csize, start, start + csize
        if csize == 0:
            return 0, start, start
        if csize < -MAX_RUN:
            raise FormatError(
                f"block {j} stream {s}", "csize", pos, f"a run length in -{MAX_RUN}..-1", csize
            )
        if start >= cbytes:
            raise FormatError(
                f"block {j} stream {s}", "run token", start, "1 byte before cbytes", "truncated"
            )
        if not self.buf[start] & 1:
            raise FormatError(
                f"block {j} stream {s}", "run token", start, "bit 0 set", hex(self.arr[start])
            )
        return csize, start, start + 1

    def raise_no_codec(self, where: str) -> NoReturn:
        h = self.header
        if h.compformat == UDCODEC_FORMAT:
            raise FormatError(
                where, "udcompcode", OFF_UDCOMPCODE, "a registered codec id", h.udcompcode
            )
        raise FormatError(
            where, "compformat", OFF_FLAGS, "a codec format in {0, 1, 2, 3, 4, 6}", h.compformat
        )

    def decode_stream(
        self,
        where: str | tuple[int, int],
        offset: int,
        src: memoryview,
        dst: np.ndarray,
        fresh: bool = False,
    ) -> np.ndarray:
        """Decode one stream into ``dst`` and return it; ``where`` names the stream (or is
        ``(block, stream)``) for errors. With ``fresh``, a codec that cannot write into a
        buffer returns its own new one instead (no copy into ``dst``)."""
        codec = self.codec
        if codec is None:
            self.raise_no_codec(_where(where))
        try:
            if fresh and not codec.writes_into:
                return np.frombuffer(codec.decompress(src, len(dst), self.dict_), np.uint8)
            codec.decompress_into(src, dst.data, self.dict_)
            return dst
        except CodecError as exc:
            raise CodecError(
                f"{_where(where)} ({codec.name})", "data", offset, exc.expected, exc.got
            ) from None


def walk_streams(buf: bytes | memoryview, pos: int, nst: int, cbytes: int) -> StreamRow:
    """The headers of the ``nst`` streams of a block starting at ``pos`` (§6.3, §15): per
    stream its csize, data start and data end, read in order while each is valid (every
    byte a stream uses lies before ``cbytes``, a run's csize is in ``-MAX_RUN..-1`` and its
    token has bit 0 set). Fewer than ``nst`` entries: the next stream is bad (a caller that
    must name it asks :meth:`ChunkStreams.stream_header`).

    >>> walk_streams(bytes([3, 0, 0, 0, 7, 7, 7, 0, 0, 0, 0]), 0, 2, 11)
    ([3, 0], [4, 11], [7, 11])
    """
    unpack = _I32.unpack_from
    sizes: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    for _ in range(nst):
        start = pos + CSIZE_LEN
        if start > cbytes:
            break
        csize = unpack(buf, pos)[0]
        if csize > 0:
            end = start + csize
        elif csize == 0:
            end = start
        elif csize < -MAX_RUN or start >= cbytes or not buf[start] & 1:
            break
        else:
            end = start + 1
        if end > cbytes:
            break
        sizes.append(csize)
        starts.append(start)
        ends.append(end)
        pos = end
    return sizes, starts, ends


def _where(where: str | tuple[int, int]) -> str:
    return where if isinstance(where, str) else f"block {where[0]} stream {where[1]}"
