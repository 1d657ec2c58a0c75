"""xarray: engine "pyblosc2" vs xarray-blosc2's engine "blosc2" on the same store (written by
xarray-blosc2), one thread. Each figure is the median of ``--repeat`` runs, the engines
alternating; ratio = their time / ours (> 1: pyblosc2 is faster).

    python benchmarks/bench_xarray.py [--n 1000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import blosc2
import numpy as np
import pandas as pd
import xarray as xr
import xarray_blosc2

import pyblosc2


def medians(fns: dict[str, object], repeat: int) -> dict[str, float]:
    """The median time of each function, the functions alternating in every round."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()  # type: ignore[operator]
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    blosc2.set_nthreads(1)
    pyblosc2.set_nthreads(1)
    n = args.n
    ds = xr.Dataset(
        {"t": (("time", "y", "x"), np.linspace(0, 1, 24 * n * n).reshape(24, n, n))},
        coords={"time": pd.date_range("2024-01-01", periods=24, freq="h")},
    )
    path = os.path.join(tempfile.mkdtemp(), "bench.b2")
    xarray_blosc2.save_dataset(ds, path, chunks=(1, n, n), blocks=(1, 100, n))
    print(
        f"24x{n}x{n} float64, chunks 1x{n}x{n}, blocks 1x100x{n}, zstd clevel 5, 1 thread, "
        f"median of {args.repeat}"
    )
    print("| step | xarray-blosc2 ms | pyblosc2 ms | ratio |")
    print("|---|---|---|---|")

    def open_(engine: str) -> xr.Dataset:
        return xr.open_dataset(path, engine=engine, cache=False)

    opened = {e: open_(e) for e in ("blosc2", "pyblosc2")}
    steps = {
        "open": open_,
        "small slice": lambda e: opened[e].t[5, 10:20, 10:20].values,
        "whole read": lambda e: opened[e].t.values,
    }
    for step, fn in steps.items():
        got = medians({e: (lambda fn=fn, e=e: fn(e)) for e in ("blosc2", "pyblosc2")}, args.repeat)
        t, o = got["blosc2"], got["pyblosc2"]
        print(f"| {step} | {t * 1e3:.2f} | {o * 1e3:.2f} | {t / o:.2f} |")


if __name__ == "__main__":
    main()
