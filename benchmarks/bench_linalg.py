"""Linear algebra on arrays in files: pyblosc2 against python-blosc2, each run in a fresh child.

Run::

    python benchmarks/bench_linalg.py                      # 4000 x 4000 float64, 3 rounds
    python benchmarks/bench_linalg.py --n 2000 --repeat 5 --json out.json

python-blosc2 writes the operands once (``a.b2nd``, ``b.b2nd``: normal values rounded to 3
decimals, its default chunks and cparams); both libraries then read the same files and write
their result to a file of their own. Each measurement is one child process (its own peak RSS,
``VmHWM``; Linux), the libraries alternating round by round so both see the same machine load; a
row gives the median time of each, ``ratio`` = python-blosc2's time / ours (1.0 = parity,
higher is better), each one's peak RSS, and the load average when the row ended. Rows:
``matmul`` (``a @ b`` into a file) and ``permute_dims`` (``a`` transposed into a file).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

CHILD = r"""
import json, sys, time
lib, op, d = sys.argv[1:4]
if lib == "ours":
    import pyblosc2 as m
else:
    import blosc2 as m
a, b = m.open(d + "/a.b2nd"), m.open(d + "/b.b2nd")
out = f"{d}/out_{lib}.b2nd"
t = time.perf_counter()
if op == "matmul":
    c = m.matmul(a, b, urlpath=out, mode="w")
else:
    c = m.permute_dims(a, urlpath=out, mode="w")
dt = time.perf_counter() - t
with open("/proc/self/status") as f:  # VmHWM: this process's peak (ru_maxrss is inherited)
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
print(json.dumps({"s": dt, "rss_mb": hwm / 1024}))
"""


def _run(lib: str, op: str, d: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, lib, op, d], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4000, help="matrices of n x n")
    ap.add_argument("--repeat", type=int, default=3, help="rounds (median)")
    ap.add_argument("--ops", nargs="+", default=["matmul", "permute_dims"])
    ap.add_argument("--json", help="write the rows here as JSON")
    args = ap.parse_args()

    import blosc2 as C
    import numpy as np

    import pyblosc2 as P
    from pyblosc2.linalg import get_selected_matmul_block_backend

    print(
        f"# bench_linalg | pyblosc2 {P.__version__} (matmul kernel "
        f"{get_selected_matmul_block_backend()}, {P.get_matmul_library()}) | python-blosc2 "
        f"{C.__version__} | {args.n} x {args.n} float64 in files | {os.cpu_count()} cores | "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(f"# command: python {' '.join(sys.argv)}\n")
    print("| operation | python-blosc2 s | pyblosc2 s | ratio | RSS C MB | RSS ours MB | load |")
    print("|---|---|---|---|---|---|---|")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.default_rng(0)
        for name in ("a", "b"):
            x = rng.standard_normal((args.n, args.n)).round(3)
            C.asarray(x, urlpath=f"{d}/{name}.b2nd", mode="w")
        for op in args.ops:
            runs: dict[str, list[dict[str, float]]] = {"C": [], "ours": []}
            for _ in range(args.repeat):
                for lib in runs:
                    runs[lib].append(_run(lib, op, d))
            if op == "matmul":  # the two results agree (float sums: rounding only)
                ours, theirs = P.open(f"{d}/out_ours.b2nd")[...], C.open(f"{d}/out_C.b2nd")[...]
                np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-8)
            t = {k: statistics.median(r["s"] for r in v) for k, v in runs.items()}
            rss = {k: max(r["rss_mb"] for r in v) for k, v in runs.items()}
            load = os.getloadavg()[0]
            row = {"op": op, "n": args.n, "C_s": t["C"], "ours_s": t["ours"]}
            row |= {"ratio": t["C"] / t["ours"], "C_rss_mb": rss["C"], "ours_rss_mb": rss["ours"]}
            row |= {"ours_range_s": [r["s"] for r in runs["ours"]], "load": load}
            rows.append(row)
            print(
                f"| {op} | {t['C']:.2f} | {t['ours']:.2f} | {t['C'] / t['ours']:.2f} | "
                f"{rss['C']:.0f} | {rss['ours']:.0f} | {load:.1f} |",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "time": time.time()}, f, indent=1)


if __name__ == "__main__":
    main()
