"""A shared thread pool per thread count, for block-parallel work.

Codec libraries (lz4, zstandard, zlib) and numpy's copy kernels release the GIL, so blocks
processed concurrently do run in parallel.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["default_nthreads", "run_parallel"]

T = TypeVar("T")
R = TypeVar("R")

_pools: dict[int, ThreadPoolExecutor] = {}
_lock = threading.Lock()
_MAX_THREADS = 256


def default_nthreads() -> int:
    """The default thread count: the number of cores (as python-blosc2 does)."""
    return max(1, min(os.cpu_count() or 1, _MAX_THREADS))


def _pool(n: int) -> ThreadPoolExecutor:
    with _lock:
        pool = _pools.get(n)
        if pool is None:
            pool = _pools[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="pyblosc2")
        return pool


def run_parallel(fn: Callable[[T], R], items: Iterable[T], nthreads: int) -> list[R]:
    """``[fn(x) for x in items]``, on ``nthreads`` threads when that is more than one.

    Exceptions propagate (the first one raised, in item order).
    """
    items = list(items)
    if nthreads <= 1 or len(items) <= 1 or threading.current_thread().name.startswith("pyblosc2"):
        return [fn(x) for x in items]
    return list(_pool(min(nthreads, _MAX_THREADS)).map(fn, items))
