"""Whole blocks of a byte-shuffled (or unfiltered) chunk decoded straight into their place.

A split block of a SHUFFLE chunk holds one stream per byte plane (spec §6.3, §8.1): plane
``k`` is byte ``k`` of every item. Two ways avoid a separate unshuffle pass:

* :func:`decode_block_fused`, one block: each stream is decoded and written to every
  ``k``-th byte of the block's output with one strided copy (no block-sized scratch buffer,
  no copy back); an unsplit shuffled block is unshuffled from the codec's output in one call.
  It serves blocks read alone and items picked out of a block.
* :func:`decode_planes`, a run of whole blocks (up to :data:`BATCH_BYTES`): their streams are
  decoded into one per-thread buffer, then byte ``k`` of all their items is written with one
  strided copy. Those copies are long calls, so runs decoded on two threads gain, where the
  per-block copies (16-32 KiB each, each releasing and retaking the GIL) made two threads
  slower than one.

Blocks neither serves (other pipelines, DELTA, a block that is not whole items, stream counts
other than 1 or the item size) are left to the general path of
:class:`~pyblosc2.chunk.decode.ChunkReader`.
"""

from __future__ import annotations

import math

import numpy as np

from .._threads import scratch
from ..kernels import active
from .layout import CSIZE_LEN
from .streams import ChunkStreams, walk_streams

__all__ = [
    "BATCH_BYTES",
    "decode_block_fused",
    "decode_planes",
    "pick_split_planes",
    "plane_batches",
    "strided_pick",
]

#: whole shuffled blocks decoded together before their byte planes are scattered: enough
#: that each plane's copy is a long call (two threads then gain: 1.1-1.3x on ``decompress2``
#: of 4 MiB lz4/zstd chunks on the 2-vCPU machine, where per-block copies of 16-32 KiB made
#: them lose), little enough to stay in the cache
BATCH_BYTES = 1 << 20


def plane_batches(first: int, stop: int, bsize: int, nthreads: int) -> list[range]:
    """Blocks ``first..stop-1`` (of ``bsize`` bytes) in runs for :func:`decode_planes`: at
    most :data:`BATCH_BYTES` each (at least one block), and at least ``nthreads`` runs when
    there are that many blocks.

    >>> plane_batches(0, 10, 1 << 18, 2)
    [range(0, 4), range(4, 8), range(8, 10)]
    >>> plane_batches(3, 7, 1 << 16, 2)
    [range(3, 5), range(5, 7)]
    """
    per = max(1, min(BATCH_BYTES // bsize, -(-(stop - first) // max(1, nthreads))))
    return [range(j, min(stop, j + per)) for j in range(first, stop, per)]


def decode_planes(r: ChunkStreams, blocks: range, out: np.ndarray, g: int) -> None:
    """Decode the whole blocks ``blocks`` of ``r``, byte-shuffled with group ``g`` (which
    divides the block size), into ``out`` (their bytes, in order): every block's streams into
    a per-thread buffer, then byte ``k`` of all their items written with one strided copy.

    >>> from pyblosc2.chunk.decode import ChunkReader
    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> a = np.arange(4096, dtype=np.int32)
    >>> r = ChunkReader.open(encode_chunk(a.data.cast("B"), EncodeSpec(4, 5, 1, blocksize=4096)))
    >>> out = np.empty(2 * 4096, np.uint8); decode_planes(r, range(1, 3), out, 4)
    >>> out.view(np.int32)[[0, -1]].tolist()
    [1024, 3071]
    """
    bs = r.header.effective_blocksize
    n = len(blocks)
    buf = scratch(n * bs, "plane-run").reshape(n, bs)
    decode = None if r.codec is None else r.codec.stream_decoder(r.dict_)  # bound once per run
    for i, j in enumerate(blocks):
        r.decode_streams(j, buf[i], decode)
    active().unshuffle_blocks(buf, out.reshape(n, bs), g)


def decode_block_fused(
    r: ChunkStreams,
    j: int,
    dst: np.ndarray,
    g: int,
    shape: tuple[int, ...] | None = None,
    index: tuple[slice, ...] | None = None,
) -> bool:
    """Decode regular block ``j`` of ``r`` into ``dst``, the pipeline being at most one
    SHUFFLE of group ``g`` (0 or 1: unfiltered). Returns False, having written nothing, when
    the block is not one this path serves.

    ``dst`` is the block's bytes (a 1-d ``uint8`` array of its size), or a view of its items
    anywhere, such as the part of an array's result the block covers (``uint8``, shape
    ``item shape + (item size,)``; for a shuffled block the item size is ``g``). With
    ``index``, only the items ``index`` selects of the block viewed as ``shape`` items are
    written, and ``dst`` has the selection's shape (plus the item size).

    >>> from pyblosc2.chunk.decode import ChunkReader
    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> a = np.arange(1024, dtype=np.int32)  # one block
    >>> r = ChunkReader.open(encode_chunk(a.data.cast("B"), EncodeSpec(4, 5, 1)))
    >>> r.header.nblocks, r.header.nstreams(0)
    (1, 4)
    >>> out = np.empty((1024, 4), np.int32)  # the block's 1024 items, in a column
    >>> decode_block_fused(r, 0, out[:, 2:3].view(np.uint8), 4), out[:3, 2].tolist()
    (True, [0, 1, 2])
    >>> few = np.empty((3, 1), np.int32)  # items 5, 7, 9 of the block seen as 1024 items
    >>> decode_block_fused(r, 0, few.view(np.uint8), 4, (1024,), (slice(5, 10, 2),))
    True
    >>> few.ravel().tolist()
    [5, 7, 9]
    """
    codec = r.codec
    bsize = r.header.block_size(j)
    nst = r.header.nstreams(j)
    ne = bsize // nst
    shuffled = g > 1
    flat = dst.ndim == 1 and index is None
    if (
        codec is None  # no codec is a stream error: the general path names it
        or ne == 0
        or (dst.size != bsize if index is None else math.prod(shape or ()) * dst.shape[-1] != bsize)
        or (shuffled and (bsize % g or nst not in (1, g) or (not flat and dst.shape[-1] != g)))
        or (not shuffled and not flat and nst != 1)
    ):
        return False
    if flat:
        items = dst.reshape(-1, g) if shuffled else dst
        view: tuple[int, ...] = items.shape[:-1] if shuffled else dst.shape
        pick: tuple[slice, ...] = ()
    else:
        items = dst
        view = shape or dst.shape[:-1]
        if not shuffled:
            view = (*view, dst.shape[-1])
        pick = index or ()
    decode = codec.stream_decoder(r.dict_)  # bound once for the block's streams
    buf, u8 = r.buf, np.uint8
    plane = scratch(ne, "plane")
    for s, (csize, start, pos) in enumerate(zip(*r.block_streams(j), strict=True)):
        if shuffled:
            target = items[..., s] if nst > 1 else dst
        else:
            target = dst[s * ne : (s + 1) * ne] if flat else dst
        if csize <= 0:  # a zero run (0) or a run of one byte value (-value): §6.3
            target[...] = (-csize) & 0xFF
            continue
        if csize == ne:  # stored raw
            src = r.arr[start:pos]
        elif not shuffled and flat:  # straight into its place
            mv = target.data
            got = decode(buf[start:pos], mv)
            if got is None:  # refused: decoded again by the path that names it
                r.decode_stream((j, s), start - CSIZE_LEN, buf[start:pos], target)
            elif got is not mv:
                target[...] = np.frombuffer(got, u8)  # the codec's own new buffer
            continue
        else:
            got = decode(buf[start:pos], plane.data)
            if got is None:  # refused: decoded again by the path that names it
                src = r.decode_stream((j, s), start - CSIZE_LEN, buf[start:pos], plane, True)
            else:
                src = np.frombuffer(got, u8)
        if shuffled and nst == 1:
            # planes (g, ...) to items (..., g): a ufunc iterates in its first operand's
            # order (long runs over each plane); a copy would iterate the g bytes innermost
            key = (slice(None), *pick)
            planes = src.reshape((g, *view))[key]
            np.positive(planes, out=np.moveaxis(items, -1, 0))
        elif flat and not shuffled:
            target[...] = src
        else:
            target[...] = src.reshape(view)[pick]
    return True


def pick_split_planes(
    r: ChunkStreams,
    picks: list[tuple[int, tuple[slice, ...], np.ndarray]],
    shape: tuple[int, ...],
    g: int,
) -> bool:
    """For each ``(j, index, dst)`` of ``picks``: the items ``index`` selects of regular block
    ``j`` of ``r`` (viewed as ``shape`` items) into ``dst`` (``uint8``, shape ``selection +
    (g,)``), the chunk being byte-shuffled by ``g`` > 1 with one stream per byte plane. The
    checks are made once for all the picks; per stream, one codec call and one strided copy
    of the selected items' byte ``s``. Returns False, having written nothing, when the chunk is
    not one this path serves (:func:`decode_block_fused` then serves each block).

    >>> from pyblosc2.chunk.decode import ChunkReader
    >>> from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
    >>> a = np.arange(2048, dtype=np.int32)  # two blocks of 32 x 32 items
    >>> r = ChunkReader.open(encode_chunk(a.data.cast("B"), EncodeSpec(4, 5, 1, blocksize=4096)))
    >>> out = np.zeros((2, 3), np.int32)
    >>> picks = [(j, (slice(1, 2), slice(0, 30, 12)), out[j : j + 1].view(np.uint8)
    ...     .reshape(1, 3, 4)) for j in (0, 1)]
    >>> pick_split_planes(r, picks, (32, 32), 4), out.tolist()
    (True, [[32, 44, 56], [1056, 1068, 1080]])
    """
    h = r.header
    bsize = h.effective_blocksize
    nst = h.nstreams(0)
    last = h.nblocks - 1
    codec = r.codec
    if (
        codec is None
        or g <= 1
        or nst != g
        or bsize != math.prod(shape) * g
        or (h.leftover and last in [j for j, _, _ in picks])
        or [dst for _, _, dst in picks if dst.shape[-1] != g]
    ):
        return False
    ne = bsize // g
    plane = scratch(ne, "plane").data
    decode = codec.stream_decoder(r.dict_)  # bound once for all the picks (one thread)
    buf, table, cbytes = r.buf, r.streams, h.cbytes
    spans = r.layout.spans
    nd = picks[0][2].ndim if picks else 1
    last_first = (nd - 1, *range(nd - 1))  # the item's bytes first: plane s is [s]
    u8, ndarray = np.uint8, np.ndarray
    views: dict[tuple[int, ...], tuple[tuple[int, ...], int, tuple[int, ...]]] = {}
    for j, index, dst in picks:
        row = table.get(j)
        if row is None:  # walked and checked here (a bad stream: named by block_streams)
            row = walk_streams(buf, spans[j][0] if spans else int(r.bstarts[j]), g, cbytes)
            if len(row[0]) < g:
                row = r.block_streams(j)
        sizes, starts, ends = row
        key = tuple(map(id, index))  # (blocks of one chunk share their axes' slices)
        sel = views.get(key)
        if sel is None:
            sel = views[key] = strided_pick(shape, index)
        vshape, off, strides = sel
        planes = dst.transpose(last_first)
        for s in range(g):
            csize, a, b = sizes[s], starts[s], ends[s]
            if csize <= 0:  # a zero run (0) or a run of one byte value (-value)
                planes[s] = (-csize) & 0xFF
                continue
            src: memoryview | bytes | bytearray | np.ndarray | None
            if csize == ne:  # stored raw
                src = buf[a:b]
            else:
                src = decode(buf[a:b], plane)
                if src is None:  # refused: decoded again by the path that names it
                    src = r.decode_stream((j, s), a - CSIZE_LEN, buf[a:b], np.frombuffer(plane, u8))
            # the selected bytes of the plane, viewed in place: one call, then one copy
            planes[s] = ndarray(vshape, u8, src, off, strides)
    return True


def strided_pick(
    shape: tuple[int, ...], index: tuple[slice, ...]
) -> tuple[tuple[int, ...], int, tuple[int, ...]]:
    """``(shape, offset, strides)`` of the bytes ``index`` (slices with non-negative bounds,
    steps >= 1) selects of a C-ordered array of ``shape`` bytes: the selection as a view made
    by one ``np.ndarray`` call on any buffer of that layout.

    >>> a = np.arange(24, dtype=np.uint8)
    >>> vshape, off, strides = strided_pick((2, 3, 4), (slice(1, 2), slice(0, 3, 2), slice(1, 4)))
    >>> np.ndarray(vshape, np.uint8, a, off, strides).tolist()
    [[[13, 14, 15], [21, 22, 23]]]
    """
    vshape, strides, off, stride = [], [], 0, 1
    for n, ix in zip(reversed(shape), reversed(index), strict=True):
        start, stop, step = ix.indices(n)
        vshape.append(len(range(start, stop, step)))
        strides.append(step * stride)
        off += start * stride
        stride *= n
    return tuple(reversed(vshape)), off, tuple(reversed(strides))
