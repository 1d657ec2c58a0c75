"""NDCELL (32) and NDMEAN (33), spec §9.7: cell order, cell means and their checks, against a
reference written cell by cell with numpy slices (no reference library here; interop is in
tests/interop/test_nd_filters.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.context import ChunkContext
from pyblosc2.filters.base import FilterContext
from pyblosc2.filters.ndcell import NDCell
from pyblosc2.filters.ndgeometry import block_shape, cell_order
from pyblosc2.filters.ndmean import NDMean, cell_means
from pyblosc2.ndarray.b2nd_meta import B2NDMeta

F = pb.Filter


def _cells(blockshape: tuple[int, ...], side: tuple[int, ...]):
    """The cells of a block in C order, as tuples of slices (the reference)."""
    ranges = [range(0, b, c) for b, c in zip(blockshape, side, strict=True)]
    for corner in itertools.product(*ranges):
        yield tuple(
            slice(o, min(o + c, b)) for o, c, b in zip(corner, side, blockshape, strict=True)
        )


def _ctx(blockshape: tuple[int, ...], typesize: int) -> ChunkContext:
    meta = B2NDMeta(
        tuple(2 * b for b in blockshape), blockshape, blockshape, np.dtype(f"V{typesize}")
    )
    return ChunkContext(typesize, (("b2nd", meta.to_bytes()),))


shapes = st.lists(st.integers(1, 9), min_size=1, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(shapes, st.integers(1, 5))
def test_cell_order_lists_cells_in_c_order(blockshape: tuple[int, ...], c: int) -> None:
    side = tuple(min(c, b) for b in blockshape)
    order, lengths = cell_order(blockshape, side)
    ids = np.arange(math.prod(blockshape)).reshape(blockshape)
    expected = [ids[cell].ravel() for cell in _cells(blockshape, side)]
    assert order.tolist() == np.concatenate(expected).tolist()
    assert lengths.tolist() == [len(e) for e in expected]


@settings(max_examples=60, deadline=None)
@given(shapes, st.integers(1, 4), st.sampled_from([1, 2, 4, 8]), st.data())
def test_ndcell_roundtrip_and_layout(blockshape, side, typesize, data) -> None:
    if side ** len(blockshape) > math.prod(blockshape):
        return  # C refuses blocks smaller than one cell
    n = math.prod(blockshape) * typesize
    src = np.frombuffer(data.draw(st.binary(min_size=n, max_size=n)), np.uint8)
    flt = NDCell().bound(_ctx(blockshape, typesize))
    ctx = FilterContext(typesize, side)
    fwd, back = np.empty_like(src), np.empty_like(src)
    flt.forward(src, fwd, ctx)
    flt.backward(fwd, back, ctx)
    assert back.tobytes() == src.tobytes()
    items = src.reshape(*blockshape, typesize)
    cells = _cells(blockshape, (side,) * len(blockshape))
    assert fwd.tobytes() == b"".join(items[cell].tobytes() for cell in cells)


def _c_mean(values: np.ndarray) -> np.floating:
    acc = values.dtype.type(0)
    for v in values:  # one by one in the item width, as C adds them
        acc = acc + v
    return acc / values.dtype.type(len(values))


@settings(max_examples=40, deadline=None)
@given(shapes, st.integers(1, 6), st.sampled_from(["<f4", "<f8"]), st.integers(0, 2**32 - 1))
def test_ndmean_means_are_cs(blockshape, c, dtype, seed) -> None:
    side = tuple(min(c, b) for b in blockshape)
    if any(b > s != side[0] for b, s in zip(blockshape, side, strict=True)):
        return  # C cannot decode those (test_ndmean_refuses_overlapping_cells)
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal(math.prod(blockshape)) * 1e6).astype(dtype)
    flt = NDMean().bound(_ctx(blockshape, values.itemsize))
    src = values.view(np.uint8)
    fwd, back = np.empty_like(src), np.empty_like(src)
    flt.forward(src, fwd, FilterContext(values.itemsize, c))
    flt.backward(fwd, back, FilterContext(values.itemsize, c))
    grid = values.reshape(blockshape)
    expected = np.empty_like(grid)
    for cell in _cells(blockshape, side):
        expected[cell] = _c_mean(grid[cell].ravel())
    assert back.tobytes() == expected.tobytes()


def test_cell_means_start_from_zero() -> None:
    """C adds the items to 0: a cell holding only -0.0 averages to +0.0."""
    out = cell_means(np.array([-0.0], np.float32), np.array([0]), np.array([1]))
    assert np.signbit(out).tolist() == [False]


def test_block_shape_is_read_by_position() -> None:
    ctx = _ctx((3, 5, 7), 4)
    assert block_shape(ctx, "NDCELL") == (3, 5, 7)


@pytest.mark.parametrize(
    ("metalayers", "match"),
    [
        ((), "b2nd metalayer"),
        ((("b2nd", b"\x97\x00"),), "3 bytes"),
        ((("b2nd", b"\x97\x00\x09"),), "ndim"),
        ((("b2nd", b"\x97\x00\x02\x92"),), "bytes"),
    ],
)
def test_bad_geometry_is_a_format_error(metalayers, match: str) -> None:
    flt = NDCell().bound(ChunkContext(4, metalayers))
    src = np.zeros(64, np.uint8)
    with pytest.raises(pb.FormatError, match=match):
        flt.backward(src, np.empty_like(src), FilterContext(4, 2))


@pytest.mark.parametrize(
    ("flt", "typesize", "meta", "nbytes", "match"),
    [
        (NDCell(), 4, 2, 60, "block size"),  # not the b2nd block
        (NDCell(), 4, 0, 64, "cell side"),
        (NDCell(), 4, 5, 64, "cell size"),  # 25 items > 16
        (NDMean(), 2, 2, 32, "typesize"),
        (NDMean(), 4, 0x80, 64, "cell side"),  # int8: -128
    ],
)
def test_checks_before_touching_a_byte(flt, typesize, meta, nbytes, match) -> None:
    bound = flt.bound(_ctx((4, 4), typesize))
    src = np.zeros(nbytes, np.uint8)
    with pytest.raises(pb.FormatError, match=match):
        bound.backward(src, np.empty_like(src), FilterContext(typesize, meta))
    if nbytes == 16 * typesize:
        with pytest.raises(pb.ParamError):
            bound.check(typesize, meta)


def test_ndmean_refuses_overlapping_cells() -> None:
    """C takes every cell origin from the first axis' cell side: a block narrower than the
    cell along axis 0 and wider along another makes cells C cannot decode."""
    a = np.arange(30 * 33, dtype=np.float64).reshape(30, 33)
    with pytest.raises(pb.ParamError, match="cells C can decode"):
        pb.asarray(a, chunks=(15, 33), blocks=(3, 11),
                   cparams={"filters": [F.NDMEAN], "filters_meta": [5]})  # fmt: skip


def test_delta_after_ndmean_is_refused() -> None:
    a = np.linspace(0, 1, 400).reshape(20, 20)
    with pytest.raises(pb.ParamError, match="DELTA after NDMEAN"):
        pb.asarray(a, cparams={"filters": [F.NDMEAN, F.DELTA], "filters_meta": [4, 0]})


@pytest.mark.parametrize(
    ("filt", "dtype"), [(F.NDCELL, "<i8"), (F.NDCELL, "<u2"), (F.NDMEAN, "<f4"), (F.NDMEAN, "<f8")]
)
@pytest.mark.parametrize("contiguous", [True, False])
def test_arrays_on_disk(tmp_path, filt, dtype, contiguous) -> None:
    a = np.linspace(0, 1000, 37 * 21).astype(dtype).reshape(37, 21)
    path = str(tmp_path / "a.b2nd")
    cp = {"filters": [filt, F.SHUFFLE], "filters_meta": [3, 0], "codec": pb.Codec.ZSTD}
    arr = pb.asarray(a, urlpath=path, mode="w", contiguous=contiguous, chunks=(20, 21),
                     blocks=(9, 7), cparams=cp)  # fmt: skip
    back = pb.open(path)[...]
    if filt == F.NDCELL:
        assert np.array_equal(back, a)
    else:  # every 3x3 cell of a block holds its mean
        assert back[0, 0] == back[2, 2] == _c_mean(a[:3, :3].ravel())
    assert np.array_equal(back, arr[...])
    assert np.array_equal(pb.open(path)[5:30, 3:17], back[5:30, 3:17])  # ranged reads too


def test_ndmean_on_int32_reinterprets_as_float32() -> None:
    """python-blosc2's test_lossy stores int32 with NDMEAN: C sees float32 bits."""
    a = np.arange(13 * 13, dtype=np.int32).reshape(13, 13)
    back = pb.asarray(a, cparams={"filters": [F.NDMEAN], "filters_meta": [4]})[...]
    floats = a.view(np.float32).reshape(13, 13)
    assert back.dtype == np.int32
    assert back.view(np.float32)[0, 0] == _c_mean(floats[:4, :4].ravel())
