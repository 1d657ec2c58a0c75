"""Module-level constructors, packing and save/load against python-blosc2, both ways
(issue 11: eye, fromiter, meshgrid, save/load, pack/pack_array, pack_tensor/save_tensor)."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, **kw: lib.eye(12, 9, 2, dtype=np.float32, chunks=(5, 4), blocks=(2, 2), **kw),
        lambda lib, **kw: lib.fromiter(
            range(60), dtype=np.int16, shape=(3, 4, 5), chunks=(2, 2, 3), blocks=(1, 1, 2), **kw
        ),
        lambda lib, **kw: lib.linspace(0, 1, 40, shape=(5, 8), chunks=(2, 8), blocks=(1, 4), **kw),
        lambda lib, **kw: lib.arange(
            0, 30, 3, dtype=np.int64, shape=(10,), chunks=(4,), blocks=(2,), **kw
        ),
    ],
    ids=["eye", "fromiter", "linspace", "arange"],
)
def test_constructed_files_open_in_both_libraries(make, cblosc2, tmp_path) -> None:
    ours = make(pb, urlpath=str(tmp_path / "ours.b2nd"), mode="w")
    theirs = make(cblosc2, urlpath=str(tmp_path / "theirs.b2nd"), mode="w")
    np.testing.assert_array_equal(ours[...], theirs[:])
    np.testing.assert_array_equal(cblosc2.open(str(tmp_path / "ours.b2nd"))[:], theirs[:])
    np.testing.assert_array_equal(pb.open(tmp_path / "theirs.b2nd")[...], ours[...])


def test_meshgrid_matches_python_blosc2(cblosc2) -> None:
    ours = pb.meshgrid(pb.arange(4), pb.arange(5), indexing="xy")
    theirs = cblosc2.meshgrid(cblosc2.arange(4), cblosc2.arange(5), indexing="xy")
    for g, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(g[...], t[:])


def test_save_and_load_both_ways(cblosc2, tmp_path) -> None:
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    pb.save(pb.asarray(a, chunks=(2, 3), blocks=(1, 3)), str(tmp_path / "ours.b2nd"))
    np.testing.assert_array_equal(cblosc2.load(str(tmp_path / "ours.b2nd"))[:], a)
    cblosc2.save(cblosc2.asarray(a), str(tmp_path / "theirs.b2nd"), mode="w")
    loaded = pb.load(tmp_path / "theirs.b2nd")
    assert loaded.schunk.urlpath is None
    np.testing.assert_array_equal(loaded[...], a)


@pytest.mark.parametrize("arr", [np.arange(1000.0), np.array(["å", "ç"]), np.eye(3, dtype=np.int8)])
def test_pack_array_both_ways(arr, cblosc2) -> None:
    np.testing.assert_array_equal(cblosc2.unpack_array(pb.pack_array(arr)), arr)
    np.testing.assert_array_equal(pb.unpack_array(cblosc2.pack_array(arr)), arr)
    np.testing.assert_array_equal(cblosc2.unpack(pb.pack(arr, clevel=5)), arr)


def test_pack_array_bytes_match_python_blosc2(cblosc2) -> None:
    arr = np.arange(5000, dtype=np.int32)
    assert pb.pack_array(arr, 5, pb.Filter.SHUFFLE, pb.Codec.LZ4) == cblosc2.pack_array(
        arr, 5, cblosc2.Filter.SHUFFLE, cblosc2.Codec.LZ4
    )


@pytest.mark.parametrize("arr", [np.arange(10_000, dtype=np.float32), np.zeros((3, 4), "i2,f8")])
def test_tensor_files_both_ways(arr, cblosc2, tmp_path) -> None:
    pb.save_tensor(arr, str(tmp_path / "ours.bl2"), mode="w")
    np.testing.assert_array_equal(cblosc2.load_tensor(str(tmp_path / "ours.bl2")), arr)
    cblosc2.save_tensor(arr, str(tmp_path / "theirs.bl2"), mode="w")
    np.testing.assert_array_equal(pb.load_tensor(str(tmp_path / "theirs.bl2")), arr)
    np.testing.assert_array_equal(cblosc2.unpack_tensor(pb.pack_tensor(arr)), arr)
    np.testing.assert_array_equal(pb.unpack_tensor(cblosc2.pack_tensor(arr)), arr)


@pytest.mark.parametrize(
    "filt", ["TRUNC_PREC", "NDCELL", "NDMEAN", "BYTEDELTA", "INT_TRUNC", "DELTA"]
)
def test_compress_with_non_shuffle_filters_matches_python_blosc2(filt: str, cblosc2) -> None:
    """C's blosc2_compress applies no filter for these ids; so does ours, byte for byte."""
    src = b"Something to be compressed" * 100
    theirs = cblosc2.compress(src, 1, 5, cblosc2.Filter[filt], cblosc2.Codec.ZSTD)
    assert pb.compress(src, 1, 5, pb.Filter[filt], pb.Codec.ZSTD) == theirs
    assert pb.decompress(theirs) == src


@pytest.mark.parametrize(
    ("value", "dtype"), [(34, np.int32), (np.pi, np.float32), (True, np.int32)]
)
def test_fill_special_values_match_python_blosc2(value, dtype, cblosc2) -> None:
    kw = {"chunksize": 4000, "cparams": {"typesize": 4}}
    ours, theirs = pb.SChunk(**kw), cblosc2.SChunk(**kw)
    ours.fill_special(2500, pb.SpecialValue.VALUE, value)
    theirs.fill_special(2500, cblosc2.SpecialValue.VALUE, value)
    assert ours[:] == theirs[:]
    out = np.empty(2500, dtype)
    cblosc2.schunk_from_cframe(ours.to_cframe()).get_slice(out=out)
    np.testing.assert_allclose(out, np.full(2500, value, dtype))
