"""CTable queries, ``group_by``, ``sort_by`` and Parquet/CSV/Arrow round trips of issue 34,
pyblosc2 against python-blosc2, on the same in-memory table of ``--rows`` rows and 5 columns
(an int key of 1,000 values, a 6-character string key of 50 values, three float64 columns).

Run::

    python benchmarks/bench_ctable_io.py                      # 10 million rows
    python benchmarks/bench_ctable_io.py --rows 1000000 --repeat 3

Every row runs in a fresh process per library and repeat, which loads pyblosc2's kernel set
(numba, when installed) and builds the table (neither timed), times the row and reports its wall
time and peak RSS (``VmHWM``). A row reports the median time of each library, the ratio
python-blosc2's time / ours (1.0 = parity, higher is better) and the largest peak RSS of each;
the machine's load is printed with the table.
Rows: ``query`` (``where((t.a > 0.99) & (t.k < 500))``, its ``a`` column read),
``groupby_mean`` (``group_by("k").mean("a")``), ``sort_by`` (``sort_by("b")``: a new sorted
table), ``groupby_agg`` (a string key, four
reductions), ``to_arrow``, ``parquet`` (``to_parquet`` then ``from_parquet``), ``csv``
(``to_csv`` then ``from_csv``; a tenth of the rows: both are per-row Python in csv),
``text_append`` (a stored ``.b2d`` table with an int, a ``utf8`` and a ``vlstring`` column:
a tenth of the rows appended in batches of 10,000, closed, reopened, 100,000 more appended,
closed: what pyblosc2's change log of text columns costs, python-blosc2 writing them at close
only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROWS = (
    "query", "groupby_mean", "sort_by", "groupby_agg", "to_arrow", "parquet", "csv", "text_append"
)  # fmt: skip

WORKER = r"""
import dataclasses, json, sys, time
import numpy as np
lib, row, n, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
m = __import__("blosc2" if lib == "C" else "pyblosc2")
if lib != "C":  # numba's kernels loaded before the measure, as bench_compute does
    from pyblosc2.kernels.select import active, wait_for_kernels
    active(); wait_for_kernels(120)
    # python-blosc2's import loads its engine and tables: ours too, before the clock
    import pyblosc2.compute, pyblosc2.linalg, pyblosc2.indexes, pyblosc2.ctable.table

@dataclasses.dataclass
class Row:
    k: int = m.field(m.int32())
    city: str = m.field(m.string(max_length=6))
    a: float = m.field(m.float64())
    b: float = m.field(m.float64())
    c: float = m.field(m.float64())

@dataclasses.dataclass
class Text:
    i: int = m.field(m.int64())
    u: str = m.field(m.utf8(), default="")
    v: str = m.field(m.vlstring(), default="")

if row in ("csv", "text_append"):
    n //= 10
rng = np.random.default_rng(0)
t = m.CTable(Row, expected_size=n if row != "text_append" else 1)
t.extend({
    "k": rng.integers(0, 1000, n, dtype=np.int32),
    "city": np.array([f"c{i:04d}" for i in range(50)])[rng.integers(0, 50, n)],
    "a": rng.random(n), "b": rng.normal(size=n), "c": np.arange(n, dtype=np.float64),
} if row != "text_append" else {"k": [], "city": [], "a": [], "b": [], "c": []}, validate=False)
start = time.perf_counter()
if row == "query":
    v = t.where((t.a > 0.99) & (t.k < 500))
    out = v.a[:]
elif row == "groupby_mean":
    out = t.group_by("k").mean("a")
elif row == "sort_by":
    out = t.sort_by("b")
    out.b[-10:]
elif row == "groupby_agg":
    out = t.group_by("city").agg({"a": ["sum", "max"], "b": ["mean", "argmin"]})
elif row == "to_arrow":
    out = t.to_arrow()
elif row == "parquet":
    t.to_parquet(f"{d}/{lib}.parquet")
    out = m.CTable.from_parquet(f"{d}/{lib}.parquet", string_max_length=6)
elif row == "csv":
    t.to_csv(f"{d}/{lib}.csv")
    out = m.CTable.from_csv(f"{d}/{lib}.csv", Row)
else:
    path = f"{d}/{lib}.b2d"
    def batch(lo, hi):
        return {"i": np.arange(lo, hi), "u": [f"u{x}" for x in range(lo, hi)],
                "v": [f"v{x % 97}" for x in range(lo, hi)]}
    with m.CTable(Text, urlpath=path, mode="w") as out:
        for lo in range(0, n, 10_000):
            out.extend(batch(lo, min(n, lo + 10_000)))
    with m.CTable.open(path, mode="a") as out:
        for lo in range(n, n + 100_000, 10_000):
            out.extend(batch(lo, lo + 10_000))
    out = m.CTable.open(path)
seconds = time.perf_counter() - start
rss = 0
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith("VmHWM:"):
            rss = int(line.split()[1]) * 1024
print(json.dumps({"seconds": seconds, "rss": rss, "rows": len(out)}))
"""


def run(lib: str, row: str, n: int, d: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", WORKER, lib, row, str(n), d],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=ROWS, nargs="*")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f}, {args.rows:,} rows, {args.repeat} repeats")
    head = f"{'row':14} {'python-blosc2 s':>16} {'pyblosc2 s':>11} {'ratio':>6}"
    print(f"{head} {'RSS C/ours MB':>16}")
    with tempfile.TemporaryDirectory() as d:
        for row in args.only or ROWS:
            times: dict[str, list[float]] = {"C": [], "P": []}
            rss = {"C": 0.0, "P": 0.0}
            for _ in range(args.repeat):
                for lib in ("C", "P"):  # interleaved
                    r = run(lib, row, args.rows, d)
                    times[lib].append(r["seconds"])
                    rss[lib] = max(rss[lib], r["rss"])
            c, p = statistics.median(times["C"]), statistics.median(times["P"])
            print(
                f"{row:14} {c:16.3f} {p:11.3f} {c / p:6.2f} "
                f"{rss['C'] / 2**20:7.0f}/{rss['P'] / 2**20:.0f}"
            )


if __name__ == "__main__":
    main()
