"""Module-level API of python-blosc2 (clib.py, packing.py, ndarray/io.py, compress's global
state and filters in api.py, fill values in params.py)."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.chunk.header import ChunkHeader


@pytest.fixture
def restore_globals():
    old_threads = pb.nthreads
    old_codec = pb.get_compressor()
    yield
    pb.set_nthreads(old_threads)
    pb.set_blocksize(0)
    pb.set_compressor(pb.Codec[old_codec.upper()])


def test_set_blocksize_forces_compress_block_size(restore_globals) -> None:
    pb.set_blocksize(2**14)
    assert pb.get_blocksize() == 2**14
    c = pb.compress(b"0123456789" * 10_000, typesize=1)
    assert ChunkHeader.from_bytes(c).blocksize == 2**14
    pb.set_blocksize(0)
    assert (
        ChunkHeader.from_bytes(pb.compress(b"0123456789" * 10_000, typesize=1)).blocksize != 2**14
    )


def test_set_blocksize_refuses_negative() -> None:
    with pytest.raises(pb.ParamError, match="blocksize"):
        pb.set_blocksize(-1)


def test_compressor_global(restore_globals) -> None:
    assert pb.set_compressor(pb.Codec.LZ4) == 1
    assert pb.get_compressor() == "lz4"
    pb.compress(b"abcd" * 100, typesize=4, codec=pb.Codec.ZLIB)
    assert pb.get_compressor() == "zlib"  # compress makes its codec the global one
    with pytest.raises(NotImplementedError, match="ZFP_ACC"):
        pb.set_compressor(pb.Codec.ZFP_ACC)


@pytest.mark.parametrize(
    ("codec", "lib"),
    [
        (pb.Codec.BLOSCLZ, "BloscLZ"),
        (pb.Codec.LZ4, "LZ4"),
        (pb.Codec.LZ4HC, "LZ4"),
        (pb.Codec.ZLIB, "Zlib"),
        (pb.Codec.ZSTD, "Zstd"),
    ],
)
def test_get_clib_and_clib_info(codec, lib: str) -> None:
    c = pb.compress(b"Something to be compressed" * 100, 1, 5, pb.Filter.SHUFFLE, codec)
    assert pb.get_clib(c) == lib
    name, version = pb.clib_info(codec)
    assert name == lib.encode() and isinstance(version, bytes) and version


def test_plugin_codec_members_raise_not_implemented() -> None:
    assert pb.Codec.NDLZ == 32 and pb.Codec.HTJ2K == 40
    with pytest.raises(NotImplementedError, match="NDLZ"):
        pb.compress2(b"x" * 100, codec=pb.Codec.NDLZ)


def test_set_nthreads_changes_the_defaults(restore_globals) -> None:
    pb.set_nthreads(1)
    assert pb.nthreads == 1
    assert pb.CParams().nthreads == 1 and pb.DParams().nthreads == 1
    pb.set_nthreads(3)
    assert pb.CParams().nthreads == 3 and pb.DParams().nthreads == 3


@pytest.mark.parametrize("filt", list(pb.Filter))
@pytest.mark.parametrize("typesize", [1, 4])
def test_compress_applies_only_the_shuffles(filt, typesize: int) -> None:
    """As C's blosc2_compress (build_filters): a filter other than NOFILTER/SHUFFLE/BITSHUFFLE
    leaves the pipeline empty, so every filter id round-trips the data."""
    src = np.arange(1000, dtype=np.int32).tobytes()
    c = pb.compress(src, typesize, 5, filt, pb.Codec.ZSTD)
    assert pb.decompress(c) == src
    last = ChunkHeader.from_bytes(c).filters[5]
    shuffles = {pb.Filter.BITSHUFFLE} | ({pb.Filter.SHUFFLE} if typesize > 1 else set())
    assert last == (filt if filt in shuffles else pb.Filter.NOFILTER)


def test_free_resources_and_print_versions(capsys) -> None:
    assert pb.free_resources() is None
    pb.print_versions()
    out = capsys.readouterr().out
    assert "pyblosc2 version" in out and "Zstd" in out
    assert pb.VERSION_STRING.count(".") == 2


@pytest.mark.parametrize(
    "obj", [np.arange(1000.0), np.array(["å", "ç", "ø"]), np.zeros((3, 4), dtype="i2,f4")]
)
def test_pack_unpack_roundtrip(obj) -> None:
    packed = pb.pack(obj)
    np.testing.assert_array_equal(pb.unpack(packed), obj)
    np.testing.assert_array_equal(pb.unpack_array(pb.pack_array(obj, clevel=3)), obj)


def test_pack_refuses_objects_without_itemsize() -> None:
    with pytest.raises(pb.ParamError, match="itemsize"):
        pb.pack([1, 2, 3])
    with pytest.raises(AttributeError, match="itemsize"):
        pb.pack_array("abc")


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(10_000, dtype=np.float32).reshape(100, 100),
        np.array([(1, 2.5)], dtype="i4,f8"),
        np.zeros(0, np.int8),
    ],
)
def test_pack_tensor_roundtrip(arr, tmp_path) -> None:
    np.testing.assert_array_equal(pb.unpack_tensor(pb.pack_tensor(arr)), arr)
    path = str(tmp_path / "t.bl2")
    size = pb.save_tensor(arr, path, mode="w")
    assert size == (tmp_path / "t.bl2").stat().st_size
    np.testing.assert_array_equal(pb.load_tensor(path), arr)


def test_save_load_and_from_cframe(tmp_path) -> None:
    a = pb.arange(0, 10, 1, dtype="i4", shape=(10,))
    path = tmp_path / "s.b2nd"
    pb.save(a, path)
    pb.save(a, path)  # replaces an existing file
    loaded = pb.load(path)
    assert isinstance(loaded, pb.NDArray) and loaded.schunk.urlpath is None
    np.testing.assert_array_equal(loaded[...], a[...])
    loaded[0] = 99  # the in-memory copy is detached from the file
    assert pb.open(path)[0] == 0
    s = pb.SChunk(
        data=np.arange(20, dtype=np.int32),
        urlpath=tmp_path / "s.b2frame",
        mode="w",
        cparams={"typesize": 4},
    )
    ls = pb.load(tmp_path / "s.b2frame")
    assert isinstance(ls, pb.SChunk) and ls.urlpath is None and ls[:] == s[:]
    assert isinstance(pb.from_cframe(s.to_cframe()), pb.SChunk)
    np.testing.assert_array_equal(pb.from_cframe(a.to_cframe())[...], a[...])


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ((0, 100), list(range(10))),
        ((7, 23), [0, 1, 2]),
        (slice(-15, -5), [8, 9]),
        (95, [9]),
        (-1, [9]),
        ((None, None), list(range(10))),
        ((50, 10), []),
    ],
)
def test_get_slice_nchunks_schunk(key, expected) -> None:
    s = pb.SChunk(chunksize=40, data=np.arange(100, dtype=np.int32), cparams={"typesize": 4})
    got = pb.get_slice_nchunks(s, key)
    assert got.dtype == np.int64 and got.tolist() == expected


def test_get_slice_nchunks_ndarray() -> None:
    a = pb.zeros((6, 6), chunks=(2, 3), blocks=(1, 1))
    assert pb.get_slice_nchunks(a, (slice(1, 4), slice(2, 4))).tolist() == [0, 1, 2, 3]
    assert pb.get_slice_nchunks(a, (slice(4, 6), slice(0, 1))).tolist() == [4]
    assert pb.get_slice_nchunks(a, (slice(4, 4),)).tolist() == []


@pytest.mark.parametrize(
    ("value", "typesize", "dtype"),
    [
        (34, 4, np.int32),
        (3.5, 4, np.float32),
        (True, 4, np.int32),
        (b"0123", 4, "S4"),
        (np.float64(2.5), 8, np.float64),
        (7, 2, np.int16),
    ],
)
def test_fill_special_value_conversion(value, typesize: int, dtype) -> None:
    s = pb.SChunk(chunksize=400, cparams={"typesize": typesize})
    s.fill_special(250, pb.SpecialValue.VALUE, value)
    out = np.empty(250, dtype)
    s.get_slice(out=out)
    np.testing.assert_array_equal(out, np.full(250, value, dtype))


def test_fill_special_refuses_a_value_of_another_size() -> None:
    s = pb.SChunk(chunksize=400, cparams={"typesize": 3})
    with pytest.raises(pb.ParamError, match="value"):
        s.fill_special(10, pb.SpecialValue.VALUE, 1.5)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: pb.compress2(b"12345678" * 10, cparams=pb.CParams(), clevel={}), AttributeError),
        (
            lambda: pb.decompress2(pb.compress2(b"1" * 8), dparams=pb.DParams(), nthreads={}),
            AttributeError,
        ),
        (lambda: pb.SChunk(storage=pb.Storage(), contiguous={}), AttributeError),
        (lambda: pb.empty((3, 3), cparams=pb.CParams(), codec={}), KeyError),
        (lambda: pb.empty((3, 3), storage=pb.Storage(), urlpath={}), AttributeError),
    ],
)
def test_a_group_given_whole_and_field_by_field_is_refused(call, expected) -> None:
    with pytest.raises(expected, match="pass either"):
        call()
    with pytest.raises(pb.errors.ArgumentConflictError):
        call()


def test_schunk_refuses_compression_parameters_one_by_one() -> None:
    with pytest.raises(ValueError, match="codec"):
        pb.SChunk(cparams=pb.CParams(), codec={})


def test_constructors_take_compression_parameters_one_by_one() -> None:
    a = pb.zeros((4, 4), np.int32, clevel=3, codec=pb.Codec.LZ4)
    assert (a.schunk.cparams.clevel, a.schunk.cparams.codec) == (3, pb.Codec.LZ4)


@pytest.mark.parametrize(
    ("forced", "typesize", "expected"), [(5, 8, 8), (30, 8, 24), (33, 4, 32), (40, 8, 40)]
)
def test_forced_blocksize_is_rounded_to_whole_items(
    restore_globals, forced, typesize, expected
) -> None:
    """C-Blosc2 writes a forced block size as given, and cannot decode some of those chunks
    (33 bytes of 8-byte items); pyblosc2 rounds it down to whole items."""
    pb.set_blocksize(forced)
    src = np.arange(1000, dtype=np.int64).tobytes()
    c = pb.compress(src, typesize=typesize)
    assert ChunkHeader.from_bytes(c).blocksize == expected
    assert pb.decompress(c) == src


def test_copy_keeps_vlmeta_and_metalayers() -> None:
    a = pb.arange(0, 10, 1, dtype="i4", shape=(10,), meta={"m": [1, 2]})
    a.vlmeta["name"] = "a"
    c = pb.copy(a, cparams=pb.CParams(clevel=9, codec=pb.Codec.LZ4))
    assert c.vlmeta["name"] == "a" and c.meta["m"] == [1, 2]
    assert (c.schunk.cparams.clevel, c.schunk.cparams.codec) == (9, pb.Codec.LZ4)
    np.testing.assert_array_equal(c[...], a[...])
