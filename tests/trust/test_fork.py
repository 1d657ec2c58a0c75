"""fork after multi-threaded work: the child's thread pools are fresh (the parent's threads do
not exist there), so pyblosc2 calls in the child never hang; spawn-started children reopen
handles by path."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import CHILD_S

DATA = np.linspace(0, 1, 1_000_000)


def _roundtrip(_: int) -> bool:
    c = pb.compress2(DATA, typesize=8, nthreads=2)
    return bool(np.array_equal(np.frombuffer(pb.decompress2(c, nthreads=2), np.float64), DATA))


def _read(s: pb.SChunk) -> bytes:
    return s[10:20]


def _get(result: Any, what: str) -> Any:
    """The pool's result; a hang (what this file guards against) fails naming ``what``, after
    a bound that a loaded machine does not reach (60 s did: with numpy's kernels, in a child
    forked while numba loaded, the round trips of 8 MB take seconds of CPU each)."""
    try:
        return result.get(timeout=CHILD_S)
    except mp.TimeoutError:
        raise AssertionError(f"{what}: no result after {CHILD_S} s (a child hangs)") from None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_children_do_not_hang() -> None:
    assert _roundtrip(0)  # the parent's pools now have live threads
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:  # its exit terminates the children, whatever happened
        result = pool.map_async(_roundtrip, range(4))
        assert (
            _get(result, "4 compress2/decompress2 round trips in 2 forked children") == [True] * 4
        )


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_handles_cross_processes(tmp_path: Path, method: str) -> None:
    path = str(tmp_path / "a.b2frame")
    s = pb.SChunk(chunksize=8000, urlpath=path, mode="w", cparams={"typesize": 8})
    s.append_data(np.arange(1000, dtype=np.int64))
    with mp.get_context(method).Pool(1) as pool:
        got = _get(pool.apply_async(_read, (pb.open(path),)), f"a read in a {method} child")
    assert got == np.arange(10, 20, dtype=np.int64).tobytes()
