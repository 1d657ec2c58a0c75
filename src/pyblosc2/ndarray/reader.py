"""The NDArray read path: a selection of per-axis ranges (any step) decoded straight into the
result, touching only the chunks and blocks that hold a selected item (b2nd layout,
frame-format.md §8.3-8.4).

Each chunk holding selected items is read one of two ways:

* whole: decoded once into a per-thread buffer, which viewed as ``(block grid..., block
  shape...)`` gives every selected item; each axis contributes a few *pieces* (a run of whole
  blocks, or the selected items of one block) and each combination of pieces is one numpy
  copy into the result;
* block by block, when the selection touches at most half of the chunk's blocks: only the
  touched blocks are read (one positioned read per merged span), each block's streams are
  decoded once and its selected items picked out of them (a shuffled block is unshuffled
  only for the picked items, or from the first to the last of them:
  :meth:`~pyblosc2.chunk.decode.ChunkReader.pick_items`); pipelines that do not allow
  picking decode the byte range from a block's first to its last selected item.

Chunks are decoded concurrently on the shared pool (each writes a disjoint part of the
result), under one read guard of the frame.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._threads import run_parallel, scratch, threads_for
from ..chunk.decode import ChunkReader
from ..constants import Filter
from ..kernels import active
from .itemruns import item_runs

if TYPE_CHECKING:
    from ..frame.frame import Frame
    from .core import ArrayCore
    from .geometry import Geometry

__all__ = ["PLANES_MAX", "read_box", "read_point", "read_selection"]

#: items are copied out of a shuffled block's byte planes while at most 1/_PICK_RATIO of the
#: touched blocks' items are selected; beyond that, a kernel set with a fast unshuffle
#: unshuffles the touched blocks first
_PICK_RATIO = 8

#: the largest chunk read whole through a buffer of its byte planes (:func:`_scatter_planes`);
#: larger ones are decoded block by block straight into the result, so that the peak memory
#: of a whole read stays near the result's size
PLANES_MAX = 1 << 23

#: (first block, block count, items within each block, first result index, result count)
Piece = tuple[int, int, slice, int, int]
#: one chunk to read: per axis, (chunk coordinate, pieces)
Task = tuple[tuple[int, list[Piece]], ...]
#: one chunk to read: its index, its pieces per axis, and whether it is read whole
Job = tuple[int, list[list[Piece]], bool]


def read_box(arr: ArrayCore, lo: tuple[int, ...], hi: tuple[int, ...]) -> np.ndarray:
    """The box ``[lo, hi)`` of the array as a new array."""
    return read_selection(arr, [range(a, b) for a, b in zip(lo, hi, strict=True)])


def read_selection(
    arr: ArrayCore, ranges: list[range], out: np.ndarray | None = None
) -> np.ndarray:
    """The items ``ranges`` select (one range per axis, any step) as an array of shape
    ``[len(r) for r in ranges]``; axes with negative steps are views reversed at the end.
    ``out`` (positive steps only: a C-contiguous array of that shape and of the array's
    dtype, a subarray dtype as void items) is filled and returned instead of a new array:
    a caller reusing its buffers avoids the first-touch page faults of fresh ones."""
    geo = arr._geometry
    flip = tuple(slice(None, None, -1) if r.step < 0 else slice(None) for r in ranges)
    up = [r[::-1] if r.step < 0 else r for r in ranges]
    item = _item_dtype(geo.dtype)
    shape = tuple(len(r) for r in up)
    if out is None:
        out = np.empty(shape, item)
    elif (
        out.shape != shape
        or out.dtype != item
        or not out.flags.c_contiguous
        or any(r.step < 0 for r in ranges)
    ):
        raise ValueError(f"out must be a C-contiguous {item} array of shape {shape}")
    if out.size == 0:
        return out if item is geo.dtype else out.view(geo.dtype)
    if not geo.ndim:
        out[()] = arr._chunk_array(0)[()]
        return out
    schunk = arr.schunk
    frame = schunk._frame
    nthreads = schunk.dparams.nthreads
    with frame.reading():
        tasks = list(_chunk_tasks(geo, up))
        # many chunks: one per thread; one chunk: its blocks on the threads
        plan = _ReadPlan.of(geo, 1 if len(tasks) > 1 else nthreads)
        jobs: list[Job] = [
            (_flat(tuple(c for c, _ in t), plan.grid), [p for _, p in t], _reads_whole(plan, t))
            for t in tasks
        ]
        # chunks read whole are fetched together first (concurrently from a remote store)
        whole = [n for n, _, w in jobs if w]
        schunk._prefetch(whole)
        calls = _call_bytes(geo, schunk.cparams.filters, len(whole) * 2 > len(tasks))
        run_parallel(
            lambda job: _read_chunk(frame, plan, job, out), jobs, threads_for(nthreads, calls)
        )
    result = out[flip] if any(r.step < 0 for r in ranges) else out
    return result if item is geo.dtype else result.view(geo.dtype)


def read_point(arr: ArrayCore, point: tuple[int, ...]) -> np.ndarray | None:
    """The item at ``point`` (one int per axis, each in ``0..n-1``: a key
    :func:`~.indexing.parse_key` normalised) as a 0-d array: its block is read and only that
    item unshuffled, with none of a selection's bookkeeping (the per-read overhead was two
    thirds of a point read). None when the general path must serve it: a subarray dtype, or
    a chunk without regular blocks or with a pipeline items cannot be picked from."""
    geo = arr._geometry
    dtype = geo.dtype
    if dtype.subdtype is not None or not geo.ndim:
        return None
    n = j = i = 0
    for x, size, c, b, e in zip(point, geo.shape, geo.chunks, geo.blocks, geo.ext, strict=True):
        r = x % c
        n = n * -(-size // c) + x // c
        j = j * (e // b) + r // b
        i = i * b + r % b
    frame = arr.schunk._frame
    if n >= arr.schunk.nchunks:  # a damaged array: the general path names what is missing
        return None
    t = dtype.itemsize
    out = np.empty((), dtype)
    with frame.reading():
        fr = frame.reader
        reader = fr.block_reader(n)
        if reader is None or not reader.can_pick_items(t):
            return None
        dst = out.reshape(1).view(np.uint8).reshape(1, t)
        index = (slice(i, i + 1, 1),)
        shape = (math.prod(geo.blocks),)
        fr.with_chunk_blocks(
            n, reader, [j], lambda bound: bound.pick_items(j, shape, index, dst), check=False
        )
    return out


def _call_bytes(geo: Geometry, filters: Sequence[int], whole: bool) -> int:
    """About how many bytes each codec or numpy call of a chunk read handles (what decides
    whether chunks are read on threads: :func:`~pyblosc2._threads.threads_for`).

    Blocks are decoded stream by stream: a block, or one byte plane of it when byte-shuffled
    items of up to 16 bytes are split into one stream per plane (§6.3). A shuffled chunk read
    whole also scatters each byte plane of the chunk with one copy (:func:`_scatter_planes`).
    """
    t = geo.itemsize
    shuffled = Filter.SHUFFLE in filters and t > 1
    stream = math.prod(geo.blocks) * t // (t if shuffled and t <= 16 else 1)
    return max(stream, math.prod(geo.chunks)) if whole and shuffled else stream


def _item_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype items are read as: a subarray dtype (``("<f8", (10,))``) as opaque items of
    its size, viewed back at the end (numpy would otherwise add its axes to every array)."""
    return dtype if dtype.subdtype is None else np.dtype((np.void, dtype.itemsize))


def _chunk_tasks(geo: Geometry, ranges: list[range]) -> Iterator[Task]:
    """For every chunk holding selected items: per axis, (chunk coordinate, pieces)."""
    per_axis = []
    for r, c, b in zip(ranges, geo.chunks, geo.blocks, strict=True):
        if r.step <= c:
            coords = range(r[0] // c, r[-1] // c + 1)
        else:
            coords = np.unique(np.arange(r.start, r.stop, r.step) // c).tolist()
        axis = []
        for cc in coords:
            o = cc * c
            k0 = max(0, -(-(o - r.start) // r.step))
            k1 = min(len(r), -(-(o + c - r.start) // r.step))
            if k0 < k1:
                axis.append((cc, _pieces(r.start + k0 * r.step - o, k1 - k0, r.step, b, k0)))
        per_axis.append(axis)
    return itertools.product(*per_axis)


def _pieces(first: int, count: int, step: int, block: int, k0: int) -> list[Piece]:
    """The selected in-chunk indices ``first + i * step`` (``i < count``, result indices from
    ``k0``) grouped by block: one piece per touched block, runs of whole blocks merged."""
    pieces: list[Piece] = []
    k = 0
    while k < count:
        i = first + k * step
        g = i // block
        n = min(count - k, ((g + 1) * block - 1 - i) // step + 1)
        r0 = i - g * block
        sel = slice(r0, r0 + (n - 1) * step + 1, step)
        prev = pieces[-1] if pieces else None
        if (
            n == block
            and prev is not None
            and prev[2] == slice(0, block, 1)
            and prev[0] + prev[1] == g
        ):
            pieces[-1] = (prev[0], prev[1] + 1, prev[2], prev[3], prev[4] + n)
        else:
            pieces.append((g, 1, sel, k0 + k, n))
        k += n
    return pieces


class _ReadPlan(NamedTuple):
    """What every chunk read of one selection needs (from the array's geometry, taken once)."""

    grid: tuple[int, ...]  # chunks per axis
    bgrid: tuple[int, ...]  # blocks per axis in a chunk
    blocks: tuple[int, ...]
    dtype: np.dtype
    nthreads: int

    @classmethod
    def of(cls, geo: Geometry, nthreads: int) -> _ReadPlan:
        return cls(geo.grid, geo.bgrid, geo.blocks, _item_dtype(geo.dtype), nthreads)


def _flat(coords: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """C-order index of ``coords`` in ``shape`` (np.ravel_multi_index, without numpy)."""
    i = 0
    for c, n in zip(coords, shape, strict=True):
        i = i * n + c
    return i


def _reads_whole(plan: _ReadPlan, task: Task) -> bool:
    """Whether ``task`` touches more than half of its chunk's blocks (one whole-chunk decode
    is then cheaper than block by block)."""
    touched = math.prod(sum(p[1] for p in axis) for _, axis in task)
    return touched * 2 > math.prod(plan.bgrid)


def _read_chunk(frame: Frame, plan: _ReadPlan, job: Job, out: np.ndarray) -> None:
    n, pieces, whole = job
    if whole:
        _read_whole(frame, plan, n, pieces, out)
    else:
        _read_by_blocks(frame, plan, n, pieces, out)


def _read_whole(
    frame: Frame, plan: _ReadPlan, n: int, pieces: list[list[Piece]], out: np.ndarray
) -> None:
    """Decode chunk ``n`` and copy every combination of pieces out of it: block by block
    straight into ``out`` where the pipeline allows (:func:`_decode_into_out`), else the
    chunk at once into a buffer."""
    reader = frame.reader.chunk_reader(n)  # (a small chunk's kept reader: nothing parsed)
    if _decode_into_out(reader, plan, pieces, out):
        return
    nbytes = reader.header.nbytes
    size = math.prod(plan.bgrid) * math.prod(plan.blocks) * plan.dtype.itemsize
    raw = scratch(nbytes, "nd-chunk")
    copies = _combo_copies(
        raw[:size].view(plan.dtype).reshape(plan.bgrid + plan.blocks), pieces, out
    )
    if len(copies) == 1 and nbytes == size:
        dst, src = copies[0]
        if (
            src.flags.c_contiguous
            and dst.flags.c_contiguous
            and src.nbytes == size
            and src.ctypes.data == raw.ctypes.data
        ):
            # the whole chunk, its blocks in the result's (C) order: decoded in place
            reader.decode(dst.reshape(-1).view(np.uint8), plan.nthreads)
            return
    reader.decode(raw, plan.nthreads)
    for dst, src in copies:
        dst[...] = src


def _combo_copies(
    blocks: np.ndarray, pieces: list[list[Piece]], out: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """For every combination of pieces, ``(dst, src)``: the part of ``out`` it fills and its
    items in ``blocks`` (a chunk viewed as ``(block grid..., block shape...)``, plus trailing
    axes ``out`` has too, such as the bytes of an item), both shaped ``(a0, b0, a1, b1, ...,
    trailing...)`` (blocks, items within a block, per axis), so that one copy fills it."""
    nd = len(pieces)
    order = [x for i in range(nd) for x in (i, nd + i)] + list(range(2 * nd, blocks.ndim))
    copies = []
    for combo in itertools.product(*pieces):
        src = blocks[
            tuple(slice(p[0], p[0] + p[1]) for p in combo) + tuple(p[2] for p in combo)
        ].transpose(order)
        dst = out[tuple(slice(p[3], p[3] + p[4]) for p in combo)]
        copies.append((_split(dst, src.shape), src))
    return copies


def _decode_into_out(
    reader: ChunkReader, plan: _ReadPlan, pieces: list[list[Piece]], out: np.ndarray
) -> bool:
    """Decode each touched block of chunk ``reader`` straight into its part of ``out``
    (:meth:`ChunkReader.pick_items`, which for a byte-shuffled or unfiltered block writes
    each stream into place: no chunk-sized buffer and no copy). False (nothing written) for
    pipelines and layouts it does not serve."""
    t = plan.dtype.itemsize
    if not reader.can_pick_items(t) or reader.header.leftover:
        return False
    if t > 1 and reader.shuffle_group() == t:
        if active().fast_unshuffle:  # the chunk unshuffled at once, then contiguous copies
            return False
        if reader.header.nbytes <= PLANES_MAX:
            _scatter_planes(reader, plan, pieces, out)
            return True
    bshape = plan.blocks
    picks = _block_picks(plan, pieces, out)
    h = reader.header
    nthreads = threads_for(plan.nthreads, h.effective_blocksize // h.nstreams(0))
    run_parallel(lambda p: reader.pick_items(p[0], bshape, p[1], p[2]), picks, nthreads)
    return True


def _scatter_planes(
    reader: ChunkReader, plan: _ReadPlan, pieces: list[list[Piece]], out: np.ndarray
) -> None:
    """The touched blocks of byte-shuffled chunk ``reader`` decoded into a per-thread buffer
    as byte planes (their streams, not unshuffled), then byte ``k`` of every combination of
    pieces copied into ``out`` with one strided copy: a few long numpy calls per chunk
    instead of one per plane and block (the benchmark's ``a[:]``: 93-108 ms instead of
    109-133 ms), long enough for chunks to go on the threads."""
    t = plan.dtype.itemsize
    bs = math.prod(plan.blocks) * t
    buf = scratch(math.prod(plan.bgrid) * bs, "nd-planes").reshape(-1, bs)
    touched = sorted(
        {_flat(tuple(p[0] for p in c), plan.bgrid) for c in _block_combos(pieces, plan.blocks)}
    )
    run_parallel(
        lambda j: reader.decode_streams(j, buf[j]),
        touched,
        threads_for(plan.nthreads, bs // reader.header.nstreams(0)),
    )
    # plane k of every block, and byte k of every item of the result
    planes = np.moveaxis(buf.reshape((*plan.bgrid, t, *plan.blocks)), len(plan.bgrid), 0)
    outb = out.view(np.uint8).reshape((*out.shape, t))
    copies = [c for k in range(t) for c in _combo_copies(planes[k], pieces, outb[..., k])]
    run_parallel(
        lambda c: np.copyto(c[0], c[1]),
        copies,
        threads_for(plan.nthreads, len(touched) * bs // len(copies)),
    )


def _block_combos(pieces: list[list[Piece]], bshape: tuple[int, ...]) -> list[tuple[Piece, ...]]:
    """Every touched block of a chunk as one piece per axis (runs of blocks split)."""
    singles = [
        [q for p in axis for q in _unmerge(p, b)] for axis, b in zip(pieces, bshape, strict=True)
    ]
    return list(itertools.product(*singles))


def _block_picks(
    plan: _ReadPlan, pieces: list[list[Piece]], out: np.ndarray
) -> list[tuple[int, tuple[slice, ...], np.ndarray]]:
    """Per touched block of a chunk (``pieces``: per axis, as :func:`_chunk_tasks` gives
    them): its index in the chunk, the items selected in it, and where they go (a view of
    ``out``'s bytes, shape ``selection + (itemsize,)``). Each axis is walked once; a block
    then costs a sum and one view."""
    outb = out.view(np.uint8).reshape((*out.shape, plan.dtype.itemsize))
    axes: list[list[tuple[int, slice, slice]]] = []
    stride = 1
    for axis, b, nb in zip(
        reversed(pieces), reversed(plan.blocks), reversed(plan.bgrid), strict=True
    ):
        axes.append(
            [(q[0] * stride, q[2], slice(q[3], q[3] + q[4])) for p in axis for q in _unmerge(p, b)]
        )
        stride *= nb
    axes.reverse()
    picks = []
    for combo in itertools.product(*axes):
        js, sels, where = zip(*combo, strict=True)
        picks.append((sum(js), sels, outb[where]))
    return picks


def _read_by_blocks(
    frame: Frame, plan: _ReadPlan, n: int, pieces: list[list[Piece]], out: np.ndarray
) -> None:
    """Copy the selected items of chunk ``n`` block by block, reading only the touched
    blocks: each block's streams are decoded once and its selected items picked out of them
    (:meth:`ChunkReader.pick_items`); for other pipelines (and chunks read whole), only the
    bytes from a block's first to its last selected item are decoded."""
    t = plan.dtype.itemsize
    bshape = plan.blocks
    fr = frame.reader
    reader = fr.block_reader(n)
    ntouched = math.prod(sum(p[1] for p in axis) for axis in pieces)
    if reader is not None and _gathers(reader, t, plan, pieces, ntouched):
        combos = _block_combos(pieces, bshape)
        touched = sorted({_flat(tuple(p[0] for p in c), plan.bgrid) for c in combos})
        fr.with_chunk_blocks(
            n,
            reader,
            touched,
            lambda bound: _gather_blocks(bound, plan, pieces, touched, out),
            check=False,
        )
        return
    if reader is not None and reader.can_pick_items(t):
        picks = _block_picks(plan, pieces, out)

        def pick(bound: ChunkReader) -> None:
            if bound.pick_blocks(picks, bshape):
                return
            for j, index, dst in picks:
                bound.pick_items(j, bshape, index, dst)

        fr.with_chunk_blocks(n, reader, sorted({j for j, _, _ in picks}), pick, check=False)
        return
    combos = _block_combos(pieces, bshape)
    belems = math.prod(bshape)
    bstrides = [math.prod(bshape[d + 1 :]) for d in range(len(bshape))]
    # one block-sized buffer per touched block; only the part that is read is used
    raw = scratch(len(combos) * belems * t, "nd-blocks")
    ranges, outs = [], []
    for i, combo in enumerate(combos):
        base = _flat(tuple(p[0] for p in combo), plan.bgrid) * belems
        lo = hi = 0
        for p, s in zip(combo, bstrides, strict=True):
            lo += p[2].start * s
            hi += (p[2].stop - 1) * s
        hi += 1
        ranges.append(((base + lo) * t, (base + hi) * t))
        outs.append(raw[(i * belems + lo) * t : (i * belems + hi) * t])
    fr.read_chunk_ranges(n, ranges, outs)  # under the caller's read guard
    blocks = raw.view(plan.dtype).reshape((len(combos), *bshape))
    for i, combo in enumerate(combos):
        out[tuple(slice(p[3], p[3] + p[4]) for p in combo)] = blocks[i][tuple(p[2] for p in combo)]


def _gathers(
    reader: ChunkReader, t: int, plan: _ReadPlan, pieces: list[list[Piece]], touched: int
) -> bool:
    """Whether :func:`_gather_blocks` serves chunk ``reader`` for items of ``t`` bytes: the
    kernel set unshuffles near memory speed, most items of the ``touched`` blocks are
    selected (else picking them out of each stream as it is decoded, with no copy of the
    streams, is cheaper: 0.26 against 0.37 of C's speed on the benchmark's cross-sections),
    the chunk is byte-shuffled by ``t`` with regular blocks of whole items and no leftover,
    and it is no larger than :data:`PLANES_MAX` (the buffer it decodes into)."""
    h = reader.header
    wanted = math.prod(sum(p[4] for p in axis) for axis in pieces)
    return (
        t > 1
        and active().fast_unshuffle
        and wanted * _PICK_RATIO > touched * math.prod(plan.blocks)
        and not h.leftover
        and h.nbytes <= PLANES_MAX
        and reader.can_pick_items(t)
        and reader.shuffle_group() == t
    )


def _gather_blocks(
    bound: ChunkReader,
    plan: _ReadPlan,
    pieces: list[list[Piece]],
    touched: list[int],
    out: np.ndarray,
) -> None:
    """The selected items of one byte-shuffled chunk (``bound``: its reader over the stored
    bytes of the ``touched`` blocks; :func:`_gathers` holds) into ``out``: the touched
    blocks' streams are decoded into their places in a per-thread buffer of the chunk, then
    one kernel call unshuffles the selected items straight into the result, run by run
    (:func:`~.itemruns.item_runs`; the benchmark's 16 slabs: no unshuffle of whole blocks and
    no copy after it). Selections whose innermost axis has a step instead unshuffle each run
    of touched blocks into a second buffer viewed as ``(block grid..., block shape..., item
    bytes)`` and copy every combination of pieces out of it with one numpy copy."""
    t = plan.dtype.itemsize
    q = math.prod(plan.blocks)
    bs = q * t
    nb = math.prod(plan.bgrid)
    buf = scratch(nb * bs, "nd-planes").reshape(nb, bs)
    for j in touched:
        bound.decode_streams(j, buf[j])
    ks = active()
    table = item_runs(pieces, plan.blocks, plan.bgrid, out.strides, t)
    if table is not None and out.flags.c_contiguous:
        bad = ks.unshuffle_runs(buf.reshape(-1), q, out.reshape(-1).view(np.uint8), table, t)
        if bad >= 0:  # (built from the geometry, never from stored bytes)
            raise RuntimeError(f"item run {table[bad].tolist()} lies outside the read's buffers")
        return
    items = scratch(nb * bs, "nd-items").reshape(nb, bs)
    for a, b in _runs(touched):
        ks.unshuffle_blocks(buf[a:b], items[a:b], t)
    view = items.reshape((*plan.bgrid, *plan.blocks, t))
    outb = out.view(np.uint8).reshape((*out.shape, t))
    for dst, src in _combo_copies(view, pieces, outb):
        dst[...] = src


def _runs(sorted_ints: list[int]) -> list[tuple[int, int]]:
    """Runs of consecutive integers as ``(first, stop)`` pairs.

    >>> _runs([0, 1, 2, 5, 7, 8])
    [(0, 3), (5, 6), (7, 9)]
    """
    runs: list[tuple[int, int]] = []
    for j in sorted_ints:
        if runs and runs[-1][1] == j:
            runs[-1] = (runs[-1][0], j + 1)
        else:
            runs.append((j, j + 1))
    return runs


def _unmerge(p: Piece, block: int) -> list[Piece]:
    """A run of whole blocks as one piece per block."""
    g, count, sel, k, _ = p
    if count == 1:
        return [p]
    return [(g + i, 1, sel, k + i * block, block) for i in range(count)]


def _split(dst: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``dst`` (an axis of length ``a * b`` per pair of ``shape``, then the trailing axes
    ``shape`` ends with) as an array of ``shape`` ``(a0, b0, a1, b1, ..., trailing...)``: a
    view, each leading axis split in two (never a copy)."""
    nd = len(shape) - dst.ndim  # the split axes
    strides: list[int] = []
    for s, b in zip(dst.strides[:nd], shape[1 : 2 * nd : 2], strict=True):
        strides += [s * b, s]
    return as_strided(dst, shape, (*strides, *dst.strides[nd:]))
