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
is better); a row's last cell is the median number of page faults one call took, per library
(a fresh result's first touches: on some rows they cost as much as the decode, and how many a
call takes depends on what the process freed before it, for both libraries). With the numba
set, the last rows give the first reads of fresh processes, one
process per mode and round reporting every stage (import, open, the first and the next
``a[:]``, ``get_slice`` and ``decompress2``, and the reads after the kernel swap): python-blosc2,
and pyblosc2 with ``PYBLOSC2_KERNELS`` unset (numba loading in the background), ``=numba`` and
``=numpy``, an empty numba cache and a warm one; each says how much longer than
python-blosc2's its import + open + first ``a[:]`` took (``--only "first reads"`` runs only
these, in minutes).
Peak RSS growth of the whole reads (``s[:]``, ``a[:]``) is measured in a fresh interpreter
per library (``VmHWM`` over the interpreter with the file open; Linux), next to the result
size. The table is
printed as markdown and, with ``--json``, written as JSON (``benchmarks/results.py``'s schema).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def timed(
    fns: dict[str, Callable[[], Any]], repeat: int
) -> tuple[dict[str, list[float]], dict[str, list[int]]]:
    """Wall times of each function, the libraries (and kernel sets) interleaved in every
    repeat, and the page faults each call took (first touches of fresh memory: a fresh
    result's pages cost ~1.5-3 us each on the 2-vCPU machine, and whether an allocation gets
    fresh pages depends on what the process freed before, so a row's time moves with them)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    faults: dict[str, list[int]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
            faults[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    return times, faults


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
import json, sys, time
t0 = time.perf_counter()
lib, apath, spath, nth = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
m = __import__(lib)
st = {"import": time.perf_counter() - t0}
t = time.perf_counter()
a = m.open(apath, mode="r", dparams=m.DParams(nthreads=nth))
s = m.open(spath, mode="r", dparams=m.DParams(nthreads=nth))
n = s.nbytes // 8 - 100
starts = [(i * 7919 * 4099) % n for i in range(1000)]
chunks = [s.get_chunk(i) for i in range(min(16, s.nchunks))]
st["open"] = time.perf_counter() - t
run = {"a[:]": lambda: a[:], "get_slice": lambda: [s.get_slice(i, i + 100) for i in starts],
       "decompress2": lambda: [m.decompress2(c, nthreads=nth) for c in chunks]}
sets = []
def stage(tag):
    for op, fn in run.items():
        t = time.perf_counter(); fn(); st[f"{tag} {op}"] = time.perf_counter() - t
    if lib != "blosc2":
        sets.append(m.kernels.active().name)
stage("first"); stage("next")
if lib != "blosc2":
    from pyblosc2.kernels import select, wait_for_kernels
    t = time.perf_counter()
    loader = select._loader
    while loader is not None and loader.is_alive() and time.perf_counter() < t + 120:
        time.sleep(0.005)  # the load at its own pace (wait_for_kernels would lift its brake)
    wait_for_kernels()
    st["swapped by"] = time.perf_counter() - t0
    stage("after swap"); stage("steady")
print(json.dumps({"stages": st, "sets": sets}))
"""

#: fills a numba cache with every kernel the background loader warms
WARM_CACHE = (
    "import pyblosc2.kernels as k; k.use_kernels('numba'); "
    "from pyblosc2.kernels.numba_set import warm_up; warm_up(full=True)"
)

#: (label, library, PYBLOSC2_KERNELS, numba cache) of the fresh processes of the first-read
#: rows; "auto": the variable unset (numba loads in the background while numpy serves),
#: "numba": the synchronous load
FIRST_MODES = [
    ("python-blosc2", "blosc2", "", "warm"),
    ("numpy", "pyblosc2", "numpy", "warm"),
    ("auto, warm cache", "pyblosc2", "", "warm"),
    ("numba, warm cache", "pyblosc2", "numba", "warm"),
    ("auto, cold cache", "pyblosc2", "", "cold"),
    ("numba, cold cache", "pyblosc2", "numba", "cold"),
]
FIRST_OPS = ("a[:]", "get_slice", "decompress2")


def first_reads(apath: str, spath: str, repeat: int, nthreads: int) -> list[dict[str, Any]]:
    """The first reads of fresh processes: one process per mode (:data:`FIRST_MODES`) and
    round, ``repeat`` rounds with the modes interleaved, each process timing every stage:
    import, open (the NDArray, the SChunk and 16 of its chunks), then ``a[:]``, 1000
    ``get_slice`` and ``decompress2`` of 16 chunks (:data:`FIRST_OPS`) the first time and the
    next, and for pyblosc2 the same after the kernel swap and once more (steady). "cold"
    starts with an empty numba cache (in the first round only: its background load takes a
    minute or more), "warm" with one a first process filled (:data:`WARM_CACHE`).
    ``fresh_first_s``: import + open + the first ``a[:]``, what a user's script waits for its
    first array; ``vs_C_s``: that minus python-blosc2's (issue 35's target: at most 0.3 s)."""
    runs: dict[str, list[dict[str, Any]]] = {m[0]: [] for m in FIRST_MODES}
    with tempfile.TemporaryDirectory() as warm:
        subprocess.run(
            [sys.executable, "-c", WARM_CACHE],
            check=True, env={**os.environ, "NUMBA_CACHE_DIR": warm},
        )  # fmt: skip
        for round_ in range(repeat):
            for label, lib, kset, cache in FIRST_MODES:
                if cache == "cold" and round_:
                    continue  # (once: a cold cache's background load takes a minute or more)
                with tempfile.TemporaryDirectory() as cold:
                    env = {k: v for k, v in os.environ.items() if k != ENV}
                    env["NUMBA_CACHE_DIR"] = warm if cache == "warm" else cold
                    if kset:
                        env[ENV] = kset
                    p = subprocess.run(
                        [sys.executable, "-c", FIRST_READ, lib, apath, spath, str(nthreads)],
                        capture_output=True, text=True, check=True, env=env, timeout=600,
                    )  # fmt: skip
                runs[label].append(json.loads(p.stdout))
    fresh = {
        label: [r["stages"]["import"] + r["stages"]["open"] + r["stages"]["first a[:]"] for r in rs]
        for label, rs in runs.items()
    }
    c_fresh = statistics.median(fresh["python-blosc2"])
    rows = []
    for label, rs in runs.items():
        names = list(rs[0]["stages"])
        med = {k: statistics.median(r["stages"][k] for r in rs) for k in names}
        f = statistics.median(fresh[label])
        rows.append(
            {
                "operation": f"first reads in a fresh process, {nthreads} threads: {label}",
                **{f"{k}_s": v for k, v in med.items()},
                "fresh_first_s": f,
                "fresh_first_range_s": (min(fresh[label]), max(fresh[label])),
                "vs_C_s": f - c_fresh,
                "sets": sorted({"/".join(r["sets"]) for r in rs}),
            }
        )
    return rows


def print_first_reads(rows: list[dict[str, Any]]) -> None:
    """The first-read rows as a markdown table, one line per mode."""
    print(
        "\n| fresh process | import s | open s | first a[:] s | next a[:] s | import+open+first "
        "a[:] s (range) | minus python-blosc2's s | first / next get_slice s | first / next "
        "decompress2 s | swapped by s | a[:] after swap / steady s | sets |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        swap = (
            f"{r['swapped by_s']:.2f} | {r['after swap a[:]_s']:.3f} / {r['steady a[:]_s']:.3f}"
            if "swapped by_s" in r
            else "- | -"
        )
        print(
            f"| {r['operation'].split(': ', 1)[1]} | {r['import_s']:.3f} | {r['open_s']:.3f} | "
            f"{r['first a[:]_s']:.3f} | {r['next a[:]_s']:.3f} | {r['fresh_first_s']:.3f} "
            f"({r['fresh_first_range_s'][0]:.3f}-{r['fresh_first_range_s'][1]:.3f}) | "
            f"{r['vs_C_s']:+.3f} | {r['first get_slice_s']:.3f} / {r['next get_slice_s']:.3f} | "
            f"{r['first decompress2_s']:.3f} / {r['next decompress2_s']:.3f} | {swap} | "
            f"{', '.join(r['sets']) or '-'} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the rows here as JSON")
    ap.add_argument(
        "--first-repeat",
        type=int,
        default=5,
        help="rounds of the first-read rows: one fresh process per mode and round (22 at 5,"
        " each timing every stage; the cold-cache modes run in the first round only, their"
        " loader waited for up to 120 s; 0 skips those rows)",
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
        t, faults = timed(with_sets(fns, sets), args.repeat)
        c = statistics.median(t["C"])
        r: dict[str, Any] = {"operation": label, "C_s": c, "C_range_s": (min(t["C"]), max(t["C"]))}
        r["faults"] = {k: int(statistics.median(v)) for k, v in faults.items()}
        cells = [label, f"{c:.4f}"]
        for name in sets:
            ours = t[f"ours:{name}"]
            m = statistics.median(ours)
            r[f"{name}_s"], r[f"{name}_range_s"] = m, (min(ours), max(ours))
            r[f"{name}_ratio"] = c / m
            cells += [f"{m:.4f} ({min(ours):.4f}-{max(ours):.4f})", f"{c / m:.2f}"]
        cells.append(" / ".join(str(f) for f in r["faults"].values()))
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
    faults = " / ".join(["C", *sets])
    print(f"| operation | python-blosc2 s |{heads} page faults per call ({faults}) |")
    print("|---|---|" + "---|---|" * len(sets) + "---|")
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
            rs = first_reads(apath["ours"], spath["ours"], args.first_repeat, NTHREADS)
            rows += rs
            print_first_reads(rs)
    if args.json:
        results.write(args.json, run, rows)  # benchmarks/results.py's schema


if __name__ == "__main__":
    main()
