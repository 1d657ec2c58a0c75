"""The kernel that multiplies the parts of a matrix product (python-blosc2's "matmul block
backend" knobs: ``set_matmul_block_backend``, ``get_matmul_block_backend``,
``get_selected_matmul_block_backend``, ``get_loaded_matmul_cblas_library``).

pyblosc2 has no C kernels of its own: ``"cblas"`` is numpy's ``matmul``, which calls the BLAS
numpy was built with for float and complex parts (and numpy's own loops for integers and
booleans); ``"accelerate"`` is the same when that BLAS is Apple's Accelerate; ``"naive"`` is
``np.einsum`` without BLAS (one plain summation loop: slower, its rounding independent of the
BLAS). ``"auto"`` (the default) picks the BLAS when numpy has one. The choice is process-wide,
as in python-blosc2.

A product runs its parts side by side on pyblosc2's threads, each part's BLAS call on one
thread (:func:`one_blas_thread`, with ``threadpoolctl`` from the ``fast`` extra; without it
the BLAS keeps its own threads): BLAS threads that wait on each other per call lose badly to
one thread per call when calls are small or the machine is busy (measured on the 2-core CI
machine under load: 256 products of 64x64 by 64x1024 took 3.4-10 s on OpenBLAS's 2 threads,
0.3 s on one), as python-blosc2 also limits its BLAS to one thread for its small blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import cache
from typing import Any

import numpy as np

from .._threads import run_parallel
from ..params import parse_choice
from . import plan

__all__ = [
    "banded_matmul",
    "block_matmul",
    "get_loaded_matmul_cblas_library",
    "get_matmul_block_backend",
    "get_selected_matmul_block_backend",
    "one_blas_thread",
    "set_matmul_block_backend",
]

MODES = ("auto", "naive", "accelerate", "cblas")
_mode = ["auto"]


@cache
def _blas() -> dict[str, str]:
    """numpy's BLAS as ``np.show_config`` reports it (empty when it reports none)."""
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (TypeError, KeyError):  # numpy < 1.25: no dict form
        return {}
    if not info.get("found"):
        return {}
    return {"name": str(info.get("name", "")), "version": str(info.get("version", ""))}


def set_matmul_block_backend(mode: str) -> None:
    """Choose the kernel of matrix products: ``"auto"``, ``"naive"``, ``"accelerate"`` or
    ``"cblas"`` (see the module docstring).

    >>> set_matmul_block_backend("naive"); get_selected_matmul_block_backend()
    'naive'
    >>> set_matmul_block_backend("auto")
    """
    _mode[0] = parse_choice(mode, "mode", MODES)


def get_matmul_block_backend() -> str:
    """The mode :func:`set_matmul_block_backend` last set (``"auto"`` at start).

    >>> get_matmul_block_backend()
    'auto'
    """
    return _mode[0]


def get_selected_matmul_block_backend() -> str:
    """The kernel products use now: ``"accelerate"`` or ``"cblas"`` when that mode (or
    ``"auto"``) is set and numpy's BLAS is that one, else ``"naive"``.

    >>> get_selected_matmul_block_backend() in ("naive", "accelerate", "cblas")
    True
    """
    mode = _mode[0]
    name = _blas().get("name", "").lower()
    if not name or mode == "naive":
        return "naive"
    have = "accelerate" if "accelerate" in name else "cblas"
    return have if mode in ("auto", have) else "naive"


def get_loaded_matmul_cblas_library() -> str | None:
    """numpy's BLAS, name and version, as numpy reports it (None when it reports none).

    >>> lib = get_loaded_matmul_cblas_library()
    >>> lib is None or isinstance(lib, str)
    True
    """
    blas = _blas()
    return f"{blas['name']} {blas['version']}".strip() if blas else None


def block_matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``a @ b`` into ``out`` (its dtype numpy's for the pair) with the selected kernel.

    >>> block_matmul(np.ones((2, 3)), np.ones((3, 2)), np.empty((2, 2))).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
    """
    if get_selected_matmul_block_backend() == "naive" and out.dtype.kind in "fc":
        return np.einsum("...ij,...jk->...ik", a, b, out=out)
    return np.matmul(a, b, out=out)


@cache
def _threadpool_limits() -> Callable[..., Any] | None:
    try:  # the ``fast`` extra; imported here only, when a product first runs
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which numpy's BLAS uses one thread per call (``threadpoolctl``; a null
    context without it). It is process-wide while it lasts.

    >>> with one_blas_thread():
    ...     float((np.ones((2, 2)) @ np.ones((2, 2)))[0, 0])
    2.0
    """
    limits = _threadpool_limits()
    return nullcontext() if limits is None else limits(limits=1, user_api="blas")


def _bands(rows: int, row_bytes: int, nthreads: int) -> list[tuple[int, int]]:
    """Row ranges of a step's product: at least one per thread, each product buffer at most
    :data:`.plan.STEP_BYTES` / ``nthreads`` (bands run side by side).

    >>> _bands(10, 8, 2)
    [(0, 5), (5, 10)]
    """
    most = max(1, plan.STEP_BYTES // max(1, row_bytes * nthreads))
    band = max(1, min(-(-rows // max(1, nthreads)), most))
    return [(r0, min(r0 + band, rows)) for r0 in range(0, rows, band)]


def banded_matmul(
    acc: np.ndarray, x: np.ndarray, y: np.ndarray, first: bool, nthreads: int
) -> None:
    """``acc = x @ y`` (``first``) or ``acc += x @ y``, in bands of rows on ``nthreads``
    threads (numpy's products release the GIL; see :func:`one_blas_thread`).

    >>> acc = np.empty((3, 2))
    >>> banded_matmul(acc, np.ones((3, 4)), np.ones((4, 2)), True, 2)
    >>> banded_matmul(acc, np.ones((3, 1)), np.ones((1, 2)), False, 2); acc.tolist()
    [[5.0, 5.0], [5.0, 5.0], [5.0, 5.0]]
    """
    rows = acc.shape[-2]

    def band(r: tuple[int, int]) -> None:
        part, into = x[..., r[0] : r[1], :], acc[..., r[0] : r[1], :]
        if first:
            block_matmul(part, y, into)
        else:
            np.add(into, block_matmul(part, y, np.empty(into.shape, acc.dtype)), out=into)

    run_parallel(band, _bands(rows, acc.nbytes // max(1, rows), nthreads), nthreads)
