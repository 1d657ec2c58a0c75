"""What bounds issue 33's ``(a + b).sum()`` row: decoding a chunk of split zstd streams, per
chunk, on one thread and on two, python-blosc2 against pyblosc2 and against python-zstandard
called alone on the same streams.

Run::

    python benchmarks/bench_zstd_streams.py             # 100 chunks of 8 MB (issue 33's a.b2nd)
    python benchmarks/bench_zstd_streams.py --rows 1000 --json out.json

The array is ``linspace(0, 1)`` of ``rows x 10,000`` float64 written by python-blosc2 with its
defaults (zstd + shuffle, blocks of two rows: each block split into 8 streams, so ~400
streams per chunk). Rows: the time per chunk (median of ``--repeat`` passes over every chunk)
of python-blosc2's ``decompress_chunk``, pyblosc2's, and a loop of python-zstandard's
``decompress`` over the chunk's coded streams (what any Python caller of the binding pays),
each on one thread and on two (two Python threads taking every other chunk, as a reduction's
pieces do). ``2-thread gain`` = one-thread time / two-thread time per chunk: 2.0 when the
second thread runs free, 1.0 when the GIL serializes them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def per_chunk(work: Callable[[Sequence[int]], None], n: int, threads: int, repeat: int) -> float:
    """Median seconds per chunk of ``work`` over chunks ``0..n-1`` split among ``threads``."""
    times = []
    for _ in range(repeat):
        parts = [range(k, n, threads) for k in range(threads)]
        ts = [threading.Thread(target=work, args=(p,)) for p in parts]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def coded_streams(chunk: bytes) -> list[memoryview]:
    """The zstd-coded streams of ``chunk`` (runs and raw streams left out), read with
    pyblosc2's own stream walk."""
    from pyblosc2.chunk.decode import ChunkReader
    from pyblosc2.chunk.streams import walk_streams

    r = ChunkReader.open(chunk)
    h, mv, out = r.header, memoryview(chunk), []
    for j, pos in enumerate(r.bstarts.tolist()):
        nst = h.nstreams(j)
        neblock = h.block_size(j) // nst
        sizes, starts, ends = walk_streams(mv, pos, nst, h.cbytes)
        out += [mv[s:e] for c, s, e in zip(sizes, starts, ends, strict=True) if 0 < c != neblock]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the rows here as JSON")
    args = ap.parse_args()

    import blosc2 as C
    import results
    import zstandard

    import pyblosc2 as P
    from pyblosc2.kernels.select import active, wait_for_kernels

    active()
    wait_for_kernels(120)
    run = results.start("bench_zstd_streams", rows=args.rows, repeat=args.repeat)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a.b2nd")
        C.asarray(np.linspace(0, 1, args.rows * 10_000).reshape(args.rows, 10_000), urlpath=path)
        c_arr, ours = C.open(path, mode="r"), P.open(path, mode="r")
        n = ours.schunk.nchunks
        chunks = [bytes(ours.schunk.get_chunk(i)) for i in range(n)]
        streams = [coded_streams(c) for c in chunks]
        per = statistics.mean(len(s) for s in streams)
        mib = ours.schunk.chunksize / 2**20
        print(f"{n} chunks of {mib:.1f} MiB, {per:.0f} coded streams each")

        def c_work(ids: Sequence[int]) -> None:
            for i in ids:
                c_arr.schunk.decompress_chunk(i)

        def our_work(ids: Sequence[int]) -> None:
            for i in ids:
                ours.schunk.decompress_chunk(i)

        def zstd_work(ids: Sequence[int]) -> None:
            dctx = zstandard.ZstdDecompressor()
            for i in ids:
                for s in streams[i]:
                    dctx.decompress(s)

        rows: list[dict[str, Any]] = []
        for label, work, lib in (
            ("python-blosc2 decompress_chunk", c_work, C),
            ("pyblosc2 decompress_chunk", our_work, P),
            ("python-zstandard alone, its streams", zstd_work, None),
        ):
            if lib is not None:
                lib.set_nthreads(1)  # the threads are the caller's, as in a reduction
            one = per_chunk(work, n, 1, args.repeat)
            two = per_chunk(work, n, 2, args.repeat)
            rows.append(
                {"row": label, "one thread ms": one * 1e3, "two threads ms": two * 1e3,
                 "2-thread gain": one / two}
            )  # fmt: skip
        C.set_nthreads(2)
        rows.append(
            {"row": "python-blosc2, its own 2 threads", "one thread ms": None,
             "two threads ms": per_chunk(c_work, n, 1, args.repeat) * 1e3, "2-thread gain": None}
        )  # fmt: skip
    print("| row | one thread ms | two threads ms | 2-thread gain |")
    print("|---|---|---|---|")
    for r in rows:
        cells = [f"{r[k]:.2f}" if r[k] is not None else "-" for k in list(r)[1:]]
        print(f"| {r['row']} | " + " | ".join(cells) + " |")
    if args.json:
        results.write(args.json, run, rows)


if __name__ == "__main__":
    main()
