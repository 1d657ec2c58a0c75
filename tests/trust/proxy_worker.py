"""Child process of the shared proxy cache tests: reads random keys of a source through a
proxy whose cache at CACHE other processes (pyblosc2's and python-blosc2's) fill at the same
time, logging every read that returned (one fsynced line each: the key, and a digest of what
came back) so that the parent checks each against the source.

    python proxy_worker.py LIB KIND SRC CACHE NREADS SEED LOG

LIB is ``pyblosc2`` or ``blosc2``; KIND ``chunks`` (the source an NDArray file: whole
chunks) or ``blocks`` (the source the same file as a ``file://`` URL read by byte ranges,
block by block). pyblosc2 proxies take the frame lock by themselves; python-blosc2's are
used as its ``RemoteArray`` uses them on a shared cache (the cache opened with
``locking=True``, every read inside ``holding_lock`` after ``_refresh_shared_cache``).
"""

from __future__ import annotations

import hashlib
import os
import sys
from typing import Any

import numpy as np

SHAPE, CHUNKS, BLOCKS = (240, 180), (60, 90), (6, 30)


def data() -> np.ndarray:
    i, j = np.indices(SHAPE)
    return (i * 1000 + j).astype(np.float64)


def random_key(rng: np.random.Generator) -> tuple[slice, slice]:
    lo = [int(rng.integers(0, n)) for n in SHAPE]
    return tuple(
        slice(a, int(rng.integers(a + 1, min(n, a + 12) + 1)))
        for a, n in zip(lo, SHAPE, strict=True)
    )  # type: ignore[return-value]


def digest(values: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(values).tobytes()).hexdigest()[:16]


def proxy(lib: Any, kind: str, src: str, cache: str) -> tuple[Any, Any]:
    """The proxy, and the context each read runs in."""
    import contextlib

    if kind == "blocks":
        lib.proxy_source.BLOCK_MIN_CBYTES = 0
        source = lib.FsspecNDSource("file://" + os.path.abspath(src))
    else:
        source = lib.open(src, mode="r")
    if lib.__name__ == "pyblosc2":
        return lib.Proxy(source, urlpath=cache, mode="a"), contextlib.nullcontext
    c = lib.blosc2_ext.open(cache, "a", 0, locking=True)
    with c.schunk.holding_lock():
        p = lib.Proxy(source, _cache=c, _persistent_dirty=True)

    @contextlib.contextmanager
    def held() -> Any:
        with c.schunk.holding_lock():
            p._refresh_shared_cache()
            yield

    return p, held


def main(lib_name: str, kind: str, src: str, cache: str, nreads: int, seed: int, log: str) -> None:
    lib = __import__(lib_name)
    p, held = proxy(lib, kind, src, cache)
    rng = np.random.default_rng(seed)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for _ in range(nreads):
        key = random_key(rng)
        with held():
            got = p[key]
        line = f"{key[0].start} {key[0].stop} {key[1].start} {key[1].stop} {digest(got)}\n"
        os.write(fd, line.encode())
        os.fsync(fd)
    os.close(fd)


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], int(a[4]), int(a[5]), a[6])
