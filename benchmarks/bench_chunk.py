"""Chunk compression/decompression: pyblosc2 vs python-blosc2, same data, parameters, threads.

Run (from the repository root, with pyblosc2 importable, e.g. ``PYTHONPATH=src``)::

    python benchmarks/bench_chunk.py --quick               # 4 MB smoke run, 1 repeat
    python benchmarks/bench_chunk.py                       # full run: 100 MB, best of 3
    python benchmarks/bench_chunk.py --markdown > out.md   # tables for a README / closing note
    python benchmarks/bench_chunk.py --chunk-mb 4          # also as 25 chunks of 4 MB
    python benchmarks/bench_chunk.py --profile --codecs LZ4 --filters SHUFFLE --nthreads 1 \\
        --datasets linspace-f64                            # cProfile of our side only

Datasets: ``linspace-f64`` (np.linspace(0, 1, N), typesize 8), ``random-i32`` (uniform int32
from default_rng(0), typesize 4), ``text`` (Zipf-distributed pseudo-words from a 4000-word
vocabulary joined by spaces, seed 0, typesize 1). Every codec runs at clevel 5, default
blocksize, the same nthreads on both sides.

Codec table columns:

* ``layout``: ``1x100MB`` is the whole dataset as one chunk; ``25x4MB`` (``--chunk-mb``) is
  the same data cut into chunks of that size, compressed/decompressed one after the other.
* ``comp MB`` / ``dec MB``: uncompressed megabytes (1e6 bytes) each row used for compression
  and decompression. BloscLZ compression is pure Python on our side, so it runs on the first
  ``--blosclz-size-mb`` MB of the dataset (both libraries, same data); decoding uses full size.
* ``comp ours`` / ``comp C``: compression speed, MB/s of uncompressed data, best of
  ``--repeat`` (time.perf_counter); ``x`` = ours / C (1.00 = parity, higher is better).
* ``dec ours`` / ``dec C``: decompression speed, both libraries decoding the *same* chunk
  (the one C produced) into a preallocated numpy array (``dst=``).
* ``cr ours`` / ``cr C``: compression ratio (nbytes / chunk bytes) of each library's chunk.

Before timing, each combination asserts once that our chunk round-trips through pyblosc2 and
through python-blosc2, and that pyblosc2 decodes C's chunk.

Kernel table: our filter kernels on a 4 MiB block, GB/s (1e9 bytes/s), and
``pyblosc2.codecs.blosclz.decompress`` on raw BloscLZ streams that C-Blosc2 produced (4 MiB
block, NEVER_SPLIT). python-blosc2 exposes no kernel-level API, so these rows are ours only.

Memory table: peak-RSS growth (``VmHWM`` from /proc/self/status, i.e. ru_maxrss of the
process image: Linux's ru_maxrss itself would inherit the parent's peak across fork+exec; plain
ru_maxrss elsewhere) in a fresh subprocess per measurement that imports only the library
measured, of one lz4+shuffle
compress / decompress of the float64 dataset, over a baseline where the input (read from a
file with np.fromfile, so no temporary ever peaks), the compressed chunk (written by C) and
the preallocated, page-touched output are already resident: the extra memory the operation
itself needed (temporaries, thread buffers, the returned chunk for compress). tracemalloc
is not used: it misses C allocations and numpy's untouched pages.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import importlib.metadata as md
import itertools
import os
import platform
import pstats
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import blosc2
import numpy as np

import pyblosc2 as pb
from pyblosc2.codecs import blosclz
from pyblosc2.filters.shuffle import bitshuffle, bitunshuffle, shuffle, unshuffle

DATASETS = ("linspace-f64", "random-i32", "text")
KERNEL_BLOCK = 4 * 2**20


def make_dataset(name: str, size_mb: float) -> tuple[np.ndarray, int]:
    """The dataset ``name`` of about ``size_mb`` MB, and its typesize (deterministic)."""
    n = int(size_mb * 1e6)
    if name == "linspace-f64":
        return np.linspace(0, 1, n // 8), 8
    if name == "random-i32":
        return np.random.default_rng(0).integers(0, 2**31, n // 4, dtype=np.int32), 4
    rng = np.random.default_rng(0)
    vocab = [bytes(rng.integers(97, 123, rng.integers(2, 11), dtype=np.uint8)) for _ in range(4000)]
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    words = rng.choice(len(vocab), n // 5 + 1, p=p / p.sum()).tolist()
    text = b" ".join([vocab[i] for i in words])
    while len(text) < n:  # pragma: no cover - the average word is ~6.5 bytes with its space
        text += b" " + text
    return np.frombuffer(text[:n], np.uint8), 1


def best(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def params(lib, ts: int, codec: str, filt: str, nthreads: int) -> dict:
    return {
        "typesize": ts,
        "clevel": 5,
        "codec": lib.Codec[codec],
        "filters": [lib.Filter[filt]],
        "nthreads": nthreads,
    }


def pieces(data: np.ndarray, chunk_mb: float | None) -> list[np.ndarray]:
    """``data`` as one chunk, or cut into chunks of ``chunk_mb`` MB (whole items)."""
    if not chunk_mb:
        return [data]
    step = max(1, int(chunk_mb * 1e6) // data.itemsize)
    return [data[i : i + step] for i in range(0, data.size, step)]


def bench_codec(data, small, ts, codec, filt, nt, repeat, chunk_mb=None) -> list[float]:
    """One table row (from ``comp MB`` on): both libraries, same data/parameters/threads."""
    ours_p, c_p = params(pb, ts, codec, filt, nt), params(blosc2, ts, codec, filt, nt)
    big, sml = pieces(data, chunk_mb), pieces(small, chunk_mb)
    ours = [pb.compress2(x, **ours_p) for x in sml]
    theirs_small = [blosc2.compress2(x, **c_p) for x in sml]
    theirs = theirs_small if small is data else [blosc2.compress2(x, **c_p) for x in big]
    out = np.empty(data.nbytes, np.uint8)
    outs = [
        out[o : o + x.nbytes]
        for o, x in zip(np.cumsum([0, *(x.nbytes for x in big)]), big, strict=False)
    ]
    for x, c in zip(sml, ours, strict=True):  # correctness, outside the timing
        raw = x.view(np.uint8).reshape(-1)
        assert np.array_equal(np.frombuffer(pb.decompress2(c), np.uint8), raw), "ours round-trip"
        assert np.array_equal(np.frombuffer(blosc2.decompress2(c), np.uint8), raw), "C reads ours"
    for c, o in zip(theirs, outs, strict=True):
        pb.decompress2(c, dst=o, nthreads=nt)
    assert np.array_equal(out, data.view(np.uint8).reshape(-1)), "ours reads C's chunk"

    def comp(lib, p):
        return lambda: [lib.compress2(x, **p) for x in sml]

    def dec(lib):
        return lambda: [
            lib.decompress2(c, dst=o, nthreads=nt) for c, o in zip(theirs, outs, strict=True)
        ]

    mb_c, mb_d = small.nbytes / 1e6, data.nbytes / 1e6
    comp_ours, comp_c = (
        mb_c / best(comp(lib, p), repeat) for lib, p in ((pb, ours_p), (blosc2, c_p))
    )
    dec_ours, dec_c = (mb_d / best(dec(lib), repeat) for lib in (pb, blosc2))
    cr_ours, cr_c = (small.nbytes / sum(map(len, cs)) for cs in (ours, theirs_small))
    x_c, x_d = comp_ours / comp_c, dec_ours / dec_c
    return [mb_c, mb_d, comp_ours, comp_c, x_c, dec_ours, dec_c, x_d, cr_ours, cr_c]


def c_blosclz_stream(block: np.ndarray, ts: int) -> bytes | None:
    """The raw BloscLZ stream C-Blosc2 writes for ``block`` (shuffled, one block, no split)."""
    c = blosc2.compress2(
        block,
        typesize=ts,
        clevel=5,
        codec=blosc2.Codec.BLOSCLZ,
        filters=[blosc2.Filter.SHUFFLE],
        splitmode=blosc2.SplitMode.NEVER_SPLIT,
        blocksize=block.nbytes,
        nthreads=1,
    )
    nbytes, blocksize = (int.from_bytes(c[i : i + 4], "little") for i in (4, 8))
    assert nbytes == blocksize == block.nbytes
    if c[2] & 0x02:  # memcpyed chunk: no stream
        return None
    start = int.from_bytes(c[32:36], "little")
    csize = int.from_bytes(c[start : start + 4], "little")
    return None if csize >= block.nbytes else bytes(c[start + 4 : start + 4 + csize])


def bench_kernels(repeat: int, datasets: dict) -> list[tuple[str, str, float]]:
    src = np.random.default_rng(1).integers(0, 256, KERNEL_BLOCK, dtype=np.uint8)
    dst = np.empty_like(src)
    rows = []
    for name, fn in (
        ("shuffle", shuffle),
        ("unshuffle", unshuffle),
        ("bitshuffle", bitshuffle),
        ("bitunshuffle", bitunshuffle),
    ):
        for ts in (4, 8):
            t = best(lambda fn=fn, ts=ts: fn(src, dst, ts), repeat)
            rows.append((f"{name} typesize {ts}", "GB/s", src.nbytes / t / 1e9))
    for dname, (data, ts) in datasets.items():
        block = data.view(np.uint8).reshape(-1)[:KERNEL_BLOCK]
        stream = c_blosclz_stream(block, ts)
        if stream is None:
            rows.append((f"blosclz.decompress, C stream, {dname}", "incompressible", float("nan")))
            continue
        expect = np.empty_like(block)
        shuffle(block, expect, ts)
        assert np.array_equal(
            np.frombuffer(blosclz.decompress(stream, block.nbytes), np.uint8), expect
        ), "blosclz decode of a C stream"
        t = best(lambda s=stream, n=block.nbytes: blosclz.decompress(s, n), repeat)
        label = f"blosclz.decompress, C stream, {dname} (ratio {block.nbytes / len(stream):.1f})"
        rows.append((label, "MB/s", block.nbytes / t / 1e6))
    return rows


MEMORY_SNIPPET = """
import resource, sys, numpy as np
def peak():  # KiB. Linux ru_maxrss inherits the parent's peak across fork+exec; VmHWM does not
    try:
        with open("/proc/self/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmHWM:"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
lib, op, nt, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if lib == "C":
    import blosc2 as m
else:
    import pyblosc2 as m
a = np.fromfile(path + ".f64")  # no temporaries (np.linspace would peak at 2x)
with open(path, "rb") as f:
    chunk = f.read()
out = np.ones_like(a)  # page-touched
kw = dict(typesize=8, clevel=5, codec=m.Codec.LZ4, filters=[m.Filter.SHUFFLE], nthreads=nt)
base = peak()
if op == "compress":
    c = m.compress2(a, **kw)
else:
    m.decompress2(chunk, dst=out, nthreads=nt)
    assert np.array_equal(out, a)
print(base, peak() - base)
"""


def bench_memory(size_mb: float, nthreads: int) -> list[tuple]:
    """(operation, baseline ours, growth ours, baseline C, growth C) in MB (ru_maxrss is KiB)."""
    n = int(size_mb * 1e6) // 8
    kw = params(blosc2, 8, "LZ4", "SHUFFLE", nthreads)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "chunk.b2")
        a = np.linspace(0, 1, n)
        a.tofile(path + ".f64")
        with open(path, "wb") as f:
            f.write(blosc2.compress2(a, **kw))
        del a
        for op in ("compress", "decompress"):
            res = []
            for lib in ("ours", "C"):
                cmd = [sys.executable, "-c", MEMORY_SNIPPET, lib, op, str(nthreads), path]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                res += [int(v) / 1024 for v in out.split()]
            rows.append((op, *res))
    return rows


class Table:
    """Prints rows as they come, as markdown or as aligned plain text (first column left)."""

    def __init__(self, headers: str, fmts: str, markdown: bool, lead=(12, 7, 10)) -> None:
        names, self.fmts, self.md = headers.split("|"), fmts.split("|"), markdown
        mins = [*lead, *[7] * len(names)]
        self.widths = [max(len(h), w) for h, w in zip(names, mins, strict=False)]
        print()
        self.row(names, raw=True)
        if markdown:
            print("|" + "---|" * len(names))

    def row(self, cells: list, raw: bool = False) -> None:
        cells = [str(c) if raw else format(c, f) for c, f in zip(cells, self.fmts, strict=True)]
        if self.md:
            print("| " + " | ".join(cells) + " |", flush=True)
        else:
            just = [cells[0].ljust(self.widths[0])]
            just += [c.rjust(w) for c, w in zip(cells[1:], self.widths[1:], strict=True)]
            print("  ".join(just), flush=True)


def header(args) -> None:
    versions = {
        "pyblosc2": pb.__version__,
        "python-blosc2": f"{blosc2.__version__} (C-Blosc2 {blosc2.VERSION_STRING})",
    }
    versions |= {m: md.version(m) for m in ("numpy", "lz4", "zstandard")}
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count()
    print(f"# bench_chunk — {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(
        f"# python {platform.python_version()} on {platform.platform()}; "
        f"CPUs: {os.cpu_count()} (usable {usable})"
    )
    print("# " + "; ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"# command: {shlex.join([os.path.basename(sys.executable), *sys.argv])}")
    print(
        f"# sizes: {args.size_mb:g} MB per dataset; BloscLZ compression on the first "
        f"{args.blosclz_size_mb:g} MB; best of {args.repeat}; clevel 5"
    )


def profile(args, data: np.ndarray, ts: int) -> None:
    """cProfile one warm call of our compress2/decompress2 (first codec, filter, nthreads)."""
    codec, filt, nt = args.codecs[0], args.filters[0], args.nthreads[0]
    kw = params(pb, ts, codec, filt, nt)
    chunk = pb.compress2(data, **kw)
    out = np.empty_like(data)
    for what, fn in (
        ("compress", lambda: pb.compress2(data, **kw)),
        ("decompress", lambda: pb.decompress2(chunk, dst=out, nthreads=nt)),
    ):
        fn()  # warm-up: output pages touched, thread pool started, as in the timed runs
        prof = cProfile.Profile()
        prof.runcall(fn)
        for key in ("cumulative", "tottime"):
            print(
                f"\n## cProfile: ours {what}, {codec.lower()}+{filt.lower()}, nthreads {nt}, "
                f"{data.nbytes / 1e6:g} MB — top 15 by {key}"
            )
            pstats.Stats(prof, stream=sys.stdout).sort_stats(key).print_stats(15)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = ap.add_argument
    add("--size-mb", type=float, default=100, help="dataset size in MB (default 100)")
    add("--blosclz-size-mb", type=float, default=8, help="BloscLZ compression size (default 8)")
    add("--repeat", type=int, default=3, help="best of N timings (default 3)")
    add("--nthreads", type=int, nargs="+", default=[1, 2], help="default: 1 2")
    codecs, filters = [c.name for c in pb.Codec], [f.name for f in pb.Filter]
    add("--codecs", nargs="+", type=str.upper, default=["BLOSCLZ", "LZ4", "ZSTD"], choices=codecs)
    add("--filters", nargs="+", type=str.upper, default=["SHUFFLE", "BITSHUFFLE"], choices=filters)
    add("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    add("--chunk-mb", type=float, default=0, help="also as chunks of this many MB (e.g. 4)")
    add("--quick", action="store_true", help="smoke run: 4 MB, BloscLZ 1 MB, 1 repeat")
    add("--no-kernels", action="store_true", help="skip the kernel table")
    add("--no-memory", action="store_true", help="skip the peak-RSS table")
    add("--profile", action="store_true", help="only cProfile ours (first of each list)")
    add("--markdown", action="store_true", help="print markdown tables")
    args = ap.parse_args()
    if args.quick:
        args.size_mb, args.blosclz_size_mb, args.repeat = 4, 1, 1
        args.chunk_mb = args.chunk_mb and 1
    args.blosclz_size_mb = min(args.blosclz_size_mb, args.size_mb)
    header(args)
    data = {d: make_dataset(d, args.size_mb) for d in args.datasets}
    if args.profile:
        profile(args, *data[args.datasets[0]])
        return

    table = Table(
        "data|codec|filter|thr|layout|comp MB|dec MB|comp ours|comp C|x|dec ours|dec C|x|"
        "cr ours|cr C",
        "|||d||g|g|.0f|.0f|.2f|.0f|.0f|.2f|.2f|.2f",
        args.markdown,
    )
    layouts = [None] + ([args.chunk_mb] if args.chunk_mb else [])
    for dname, (arr, ts) in data.items():
        for codec in args.codecs:
            small = arr
            if codec == "BLOSCLZ" and args.blosclz_size_mb < args.size_mb:
                small = arr[: int(args.blosclz_size_mb * 1e6) // arr.itemsize]
            for filt, nt, cm in itertools.product(args.filters, args.nthreads, layouts):
                r = bench_codec(arr, small, ts, codec, filt, nt, args.repeat, cm)
                n = len(pieces(arr, cm))
                layout = f"{n}x{arr.nbytes / n / 1e6:.0f}MB"
                table.row([dname, codec.lower(), filt.lower(), nt, layout, *r])
    if not args.no_kernels:
        print("\nKernels (ours only — python-blosc2 exposes no kernel-level API):")
        table = Table("kernel (4 MiB block)|unit|ours", "||.2f", args.markdown, (56, 14))
        for row in bench_kernels(max(args.repeat, 5), data):
            table.row(list(row))
    if not args.no_memory:
        print(
            f"\nPeak RSS, MB (fresh subprocess per cell, VmHWM): lz4+shuffle linspace-f64 "
            f"{args.size_mb:g} MB, nthreads {max(args.nthreads)}; growth = peak - baseline"
        )
        table = Table(
            "operation|baseline ours|growth ours|baseline C|growth C",
            "|.0f|.0f|.0f|.0f",
            args.markdown,
        )
        for row in bench_memory(args.size_mb, max(args.nthreads)):
            table.row(list(row))


if __name__ == "__main__":
    main()
