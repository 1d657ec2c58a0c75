"""Appending many small chunks one by one: pyblosc2 against python-blosc2 in one process.

Run::

    python benchmarks/bench_append.py                         # 1,000 / 10,000 / 100,000 chunks
    python benchmarks/bench_append.py --sizes 1000 40000 --codec blosclz --json out.json

Each library appends 8 KiB int64 chunks (``append_data``, on-disk contiguous frame or, with
``--sparse``, sparse frame, 1 thread)
to its own file; the two files grow in lock step, ``--window`` appends of one library, then
of the other, so both see the same machine load. At each size of ``--sizes`` a row reports,
per library, the median time of one append over the last ``--samples`` windows, the time to
open the file (``blosc2.open``), and the time to read one item of the last chunk from the
freshly opened file (open excluded), each the median of ``--repeat`` runs, and the same read of
one item of ``--random`` chunks picked at random (a fresh open each: the chunk's offset is then
looked up in a block of the index other than the last one's), median; ``ratio`` =
python-blosc2's time / ours (1.0 = parity, higher is better).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Any

import numpy as np

PER_CHUNK = 1024  # int64 items: 8 KiB chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--codec", default="lz4", choices=["lz4", "blosclz", "zstd"])
    ap.add_argument("--window", type=int, default=50, help="appends per timed window")
    ap.add_argument("--samples", type=int, default=9, help="windows per size (median)")
    ap.add_argument("--repeat", type=int, default=7, help="open / read repeats (median)")
    ap.add_argument("--random", type=int, default=41, help="random chunks read (median)")
    ap.add_argument("--sparse", action="store_true", help="sparse frames (a directory)")
    ap.add_argument("--json", help="write the rows here as JSON")
    args = ap.parse_args()

    import blosc2 as C
    import results  # benchmarks/results.py, beside this script

    import pyblosc2 as P

    libs = {"C": C, "ours": P}
    data = np.arange(PER_CHUNK, dtype=np.int64)
    rows: list[dict[str, Any]] = []
    from pyblosc2.kernels import active

    kernels = active().name
    run = results.start(
        "bench_append", sizes=sorted(args.sizes), codec=args.codec, window=args.window,
        samples=args.samples, repeat=args.repeat, sparse=args.sparse, kernels=kernels,
    )  # fmt: skip
    print(
        f"# bench_append | pyblosc2 {P.__version__} ({kernels} kernels) | python-blosc2 "
        f"{C.__version__} | codec {args.codec} | {'sparse' if args.sparse else 'contiguous'} "
        f"frames | 8 KiB chunks | 1 thread | load "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(f"# command: python {' '.join(sys.argv)}\n")
    print(
        "| chunks | append C ms | append ours ms | ratio | open C ms | open ours ms | ratio "
        "| 1-item read C ms | ours ms | ratio | random chunk C ms | ours ms | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        ext = "b2frame" if not args.sparse else "sframe"
        paths = {k: os.path.join(tmp, f"{k}.{ext}") for k in libs}
        sch = {}
        for k, m in libs.items():
            cp = m.CParams(codec=getattr(m.Codec, args.codec.upper()), typesize=8, nthreads=1)
            sch[k] = m.SChunk(
                chunksize=PER_CHUNK * 8,
                urlpath=paths[k],
                contiguous=not args.sparse,
                mode="w",
                cparams=cp,
                dparams=m.DParams(nthreads=1),
            )
        done = 0
        for size in sorted(args.sizes):
            times: dict[str, list[float]] = {k: [] for k in libs}
            first_timed = size - args.window * args.samples
            while done < size:
                n = min(args.window, size - done)
                timed = done >= first_timed and n == args.window
                for k in libs:
                    s = sch[k]
                    t = time.perf_counter()
                    for _ in range(n):
                        s.append_data(data)
                    if timed:
                        times[k].append((time.perf_counter() - t) / n)
                done += n
            opens: dict[str, list[float]] = {k: [] for k in libs}
            reads: dict[str, list[float]] = {k: [] for k in libs}
            item = (size - 1) * PER_CHUNK + 7
            for _ in range(args.repeat):
                for k, m in libs.items():
                    t = time.perf_counter()
                    s = m.open(paths[k], mode="r")
                    t1 = time.perf_counter()
                    got = s.get_slice(item, item + 1)
                    t2 = time.perf_counter()
                    assert np.frombuffer(got, np.int64)[0] == 7
                    opens[k].append(t1 - t)
                    reads[k].append(t2 - t1)
                    del s
            rnd: dict[str, list[float]] = {k: [] for k in libs}
            for c in np.random.default_rng(size).integers(0, size, args.random).tolist():
                item = c * PER_CHUNK + 7
                for k, m in libs.items():
                    s = m.open(paths[k], mode="r")
                    t1 = time.perf_counter()
                    got = s.get_slice(item, item + 1)
                    rnd[k].append(time.perf_counter() - t1)
                    assert np.frombuffer(got, np.int64)[0] == 7
                    del s
            r: dict[str, Any] = {"chunks": size, "codec": args.codec, "kernels": kernels}
            cells = [f"{size:,}"]
            series_all = (("append", times), ("open", opens), ("read", reads), ("random", rnd))
            for name, series in series_all:
                c_ms = statistics.median(series["C"]) * 1e3
                o_ms = statistics.median(series["ours"]) * 1e3
                r[f"{name}_C_ms"], r[f"{name}_ours_ms"] = c_ms, o_ms
                r[f"{name}_ours_range_ms"] = (min(series["ours"]) * 1e3, max(series["ours"]) * 1e3)
                r[f"{name}_ratio"] = c_ms / o_ms
                cells += [f"{c_ms:.3f}", f"{o_ms:.3f}", f"{c_ms / o_ms:.2f}"]
            rows.append(r)
            print("| " + " | ".join(cells) + " |", flush=True)
    if args.json:
        results.write(args.json, run, rows)  # benchmarks/results.py's schema


if __name__ == "__main__":
    main()
