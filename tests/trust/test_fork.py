"""fork after multi-threaded work: the child's thread pools are fresh (the parent's threads do
not exist there), so pyblosc2 calls in the child never hang; spawn-started children reopen
handles by path."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb

DATA = np.linspace(0, 1, 1_000_000)


def _roundtrip(_: int) -> bool:
    c = pb.compress2(DATA, typesize=8, nthreads=2)
    return bool(np.array_equal(np.frombuffer(pb.decompress2(c, nthreads=2), np.float64), DATA))


def _read(s: pb.SChunk) -> bytes:
    return s[10:20]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_children_do_not_hang() -> None:
    assert _roundtrip(0)  # the parent's pools now have live threads
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        result = pool.map_async(_roundtrip, range(4))
        assert result.get(timeout=60) == [True] * 4


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_handles_cross_processes(tmp_path: Path, method: str) -> None:
    path = str(tmp_path / "a.b2frame")
    s = pb.SChunk(chunksize=8000, urlpath=path, mode="w", cparams={"typesize": 8})
    s.append_data(np.arange(1000, dtype=np.int64))
    with mp.get_context(method).Pool(1) as pool:
        got = pool.apply_async(_read, (pb.open(path),)).get(timeout=60)
    assert got == np.arange(10, 20, dtype=np.int64).tobytes()
