"""NDCELL and NDMEAN (spec §9.7) against python-blosc2 (C-Blosc2's plugins), both directions:
arrays written by either library read by the other, and the same chunks byte for byte with
BloscLZ (whose encoder pyblosc2 reproduces exactly), single-threaded on both sides."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb

CASES = {
    "ndcell-2d-i8": ("NDCELL", "<i8", (10, 10), 4, None, None),
    "ndcell-3d-f4": ("NDCELL", "<f4", (37, 21, 5), 3, (20, 21, 5), (10, 7, 5)),
    "ndcell-edge-cells": ("NDCELL", "<u2", (50, 33), 4, (25, 33), (13, 11)),
    "ndmean-2d-f4": ("NDMEAN", "<f4", (13, 13), 4, None, None),
    "ndmean-2d-f8": ("NDMEAN", "<f8", (50, 33), 5, (25, 33), (12, 11)),
    "ndmean-3d-f4": ("NDMEAN", "<f4", (50, 33, 7), 3, (25, 33, 7), (12, 11, 4)),
    "ndmean-clamped": ("NDMEAN", "<f8", (50, 33), 127, (25, 33), (12, 11)),
    "ndmean-int32": ("NDMEAN", "<i4", (13, 13), 4, None, None),
}


def _params(lib, filt: str, meta: int) -> dict:
    return {
        "filters": [lib.Filter[filt], lib.Filter.SHUFFLE],
        "filters_meta": [meta, 0],
        "codec": lib.Codec.BLOSCLZ,
        "nthreads": 1,
    }


def _data(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(int(np.prod(shape))) * 1000).astype(dtype).reshape(shape)


@pytest.fixture
def c_serial(cblosc2):
    old = cblosc2.nthreads
    cblosc2.set_nthreads(1)
    yield cblosc2
    cblosc2.set_nthreads(old)


@pytest.mark.parametrize("case", CASES)
def test_same_chunks_and_values_both_ways(c_serial, case: str) -> None:
    filt, dtype, shape, meta, chunks, blocks = CASES[case]
    a = _data(dtype, shape)
    kw = {} if chunks is None else {"chunks": chunks, "blocks": blocks}
    theirs = c_serial.asarray(a, cparams=_params(c_serial, filt, meta), **kw)
    ours = pb.asarray(a, cparams=_params(pb, filt, meta), **kw)
    assert ours.blocks == theirs.blocks
    for i in range(theirs.schunk.nchunks):
        assert ours.schunk.get_chunk(i) == theirs.schunk.get_chunk(i), f"chunk {i}"
    expected = theirs[...]
    np.testing.assert_array_equal(pb.ndarray_from_cframe(theirs.to_cframe())[...], expected)
    np.testing.assert_array_equal(c_serial.ndarray_from_cframe(ours.to_cframe())[...], expected)


@pytest.mark.parametrize("filt", ["NDCELL", "NDMEAN"])
def test_files_both_ways(c_serial, tmp_path, filt: str) -> None:
    a = _data("<f8", (40, 30, 6), seed=3)
    kw = {"chunks": (20, 30, 6), "blocks": (10, 10, 3), "mode": "w"}
    cp = {"filters": [getattr(pb.Filter, filt)], "filters_meta": [3], "codec": pb.Codec.ZSTD}
    pb.asarray(a, urlpath=str(tmp_path / "ours.b2nd"), cparams=cp, **kw)
    c_serial.asarray(a, urlpath=str(tmp_path / "theirs.b2nd"), cparams=cp, **kw)
    ours_by_c = c_serial.open(str(tmp_path / "ours.b2nd"))[...]
    theirs_by_us = pb.open(str(tmp_path / "theirs.b2nd"))[...]
    np.testing.assert_array_equal(ours_by_c, theirs_by_us)
    if filt == "NDCELL":
        np.testing.assert_array_equal(theirs_by_us, a)
    np.testing.assert_array_equal(
        pb.open(str(tmp_path / "theirs.b2nd"))[3:33, 5:20, 1], ours_by_c[3:33, 5:20, 1]
    )


def test_c_cannot_read_the_ndmean_blocks_pyblosc2_refuses(c_serial) -> None:
    """Spec §9.7 (C's cell origins): python-blosc2 writes these blocks but fails to read them;
    pyblosc2 refuses to write them and names the problem when reading C's."""
    a = np.arange(30 * 33, dtype=np.float64).reshape(30, 33)
    cp = _params(c_serial, "NDMEAN", 5)
    theirs = c_serial.asarray(a, cparams=cp, chunks=(15, 33), blocks=(3, 11))
    with pytest.raises(RuntimeError):
        theirs[...]
    with pytest.raises(pb.FormatError, match="cells C can decode"):
        pb.ndarray_from_cframe(theirs.to_cframe())[...]


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(2, 24), min_size=1, max_size=3).map(tuple),
    side=st.integers(1, 6),
    filt=st.sampled_from(["NDCELL", "NDMEAN"]),
    seed=st.integers(0, 1000),
)
def test_property_same_chunks(cblosc2, shape, side, filt, seed) -> None:
    blocks = tuple(max(1, s // 2) for s in shape)
    if filt == "NDCELL" and side ** len(shape) > int(np.prod(blocks)):
        return  # C refuses blocks smaller than one cell
    if filt == "NDMEAN" and any(b > min(side, b) != min(side, blocks[0]) for b in blocks):
        return  # C cannot decode those (the test above)
    a = _data("<f4", shape, seed)
    old = cblosc2.nthreads
    cblosc2.set_nthreads(1)
    try:
        theirs = cblosc2.asarray(
            a, cparams=_params(cblosc2, filt, side), chunks=shape, blocks=blocks
        )
        chunks = [theirs.schunk.get_chunk(i) for i in range(theirs.schunk.nchunks)]
    finally:
        cblosc2.set_nthreads(old)
    ours = pb.asarray(a, cparams=_params(pb, filt, side), chunks=shape, blocks=blocks)
    assert [ours.schunk.get_chunk(i) for i in range(ours.schunk.nchunks)] == chunks
    np.testing.assert_array_equal(pb.ndarray_from_cframe(theirs.to_cframe())[...], ours[...])
