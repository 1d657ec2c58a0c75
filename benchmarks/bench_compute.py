"""The rows of issue 33: the compute engine over two on-disk float64 arrays written by
python-blosc2, pyblosc2 against python-blosc2, each row in a fresh process per library.

Run::

    python benchmarks/bench_compute.py                     # 10,000 x 10,000 (800 MB each)
    python benchmarks/bench_compute.py --size 2000 --json out.json

The arrays are ``linspace(0, 1)`` and ``linspace(1, 2)`` of ``size x size`` written by
python-blosc2 with its defaults (chunks and blocks of its choosing, zstd clevel 1 + shuffle).
Every row runs in a fresh interpreter (python-blosc2, then pyblosc2, ``--repeat`` times,
interleaved), which opens the arrays, loads pyblosc2's kernel set (numba, when installed, is
loaded before the measure starts), and times the row once; ``peak MB`` is the process's
``VmHWM`` at the end (Linux: the whole interpreter, numpy and the libraries included), ``time``
the median of the repeats and ``ratio`` = python-blosc2's time / pyblosc2's (1.0 = parity,
higher is better). The machine's load average is printed before and after: timings on a
loaded machine are noisy, the ratios less so.
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

WORKER = r"""
import json, sys, time
import numpy as np
def udf(inputs, output, offset):
    x, y = inputs
    np.multiply(x, 2, out=output)
    output += y
lib, row, d, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
blosc2 = __import__("blosc2" if lib == "C" else "pyblosc2")
if lib != "C":
    from pyblosc2.kernels.select import active, wait_for_kernels
    active(); wait_for_kernels(120)
    # python-blosc2's import loads its engine and tables: ours too, before the clock
    import pyblosc2.compute, pyblosc2.linalg, pyblosc2.indexes, pyblosc2.ctable.table
a = blosc2.open(f"{d}/a.b2nd", mode="r")
b = blosc2.open(f"{d}/b.b2nd", mode="r")
r0 = int(n * 0.4)
rows = {
    "(a * 2 + b).compute(urlpath=...)":
        lambda: (a * 2 + b).compute(urlpath=f"{d}/out-{lib}.b2nd", mode="w"),
    'lazyexpr("sin(a) + b ** 2").compute()':
        lambda: blosc2.lazyexpr("sin(a) + b ** 2", operands={"a": a, "b": b}).compute(),
    "(a + b).sum()": lambda: float((a + b).sum()),
    "mean(a, axis=0)": lambda: blosc2.mean(a, axis=0),
    "where(a > 0.5, a, 0).compute(urlpath=...)":
        lambda: blosc2.where(a > 0.5, a, 0).compute(urlpath=f"{d}/w-{lib}.b2nd", mode="w"),
    "(a * 3 - b)[ten rows]": lambda: (a * 3 - b)[r0 : r0 + 10],
    "a[a > 0.9999][:]": lambda: a[a > 0.9999][:],
    "lazyudf(a * 2 + b).compute(urlpath=...)":
        lambda: blosc2.lazyudf(udf, (a, b), np.float64).compute(
            urlpath=f"{d}/u-{lib}.b2nd", mode="w"),
}
t = time.perf_counter()
res = rows[row]()
elapsed = time.perf_counter() - t
with open("/proc/self/status") as f:
    peak = next(int(x.split()[1]) for x in f if x.startswith("VmHWM")) / 1024
print(json.dumps({"time": elapsed, "peak_mb": peak}))
"""

ROWS = [
    "(a * 2 + b).compute(urlpath=...)",
    'lazyexpr("sin(a) + b ** 2").compute()',
    "(a + b).sum()",
    "mean(a, axis=0)",
    "where(a > 0.5, a, 0).compute(urlpath=...)",
    "(a * 3 - b)[ten rows]",
    "a[a > 0.9999][:]",
    "lazyudf(a * 2 + b).compute(urlpath=...)",
]


def make_arrays(d: str, n: int) -> None:
    """The two operands, written by python-blosc2."""
    import blosc2

    blosc2.linspace(0, 1, n * n, shape=(n, n), urlpath=f"{d}/a.b2nd", mode="w")
    blosc2.linspace(1, 2, n * n, shape=(n, n), urlpath=f"{d}/b.b2nd", mode="w")


def run(lib: str, row: str, d: str, n: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, lib, row, d, str(n)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"{lib} {row}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--size", type=int, default=10_000, help="the arrays are size x size")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--dir", default=None, help="where the arrays are written (default: a temp dir)")
    p.add_argument("--only", default=None, help="run the rows whose name contains this")
    p.add_argument("--reuse", action="store_true", help="keep the arrays --dir already holds")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    d = args.dir or tempfile.mkdtemp(prefix="bench_compute-")
    os.makedirs(d, exist_ok=True)
    load0 = os.getloadavg()
    have = all(os.path.exists(f"{d}/{name}.b2nd") for name in ("a", "b"))
    if args.reuse and have:
        print(f"arrays kept as they are in {d}")
    else:
        t = time.perf_counter()
        make_arrays(d, args.size)
        print(
            f"arrays {args.size}x{args.size} float64 written in "
            f"{time.perf_counter() - t:.1f} s, in {d}"
        )
    print(f"load average before: {load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f}")
    table = []
    print(
        "| row | python-blosc2 s | pyblosc2 s | ratio | python-blosc2 peak MB | pyblosc2 peak MB |"
    )
    print("|---|---|---|---|---|---|")
    for row in ROWS:
        if args.only and args.only not in row:
            continue
        got: dict[str, list[dict[str, float]]] = {"C": [], "ours": []}
        for _ in range(args.repeat):
            for lib in ("C", "ours"):
                got[lib].append(run(lib, row, d, args.size))
        tc = statistics.median(r["time"] for r in got["C"])
        to = statistics.median(r["time"] for r in got["ours"])
        pc = max(r["peak_mb"] for r in got["C"])
        po = max(r["peak_mb"] for r in got["ours"])
        table.append(
            {
                "row": row,
                "C_s": tc,
                "ours_s": to,
                "ratio": tc / to,
                "C_peak_mb": pc,
                "ours_peak_mb": po,
            }
        )
        print(
            f"| `{row}` | {tc:.3f} | {to:.3f} | {tc / to:.2f} | {pc:.0f} | {po:.0f} |", flush=True
        )
    load1 = os.getloadavg()
    print(f"load average after: {load1[0]:.1f} {load1[1]:.1f} {load1[2]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": args.size, "load": [load0, load1], "rows": table}, f, indent=1)


if __name__ == "__main__":
    main()
