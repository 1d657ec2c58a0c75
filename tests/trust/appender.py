"""Child process for the concurrency tests: ``python appender.py PATH TAG N LIB``
appends N chunks tagged TAG to the frame at PATH with locking on, using pyblosc2 or
python-blosc2 (LIB), each append inside the library's own exclusive lock."""

from __future__ import annotations

import sys

import numpy as np

ITEMS = 500


def chunk(tag: int, i: int) -> np.ndarray:
    return np.full(ITEMS, tag * 100_000 + i, dtype=np.int64)


def main(path: str, tag: int, n: int, lib: str) -> None:
    if lib == "pyblosc2":
        import pyblosc2 as mod
    else:
        import blosc2 as mod  # type: ignore[no-redef]
    s = mod.open(path, mode="a", locking=True)
    for i in range(n):
        s.append_data(chunk(tag, i))


def main_unlocked(path: str, tag: int, n: int) -> None:
    """Append without locking; a refused append (the frame changed) is retried after a
    refresh, and each append that returned is printed."""
    import pyblosc2 as mod

    s = mod.open(path, mode="a")
    i = 0
    while i < n:
        try:
            s.append_data(chunk(tag, i))
        except mod.FrameChangedError:
            s.refresh()
            continue
        print(i, flush=True)
        i += 1


if __name__ == "__main__":
    if sys.argv[4] == "unlocked":
        main_unlocked(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
    else:
        main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
