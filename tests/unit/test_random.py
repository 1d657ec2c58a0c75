"""pyblosc2.random: NumPy's distributions drawn chunk by chunk (pyblosc2/random.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2 import random as b2random


def test_each_chunk_is_its_own_seed_stream() -> None:
    """Chunk i of a call is ``default_rng(SeedSequence(seed).spawn(1)[0].spawn(n)[i])``
    drawn at the chunk's shape, chunks in C order (python-blosc2's rule)."""
    a = blosc2.random.default_rng(5).random((10, 7), chunks=(4, 7))
    streams = np.random.SeedSequence(5).spawn(1)[0].spawn(3)
    want = np.concatenate(
        [np.random.default_rng(s).random((n, 7)) for s, n in zip(streams, (4, 4, 2), strict=True)]
    )
    np.testing.assert_array_equal(a[...], want)


def test_the_thread_count_does_not_change_the_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(b2random, "default_nthreads", lambda: 1)
    one = blosc2.random.default_rng(3).normal(shape=(90, 90), chunks=(11, 13))[...]
    monkeypatch.setattr(b2random, "default_nthreads", lambda: 4)
    four = blosc2.random.default_rng(3).normal(shape=(90, 90), chunks=(11, 13))[...]
    np.testing.assert_array_equal(one, four)


def test_a_sandbox_without_threads_draws_serially(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoThreads:
        def __init__(self, max_workers: int) -> None: ...
        def __enter__(self) -> NoThreads:
            return self

        def __exit__(self, *exc: object) -> None: ...
        def submit(self, *args: object) -> None:
            raise RuntimeError("can't start new thread")

    want = blosc2.random.default_rng(9).random((50, 50), chunks=(7, 7))[...]
    monkeypatch.setattr(b2random, "ThreadPoolExecutor", NoThreads)
    monkeypatch.setattr(b2random, "default_nthreads", lambda: 4)
    np.testing.assert_array_equal(
        blosc2.random.default_rng(9).random((50, 50), chunks=(7, 7))[...], want
    )


def test_a_result_is_written_where_asked(tmp_path: Path) -> None:
    path = str(tmp_path / "r.b2nd")
    a = blosc2.random.default_rng(0).integers(
        0, 7, shape=(100,), chunks=(30,), urlpath=path, mode="w"
    )
    np.testing.assert_array_equal(blosc2.open(path)[...], a[...])
    assert a[...].min() >= 0 and a[...].max() < 7


def test_arguments_python_blosc2_refuses() -> None:
    g = blosc2.random.default_rng(0)
    with pytest.raises(NotImplementedError, match="replace=False"):
        g.choice(5, shape=(3,), replace=False)
    with pytest.raises(NotImplementedError, match="N-d"):
        g.choice(np.zeros((2, 2)), shape=(3,))
    with pytest.raises(ValueError, match="trailing"):
        g.dirichlet([1.0, 1.0], shape=(4,), chunks=(2, 1))
    with pytest.raises(TypeError):
        g.shuffle(np.arange(3))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="shape"):
        g.random(None)


def test_empty_and_vector_shapes() -> None:
    g = blosc2.random.default_rng(0)
    assert g.random((0, 3)).shape == (0, 3)
    assert g.multinomial(10, [0.5, 0.5], shape=()).shape == (2,)
    assert g.dirichlet([1.0, 1.0, 1.0], shape=np.int64(4)).chunks[-1] == 3


def test_shuffle_and_permutations_keep_the_values() -> None:
    a = blosc2.arange(12).reshape((3, 4))
    g = blosc2.random.default_rng(1)
    g.shuffle(a, axis=1)
    assert sorted(a[...].ravel().tolist()) == list(range(12))
    assert sorted(g.permuted(a, axis=None)[...].ravel().tolist()) == list(range(12))
    assert sorted(g.permutation(7)[...].tolist()) == list(range(7))
