"""zarr v3 arrays: pyblosc2's ``blosc`` codec vs zarr-python's own (C-Blosc 1.x via numcodecs).

Run::

    python benchmarks/bench_zarr.py                    # 500 MB float32 array, lz4 and zstd
    python benchmarks/bench_zarr.py --size-mb 64       # smaller
    python benchmarks/bench_zarr.py --lz4-accel        # + which LZ4 acceleration reproduces
                                                       #   C-Blosc 1.x's stream sizes

zarr-python writes and reads the same float32 array (a smooth signal with 2-decimal noise) with
``BloscCodec(cname, clevel=5, shuffle="shuffle", typesize=4)`` — zarr's own codec, then ours
(``pyblosc2.compat.zarr_codec.BloscCodec``, selected for reading by zarr's config) — into a
``MemoryStore``, so the codec dominates. Both codecs compress a chunk on one thread; zarr runs
``async.concurrency`` chunks at once on its thread pool, the same for both (``--concurrency``).

Output is a markdown table. Columns: seconds (best of ``--repeat``); ``x`` = zarr's time /
ours (higher is better, 1.0 = parity; the goal is >= 0.5); ``cr`` = uncompressed / stored
bytes of each, and ``d cr`` ours relative to zarr's (goal: within 1% for lz4/zstd, 10% for
blosclz). BloscLZ is pure Python
on our side, so its rows use ``--blosclz-size-mb``. Every array is checked: stock zarr reads
ours and ours reads zarr's, equal to the data.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
import warnings

import numpy as np
import zarr

from pyblosc2.compat.zarr_codec import ZARR_CONFIG, BloscCodec, register

STOCK_CONFIG = {"codecs.blosc": "zarr.codecs.blosc.BloscCodec"}


def make_data(size_mb: float) -> np.ndarray:
    """A float32 'measurement': a smooth signal plus noise, rounded to 2 decimals."""
    n = int(size_mb * 1e6) // 4
    rng = np.random.default_rng(0)
    x = np.arange(n, dtype=np.float32)
    data = 20 + 5 * np.sin(x / 5000, dtype=np.float32)
    data += rng.normal(0, 0.05, n).astype(np.float32)
    return np.round(data, 2).astype(np.float32)


def stored_bytes(store: dict) -> int:
    return sum(len(v.to_bytes()) for k, v in store.items() if not k.endswith("zarr.json"))


def best(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def write(codec, data: np.ndarray, chunk: int) -> dict:
    store: dict = {}
    z = zarr.create_array(
        zarr.storage.MemoryStore(store),
        shape=data.shape,
        chunks=(chunk,),
        dtype=data.dtype,
        compressors=codec,
    )
    z[...] = data
    return store


def read(store: dict, config: dict) -> np.ndarray:
    with zarr.config.set(config):
        z = zarr.open_array(zarr.storage.MemoryStore(store), mode="r")
        return z[...]


def run_case(cname: str, size_mb: float, chunk_mb: float, clevel: int, repeat: int) -> dict:
    data = make_data(size_mb)
    chunk = max(int(chunk_mb * 1e6) // 4, 1)
    kw = dict(cname=cname, clevel=clevel, shuffle="shuffle", typesize=4)
    theirs_codec, ours_codec = zarr.codecs.BloscCodec(**kw), BloscCodec(**kw)
    w_theirs, theirs = best(lambda: write(theirs_codec, data, chunk), repeat)
    w_ours, ours = best(lambda: write(ours_codec, data, chunk), repeat)
    r_theirs, got_theirs = best(lambda: read(theirs, STOCK_CONFIG), repeat)
    r_ours, got_ours = best(lambda: read(ours, ZARR_CONFIG), repeat)
    assert np.array_equal(got_theirs, data) and np.array_equal(got_ours, data)
    assert np.array_equal(read(ours, STOCK_CONFIG), data)  # stock zarr reads ours
    assert np.array_equal(read(theirs, ZARR_CONFIG), data)  # ours reads zarr's
    cr_theirs, cr_ours = data.nbytes / stored_bytes(theirs), data.nbytes / stored_bytes(ours)
    return dict(
        cname=cname,
        size_mb=data.nbytes / 1e6,
        w_theirs=w_theirs,
        w_ours=w_ours,
        r_theirs=r_theirs,
        r_ours=r_ours,
        cr_theirs=cr_theirs,
        cr_ours=cr_ours,
    )


def lz4_acceleration_report() -> list[str]:
    """Which python-lz4 acceleration gives C-Blosc 1.x's LZ4 stream size, by stream size and
    clevel (C-Blosc 1.x calls ``LZ4_compress_fast(..., 10 - clevel)``; one stream per block
    with typesize 1 and no shuffle)."""
    import blosc
    import lz4.block

    rng = np.random.default_rng(0)
    raw = make_data(2).tobytes() + rng.integers(0, 4, 1 << 18, dtype=np.uint8).tobytes()
    lines = [
        "| stream bytes | clevel | C-Blosc 1.x size | accel 10-clevel size | "
        "accelerations 1..64 that match |",
        "|---|---|---|---|---|",
    ]
    seen = set()
    for size in (4096, 40_000, 65_536, 65_547, 131_072):
        for clevel in (1, 5, 9):
            src = raw[:size]
            chunk = blosc.compress(src, typesize=1, clevel=clevel, shuffle=0, cname="lz4")
            stream = src[: min(int.from_bytes(chunk[8:12], "little"), size)]  # block 0
            if chunk[2] & 0x02 or (len(stream), clevel) in seen:
                continue  # memcpyed, or a block size already reported
            seen.add((len(stream), clevel))
            csize = int.from_bytes(chunk[20:24], "little", signed=True)
            sizes = {
                a: len(lz4.block.compress(stream, mode="fast", acceleration=a, store_size=False))
                for a in range(1, 65)
            }
            match = [a for a, s in sizes.items() if s == csize]
            lines.append(
                f"| {len(stream)} | {clevel} | {csize} | {sizes[10 - clevel]} | {match or 'none'} |"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, default=500)
    ap.add_argument(
        "--blosclz-size-mb",
        type=float,
        default=32,
        help="array size for the blosclz rows (0: skip them)",
    )
    ap.add_argument("--chunk-mb", type=float, default=4)
    ap.add_argument("--cnames", default="lz4,zstd")
    ap.add_argument("--clevel", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="zarr's async.concurrency (chunks in flight); default: zarr's",
    )
    ap.add_argument("--lz4-accel", action="store_true")
    args = ap.parse_args()

    warnings.simplefilter("ignore")
    register()
    if args.concurrency:
        zarr.config.set({"async.concurrency": args.concurrency})
    cases = [(c, args.size_mb) for c in args.cnames.split(",")]
    if args.blosclz_size_mb:
        cases.append(("blosclz", args.blosclz_size_mb))
    rows = [run_case(c, mb, args.chunk_mb, args.clevel, args.repeat) for c, mb in cases]

    print(
        f"# bench_zarr {datetime.date.today()}  {platform.python_implementation()} "
        f"{platform.python_version()}  zarr {zarr.__version__}  cores {os.cpu_count()}  "
        f"async.concurrency {zarr.config.get('async.concurrency')}  chunk {args.chunk_mb} MB  "
        f"clevel {args.clevel}  shuffle  float32"
    )
    head = (
        "| cname | MB | write zarr s | write ours s | write x | read zarr s | read ours s "
        "| read x | cr zarr | cr ours | d cr |"
    )
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for r in rows:
        d = r["cr_ours"] / r["cr_theirs"] - 1
        print(
            f"| {r['cname']} | {r['size_mb']:.0f} | {r['w_theirs']:.2f} | {r['w_ours']:.2f} | "
            f"{r['w_theirs'] / r['w_ours']:.2f} | {r['r_theirs']:.2f} | {r['r_ours']:.2f} | "
            f"{r['r_theirs'] / r['r_ours']:.2f} | {r['cr_theirs']:.3f} | {r['cr_ours']:.3f} | "
            f"{d:+.2%} |"
        )
    if args.lz4_accel:
        print()
        print("\n".join(lz4_acceleration_report()))


if __name__ == "__main__":
    main()
