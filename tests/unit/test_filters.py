"""Filter kernels (spec §9): the spec's worked examples, the spec's numpy formulas as reference
implementations, forward→backward round trips, parameter checks, and C-Blosc2's own filtered
bytes.

C's filtered block bytes are read from an LZ4 chunk written by C-Blosc2 3.3.5 with one stream
per block (NEVER_SPLIT): each stream decompresses (``lz4.block``) to the block exactly as the
forward pipeline left it.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import lz4.block
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pyblosc2.constants import Filter
from pyblosc2.errors import ParamError
from pyblosc2.filters.base import BaseFilter, FilterContext
from pyblosc2.filters.bytedelta import ByteDelta, ByteDeltaBuggy, channel_cumsum
from pyblosc2.filters.delta import Delta, prefix_xor
from pyblosc2.filters.inttrunc import IntTrunc
from pyblosc2.filters.registry import get_filter
from pyblosc2.filters.shuffle import (
    BitShuffle,
    Shuffle,
    bitshuffle,
    bitunshuffle,
    shuffle,
    unshuffle,
)
from pyblosc2.filters.truncprec import TruncPrec

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TYPESIZES = list(range(1, 18))

# --------------------------------------------------------------------------------------------
# Helpers: running a filter, and the spec's formulas as reference implementations
# --------------------------------------------------------------------------------------------


def u8(data: bytes | list[int] | np.ndarray) -> np.ndarray:
    """A fresh 1-D uint8 array: the bytes of ``data`` (its values if it is a list)."""
    if isinstance(data, bytes | bytearray):
        return np.frombuffer(data, np.uint8).copy()
    if isinstance(data, list):
        return np.array(data, np.uint8)
    return np.ascontiguousarray(data).view(np.uint8).reshape(-1).copy()


def noise(nbytes: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)


def run(flt: BaseFilter, src: np.ndarray, ctx: FilterContext, backward: bool = False):
    """``flt`` applied to a copy of ``src`` into a garbage-filled buffer; the input must not
    change."""
    before = src.copy()
    dst = np.full_like(src, 0xA5)
    (flt.backward if backward else flt.forward)(src, dst, ctx)
    assert np.array_equal(src, before), "filter modified its input"
    return dst


def ref_shuffle(a: np.ndarray, g: int) -> np.ndarray:
    n = len(a) // g * g
    return np.concatenate([a[:n].reshape(-1, g).T.ravel(), a[n:]])


def bit_count(nbytes: int, g: int, blosc1: bool) -> int:
    m = nbytes // g
    return (m if m % 8 == 0 else 0) if blosc1 else m // 8 * 8


def ref_bitshuffle(a: np.ndarray, g: int, blosc1: bool = False) -> np.ndarray:
    n = bit_count(len(a), g, blosc1) * g
    if n == 0:
        return a.copy()
    bits = np.unpackbits(a[:n].reshape(-1, g), axis=1, bitorder="little")
    rows = np.packbits(bits.T, axis=1, bitorder="little").ravel()
    return np.concatenate([rows, a[n:]])


def delta_width(typesize: int) -> int:
    if typesize in (1, 2, 4, 8):
        return typesize
    return 8 if typesize % 8 == 0 else 1


def ref_delta(a: np.ndarray, typesize: int, ref: np.ndarray | None = None) -> np.ndarray:
    t = delta_width(typesize)
    n = len(a) // t * t
    x = a[:n].view(f"<u{t}")
    prev = np.concatenate([x[:1] * 0, x[:-1]]) if ref is None else ref[:n].view(f"<u{t}")
    return np.concatenate([(x ^ prev).view(np.uint8), a[n:]])


def ref_bytedelta(a: np.ndarray, g: int) -> np.ndarray:
    n = len(a) // g * g
    ch = a[:n].reshape(g, -1).astype(np.int64)
    out = np.diff(ch, axis=1, prepend=0) % 256
    return np.concatenate([out.astype(np.uint8).ravel(), a[n:]])


blocks = st.binary(max_size=400).map(u8)


# --------------------------------------------------------------------------------------------
# Identity and registry
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "fid", "name"),
    [
        (Shuffle, 1, "shuffle"),
        (BitShuffle, 2, "bitshuffle"),
        (Delta, 3, "delta"),
        (TruncPrec, 4, "trunc_prec"),
        (ByteDeltaBuggy, 34, "bytedelta_buggy"),
        (ByteDelta, 35, "bytedelta"),
        (IntTrunc, 36, "int_trunc"),
    ],
)
def test_ids_names_and_registry(cls, fid, name):
    assert (cls.id, cls.name, type(get_filter(fid))) == (fid, name, cls)


# --------------------------------------------------------------------------------------------
# SHUFFLE (§9.1)
# --------------------------------------------------------------------------------------------


def test_shuffle_spec_example():
    src = u8(list(range(1, 14)))
    expected = [1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12, 13]
    assert run(Shuffle(), src, FilterContext(4)).tolist() == expected


def test_unshuffle_spec_example():
    src = u8([1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12, 13])
    assert run(Shuffle(), src, FilterContext(4), backward=True).tolist() == list(range(1, 14))


@pytest.mark.parametrize(
    ("typesize", "meta", "group"),
    [(4, 2, 2), (4, 3, 3), (4, 5, 5), (4, 8, 8), (8, 0, 8), (2, 4, 4)],
)
def test_shuffle_meta_is_the_group_size(typesize, meta, group):
    src = (np.arange(203) * 7 % 256).astype(np.uint8)
    out = run(Shuffle(), src, FilterContext(typesize, meta))
    assert np.array_equal(out, ref_shuffle(src, group))


@pytest.mark.parametrize("typesize", TYPESIZES)
@pytest.mark.parametrize("nbytes", [0, 1, 7, 16, 255, 256, 4099, 65536 + 13])
def test_shuffle_matches_spec_formula(typesize, nbytes):
    src = noise(nbytes, nbytes)
    out = np.full_like(src, 0xA5)
    shuffle(src, out, typesize)
    assert np.array_equal(out, ref_shuffle(src, typesize))


@pytest.mark.parametrize("typesize", TYPESIZES)
@pytest.mark.parametrize("nbytes", [0, 1, 7, 16, 255, 256, 4099, 65536 + 13])
def test_unshuffle_matches_spec_formula(typesize, nbytes):
    src = noise(nbytes, nbytes)
    out = np.full_like(src, 0xA5)
    unshuffle(ref_shuffle(src, typesize), out, typesize)
    assert np.array_equal(out, src)


@FAST
@given(blocks, st.integers(1, 17), st.integers(0, 255))
def test_shuffle_round_trip(src, typesize, meta):
    ctx = FilterContext(typesize, meta)
    out = run(Shuffle(), src, ctx)
    assert np.array_equal(run(Shuffle(), out, ctx, backward=True), src)


# --------------------------------------------------------------------------------------------
# BITSHUFFLE (§9.2)
# --------------------------------------------------------------------------------------------


def test_bitshuffle_spec_example_uint16():
    src = u8(np.arange(1, 9, dtype="<u2"))
    out = run(BitShuffle(), src, FilterContext(2))
    assert out.tobytes() == bytes.fromhex("55667880") + bytes(12)


def test_bitshuffle_spec_example_ninth_element_copied():
    src = u8(np.arange(1, 10, dtype="<u2"))
    out = run(BitShuffle(), src, FilterContext(2))
    assert out.tobytes() == bytes.fromhex("55667880") + bytes(12) + b"\x09\x00"


def test_bitshuffle_spec_vector_v9():
    src = u8(np.arange(32, dtype="<i4"))
    out = run(BitShuffle(), src, FilterContext(4))
    head = bytes.fromhex("AAAAAAAA CCCCCCCC F0F0F0F0 00FF00FF 0000FFFF")
    assert out.tobytes() == head + bytes(108)


@pytest.mark.parametrize(
    ("nbytes", "version", "transposed"),
    [
        (18, 5, 16),  # 9 uint16: C-Blosc2 transposes 8 elements, copies the 9th
        (18, 2, 0),  # Blosc1: 9 is not a multiple of 8, the block is stored as is
        (17, 2, 16),  # Blosc1: 8 elements transposed, the odd byte copied
        (17, 5, 16),
        (14, 5, 0),  # fewer than 8 elements: nothing to transpose
    ],
)
def test_bitshuffle_blosc1_and_blosc2_rules(nbytes, version, transposed):
    src = (np.arange(3, 3 + nbytes) * 37 % 256).astype(np.uint8)
    out = run(BitShuffle(), src, FilterContext(2, 0, version))
    expected = np.concatenate([ref_bitshuffle(src[:transposed], 2), src[transposed:]])
    assert np.array_equal(out, expected)


# element counts giving every word width of the bit transpose (rows of m/8 bytes: gcd with 8)
@pytest.mark.parametrize("typesize", TYPESIZES)
@pytest.mark.parametrize("elements", [8, 16, 32, 64, 72, 200, 8192])
@pytest.mark.parametrize("extra", [0, 1, 2])
def test_bitshuffle_matches_spec_formula(typesize, elements, extra):
    nbytes = elements * typesize + extra * (typesize + 1)  # extra < 8 elements, plus odd bytes
    src = noise(nbytes, nbytes)
    out = np.full_like(src, 0xA5)
    bitshuffle(src, out, typesize)
    assert np.array_equal(out, ref_bitshuffle(src, typesize))


@pytest.mark.parametrize("typesize", TYPESIZES)
@pytest.mark.parametrize("elements", [8, 16, 32, 64, 72, 200, 8192])
@pytest.mark.parametrize("blosc1", [False, True])
def test_bitunshuffle_inverts_spec_formula(typesize, elements, blosc1):
    nbytes = elements * typesize + typesize // 2
    src = noise(nbytes, nbytes)
    out = np.full_like(src, 0xA5)
    bitunshuffle(ref_bitshuffle(src, typesize, blosc1), out, typesize, blosc1=blosc1)
    assert np.array_equal(out, src)


@FAST
@given(blocks, st.integers(1, 17), st.sampled_from([2, 3, 4, 5]))
@example(u8(bytes(range(64))), 1, 5)
def test_bitshuffle_round_trip_and_layout(src, typesize, version):
    ctx = FilterContext(typesize, 0, version)
    out = run(BitShuffle(), src, ctx)
    assert np.array_equal(out, ref_bitshuffle(src, typesize, blosc1=version == 2))
    assert np.array_equal(run(BitShuffle(), out, ctx, backward=True), src)


# --------------------------------------------------------------------------------------------
# DELTA (§9.3)
# --------------------------------------------------------------------------------------------


def test_delta_spec_example_block0_and_block1():
    block0, block1 = u8(np.array([10, 11, 13, 16], "<u4")), u8(np.array([20, 21, 23, 26], "<u4"))
    y0 = run(Delta(), block0, FilterContext(4))
    y1 = run(Delta(), block1, FilterContext(4, ref=block0))
    assert (y0.view("<u4").tolist(), y1.view("<u4").tolist()) == ([10, 1, 6, 29], [30, 30, 26, 10])


def test_delta_spec_example_decodes_block1_against_decoded_block0():
    y0, y1 = u8(np.array([10, 1, 6, 29], "<u4")), u8(np.array([30, 30, 26, 10], "<u4"))
    x0 = run(Delta(), y0, FilterContext(4), backward=True)
    x1 = run(Delta(), y1, FilterContext(4, ref=x0), backward=True)
    assert (x0.view("<u4").tolist(), x1.view("<u4").tolist()) == (
        [10, 11, 13, 16],
        [20, 21, 23, 26],
    )


def test_delta_spec_vector_v10():
    out = run(Delta(), u8(np.arange(1000, 1016, dtype="<i4")), FilterContext(4))
    assert out.view("<u4")[:9].tolist() == [1000, 1, 3, 1, 7, 1, 3, 1, 31]


@pytest.mark.parametrize(
    ("typesize", "width"),
    [(1, 1), (2, 2), (3, 1), (4, 4), (5, 1), (8, 8), (12, 1), (16, 8), (24, 8), (17, 1)],
)
def test_delta_element_width(typesize, width):
    src = noise(77, typesize)
    assert np.array_equal(run(Delta(), src, FilterContext(typesize)), ref_delta(src, typesize))
    assert delta_width(typesize) == width


@FAST
@given(blocks, st.integers(1, 17))
def test_delta_block0_round_trip(src, typesize):
    ctx = FilterContext(typesize)
    out = run(Delta(), src, ctx)
    assert np.array_equal(out, ref_delta(src, typesize))
    assert np.array_equal(run(Delta(), out, ctx, backward=True), src)


@FAST
@given(
    st.binary(min_size=1, max_size=400).flatmap(
        lambda b: st.tuples(
            st.just(u8(b)), st.binary(min_size=len(b), max_size=len(b) + 64).map(u8)
        )
    ),
    st.integers(1, 17),
)
def test_delta_with_reference_round_trip(src_ref, typesize):
    src, ref = src_ref
    ctx = FilterContext(typesize, ref=ref)
    out = run(Delta(), src, ctx)
    assert np.array_equal(out, ref_delta(src, typesize, ref))
    assert np.array_equal(run(Delta(), out, ctx, backward=True), src)


@pytest.mark.parametrize("dtype", ["<u1", "<u2", "<u4", "<u8"])
@pytest.mark.parametrize("length", [0, 1, 15, 16, 17, 31, 64, 1001, 1 << 16])
def test_prefix_xor_matches_accumulate(dtype, length):
    y = np.random.default_rng(length).integers(0, 2**63, length, dtype=np.uint64).astype(dtype)
    x = np.empty_like(y)
    prefix_xor(y, x)
    assert np.array_equal(x, np.bitwise_xor.accumulate(y))


# --------------------------------------------------------------------------------------------
# TRUNC_PREC (§9.4) and INT_TRUNC (§9.6)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "value", "meta", "expected"),
    [
        ("<u4", 0x3EAAAAAB, 4, 0x3EA80000),  # float32 1/3 → 0.328125
        ("<u4", 0x40490FDB, 4, 0x40480000),  # float32 pi → 3.125
        ("<u4", 0x3EAAAAAB, 0xEC, 0x3EA00000),  # meta -20
        ("<u8", 0x3FD5555555555555, 10, 0x3FD5540000000000),  # float64 1/3
        ("<u4", 0xBEAAAAAB, 23, 0xBEAAAAAB),  # p = M keeps everything, sign untouched
        ("<u4", 0xBEAAAAAB, 1, 0xBE800000),
    ],
)
def test_trunc_prec_spec_examples(dtype, value, meta, expected):
    src = u8(np.array([value], dtype))
    ctx = FilterContext(np.dtype(dtype).itemsize, meta)
    assert int(run(TruncPrec(), src, ctx).view(dtype)[0]) == expected


def test_trunc_prec_float_values():
    src = u8(np.array([1 / 3, np.pi], "<f4"))
    assert run(TruncPrec(), src, FilterContext(4, 4)).view("<f4").tolist() == [0.328125, 3.125]


@pytest.mark.parametrize(
    ("values", "meta", "expected"),
    [
        ([0x1234, 0xFFFF, 0x00FF], 8, [0x1200, 0xFF00, 0x0000]),
        ([0x1234, 0xFFFF, 0x00FF], 0xFC, [0x1230, 0xFFF0, 0x00F0]),  # meta -4
        ([0x1234, 0xFFFF, 0x00FF], 16, [0x1234, 0xFFFF, 0x00FF]),  # keeps all 16 bits
        ([0x1234, 0xFFFF, 0x00FF], 1, [0x0000, 0x8000, 0x0000]),
    ],
)
def test_int_trunc_spec_examples(values, meta, expected):
    src = u8(np.array(values, "<u2"))
    assert run(IntTrunc(), src, FilterContext(2, meta)).view("<u2").tolist() == expected


@pytest.mark.parametrize(
    ("cls", "typesize", "meta"),
    [
        (TruncPrec, 4, 1),
        (TruncPrec, 4, 23),
        (TruncPrec, 4, 256 - 22),
        (TruncPrec, 8, 52),
        (TruncPrec, 8, 256 - 51),
        (IntTrunc, 1, 8),
        (IntTrunc, 1, 256 - 7),
        (IntTrunc, 2, 16),
        (IntTrunc, 4, 256 - 31),
        (IntTrunc, 8, 64),
        (IntTrunc, 8, 1),
    ],
)
def test_truncation_masks_low_bits(cls, typesize, meta):
    p = meta - 256 if meta > 127 else meta
    width = 8 * typesize if cls is IntTrunc else {4: 23, 8: 52}[typesize]
    zeroed = width - p if p > 0 else -p
    src = noise(40 * typesize + typesize - 1, meta)
    out = run(cls(), src, FilterContext(typesize, meta))
    n = len(src) // typesize * typesize
    mask = (1 << 8 * typesize) - (1 << zeroed)
    word = f"<u{typesize}"
    expected = np.concatenate(
        [(src[:n].view(word) & np.dtype(word).type(mask)).view(np.uint8), src[n:]]
    )  # the trailing bytes are written unchanged
    assert np.array_equal(out, expected)


@pytest.mark.parametrize(
    ("cls", "typesize", "meta"),
    [
        (TruncPrec, 1, 4),
        (TruncPrec, 2, 4),
        (TruncPrec, 3, 4),
        (TruncPrec, 16, 4),
        (TruncPrec, 4, 0),
        (TruncPrec, 4, 24),
        (TruncPrec, 4, 256 - 23),
        (TruncPrec, 8, 53),
        (TruncPrec, 8, 256 - 52),
        (TruncPrec, 8, 128),
        (IntTrunc, 3, 4),
        (IntTrunc, 16, 4),
        (IntTrunc, 5, 1),
        (IntTrunc, 1, 0),
        (IntTrunc, 1, 9),
        (IntTrunc, 1, 256 - 8),
        (IntTrunc, 8, 65),
        (IntTrunc, 8, 127),
        (IntTrunc, 8, 256 - 64),
    ],
)
def test_truncation_check_refuses(cls, typesize, meta):
    refused = r"^(TRUNC_PREC|INT_TRUNC) (needs typesize|precision must be in)"
    with pytest.raises(ParamError, match=refused):
        cls().check(typesize, meta)
    # forward refuses too (ParamError is a ValueError)
    with pytest.raises(ValueError, match=refused):
        run(cls(), u8(bytes(4 * typesize)), FilterContext(typesize, meta))


@pytest.mark.parametrize("cls", [TruncPrec, IntTrunc])
def test_truncation_backward_is_a_copy(cls):
    src = noise(37, 1)
    assert np.array_equal(run(cls(), src, FilterContext(4, 3), backward=True), src)


# --------------------------------------------------------------------------------------------
# BYTEDELTA (§9.5)
# --------------------------------------------------------------------------------------------


def test_shuffle_then_bytedelta_spec_example():
    src = u8(np.array([1000, 1001, 1003, 1006], "<i4"))
    shuffled = run(Shuffle(), src, FilterContext(4))
    coded = run(ByteDelta(), shuffled, FilterContext(4, 4))
    assert shuffled.tobytes().hex() == "e8e9ebee030303030000000000000000"
    assert coded.tobytes().hex() == "e8010203030000000000000000000000"


def test_bytedelta_meta_zero_means_typesize():
    src = (np.arange(50) ** 2 % 256).astype(np.uint8)
    assert np.array_equal(run(ByteDelta(), src, FilterContext(4, 0)), ref_bytedelta(src, 4))


def test_bytedelta_buggy_restarts_the_last_partial_16_bytes():
    src = np.arange(5, 25, dtype=np.uint8)  # one channel of 20 bytes: 16 + 4
    out = run(ByteDeltaBuggy(), src, FilterContext(1, 1))
    assert out.tolist() == [5] + [1] * 15 + [21, 1, 1, 1]


@FAST
@given(blocks, st.integers(0, 17), st.integers(1, 17))
def test_bytedelta_round_trip(src, meta, typesize):
    ctx = FilterContext(typesize, meta)
    out = run(ByteDelta(), src, ctx)
    assert np.array_equal(out, ref_bytedelta(src, meta or typesize))
    assert np.array_equal(run(ByteDelta(), out, ctx, backward=True), src)


@FAST
@given(blocks, st.integers(1, 17))
def test_bytedelta_buggy_round_trip(src, meta):
    ctx = FilterContext(meta, meta)
    out = run(ByteDeltaBuggy(), src, ctx)
    assert np.array_equal(run(ByteDeltaBuggy(), out, ctx, backward=True), src)


@pytest.mark.parametrize("shape", [(1, 0), (1, 63), (1, 64), (3, 1000), (8, 70000), (1, 300001)])
def test_channel_cumsum_matches_numpy(shape):
    y = np.random.default_rng(shape[1]).integers(0, 256, shape, dtype=np.uint8)
    x = np.empty_like(y)
    channel_cumsum(y, x)
    assert np.array_equal(x, np.cumsum(y, axis=1, dtype=np.uint8))


def _bit_round_trip(seed: int) -> bool:
    typesize = 1 + seed % 9
    src = noise(4096 * typesize + seed, seed)
    mid, back = np.empty_like(src), np.empty_like(src)
    bitshuffle(src, mid, typesize)
    bitunshuffle(mid, back, typesize)
    return np.array_equal(mid, ref_bitshuffle(src, typesize)) and np.array_equal(back, src)


def test_kernels_are_thread_safe():
    """The kernels reuse per-thread scratch buffers; concurrent calls must not share them."""
    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(_bit_round_trip, range(40)))


# --------------------------------------------------------------------------------------------
# Cross-checks against C-Blosc2 3.3.5
# --------------------------------------------------------------------------------------------


def compressible(nbytes: int, seed: int) -> bytes:
    """Deterministic data that every filter combination below still compresses (so C does not
    fall back to a memcpyed chunk)."""
    rng = np.random.default_rng(seed)
    pattern = rng.integers(0, 256, 16, dtype=np.uint8)
    return (np.resize(pattern, nbytes) + (rng.random(nbytes) < 0.05)).astype(np.uint8).tobytes()


def c_filtered(
    cblosc2, data: bytes, typesize: int, filters: list[int], metas: list[int], blocksize: int
) -> tuple[list[np.ndarray], list[int], list[int]]:
    """C's filtered bytes of every block, and the filters/metas its header records."""
    chunk = cblosc2.compress2(
        data,
        typesize=typesize,
        clevel=1,
        codec=cblosc2.Codec.LZ4,
        filters=filters,
        filters_meta=[m - 256 if m > 127 else m for m in metas],
        blocksize=blocksize,
        splitmode=cblosc2.SplitMode.NEVER_SPLIT,
        nthreads=1,
    )
    assert chunk[2] & 0x12 == 0x10 and chunk[31] & 0x70 == 0, "not a regular unsplit chunk"
    assert int.from_bytes(chunk[8:12], "little") == blocksize
    out = []
    for j, start in enumerate(range(0, len(data), blocksize)):
        bsize = min(blocksize, len(data) - start)
        pos = int.from_bytes(chunk[32 + 4 * j : 36 + 4 * j], "little")
        csize = int.from_bytes(chunk[pos : pos + 4], "little", signed=True)
        stream = chunk[pos + 4 : pos + 4 + max(csize, 0)]
        if csize <= 0:  # zero or run stream
            raw = bytes([(-csize) & 0xFF]) * bsize
        elif csize == bsize:
            raw = stream
        else:
            raw = lz4.block.decompress(stream, uncompressed_size=bsize)
        out.append(u8(raw))
    return out, list(chunk[16:22]), list(chunk[24:30])


def our_filtered(
    data: bytes, typesize: int, filters: list[int], metas: list[int], blocksize: int
) -> list[np.ndarray]:
    """The forward pipeline, block by block (DELTA's reference: block 0 of the raw input)."""
    src = u8(data)
    out = []
    for start in range(0, len(src), blocksize):
        cur = src[start : start + blocksize]
        for fid, meta in zip(filters, metas, strict=True):
            if fid:
                ref = None if start == 0 else src[:blocksize]
                cur = run(get_filter(fid), cur, FilterContext(typesize, meta, 5, ref))
        out.append(cur)
    return out


S, B, D, BD = Filter.SHUFFLE, Filter.BITSHUFFLE, Filter.DELTA, Filter.BYTEDELTA


@pytest.mark.parametrize("typesize", [1, 2, 3, 4, 7, 8, 12, 16, 17])
@pytest.mark.parametrize(
    ("filters", "metas"),  # meta None: the typesize (C refuses 0 for id 34)
    [
        pytest.param([S], [0], id="shuffle"),
        pytest.param([B], [0], id="bitshuffle"),
        pytest.param([D], [0], id="delta"),
        pytest.param([D, S], [0, 0], id="delta-shuffle"),
        pytest.param([S, D], [0, 0], id="shuffle-delta"),
        pytest.param([D, B], [0, 0], id="delta-bitshuffle"),
        pytest.param([S, BD], [0, 0], id="shuffle-bytedelta"),
        pytest.param([S], [3], id="shuffle3"),
        pytest.param([S, BD], [3, 3], id="shuffle3-bytedelta3"),
        pytest.param([S, 34], [0, None], id="shuffle-bytedelta_buggy"),
    ],
)
def test_forward_matches_c(cblosc2, typesize, filters, metas):
    metas = [typesize if m is None else m for m in metas]
    blocksize = 1024 // typesize * typesize
    data = compressible(3 * blocksize + 2 * typesize + 1, typesize)
    theirs, hfilters, hmetas = c_filtered(cblosc2, data, typesize, filters, metas, blocksize)
    ours = our_filtered(data, typesize, hfilters, hmetas, blocksize)
    # C leaves the bsize % typesize tail undefined after DELTA and the buggy BYTEDELTA (§9.0)
    keep = [len(b) // typesize * typesize for b in theirs]
    assert [t[:k].tobytes() for t, k in zip(theirs, keep, strict=True)] == [
        o[:k].tobytes() for o, k in zip(ours, keep, strict=True)
    ]


def test_delta_width_8_codes_bytes_beyond_the_last_typesize_multiple(cblosc2):
    """typesize 16 → 8-byte elements: C codes 40 of a 45-byte leftover block, not 32."""
    data = compressible(2 * 1024 + 45, 16)
    theirs, hf, hm = c_filtered(cblosc2, data, 16, [D], [0], 1024)
    ours = our_filtered(data, 16, hf, hm, 1024)
    assert theirs[2][:40].tobytes() == ours[2][:40].tobytes()
    assert theirs[2][32:40].tobytes() != data[2048 + 32 : 2048 + 40]


@pytest.mark.parametrize(
    ("fid", "typesize", "meta"),
    [
        (Filter.TRUNC_PREC, 4, 1),
        (Filter.TRUNC_PREC, 4, 10),
        (Filter.TRUNC_PREC, 4, 256 - 3),
        (Filter.TRUNC_PREC, 8, 20),
        (Filter.TRUNC_PREC, 8, 256 - 40),
        (Filter.INT_TRUNC, 1, 3),
        (Filter.INT_TRUNC, 2, 256 - 5),
        (Filter.INT_TRUNC, 4, 7),
        (Filter.INT_TRUNC, 8, 60),
    ],
)
def test_truncation_matches_c(cblosc2, fid, typesize, meta):
    data = compressible(3000 + typesize - 1, meta)
    theirs, hf, hm = c_filtered(cblosc2, data, typesize, [fid], [meta], 1024 // typesize * typesize)
    ours = our_filtered(data, typesize, hf, hm, 1024 // typesize * typesize)
    keep = [len(b) // typesize * typesize for b in theirs]
    assert [t[:k].tobytes() for t, k in zip(theirs, keep, strict=True)] == [
        o[:k].tobytes() for o, k in zip(ours, keep, strict=True)
    ]


@functools.cache
def c_accepted_metas(cblosc2, fid: int, typesize: int) -> frozenset[int]:
    data = np.linspace(0, 1, 256).tobytes()

    def ok(meta: int) -> bool:
        try:
            cblosc2.compress2(
                data,
                typesize=typesize,
                filters=[fid],
                filters_meta=[meta - 256 if meta > 127 else meta],
                nthreads=1,
            )
        except Exception:
            return False
        return True

    return frozenset(m for m in range(256) if ok(m))


def our_accepted_metas(cls: type[BaseFilter], typesize: int) -> frozenset[int]:
    def ok(meta: int) -> bool:
        try:
            cls().check(typesize, meta)
        except ParamError:
            return False
        return True

    return frozenset(m for m in range(256) if ok(m))


@pytest.mark.parametrize("typesize", [1, 2, 3, 4, 8, 16])
@pytest.mark.parametrize("cls", [TruncPrec, IntTrunc])
def test_check_refuses_exactly_what_c_refuses(cblosc2, cls, typesize):
    assert our_accepted_metas(cls, typesize) == c_accepted_metas(cblosc2, cls.id, typesize)


@pytest.mark.parametrize(
    ("fid", "lossy"),
    [
        (Filter.SHUFFLE, False),
        (Filter.BITSHUFFLE, False),
        (Filter.DELTA, False),
        (Filter.TRUNC_PREC, True),
        (Filter.BYTEDELTA, False),
        (Filter.BYTEDELTA_BUGGY, False),
        (Filter.INT_TRUNC, True),
    ],
)
def test_lossy_filters_are_marked_and_skipped_backward(fid: Filter, lossy: bool) -> None:
    from pyblosc2.chunk.pipeline import Pipeline

    flt = get_filter(fid)
    assert flt.lossy is lossy
    pipe = Pipeline(((flt, 0),), 4, 5)
    assert (pipe.backward_steps == ()) is lossy


def test_bytedelta_buggy_has_its_enum_value() -> None:
    assert Filter.BYTEDELTA_BUGGY == 34 and get_filter(34).id is Filter.BYTEDELTA_BUGGY
