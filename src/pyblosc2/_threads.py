"""Threads: a shared pool per thread count for block-parallel work, and the per-thread state
(scratch buffers, codec contexts) that work needs.

Codec libraries (lz4, zstandard, zlib) and numpy's copy kernels release the GIL, so blocks
processed concurrently do run in parallel. Each thread keeps its own scratch buffers and codec
contexts (:func:`thread_cache`, :func:`scratch`), so no lock is taken per block.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from numpy.typing import DTypeLike

__all__ = [
    "MAX_THREADS",
    "MIN_PARALLEL_BYTES",
    "default_nthreads",
    "pool_of",
    "run_parallel",
    "scratch",
    "set_default_nthreads",
    "thread_cache",
    "thread_parts",
    "threads_for",
]

T = TypeVar("T")
R = TypeVar("R")

_pools: dict[int, ThreadPoolExecutor] = {}
_lock = threading.Lock()
_MAX_THREADS = 256
#: the most threads a pool has
MAX_THREADS = _MAX_THREADS
#: scratch buffers above this size are allocated per call, not kept by the thread
SCRATCH_MAX = 1 << 24


def _after_fork_in_child() -> None:
    """A forked child inherits the pools' bookkeeping but not their threads: forget them (a
    new pool is made on first use) and the lock, which a parent thread may have held."""
    global _lock
    _pools.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


#: the thread count ``set_nthreads`` chose (None: the number of cores)
_chosen: list[int] = []


def default_nthreads() -> int:
    """The default thread count: the one ``set_nthreads`` last set, else the number of cores
    (as python-blosc2 does)."""
    if _chosen:
        return _chosen[-1]
    return max(1, min(os.cpu_count() or 1, _MAX_THREADS))


def set_default_nthreads(n: int) -> None:
    """Make ``n`` the default thread count of new ``CParams``/``DParams``."""
    _chosen[:] = [n]


def _pool(n: int) -> ThreadPoolExecutor:
    with _lock:
        pool = _pools.get(n)
        if pool is None:
            pool = _pools[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="pyblosc2")
        return pool


def pool_of(n: int) -> ThreadPoolExecutor:
    """The shared pool of ``n`` threads (at most :data:`MAX_THREADS`); its threads' names
    start with ``pyblosc2`` (work they start runs inline, never nested on a pool)."""
    return _pool(max(1, min(n, _MAX_THREADS)))


#: the fewest bytes one codec or numpy call must handle for work to be spread over threads.
#: Every such call releases the GIL and takes it back; when the calls are short, the threads
#: mostly wait on each other for it. Measured on the 2-vCPU CI machine: blocks decoded as
#: 32 KiB streams ran 1.4-1.6x *slower* on two threads than on one (a (128, 512, 512) float32
#: array read whole, its cross-sections 2.3x slower), 64 KiB streams 1.2-1.4x faster.
#: ``PYBLOSC2_MIN_PARALLEL_BYTES`` overrides it (0: always use the threads asked for).
MIN_PARALLEL_BYTES = int(os.environ.get("PYBLOSC2_MIN_PARALLEL_BYTES", 64 * 1024))


def threads_for(nthreads: int, call_bytes: int) -> int:
    """How many of ``nthreads`` threads to use for work done in calls of ``call_bytes``
    bytes each: all of them, or one when the calls are too short to gain from threads
    (:data:`MIN_PARALLEL_BYTES`).

    >>> threads_for(4, 1 << 20), threads_for(4, 1 << 10)
    (4, 1)
    """
    return nthreads if call_bytes >= MIN_PARALLEL_BYTES else 1


def thread_parts(first: int, stop: int, nthreads: int) -> list[range]:
    """``range(first, stop)`` cut into at most ``nthreads`` contiguous parts of near-equal
    length: one task per thread, each looping over its own items (a task per small batch
    costs a pool hand-over each, which on the 2-vCPU machine ate the second thread's gain).

    >>> thread_parts(0, 10, 3), thread_parts(4, 5, 2), thread_parts(0, 0, 2)
    ([range(0, 4), range(4, 7), range(7, 10)], [range(4, 5)], [])
    """
    n = stop - first
    k = max(1, min(nthreads, n))
    q, r = divmod(n, k)
    parts, j = [], first
    for i in range(k):
        m = q + (i < r)
        if m:
            parts.append(range(j, j + m))
        j += m
    return parts


def run_parallel(fn: Callable[[T], R], items: Iterable[T], nthreads: int) -> list[R]:
    """``[fn(x) for x in items]``, on ``nthreads`` threads when that is more than one: the
    calling thread and ``nthreads - 1`` threads of the shared pool each take the next item
    until none is left (one pool task per thread, not per item).

    The caller works rather than waits: with every item on the pool, the caller slept on
    a condition while the pool's threads took the items, and on the 2-vCPU machine the
    hand-overs cost 0.2-0.5 ms per call (``decompress2`` of a 4 MiB chunk on two threads:
    1.04 -> 0.75 ms lz4, 1.77 -> 1.22 ms zstd; a 128 MB array read whole 41 -> 32 ms). Work
    started by an item runs inline (on the caller as on the pool's threads), never nested on
    a pool. After an item raises, no new item is started; the exception raised is the one of
    the first item in item order that raised.

    >>> run_parallel(lambda x: x * x, range(4), 2)
    [0, 1, 4, 9]
    """
    items = list(items)
    n = len(items)
    here = _local
    if (
        nthreads <= 1
        or n <= 1
        or here.inline
        or threading.current_thread().name.startswith("pyblosc2")
    ):
        return [fn(x) for x in items]
    k = min(nthreads, n, _MAX_THREADS)
    results: list[Any] = [None] * n
    errors: dict[int, BaseException] = {}
    taken = itertools.count()  # next() is atomic under the GIL
    # what the tasks use, emptied once the caller stops taking items (done, failed or
    # interrupted): no task takes a new one after that, and a task cancelled while queued (or
    # one finishing) still references work(), which must not keep the items or the function
    # alive (a view into a frame's buffer the caller resizes next would stay exported)
    state: list[Any] = [fn, items]

    def work() -> None:
        if not state:
            return
        call, todo = state
        while state and not errors:  # (checked before an item is taken: a taken one is run)
            i = next(taken)
            if i >= n:
                return
            try:
                results[i] = call(todo[i])
            except BaseException as exc:  # raised below, once every thread has stopped
                errors[i] = exc
                return

    pool = _pool(k - 1)
    futures = [pool.submit(work) for _ in range(k - 1)]
    here.inline = True
    try:
        work()
    finally:
        here.inline = False
        state.clear()  # (an interrupted wait below leaves no thread taking new items)
        for f in futures:
            # a task still queued (the pool's threads busy with another caller's items) is
            # not waited for: every item was taken already
            if not f.cancel():
                f.result()  # (work() never raises)
    got = results.copy()
    results.clear()
    if errors:
        exc = errors[min(errors)]
        errors.clear()
        raise exc
    return got


class _PerThread(threading.local):
    def __init__(self) -> None:
        #: the thread is running items of :func:`run_parallel` (nested calls run inline)
        self.inline = False
        self.caches: dict[str, dict[Any, Any]] = {}
        self.bufs: dict[str, np.ndarray] = {}


_local = _PerThread()


def thread_cache(name: str) -> dict[Any, Any]:
    """A dict private to the calling thread, one per ``name`` (e.g. a codec's contexts, which
    are not thread-safe).

    >>> thread_cache("doc")["k"] = 1; thread_cache("doc")["k"]
    1
    """
    caches = _local.caches
    cache = caches.get(name)
    if cache is None:
        cache = caches[name] = {}
    return cache


def scratch(nbytes: int, slot: str, dtype: DTypeLike = np.uint8) -> np.ndarray:
    """A work buffer of ``nbytes`` bytes viewed as ``dtype``, reused per thread and ``slot``.

    First-touch page faults on fresh block-sized temporaries can cost as much as the kernel
    itself (measured: bitshuffle of 4 MiB blocks ran at 0.6 GB/s with fresh temporaries,
    1.1-1.3 GB/s with reused ones). Buffers above :data:`SCRATCH_MAX` are not kept. A slot's
    buffer must not be in use twice at once: callers name their own slots (the filter kernels
    use ``"planes"``, ``"bits"``, ``"bits8"`` and ``"work"``, the chunk decoder ``"block"`` and
    ``"block-aux"``).

    >>> a = scratch(8, "doc"); a[:] = 7; scratch(8, "doc", np.uint16).tolist()
    [1799, 1799, 1799, 1799]
    """
    if nbytes > SCRATCH_MAX:
        return np.empty(nbytes, np.uint8).view(dtype)
    bufs = _local.bufs
    buf = bufs.get(slot)
    if buf is None or len(buf) < nbytes:
        buf = bufs[slot] = np.empty(nbytes, np.uint8)
    return buf[:nbytes] if dtype is np.uint8 else buf[:nbytes].view(dtype)
