"""Blockwise evaluation: an elementwise tree over its operands (a :class:`Source`) computed
piece by piece, on the thread pool, into a numpy array, a new NDArray (streamed chunk by
chunk: into a file with ``urlpath=``) or a given ``out``.

Each piece reads the parts of the operands it covers (an NDArray decodes only the chunks
they touch; see :mod:`.operands`), evaluates the tree on them (:mod:`.kernel`) and is written
at once, so the working set is a few pieces per thread, whatever the size of the array.
Pieces follow the chunks of the first chunked operand of the expression's shape (or the
output's chunks); the plan (:mod:`.plan`) sizes them and the thread count to the memory
bound before anything is read.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> from .tree import Call, Const, Name
>>> a = asarray(np.arange(10.0), chunks=(4,), blocks=(2,))
>>> src = Source(Call("multiply", (Name("a"), Const(2))), {"a": a}, (10,), np.dtype("f8"))
>>> to_numpy(src, Selection.of(slice(3, 9), (10,)), bound=1 << 26).tolist()
[6.0, 8.0, 10.0, 12.0, 14.0, 16.0]
"""

from __future__ import annotations

import contextvars
import itertools
import math
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, wait
from typing import Any, TypeVar

import numpy as np

from .._threads import MAX_THREADS, default_nthreads, pool_of
from ..constants import MAX_OVERHEAD
from ..errors import MemoryBudgetError, ParamError
from ..ndarray.build import new_array
from ..ndarray.chunkfill import ChunkWriter, chunk_regions
from ..ndarray.ndarray import NDArray
from ..ndarray.partition import parse_geometry
from ..ndarray.reader import read_selection
from .kernel import Kernel
from .operands import (
    chunks_of,
    dtype_of,
    is_scalar,
    operand_key,
    part,
    shape_of,
    special_part,
)
from .plan import THREAD_OVERHEAD, Plan
from .selection import Box, Selection, piece_boxes
from .tree import Call, Name, Node, walk

__all__ = ["PieceBuffers", "Source", "into_ndarray", "run_pieces", "to_ndarray", "to_numpy"]

T = TypeVar("T")
R = TypeVar("R")

#: items per piece when no operand has chunks to follow
PIECE_ITEMS = 1 << 20
#: the fewest items a piece is cut down to when a plan does not fit
MIN_PIECE_ITEMS = 1 << 10
#: compressed bytes an output gathers before it commits them (a commit holds them about three
#: times over: the batch, the joined data area, the store's copy)
COMMIT_BYTES = 16 << 20


def run_pieces(fn: Callable[[T], R], items: Iterable[T], nthreads: int) -> Iterator[R]:
    """``fn(item)`` for each item, ``nthreads`` at a time on the pool, results in order; the
    items are taken from the iterable as they are needed (never listed whole) and the
    caller's context (``np.errstate``...) holds in the workers.

    A sliding window: as soon as the oldest piece is done (and its result handed over), the
    next one starts, so that one slow piece does not leave the other threads idle. At most
    ``nthreads`` pieces are out at once (running, or done and waiting for their turn): what
    the plan counts. An exception stops the items (the first, in item order, propagates)
    after the pieces already running are done.

    >>> list(run_pieces(lambda x: x * x, iter(range(5)), 2))
    [0, 1, 4, 9, 16]
    """
    ctx = contextvars.copy_context()

    def call(x: T) -> R:
        return ctx.copy().run(fn, x)

    n = max(1, min(nthreads, MAX_THREADS))
    it = iter(items)
    if n > 1:  # one piece runs here, its reads spread over the threads (as run_parallel)
        head = list(itertools.islice(it, 2))
        if len(head) < 2:
            n = 1
        it = itertools.chain(head, it)
    if n == 1 or threading.current_thread().name.startswith("pyblosc2"):
        for item in it:
            yield call(item)
        return
    pool = pool_of(n)
    pending: deque[Future[R]] = deque()
    try:
        for item in it:
            if len(pending) >= n:
                yield pending.popleft().result()
            pending.append(pool.submit(call, item))
        while pending:
            yield pending.popleft().result()
    finally:
        for f in pending:
            f.cancel()
        wait(pending)


class _Slots:
    """The buffers one piece takes, in order, from its thread's list (see :class:`PieceBuffers`)."""

    def __init__(self, bufs: list[np.ndarray]) -> None:
        self.bufs, self.n = bufs, 0

    def take(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A C-contiguous array of ``shape`` and ``dtype`` no other array of this piece uses."""
        nbytes = math.prod(shape) * dtype.itemsize
        if self.n == len(self.bufs):
            self.bufs.append(np.empty(nbytes, np.uint8))
        elif self.bufs[self.n].nbytes < nbytes:
            self.bufs[self.n] = np.empty(nbytes, np.uint8)
        buf = self.bufs[self.n][:nbytes]
        self.n += 1
        return buf.view(dtype).reshape(shape)


#: the key of a piece's buffers in the cache :meth:`Source.read` takes
SLOTS = "slots"


class PieceBuffers:
    """The work buffers of one computation's pieces, per thread, reused piece after piece:
    the parts the NDArray operands decode into and the results of the kernel's calls.

    Fresh piece-sized arrays cost first-touch page faults on every piece (measured on issue
    33's rows: the decode's unshuffle and numpy's ``add`` writing fresh 8 MB arrays spent as
    long in faults as in their loops). A thread's buffers are what one of its pieces holds
    at once (what :meth:`Source.piece_bytes` counts) and are freed with the computation.
    Whatever a piece reads with :meth:`cache` must be used up inside the piece (copied,
    compressed, reduced): the thread's next piece writes over it.

    >>> bufs = PieceBuffers()
    >>> x = bufs.cache()[SLOTS].take((2, 3), np.dtype("f8"))
    >>> y = bufs.cache()[SLOTS].take((3,), np.dtype("f8"))  # the next piece: the same memory
    >>> x.shape, np.shares_memory(x, y)
    ((2, 3), True)
    """

    def __init__(self) -> None:
        self._threads: dict[int, list[np.ndarray]] = {}

    def cache(self) -> dict[Any, Any]:
        """A cache for the :meth:`Source.read` calls of one piece on this thread."""
        bufs = self._threads.setdefault(threading.get_ident(), [])
        return {SLOTS: _Slots(bufs)}


def _read_into(v: Any, k: tuple[slice, ...], slots: _Slots) -> np.ndarray | None:
    """NDArray ``v``'s items at ``k`` decoded into a buffer of ``slots``, or None when that
    path does not apply (not a plain NDArray, steps not positive, a special chunk)."""
    if type(v) is not NDArray or v.dtype.subdtype is not None or not v.ndim:
        return None
    ranges = [range(*s.indices(n)) for s, n in zip(k, v.shape, strict=True)]
    if any(r.step < 0 for r in ranges):
        return None
    const = special_part(v, k)
    if const is not None:
        return const
    out = slots.take(tuple(len(r) for r in ranges), v.dtype)
    if not out.size:
        return out
    with v.schunk._frame.reading():
        return read_selection(v, ranges, out=out)


def _key_shape(key: tuple[slice, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(len(range(*k.indices(n))) for k, n in zip(key, shape, strict=True))


class Source:
    """An elementwise tree over operands (``leaves``: name -> operand) with the expression's
    ``shape`` and ``dtype``, read piece by piece with :meth:`read`."""

    def __init__(
        self, tree: Node, leaves: dict[str, Any], shape: tuple[int, ...], dtype: np.dtype
    ) -> None:
        used = {n.id for n in walk(tree) if isinstance(n, Name)}
        self.tree = tree
        self.leaves = {k: v for k, v in leaves.items() if k in used}
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.arrays = {k: v for k, v in self.leaves.items() if not is_scalar(v) and shape_of(v)}
        dtypes = {
            k: dtype_of(v)
            for k, v in self.leaves.items()
            if not is_scalar(v) or isinstance(v, np.generic)
        }
        self.identity = tree.id if isinstance(tree, Name) else None
        self.kernel = None if self.identity is not None else Kernel(tree, dtypes, self.dtype)
        self.ncalls = sum(1 for n in walk(tree) if isinstance(n, Call))

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The chunks of the first chunked operand of the expression's shape (pieces follow
        them), else None."""
        for v in self.arrays.values():
            if shape_of(v) == self.shape:
                c = chunks_of(v)
                if c is not None and all(c):
                    return c
        return None

    @property
    def blocks(self) -> tuple[int, ...] | None:
        for v in self.arrays.values():
            if shape_of(v) == self.shape and chunks_of(v) is not None:
                b = getattr(v, "blocks", None)
                return tuple(b) if b is not None else None
        return None

    @property
    def nthreads(self) -> int:
        """The thread count: the largest of the NDArray operands' ``dparams.nthreads``, else
        the default."""
        counts = [
            int(v.schunk.dparams.nthreads)
            for v in self.arrays.values()
            if hasattr(getattr(v, "schunk", None), "dparams")
        ]
        return max(counts) if counts else default_nthreads()

    def piece_bytes(self, items: int) -> int:
        """The working set of a piece of ``items`` items: the parts read; per NDArray
        operand, a chunk's compressed bytes (the average: what a read fetches) and the blocks
        being decoded (the reader decodes block by block into the part); the temporaries of
        the expression; the result piece."""
        out = 0
        for v in self.arrays.values():
            dt = dtype_of(v)
            out += min(items, math.prod(shape_of(v))) * dt.itemsize
            base = getattr(v, "ndarr", v)
            schunk = getattr(base, "schunk", None)
            blocks = getattr(base, "blocks", None)
            if schunk is not None and blocks is not None:
                comp = int(schunk.cbytes) // max(1, int(schunk.nchunks))
                out += 2 * comp + 2 * math.prod(blocks) * base.dtype.itemsize
        temps = 1 if self.kernel is None or self.kernel.numexpr_text else max(1, self.ncalls)
        return out + items * max(self.dtype.itemsize, 8) * (temps + 1)

    def read(self, key: tuple[slice, ...], cache: dict[Any, Any] | None = None) -> np.ndarray:
        """The expression's items at ``key`` (a slice per axis; steps allowed), as a numpy
        array of that selection's shape. ``cache`` (a dict the caller keeps for one piece)
        shares the operands' parts between sources read at the same key (a filter's
        condition and its array: one decode)."""
        want = _key_shape(key, self.shape)
        parts: dict[str, Any] = {k: v for k, v in self.leaves.items() if is_scalar(v)}
        cache = {} if cache is None else cache
        slots: _Slots | None = cache.get(SLOTS)
        for name, v in self.arrays.items():
            base = getattr(v, "ndarr", None)
            field = getattr(v, "name", None)
            k = operand_key(shape_of(v), key)
            if (
                base is not None
                and isinstance(field, str)
                and base.dtype.names
                and field in base.dtype.names
            ):
                # the fields of one array: its records are read once per piece
                rk = (id(base), tuple((s.start, s.stop, s.step) for s in k))
                if rk not in cache:
                    cache[rk] = np.asarray(base[k])
                parts[name] = cache[rk][field]
                continue
            ck = (id(v), tuple((s.start, s.stop, s.step) for s in k))
            if ck not in cache:
                got = None if slots is None else _read_into(v, k, slots)
                cache[ck] = part(v, key, self.shape) if got is None else got
            parts[name] = cache[ck]
        for name, v in self.leaves.items():
            if name not in parts:  # 0-d arrays
                parts[name] = part(v, key, self.shape)
        if self.identity is not None:
            res = np.asarray(parts[self.identity])
            if res.dtype != self.dtype:
                res = res.astype(self.dtype)
        else:
            assert self.kernel is not None
            arrays = [p for p in parts.values() if isinstance(p, np.ndarray) and p.ndim]
            if arrays and not any(s for p in arrays for s in p.strides):
                # every part is one value (special chunks): compute it once
                one = {
                    k: (p.reshape(-1)[:1] if isinstance(p, np.ndarray) and p.ndim else p)
                    for k, p in parts.items()
                }
                res = np.broadcast_to(self.kernel(one).reshape(()), want)
                return res
            res = self.kernel(parts, None if slots is None else slots.take)
        if res.shape != want:
            res = np.broadcast_to(res, want)
        return res


def _plan_pieces(
    src: Source, sel: Selection, fixed: int, bound: int, what: str, chunks: Any
) -> tuple[Plan, Any, int]:
    """The plan of computing ``sel`` of ``src`` in pieces: the piece grid (``chunks``), the
    items per piece, and the threads that fit ``bound`` with ``fixed`` bytes held."""
    piece_items = math.prod(chunks) if chunks is not None else PIECE_ITEMS
    piece_items = max(1, min(piece_items, math.prod(sel.shape) or 1))
    # smaller pieces until one fits (each NDArray operand still decodes whole chunks)
    while (
        piece_items > MIN_PIECE_ITEMS
        and fixed + src.piece_bytes(piece_items) + THREAD_OVERHEAD > bound
    ):
        piece_items = max(MIN_PIECE_ITEMS, piece_items // 4)
        chunks = None
    return (
        Plan.make(what, src.piece_bytes(piece_items), fixed, src.nthreads, bound),
        chunks,
        piece_items,
    )


def to_numpy(
    src: Source,
    sel: Selection,
    bound: int,
    out: np.ndarray | None = None,
    what: str = "the expression as a numpy array",
) -> np.ndarray:
    """``expr[sel]`` as a numpy array (or into ``out``, of the selection's result shape),
    piece by piece; :class:`~pyblosc2.errors.MemoryBudgetError` before anything is
    allocated when the result and the pieces do not fit ``bound``."""
    nbytes = math.prod(sel.shape) * src.dtype.itemsize
    plan, chunks, items = _plan_pieces(
        src, sel, 0 if out is not None else nbytes, bound, what, src.chunks
    )
    if out is not None:
        if tuple(out.shape) != sel.result_shape:
            raise ParamError(
                f"out has shape {tuple(out.shape)}, the expression gives {sel.result_shape}"
            )
        target = out.reshape(sel.shape) if out.shape != sel.shape else out
    else:
        target = np.empty(sel.shape, src.dtype)

    bufs = PieceBuffers()

    def piece(box: Box) -> None:
        target[box] = src.read(sel.source_key(box), bufs.cache())

    for _ in run_pieces(piece, piece_boxes(sel, chunks, items), plan.nthreads):
        pass
    if out is not None:
        return out
    return sel.finish(target)


def _result_to_sel(sel: Selection, region: Box) -> Box:
    """A region of the result (``sel.result_shape``) as a box of the selection."""
    keep = [r for p, r in enumerate(region) if p not in sel.newaxes]
    box: list[slice] = []
    j = 0
    for d in range(len(sel.ranges)):
        if d in sel.squeeze:
            box.append(slice(0, 1))
        else:
            box.append(keep[j])
            j += 1
    return tuple(box)


def _fill_plan(
    src: Source,
    shape: tuple[int, ...],
    dtype: np.dtype,
    chunks: Any,
    blocks: Any,
    bound: int,
    fixed: int,
    what: str,
) -> tuple[Plan, int]:
    """The plan of writing an array of ``shape`` chunk by chunk (its partition as parsed from
    ``chunks``/``blocks``), and the compressed bytes a commit batch gathers."""
    _, _, ch, bl = parse_geometry(shape, dtype, chunks, blocks)
    if not shape or 0 in shape:
        return Plan.make(what, 0, fixed, 1, bound), 0
    ext = [-(-c // b) * b for c, b in zip(ch, bl, strict=True)]
    chunk_bytes = math.prod(ext) * np.dtype(dtype).itemsize
    # a piece of a chunk, the chunk padded, its compressed bytes (and the encoder's buffers)
    per = src.piece_bytes(math.prod(ch)) + 3 * chunk_bytes + MAX_OVERHEAD
    batch = max(chunk_bytes, min(COMMIT_BYTES, bound // 8))
    try:
        return Plan.make(what, per, fixed + 3 * batch, src.nthreads, bound), batch
    except MemoryBudgetError:
        if batch == chunk_bytes:
            raise
    # a tight bound: commit chunk by chunk rather than refuse
    return Plan.make(what, per, fixed + 3 * chunk_bytes, src.nthreads, bound), chunk_bytes


def _all_zero(x: np.ndarray) -> bool:
    """Whether every byte of ``x`` is zero (a one-value view is checked once)."""
    if x.size and not any(x.strides):
        x = x.reshape(-1)[:1]
    return not np.ascontiguousarray(x).view(np.uint8).any()


def _fill(
    src: Source, sel: Selection, arr: NDArray, plan: Plan, batch: int, fresh: bool = True
) -> NDArray:
    """Fill the NDArray ``arr`` (of ``sel.result_shape``) with ``expr[sel]``, chunk by chunk
    in storage order, compressed on ``plan.nthreads`` threads and committed in batches of
    ``batch`` compressed bytes."""
    geo = arr._geometry
    rshape = arr.shape
    if not rshape:
        value = src.read(sel.source_key(tuple(slice(0, 1) for _ in sel.ranges)))
        arr.schunk.update_chunk(0, arr._compress(np.asarray(value, arr.dtype).reshape(())))
        return arr
    if 0 in rshape:
        return arr

    bufs = PieceBuffers()

    def chunk(region: Box) -> bytes | None:
        shape = tuple(r.stop - r.start for r in region)
        piece = src.read(sel.source_key(_result_to_sel(sel, region)), bufs.cache())
        piece = piece.reshape(shape)
        if piece.dtype != arr.dtype:
            piece = piece.astype(arr.dtype)
        if fresh and _all_zero(piece):
            return None  # stays a special zero chunk
        if shape == geo.ext and piece.flags.c_contiguous:
            return arr._compress(piece)  # a whole chunk without padding: no copy
        ext = np.zeros(geo.ext, arr.dtype)
        ext[tuple(slice(0, k) for k in shape)] = piece
        return arr._compress(ext)

    writer = ChunkWriter(arr, batch)
    regions = iter(chunk_regions(rshape, geo.chunks))
    for n, data in enumerate(run_pieces(chunk, regions, plan.nthreads)):
        if data is not None:
            writer.put(n, data)
    writer.flush()
    return arr


def _urlpath(kwargs: dict[str, Any]) -> Any:
    if kwargs.get("urlpath"):
        return kwargs["urlpath"]
    storage = kwargs.get("storage")
    return (
        storage.get("urlpath") if isinstance(storage, dict) else getattr(storage, "urlpath", None)
    )


def to_ndarray(
    src: Source,
    sel: Selection,
    bound: int,
    kwargs: dict[str, Any],
    what: str = "the expression into an NDArray",
) -> NDArray:
    """``expr[sel]`` as a new NDArray (``kwargs``: ``chunks``, ``blocks``, ``urlpath``,
    ``cparams``... as the constructors take), written chunk by chunk. The chunks and blocks
    default to those of the first chunked operand of the same shape. A result in memory
    counts at its uncompressed size (the worst case) against ``bound``."""
    kwargs = dict(kwargs)
    shape = sel.result_shape
    chunks = kwargs.pop("chunks", None)
    blocks = kwargs.pop("blocks", None)
    if chunks is None and blocks is None and shape == src.shape and sel.is_everything:
        chunks, blocks = src.chunks, src.blocks
    dtype = kwargs.pop("dtype", None) or src.dtype
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    fixed = 0 if _urlpath(kwargs) else nbytes
    plan, batch = _fill_plan(src, shape, dtype, chunks, blocks, bound, fixed, what)  # before
    arr = new_array(NDArray, shape, dtype, chunks, blocks, kwargs)  # anything is created
    return _fill(src, sel, arr, plan, batch)


def into_ndarray(src: Source, sel: Selection, out: NDArray, bound: int) -> NDArray:
    """``expr[sel]`` written into the existing NDArray ``out`` (of the result shape)."""
    if tuple(out.shape) != sel.result_shape:
        raise ParamError(
            f"out has shape {tuple(out.shape)}, the expression gives {sel.result_shape}"
        )
    out.schunk._check_writable()
    what = "the expression into out"
    plan, batch = _fill_plan(src, out.shape, out.dtype, out.chunks, out.blocks, bound, 0, what)
    return _fill(src, sel, out, plan, batch, fresh=False)
