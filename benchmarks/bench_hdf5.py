"""HDF5: pyblosc2.hdf5 (no plugin) vs h5py + hdf5plugin on the same file, one thread each.

Times (best of ``--repeat``) to open a dataset, read a small slice and read it whole, for a
Blosc (32001) and a Blosc2 (32026) dataset written by hdf5plugin; ratio = their time / ours.

    python benchmarks/bench_hdf5.py [--n 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import h5py
import hdf5plugin
import numpy as np

from pyblosc2 import hdf5


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    os.environ.setdefault("BLOSC_NTHREADS", "1")
    n = args.n
    a = np.linspace(0, 100, n * n).reshape(n, n)
    path = os.path.join(tempfile.mkdtemp(), "bench.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset(
            "blosc", data=a, chunks=(250, 250), **hdf5plugin.Blosc(cname="zstd", clevel=5)
        )
        f.create_dataset(
            "blosc2", data=a, chunks=(250, 250), **hdf5plugin.Blosc2(cname="zstd", clevel=5)
        )
    print(f"{n}x{n} float64, chunks 250x250, zstd clevel 5, shuffle, 1 thread")
    print("| dataset | step | h5py+hdf5plugin ms | pyblosc2 ms | ratio |")
    print("|---|---|---|---|---|")
    with h5py.File(path, "r") as f:
        for name in ("blosc", "blosc2"):
            h5, ours = f[name], hdf5.open(f[name])
            steps = {
                "open": (lambda h5=h5: h5.file[h5.name], lambda h5=h5: hdf5.open(h5)),
                "slice 10x10": (
                    lambda h5=h5: h5[1000:1010, 500:510],
                    lambda d=ours: d[1000:1010, 500:510],
                ),
                "whole read": (lambda h5=h5: h5[...], lambda d=ours: d[...]),
            }
            for step, (theirs_fn, ours_fn) in steps.items():
                t, o = best(theirs_fn, args.repeat), best(ours_fn, args.repeat)
                print(f"| {name} | {step} | {t * 1e3:.2f} | {o * 1e3:.2f} | {t / o:.2f} |")


if __name__ == "__main__":
    main()
