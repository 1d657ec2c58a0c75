"""Chunk compression/decompression: pyblosc2 vs python-blosc2, same data, parameters, threads.

Run::

    python benchmarks/bench_chunk.py                 # full run (100 MB datasets)
    python benchmarks/bench_chunk.py --quick         # 8 MB smoke run
    python benchmarks/bench_chunk.py --markdown      # table for README/CHANGELOG/notes

Columns: ``comp``/``decomp`` are MB/s of uncompressed data (best of ``--repeat``), ``ours``
pyblosc2, ``C`` python-blosc2 (C-Blosc2), ``x`` = ours / C (higher is better, 1.0 = parity);
``cr`` the compression ratio of each. Decompression writes into a preallocated numpy array on
both sides. BloscLZ compression is pure Python on our side, so its rows use ``--blosclz-mb``.
``--memory`` adds the peak RSS (ru_maxrss of a fresh subprocess) of one compress and one
decompress of the lz4+shuffle float64 chunk, for both libraries.
Kernel rows time our filter kernels on a 4 MiB block (python-blosc2 exposes no kernel API).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time

import blosc2
import numpy as np

import pyblosc2 as pb
from pyblosc2.filters.shuffle import bitshuffle, bitunshuffle, shuffle, unshuffle


def datasets(size_mb: float) -> dict[str, tuple[np.ndarray, int]]:
    n = int(size_mb * 1e6)
    rng = np.random.default_rng(0)
    vocab = [bytes(rng.integers(97, 123, rng.integers(2, 10), dtype=np.uint8)) for _ in range(3000)]
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    words = rng.choice(len(vocab), n // 5, p=weights / weights.sum())
    text = b" ".join(vocab[i] for i in words)[:n]
    return {
        "linspace-f64": (np.linspace(0, 1, n // 8), 8),
        "random-i32": (rng.integers(0, 2**31, n // 4, dtype=np.int32), 4),
        "text": (np.frombuffer(text, np.uint8), 1),
    }


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_codec(data: np.ndarray, ts: int, codec: str, filt: str, nthreads: int, repeat: int):
    ours_p = dict(typesize=ts, clevel=5, codec=pb.Codec[codec], nthreads=nthreads,
                  filters=[pb.Filter[filt]])
    c_p = dict(typesize=ts, clevel=5, codec=blosc2.Codec[codec], nthreads=nthreads,
               filters=[blosc2.Filter[filt]])
    ours = pb.compress2(data, **ours_p)
    theirs = blosc2.compress2(data, **c_p)
    out = np.empty(data.nbytes, np.uint8)
    assert blosc2.decompress2(ours) == data.tobytes(), "C cannot read our chunk"
    pb.decompress2(theirs, dst=out, nthreads=nthreads)
    assert out.tobytes() == data.tobytes(), "we cannot read C's chunk"
    mb = data.nbytes / 1e6
    r = {
        "comp_ours": mb / best(lambda: pb.compress2(data, **ours_p), repeat),
        "comp_c": mb / best(lambda: blosc2.compress2(data, **c_p), repeat),
        "dec_ours": mb / best(lambda: pb.decompress2(ours, dst=out, nthreads=nthreads), repeat),
        "dec_c": mb / best(lambda: blosc2.decompress2(theirs, dst=out, nthreads=nthreads), repeat),
        "cr_ours": data.nbytes / len(ours),
        "cr_c": data.nbytes / len(theirs),
        "mb": mb,
    }
    return r


def bench_kernels(repeat: int) -> list[tuple[str, int, float]]:
    src = np.random.default_rng(1).integers(0, 256, 4 * 2**20, dtype=np.uint8)
    dst = np.empty_like(src)
    rows = []
    for name, fn in (("shuffle", shuffle), ("unshuffle", unshuffle), ("bitshuffle", bitshuffle),
                     ("bitunshuffle", bitunshuffle)):
        for ts in (4, 8):
            t = best(lambda fn=fn, ts=ts: fn(src, dst, ts), repeat)
            rows.append((name, ts, src.nbytes / t / 1e9))
    return rows


MEMORY_SNIPPET = """
import resource, sys, numpy as np
lib, op = sys.argv[1], sys.argv[2]
import blosc2, pyblosc2
m = blosc2 if lib == "C" else pyblosc2
a = np.linspace(0, 1, {n})
c = m.compress2(a, typesize=8, codec=m.Codec.LZ4, nthreads={nt})
out = np.empty_like(a)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if op == "compress":
    m.compress2(a, typesize=8, codec=m.Codec.LZ4, nthreads={nt})
else:
    m.decompress2(c, dst=out, nthreads={nt})
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)
"""


def bench_memory(size_mb: float, nthreads: int) -> dict[str, float]:
    """Peak-RSS growth (MB) of one operation beyond inputs/outputs already allocated."""
    code = MEMORY_SNIPPET.format(n=int(size_mb * 1e6) // 8, nt=nthreads)
    res = {}
    for lib in ("ours", "C"):
        for op in ("compress", "decompress"):
            out = subprocess.run([sys.executable, "-c", code, lib, op], capture_output=True,
                                 text=True, check=True)
            res[f"{op}_{lib}"] = int(out.stdout.strip()) / 1024
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--blosclz-mb", type=float, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--nthreads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--codecs", nargs="+", default=["BLOSCLZ", "LZ4", "ZSTD"])
    ap.add_argument("--filters", nargs="+", default=["SHUFFLE", "BITSHUFFLE"])
    ap.add_argument("--datasets", nargs="+", default=["linspace-f64", "random-i32", "text"])
    ap.add_argument("--quick", action="store_true", help="8 MB datasets, 1 repeat")
    ap.add_argument("--memory", action="store_true", help="also measure peak RSS")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.size_mb, args.blosclz_mb, args.repeat = 8, 2, 1

    print(f"# bench_chunk {datetime.date.today()} | python {platform.python_version()} | "
          f"pyblosc2 {pb.__version__} | python-blosc2 {blosc2.__version__} "
          f"(C-Blosc2 {blosc2.VERSION_STRING}) | numpy {np.__version__} | "
          f"cores {os.cpu_count()}")
    print(f"# command: python {' '.join(sys.argv)}\n")
    full = datasets(args.size_mb)
    small = datasets(args.blosclz_mb)
    head = ("| data | codec | filter | thr | MB | comp ours | comp C | x | decomp ours | "
            "decomp C | x | cr ours | cr C |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for dname in args.datasets:
        for codec in args.codecs:
            data, ts = (small if codec == "BLOSCLZ" else full)[dname]
            for filt in args.filters:
                for nt in args.nthreads:
                    r = bench_codec(data, ts, codec, filt, nt, args.repeat)
                    print(f"| {dname} | {codec.lower()} | {filt.lower()} | {nt} | {r['mb']:.0f} | "
                          f"{r['comp_ours']:.0f} | {r['comp_c']:.0f} | "
                          f"{r['comp_ours'] / r['comp_c']:.2f} | {r['dec_ours']:.0f} | "
                          f"{r['dec_c']:.0f} | {r['dec_ours'] / r['dec_c']:.2f} | "
                          f"{r['cr_ours']:.2f} | {r['cr_c']:.2f} |", flush=True)
    print("\n| kernel (ours, 4 MiB block) | typesize | GB/s |\n|---|---|---|")
    for name, ts, gbs in bench_kernels(max(args.repeat, 3)):
        print(f"| {name} | {ts} | {gbs:.2f} |")
    if args.memory:
        print("\n| peak RSS growth, lz4+shuffle f64 | ours MB | C MB |\n|---|---|---|")
        mem = bench_memory(args.size_mb, max(args.nthreads))
        for op in ("compress", "decompress"):
            print(f"| {op} {args.size_mb:.0f} MB | {mem[f'{op}_ours']:.0f} | "
                  f"{mem[f'{op}_C']:.0f} |")


if __name__ == "__main__":
    main()
