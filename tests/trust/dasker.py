"""Child process of the ``from_dask`` kill tests: ``python dasker.py PATH SEED N LOG [KILL]``
stores N dask arrays one after the other at PATH (a sparse ``.b2nd``, ``mode="w"`` over the
previous one, dask's synchronous scheduler), logging the index of each call that returned.
With ``KILL = "I:N"`` it SIGKILLs itself at the N-th storage call (object write, object
removal, file write, truncate or sync) of call I, so a test can stop it at every one.

The content of call ``i`` is :func:`content` (its chunk shape changes with ``i`` too, so the
new array's header differs from the old one's). The frame at PATH must always open, with the
content of the last returned call or of the one in flight.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import numpy as np

SHAPE = (20, 20)


def content(i: int) -> np.ndarray:
    """What call ``i`` stores (call -1: the array the parent creates first)."""
    return (np.arange(np.prod(SHAPE)).reshape(SHAPE) * (i + 2) % 97).astype(np.int32)


def chunks(i: int) -> tuple[int, int]:
    return ((10, 10), (20, 5), (5, 20))[i % 3]


def create(path: str) -> None:
    import pyblosc2 as pb

    pb.asarray(content(-1), chunks=(20, 10), urlpath=path, contiguous=False, mode="w")


def matches(path: str, done: int, mod: Any) -> int | None:
    """Which call's content the array at ``path`` holds (``done`` or ``done + 1``; -1 is the
    first array), opened by ``mod`` (pyblosc2 or python-blosc2); None: neither."""
    got = mod.open(path)[...]
    for k in (done - 1, done):
        if np.array_equal(got, content(k)):
            return k
    return None


def _arm(call: int, nth: int, current: list[int]) -> None:
    from pyblosc2.backends.directory import DirectoryStore
    from pyblosc2.backends.file import FileStore

    calls = {"n": 0}

    def wrap(cls: Any, name: str) -> None:
        real = getattr(cls, name)

        def counted(self: Any, *args: Any) -> Any:
            if current[0] == call:
                calls["n"] += 1
                if calls["n"] == nth:
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(self, *args)

        setattr(cls, name, counted)

    for name in ("write", "truncate", "sync"):
        wrap(FileStore, name)
    for name in ("write_object", "remove_object"):
        wrap(DirectoryStore, name)


def main(argv: list[str]) -> None:
    import dask
    import dask.array as da

    import pyblosc2 as pb

    path, n, log = argv[0], int(argv[2]), argv[3]
    current = [-1]
    if len(argv) > 4:
        call, nth = (int(x) for x in argv[4].split(":"))
        _arm(call, nth, current)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    with dask.config.set(scheduler="synchronous"):
        for i in range(n):
            current[0] = i
            pb.from_dask(da.from_array(content(i), chunks=chunks(i)), path, mode="w")
            os.write(fd, f"{i}\n".encode())


if __name__ == "__main__":
    main(sys.argv[1:])
