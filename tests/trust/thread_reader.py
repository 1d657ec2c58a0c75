"""Child process for the concurrency tests: ``python thread_reader.py PATH LOCKING THREADS
STOP`` reads the frame at PATH (written by appender.py with tag 1) from THREADS threads of one
handle (``locking`` on when LOCKING is ``1``) until the file STOP exists.

Each read holds the handle once for reading and reads the chunk count and every chunk: each
chunk must be appender's chunk ``(1, i)`` whole, and a thread's chunk counts never go back.
It prints ``ready`` after every thread's first read, then, at the end, the reads made and the
chunk count of a last read after STOP appeared; the first problem is printed to stderr and
the exit status is 1."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import appender

import pyblosc2 as pb


def read_all(s: pb.SChunk) -> int:
    """The chunk count of one read hold, every chunk checked."""
    with s.holding_shared_lock():
        n = s.nchunks
        for i in range(n):
            got = np.frombuffer(s.decompress_chunk(i), np.int64)
            if not np.array_equal(got, appender.chunk(1, i)):
                raise AssertionError(f"chunk {i} of {n} is {got[:3]}..., not chunk (1, {i})")
    return n


def main(path: str, locking: bool, nthreads: int, stop: str) -> int:
    s = pb.open(path, mode="r", locking=locking)
    problems: list[str] = []
    reads = [0] * nthreads
    first = threading.Barrier(nthreads + 1)

    def work(k: int) -> None:
        last = -1
        try:
            while True:
                n = read_all(s)
                if n < last:
                    raise AssertionError(f"thread {k}: {n} chunks after {last}")
                last = n
                reads[k] += 1
                if reads[k] == 1:
                    first.wait()
                if os.path.exists(stop):
                    return
        except BaseException as exc:
            problems.append(repr(exc))
            first.abort()

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(nthreads)]
    for t in threads:
        t.start()
    try:
        first.wait()
        print("ready", flush=True)
    except threading.BrokenBarrierError:
        pass
    for t in threads:
        t.join()  # the parent bounds this process
    if problems:
        print(problems[0], file=sys.stderr)
        return 1
    print(sum(reads), read_all(s), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), sys.argv[4]))
