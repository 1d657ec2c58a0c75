"""SChunk on a contiguous file: pyblosc2 vs python-blosc2, same data, parameters and threads.

Run::

    python benchmarks/bench_schunk.py                  # 1 GB of float64 in 4 MB chunks
    python benchmarks/bench_schunk.py --size-mb 256    # smaller

Each measurement runs in a fresh interpreter so that peak RSS (ru_maxrss) belongs to it alone.
pyblosc2 runs once per kernel set (``--kernels``; default: every set that loads), its
interpreter choosing the set by ``PYBLOSC2_KERNELS``. Rows: ``append`` (the whole file, chunk
by chunk), ``1000 slices`` (random 100-item slices of
an existing file, reopened), ``full read`` (``schunk[:]`` into memory). ``x`` = C's time / ours
(1.0 = parity, higher is better). ``bytes read`` counts what pyblosc2 read from the file per
small slice (python-blosc2 exposes no counter). ``RSS`` is the growth of the peak resident
size during the operation (MB), over the interpreter with its imports loaded.
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
lib, op, path, size_mb, chunk_mb, nthreads = sys.argv[1:7]
size, chunk = int(float(size_mb) * 2**20), int(float(chunk_mb) * 2**20)
n_items, per_chunk = size // 8, chunk // 8
if lib == "C":
    import blosc2 as m
    cp = m.CParams(typesize=8, codec=m.Codec.ZSTD, clevel=5, nthreads=int(nthreads))
    dp = m.DParams(nthreads=int(nthreads))
else:
    import pyblosc2 as m
    cp = m.CParams(typesize=8, codec=m.Codec.ZSTD, clevel=5, nthreads=int(nthreads))
    dp = m.DParams(nthreads=int(nthreads))
    m.kernels.active()  # the kernel set loaded before the clock and the RSS baseline
    # python-blosc2's import loads its engine and tables: ours too, before the clock
    import pyblosc2.compute, pyblosc2.linalg, pyblosc2.indexes, pyblosc2.ctable.table
out = {}
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
if op == "append":
    s = m.SChunk(
        chunksize=chunk, urlpath=path, contiguous=True, mode="w", cparams=cp, dparams=dp
    )
    for i in range(0, n_items, per_chunk):
        s.append_data(np.linspace(i, i + per_chunk, per_chunk))
elif op == "slices":
    s = m.open(path, mode="r", dparams=dp)
    rng = np.random.default_rng(0)
    starts = rng.integers(0, n_items - 100, 1000)
    if lib != "C":
        before = s._store.bytes_read
    for a in starts:
        s.get_slice(int(a), int(a) + 100)
    if lib != "C":
        out["bytes_per_slice"] = (s._store.bytes_read - before) / 1000
else:
    s = m.open(path, mode="r", dparams=dp)
    s[:]
out["seconds"] = time.perf_counter() - t0
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
print(json.dumps(out))
"""


def run(lib: str, op: str, path: str, args: argparse.Namespace, kernels: str = "") -> dict:
    env = {**os.environ, "PYBLOSC2_KERNELS": kernels} if kernels else None
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            WORKER,
            lib,
            op,
            path,
            str(args.size_mb),
            str(args.chunk_mb),
            str(args.nthreads),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, default=1024)
    ap.add_argument("--chunk-mb", type=float, default=4)
    ap.add_argument("--nthreads", type=int, default=2)
    ap.add_argument("--kernels", nargs="+", default=None, help="pyblosc2 kernel sets to run")
    args = ap.parse_args()
    import blosc2
    import numpy as np

    import pyblosc2

    print(
        f"# bench_schunk | pyblosc2 {pyblosc2.__version__} | python-blosc2 {blosc2.__version__}"
        f" | numpy {np.__version__} | cores {os.cpu_count()} | nthreads {args.nthreads}"
    )
    from pyblosc2.kernels import kernel_sets, kernels_in_use

    sets = args.kernels or [n for n in kernel_sets() if kernels_in_use(n).__enter__().name == n]
    print(f"# command: python {' '.join(sys.argv)} | load {os.getloadavg()[0]:.1f}\n")
    print(
        "| operation | kernels | ours s | C s | x | ours RSS growth MB | C RSS growth MB | "
        "ours bytes read / slice |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        paths = {lib: os.path.join(tmp, f"{lib}.b2frame") for lib in ("ours", "C")}
        for op, label in (
            ("append", f"append {args.size_mb:g} MB"),
            ("slices", "1000 slices"),
            ("full", "full read"),
        ):
            theirs = run("C", op, paths["C"], args)
            for kset in sets:
                ours = run("ours", op, paths["ours"], args, kset)
                extra = f"{ours['bytes_per_slice']:.0f}" if "bytes_per_slice" in ours else ""
                print(
                    f"| {label} | {kset} | {ours['seconds']:.2f} | {theirs['seconds']:.2f} | "
                    f"{theirs['seconds'] / ours['seconds']:.2f} | {ours['rss_mb']:.0f} | "
                    f"{theirs['rss_mb']:.0f} | {extra} |",
                    flush=True,
                )
        print(
            f"\nfile sizes: ours {os.path.getsize(paths['ours']):,} B, "
            f"C {os.path.getsize(paths['C']):,} B"
        )


if __name__ == "__main__":
    main()
