"""The numba byte shuffle of 8-byte items as 8x8 byte transposes (``transpose_nb``): the
bytes of the numpy kernels for every length (tiles, leftover items, trailing bytes), 1-d and
whole blocks, and the tile path is the one taken where its contract holds (and only there)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyblosc2.kernels.numpy_set import NUMPY

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="the tile kernels are numba's"
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
    """``tiles`` whole tiles of 8 items, ``items`` more (off the tile path unless 0) and
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


def test_the_tile_path_is_taken_where_its_contract_holds(monkeypatch) -> None:
    from pyblosc2.kernels import shuffle_nb, transpose_nb

    taken: list[str] = []
    for name in ("shuffle8", "unshuffle8", "unshuffle8_blocks"):
        real = getattr(transpose_nb, name)
        monkeypatch.setattr(
            transpose_nb, name, lambda s, d, _r=real, _n=name: (taken.append(_n), _r(s, d))[1]
        )
    src = _data(1, 8 * 64, True)
    dst = np.empty_like(src)
    shuffle_nb.shuffle(src, dst, 8)
    shuffle_nb.unshuffle(dst, src.copy(), 8)
    shuffle_nb.unshuffle_blocks(src.reshape(2, -1), dst.reshape(2, -1), 8)
    assert taken == ["shuffle8", "unshuffle8", "unshuffle8_blocks"]
    taken.clear()
    odd = _data(1, 8 * 65, True)  # 65 items: not whole tiles
    shuffle_nb.shuffle(odd, np.empty_like(odd), 8)
    strided = _data(1, 16 * 64, True)[::2]  # not contiguous
    shuffle_nb.shuffle(strided, np.empty_like(strided), 8)
    shuffle_nb.shuffle(src, np.empty_like(src), 4)  # typesize 4 keeps the item loop
    assert taken == []
