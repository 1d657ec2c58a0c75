"""Readers following a growing file (SWMR, no locking), as a user runs it: one writer grows an
on-disk ``(0, 8)`` int64 array by ``--batches`` batches of ``--rows`` rows (resize, then the
batch written), while ``--readers`` reader processes opened before it follow the new shape
(``refresh()``), read and verify every batch that is settled (the one before the last; a read
that races the writer and fails is retried, as python-blosc2 documents), and stop at a vlmeta
flag the writer sets last (python-blosc2's ``examples/ndarray/swmr-enlarge.py``
shape, larger).

Run::

    python benchmarks/swmr_follow.py pyblosc2          # or: blosc2
    python benchmarks/swmr_follow.py blosc2 --batches 40

Every process imports its library, chooses its kernels (pyblosc2: ``PYBLOSC2_KERNELS`` as in
the environment, loaded and warmed first) and opens the file before the clock starts; the time
is from the writer's first resize to the last reader's last check. Printed as JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import tempfile
import time
from typing import Any

import numpy as np

NCOLS = 8


def _lib(name: str) -> Any:
    mod = __import__(name)
    if name != "blosc2":
        mod.kernels.active()  # the kernel set chosen (numba: loaded and warmed) off the clock
        mod.kernels.wait_for_kernels()
    return mod


def _writer(lib: str, path: str, batches: int, rows: int, ready: Any, go: Any) -> None:
    m = _lib(lib)
    arr = m.open(path, mode="a")
    ready.put("writer")
    go.wait()
    cpu = time.process_time()
    for i in range(batches):
        start = arr.shape[0]
        arr.resize((start + rows, NCOLS))
        arr[start : start + rows, :] = i
        time.sleep(0.005)  # readers see the growth in more than one step
    arr.schunk.vlmeta["done"] = True
    ready.put((time.perf_counter(), time.process_time() - cpu))


def _reader(lib: str, path: str, batches: int, rows: int, ready: Any, done: Any) -> None:
    m = _lib(lib)
    arr = m.open(path, mode="r")
    ready.put("reader")
    cpu = time.process_time()
    verified, finished, polls, retries = 0, False, 0, 0
    while not finished:
        polls += 1
        try:
            arr.refresh()
            settled = max(arr.shape[0] - rows, 0)  # the last batch may still be being written
            if settled > verified:
                block = np.asarray(arr[verified:settled, :])
                _verify(block, verified, rows)
                verified = settled
            finished = "done" in arr.schunk.vlmeta
        except (RuntimeError, ValueError):  # a read racing the writer: retried (as documented)
            retries += 1
        if not finished:
            time.sleep(0.002)
    for _ in range(50):
        try:
            arr.refresh()
            tail = np.asarray(arr[verified : batches * rows, :])
            break
        except (RuntimeError, ValueError):
            retries += 1
            time.sleep(0.005)
    _verify(tail, verified, rows)
    if verified + len(tail) != batches * rows:
        raise AssertionError(f"{verified + len(tail)} rows, not {batches * rows}")
    done.put((time.perf_counter(), polls, retries, time.process_time() - cpu))


def _verify(block: np.ndarray, first: int, rows: int) -> None:
    """Rows ``first...`` of ``block`` hold their batch number."""
    for off in range(0, len(block), rows):
        if not np.all(block[off : off + rows] == (first + off) // rows):
            raise AssertionError(f"batch {(first + off) // rows} is wrong")


def run(lib: str, path: str, batches: int = 400, rows: int = 10_000, readers: int = 3) -> dict:
    """One writer and ``readers`` followers of the array at ``path`` (created here, empty),
    each a fresh process of library ``lib`` (``"blosc2"`` or ``"pyblosc2"``): the seconds
    from the first resize until the last reader is done, each reader's polls, how many reads
    raced the writer and were retried (python-blosc2 raises ``RuntimeError`` then), and the
    CPU seconds each process spent on the clock."""
    m = __import__(lib)
    m.zeros(
        (0, NCOLS), dtype=np.int64, urlpath=path, mode="w", chunks=(rows * 4, NCOLS),
        blocks=(rows, NCOLS),
    )  # fmt: skip
    ctx = multiprocessing.get_context("spawn")
    ready, done, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_reader, args=(lib, path, batches, rows, ready, done))
             for _ in range(readers)]  # fmt: skip
    procs.append(ctx.Process(target=_writer, args=(lib, path, batches, rows, ready, go)))
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=600)
    t0 = time.perf_counter()
    go.set()
    ends = [done.get(timeout=3600) for _ in range(readers)]
    writer_end, writer_cpu = ready.get(timeout=600)
    for p in procs:
        p.join()
    if any(p.exitcode for p in procs):
        raise RuntimeError(f"a process failed: exit codes {[p.exitcode for p in procs]}")
    return {
        "seconds": max(e[0] for e in ends) - t0,
        "writer_s": writer_end - t0,
        "polls": [e[1] for e in ends],
        "retries": sum(e[2] for e in ends),
        "cpu_s": {"writer": writer_cpu, "readers": [e[3] for e in ends]},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lib", choices=["blosc2", "pyblosc2"])
    ap.add_argument("--batches", type=int, default=400)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--readers", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        got = run(args.lib, os.path.join(tmp, "grow.b2nd"), args.batches, args.rows, args.readers)
    print(json.dumps({"lib": args.lib, **got}))


if __name__ == "__main__":
    main()
