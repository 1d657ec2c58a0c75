"""Variable-length containers: pyblosc2 vs python-blosc2, same data, parameters and threads.

Run::

    python benchmarks/bench_vlarrays.py                 # 200 batches of 5000 records
    python benchmarks/bench_vlarrays.py --batches 50    # smaller

Rows: ``BatchArray extend`` (all batches to a .b2b file), ``BatchArray read`` (every batch,
reopened), ``BatchArray items`` (2000 random single items, one VL block each),
``ObjectArray append`` (one record per chunk, 20000 records), ``ObjectArray read`` (all of
them, reopened). Each runs in a fresh interpreter. ``x`` = python-blosc2's time / ours (1.0 is
parity, higher is better).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

WORKER = r"""
import json, sys, time
import numpy as np
lib, op, path, nbatches, nthreads = sys.argv[1:6]
nbatches, nthreads = int(nbatches), int(nthreads)
if lib == "C":
    import blosc2 as m
else:
    import pyblosc2 as m
    # python-blosc2's import loads its engine and tables: ours too, before the clock
    import pyblosc2.compute, pyblosc2.linalg, pyblosc2.indexes, pyblosc2.ctable.table
m.set_nthreads(nthreads)
rng = np.random.default_rng(0)
def batch(i):
    return [{"id": i * 5000 + k, "name": f"user{k % 97}", "score": float(k) / 7,
             "tags": ["a", "b"][: k % 3]} for k in range(5000)]
cp = {"codec": m.Codec.ZSTD, "clevel": 5, "nthreads": nthreads}
t0 = time.perf_counter()
if op == "ba_extend":
    ba = m.BatchArray(urlpath=path, mode="w", items_per_block=256, cparams=cp)
    for i in range(nbatches):
        ba.append(batch(i))
elif op == "ba_read":
    ba = m.open(path, mode="r")
    n = sum(len(b[:]) for b in ba)
elif op == "ba_items":
    ba = m.open(path, mode="r")
    for j in rng.integers(0, nbatches, 2000):
        ba[int(j)][int(rng.integers(0, 5000))]
elif op == "oa_append":
    oa = m.ObjectArray(urlpath=path, mode="w", cparams=cp)
    rows = batch(0) * 4
    oa.extend(rows)
elif op == "oa_read":
    oa = m.open(path, mode="r")
    n = sum(1 for _ in oa)
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""

OPS = [
    ("BatchArray extend", "ba_extend", "b.b2b"),
    ("BatchArray read", "ba_read", "b.b2b"),
    ("BatchArray items", "ba_items", "b.b2b"),
    ("ObjectArray append", "oa_append", "o.b2frame"),
    ("ObjectArray read", "oa_read", "o.b2frame"),
]


def run(lib: str, op: str, path: str, nbatches: int, nthreads: int) -> float:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, lib, op, path, str(nbatches), str(nthreads)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--nthreads", type=int, default=1)
    args = parser.parse_args()
    print(f"{'operation':<20} {'pyblosc2 s':>11} {'python-blosc2 s':>16} {'x':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for label, op, name in OPS:
            times = {}
            for lib in ("py", "C"):
                path = os.path.join(tmp, f"{lib}-{name}")
                times[lib] = run(lib, op, path, args.batches, args.nthreads)
            print(f"{label:<20} {times['py']:>11.3f} {times['C']:>16.3f} "
                  f"{times['C'] / times['py']:>6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
