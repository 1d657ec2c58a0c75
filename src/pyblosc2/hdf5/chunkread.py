"""The items a chunk-local key selects out of one planned stored chunk (:mod:`.chunkplan`),
written straight into their place in the result.

Two layouts of the decoded chunk:

* flat (the Blosc filter, and Blosc2 frames without a chunk rank): the HDF5 chunk's items in C
  order, cut into Blosc blocks of bytes; a small selection decodes only the blocks holding
  its items (:func:`read_flat`);
* b2nd (Blosc2 frames with a chunk rank): blocks of the b2nd block shape in C order over the
  block grid, each block C-ordered inside (frame-format.md §8.4); a small selection reads the
  blocks it touches, picking its items out of each (:func:`read_b2nd`), a large one decodes
  the chunk and copies each block's part with one numpy copy.

``source`` holds the stored bytes: in memory, or a window of the file from which only the
needed blocks are read (one positioned read per merged span).

A chunk the dataset holds (:class:`~.chunkcache.HeldChunk`) is filled instead: the blocks a
selection needs and the chunk's items do not have yet are decoded into their place in its
items, in C order (:func:`fill_flat`, :func:`fill_b2nd`); the selection is then one numpy
index of the items. The first fill of a held chunk decodes only the blocks the selection
needs (a chunk read once pays for no more than an uncached read); a later fill, or one that
needs most of the blocks, decodes the rest of the chunk at once (a chunk read again is
likely to be read on: rows of a chunk read one after the other).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._threads import scratch
from ..backends.base import ByteStore
from ..chunk.decode import ChunkReader
from ..chunk.ranged import read_blocks_ranges, with_blocks
from .chunkcache import HeldChunk
from .chunkplan import ChunkPlan
from .selection import LocalKey, Selection

__all__ = [
    "decode_whole",
    "decodes_most",
    "fill_b2nd",
    "fill_flat",
    "read_b2nd",
    "read_flat",
    "selected_count",
]

#: a selection of at most this fraction of a chunk's items decodes only the blocks it needs
PARTIAL_FRACTION = 4


def selected_count(local: tuple[LocalKey, ...]) -> int:
    """How many items a chunk-local key selects."""
    return math.prod(
        len(range(k.start, k.stop, k.step)) if isinstance(k, slice) else len(k) for k in local
    )


def is_small(local: tuple[LocalKey, ...], chunks: tuple[int, ...]) -> bool:
    """Whether a key selects a small part of a chunk (read by blocks, not whole)."""
    return selected_count(local) * PARTIAL_FRACTION <= math.prod(chunks)


def _whole(local: tuple[LocalKey, ...], shape: tuple[int, ...]) -> bool:
    """Whether ``local`` selects every item of a chunk of ``shape``, in order."""
    return all(
        isinstance(k, slice) and k.start == 0 and k.step == 1 and k.stop == n
        for k, n in zip(local, shape, strict=True)
    )


def _fetcher(source: ByteStore, base: int) -> Callable[[int, int], bytes | memoryview]:
    def fetch(pos: int, n: int) -> bytes | memoryview:
        return source.read(base + pos, n)

    return fetch


def decode_whole(plan: ChunkPlan, source: ByteStore, out: np.ndarray) -> np.ndarray:
    """Decode the whole chunk into ``out`` (``uint8``, at least ``nbytes``)."""
    if plan.special is not None:
        return ChunkReader.open(plan.special).decode(out)
    chunk = memoryview(source.read(plan.start, plan.cbytes))
    if plan.reader is None:
        return ChunkReader.open(chunk).decode(out)
    # the layout parsed once; the streams of these bytes are checked before decoding
    return plan.reader.with_bytes(chunk, range(plan.reader.header.nblocks)).decode(out)


def read_flat(
    plan: ChunkPlan,
    source: ByteStore,
    local: tuple[LocalKey, ...],
    out: np.ndarray,
    full_shape: tuple[int, ...],
    itemsize: int,
) -> None:
    """``out[...] = chunk[local]`` for a chunk of C-ordered items (``full_shape`` of the
    dtype of ``out``; ``itemsize`` bytes per item of the key's axes)."""
    nbytes = plan.nbytes
    chunks = full_shape[: len(local)]
    if _whole(local, chunks) and out.flags.c_contiguous and out.nbytes == nbytes:
        decode_whole(plan, source, out.reshape(-1).view(np.uint8))  # straight into place
        return
    buf = scratch(nbytes, "hdf5-chunk")
    runs = _needed_runs(local, chunks, itemsize, plan) if is_small(local, chunks) else None
    if runs is None:
        decode_whole(plan, source, buf)
    elif plan.reader is not None:
        ranges = [(a, b) for a, b in runs]
        read_blocks_ranges(
            _fetcher(source, plan.start), plan.reader, ranges, [buf[a:b] for a, b in runs]
        )
    else:
        reader = ChunkReader.open(plan.special or source.read(plan.start, plan.cbytes))
        for a, b in runs:
            reader.decode_range(a, b, out=buf[a:b])
    out[...] = buf.view(out.dtype).reshape(full_shape)[local]


def _needed_runs(
    local: tuple[LocalKey, ...], chunks: tuple[int, ...], itemsize: int, plan: ChunkPlan
) -> list[tuple[int, int]] | None:
    """Byte ranges of the decoded chunk covering the selected items: one per run of items
    whose blocks follow one another, from the run's first item to its last (a range within
    one block unshuffles only the items it covers); None: decode the chunk whole (no regular
    blocks)."""
    bs = plan.reader.header.effective_blocksize if plan.reader is not None else 0
    if bs <= 0:
        return None
    strides = np.cumprod([1, *chunks[:0:-1]])[::-1]
    flat = np.zeros((), np.int64)
    for k, st in zip(local, strides, strict=True):
        idx = np.arange(k.start, k.stop, k.step) if isinstance(k, slice) else k
        flat = np.add.outer(flat, np.asarray(idx, np.int64) * int(st))
    starts = flat.ravel() * itemsize  # ascending: every key is
    if len(starts) == 0:
        return []
    gap = starts[1:] // bs > (starts[:-1] + itemsize - 1) // bs + 1
    cut = np.flatnonzero(gap) + 1
    firsts = starts[np.concatenate([[0], cut])].tolist()
    lasts = starts[np.concatenate([cut - 1, [len(starts) - 1]])].tolist()
    return [(a, b + itemsize) for a, b in zip(firsts, lasts, strict=True)]


def read_b2nd(
    plan: ChunkPlan, source: ByteStore, local: tuple[LocalKey, ...], out: np.ndarray
) -> None:
    """``out[...] = chunk[local]`` for a b2nd chunk (``plan.geometry``)."""
    geo = plan.geometry
    assert geo is not None
    sel = Selection.of_local(geo.chunks, local)
    parts = list(sel.parts(geo.blocks))
    if not parts:
        return
    small = len(parts) * 2 <= math.prod(geo.bgrid) or is_small(local, geo.chunks)
    if small and plan.blocks_addressable:
        _by_blocks(plan, source, parts, out)
        return
    buf = scratch(plan.nbytes, "hdf5-chunk")
    decode_whole(plan, source, buf)
    view = buf.view(out.dtype).reshape(geo.bgrid + geo.blocks)
    for p in parts:
        out[p.out] = view[p.index][p.local]


def _by_blocks(plan: ChunkPlan, source: ByteStore, parts: list, out: np.ndarray) -> None:
    """Each touched block read and its selected items put in place: picked out of the
    block's decoded streams where the pipeline allows (slices only), else the block decoded
    and indexed."""
    geo = plan.geometry
    reader = plan.reader
    assert geo is not None and reader is not None
    t = out.dtype.itemsize
    flat = [int(np.ravel_multi_index(p.index, geo.bgrid)) for p in parts]
    pick = reader.can_pick_items(t) and all(isinstance(k, slice) for p in parts for k in p.local)
    outb = out[..., None].view(np.uint8) if pick else out

    def use(bound: ChunkReader) -> None:
        bsize = geo.block_nbytes
        for j, p in zip(flat, parts, strict=True):
            if pick:
                bound.pick_items(j, geo.blocks, p.local, outb[p.out])
            else:
                block = bound.decode_range(
                    j * bsize, (j + 1) * bsize, out=scratch(bsize, "hdf5-block")
                )
                out[p.out] = block.view(out.dtype).reshape(geo.blocks)[p.local]

    with_blocks(_fetcher(source, plan.start), reader, sorted(set(flat)), use, check=not pick)


# -- held chunks ---------------------------------------------------------------------------------
def fill_flat(
    plan: ChunkPlan, source: ByteStore, held: HeldChunk, local: tuple[LocalKey, ...], itemsize: int
) -> None:
    """Decode into ``held`` (a chunk of C-ordered items) the Blosc blocks holding the items
    ``local`` selects that it does not have yet (``itemsize``: bytes per item of the key's
    axes)."""
    if held.complete:
        return
    raw = held.raw
    reader = plan.reader
    if reader is None:  # a special or memcpyed chunk: decoded whole
        decode_whole(plan, source, raw)
        held.mark_all()
        return
    h = reader.header
    bs = h.effective_blocksize
    held.start_flat(h.nblocks, bs)
    assert held.done is not None
    chunks = held.items.shape[: len(local)]
    need = _need_flat(plan, local, chunks, itemsize) if held.fills == 0 else None
    missing = ~held.done if need is None else need & ~held.done
    count = int(np.count_nonzero(missing))
    if count == 0:
        return
    if need is None or count * 2 > h.nblocks:
        decode_whole(plan, source, raw)
        held.mark_all()
        return
    ranges = [(a * bs, min(b * bs, h.nbytes)) for a, b in _true_runs(missing)]
    fetch = _fetcher(source, plan.start)
    read_blocks_ranges(fetch, reader, ranges, [raw[a:b] for a, b in ranges])
    held.note_done(missing)


def fill_b2nd(
    plan: ChunkPlan, source: ByteStore, held: HeldChunk, local: tuple[LocalKey, ...]
) -> None:
    """Decode into ``held`` (a b2nd chunk's items in C order) the b2nd blocks holding the
    items ``local`` selects that it does not have yet."""
    if held.complete:
        return
    geo = plan.geometry
    assert geo is not None
    reader = plan.reader
    if not plan.blocks_addressable or reader is None:  # decoded whole
        _fill_whole_b2nd(plan, source, held)
        return
    held.start_b2nd(geo.blocks)
    assert held.done is not None
    need = _need_b2nd(plan, local)
    missing = ~held.done if need is None else need & ~held.done
    count = int(np.count_nonzero(missing))
    if count == 0:
        return
    if held.fills > 0 or need is None or count * 2 > missing.size:
        _fill_whole_b2nd(plan, source, held)
        return
    bsize = geo.block_nbytes
    todo = np.flatnonzero(missing.ravel()).tolist()
    needed = sorted(
        {b for j in todo for b in reader.layout.needed_blocks(j * bsize, (j + 1) * bsize)}
    )
    items = held.items

    def use(bound: ChunkReader) -> None:
        for j in todo:
            block = bound.decode_range(j * bsize, (j + 1) * bsize, out=scratch(bsize, "hdf5-block"))
            bi = np.unravel_index(j, geo.bgrid)
            region = tuple(
                slice(i * b, min((i + 1) * b, c))
                for i, b, c in zip(bi, geo.blocks, geo.chunks, strict=True)
            )
            part = tuple(slice(0, r.stop - r.start) for r in region)
            items[region] = block.view(items.dtype).reshape(geo.blocks)[part]

    with_blocks(_fetcher(source, plan.start), reader, needed, use)
    held.note_done(missing)


def decodes_most(
    plan: ChunkPlan, local: tuple[LocalKey, ...], full_shape: tuple[int, ...], itemsize: int
) -> bool:
    """Whether reading ``local`` out of the chunk decodes most of it anyway: all of it, or
    several of its blocks and more than half of them. Keeping the chunk from that first read
    then costs little more. (A read inside one block picks its items out of the block's
    streams, much cheaper than decoding the block whole: it keeps nothing.) ``full_shape``,
    ``itemsize``: as for :func:`read_flat`."""
    if _span_blocks(plan, local, full_shape, itemsize) < 2:  # at most this many blocks
        return False
    if plan.geometry is not None:
        need = _need_b2nd(plan, local)
    else:
        need = _need_flat(plan, local, full_shape[: len(local)], itemsize)
    if need is None:
        return True
    n = int(np.count_nonzero(need))
    return n >= 2 and n * 2 > need.size


def _span_blocks(
    plan: ChunkPlan, local: tuple[LocalKey, ...], full_shape: tuple[int, ...], itemsize: int
) -> int:
    """How many blocks lie between the first and the last item ``local`` selects (at least
    those it needs; a large number when the chunk has no regular blocks)."""
    reader = plan.reader
    if reader is None:
        return 1 << 62
    firsts, lasts = [], []
    for k in local:
        if isinstance(k, slice):
            n = len(range(k.start, k.stop, k.step))
            a, z = k.start, k.start + k.step * (n - 1)
        else:  # a sorted index array
            n = len(k)
            a, z = (int(k[0]), int(k[-1])) if n else (0, 0)
        if n == 0:
            return 0
        firsts.append(a)
        lasts.append(z)
    geo = plan.geometry
    if geo is not None:
        return math.prod(
            z // b - a // b + 1 for a, z, b in zip(firsts, lasts, geo.blocks, strict=True)
        )
    bs = reader.header.effective_blocksize
    stride = itemsize
    first = last = 0
    for d in range(len(local) - 1, -1, -1):
        first += firsts[d] * stride
        last += lasts[d] * stride
        stride *= full_shape[d]
    return (last + itemsize - 1) // bs - first // bs + 1


def _need_flat(
    plan: ChunkPlan, local: tuple[LocalKey, ...], chunks: tuple[int, ...], itemsize: int
) -> np.ndarray | None:
    """The Blosc blocks a read of ``local`` decodes (a bool per block), None: all of them
    (a large selection, or no regular blocks), as :func:`read_flat` chooses."""
    if plan.reader is None or not is_small(local, chunks):
        return None
    runs = _needed_runs(local, chunks, itemsize, plan)
    if runs is None:
        return None
    h = plan.reader.header
    bs = h.effective_blocksize
    need = np.zeros(h.nblocks, bool)
    for a, b in runs:
        need[a // bs : (b - 1) // bs + 1] = True
    return need


def _need_b2nd(plan: ChunkPlan, local: tuple[LocalKey, ...]) -> np.ndarray | None:
    """The b2nd blocks a read of ``local`` decodes (a bool per block of the block grid),
    None: all of them (blocks not addressable, or most of them selected), as
    :func:`read_b2nd` chooses."""
    geo = plan.geometry
    assert geo is not None
    if not plan.blocks_addressable:
        return None
    need = np.zeros(geo.bgrid, bool)
    per_axis = [np.unique(_indices(k) // b) for k, b in zip(local, geo.blocks, strict=True)]
    need[np.ix_(*per_axis)] = True
    small = int(np.count_nonzero(need)) * 2 <= need.size or is_small(local, geo.chunks)
    return need if small else None


def _fill_whole_b2nd(plan: ChunkPlan, source: ByteStore, held: HeldChunk) -> None:
    """The whole b2nd chunk decoded and its blocks put in C order in ``held``."""
    geo = plan.geometry
    assert geo is not None
    items = held.items
    if geo.ext == geo.chunks and geo.blocks[1:] == geo.chunks[1:]:
        # blocks of whole rows (or one block), none padded: block order is C order
        decode_whole(plan, source, held.raw)
        held.mark_all()
        return
    buf = scratch(plan.nbytes, "hdf5-chunk")
    decode_whole(plan, source, buf)
    view = buf[: plan.nbytes].view(items.dtype).reshape(geo.bgrid + geo.blocks)
    nd = len(geo.chunks)
    if geo.ext == geo.chunks:  # no padding: one strided copy
        pairs = tuple(x for g, b in zip(geo.bgrid, geo.blocks, strict=True) for x in (g, b))
        perm = (*range(0, 2 * nd, 2), *range(1, 2 * nd, 2))
        items.reshape(pairs).transpose(perm)[...] = view
    else:
        for bi in np.ndindex(*geo.bgrid):
            region = tuple(
                slice(i * b, min((i + 1) * b, c))
                for i, b, c in zip(bi, geo.blocks, geo.chunks, strict=True)
            )
            items[region] = view[bi][tuple(slice(0, r.stop - r.start) for r in region)]
    held.mark_all()


def _indices(k: LocalKey) -> np.ndarray:
    return np.arange(k.start, k.stop, k.step) if isinstance(k, slice) else np.asarray(k)


def _true_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` of each run of True in a 1-d bool array.

    >>> _true_runs(np.array([0, 1, 1, 0, 1], bool))
    [(1, 3), (4, 5)]
    """
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.view(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))
