"""What bounds the codec-bound rows (issue 33's ``(a + b).sum()``, issue 35's ``decompress2``):
a chunk's streams decoded by the codec binding pyblosc2 calls, alone, against python-blosc2's
and pyblosc2's whole ``decompress2``, per chunk, on one thread and on two.

Run::

    python benchmarks/bench_codec_floor.py            # every case below
    python benchmarks/bench_codec_floor.py --only sum --json out.json

Cases: ``sum``, a chunk of issue 33's arrays (``linspace(0, 1)`` of 100 x 10,000 float64 per
chunk, written by python-blosc2 with its defaults: zstd + shuffle, blocks of two rows, each
split into 8 streams: ~400 streams per 8 MB chunk); ``lz4``, ``zstd``, ``lz4+bitshuffle``:
bench_reads' ``decompress2`` chunks (4 MiB of ``linspace(0, 1e6)``, clevel 5, typesize 8).
Rows per case, as the time per chunk (median of ``--repeat`` passes over ``--chunks``
chunks): python-blosc2's ``decompress2``, pyblosc2's, and the binding alone over the chunk's
coded streams (python-zstandard's ``decompress``, cramjam's ``lz4.decompress_block_into``:
what any Python caller of them pays; no filter undone), each with one thread and with two
(the library's own two threads for ``decompress2``; two Python threads taking every other
chunk for the binding). ``2-thread gain`` = one-thread time / two-thread time: 2.0 when the
second thread runs free, 1.0 when the GIL serializes them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

#: bench_reads' decompress2 chunks: 4 MiB of float64
PER = 4 * 2**20 // 8


def per_chunk(work: Callable[[Sequence[int]], None], n: int, threads: int, repeat: int) -> float:
    """Median seconds per chunk of ``work`` over chunks ``0..n-1`` split among ``threads``."""
    times = []
    for _ in range(repeat):
        parts = [range(k, n, threads) for k in range(threads)]
        ts = [threading.Thread(target=work, args=(p,)) for p in parts]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def coded_streams(chunk: bytes) -> list[tuple[memoryview, int]]:
    """The codec-coded streams of ``chunk`` with their decoded sizes (runs and raw streams
    left out), read with pyblosc2's own stream walk."""
    from pyblosc2.chunk.decode import ChunkReader
    from pyblosc2.chunk.streams import walk_streams

    r = ChunkReader.open(chunk)
    h, mv, out = r.header, memoryview(chunk), []
    for j, pos in enumerate(r.bstarts.tolist()):
        nst = h.nstreams(j)
        neblock = h.block_size(j) // nst
        sizes, starts, ends = walk_streams(mv, pos, nst, h.cbytes)
        out += [
            (mv[s:e], neblock)
            for c, s, e in zip(sizes, starts, ends, strict=True)
            if 0 < c != neblock
        ]
    return out


def case_chunks(case: str, n: int, C: Any) -> list[bytes]:
    """``n`` chunks of ``case`` written by python-blosc2."""
    if case == "sum":
        rows = 100 * n
        a = C.asarray(np.linspace(0, 1, rows * 10_000).reshape(rows, 10_000))
        return [bytes(a.schunk.get_chunk(i)) for i in range(a.schunk.nchunks)]
    codec, flt = {
        "lz4": ("LZ4", "SHUFFLE"),
        "zstd": ("ZSTD", "SHUFFLE"),
        "lz4+bitshuffle": ("LZ4", "BITSHUFFLE"),
    }[case]
    data = np.linspace(0, 1e6, n * PER)
    return [
        C.compress2(
            data[i * PER : (i + 1) * PER], codec=getattr(C.Codec, codec), clevel=5, typesize=8,
            filters=[getattr(C.Filter, flt)], nthreads=2,
        )
        for i in range(n)
    ]  # fmt: skip


def binding(case: str) -> Callable[[list[tuple[memoryview, int]]], None]:
    """The binding pyblosc2 calls for ``case``'s codec, over one chunk's coded streams."""
    if case in ("sum", "zstd"):
        import zstandard

        def zstd_decode(streams: list[tuple[memoryview, int]]) -> None:
            decompress = zstandard.ZstdDecompressor().decompress
            for s, _ in streams:
                decompress(s)

        return zstd_decode
    import cramjam

    into = cramjam.lz4.decompress_block_into

    def lz4_decode(streams: list[tuple[memoryview, int]]) -> None:
        buf = memoryview(bytearray(max((n for _, n in streams), default=0)))
        for s, n in streams:
            into(s, buf[:n])

    return lz4_decode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", help="run only the cases whose name contains this text")
    ap.add_argument("--json", help="write the rows here as JSON")
    args = ap.parse_args()

    import blosc2 as C
    import results

    import pyblosc2 as P
    from pyblosc2.kernels.select import active, wait_for_kernels

    active()
    wait_for_kernels(120)
    run = results.start("bench_codec_floor", chunks=args.chunks, repeat=args.repeat)
    rows: list[dict[str, Any]] = []
    print(f"load average before: {os.getloadavg()}")
    for case in ("sum", "lz4", "zstd", "lz4+bitshuffle"):
        if args.only and args.only not in case:
            continue
        chunks = case_chunks(case, args.chunks, C)
        n = len(chunks)
        streams = [coded_streams(c) for c in chunks]
        decode = binding(case)
        per = statistics.mean(len(s) for s in streams)
        mib = statistics.mean(len(P.decompress2(c)) for c in chunks[:1]) / 2**20
        print(f"{case}: {n} chunks of {mib:.1f} MiB, {per:.0f} coded streams each")

        def lib_work(
            lib: Any, nth: int, chunks: list[bytes] = chunks
        ) -> Callable[[Sequence[int]], None]:
            def work(ids: Sequence[int]) -> None:
                for i in ids:
                    lib.decompress2(chunks[i], nthreads=nth)

            return work

        def bind_work(
            ids: Sequence[int],
            decode: Callable[[list[tuple[memoryview, int]]], None] = decode,
            streams: list[list[tuple[memoryview, int]]] = streams,
        ) -> None:
            for i in ids:
                decode(streams[i])

        for label, one_fn, two_fn, threads in (
            ("python-blosc2 decompress2", lib_work(C, 1), lib_work(C, 2), 1),
            ("pyblosc2 decompress2", lib_work(P, 1), lib_work(P, 2), 1),
            ("the binding alone", bind_work, bind_work, 2),
        ):
            one = per_chunk(one_fn, n, 1, args.repeat)
            two = per_chunk(two_fn, n, threads, args.repeat)
            rows.append(
                {"case": case, "row": label, "one thread ms": one * 1e3,
                 "two threads ms": two * 1e3, "2-thread gain": one / two}
            )  # fmt: skip
    print(f"load average after: {os.getloadavg()}")
    print("| case | row | one thread ms | two threads ms | 2-thread gain |")
    print("|---|---|---|---|---|")
    for r in rows:
        cells = [f"{r[k]:.2f}" for k in ("one thread ms", "two threads ms", "2-thread gain")]
        print(f"| {r['case']} | {r['row']} | " + " | ".join(cells) + " |")
    if args.json:
        results.write(args.json, run, rows)


if __name__ == "__main__":
    main()
