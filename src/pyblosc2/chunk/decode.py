"""Decoding a chunk: special values (spec §4), memcpyed (§5), regular chunks (§6.3-6.4),
VL-block chunks (§12) and partial decoding (§14).

:class:`ChunkReader` pairs a validated :class:`~.layout.ChunkLayout` with the chunk's bytes,
its codec and its filter pipeline (the parts and stream reading of
:class:`~.streams.ChunkStreams`). Every stream header of every block is checked (§15) before
anything is allocated or decoded, so no field can drive an allocation beyond ``nbytes`` or a
read out of bounds. Blocks are decoded on a thread pool straight into the caller's output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._bytes import fill_bytes
from .._threads import run_parallel, scratch, thread_parts, threads_for
from ..codecs.registry import codec_for_format
from ..constants import Filter, SpecialValue
from ..context import ChunkContext
from ..errors import FormatError, ParamError, TruncatedError
from ..filters.registry import lookup_filter
from ..filters.shuffle import BitShuffle, Shuffle, unshuffle
from ..kernels import active
from .fused import decode_block_fused, decode_planes, pick_split_planes, plane_batches
from .header import OFF_CBYTES, OFF_FILTERS, ChunkHeader
from .layout import CSIZE_LEN, ChunkKind, ChunkLayout
from .pipeline import Pipeline
from .special import fill_special
from .streams import ChunkStreams
from .vlblocks import check_vl_sizes, decode_vl

__all__ = ["ChunkReader", "decode_chunk", "decode_range", "fill_bytes"]  # fill_bytes: re-exported

#: up to this many items, a range of one block is unshuffled by one transposed copy
_GATHER_MAX = 64
#: items are picked out of a shuffled block's byte planes (a strided copy per plane) while
#: at most 1/_PICK_RATIO of the block's bytes are picked, else the block is unshuffled whole
_PICK_RATIO = 8
#: whole blocks of a BITSHUFFLE chunk decoded together before one kernel call bit-unshuffles
#: them all (no Python per block); small enough that the decoded run and its planes stay in
#: the 512 KiB L2 of the 2-vCPU machine (4 MiB lz4+bitshuffle chunks of 128 KiB blocks, numba:
#: the bits-to-planes step took 23 us per block in 256 KiB runs, 61-72 in runs of one block,
#: 23-46 in 512 KiB runs)
BIT_BATCH_BYTES = 1 << 18


@dataclass(frozen=True, slots=True)
class ChunkReader(ChunkStreams):
    """A validated chunk, ready to decode whole or by ranges.

    >>> r = ChunkReader.open(bytes.fromhex("05010504400000004000000020000000" + "00" * 15 + "10"))
    >>> r.header.special, bytes(r.decode()) == bytes(64)
    (1, True)
    """

    @classmethod
    def open(
        cls, buf: bytes | bytearray | memoryview, ctx: ChunkContext | None = None
    ) -> ChunkReader:
        """Parse and check the whole chunk at the start of ``buf``: header, layout and every
        stream header. ``ctx``: the super-chunk the chunk belongs to (its plug-ins see it)."""
        h = ChunkHeader.from_bytes(buf)
        if h.cbytes > len(buf):
            raise TruncatedError(
                "chunk header", "cbytes", OFF_CBYTES, f"at most {len(buf)} (buffer size)", h.cbytes
            )
        view = memoryview(buf)[: h.cbytes]
        layout = ChunkLayout.parse(h, lambda pos, n: view[pos : pos + n])
        return cls.from_layout(layout, view, ctx=ctx)

    @classmethod
    def from_layout(
        cls,
        layout: ChunkLayout,
        view: memoryview,
        blocks: Sequence[int] | None = None,
        ctx: ChunkContext | None = None,
    ) -> ChunkReader:
        """A reader of ``view`` (``cbytes`` bytes) laid out as ``layout``. ``blocks`` names
        the only blocks whose bytes ``view`` holds (a ranged read): only their streams are
        checked, and only ranges within them may be decoded. The codec and filters are bound
        to the super-chunk ``ctx`` (or to the chunk alone)."""
        h = layout.header
        arr = np.frombuffer(view, np.uint8)
        if layout.kind not in (ChunkKind.BLOCKS, ChunkKind.VL_BLOCKS):
            return cls(layout, view, arr, Pipeline((), h.typesize, h.version))
        steps = []
        bind = ctx if ctx is not None else ChunkContext(h.typesize)
        for i, (fid, meta) in enumerate(h.pipeline):
            if fid == Filter.NOFILTER:
                continue
            flt = lookup_filter(fid)
            if flt is None:
                raise FormatError(
                    "chunk header", f"filters[{i}]", OFF_FILTERS + i, "a known filter id", fid
                )
            steps.append((flt.bound(bind), meta))
        span = layout.dict_span
        codec = codec_for_format(h.compformat, h.udcompcode)
        r = cls(
            layout,
            view,
            arr,
            Pipeline(tuple(steps), h.typesize, h.version),
            None if codec is None else codec.bound(h.compcode_meta, bind),
            None if span is None else bytes(view[span[0] : span[1]]),
            None if blocks is None else frozenset(blocks),
        )
        # Every stream header is checked before anything is allocated or decoded (STYLE
        # habit 5): a few numpy passes over the blocks, one per stream index.
        if layout.kind == ChunkKind.VL_BLOCKS:
            check_vl_sizes(r)
        else:
            r._check_streams(range(h.nblocks) if blocks is None else blocks)
        return r

    def with_bytes(
        self, view: memoryview, blocks: Sequence[int], check: bool = True
    ) -> ChunkReader:
        """This reader's layout, pipeline, codec and dictionary over other bytes ``view``
        holding (only) ``blocks``, whose streams are checked (unless ``check`` is false: the
        caller only uses :meth:`pick_items`, which checks each stream header as it decodes
        it, and discards its output on error): a reader cached per stored chunk serves each
        ranged read without parsing anything again."""
        r = ChunkReader(
            self.layout,
            view,
            np.frombuffer(view, np.uint8),
            self.pipeline,
            self.codec,
            self.dict_,
            frozenset(blocks),
        )
        if check:
            r._check_streams(blocks)
        return r

    # -- decoding -----------------------------------------------------------------------
    def decode(self, out: np.ndarray | None = None, nthreads: int = 1) -> np.ndarray:
        """Decode into ``out`` (a ``uint8`` array of at least ``nbytes``) or a new array."""
        h = self.header
        kind = self.layout.kind
        if out is None:
            fresh = h.special in (SpecialValue.ZERO, SpecialValue.UNINIT)
            out = (np.zeros if fresh else np.empty)(h.nbytes, np.uint8)
        else:
            fresh = False
            out = out[: h.nbytes]
        if kind == ChunkKind.SPECIAL:
            fill_special(out, h, self._special_value(), 0, fresh)
        elif kind == ChunkKind.MEMCPYED:
            out[:] = self.arr[h.header_len : h.cbytes]
        elif kind == ChunkKind.VL_BLOCKS:
            decode_vl(self, out)
        elif kind == ChunkKind.BLOCKS:
            self._decode_blocks(out, 0, h.nblocks - 1, nthreads)
        return out

    def decode_bytes(self, nthreads: int = 1) -> bytes:
        """The decoded chunk as a new ``bytes`` object, decoded straight into it."""
        return fill_bytes(self.header.nbytes, lambda out: self.decode(out, nthreads))

    def decode_range(
        self, start: int, stop: int, nthreads: int = 1, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Bytes ``[start, stop)`` of the decoded chunk (clipped to it), decoding only the
        blocks they touch (and block 0 for DELTA, spec §14); written into ``out`` (a
        ``uint8`` array of at least that size, returned trimmed) when given.

        A range inside one block of a shuffle-only (or unfiltered) chunk unshuffles just
        the items it covers, not the whole block."""
        h = self.header
        start, stop = max(0, start), min(stop, h.nbytes)
        if stop <= start:
            return np.empty(0, np.uint8) if out is None else out[:0]
        kind = self.layout.kind
        if kind == ChunkKind.SPECIAL:
            dst = out[: stop - start] if out is not None else None
            if dst is None:
                dst = (np.zeros if h.special != SpecialValue.VALUE else np.empty)(
                    stop - start, np.uint8
                )
            fill_special(dst, h, self._special_value(), start, out is None)
            return dst
        out = np.empty(stop - start, np.uint8) if out is None else out[: stop - start]
        if kind == ChunkKind.MEMCPYED:
            out[:] = self.arr[h.header_len + start : h.header_len + stop]
        elif kind == ChunkKind.VL_BLOCKS:
            out[:] = self.decode(nthreads=nthreads)[start:stop]
        else:
            blocks = self.layout.blocks_for(start, stop)
            bs = h.effective_blocksize
            first, last = blocks.start, blocks.stop - 1
            g = self.shuffle_group() if first == last else None
            if g is not None:
                self._decode_block_part(first, start - first * bs, stop - first * bs, g, out)
            else:
                tmp = np.empty(min((last + 1) * bs, h.nbytes) - first * bs, np.uint8)
                self._decode_blocks(tmp, first, last, nthreads)
                out[:] = tmp[start - first * bs : stop - first * bs]
        return out

    def shuffle_group(self) -> int | None:
        """The byte-shuffle group size when undoing the pipeline is at most one SHUFFLE (0:
        no filter): single items can be picked out of a decoded block, and blocks decoded by
        the fused path; else None."""
        steps = self.pipeline.backward_steps
        if not steps:
            return 0
        if len(steps) == 1 and type(steps[0][0]) is Shuffle:
            return steps[0][1] or self.header.typesize
        return None

    def block_image(self, j: int) -> np.ndarray:
        """Regular block ``j`` decoded whole into a new array (a block kept to serve later
        reads of its bytes by plain slices).

        >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
        >>> a = np.arange(4096, dtype=np.int32).data.cast("B")
        >>> r = ChunkReader.open(encode_chunk(a, EncodeSpec(4, 5, 1, blocksize=4096)))
        >>> r.block_image(2)[8:16].view(np.int32).tolist()
        [2050, 2051]
        """
        if self.layout.kind != ChunkKind.BLOCKS:
            raise ParamError("only a chunk of regular blocks has block images")
        image = np.empty(self.header.block_size(j), np.uint8)
        self._decode_blocks(image, j, j, 1)
        return image

    def _decode_block_part(self, j: int, a: int, b: int, g: int, out: np.ndarray) -> None:
        """Bytes ``[a, b)`` of regular block ``j`` into ``out``: the block's streams are
        decoded whole, but only the items covering ``[a, b)`` are unshuffled (group size
        ``g``, 0 for an unfiltered block)."""
        if self.present is not None and j not in self.present:
            raise ParamError(f"blocks [{j}] were not read into this reader")
        bsize = self.header.block_size(j)
        q = bsize // g if g and g > 1 else 0
        n = q * g if q else 0
        # one stream per plane (and no tail): only the parts of the planes covering [a, b)
        # are copied out of each decoded stream (no block-sized copy)
        split = n == bsize and self.codec is not None and self.header.nstreams(j) == g
        block = self.arr[:0]
        if not split:
            block = scratch(bsize, "block")
            self.decode_streams(j, block)
        if a < n:  # the shuffled part: byte k of item i is plane k, position i
            i0, i1 = a // g, min(q, -(-b // g))
            m = min(b, n)
            part = scratch((i1 - i0) * g, "part").reshape(g, i1 - i0)
            if split:
                self._plane_parts(j, q, i0, i1, part)
                planes = part
            else:  # the planes' parts gathered (g short copies), then the block kernel
                planes = block[:n].reshape(g, q)[:, i0:i1]
            if i1 - i0 <= _GATHER_MAX:  # a few items: one transposed copy
                items = scratch((i1 - i0) * g, "items")
                items.reshape(i1 - i0, g)[...] = planes.T
                out[: m - a] = items[a - i0 * g : m - i0 * g]
                return self._copy_tail(block, a, b, n, out)
            if not split:
                part[...] = planes
            if a == i0 * g and m == i1 * g:
                unshuffle(part.reshape(-1), out[: m - a], g)
            else:
                items = scratch((i1 - i0) * g, "items")
                unshuffle(part.reshape(-1), items, g)
                out[: m - a] = items[a - i0 * g : m - i0 * g]
        self._copy_tail(block, a, b, n, out)

    def can_pick_items(self, itemsize: int) -> bool:
        """Whether :meth:`pick_items` serves this chunk for items of ``itemsize`` bytes:
        regular blocks, a pipeline of at most one SHUFFLE by that item size (or by 1), and
        blocks holding whole items."""
        if self.layout.kind != ChunkKind.BLOCKS:
            return False
        g = self.shuffle_group()
        h = self.header
        return (
            g in (0, 1, itemsize)
            and h.effective_blocksize % itemsize == 0
            and (h.leftover % itemsize == 0)
        )

    def pick_blocks(
        self, picks: list[tuple[int, tuple[slice, ...], np.ndarray]], shape: tuple[int, ...]
    ) -> bool:
        """:meth:`pick_items` of every ``(j, index, dst)`` of ``picks`` with the checks made
        once, when the chunk is byte-shuffled by the item size with one stream per byte
        plane (:func:`~.fused.pick_split_planes`); False, having written nothing, for other
        chunks (then call :meth:`pick_items` per block)."""
        if not picks:
            return True
        if self.present is not None and not self.present.issuperset([j for j, _, _ in picks]):
            raise ParamError("blocks were picked that were not read into this reader")
        g = self.shuffle_group()
        t = picks[0][2].shape[-1]
        return (
            g is not None
            and g == t
            and self.can_pick_items(t)
            and pick_split_planes(self, picks, shape, g)
        )

    def pick_items(
        self, j: int, shape: tuple[int, ...], index: tuple[slice, ...], dst: np.ndarray
    ) -> None:
        """The items ``index`` selects of regular block ``j``, viewed as an array of ``shape``
        items, into ``dst`` (a ``uint8`` array of shape ``selection + (itemsize,)``; the item
        size is ``dst.shape[-1]``, :meth:`can_pick_items` must hold for it).

        The block's streams are decoded once; a shuffled block is then unshuffled only for
        the selected items (one strided copy per byte plane) when they are few, else whole.

        >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
        >>> a = np.arange(64, dtype=np.int32).reshape(8, 8)
        >>> r = ChunkReader.open(encode_chunk(a.data.cast("B"), EncodeSpec(4, 5, 1)))
        >>> out = np.zeros((4, 1), np.int32)
        >>> r.pick_items(0, (8, 8), (slice(0, 8, 2), slice(3, 4)), out.view(np.uint8)
        ...     .reshape(4, 1, 4))
        >>> out.ravel().tolist()
        [3, 19, 35, 51]
        """
        if self.present is not None and j not in self.present:
            raise ParamError(f"blocks [{j}] were not read into this reader")
        t = dst.shape[-1]
        bsize = self.header.block_size(j)
        if bsize != math.prod(shape) * t:
            raise ParamError(f"block {j} holds {bsize} bytes, not {shape} items of {t} bytes")
        g = self.shuffle_group()
        if g not in (0, 1, t):
            raise ParamError(f"items of {t} bytes cannot be picked out of this pipeline")
        if g is not None and decode_block_fused(self, j, dst, g, shape, index):
            return
        block = scratch(bsize, "block")
        self.decode_streams(j, block)
        if g is None or g <= 1:
            dst[...] = block.reshape((*shape, t))[index]
        elif dst.size * _PICK_RATIO <= bsize:  # few items: byte k of item i is plane k
            key = (slice(None), *index)
            planes = block.reshape((t, *shape))[key]
            for k in range(t):
                dst[..., k] = planes[k]
        else:  # unshuffle the items from the first to the last selected one
            lo = hi = 0
            stride = 1
            for ix, n in zip(reversed(index), reversed(shape), strict=True):
                lo += ix.start * stride
                hi += (ix.start + (len(range(ix.start, ix.stop, ix.step)) - 1) * ix.step) * stride
                stride *= n
            hi += 1
            items = scratch(bsize, "block-aux")
            if hi - lo == stride:
                unshuffle(block, items, g)
            else:
                part = scratch((hi - lo) * t, "part").reshape(t, hi - lo)
                part[...] = block.reshape(t, stride)[:, lo:hi]
                unshuffle(part.reshape(-1), items[lo * t : hi * t], g)
            dst[...] = items.reshape((*shape, t))[index]

    def _plane_parts(self, j: int, q: int, i0: int, i1: int, part: np.ndarray) -> None:
        """Positions ``[i0, i1)`` of each of the ``g`` planes of regular block ``j`` (one
        stream of ``q`` bytes per plane) into row ``s`` of ``part`` (``g`` rows): the codec
        bound once for the block, each stream decoded by one call and its part copied out of
        the codec's output (no stream view object, no copy of the whole plane)."""
        plane = scratch(q, "plane")
        codec = self.codec
        decode = None if codec is None else codec.stream_decoder(self.dict_)
        buf, arr, u8, w = self.buf, self.arr, np.uint8, i1 - i0
        sizes, starts, ends = self.block_streams(j)
        for s, csize in enumerate(sizes):
            a, b = starts[s], ends[s]
            if csize <= 0:  # a zero run (0) or a run of one byte value (-value)
                part[s] = (-csize) & 0xFF
            elif csize == q:  # stored raw
                part[s] = arr[a + i0 : a + i1]
            else:
                got = None if decode is None else decode(buf[a:b], plane.data)
                if got is None:  # no codec, or refused: decoded again by the path naming it
                    part[s] = self.decode_stream((j, s), a - CSIZE_LEN, buf[a:b], plane)[i0:i1]
                else:
                    part[s] = np.frombuffer(got, u8, w, i0)

    @staticmethod
    def _copy_tail(block: np.ndarray, a: int, b: int, n: int, out: np.ndarray) -> None:
        """Bytes after the last whole item (or of an unshuffled block), as stored."""
        if b > n:
            out[max(a, n) - a : b - a] = block[max(a, n) : b]

    def _special_value(self) -> np.ndarray:
        return self.arr[self.header.header_len :]

    def _decode_blocks(self, out: np.ndarray, first: int, last: int, nthreads: int) -> None:
        """Decode blocks ``first..last`` into ``out``, which starts at block ``first``."""
        h = self.header
        bs = h.effective_blocksize
        todo = range(first, last + 1)
        if self.present is not None:
            missing = {*todo, *((0,) if self.pipeline.has_delta else ())} - self.present
            if missing:
                raise ParamError(f"blocks {sorted(missing)} were not read into this reader")
        ref = None
        if self.pipeline.has_delta:
            # DELTA references block 0 of the decoded output (§9.3): decode it first (unlike
            # C's getitem, which gets blocks after the first wrong, §14).
            if first == 0:
                ref = out[: h.block_size(0)]
                todo = range(1, last + 1)
            else:
                ref = np.empty(h.block_size(0), np.uint8)
            self.decode_block(0, ref, None)

        g = self.shuffle_group()  # byte-shuffled or unfiltered blocks take the fused path

        def work(j: int) -> None:
            o = (j - first) * bs
            dst = out[o : o + h.block_size(j)]
            if g is None or ref is not None or not decode_block_fused(self, j, dst, g):
                self.decode_block(j, dst, ref)

        if g is not None and ref is None and self._in_plane_runs(g):
            # whole shuffled blocks in runs, each plane of a run scattered by one long copy
            stop = last + 1 if h.block_size(last) == bs else last
            runs = plane_batches(todo.start, stop, bs, nthreads)

            def run(blocks: range) -> None:
                o = (blocks.start - first) * bs
                decode_planes(self, blocks, out[o : o + len(blocks) * bs], g)

            run_parallel(run, runs, threads_for(nthreads, len(runs[0]) * bs // g) if runs else 1)
            todo = range(stop, last + 1)  # the leftover block, if any
            nthreads = 1
        elif g is None and ref is None and self._bitshuffle_only():
            stop = last + 1 if h.block_size(last) == bs else last
            per = max(1, BIT_BATCH_BYTES // bs)
            blosc1 = h.version == 2
            ks = active()
            kernel = ks.bitunshuffle_blocks
            # a fast set's kernel is one long nogil call per run; numpy's makes a dozen
            # passes of ~bs / 8 bytes per block
            nt = threads_for(nthreads, bs if ks.fast_unshuffle else bs // 8)

            def bits(part: range) -> None:
                for j0 in range(part.start, part.stop, per):
                    blocks = range(j0, min(part.stop, j0 + per))
                    n = len(blocks)
                    buf = scratch(n * bs, "bit-run").reshape(n, bs)
                    for i, j in enumerate(blocks):
                        self.decode_streams(j, buf[i])
                    o = (j0 - first) * bs
                    kernel(buf, out[o : o + n * bs].reshape(n, bs), h.typesize, blosc1)

            run_parallel(bits, thread_parts(todo.start, stop, nt), nt)
            todo = range(stop, last + 1)  # the leftover block, if any
            nthreads = 1
        # the general path's filters make a dozen numpy passes per block: calls of ~bs / 8
        call = bs // h.nstreams(first) if g is not None and ref is None else bs // 8
        run_parallel(work, todo, threads_for(nthreads, call))

    def _bitshuffle_only(self) -> bool:
        """Whether undoing the pipeline is one BITSHUFFLE (whole blocks are then decoded in
        runs and bit-unshuffled by one kernel call per run)."""
        steps = self.pipeline.backward_steps
        return len(steps) == 1 and type(steps[0][0]) is BitShuffle and self.codec is not None

    def _in_plane_runs(self, g: int) -> bool:
        """Whether whole blocks shuffled with group ``g`` are decoded in runs
        (:func:`~pyblosc2.chunk.fused.decode_planes`)."""
        return g > 1 and self.header.effective_blocksize % g == 0 and self.codec is not None


def decode_chunk(
    buf: memoryview | bytes, out: np.ndarray | None = None, nthreads: int = 1
) -> np.ndarray:
    """Decode a whole chunk (see :class:`ChunkReader`)."""
    return ChunkReader.open(buf).decode(out, nthreads)


def decode_range(buf: memoryview | bytes, start: int, stop: int, nthreads: int = 1) -> np.ndarray:
    """Decode bytes ``[start, stop)`` of a chunk."""
    return ChunkReader.open(buf).decode_range(start, stop, nthreads)
