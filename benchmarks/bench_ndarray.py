"""NDArray on disk: pyblosc2 vs python-blosc2 on the same float32 3-D array and partition.

Run::

    python benchmarks/bench_ndarray.py                 # 2 GB (the issue's size)
    python benchmarks/bench_ndarray.py --size-mb 256   # quicker

Each operation runs in a fresh interpreter (peak RSS growth over the post-import baseline is
reported). Rows: write (``asarray`` to a file), 1-element read, one-chunk slab, a strided
cross-section orthogonal to the chunking, the whole array, and ``evaluate("a*b+c")`` over three
such arrays (python-blosc2: its lazy expression ``compute()``). ``x`` = C's time / ours.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

WORKER = r"""
import json, os, resource, sys, time
import numpy as np
lib, op, d, side = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if lib == "C":
    import blosc2 as m
else:
    import pyblosc2 as m
    # python-blosc2's import loads its engine and tables: ours too, before the clock
    import pyblosc2.compute, pyblosc2.linalg, pyblosc2.indexes, pyblosc2.ctable.table
shape = (side, side, side)
chunks, blocks = (side // 4, side // 4, side), (side // 16, side // 16, side // 4)
path = lambda name: os.path.join(d, f"{lib}-{name}.b2nd")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {}
if op == "write":
    x = np.linspace(0, 1, side ** 3, dtype=np.float32).reshape(shape)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    for name in ("a", "b", "c"):
        m.asarray(x, chunks=chunks, blocks=blocks, urlpath=path(name), mode="w")
    out["seconds"] = (time.perf_counter() - t) / 3
else:
    a = m.open(path("a"))
    key = {"one": (side // 2, side // 3, side // 5),
           "slab": (slice(0, side // 4), slice(0, side // 4), slice(None)),
           "cross": (slice(None), side // 2 + 1, slice(None, None, 7)),
           "whole": (slice(None),) * 3}.get(op)
    store = getattr(getattr(a, "schunk", None), "_store", None)
    before = getattr(store, "bytes_read", 0)
    t = time.perf_counter()
    if op == "eval":
        b, c = m.open(path("b")), m.open(path("c"))
        if lib == "C":
            r = m.lazyexpr("a * b + c", {"a": a, "b": b, "c": c}).compute()
        else:
            r = m.evaluate("a * b + c", {"a": a, "b": b, "c": c})
    else:
        r = a[key]
    out["seconds"] = time.perf_counter() - t
    if store is not None and op != "eval":
        out["bytes_read"] = getattr(store, "bytes_read", 0) - before
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, default=2048)
    args = ap.parse_args()
    side = round((args.size_mb * 2**20 / 4) ** (1 / 3) / 16) * 16
    import blosc2
    import numpy as np

    import pyblosc2

    print(
        f"# bench_ndarray | pyblosc2 {pyblosc2.__version__} | python-blosc2 "
        f"{blosc2.__version__} | numpy {np.__version__} | cores {os.cpu_count()}"
    )
    print(
        f"# command: python {' '.join(sys.argv)} | array ({side},)*3 float32 = "
        f"{side**3 * 4 / 2**20:.0f} MB, chunks ({side // 4}, {side // 4}, {side}), "
        f"blocks ({side // 16}, {side // 16}, {side // 4})\n"
    )
    print(
        "| operation | ours s | C s | x | ours RSS growth MB | C RSS growth MB | ours bytes read |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for op in ("write", "one", "slab", "cross", "whole", "eval"):
            res = {}
            for lib in ("ours", "C"):
                p = subprocess.run(
                    [sys.executable, "-c", WORKER, lib, op, tmp, str(side)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                res[lib] = json.loads(p.stdout)
            o, c = res["ours"], res["C"]
            print(
                f"| {op} | {o['seconds']:.4f} | {c['seconds']:.4f} | "
                f"{c['seconds'] / o['seconds']:.2f} | {o['rss_mb']:.0f} | {c['rss_mb']:.0f} | "
                f"{o.get('bytes_read', '')} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
