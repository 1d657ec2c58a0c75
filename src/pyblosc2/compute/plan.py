"""The memory a computation needs, known before it runs (as Cubed's ``allowed_mem``).

Every evaluation is planned first: the pieces it computes, how many run at once (the thread
count), and its projected peak — each running piece's working set (the operand parts it
reads, the chunk each array operand decodes for them, the temporaries of the expression, the
piece of the result) plus what the whole operation holds (a numpy result, the accumulators of
a reduction, the compressed chunks waiting for a commit). The bound is ``max_memory=`` when
given, else the ``PYBLOSC2_MAX_MEMORY`` environment variable (bytes), else the memory the
machine has available now (``MemAvailable`` in ``/proc/meminfo``; where there is none,
``os.sysconf`` available pages; failing both, :data:`FALLBACK_BOUND`). A plan whose peak
exceeds the bound first tries fewer threads and smaller pieces; when even one piece at a time
does not fit, :class:`~pyblosc2.errors.MemoryBudgetError` is raised before anything is
allocated or read.

>>> p = Plan.make("a + b as numpy", per_piece=1 << 20, fixed=8 << 20, nthreads=2, bound=64 << 20)
>>> p.peak == (8 << 20) + 2 * ((1 << 20) + THREAD_OVERHEAD), p.nthreads
(True, 2)
>>> too_big = dict(per_piece=1 << 20, fixed=100 << 20, nthreads=2, bound=64 << 20)
>>> Plan.make("a[...]", **too_big)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pyblosc2.errors.MemoryBudgetError: a[...] needs 114294784 bytes (0.11 GiB), over the memory ...
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import MemoryBudgetError, ParamError

__all__ = ["FALLBACK_BOUND", "Plan", "available_memory", "memory_bound"]

#: the bound when the machine's available memory cannot be read (2 GiB)
FALLBACK_BOUND = 2 << 30
#: where Linux says how much memory is available
MEMINFO = "/proc/meminfo"
#: what a running piece holds beyond its arrays: codec contexts and scratch buffers of its
#: thread, the C libraries' buffers, the allocator's per-thread slack (measured: the peak RSS
#: of a 2-thread computation rose 10-20 MiB over the arrays numpy and Python allocated)
THREAD_OVERHEAD = 8 << 20


def available_memory() -> int:
    """The memory this machine has available now, in bytes (``MemAvailable`` from
    ``/proc/meminfo``, else available pages times the page size, else
    :data:`FALLBACK_BOUND`).

    >>> available_memory() > 0
    True
    """
    try:
        with open(MEMINFO, "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages = os.sysconf("SC_AVPHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and size > 0:
            return int(pages) * int(size)
    except (AttributeError, OSError, ValueError):
        pass
    return FALLBACK_BOUND


def memory_bound(max_memory: Any = None) -> int:
    """The bound a computation runs under: ``max_memory`` (bytes, a positive int), else
    ``PYBLOSC2_MAX_MEMORY``, else :func:`available_memory`.

    >>> memory_bound(1 << 20)
    1048576
    >>> memory_bound(0)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: max_memory must be a positive number of bytes, got 0
    """
    if max_memory is None:
        env = os.environ.get("PYBLOSC2_MAX_MEMORY")
        if env:
            try:
                return memory_bound(int(env))
            except ValueError:
                raise ParamError(
                    f"PYBLOSC2_MAX_MEMORY must be a number of bytes, got {env!r}"
                ) from None
        return available_memory()
    if isinstance(max_memory, bool) or not isinstance(max_memory, int | float) or max_memory < 1:
        raise ParamError(f"max_memory must be a positive number of bytes, got {max_memory!r}")
    return int(max_memory)


@dataclass(frozen=True, slots=True)
class Plan:
    """How a computation runs: ``nthreads`` pieces at a time, each needing ``per_piece``
    bytes, while the operation holds ``fixed`` bytes; ``peak`` is what it projects."""

    what: str
    per_piece: int
    fixed: int
    nthreads: int
    bound: int

    @property
    def peak(self) -> int:
        """The projected peak memory, in bytes."""
        return self.fixed + (self.per_piece + THREAD_OVERHEAD) * self.nthreads

    @classmethod
    def make(cls, what: str, per_piece: int, fixed: int, nthreads: int, bound: int) -> Plan:
        """The plan with the most threads (up to ``nthreads``) whose peak fits ``bound``;
        :class:`MemoryBudgetError` when even one thread does not fit."""
        n = max(1, nthreads)
        while n > 1 and fixed + (per_piece + THREAD_OVERHEAD) * n > bound:
            n -= 1
        plan = cls(what, per_piece, fixed, n, bound)
        if plan.peak > bound:
            raise MemoryBudgetError(what, plan.peak, bound)
        return plan
