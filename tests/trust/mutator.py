"""A deterministic sequence of mutations of a frame, and the model of what it stores.

Run as a child process by the kill tests (``python mutator.py PATH SEED NOPS LOG [KILL]
[create]``): it applies the operations to the frame at PATH, appending the index of each
operation that returned to LOG. With ``KILL = "OP:N"`` the process SIGKILLs itself at the
N-th write, truncate or sync call of operation OP (after writing the first half of a write,
rounded down to whole 512-byte sectors: a torn write as a power loss leaves it), so a test
can stop it at every write call of every operation. With ``create`` the child creates the
frame itself first (operation -1, logged as ``c``): a kill then may land in the creation.

The frames carry a small metalayer ``m`` (its changes rewrite the first sector of the header
in place) and a large one ``big`` (``BIG`` bytes: a change reaches past the first sector, so
it replaces the whole file, frame/commit.py).
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ITEMS = 2000  # int32 items per chunk
SECTOR = 512  # writes tear at sector boundaries (kills: at page boundaries, coarser)
KINDS = ("append", "append", "insert", "update", "delete", "vlmeta", "meta", "reorder", "bigmeta")
BIG = 3000  # bytes of the large metalayer


def big_content(v: int) -> bytes:
    """The large metalayer's content after a ``bigmeta`` operation with argument ``v``."""
    return np.random.default_rng(v).integers(0, 256, BIG, dtype=np.uint8).tobytes()


def payload(v: int) -> np.ndarray:
    """The data of a chunk tagged ``v`` (compressible, but not to nothing)."""
    return (np.arange(ITEMS, dtype=np.int32) * (v % 7 + 1) + v).astype(np.int32)


def operations(seed: int, n: int) -> list[tuple[str, int]]:
    """The operations of a run (``MUTATOR_KINDS="meta,bigmeta"``: only those kinds)."""
    rng = np.random.default_rng(seed)
    env = os.environ.get("MUTATOR_KINDS")
    kinds = tuple(env.split(",")) if env else KINDS
    return [(kinds[int(rng.integers(len(kinds)))], int(rng.integers(1 << 30))) for _ in range(n)]


@dataclass
class Model:
    """What the frame must hold: chunk tags, vlmeta and the 8-byte metalayer ``m``."""

    chunks: list[int] = field(default_factory=list)
    vlmeta: dict[str, int] = field(default_factory=dict)
    meta: bytes = bytes(8)
    big: bytes = bytes(BIG)

    def copy(self) -> Model:
        return Model(list(self.chunks), dict(self.vlmeta), self.meta, self.big)


def apply(kind: str, arg: int, model: Model, s: Any = None) -> None:
    """Apply one operation to ``model`` (and to the SChunk ``s`` when given)."""
    n = len(model.chunks)
    if kind == "append" or (kind in ("insert", "update", "reorder") and n == 0):
        model.chunks.append(arg)
        if s is not None:
            s.append_data(payload(arg))
    elif kind == "insert":
        pos = arg % (n + 1)
        model.chunks.insert(pos, arg)
        if s is not None:
            s.insert_data(pos, payload(arg), True)
    elif kind == "update":
        pos = arg % n
        model.chunks[pos] = arg
        if s is not None:
            s.update_data(pos, payload(arg), True)
    elif kind == "delete":
        if n <= 1:
            return apply("append", arg, model, s)
        pos = arg % n
        del model.chunks[pos]
        if s is not None:
            s.delete_chunk(pos)
    elif kind == "vlmeta":
        key = f"k{arg % 3}"
        model.vlmeta[key] = arg
        if s is not None:
            s.vlmeta[key] = arg
    elif kind == "meta":
        model.meta = arg.to_bytes(8, "little")
        if s is not None:
            s.meta["m"] = model.meta
    elif kind == "bigmeta":
        model.big = big_content(arg)
        if s is not None:
            s.meta["big"] = model.big
    elif kind == "reorder":
        order = np.random.default_rng(arg).permutation(n).tolist()
        model.chunks = [model.chunks[k] for k in order]
        if s is not None:
            s.reorder_offsets(order)
    return None


def states(seed: int, nops: int) -> list[Model]:
    """The model after 0, 1, ..., nops operations."""
    m, out = Model(), [Model()]
    for kind, arg in operations(seed, nops):
        apply(kind, arg, m)
        out.append(m.copy())
    return out


def matches(s: Any, m: Model) -> bool:
    """Whether the SChunk ``s`` holds exactly the model's content."""
    if s.nchunks != len(m.chunks) or bytes(s.meta["m"]) != m.meta:
        return False
    if bytes(s.meta["big"]) != m.big:
        return False
    if dict(s.vlmeta.getall()) != m.vlmeta:
        return False
    return all(
        np.array_equal(np.frombuffer(s.decompress_chunk(i), np.int32), payload(v))
        for i, v in enumerate(m.chunks)
    )


def create(path: str) -> Any:
    """A fresh frame at ``path``: an NDArray for ``.b2nd``, a sparse SChunk for ``.sparse``,
    else a contiguous fingerprinted SChunk."""
    if path.endswith(".b2nd"):
        return b2nd_create(path)
    import pyblosc2 as pb

    contiguous = not path.endswith(".sparse")
    return pb.SChunk(
        chunksize=ITEMS * 4,
        urlpath=path,
        contiguous=contiguous,
        mode="w",
        meta={"m": bytes(8), "big": bytes(BIG)},
        cparams={"typesize": 4, "codec": pb.Codec.LZ4, "nthreads": 1},
        fingerprint=contiguous,
    )


def _arm(op_target: int, nth: int, current: list[int]) -> None:
    """SIGKILL this process at the ``nth`` storage call of operation ``op_target``."""
    from pyblosc2.backends.directory import DirectoryStore
    from pyblosc2.backends.file import FileStore

    calls = {"n": 0}

    def wrap(cls: Any, name: str) -> None:
        real = getattr(cls, name)

        def counted(self: Any, *args: Any) -> Any:
            if current[0] == op_target:
                calls["n"] += 1
                if calls["n"] == nth:
                    if cls is FileStore and name == "write":  # torn at a sector boundary
                        pos, data = args
                        real(self, pos, bytes(data)[: len(data) // 2 // SECTOR * SECTOR])
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(self, *args)

        setattr(cls, name, counted)

    for name in ("write", "truncate", "sync"):
        wrap(FileStore, name)
    for name in ("write_object", "remove_object"):
        wrap(DirectoryStore, name)


# -- b2nd arrays: resizes and slab writes ----------------------------------------------------
B2ND_KINDS = ("resize", "setitem", "setitem")


def b2nd_operations(seed: int, n: int) -> list[tuple[str, int]]:
    rng = np.random.default_rng(seed)
    return [
        (B2ND_KINDS[int(rng.integers(len(B2ND_KINDS)))], int(rng.integers(1 << 30)))
        for _ in range(n)
    ]


def b2nd_apply(kind: str, arg: int, a: np.ndarray, nd: Any = None) -> np.ndarray:
    """The array after one operation (applied to the NDArray ``nd`` too when given)."""
    rng = np.random.default_rng(arg)
    if kind == "resize":
        shape = (int(rng.integers(1, 40)), int(rng.integers(1, 30)))
        out = np.zeros(shape, a.dtype)
        keep = tuple(slice(0, min(x, y)) for x, y in zip(a.shape, shape, strict=True))
        out[keep] = a[keep]
        if nd is not None:
            nd.resize(shape)
        return out
    r0 = int(rng.integers(0, a.shape[0]))
    r1 = int(rng.integers(r0 + 1, a.shape[0] + 1))
    out = a.copy()
    out[r0:r1] = arg % 1000
    if nd is not None:
        nd[r0:r1] = arg % 1000
    return out


def b2nd_states(seed: int, nops: int) -> list[np.ndarray]:
    a = np.zeros((20, 10), np.int32)
    out = [a]
    for kind, arg in b2nd_operations(seed, nops):
        a = b2nd_apply(kind, arg, a)
        out.append(a)
    return out


def b2nd_create(path: str) -> Any:
    import pyblosc2 as pb

    return pb.zeros((20, 10), np.int32, chunks=(8, 6), blocks=(4, 3), urlpath=path, mode="w")


def main(argv: list[str]) -> None:
    """Open the frame, say "ready", apply the operations, log each one that returned."""
    import pyblosc2 as pb

    path, seed, nops, log = argv[0], int(argv[1]), int(argv[2]), argv[3]
    current = [-2]
    if len(argv) > 4 and argv[4] != "-":
        op, nth = (int(x) for x in argv[4].split(":"))
        _arm(op, nth, current)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    if argv[5:] == ["create"]:  # the creation is operation -1
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        current[0] = -1
        create(path)
        os.write(fd, b"c\n")
    handle = pb.open(path, mode="a")
    if path.endswith(".b2nd"):
        state = [handle[:]]
        ops = b2nd_operations(seed, nops)

        def step(kind: str, arg: int) -> None:
            state[0] = b2nd_apply(kind, arg, state[0], handle)

    else:
        ops = operations(seed, nops)

        def step(kind: str, arg: int) -> None:
            _apply_real(kind, arg, handle)

    if argv[5:] != ["create"]:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
    for i, (kind, arg) in enumerate(ops):
        current[0] = i
        step(kind, arg)
        os.write(fd, f"{i}\n".encode())


def _apply_real(kind: str, arg: int, s: Any) -> None:
    """Apply to ``s`` the operation ``apply`` applies to the model (the model of the frame's
    current content is rebuilt from the frame, so that the positions agree)."""
    apply(kind, arg, Model([0] * s.nchunks), s)


if __name__ == "__main__":
    main(sys.argv[1:])
