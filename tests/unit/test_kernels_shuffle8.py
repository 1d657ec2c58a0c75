"""The numba byte shuffle of 8-byte items (unsigned-index item loops, which replaced 8x8
byte-matrix transposes): the bytes of the numpy kernels for every length (runs of 8 items,
leftover items, trailing bytes, non-contiguous rows), 1-d and whole blocks."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyblosc2.kernels.numpy_set import NUMPY

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="the kernels under test are numba's"
)

FAST = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _data(seed: int, n: int, smooth: bool) -> np.ndarray:
    if smooth:  # float64 ramps: what shuffle meets in practice
        return np.linspace(-1, 1, n // 8 + 1).view(np.uint8)[:n].copy()
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


@FAST
@given(
    st.integers(0, 40),
    st.integers(0, 7),
    st.integers(0, 7),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_typesize_8_shuffles_are_numpys_bytes(
    tiles: int, items: int, tail: int, seed: int, smooth: bool
) -> None:
    """``tiles`` runs of 8 items (the unit the old transpose kernels took), ``items`` more and
    ``tail`` trailing bytes that are not an item (copied as they are)."""
    from pyblosc2.kernels.numba_set import NUMBA

    n = 64 * tiles + 8 * items + tail
    src = _data(seed, n, smooth)
    for kernel in ("shuffle", "unshuffle"):
        got, want = np.empty_like(src), np.empty_like(src)
        getattr(NUMBA, kernel)(src, got, 8)
        getattr(NUMPY, kernel)(src, want, 8)
        assert got.tobytes() == want.tobytes(), (kernel, n)
    back = np.empty_like(src)
    NUMBA.shuffle(src, got, 8)
    NUMBA.unshuffle(got, back, 8)
    assert back.tobytes() == src.tobytes()


@FAST
@given(st.integers(1, 5), st.integers(1, 12), st.integers(0, 8), st.integers(0, 2**32 - 1))
def test_typesize_8_block_shuffles_are_numpys_bytes(
    nb: int, tiles: int, extra: int, seed: int
) -> None:
    from pyblosc2.kernels.numba_set import NUMBA

    bs = 64 * tiles + 8 * extra
    src = _data(seed, nb * bs, False).reshape(nb, bs)
    for kernel in ("shuffle_blocks", "unshuffle_blocks"):
        got, want = np.empty_like(src), np.empty_like(src)
        getattr(NUMBA, kernel)(src, got, 8)
        getattr(NUMPY, kernel)(src, want, 8)
        assert got.tobytes() == want.tobytes(), (kernel, nb, bs)
