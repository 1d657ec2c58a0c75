"""The rows of issue 10, pyblosc2 against python-blosc2 in one process, interleaved.

Run::

    python benchmarks/bench_reads.py                      # 128 MB, 5 repeats
    python benchmarks/bench_reads.py --size-mb 32 --repeat 3 --json out.json

Every row uses zstd clevel 5 + shuffle and nthreads 2 (``decompress2`` rows name their codec
and filter), files in the page cache. Each repeat times python-blosc2 and then pyblosc2 on the
same operation and data; a row reports the best time of each over the repeats, and
``ratio`` = python-blosc2's time / ours (1.0 = parity, higher is better). Peak RSS growth of
the whole reads (``s[:]``, ``a[:]``) is measured in a fresh interpreter per library
(``VmHWM`` over the interpreter with the file open; Linux), next to the result size. The table is
printed as markdown and, with ``--json``, written as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

NTHREADS = 2
CHUNK = 4 * 2**20

RSS_WORKER = r"""
import json, sys
def hwm():  # this process's peak RSS in kB (ru_maxrss would include the parent's, after fork)
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmHWM"))
lib, kind, path = sys.argv[1:4]
m = __import__("blosc2" if lib == "C" else "pyblosc2")
obj = m.open(path, mode="r", dparams={"nthreads": 2})
base = hwm()
r = obj[:]
grow = hwm() - base
size = len(r) if kind == "s" else r.nbytes
print(json.dumps({"rss_mb": grow / 1024, "result_mb": size / 2**20}))
"""


def best_of(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best wall time of each function, the libraries interleaved in every repeat."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the rows here as JSON")
    ap.add_argument("--only", help="run only rows whose label contains this text")
    args = ap.parse_args()

    import blosc2 as C

    import pyblosc2 as P

    libs = {"C": C, "ours": P}
    cp = {k: m.CParams(codec=m.Codec.ZSTD, clevel=5, nthreads=NTHREADS) for k, m in libs.items()}
    dp = {k: m.DParams(nthreads=NTHREADS) for k, m in libs.items()}
    rows: list[dict[str, Any]] = []

    def row(label: str, fns: dict[str, Callable[[], Any]], **extra: Any) -> None:
        if args.only and args.only not in label:
            return
        t = best_of(fns, args.repeat)
        r = {"operation": label, "C_s": t["C"], "ours_s": t["ours"], "ratio": t["C"] / t["ours"]}
        r.update(extra)
        rows.append(r)
        print(f"| {label} | {t['C']:.4f} | {t['ours']:.4f} | {r['ratio']:.2f} |", flush=True)

    size = args.size_mb * 2**20
    print(
        f"# bench_reads | pyblosc2 {P.__version__} | python-blosc2 {C.__version__} | numpy "
        f"{np.__version__} | cores {os.cpu_count()} | nthreads {NTHREADS} | {args.size_mb} MB"
        f" | best of {args.repeat}"
    )
    print(f"# command: python {' '.join(sys.argv)}\n")
    print("| operation | python-blosc2 s | pyblosc2 s | ratio |")
    print("|---|---|---|---|")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        # -- SChunk ---------------------------------------------------------------------
        nchunks = size // CHUNK
        per = CHUNK // 8
        data = np.linspace(0, 1e6, nchunks * per)
        spath = {k: os.path.join(tmp, f"{k}.b2frame") for k in libs}

        def append(k: str) -> Callable[[], None]:
            def go() -> None:
                m = libs[k]
                s = m.SChunk(
                    chunksize=CHUNK, urlpath=spath[k], contiguous=True, mode="w",
                    cparams=cp[k], dparams=dp[k],
                )  # fmt: skip
                for i in range(nchunks):
                    s.append_data(data[i * per : (i + 1) * per])

            return go

        row(f"SChunk: append {nchunks} x 4 MiB chunks to a file", {k: append(k) for k in libs})
        for k in libs:  # the row above may have been skipped
            if not os.path.exists(spath[k]):
                append(k)()
        sch = {k: libs[k].open(spath[k], mode="r", dparams=dp[k]) for k in libs}
        row("SChunk: s[:] of a reopened file", {k: (lambda s=sch[k]: s[:]) for k in libs})
        starts = rng.integers(0, len(data) - 100, 1000).tolist()

        def slices(s: Any) -> Callable[[], None]:
            return lambda: [s.get_slice(a, a + 100) for a in starts]

        row("SChunk: 1000 random 100-item get_slice", {k: slices(sch[k]) for k in libs})
        del sch

        # -- NDArray --------------------------------------------------------------------
        shape = (max(8, size // (512 * 512 * 4) // 8 * 8), 512, 512)  # 128 MB: (128, 512, 512)
        x = np.linspace(0, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)
        apath = {k: os.path.join(tmp, f"{k}.b2nd") for k in libs}
        part = {"chunks": (8, 128, 512), "blocks": (2, 32, 512)}

        def write(k: str) -> Callable[[], None]:
            m = libs[k]
            return lambda: m.asarray(
                x, urlpath=apath[k], mode="w", cparams=cp[k], dparams=dp[k], **part
            )

        row(f"NDArray {shape} float32: asarray to file", {k: write(k) for k in libs})
        for k in libs:
            if not os.path.exists(apath[k]):
                write(k)()
        arr = {k: libs[k].open(apath[k], mode="r", dparams=dp[k]) for k in libs}
        row("NDArray: a[:]", {k: (lambda a=arr[k]: a[:]) for k in libs})
        slabs = rng.integers(0, shape[0], 16).tolist()
        row("NDArray: 16 slabs a[i]", {k: (lambda a=arr[k]: [a[i] for i in slabs]) for k in libs})
        js = rng.integers(0, shape[1], 4).tolist()
        row(
            "NDArray: 4 cross-sections a[:, j, :]",
            {k: (lambda a=arr[k]: [a[:, j, :] for j in js]) for k in libs},
        )
        pts = [tuple(int(rng.integers(0, n)) for n in shape) for _ in range(300)]
        row(
            "NDArray: 300 points a[i, j, k]",
            {k: (lambda a=arr[k]: [a[p] for p in pts]) for k in libs},
        )
        row(
            "NDArray: a[::7, ::100, ::100] (strided)",
            {k: (lambda a=arr[k]: a[::7, ::100, ::100]) for k in libs},
        )
        del arr

        # -- decompress2 ----------------------------------------------------------------
        dchunks = min(16, max(1, size // CHUNK // 2))
        dd = data[: dchunks * per]
        for label, codec, flt in (
            ("lz4", "LZ4", "SHUFFLE"),
            ("zstd", "ZSTD", "SHUFFLE"),
            ("lz4+bitshuffle", "LZ4", "BITSHUFFLE"),
            ("blosclz", "BLOSCLZ", "SHUFFLE"),
        ):
            chunks = [
                C.compress2(
                    dd[i * per : (i + 1) * per],
                    codec=getattr(C.Codec, codec),
                    clevel=5,
                    typesize=8,
                    filters=[getattr(C.Filter, flt)],
                    nthreads=NTHREADS,
                )
                for i in range(dchunks)
            ]
            fns = {
                k: (lambda m=libs[k], cs=chunks: [m.decompress2(c, nthreads=NTHREADS) for c in cs])
                for k in libs
            }
            row(f"decompress2 {dchunks * 4} MB in 4 MiB chunks -> bytes: {label}", fns)

        # -- peak RSS of whole reads, one fresh interpreter per library -------------------
        for kind, paths in (("s", spath), ("a", apath)):
            label = f"peak RSS growth of {kind}[:]"
            if args.only and args.only not in label:
                continue
            res = {}
            for k in libs:
                p = subprocess.run(
                    [sys.executable, "-c", RSS_WORKER, k, kind, paths[k]],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                res[k] = json.loads(p.stdout)
            r = {
                "operation": label,
                "C_rss_mb": res["C"]["rss_mb"],
                "ours_rss_mb": res["ours"]["rss_mb"],
                "result_mb": res["ours"]["result_mb"],
                "rss_ratio": res["ours"]["rss_mb"] / max(res["C"]["rss_mb"], 1e-9),
            }
            rows.append(r)
            print(
                f"| {label} (MB; result {r['result_mb']:.0f}) | {r['C_rss_mb']:.0f} | "
                f"{r['ours_rss_mb']:.0f} | {r['rss_ratio']:.2f} (ours / C) |",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size_mb": args.size_mb, "repeat": args.repeat, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
