"""The user-function rows of issue 33: ``lazyudf`` and ``jit`` (and a DSL kernel) computed
into a file from two on-disk float64 arrays, pyblosc2 against python-blosc2.

Run::

    python benchmarks/bench_udf.py                 # two 10,000 x 10,000 arrays (800 MB each)
    python benchmarks/bench_udf.py --size 4000 --repeat 3 --json out.json

The inputs are written once by python-blosc2 (smooth float64 data, its default cparams:
zstd clevel 1 + shuffle) into a temporary directory (``--dir`` keeps them). Every row runs
in a fresh process per library and repeat, which opens the inputs, computes the row into a
new file (``urlpath=``, ``mode="w"``) and reports its wall time and its peak RSS
(``VmHWM``, the whole process; pyblosc2's codec kernels, numba's when installed, are loaded
before the clock starts, as in bench_reads); the output is checked against numpy on a sample
of rows. A row reports the median time of each library over the repeats, the ratio python-blosc2's
time / ours (1.0 = parity, higher is better) and the largest peak RSS of each. The machine's
load (``os.getloadavg``) is printed with the table: times on a loaded machine are noisy,
the ratio is what counts. Rows:

* ``lazyudf``: ``lazyudf(f, (a, b), np.float64).compute(urlpath=...)`` with
  ``f(inputs, output, offset)`` filling ``output[:] = a * 2 + b``;
* ``jit``: ``@jit(urlpath=..., mode="w")`` on ``np.sin(x) * 2 + y``;
* ``dsl``: ``lazyudf`` of a DSL kernel with an ``if`` (python-blosc2: miniexpr's JIT;
  pyblosc2: numba when installed, else numpy).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROWS = ("lazyudf", "jit", "dsl")

WRITE = r"""
import sys, numpy as np, blosc2
n, d = int(sys.argv[1]), sys.argv[2]
for name, scale, shift in (("a", 1.0, 0.0), ("b", 0.5, 1.0)):
    arr = blosc2.empty((n, n), dtype=np.float64, urlpath=f"{d}/{name}.b2nd", mode="w")
    rows = max(1, (8 << 20) // (8 * n))
    for i in range(0, n, rows):
        j = min(n, i + rows)
        idx = np.arange(i * n, j * n, dtype=np.float64).reshape(j - i, n)
        arr[i:j] = np.sin(idx * 1e-6) * scale + shift
"""

WORKER = r"""
import json, sys, time
import numpy as np
lib, row, d = sys.argv[1:4]
m = __import__("blosc2" if lib == "C" else "pyblosc2")
if lib != "C":  # the codec kernel set (numba's, loading in the background) ready first
    m.kernels.active()
    m.kernels.wait_for_kernels(120)
    # python-blosc2's import loads its engine and tables: ours too, before the clock
    import pyblosc2.compute, pyblosc2.linalg, pyblosc2.indexes, pyblosc2.ctable.table

def hwm():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmHWM")) / 1024

a = m.open(f"{d}/a.b2nd", mode="r")
b = m.open(f"{d}/b.b2nd", mode="r")
out = f"{d}/out_{lib}_{row}.b2nd"

def f(inputs, output, offset):
    x, y = inputs
    output[:] = x * 2 + y

def g(x, y):
    return np.sin(x) * 2 + y

@m.dsl_kernel
def k(x, y):
    if x > 0.5:
        return x * 2 + y
    return y - x

t = time.perf_counter()
if row == "lazyudf":
    res = m.lazyudf(f, (a, b), np.float64).compute(urlpath=out, mode="w")
elif row == "jit":
    res = m.jit(urlpath=out, mode="w")(g)(a, b)
else:
    res = m.lazyudf(k, (a, b), np.float64).compute(urlpath=out, mode="w")
dt = time.perf_counter() - t
peak = hwm()
n = a.shape[0]
rows = slice(n // 2, n // 2 + 3)
x, y = a[rows], b[rows]
want = {"lazyudf": x * 2 + y, "jit": np.sin(x) * 2 + y, "dsl": np.where(x > 0.5, x * 2 + y, y - x)}
ok = bool(np.allclose(res[rows], want[row], rtol=1e-12, atol=1e-12))
print(json.dumps({"time": dt, "rss_mb": peak, "ok": ok}))
"""


def run(lib: str, row: str, d: str) -> dict[str, float]:
    script = Path(d, "worker.py")  # a file: DSL kernels need their source
    script.write_text(WORKER)
    p = subprocess.run(
        [sys.executable, str(script), lib, row, d], capture_output=True, text=True, check=False
    )
    if p.returncode:
        raise RuntimeError(f"{lib} {row} failed:\n{p.stderr[-3000:]}")
    got: dict[str, float] = json.loads(p.stdout.strip().splitlines()[-1])
    if not got["ok"]:
        raise RuntimeError(f"{lib} {row}: wrong result")
    Path(d, f"out_{lib}_{row}.b2nd").unlink(missing_ok=True)
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=10_000, help="side of the square inputs")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--dir", help="where the inputs are (kept); default: a temporary dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        d = args.dir or tmp
        if not Path(d, "a.b2nd").exists() or not args.dir:
            subprocess.run([sys.executable, "-c", WRITE, str(args.size), d], check=True)
        results = []
        for row in args.rows.split(","):
            times: dict[str, list[float]] = {"C": [], "ours": []}
            rss: dict[str, float] = {"C": 0.0, "ours": 0.0}
            for _ in range(args.repeat):
                for lib in ("C", "ours"):
                    got = run(lib, row, d)
                    times[lib].append(got["time"])
                    rss[lib] = max(rss[lib], got["rss_mb"])
            c, ours = statistics.median(times["C"]), statistics.median(times["ours"])
            results.append(
                {
                    "row": row,
                    "python-blosc2 s": round(c, 2),
                    "pyblosc2 s": round(ours, 2),
                    "ratio": round(c / ours, 2),
                    "python-blosc2 MB": round(rss["C"]),
                    "pyblosc2 MB": round(rss["ours"]),
                }
            )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    n = args.size
    print(f"\n{n} x {n} float64 inputs ({n * n * 8 / 1e6:.0f} MB each), load {load}\n")
    keys = list(results[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in results:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"size": n, "load": load, "rows": results}))


if __name__ == "__main__":
    main()
