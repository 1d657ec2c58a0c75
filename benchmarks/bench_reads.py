"""The rows of issues 10 and 24, pyblosc2 against python-blosc2 in one process, interleaved.

Run::

    python benchmarks/bench_reads.py                      # 128 MB, 5 repeats
    python benchmarks/bench_reads.py --size-mb 32 --repeat 3 --json out.json

Every row uses zstd clevel 5 + shuffle and nthreads 2 (``decompress2`` and ``compress2`` rows
name their codec and filter; a ``compress2`` row says whether both libraries wrote the same
bytes), files in the page cache. Each repeat times python-blosc2 and then pyblosc2 on the
same operation and data, pyblosc2 once per kernel set (``--kernels``; default: every set
that loads, e.g. numpy and numba side by side); a row reports the median time of each over
the repeats with its range, and ``ratio`` = python-blosc2's time / ours (1.0 = parity, higher
is better). With the numba set, the last rows give the JIT's cost: the first read (``a[:]``,
``get_slice``, ``decompress2``) in fresh processes against the next one, and the first read
right after numba swapped in against the one after it (the kernels it needs loaded before the
swap, or not), with
``PYBLOSC2_KERNELS`` unset (numba loading in the background), ``=numba`` and ``=numpy``, with
an empty numba cache and a warm one (``--only "first reads"`` runs only these).
Peak RSS growth of the whole reads (``s[:]``, ``a[:]``) is measured in a fresh interpreter
per library (``VmHWM`` over the interpreter with the file open; Linux), next to the result
size. The table is
printed as markdown and, with ``--json``, written as JSON (``benchmarks/results.py``'s schema).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

NTHREADS = 2
CHUNK = 4 * 2**20
ENV = "PYBLOSC2_KERNELS"

RSS_WORKER = r"""
import json, sys
def hwm():  # this process's peak RSS in kB (ru_maxrss would include the parent's, after fork)
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmHWM"))
lib, kind, path = sys.argv[1:4]
m = __import__("blosc2" if lib == "C" else "pyblosc2")
if lib != "C":
    m.kernels.active()  # the kernel set (numba's ~100 MB) loaded before the baseline
obj = m.open(path, mode="r", dparams={"nthreads": 2})
base = hwm()
r = obj[:]
grow = hwm() - base
size = len(r) if kind == "s" else r.nbytes
print(json.dumps({"rss_mb": grow / 1024, "result_mb": size / 2**20}))
"""


def timed(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, list[float]]:
    """Wall times of each function, the libraries (and kernel sets) interleaved in every
    repeat."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def with_sets(fns: dict[str, Callable[[], Any]], sets: list[str]) -> dict[str, Callable[[], Any]]:
    """``fns`` with pyblosc2's function run once per kernel set (``ours:numpy``, ...)."""
    from pyblosc2.kernels import kernels_in_use

    out = {"C": fns["C"]}
    for name in sets:

        def run(fn: Callable[[], Any] = fns["ours"], name: str = name) -> Any:
            with kernels_in_use(name):
                return fn()

        out[f"ours:{name}"] = run
    return out


FIRST_READ = r"""
import json, os, sys, time
t0 = time.perf_counter()
import pyblosc2 as P
from pyblosc2.kernels import active, select, wait_for_kernels
op, path, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
if op == "a[:]":
    a = P.open(path, mode="r", dparams=P.DParams(nthreads=nth))
    run = lambda: a[:]
elif op == "get_slice":
    s = P.open(path, mode="r", dparams=P.DParams(nthreads=nth))
    starts = [(i * 7919 * 4099) % (s.nbytes // 8 - 100) for i in range(1000)]
    run = lambda: [s.get_slice(i, i + 100) for i in starts]
else:  # decompress2 of the file's first 16 chunks
    s = P.open(path, mode="r")
    chunks = [s.get_chunk(i) for i in range(min(16, s.nchunks))]
    run = lambda: [P.decompress2(c, nthreads=nth) for c in chunks]
t1 = time.perf_counter(); run(); t2 = time.perf_counter(); n1 = active().name
run(); t3 = time.perf_counter(); n2 = active().name
while select._loader is not None and select._loader.is_alive() and time.perf_counter() < t3 + 60:
    time.sleep(0.005)  # the load at its own pace (wait_for_kernels would lift its brake)
wait_for_kernels(); t4 = time.perf_counter()
run(); t5 = time.perf_counter(); n3 = active().name
run(); t6 = time.perf_counter()
print(json.dumps({"import_open": t1 - t0, "first": t2 - t1, "next": t3 - t2,
                  "after_swap": t5 - t4, "steady": t6 - t5, "loaded_by": t4 - t0,
                  "sets": [n1, n2, n3]}))
"""

#: fills a numba cache with every kernel the background loader warms
WARM_CACHE = (
    "import pyblosc2.kernels as k; k.use_kernels('numba'); "
    "from pyblosc2.kernels.numba_set import warm_up; warm_up(full=True)"
)

#: (label, PYBLOSC2_KERNELS, numba cache) of the first-call runs; "auto": the variable unset
#: (numba loads in the background while numpy serves), "numba": the synchronous load
FIRST_MODES = [
    ("numpy", "numpy", "warm"),
    ("auto, warm cache", "", "warm"),
    ("numba, warm cache", "numba", "warm"),
    ("auto, cold cache", "", "cold"),
    ("numba, cold cache", "numba", "cold"),
]


def first_reads(paths: dict[str, str], repeat: int) -> list[dict[str, Any]]:
    """The JIT's cost in fresh processes: import, open and the first read (``a[:]``, 1000
    ``get_slice``, ``decompress2`` of 16 chunks; 1 and 2 threads) against the next one and
    the first read right after the swap against the next (steady) one, per kernel mode
    (:data:`FIRST_MODES`), ``repeat`` fresh processes each, the modes interleaved; "cold"
    starts each process with an empty numba cache, "warm" with one a first process filled
    (:data:`WARM_CACHE`). ``loaded_by``: when the
    background load ended (polled; the swap happened before it)."""
    rows = []
    with tempfile.TemporaryDirectory() as warm:
        subprocess.run(
            [sys.executable, "-c", WARM_CACHE],
            check=True, env={**os.environ, "NUMBA_CACHE_DIR": warm},
        )  # fmt: skip
        for op, path in paths.items():
            for nth in (1, 2):
                runs: dict[str, list[dict[str, Any]]] = {m[0]: [] for m in FIRST_MODES}
                for _ in range(repeat):
                    for label, kset, cache in FIRST_MODES:
                        with tempfile.TemporaryDirectory() as cold:
                            env = {k: v for k, v in os.environ.items() if k != ENV}
                            env["NUMBA_CACHE_DIR"] = warm if cache == "warm" else cold
                            if kset:
                                env[ENV] = kset
                            p = subprocess.run(
                                [sys.executable, "-c", FIRST_READ, op, path, str(nth)],
                                capture_output=True, text=True, check=True, env=env,
                            )  # fmt: skip
                        runs[label].append(json.loads(p.stdout))
                for label, rs in runs.items():
                    med = {
                        k: statistics.median(r[k] for r in rs)
                        for k in (
                            "import_open",
                            "first",
                            "next",
                            "after_swap",
                            "steady",
                            "loaded_by",
                        )
                    }
                    extra = [r["import_open"] + r["first"] - r["next"] for r in rs]
                    swap = [r["after_swap"] - r["steady"] for r in rs]
                    sets = sorted({"/".join(r["sets"]) for r in rs})
                    rows.append(
                        {
                            "operation": f"first {op}, {nth} thread(s), {label}",
                            **{f"{k}_s": v for k, v in med.items()},
                            "extra_s": statistics.median(extra),
                            "extra_range_s": (min(extra), max(extra)),
                            "swap_extra_s": statistics.median(swap),
                            "swap_extra_range_s": (min(swap), max(swap)),
                            "sets": sets,
                        }
                    )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the rows here as JSON")
    ap.add_argument(
        "--first-repeat",
        type=int,
        default=5,
        help="fresh processes per mode in the first-read rows (150 processes at 5, up to 60 s"
        " each while an auto-mode loader compiles: 0 skips those rows)",
    )
    ap.add_argument("--only", help="run only rows whose label contains this text")
    ap.add_argument(
        "--kernels",
        nargs="+",
        default=None,
        help="pyblosc2 kernel sets to run side by side (default: every set that loads)",
    )
    args = ap.parse_args()

    import blosc2 as C
    import results  # benchmarks/results.py, beside this script

    import pyblosc2 as P
    from pyblosc2.kernels import kernel_sets, kernels_in_use

    sets = args.kernels or [n for n in kernel_sets() if kernels_in_use(n).__enter__().name == n]
    run = results.start(
        "bench_reads", size_mb=args.size_mb, repeat=args.repeat, nthreads=NTHREADS, kernels=sets,
        first_repeat=args.first_repeat, only=args.only,
    )  # fmt: skip
    libs = {"C": C, "ours": P}
    cp = {k: m.CParams(codec=m.Codec.ZSTD, clevel=5, nthreads=NTHREADS) for k, m in libs.items()}
    dp = {k: m.DParams(nthreads=NTHREADS) for k, m in libs.items()}
    rows: list[dict[str, Any]] = []

    def row(label: str, fns: dict[str, Callable[[], Any]], **extra: Any) -> None:
        if args.only and args.only not in label:
            return
        t = timed(with_sets(fns, sets), args.repeat)
        c = statistics.median(t["C"])
        r: dict[str, Any] = {"operation": label, "C_s": c, "C_range_s": (min(t["C"]), max(t["C"]))}
        cells = [label, f"{c:.4f}"]
        for name in sets:
            ours = t[f"ours:{name}"]
            m = statistics.median(ours)
            r[f"{name}_s"], r[f"{name}_range_s"] = m, (min(ours), max(ours))
            r[f"{name}_ratio"] = c / m
            cells += [f"{m:.4f} ({min(ours):.4f}-{max(ours):.4f})", f"{c / m:.2f}"]
        r.update(extra)
        rows.append(r)
        print("| " + " | ".join(cells) + " |", flush=True)

    size = args.size_mb * 2**20
    print(
        f"# bench_reads | pyblosc2 {P.__version__} | python-blosc2 {C.__version__} | numpy "
        f"{np.__version__} | cores {os.cpu_count()} | nthreads {NTHREADS} | {args.size_mb} MB"
        f" | median of {args.repeat}"
    )
    print(f"# command: python {' '.join(sys.argv)} | load {os.getloadavg()[0]:.1f}\n")
    heads = "".join(f" pyblosc2 {n} s (range) | ratio {n} |" for n in sets)
    print(f"| operation | python-blosc2 s |{heads}")
    print("|---|---|" + "---|---|" * len(sets))
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

        # -- compress2 ------------------------------------------------------------------
        for label, codec, flt in (("lz4", "LZ4", "SHUFFLE"), ("zstd+shuffle", "ZSTD", "SHUFFLE")):

            def comp(
                m: Any, codec: str = codec, flt: str = flt, nth: int = NTHREADS
            ) -> Callable[[], list[bytes]]:
                kw = {"codec": getattr(m.Codec, codec), "filters": [getattr(m.Filter, flt)]}
                return lambda: [
                    m.compress2(dd[i * per : (i + 1) * per], clevel=5, typesize=8,
                                nthreads=nth, **kw)
                    for i in range(dchunks)
                ]  # fmt: skip

            fns = {k: comp(libs[k]) for k in libs}
            # compared on one thread: C-Blosc2 places blocks in the order its threads finish
            same = comp(libs["C"], nth=1)() == comp(libs["ours"], nth=1)()
            row(
                f"compress2 {dchunks * 4} MB in 4 MiB chunks: {label}"
                f" (bytes on 1 thread {'identical' if same else 'differ'})",
                fns,
                identical=same,
            )

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
        if (
            "numba" in sets
            and args.first_repeat > 0
            and not (args.only and args.only not in "first reads")
        ):
            fpaths = {
                "a[:]": apath["ours"],
                "get_slice": spath["ours"],
                "decompress2": spath["ours"],
            }
            print(
                "\n| first read in a fresh process | import+open s | first s | next s | "
                "import+open+first-next s (range) | first after swap s | after swap-next s "
                "(range) | steady s | swapped by s | sets first/next/after swap |"
            )
            print("|---|---|---|---|---|---|---|---|---|---|")
            for r in first_reads(fpaths, args.first_repeat):
                rows.append(r)
                print(
                    f"| {r['operation']} | {r['import_open_s']:.3f} | {r['first_s']:.3f} | "
                    f"{r['next_s']:.3f} | {r['extra_s']:.3f} ({r['extra_range_s'][0]:.3f}-"
                    f"{r['extra_range_s'][1]:.3f}) | {r['after_swap_s']:.3f} | "
                    f"{r['swap_extra_s']:.3f} ({r['swap_extra_range_s'][0]:.3f}-"
                    f"{r['swap_extra_range_s'][1]:.3f}) | {r['steady_s']:.3f} | "
                    f"{r['loaded_by_s']:.3f} | {', '.join(r['sets'])} |",
                    flush=True,
                )
    if args.json:
        results.write(args.json, run, rows)  # benchmarks/results.py's schema


if __name__ == "__main__":
    main()
