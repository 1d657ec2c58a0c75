"""pyblosc2.hdf5: cd_values checks, selections against numpy, chunk and block economy (against
b2h5py), writes, fill values, pipelines it refuses, corrupt chunks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyblosc2.errors import FormatError, ParamError
from tests.conftest import _reference

h5py = pytest.importorskip("h5py")
from pyblosc2 import hdf5  # noqa: E402
from pyblosc2.hdf5.blockshape import b2nd_block_shape  # noqa: E402
from pyblosc2.hdf5.cd_values import Blosc2Values, BloscValues  # noqa: E402
from pyblosc2.hdf5.selection import Selection  # noqa: E402


def test_import_pyblosc2_imports_no_h5py_nor_xarray() -> None:
    code = "import sys, pyblosc2; print(sorted({'h5py', 'xarray', 'dask'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- cd_values ---------------------------------------------------------------------------------
BAD_BLOSC = [
    ((2, 2, 8), "length"),
    ((3, 2, 8, 64, 5, 1, 0), "filter revision"),
    ((2, 2, 0, 64, 5, 1, 0), "typesize"),
    ((2, 2, 300, 64, 5, 1, 0), "typesize"),
    ((2, 2, 8, 64, 10, 1, 0), "clevel"),
    ((2, 2, 8, 64, 5, 3, 0), "shuffle"),
    ((2, 2, 8, 64, 5, 1, 6), "compressor"),
]
BAD_BLOSC2 = [
    ((1, 0, 8), "length"),
    ((2, 0, 8, 64, 5, 1, 0), "filter revision"),
    ((1, -1, 8, 64, 5, 1, 0), "blocksize"),
    ((1, 0, 0, 64, 5, 1, 0), "typesize"),
    ((1, 0, 8, 64, 5, 99, 0), "filter"),
    ((1, 0, 8, 64, 5, 1, 0, 9, 1), "chunk rank"),
    ((1, 0, 8, 64, 5, 1, 0, 3, 2, 2), "length"),
]


@pytest.mark.parametrize(("values", "field"), BAD_BLOSC, ids=[f for _, f in BAD_BLOSC])
def test_malformed_blosc_cd_values(values: tuple, field: str) -> None:
    with pytest.raises(FormatError, match=field):
        BloscValues.from_cd_values(values)


@pytest.mark.parametrize(("values", "field"), BAD_BLOSC2, ids=[f for _, f in BAD_BLOSC2])
def test_malformed_blosc2_cd_values(values: tuple, field: str) -> None:
    with pytest.raises(FormatError, match=field):
        Blosc2Values.from_cd_values(values)


def test_cd_values_must_match_the_dataset() -> None:
    v = BloscValues.from_cd_values((2, 2, 4, 64, 5, 1, 0))
    with pytest.raises(FormatError, match="typesize"):
        v.check_dataset(np.dtype("f8"), (8,))
    with pytest.raises(FormatError, match="chunk size"):
        v.check_dataset(np.dtype("f4"), (8,))
    w = Blosc2Values.from_cd_values((1, 0, 4, 64, 5, 1, 0, 2, 4, 4))
    with pytest.raises(FormatError, match="chunk shape"):
        w.check_dataset(np.dtype("f4"), (2, 8))


@pytest.mark.parametrize(
    "kwargs",
    [{"clevel": 12}, {"filter": "delta"}, {"codec": "snappy"}, {"compression": "gzip"}],
)
def test_create_dataset_refuses_bad_arguments(tmp_path, kwargs) -> None:
    with h5py.File(tmp_path / "a.h5", "w") as f, pytest.raises(ParamError):
        hdf5.create_dataset(f, "x", data=np.arange(10), chunks=(4,), **kwargs)
        assert "x" not in f


# -- selections ----------------------------------------------------------------------------------
def _keys(ndim: int):
    idx = st.one_of(
        st.integers(-5, 4),
        st.builds(
            slice,
            st.none() | st.integers(-12, 12),
            st.none() | st.integers(-12, 12),
            st.none() | st.sampled_from([1, 2, 3, 7, -1, -2, -5]),
        ),
    )
    return st.tuples(*[idx] * ndim)


@settings(max_examples=150, deadline=None)
@given(key=_keys(3), chunks=st.tuples(*[st.integers(1, 6)] * 3))
def test_selection_parts_cover_numpy_result(key, chunks) -> None:
    a = np.arange(5 * 9 * 11).reshape(5, 9, 11)
    sel = Selection.from_key(a.shape, key)
    out = np.full(sel.read_shape, -1)
    for p in sel.parts(chunks):
        lo = [i * c for i, c in zip(p.index, chunks, strict=True)]
        block = a[tuple(slice(x, x + c) for x, c in zip(lo, chunks, strict=True))]
        out[p.out] = block[p.local]
    np.testing.assert_array_equal(sel.finish(out), a[key])


def test_array_indices_and_masks() -> None:
    a = np.arange(40).reshape(8, 5)
    for key in [([5, 1, 1, 7], slice(None)), (slice(1, 3), [4, 0]), (a[:, 0] % 16 == 0, 2)]:
        sel = Selection.from_key(a.shape, key)
        out = np.empty(sel.read_shape, a.dtype)
        for p in sel.parts((3, 2)):
            lo = [i * c for i, c in zip(p.index, (3, 2), strict=True)]
            out[p.out] = a[lo[0] : lo[0] + 3, lo[1] : lo[1] + 2][p.local]
        np.testing.assert_array_equal(sel.finish(out), a[key])


@pytest.mark.parametrize(
    ("key", "error"),
    [
        ((0, 0, 0), IndexError),
        ((9,), IndexError),
        ((None,), NotImplementedError),
        (([0], [1]), NotImplementedError),
        ((1.5,), TypeError),
        ((..., ...), ValueError),
    ],
)
def test_bad_keys(key, error) -> None:
    with pytest.raises(error):
        Selection.from_key((8, 5), key)


# -- reading and writing through h5py ------------------------------------------------------------
@pytest.fixture
def h5file(tmp_path):
    with h5py.File(tmp_path / "t.h5", "w") as f:
        yield f


@pytest.mark.parametrize("compression", ["blosc", "blosc2"])
def test_writes_match_numpy(h5file, compression) -> None:
    rng = np.random.default_rng(3)
    want = np.zeros((13, 10), np.int32)
    d = hdf5.create_dataset(
        h5file,
        "x",
        shape=want.shape,
        dtype="i4",
        chunks=(4, 3),
        compression=compression,
        codec="zstd",
        fillvalue=0,
    )
    for key in [
        (slice(2, 9), slice(None)),
        (5, slice(None, None, -2)),
        ([7, 1, 7], 3),
        (slice(None), -1),
        (Ellipsis,),
    ]:
        value = rng.integers(0, 1000, np.shape(want[key]), dtype=np.int32)
        want[key] = value
        d[key] = value
        np.testing.assert_array_equal(d[...], want)
    assert h5file["x"].id.get_num_chunks() == 16


def test_unwritten_chunks_read_as_fill_value(h5file) -> None:
    d = hdf5.create_dataset(h5file, "x", shape=(10, 10), dtype="f4", chunks=(5, 5), fillvalue=7.5)
    d[0:5, 0:5] = 1.0
    got = d[...]
    assert (got[:5, :5] == 1).all() and (got[5:] == 7.5).all() and (got[:5, 5:] == 7.5).all()
    assert d.chunks_read == 1  # the only chunk written
    d[3, 3], d[7, 7]
    assert d.chunks_read == 2


def test_small_reads_touch_no_more_chunks_than_b2h5py(tmp_path) -> None:
    """The b2h5py bar: for slices b2h5py optimises (steps of 1), pyblosc2 fetches at most the
    chunks b2h5py opens; for strided ones, only the chunks holding selected items."""
    hdf5plugin = _reference("hdf5plugin")
    b2h5py = _reference("b2h5py")
    from b2h5py import blosc2 as b2blosc2

    a = np.arange(60 * 50 * 40, dtype="f4").reshape(60, 50, 40)
    path = tmp_path / "b.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(16, 16, 16), **hdf5plugin.Blosc2(cname="lz4"))
    keys = [
        (5, 7, 9),
        (slice(10, 20), 3, slice(None)),
        (slice(0, 60), slice(15, 17), 0),
        (slice(30, 31), slice(0, 50), slice(20, 40)),
        (slice(59, 60),),
    ]
    with h5py.File(path, "r") as f:
        theirs = b2h5py.B2Dataset(f["x"])
        ours = hdf5.open(f["x"], rdcc_nbytes=0)  # every read fetches its chunks
        original = b2blosc2._read_chunk_slice
        for key in keys:
            calls = []

            def counting(*args, _calls=calls, **kw):
                _calls.append(args)
                return original(*args, **kw)

            b2blosc2._read_chunk_slice = counting
            try:
                want = theirs[key]
            finally:
                b2blosc2._read_chunk_slice = original
            before = ours.chunks_read
            np.testing.assert_array_equal(ours[key], want)
            assert ours.chunks_read - before <= len(calls), key
        before = ours.chunks_read
        np.testing.assert_array_equal(ours[::20, 0, ::17], a[::20, 0, ::17])
        assert ours.chunks_read - before == 3 * 1 * 3  # every other chunk skipped


def test_small_slice_decodes_only_its_blocks(tmp_path, decoded_blocks) -> None:
    a = np.arange(256 * 256, dtype="f8").reshape(256, 256)
    with h5py.File(tmp_path / "b.h5", "w") as f:
        d1 = hdf5.create_dataset(
            f, "b1", data=a, chunks=(256, 256), compression="blosc", codec="lz4", clevel=1
        )
        d2 = hdf5.create_dataset(f, "b2", data=a, chunks=(256, 256), codec="lz4", blocksize=8192)
        for d in (d1, d2):
            decoded_blocks.clear()
            np.testing.assert_array_equal(d[100, 10:12], a[100, 10:12])
            assert 1 <= len(decoded_blocks) <= 2
            decoded_blocks.clear()
            d[...]
            assert len(decoded_blocks) >= 4


def test_b2nd_block_shape_is_the_plugins(tmp_path) -> None:
    hdf5plugin = _reference("hdf5plugin")
    blosc2 = _reference("blosc2")
    geometries = [
        ((100, 300), (50, 300), "f8", "zstd"),
        ((64, 64, 64), (32, 32, 32), "i2", "lz4"),
        ((7, 1000), (3, 999), "u1", "blosclz"),
        ((2, 3, 4, 5), (1, 3, 4, 5), "f4", "zlib"),
    ]
    with h5py.File(tmp_path / "p.h5", "w") as f:
        for i, (shape, chunks, dt, cname) in enumerate(geometries):
            data = np.zeros(shape, dt)
            theirs = f.create_dataset(
                f"p{i}", data=data, chunks=chunks, **hdf5plugin.Blosc2(cname=cname)
            )
            ours = hdf5.create_dataset(
                f, f"o{i}", data=data, chunks=chunks, codec=cname, filter="shuffle"
            )
            want = blosc2.ndarray_from_cframe(theirs.id.read_direct_chunk((0,) * len(shape))[1])
            assert ours.codec.blockshape == want.blocks, (shape, chunks)
            assert b2nd_block_shape(want.schunk.blocksize, data.itemsize, chunks) == want.blocks


def test_plugin_cannot_read_its_own_wide_b2nd_items_but_pyblosc2_can(tmp_path) -> None:
    """hdf5plugin 7.1 writes b2nd chunks of 300-byte items that it (and python-blosc2) then
    fails to decode; the data is intact and pyblosc2 returns it (the original data wins)."""
    hdf5plugin = _reference("hdf5plugin")
    dt = np.dtype([("x", "<f8", (37,)), ("y", "<i4")])
    a = np.zeros((5, 10), dt)
    a["y"] = np.arange(50).reshape(5, 10)
    with h5py.File(tmp_path / "w.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(2, 10), **hdf5plugin.Blosc2(cname="lz4"))
        with pytest.raises(OSError, match="filter returned failure"):
            f["x"][...]
        assert hdf5.open(f["x"])[...].tobytes() == a.tobytes()


# -- pipelines refused and corrupt chunks --------------------------------------------------------
def test_unsupported_pipelines(h5file) -> None:
    _reference("hdf5plugin")
    h5file.create_dataset("g", data=np.arange(100), chunks=(10,), compression="gzip")
    assert hdf5.open(h5file["g"]).codec is None  # HDF5 decodes it: left to h5py
    np.testing.assert_array_equal(hdf5.open(h5file["g"])[3:5], [3, 4])
    h5file.create_dataset(
        "s",
        data=np.arange(100),
        chunks=(10,),
        shuffle=True,
        compression=32001,
        compression_opts=(2, 2, 8, 80, 5, 0, 1),
    )
    with pytest.raises(hdf5.UnsupportedPipelineError, match=r"\[shuffle\(2\), blosc\(32001\)\]"):
        hdf5.open(h5file["s"])


def test_plugin_filters_without_blosc_are_refused(h5file) -> None:
    h5file.create_dataset(
        "z", shape=(10,), dtype="i4", chunks=(5,), compression=32999, allow_unknown_filter=True
    )
    assert not h5py.h5z.filter_avail(32999)
    with pytest.raises(hdf5.UnsupportedPipelineError, match=r"filter\(32999\)"):
        hdf5.open(h5file["z"])


@pytest.mark.parametrize("compression", ["blosc", "blosc2"])
def test_corrupt_chunks_raise_format_errors(h5file, compression) -> None:
    d = hdf5.create_dataset(
        h5file, "x", data=np.arange(1000.0), chunks=(500,), compression=compression, fletcher32=True
    )
    mask, stored = h5file["x"].id.read_direct_chunk((0,))
    flipped = bytearray(stored)
    flipped[40] ^= 0xFF
    h5file["x"].id.write_direct_chunk((0,), bytes(flipped), filter_mask=mask)
    with pytest.raises(FormatError, match=r"chunk \(0,\).*fletcher32"):
        d[0:10]
    np.testing.assert_array_equal(d[500:510], np.arange(500.0, 510.0))
    for bad in (stored[:20], stored[:-4][:-10] + stored[-4:], b"\x00" * len(stored)):
        h5file["x"].id.write_direct_chunk((0,), bytes(bad)[:-4] + _checksum(bytes(bad)[:-4]))
        with pytest.raises(FormatError, match=r"HDF5 /x chunk \(0,\)"):
            d[0:10]


def _checksum(body: bytes) -> bytes:
    from pyblosc2.hdf5.fletcher32 import fletcher32

    return fletcher32(body).to_bytes(4, "little")


def test_open_by_path_and_errors(tmp_path) -> None:
    path = tmp_path / "o.h5"
    with h5py.File(path, "w") as f:
        hdf5.create_dataset(f, "a/b", data=np.arange(6).reshape(2, 3), chunks=(1, 3))
    with hdf5.open(path, "a/b") as d:
        assert d.shape == (2, 3) and d.ndim == 2 and len(d) == 2 and "Blosc2Values" in repr(d)
        np.testing.assert_array_equal(np.asarray(d), np.arange(6).reshape(2, 3))
        assert [r for r, _ in d.iter_chunks()] == [
            (slice(0, 1), slice(0, 3)),
            (slice(1, 2), slice(0, 3)),
        ]
    assert not d.h5.id.valid  # the file was closed
    with pytest.raises(TypeError):
        hdf5.open(path, "a")
    with pytest.raises(ParamError):
        hdf5.open(path)
    with pytest.raises(ParamError):
        hdf5.open(path, "a/b", mode="w")
