"""FULL's out-of-core build: the values sorted in runs that fit a budget, the runs merged
pairwise with bounded buffers, the last merge written straight into the index's pieces
(python-blosc2 4.x's ``build="auto"`` for FULL).

Each run is ``run_items`` consecutive rows (``RUN_ITEMS`` per chunk multiplier of
``optlevel``, or ``$BLOSC2_FULL_OOC_RUN_ITEMS``, at least one array chunk) sorted stably
with their positions and kept in a temporary directory (the ``tmpdir`` given, else the
array's directory, else the system's). Merging two runs of consecutive rows keeps the
earlier run's items first among equal values, so the result is the stable sort. Memory is
one run while sorting, two buffers of ``MERGE_BUFFER_ITEMS`` and one index chunk while
merging.

>>> import numpy as np
>>> a = Buffered(np.array([1, 3, 5]), np.arange(3))
>>> b = Buffered(np.array([3, 4]), np.arange(3, 5))
>>> [v.tolist() for v in _step(a, b)]
[[1, 3, 3, 4], [0, 1, 3, 4]]
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..frame.location import remove_urlpath
from ..ndarray.constructors import empty
from ..ndarray.constructors import open as open_array
from .build import BuildContext, Reader, boundaries
from .kinds import chunk_multiplier, opsi_storage_chunk_len

__all__ = ["MERGE_BUFFER_ITEMS", "RUN_ITEMS", "Buffered", "build_full_ooc", "run_budget"]

#: rows per sorted run, per chunk multiplier of ``optlevel`` (python-blosc2's value)
RUN_ITEMS = 10_000_000
#: rows read at a time from each run being merged
MERGE_BUFFER_ITEMS = 500_000
_ENV = "BLOSC2_FULL_OOC_RUN_ITEMS"


def run_budget(optlevel: int) -> tuple[int, str]:
    """Rows per run and where that came from (``"env"`` or ``"optlevel"``).

    >>> run_budget(5)[1] in ("env", "optlevel")
    True
    """
    env = os.getenv(_ENV)
    if env is not None:
        try:
            return max(1, int(env)), "env"
        except ValueError:
            pass
    return RUN_ITEMS * chunk_multiplier(optlevel), "optlevel"


class Buffered:
    """A sorted run read a buffer at a time (or held whole: ``values``/``positions``)."""

    def __init__(self, values: Any, positions: Any, length: int | None = None) -> None:
        self.src_v, self.src_p = values, positions
        self.length = len(values) if length is None else length
        self.at = 0
        self.v = np.empty(0, getattr(values, "dtype", np.float64))
        self.p = np.empty(0, np.int64)

    @property
    def done(self) -> bool:
        return self.at >= self.length and not len(self.v)

    def fill(self) -> None:
        """Read the next buffer when this one is used up."""
        if len(self.v) or self.at >= self.length:
            return
        b = min(self.length, self.at + MERGE_BUFFER_ITEMS)
        self.v = np.asarray(self.src_v[self.at : b])
        self.p = np.asarray(self.src_p[self.at : b], dtype=np.int64)
        self.at = b

    def take(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        v, p = self.v[:k], self.p[:k]
        self.v, self.p = self.v[k:], self.p[k:]
        return v, p


def _step(a: Buffered, b: Buffered) -> tuple[np.ndarray, np.ndarray]:
    """The next merged items of runs ``a`` (earlier rows) and ``b``: everything that can
    no longer be preceded by an unread item of either."""
    a.fill()
    b.fill()
    if not len(a.v) or not len(b.v):
        one = b if not len(a.v) else a
        return one.take(len(one.v))
    a_last, b_last = a.v[-1:], b.v[-1:]
    if int(np.searchsorted(b_last, a_last[0], "left")) == 0:  # a_last <= b_last (NaN last)
        av, ap = a.take(len(a.v))
        bv, bp = b.take(int(np.searchsorted(b.v, a_last[0], "left")))
    else:
        av, ap = a.take(int(np.searchsorted(a.v, b_last[0], "right")))
        bv, bp = b.take(len(b.v))
    v, p = np.concatenate([av, bv]), np.concatenate([ap, bp])
    order = np.argsort(v, kind="stable")
    return v[order], p[order]


class _Sink:
    """Where merged items go: temporary run files, or the index's pieces (then with the
    chunk and block boundaries of what is written)."""

    def __init__(self, values: Any, positions: Any, clen: int, blen: int) -> None:
        self.values, self.positions, self.clen, self.blen = values, positions, clen, blen
        self.at = 0
        self.bv: list[np.ndarray] = []
        self.bp: list[np.ndarray] = []
        self.held = 0
        self.l1: list[np.ndarray] = []
        self.l2: list[np.ndarray] = []

    def put(self, v: np.ndarray, p: np.ndarray, last: bool = False) -> None:
        self.bv.append(v)
        self.bp.append(p)
        self.held += len(v)
        if self.held < self.clen and not last:
            return
        v, p = np.concatenate(self.bv), np.concatenate(self.bp)
        k = len(v) if last else len(v) // self.clen * self.clen
        if k:
            self.values[self.at : self.at + k] = v[:k]
            self.positions[self.at : self.at + k] = p[:k]
            self.l1.append(boundaries(v[:k], self.clen))
            self.l2.append(boundaries(v[:k], self.blen))
            self.at += k
        self.bv, self.bp, self.held = [v[k:]], [p[k:]], len(v) - k


def _merge(a: Buffered, b: Buffered, sink: _Sink) -> None:
    while not (a.done and b.done):
        v, p = _step(a, b)
        sink.put(v, p)
    sink.put(np.empty(0, sink.values.dtype), np.empty(0, np.int64), last=True)


def build_full_ooc(
    ctx: BuildContext,
    read: Reader,
    n: int,
    dtype: np.dtype,
    optlevel: int,
    tmpdir: str | None,
) -> dict[str, Any]:
    """FULL's section, built in sorted runs merged out of core."""
    mult = chunk_multiplier(optlevel)
    clen = opsi_storage_chunk_len(ctx.chunk_len, ctx.block_len, mult)
    blen = ctx.block_len
    budget, source = run_budget(optlevel)
    run_items = max(ctx.chunk_len, min(n, budget))
    geo = {"chunks": (max(1, min(clen, n)),), "blocks": (max(1, min(blen, n)),)}
    values, vpath = ctx.create("full", "values", n, dtype, **geo)
    positions, ppath = ctx.create("full", "positions", n, np.dtype(np.int64), **geo)
    final = _Sink(values, positions, clen, blen)
    stats = {"written": 0, "held": 0, "peak": 0}
    workdir = tmpdir
    if workdir is None and ctx.persistent:
        workdir = str(Path(ctx.array.urlpath).resolve().parent)
    with tempfile.TemporaryDirectory(prefix="blosc2-index-ooc-", dir=workdir) as tmp:
        runs: list[tuple[str, str, int]] = []

        serial = [0]

        def new_run(length: int) -> tuple[Any, Any, tuple[str, str, int]]:
            serial[0] += 1
            vp = os.path.join(tmp, f"run{serial[0]}.values.b2nd")
            pp = os.path.join(tmp, f"run{serial[0]}.positions.b2nd")
            v = empty((length,), dtype, urlpath=vp, mode="w")
            p = empty((length,), np.int64, urlpath=pp, mode="w")
            return v, p, (vp, pp, length)

        def kept(run: tuple[str, str, int]) -> tuple[str, str, int]:
            for path in run[:2]:
                size = os.path.getsize(path)
                stats["written"] += size
                stats["held"] += size
            stats["peak"] = max(stats["peak"], stats["held"])
            return run

        def keep(v: np.ndarray, p: np.ndarray) -> tuple[str, str, int]:
            hv, hp, run = new_run(len(v))
            hv[:] = v
            hp[:] = p
            del hv, hp
            return kept(run)

        def drop(run: tuple[str, str, int]) -> None:
            for path in run[:2]:
                stats["held"] -= os.path.getsize(path)
                remove_urlpath(path)

        for start in range(0, n, run_items):
            v = read(start, min(n, start + run_items))
            order = np.argsort(v, kind="stable")
            sv, sp = v[order], (order + start).astype(np.int64)
            if n <= run_items:  # one run: straight into the pieces
                final.put(sv, sp, last=True)
                break
            runs.append(keep(sv, sp))
        while len(runs) > 2:
            merged = []
            for i in range(0, len(runs) - 1, 2):
                ra, rb = runs[i], runs[i + 1]
                hv, hp, into = new_run(ra[2] + rb[2])
                _merge(_open(ra), _open(rb), _Sink(hv, hp, max(1, MERGE_BUFFER_ITEMS), 1))
                del hv, hp
                merged.append(kept(into))
                drop(ra)
                drop(rb)
            if len(runs) % 2:
                merged.append(runs[-1])
            runs = merged
        if len(runs) == 2:
            _merge(_open(runs[0]), _open(runs[1]), final)
        elif len(runs) == 1:
            _merge(_open(runs[0]), Buffered(np.empty(0, dtype), np.empty(0, np.int64)), final)
    if n == 0:
        final.put(np.empty(0, dtype), np.empty(0, np.int64), last=True)
    l1 = np.concatenate(final.l1) if final.l1 else boundaries(np.empty(0, dtype), 1)
    l2 = np.concatenate(final.l2) if final.l2 else boundaries(np.empty(0, dtype), 1)
    return {
        "values_path": vpath,
        "positions_path": ppath,
        "chunk_multiplier": mult,
        "sidecar_chunk_len": clen,
        "sidecar_block_len": blen,
        "runs": [],
        "next_run_id": 0,
        "l1_path": ctx.write("full_nav", "l1", l1),
        "l2_path": ctx.write("full_nav", "l2", l2),
        "l1_dtype": l1.dtype.descr,
        "l2_dtype": l2.dtype.descr,
        "ooc_run_items": run_items,
        "ooc_run_item_budget": budget,
        "ooc_run_item_budget_source": source,
        "temp_backend": "blosc2",
        "temp_peak_disk_bytes": stats["peak"],
        "temp_total_written_bytes": stats["written"],
        "build_method": "global-sort",
    }


def _open(run: tuple[str, str, int]) -> Buffered:
    return Buffered(open_array(run[0], mode="r"), open_array(run[1], mode="r"), run[2])
