"""HDF5: pyblosc2.hdf5 (no plugin) vs h5py + hdf5plugin (and b2h5py for Blosc2 slices) on the
same file, one thread each.

Two tables. ``--only slices`` (the first): for a Blosc (32001) and a Blosc2 (32026) dataset
written by hdf5plugin, the time to open a dataset, to read a 10x10 slice from a chunk not read
before (the slices walk over all the chunks: h5py's chunk cache never holds the chunk), to read
the same slice again (both libraries answer from their cache of decoded chunks) and to read the
whole dataset.

``--only rows`` (the second, issue 39): a 2,000 x 500 float64 dataset in chunks of 200 rows
(800,000 bytes decoded), Blosc2 zstd and Blosc lz4 (clevel 5, shuffle), read one row at a
time, ``ds[i, :]`` and ``ds[i, 100:200]`` for i in 0..999 (5 chunks), each run from a freshly
opened file (empty caches; the open is not timed). Both libraries keep decoded chunks within
``rdcc_nbytes``: the default (HDF5's, which h5py prints: 8 MiB from HDF5 2.0, 1 MiB before;
the 800 kB chunk fits either), HDF5 1.x's 1 MiB, and 512 KiB (smaller than a chunk: neither
keeps it, every row decodes again). ``peak`` is the most memory pyblosc2 allocated during the
loop (tracemalloc, numpy's allocations included) against the bound plus one chunk.

Each figure is the median of ``--repeat`` runs, the libraries alternating; ratio = their time
/ ours (> 1: pyblosc2 is faster).

``--data`` picks the values: ``linspace`` (very compressible: small stored chunks, read whole)
or ``noise`` (a random walk rounded to 3 decimals: stored chunks of a few hundred kB, which
small slices read by byte ranges).

    python benchmarks/bench_hdf5.py [--n 2000] [--repeat 7] [--data linspace|noise]
        [--only slices|rows]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable

os.environ.setdefault("BLOSC_NTHREADS", "1")  # read by the plugins when they load

import blosc2
import h5py
import hdf5plugin
import numpy as np

from pyblosc2 import hdf5
from pyblosc2.kernels.select import wait_for_kernels

CHUNK = 250
#: the rows table: dataset shape and chunks, rows read
ROWS_SHAPE, ROWS_CHUNKS, ROWS_READ = (2000, 500), (200, 500), 1000


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


def data(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    size = int(np.prod(shape))
    if kind == "linspace":
        return np.linspace(0, 100, size).reshape(shape)
    walk = np.random.default_rng(0).normal(size=size).cumsum()
    return np.round(walk, 3).reshape(shape)


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


def slices_table(args: argparse.Namespace) -> None:
    n = args.n
    a = data(args.data, (n, n))
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


def row_loop(
    path: str, name: str, cols: slice, nbytes: int | None, ours: bool
) -> tuple[float, float]:
    """(wall, CPU) seconds of ``ds[i, cols]``, i in 0..ROWS_READ-1, on a freshly opened file
    (CPU time: this process's, steadier than wall time on a loaded machine)."""
    kw = {} if nbytes is None else {"rdcc_nbytes": nbytes}
    with contextlib.ExitStack() as stack:
        if ours:
            ds: object = stack.enter_context(hdf5.open(path, name, **kw))
        else:
            ds = stack.enter_context(h5py.File(path, "r", **kw))[name]
        c, t = time.process_time(), time.perf_counter()
        for i in range(ROWS_READ):
            ds[i, cols]  # type: ignore[index]
        return time.perf_counter() - t, time.process_time() - c


def row_peak(path: str, name: str, cols: slice, nbytes: int | None) -> tuple[int, int]:
    """(bytes pyblosc2 allocated at most during the loop, its cache's bound)."""
    kw = {} if nbytes is None else {"rdcc_nbytes": nbytes}
    with hdf5.open(path, name, **kw) as d:
        assert d.cache is not None
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            for i in range(ROWS_READ):
                d[i, cols]
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        return peak, d.cache.params.nbytes


def rows_table(args: argparse.Namespace) -> None:
    a = data(args.data, ROWS_SHAPE)
    path = os.path.join(tempfile.mkdtemp(), "rows.h5")
    sets = {
        "blosc2 zstd": ("b2", hdf5plugin.Blosc2, "zstd"),
        "blosc lz4": ("b1", hdf5plugin.Blosc, "lz4"),
    }
    with h5py.File(path, "w") as f:
        for name, filt, cname in sets.values():
            f.create_dataset(name, data=a, chunks=ROWS_CHUNKS, **filt(cname=cname, clevel=5))
    chunk = a[: ROWS_CHUNKS[0]].nbytes
    with h5py.File(path, "r") as f:
        default = f["b2"].id.get_access_plist().get_chunk_cache()
        sizes = {k: f[k].id.get_chunk_info(0).size for k in ("b2", "b1")}
    print(
        f"\n{ROWS_SHAPE[0]}x{ROWS_SHAPE[1]} float64 ({args.data}), chunks {ROWS_CHUNKS} "
        f"({chunk} B decoded; stored: blosc2 {sizes['b2']} B, blosc {sizes['b1']} B), "
        f"{ROWS_READ} single-row reads from a freshly opened file, 1 thread, median of "
        f"{args.repeat}; HDF5 {h5py.version.hdf5_version}: default rdcc_nslots, rdcc_nbytes, "
        f"rdcc_w0 = {default}"
    )
    print(
        "| dataset | read | rdcc_nbytes | h5py+hdf5plugin ms | pyblosc2 ms | ratio "
        "| h5py CPU ms | pyblosc2 CPU ms | CPU ratio | pyblosc2 peak MB | bound + 1 chunk MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, (name, _, _) in sets.items():
        for cols, key in ((slice(None), "ds[i, :]"), (slice(100, 200), "ds[i, 100:200]")):
            for nbytes, shown in ((None, "default"), (1 << 20, "1 MiB"), (1 << 19, "512 KiB")):
                fns = {
                    "h5py": lambda c=cols, b=nbytes, n=name: row_loop(path, n, c, b, False),
                    "ours": lambda c=cols, b=nbytes, n=name: row_loop(path, n, c, b, True),
                }
                runs: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
                for _ in range(args.repeat):
                    for k, fn in fns.items():
                        runs[k].append(fn())
                (t, tc), (o, oc) = (
                    tuple(statistics.median(r[j] for r in runs[k]) for j in (0, 1))
                    for k in ("h5py", "ours")
                )
                peak, bound = row_peak(path, name, cols, nbytes)
                print(
                    f"| {label} | `{key}` | {shown} | {t * 1e3:.1f} | {o * 1e3:.1f} | "
                    f"{t / o:.2f} | {tc * 1e3:.1f} | {oc * 1e3:.1f} | {tc / oc:.2f} | "
                    f"{peak / 1e6:.2f} | {(bound + chunk) / 1e6:.2f} |"
                )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--data", choices=["linspace", "noise"], default="linspace")
    ap.add_argument("--only", choices=["slices", "rows"], default=None)
    args = ap.parse_args()
    blosc2.set_nthreads(1)
    wait_for_kernels()  # numba loaded: steady state, not the first seconds of a process
    if args.only != "rows":
        slices_table(args)
    if args.only != "slices":
        rows_table(args)


if __name__ == "__main__":
    main()
