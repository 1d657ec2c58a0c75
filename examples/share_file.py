"""Share a file between processes: one process appends to a frame while others read it.

The writer creates a ``.b2frame`` and appends ``--chunks`` chunks, each chunk ``i`` filled
with the value ``i``; the readers, started at the same time, open the same file and follow
it (``refresh()``) until they have seen every chunk, checking each chunk they read whole.
All of them use C-Blosc2's frame lock (``locking=True``: a ``.b2lock`` sidecar, shared for
reads, exclusive for changes), so python-blosc2 processes could join in.

Run: python examples/share_file.py [DIRECTORY] [--chunks N] [--readers N]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time

import numpy as np

import pyblosc2 as blosc2

ITEMS = 50_000  # int64 items per chunk
TIMEOUT = 120.0  # seconds a reader waits for the writer at most


def writer(path: str, nchunks: int) -> None:
    s = blosc2.open(path, mode="a", locking=True)
    for i in range(nchunks):
        s.append_data(np.full(ITEMS, i, dtype=np.int64))  # one commit under the exclusive lock
        time.sleep(0.01)  # a writer with other work to do


def reader(path: str, nchunks: int, name: str, out: multiprocessing.Queue) -> None:
    s = blosc2.open(path, mode="r", locking=True)
    seen: list[int] = []
    deadline = time.monotonic() + TIMEOUT
    while len(seen) < nchunks and time.monotonic() < deadline:
        s.refresh()  # re-reads header, index and trailer if the writer committed since
        for i in range(len(seen), s.nchunks):
            chunk = np.frombuffer(s.decompress_chunk(i), np.int64)
            assert chunk.shape == (ITEMS,) and (chunk == i).all(), f"chunk {i} is not whole"
            seen.append(i)
        time.sleep(0.005)
    out.put((name, len(seen)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", help="where to write (default: a temp dir)")
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--readers", type=int, default=2)
    args = parser.parse_args(argv)
    directory = args.directory or tempfile.mkdtemp(prefix="pyblosc2-share-")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "shared.b2frame")
    blosc2.SChunk(chunksize=ITEMS * 8, urlpath=path, mode="w", locking=True,
                  cparams={"typesize": 8, "codec": blosc2.Codec.LZ4})  # fmt: skip

    ctx = multiprocessing.get_context("spawn")  # fresh interpreters, as separate programs
    results: multiprocessing.Queue = ctx.Queue()
    procs = [ctx.Process(target=writer, args=(path, args.chunks))]
    procs += [
        ctx.Process(target=reader, args=(path, args.chunks, f"reader {k}", results))
        for k in range(args.readers)
    ]
    for p in procs:
        p.start()
    seen = dict(results.get(timeout=TIMEOUT + 60) for _ in range(args.readers))
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0, f"{p.name} exited with {p.exitcode}"
    final = blosc2.open(path)
    print(f"{path}: the writer appended {final.nchunks} chunks")
    for name, n in sorted(seen.items()):
        print(f"{name} followed the file and read {n} whole chunks")
    assert final.nchunks == args.chunks and all(n == args.chunks for n in seen.values())


if __name__ == "__main__":
    main()
