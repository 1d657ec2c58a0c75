"""pyblosc2.hdf5's read path over read-only files: stored chunks parsed once per dataset (plans
cached by address, size and filter mask), small selections of large chunks read by byte ranges
of the file, selections against numpy on every path (flat and b2nd chunks, by blocks and
whole, ranged and in memory), and what must not use ranges or the cache: writable files,
Fletcher-32 chunks, chunks stored without compression, a path that no longer names the file."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyblosc2.errors import FormatError

h5py = pytest.importorskip("h5py")
from pyblosc2 import hdf5  # noqa: E402
from pyblosc2.hdf5 import chunkplan, dataset, storedchunk  # noqa: E402
from pyblosc2.hdf5.chunkfile import ChunkFile  # noqa: E402

SHAPE, CHUNKS = (300, 260), (128, 128)
DATA = np.random.default_rng(7).random(SHAPE)  # barely compressible: large stored chunks
#: (dataset name, create_dataset arguments): flat Blosc, b2nd Blosc2 in many blocks and in
#: one block, plain (1-d) Blosc2
KINDS = {
    "blosc": {"compression": "blosc", "codec": "zstd", "clevel": 1},
    "b2nd": {"codec": "zstd", "blocksize": 16384},
    "b2nd1": {"codec": "lz4", "blocksize": 128 * 128 * 8},
}


@pytest.fixture(scope="module")
def h5path(tmp_path_factory):
    path = tmp_path_factory.mktemp("ranged") / "r.h5"
    with h5py.File(path, "w") as f:
        for name, kw in KINDS.items():
            hdf5.create_dataset(f, name, data=DATA, chunks=CHUNKS, **kw)
        hdf5.create_dataset(
            f, "flat", data=DATA.ravel(), chunks=(128 * 128,), codec="zstd", blocksize=16384
        )
    return path


def _stored_size(d, index=(0, 0)) -> int:
    offsets = tuple(i * c for i, c in zip(index, d.chunks, strict=True))
    return int(d.h5.id.get_chunk_info_by_coord(offsets).size)


@pytest.mark.parametrize("name", [*KINDS, "flat"])
def test_small_slice_reads_byte_ranges(h5path, name) -> None:
    want = DATA.ravel() if name == "flat" else DATA
    key = (slice(200, 210),) if name == "flat" else (slice(3, 5), slice(7, 9))
    with hdf5.open(h5path, name) as d:
        size = _stored_size(d, (0,) * d.ndim)
        assert size >= dataset.RANGED_MIN
        np.testing.assert_array_equal(d[key], want[key])
        assert d.chunks_read == 1
        if name == "b2nd1":  # one block: all of it is read (and the frame's header again)
            assert size < d.bytes_read < size + 512
        else:
            assert 0 < d.bytes_read < size  # not the whole stored chunk
        if name == "b2nd":  # one block of 2048 items in a chunk of 16384
            assert d.bytes_read < size // 4


@pytest.mark.parametrize("name", KINDS)
def test_plans_are_parsed_once_per_chunk(h5path, tmp_path, monkeypatch, name) -> None:
    parsed = []
    original = storedchunk.ChunkCodec.plan

    def counting(self, source):
        parsed.append(source.size)
        return original(self, source)

    monkeypatch.setattr(storedchunk.ChunkCodec, "plan", counting)
    with hdf5.open(h5path, name) as d:
        for key in [(slice(3, 5), 7), (slice(0, 128), slice(0, 128)), (4, slice(None))]:
            np.testing.assert_array_equal(d[key], DATA[key])
        assert len(parsed) == 3  # chunks (0, 0), (0, 1) and (0, 2), each parsed once
    parsed.clear()
    copy = tmp_path / "w.h5"
    copy.write_bytes(h5path.read_bytes())
    with hdf5.open(copy, name, mode="r+", rdcc_nbytes=0) as d:  # writable: no plan kept
        d[3, 7], d[3, 7]
        assert len(parsed) == 2 and d._plans is None
    parsed.clear()
    with hdf5.open(copy, name, mode="r+") as d:  # the decoded chunk is kept
        for _ in range(4):
            d[3, 7]
        # a writable file: each chunk fetched is parsed once per read; the kept chunk serves
        # the reads from the second or third on
        assert len(parsed) == d.chunks_read <= 2 and d.cache_info().hits >= 2


def test_plan_cache_drops_least_recently_used() -> None:
    cache = chunkplan.PlanCache(maxsize=2)
    made = []
    for key in ["a", "b", "a", "c", "b"]:
        cache.get(key, lambda key=key: made.append(key) or key)
    assert made == ["a", "b", "c", "b"] and len(cache) == 2


def _keys():
    axis = st.one_of(
        st.integers(-300, 259),
        st.builds(
            slice,
            st.none() | st.integers(-300, 300),
            st.none() | st.integers(-300, 300),
            st.none() | st.sampled_from([1, 2, 3, 50, 129, -1, -7]),
        ),
    )
    return st.tuples(axis, axis)


@settings(max_examples=60, deadline=None)
@given(key=_keys(), name=st.sampled_from(list(KINDS)))
def test_selections_match_numpy_on_every_path(h5path, key, name) -> None:
    with hdf5.open(h5path, name) as d:
        try:
            want = DATA[key]
        except IndexError:
            with pytest.raises(IndexError):
                d[key]
            return
        np.testing.assert_array_equal(d[key], want)


@pytest.mark.parametrize("name", ["blosc", "b2nd"])
def test_array_indices_read_by_ranges(h5path, name) -> None:
    with hdf5.open(h5path, name) as d:
        key = ([5, 3, 3, 120], slice(10, 14))
        np.testing.assert_array_equal(d[key], DATA[key])
        assert d.bytes_read < _stored_size(d)


def test_fletcher32_chunks_are_read_whole(tmp_path) -> None:
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        hdf5.create_dataset(f, "x", data=DATA, chunks=CHUNKS, codec="zstd", fletcher32=True)
    with hdf5.open(path, "x") as d:
        np.testing.assert_array_equal(d[3:5, 7:9], DATA[3:5, 7:9])
        assert d.bytes_read == _stored_size(d)  # the checksum covers the whole chunk


def test_writable_files_read_whole_chunks(tmp_path) -> None:
    path = tmp_path / "w.h5"
    with h5py.File(path, "w") as f:
        d = hdf5.create_dataset(f, "x", data=DATA, chunks=CHUNKS, codec="zstd")
        np.testing.assert_array_equal(d[3:5, 7:9], DATA[3:5, 7:9])
        assert d.bytes_read == _stored_size(d) and d._file is False


def test_a_path_naming_another_file_is_not_read(tmp_path) -> None:
    path, other = tmp_path / "a.h5", tmp_path / "b.h5"
    for p, data in ((path, DATA), (other, DATA[::-1].copy())):
        with h5py.File(p, "w") as f:
            hdf5.create_dataset(f, "x", data=data, chunks=CHUNKS, codec="zstd")
    with h5py.File(path, "r") as f:
        os.replace(other, path)  # h5py keeps reading the file it opened
        d = hdf5.open(f["x"])
        np.testing.assert_array_equal(d[3:5, 7:9], DATA[3:5, 7:9])
        assert d.bytes_read == _stored_size(d) and d._file is False


def test_files_with_a_user_block(tmp_path) -> None:
    path = tmp_path / "u.h5"
    with h5py.File(path, "w", userblock_size=1024) as f:
        hdf5.create_dataset(f, "x", data=DATA, chunks=CHUNKS, codec="zstd", blocksize=16384)
    with hdf5.open(path, "x") as d:
        np.testing.assert_array_equal(d[3:5, 7:9], DATA[3:5, 7:9])  # learns the convention
        assert d.bytes_read == _stored_size(d) and d._file.base in (0, 1024)
        before = d.bytes_read
        np.testing.assert_array_equal(d[130:131, 7:9], DATA[130:131, 7:9])
        assert d.bytes_read - before < _stored_size(d, (1, 0))  # this one by ranges


@pytest.mark.parametrize("base", [0, 512])
def test_address_convention_is_learnt_from_the_bytes(tmp_path, base) -> None:
    path = tmp_path / "u.bin"
    stored = bytes(range(200)) * 3
    path.write_bytes(b"\x00" * (612 + base) + stored)
    from pyblosc2.backends.file import FileStore

    cf = ChunkFile(FileStore(path), userblock=512)
    assert cf.base is None
    assert cf.settle_base(612, stored) and cf.base == base
    assert bytes(cf.window(612, len(stored)).read(0, len(stored))) == stored
    other = ChunkFile(FileStore(path), userblock=512)
    assert not other.settle_base(7, stored) and other.base is None


def test_damaged_frame_read_by_ranges_names_the_chunk(tmp_path) -> None:
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        hdf5.create_dataset(f, "x", data=DATA, chunks=CHUNKS, codec="zstd")
        address = f["x"].id.get_chunk_info_by_coord((0, 0)).byte_offset
    with open(path, "r+b") as f:
        f.seek(address + 3)
        f.write(b"XX")  # inside the frame's magic
    with hdf5.open(path, "x") as d:
        with pytest.raises(FormatError, match=r"HDF5 /x chunk \(0, 0\).*magic"):
            d[3:5, 7:9]
        np.testing.assert_array_equal(d[200:202, 7:9], DATA[200:202, 7:9])


@pytest.mark.parametrize("name", KINDS)
def test_chunks_decoded_on_threads(h5path, name) -> None:
    with hdf5.open(h5path, name, nthreads=4) as d:
        np.testing.assert_array_equal(d[...], DATA)
        np.testing.assert_array_equal(d[1::7, ::-3], DATA[1::7, ::-3])
        np.testing.assert_array_equal(d[[5, 140, 299], 3:250], DATA[[5, 140, 299], 3:250])
        assert len(d._plans) == 9  # every chunk's plan kept once
