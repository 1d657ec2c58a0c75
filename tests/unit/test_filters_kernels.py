"""Filter kernels (spec chunk-format.md §9): the spec's worked examples, round trips for every
typesize and length (tails included), the Blosc1 bitshuffle rule, DELTA references, and the
parameter checks of the lossy filters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyblosc2 import ParamError
from pyblosc2.filters.base import FilterContext
from pyblosc2.filters.bytedelta import ByteDelta, ByteDeltaBuggy
from pyblosc2.filters.delta import Delta
from pyblosc2.filters.inttrunc import IntTrunc
from pyblosc2.filters.shuffle import BitShuffle, Shuffle, bitshuffle, bitunshuffle, shuffle
from pyblosc2.filters.truncprec import TruncPrec

u8 = np.uint8


def _fwd(flt, data: np.ndarray, ctx: FilterContext) -> np.ndarray:
    out = np.empty_like(data)
    flt.forward(data, out, ctx)
    return out


def _bwd(flt, data: np.ndarray, ctx: FilterContext) -> np.ndarray:
    out = np.empty_like(data)
    flt.backward(data, out, ctx)
    return out


def test_shuffle_spec_example() -> None:
    a = np.arange(1, 14, dtype=u8)
    assert _fwd(Shuffle(), a, FilterContext(4)).tolist() == [
        1,
        5,
        9,
        2,
        6,
        10,
        3,
        7,
        11,
        4,
        8,
        12,
        13,
    ]


def test_shuffle_meta_is_the_group_size() -> None:
    a = np.arange(24, dtype=u8)
    expected = np.empty_like(a)
    shuffle(a, expected, 3)
    assert np.array_equal(_fwd(Shuffle(), a, FilterContext(4, meta=3)), expected)


def test_bitshuffle_spec_examples() -> None:
    a = np.arange(1, 9, dtype=np.uint16).view(u8)
    assert _fwd(BitShuffle(), a, FilterContext(2)).tobytes() == bytes.fromhex("55667880") + bytes(
        12
    )
    b = np.arange(32, dtype=np.int32).view(u8)
    want = bytes.fromhex("aaaaaaaacccccccc f0f0f0f000ff00ff0000ffff".replace(" ", "")) + bytes(108)
    assert _fwd(BitShuffle(), b, FilterContext(4)).tobytes() == want


@pytest.mark.parametrize("nelem", [7, 8, 9, 15, 16, 17])
def test_bitshuffle_blosc1_rule(nelem: int) -> None:
    """Version 2 (C-Blosc 1.x): the whole block is transposed only if its element count is a
    multiple of 8; Blosc2 transposes floor(n/8)*8 elements and copies the rest."""
    a = np.random.default_rng(nelem).integers(0, 256, nelem * 4, dtype=u8)
    b1 = _fwd(BitShuffle(), a, FilterContext(4, version=2))
    b2 = _fwd(BitShuffle(), a, FilterContext(4, version=5))
    if nelem % 8:
        assert np.array_equal(b1, a)  # stored untransposed
        assert np.array_equal(b2[(nelem // 8) * 32 :], a[(nelem // 8) * 32 :])
    else:
        assert np.array_equal(b1, b2)
    assert np.array_equal(_bwd(BitShuffle(), b1, FilterContext(4, version=2)), a)


def test_delta_spec_example() -> None:
    block0 = np.array([10, 11, 13, 16], np.uint32).view(u8)
    block1 = np.array([20, 21, 23, 26], np.uint32).view(u8)
    assert _fwd(Delta(), block0, FilterContext(4)).view(np.uint32).tolist() == [10, 1, 6, 29]
    enc1 = _fwd(Delta(), block1, FilterContext(4, ref=block0))
    assert enc1.view(np.uint32).tolist() == [30, 30, 26, 10]
    assert np.array_equal(_bwd(Delta(), enc1, FilterContext(4, ref=block0)), block1)


@pytest.mark.parametrize(("meta", "hexval"), [(4, "0x3ea80000"), (-20, "0x3ea00000")])
def test_trunc_prec_spec_examples(meta: int, hexval: str) -> None:
    x = np.array([1 / 3], np.float32).view(u8)
    out = _fwd(TruncPrec(), x, FilterContext(4, meta=meta & 0xFF))
    assert hex(out.view(np.uint32)[0]) == hexval
    assert np.array_equal(_bwd(TruncPrec(), out, FilterContext(4)), out)  # lossy: no undo


@pytest.mark.parametrize(("typesize", "meta"), [(2, 4), (4, 0), (8, 53), (4, -24)])
def test_trunc_prec_refuses(typesize: int, meta: int) -> None:
    with pytest.raises(ParamError, match="TRUNC_PREC"):
        TruncPrec().check(typesize, meta & 0xFF)


@pytest.mark.parametrize(
    ("meta", "want"), [(8, [0x1200, 0xFF00, 0x0000]), (-4, [0x1230, 0xFFF0, 0x00F0])]
)
def test_int_trunc_spec_examples(meta: int, want: list[int]) -> None:
    x = np.array([0x1234, 0xFFFF, 0x00FF], np.uint16).view(u8)
    assert _fwd(IntTrunc(), x, FilterContext(2, meta=meta & 0xFF)).view(np.uint16).tolist() == want


@pytest.mark.parametrize(("typesize", "meta"), [(3, 4), (2, 0), (1, -8)])
def test_int_trunc_refuses(typesize: int, meta: int) -> None:
    with pytest.raises(ParamError, match="INT_TRUNC"):
        IntTrunc().check(typesize, meta & 0xFF)


def test_bytedelta_spec_example() -> None:
    x = np.array([1000, 1001, 1003, 1006], np.int32).view(u8)
    shuffled = _fwd(Shuffle(), x, FilterContext(4))
    out = _fwd(ByteDelta(), shuffled, FilterContext(4, meta=4))
    assert out.tolist()[:8] == [0xE8, 1, 2, 3, 3, 0, 0, 0]


def test_bytedelta_buggy_restarts_after_16_bytes() -> None:
    """Id 34 (SIMD builds before the fix): the last L % 16 bytes of a channel restart at 0."""
    ch = np.arange(0, 40, 2, dtype=u8)  # one channel of 20 bytes
    enc = _fwd(ByteDeltaBuggy(), ch, FilterContext(1, meta=1))
    assert enc[16] == ch[16]  # restarted, not ch[16] - ch[15]
    assert np.array_equal(_bwd(ByteDeltaBuggy(), enc, FilterContext(1, meta=1)), ch)


FILTERS = [Shuffle(), BitShuffle(), Delta(), ByteDelta()]


@settings(max_examples=150, deadline=None)
@given(
    flt=st.sampled_from(FILTERS),
    typesize=st.integers(1, 17),
    data=st.binary(min_size=0, max_size=600),
    version=st.sampled_from([2, 5]),
)
def test_roundtrip(flt, typesize: int, data: bytes, version: int) -> None:
    a = np.frombuffer(data, u8).copy()
    ctx = FilterContext(typesize, meta=typesize if flt.id == 35 else 0, version=version)
    assert np.array_equal(_bwd(flt, _fwd(flt, a, ctx), ctx), a)


@settings(max_examples=60, deadline=None)
@given(typesize=st.sampled_from([1, 2, 4, 8, 3, 16]), n=st.integers(0, 5000))
def test_bitshuffle_functions_roundtrip(typesize: int, n: int) -> None:
    a = np.random.default_rng(n).integers(0, 256, n, dtype=u8)
    s = np.empty_like(a)
    b = np.empty_like(a)
    bitshuffle(a, s, typesize)
    bitunshuffle(s, b, typesize)
    assert np.array_equal(a, b)
