"""A deterministic sequence of changes to a TreeStore, and the model of what it holds.

Run as a child process by the store kill tests (``python store_mutator.py PATH SEED NOPS LOG
[KILL]``): for a ``.b2z`` each operation opens the store (``mode='a'``), changes it and
closes it (which packs the archive); for a ``.b2d`` one handle makes every change. The index
of each operation that returned is appended to LOG. With ``KILL = "OP:N"`` the process
SIGKILLs itself at the N-th commit call of operation OP: for a ``.b2z`` the calls that write
the archive (each member, the sync, the rename); for a ``.b2d`` every write, truncate, sync,
rename and unlink (a frame write torn at a sector boundary first).
"""

from __future__ import annotations

import os
import signal
import sys
import zipfile
from typing import Any

import numpy as np

KEYS = ("/a", "/b", "/g/c", "/g/d", "/h/e")
KINDS = ("small", "big", "big", "delete", "vlmeta")
THRESHOLD = 64
SECTOR = 512


def operations(seed: int, n: int) -> list[tuple[str, str, int]]:
    rng = np.random.default_rng(seed)
    return [
        (KINDS[int(rng.integers(len(KINDS)))], KEYS[int(rng.integers(len(KEYS)))], i)
        for i in range(n)
    ]


def payload(kind: str, tag: int) -> np.ndarray:
    if kind == "small":
        return np.full(4, tag % 100, dtype=np.int8)  # embedded (under THRESHOLD)
    return np.arange(tag, tag + 2000, dtype=np.int32)  # external


Model = tuple[dict[str, bytes], dict[str, int]]


def apply(op: tuple[str, str, int], model: Model, store: Any = None) -> Model:
    """The model after ``op`` (and ``op`` applied to ``store`` when given)."""
    kind, key, tag = op
    data, vlmeta = dict(model[0]), dict(model[1])
    if kind == "delete":
        if key in data:
            del data[key]
            if store is not None:
                del store[key]
    elif kind == "vlmeta":
        vlmeta[key.strip("/").replace("/", "_")] = tag
        if store is not None:
            store.vlmeta[key.strip("/").replace("/", "_")] = tag
    else:
        value = payload(kind, tag)
        data[key] = value.tobytes()
        if store is not None:
            store[key] = value
    return data, vlmeta


def states(seed: int, n: int) -> list[Model]:
    out: list[Model] = [({}, {})]
    for op in operations(seed, n):
        out.append(apply(op, out[-1]))
    return out


def content(store: Any) -> Model:
    """What a store (of either library) holds, as the model says it."""
    data = {}
    for key in KEYS:
        if key in store:
            value = store[key]
            data[key] = np.asarray(value[:]).tobytes()
    return data, dict(store.vlmeta[:])


def _arm(path: str, op_target: int, nth: int, current: list[int]) -> None:
    from pyblosc2.backends.file import FileStore

    calls = {"n": 0}

    def hit() -> bool:
        if current[0] != op_target:
            return False
        calls["n"] += 1
        return calls["n"] == nth

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def wrap_function(module: Any, name: str) -> None:
        real = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            if hit():
                die()
            return real(*args, **kwargs)

        setattr(module, name, counted)

    wrap_function(os, "replace")
    wrap_function(os, "fsync")
    if path.endswith(".b2z"):
        real_write = zipfile.ZipFile.write

        def member(self: Any, *args: Any, **kwargs: Any) -> Any:
            if hit():
                die()
            return real_write(self, *args, **kwargs)

        zipfile.ZipFile.write = member  # type: ignore[method-assign]
        return
    wrap_function(os, "unlink")
    for name in ("write", "truncate", "sync"):
        real = getattr(FileStore, name)

        def counted(self: Any, *args: Any, _real: Any = real, _name: str = name) -> Any:
            if hit():
                if _name == "write":  # torn at a sector boundary
                    pos, data = args
                    _real(self, pos, bytes(data)[: len(data) // 2 // SECTOR * SECTOR])
                die()
            return _real(self, *args)

        setattr(FileStore, name, counted)


def main(argv: list[str]) -> None:
    import pyblosc2 as pb

    path, seed, nops, log = argv[0], int(argv[1]), int(argv[2]), argv[3]
    current = [-1]
    if len(argv) > 4:
        op, nth = (int(x) for x in argv[4].split(":"))
        _arm(path, op, nth, current)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    archive = path.endswith(".b2z")
    store = None if archive else pb.TreeStore(path, mode="a", threshold=THRESHOLD)
    model: Model = content(pb.TreeStore(path, mode="r")) if archive else content(store)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for i, op in enumerate(operations(seed, nops)):
        current[0] = i
        if archive:
            with pb.TreeStore(path, mode="a", threshold=THRESHOLD) as t:
                model = apply(op, model, t)
        else:
            model = apply(op, model, store)
        os.write(fd, f"{i}\n".encode())


if __name__ == "__main__":
    main(sys.argv[1:])
