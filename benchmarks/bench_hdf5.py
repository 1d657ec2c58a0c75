"""HDF5: pyblosc2.hdf5 (no plugin) vs h5py + hdf5plugin (and b2h5py for Blosc2 slices) on the
same file, one thread each.

For a Blosc (32001) and a Blosc2 (32026) dataset written by hdf5plugin: the time to open a
dataset, to read a 10x10 slice from a chunk not read before (the slices walk over all the
chunks: h5py's chunk cache never holds the chunk), to read the same slice again (h5py answers
from its cache of decoded chunks; pyblosc2 decodes again, with the chunk's layout cached) and
to read the whole dataset. Each figure is the median of ``--repeat`` runs, the libraries
alternating; ratio = their time / ours (> 1: pyblosc2 is faster).

``--data`` picks the values: ``linspace`` (very compressible: small stored chunks, read whole)
or ``noise`` (a random walk rounded to 3 decimals: stored chunks of a few hundred kB, which
small slices read by byte ranges).

    python benchmarks/bench_hdf5.py [--n 2000] [--repeat 7] [--data linspace|noise]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

os.environ.setdefault("BLOSC_NTHREADS", "1")  # read by the plugins when they load

import blosc2
import h5py
import hdf5plugin
import numpy as np

from pyblosc2 import hdf5

CHUNK = 250


def timed(fn: Callable[[], object], loops: int) -> float:
    t = time.perf_counter()
    for _ in range(loops):
        fn()
    return (time.perf_counter() - t) / loops


def medians(fns: dict[str, Callable[[], object]], repeat: int, loops: int) -> dict[str, float]:
    """The median time of each function, the functions alternating in every round."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            times[k].append(timed(fn, loops))
    return {k: statistics.median(v) for k, v in times.items()}


def data(kind: str, n: int) -> np.ndarray:
    if kind == "linspace":
        return np.linspace(0, 100, n * n).reshape(n, n)
    walk = np.random.default_rng(0).normal(size=n * n).cumsum()
    return np.round(walk, 3).reshape(n, n)


def slicer(d: object, n: int) -> Callable[[], object]:
    """A 10x10 slice from the next chunk, in turn over every chunk."""
    grid = n // CHUNK
    corners = [(r * CHUNK + 100, c * CHUNK + 100) for r in range(grid) for c in range(grid)]
    state = {"i": 0}

    def read() -> object:
        r, c = corners[state["i"] % len(corners)]
        state["i"] += 1
        return d[r : r + 10, c : c + 10]  # type: ignore[index]

    return read


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--data", choices=["linspace", "noise"], default="linspace")
    args = ap.parse_args()
    blosc2.set_nthreads(1)
    n = args.n
    a = data(args.data, n)
    path = os.path.join(tempfile.mkdtemp(), "bench.h5")
    with h5py.File(path, "w") as f:
        for name, filt in (("blosc", hdf5plugin.Blosc), ("blosc2", hdf5plugin.Blosc2)):
            f.create_dataset(name, data=a, chunks=(CHUNK, CHUNK), **filt(cname="zstd", clevel=5))
    import b2h5py

    with h5py.File(path, "r") as f:
        sizes = {k: f[k].id.get_chunk_info(0).size for k in ("blosc", "blosc2")}
    print(
        f"{n}x{n} float64 ({args.data}), chunks {CHUNK}x{CHUNK} (stored: blosc "
        f"{sizes['blosc']} B, blosc2 {sizes['blosc2']} B each), zstd clevel 5, shuffle, "
        f"1 thread, median of {args.repeat}"
    )
    print("| dataset | step | h5py+hdf5plugin ms | b2h5py ms | pyblosc2 ms | ratio | vs b2h5py |")
    print("|---|---|---|---|---|---|---|")
    nchunks = (n // CHUNK) ** 2
    with h5py.File(path, "r") as f:
        for name in ("blosc", "blosc2"):
            h5 = f[name]
            ours = hdf5.open(h5)
            b2 = b2h5py.B2Dataset(h5) if name == "blosc2" else None
            steps: dict[str, tuple[dict[str, Callable[[], object]], int]] = {
                "open": (
                    {"h5py": lambda h5=h5: h5.file[h5.name], "ours": lambda h5=h5: hdf5.open(h5)},
                    20,
                ),
                "slice 10x10, new chunk": (
                    {"h5py": slicer(h5, n), "ours": slicer(ours, n)}
                    | ({"b2h5py": slicer(b2, n)} if b2 is not None else {}),
                    nchunks,
                ),
                "slice 10x10, same chunk": (
                    {
                        "h5py": lambda h5=h5: h5[1000:1010, 500:510],
                        "ours": lambda d=ours: d[1000:1010, 500:510],
                    }
                    | ({"b2h5py": lambda d=b2: d[1000:1010, 500:510]} if b2 is not None else {}),
                    20,
                ),
                "whole read": ({"h5py": lambda h5=h5: h5[...], "ours": lambda d=ours: d[...]}, 1),
            }
            for step, (fns, loops) in steps.items():
                got = medians(fns, args.repeat, loops)
                t, o, b = got["h5py"], got["ours"], got.get("b2h5py")
                bcell = f"{b * 1e3:.3f}" if b is not None else "-"
                vs = f"{b / o:.2f}" if b is not None else "-"
                print(
                    f"| {name} | {step} | {t * 1e3:.3f} | {bcell} | {o * 1e3:.3f} | "
                    f"{t / o:.2f} | {vs} |"
                )
            ours.close()


if __name__ == "__main__":
    main()
