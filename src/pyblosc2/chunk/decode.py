"""Reading a chunk: dispatch (spec §1), special values (§4), memcpyed (§5), regular chunks
(§6), VL-block chunks (§12), partial decoding (§14) and the checks of §15.

Every size and offset is checked against ``cbytes`` (itself checked against the buffer) before
it is used, so no header field can drive an allocation beyond ``nbytes`` or a read out of
bounds. Blocks are decoded on a thread pool straight into the caller's output.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from .._threads import run_parallel
from ..codecs.base import BaseCodec
from ..codecs.registry import codec_for_format
from ..constants import MAX_DICT_SIZE, Filter, SpecialValue
from ..errors import CodecError, FormatError
from ..filters.registry import lookup_filter
from .header import (
    BIGENDIAN,
    INSTR_CODEC,
    OFF_BLOCKSIZE,
    OFF_BLOSC2_FLAGS,
    OFF_CBYTES,
    OFF_FILTERS,
    OFF_FLAGS,
    OFF_UDCOMPCODE,
    ChunkHeader,
)
from .pipeline import Pipeline

__all__ = ["ChunkReader", "decode_chunk", "decode_range"]

_I32 = struct.Struct("<i")
# From this many blocks on, stream headers are checked with numpy passes over the blocks.
_VECTOR_MIN_BLOCKS = 32
_QUAD = np.arange(4)
_NAN_PATTERNS = {
    4: np.frombuffer(b"\x00\x00\xc0\x7f", np.uint8),
    8: np.frombuffer(b"\x00\x00\x00\x00\x00\x00\xf8\x7f", np.uint8),
}


class _Scratch(threading.local):
    def __init__(self) -> None:
        self.buf = np.empty(0, np.uint8)
        self.aux = np.empty(0, np.uint8)


_scratch = _Scratch()


def _scratch_arrays(n: int) -> tuple[np.ndarray, np.ndarray]:
    s = _scratch
    if len(s.buf) < n:
        s.buf = np.empty(n, np.uint8)
        s.aux = np.empty(n, np.uint8)
    return s.buf[:n], s.aux[:n]


@dataclass(slots=True)
class ChunkReader:
    """A validated chunk, ready to decode whole or by blocks.

    >>> r = ChunkReader.open(bytes.fromhex("05010504400000004000000020000000" + "00" * 15 + "10"))
    >>> r.header.special, bytes(r.decode()) == bytes(64)
    (1, True)
    """

    header: ChunkHeader
    buf: memoryview
    arr: np.ndarray
    bstarts: np.ndarray | None = None
    dict_: bytes | None = None
    codec: BaseCodec | None = None
    pipeline: Pipeline | None = None

    @classmethod
    def open(cls, buf: memoryview | bytes) -> ChunkReader:
        """Parse the header and every chunk-level structure (bstarts, dictionary, filters)."""
        h = ChunkHeader.from_bytes(buf)
        if h.cbytes > len(buf):
            raise FormatError(
                "chunk header", "cbytes", OFF_CBYTES, f"at most {len(buf)} (buffer size)", h.cbytes
            )
        view = memoryview(buf)[: h.cbytes]
        r = cls(h, view, np.frombuffer(view, np.uint8))
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
        if h.special or h.memcpyed or (h.nbytes == 0 and h.cbytes == h.header_len):
            return r
        if h.nbytes == 0:
            raise FormatError(
                "chunk header",
                "cbytes",
                OFF_CBYTES,
                f"{h.header_len} for an empty chunk (nbytes 0)",
                h.cbytes,
            )
        if h.lazy:
            raise NotImplementedError(
                "lazy chunks (blosc2_flags bit 3) hold no data: read them through their frame"
            )
        if h.blosc2_flags & INSTR_CODEC:
            raise NotImplementedError("instrumentation chunks (blosc2_flags bit 7) hold no data")
        if h.blosc2_flags & BIGENDIAN:
            raise NotImplementedError("big-endian chunks (blosc2_flags bit 1)")
        r._open_body()
        return r

    def _open_body(self) -> None:
        h, hl = self.header, self.header.header_len
        nblocks = h.nblocks
        if nblocks > (h.cbytes - hl) // 4:
            raise FormatError(
                "chunk",
                "bstarts",
                hl,
                f"{nblocks} offsets within cbytes={h.cbytes}",
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
        data_start = hl + 4 * nblocks
        self.bstarts = np.frombuffer(self.buf, "<i4", nblocks, hl).astype(np.int64)
        if h.use_dict:
            if data_start + 4 > h.cbytes:
                raise FormatError("chunk", "dsize", data_start, "4 bytes within cbytes", "missing")
            dsize = _I32.unpack_from(self.buf, data_start)[0]
            if not 0 < dsize <= MAX_DICT_SIZE or data_start + 4 + dsize > h.cbytes:
                raise FormatError(
                    "chunk",
                    "dsize",
                    data_start,
                    f"1..{MAX_DICT_SIZE} and within cbytes={h.cbytes}",
                    dsize,
                )
            self.dict_ = bytes(self.buf[data_start + 4 : data_start + 4 + dsize])
            data_start += 4 + dsize
        bad = np.flatnonzero((self.bstarts < data_start) | (self.bstarts >= h.cbytes))
        if bad.size:
            j = int(bad[0])
            raise FormatError(
                "chunk",
                f"bstarts[{j}]",
                hl + 4 * j,
                f"in {data_start}..{h.cbytes - 1}",
                int(self.bstarts[j]),
            )
        if h.vl_blocks and nblocks > 1 and np.any(np.diff(self.bstarts) <= 0):
            j = int(np.flatnonzero(np.diff(self.bstarts) <= 0)[0]) + 1
            raise FormatError(
                "chunk",
                f"bstarts[{j}]",
                hl + 4 * j,
                "strictly increasing offsets (VL-block chunk)",
                int(self.bstarts[j]),
            )
        self.codec = codec_for_format(h.compformat, h.udcompcode)
        steps = []
        for i, (fid, meta) in enumerate(h.pipeline):
            if fid == Filter.NOFILTER:
                continue
            flt = lookup_filter(fid)
            if flt is None:
                raise FormatError(
                    "chunk header", f"filters[{i}]", OFF_FILTERS + i, "a known filter id", fid
                )
            steps.append((flt, meta))
        self.pipeline = Pipeline(tuple(steps), h.typesize, h.version)
        # Every stream header is checked before anything is allocated or decoded (STYLE
        # habit 5): a few numpy passes over the blocks, one per stream index.
        if h.vl_blocks:
            self._check_vl_sizes()
        else:
            self._check_streams()

    def _check_streams(self) -> None:
        """Validate every csize (and run token) of every block before anything is decoded.

        Few blocks are walked with :meth:`_stream_header`; many blocks are walked vectorised
        over blocks (one numpy pass per stream index) with the same conditions, and the first
        bad block is then re-walked by :meth:`_stream_header` to raise the precise error.
        """
        h = self.header
        assert self.bstarts is not None
        nblocks, cbytes, arr = h.nblocks, h.cbytes, self.arr
        needs_codec = False
        if nblocks < _VECTOR_MIN_BLOCKS:
            for j, start in enumerate(self.bstarts.tolist()):
                nst = h.nstreams(j)
                neblock = h.block_size(j) // nst
                pos = start
                for s in range(nst):
                    csize, _, pos = self._stream_header(j, s, pos, neblock)
                    needs_codec = needs_codec or (csize > 0 and csize != neblock)
        else:
            nfull = nblocks - 1 if h.leftover else nblocks
            groups = [(np.arange(nfull), h.nstreams(0), h.block_size(0))]
            if h.leftover:
                groups.append((np.array([nblocks - 1]), 1, h.leftover))
            for blocks, nst, bsize in groups:
                neblock = bsize // nst
                pos = self.bstarts[blocks]
                for _ in range(nst):
                    # A csize field cut by cbytes makes ``end`` exceed cbytes as well.
                    csize = _gather_i32(arr, np.minimum(pos, cbytes - 4))
                    run = csize < 0
                    end = pos + 4 + np.where(run, 1, np.maximum(csize, 0))
                    bad = (end > cbytes) | (csize < -255)
                    bad |= run & ((arr[np.minimum(end - 1, cbytes - 1)] & 1) == 0)
                    if bad.any():
                        self._raise_block_error(int(blocks[np.argmax(bad)]))
                    if self.codec is None:
                        needs_codec = needs_codec or bool(np.any((csize > 0) & (csize != neblock)))
                    pos = end
        if needs_codec and self.codec is None:
            self._raise_no_codec("chunk")

    def _raise_block_error(self, j: int) -> NoReturn:
        """Re-walk the stream headers of block ``j`` (known bad) to raise the exact error."""
        h = self.header
        assert self.bstarts is not None
        nst = h.nstreams(j)
        neblock = h.block_size(j) // nst
        pos = int(self.bstarts[j])
        for s in range(nst):
            pos = self._stream_header(j, s, pos, neblock)[2]
        raise FormatError(f"block {j}", "streams", int(self.bstarts[j]), "valid streams", "bad")

    def _check_vl_sizes(self) -> None:
        """The size rules of a VL-block chunk (§12), before the output is allocated."""
        h = self.header
        assert self.bstarts is not None
        starts = self.bstarts
        ends = np.append(starts[1:], h.cbytes)
        short = ends - starts <= 4
        sizes = _gather_i32(self.arr, np.where(short, 0, starts)).astype(np.int64)
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
                    "a span of more than 4 bytes",
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
                "VL-block chunk", "nbytes", 4, f"the sum of block sizes {total}", h.nbytes
            )
        if self.codec is None and np.any(sizes != ends - starts - 4):
            self._raise_no_codec("VL-block chunk")

    # -- whole-chunk decoding -----------------------------------------------------------
    def decode(self, out: np.ndarray | None = None, nthreads: int = 1) -> np.ndarray:
        """Decode into ``out`` (a ``uint8`` array of at least ``nbytes``) or a new array."""
        h = self.header
        if out is None:
            out = (np.zeros if h.special in (SpecialValue.ZERO, SpecialValue.UNINIT) else np.empty)(
                h.nbytes, np.uint8
            )
            fresh = True
        else:
            fresh = False
            out = out[: h.nbytes]
        if h.special:
            self._fill_special(out, 0, h.nbytes, fresh)
        elif h.memcpyed:
            out[:] = self.arr[h.header_len : h.cbytes]
        elif h.nbytes == 0:
            pass
        elif h.vl_blocks:
            self._decode_vl(out)
        else:
            self._decode_blocks(out, range(h.nblocks), nthreads)
        return out

    def _decode_blocks(self, out: np.ndarray, blocks: range, nthreads: int) -> None:
        h = self.header
        bs = h.effective_blocksize
        ref = None
        todo = list(blocks)
        if self.pipeline is not None and self.pipeline.has_delta and todo:
            # DELTA references block 0 of the decoded output (§9.3): decode it first.
            self.decode_block(0, out[: h.block_size(0)], None)
            ref = out[:bs]
            todo = [j for j in todo if j != 0]

        def work(j: int) -> None:
            self.decode_block(j, out[j * bs : j * bs + h.block_size(j)], ref)

        run_parallel(work, todo, nthreads)

    def decode_block(self, j: int, dst: np.ndarray, ref: np.ndarray | None) -> None:
        """Decode regular block ``j`` into ``dst`` (its exact size); ``ref`` = decoded block 0
        when the pipeline has DELTA and ``j > 0``."""
        h = self.header
        assert self.bstarts is not None and self.pipeline is not None
        bsize = len(dst)
        nst = h.nstreams(j)
        neblock = bsize // nst
        if neblock == 0:
            raise FormatError(f"block {j}", "size", None, "at least one byte per stream", 0)
        filtered = bool(self.pipeline.backward_steps)
        target, aux = _scratch_arrays(bsize) if filtered else (dst, None)
        pos = int(self.bstarts[j])
        for s in range(nst):
            csize, start, pos = self._stream_header(j, s, pos, neblock)
            seg = target[s * neblock : (s + 1) * neblock]
            if csize == neblock:
                seg[:] = self.arr[start:pos]
            elif csize > 0:
                self._decode_stream(f"block {j} stream {s}", start - 4, self.buf[start:pos], seg)
            elif csize == 0:
                seg[:] = 0
            else:
                seg[:] = (-csize) & 0xFF
        if filtered:
            self.pipeline.backward(target, dst, ref, aux)

    def _stream_header(self, j: int, s: int, pos: int, neblock: int) -> tuple[int, int, int]:
        """Read the csize of block ``j`` stream ``s`` at ``pos`` (§6.3): ``(csize, data
        start, next stream offset)``. Every byte the stream uses must lie before ``cbytes``."""
        cbytes = self.header.cbytes
        if pos + 4 > cbytes:
            raise FormatError(
                f"block {j} stream {s}",
                "csize",
                pos,
                f"4 bytes before cbytes={cbytes}",
                "truncated",
            )
        csize = _I32.unpack_from(self.buf, pos)[0]
        start = pos + 4
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
        if csize < -255:
            raise FormatError(
                f"block {j} stream {s}", "csize", pos, "a run length in -255..-1", csize
            )
        if start >= cbytes:
            raise FormatError(
                f"block {j} stream {s}", "run token", start, "1 byte before cbytes", "truncated"
            )
        if not self.arr[start] & 1:
            raise FormatError(
                f"block {j} stream {s}", "run token", start, "bit 0 set", hex(self.arr[start])
            )
        return csize, start, start + 1

    def _raise_no_codec(self, where: str) -> NoReturn:
        h = self.header
        if h.compformat == 6:
            raise FormatError(
                where, "udcompcode", OFF_UDCOMPCODE, "a registered codec id", h.udcompcode
            )
        raise FormatError(
            where, "compformat", OFF_FLAGS, "a codec format in {0, 1, 2, 3, 4, 6}", h.compformat
        )

    def _decode_stream(self, where: str, offset: int, src: memoryview, dst: np.ndarray) -> None:
        codec = self.codec
        if codec is None:
            self._raise_no_codec(where)
        try:
            codec.decompress_into(src, memoryview(dst), self.dict_)
        except CodecError as exc:
            raise CodecError(
                f"{where} ({codec.name})", "data", offset, exc.expected, exc.got
            ) from None

    def _decode_vl(self, out: np.ndarray) -> None:
        h = self.header
        assert self.bstarts is not None and self.pipeline is not None
        ends = [*self.bstarts[1:].tolist(), h.cbytes]
        pos_out = 0
        for j, (start, end) in enumerate(zip(self.bstarts.tolist(), ends, strict=True)):
            where = f"VL block {j}"
            if end - start <= 4:
                raise FormatError(
                    where, "bstarts", start, "a span of more than 4 bytes", end - start
                )
            size = _I32.unpack_from(self.buf, start)[0]
            if size <= 0 or pos_out + size > h.nbytes:
                raise FormatError(
                    where, "nbytes", start, f"1..{h.nbytes - pos_out} (rest of nbytes)", size
                )
            dst = out[pos_out : pos_out + size]
            payload = self.buf[start + 4 : end]
            filtered = bool(self.pipeline.backward_steps)
            target, aux = _scratch_arrays(size) if filtered else (dst, None)
            if len(payload) == size:
                target[:] = np.frombuffer(payload, np.uint8)
            else:
                self._decode_stream(where, start + 4, payload, target)
            if filtered:
                self.pipeline.backward(target, dst, None, aux)  # each VL block is its own ref
            pos_out += size
        if pos_out != h.nbytes:
            raise FormatError(
                "VL-block chunk", "nbytes", 4, f"the sum of block sizes {pos_out}", h.nbytes
            )

    # -- partial decoding ---------------------------------------------------------------
    def _fill_special(self, out: np.ndarray, start: int, stop: int, fresh: bool) -> None:
        h = self.header
        n = stop - start
        if h.special in (SpecialValue.ZERO, SpecialValue.UNINIT):
            if not fresh:
                out[:n] = 0
        elif h.special == SpecialValue.NAN:
            pat = _NAN_PATTERNS.get(h.typesize)
            if pat is None:
                raise FormatError(
                    "chunk header", "typesize", 3, "4 or 8 for a NaN chunk", h.typesize
                )
            _fill_pattern(out[:n], pat, start)
        else:
            _fill_pattern(out[:n], self.arr[32 : h.cbytes], start)

    def decode_range(self, start: int, stop: int, nthreads: int = 1) -> np.ndarray:
        """Bytes ``[start, stop)`` of the decoded chunk, decoding only the blocks they touch."""
        h = self.header
        start, stop = max(0, start), min(stop, h.nbytes)
        if stop <= start:
            return np.empty(0, np.uint8)
        if h.special:
            out = (np.zeros if h.special != SpecialValue.VALUE else np.empty)(
                stop - start, np.uint8
            )
            self._fill_special(out, start, stop, True)
            return out
        if h.memcpyed:
            return self.arr[h.header_len + start : h.header_len + stop].copy()
        if h.vl_blocks:
            return self.decode(nthreads=nthreads)[start:stop].copy()
        bs = h.effective_blocksize
        first, last = start // bs, (stop - 1) // bs
        out = np.empty(min((last + 1) * bs, h.nbytes) - first * bs, np.uint8)
        ref = None
        assert self.pipeline is not None
        if self.pipeline.has_delta and first > 0:
            # Unlike C's getitem (spec §14), decode block 0 for the DELTA reference.
            ref = np.empty(h.block_size(0), np.uint8)
            self.decode_block(0, ref, None)
        if self.pipeline.has_delta and first == 0:
            self.decode_block(0, out[: h.block_size(0)], None)
            ref = out[:bs]
            blocks = range(1, last + 1)
        else:
            blocks = range(first, last + 1)

        def work(j: int) -> None:
            o = (j - first) * bs
            self.decode_block(j, out[o : o + h.block_size(j)], ref)

        run_parallel(work, blocks, nthreads)
        return out[start - first * bs : stop - first * bs]


def _gather_i32(arr: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The little-endian int32 at each offset of ``pos`` in the byte array ``arr``."""
    quads = arr[pos[:, None] + _QUAD]  # a new C-contiguous (n, 4) uint8 array
    return quads.view("<i4").reshape(-1)


def _fill_pattern(out: np.ndarray, pattern: np.ndarray, start: int) -> None:
    """Fill ``out`` with ``pattern`` repeated, as if it had begun ``start`` bytes earlier."""
    k = len(pattern)
    if k == 0 or len(out) == 0:
        return
    phase = start % k
    rolled = np.concatenate([pattern[phase:], pattern[:phase]]) if phase else pattern
    whole = len(out) // k
    out[: whole * k].reshape(whole, k)[:] = rolled
    out[whole * k :] = rolled[: len(out) - whole * k]


def decode_chunk(
    buf: memoryview | bytes, out: np.ndarray | None = None, nthreads: int = 1
) -> np.ndarray:
    """Decode a whole chunk (see :class:`ChunkReader`)."""
    return ChunkReader.open(buf).decode(out, nthreads)


def decode_range(buf: memoryview | bytes, start: int, stop: int, nthreads: int = 1) -> np.ndarray:
    """Decode bytes ``[start, stop)`` of a chunk."""
    return ChunkReader.open(buf).decode_range(start, stop, nthreads)
