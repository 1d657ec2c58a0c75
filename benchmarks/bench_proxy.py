"""Proxies and random arrays: pyblosc2 against python-blosc2 in one process.

Run::

    python benchmarks/bench_proxy.py                # 2000 x 2000 float64, 250 x 2000 chunks
    python benchmarks/bench_proxy.py --shape 4000 4000 --repeat 5

Cases, each run by both libraries in turn (``--repeat`` times, interleaved, median):

* ``fill``: a proxy over a local NDArray file fills a new file cache with every chunk
  (``fetch()``), then reads it all back;
* ``slices``: a proxy over the same file serves 200 small random slices into a fresh cache
  (the chunks fetched on first touch, the rest read from the cache);
* ``lazy-blocks``: ``open(url, lazy=True)`` of the frame in fsspec's ``memory://``, with
  blocks fetched one by one (threshold 0), reading 50 small slices;
* ``random``: ``random.default_rng(0).normal(shape)`` into an in-memory NDArray.

``ratio`` = python-blosc2's time / ours (1.0 = parity, higher is better for pyblosc2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _slices(shape: tuple[int, int], n: int, seed: int) -> list[tuple[slice, slice]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        i, j = int(rng.integers(0, shape[0] - 10)), int(rng.integers(0, shape[1] - 10))
        out.append((slice(i, i + 10), slice(j, j + 10)))
    return out


def cases(
    lib: Any, src: str, url: str, shape: tuple[int, int], tmp: str
) -> dict[str, Callable[[], None]]:
    def fill() -> None:
        p = lib.Proxy(
            lib.open(src), urlpath=os.path.join(tmp, f"fill-{lib.__name__}.b2nd"), mode="w"
        )
        p.fetch()
        p[...]

    def slices() -> None:
        p = lib.Proxy(lib.open(src), urlpath=os.path.join(tmp, f"sl-{lib.__name__}.b2nd"), mode="w")
        for key in _slices(shape, 200, 1):
            p[key]

    def lazy_blocks() -> None:
        lib.proxy_source.BLOCK_MIN_CBYTES = 0
        p = lib.open(url, lazy=True)
        for key in _slices(shape, 50, 2):
            p[key]

    def random() -> None:
        lib.random.default_rng(0).normal(shape=shape, chunks=(shape[0] // 8, shape[1]))

    return {"fill": fill, "slices": slices, "lazy-blocks": lazy_blocks, "random": random}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", type=int, nargs=2, default=[2000, 2000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import blosc2
    import fsspec

    import pyblosc2

    shape = (args.shape[0], args.shape[1])
    x = np.random.default_rng(0).random(shape)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src.b2nd")
        blosc2.asarray(
            x, chunks=(shape[0] // 8, shape[1]), blocks=(25, shape[1]), urlpath=src, mode="w"
        )
        with open(src, "rb") as f:
            fsspec.filesystem("memory").pipe_file("/bench/src.b2nd", f.read())
        url = "memory://bench/src.b2nd"
        ours, theirs = (cases(lib, src, url, shape, tmp) for lib in (pyblosc2, blosc2))
        print(f"shape {shape}, float64, 8 chunks; load {os.getloadavg()[0]:.1f}")
        print(f"{'case':12} {'pyblosc2 s':>11} {'blosc2 s':>10} {'ratio':>6}")
        for name in ours:
            a: list[float] = []
            b: list[float] = []
            for _ in range(args.repeat):
                for fn, times in ((ours[name], a), (theirs[name], b)):
                    t = time.perf_counter()
                    fn()
                    times.append(time.perf_counter() - t)
            ta, tb = statistics.median(a), statistics.median(b)
            print(f"{name:12} {ta:11.3f} {tb:10.3f} {tb / ta:6.2f}")


if __name__ == "__main__":
    main()
