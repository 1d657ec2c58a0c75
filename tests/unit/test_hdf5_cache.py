"""pyblosc2.hdf5's cache of decoded chunks (hdf5/chunkcache.py): reads served from kept chunks
equal reads that keep nothing, on every kind of stored chunk (hypothesis over selections);
the bound holds (bytes, slots, chunks larger than the cache, HDF5's w0 eviction order), by the
cache's own accounting; writes through ``r+`` and rewrites through other handles are seen by
the next read; a chunk that fails to decode is not kept; the knobs default to h5py's."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyblosc2.errors import FormatError, ParamError
from pyblosc2.kernels.select import wait_for_kernels

h5py = pytest.importorskip("h5py")
from pyblosc2 import hdf5  # noqa: E402
from pyblosc2.hdf5.chunkcache import CacheParams, ChunkCache  # noqa: E402
from pyblosc2.hdf5.selection import one_chunk_key  # noqa: E402

SHAPE, CHUNKS = (50, 37), (16, 12)  # edge chunks on both axes
CHUNK_NBYTES = math.prod(CHUNKS) * 8
DATA = np.random.default_rng(5).normal(size=SHAPE).cumsum().reshape(SHAPE).round(2)
#: dataset name -> create_dataset arguments: flat Blosc chunks in several blocks, b2nd chunks
#: in blocks that divide them and that do not (padded), one-block b2nd, Fletcher-32 (decoded
#: whole), bitshuffle, a subarray dtype (flat Blosc2 frames)
KINDS = {
    "blosc": {"compression": "blosc", "codec": "lz4", "clevel": 5},
    "b2nd": {"codec": "zstd", "blocksize": 4 * 12 * 8},
    "b2nd_padded": {"codec": "lz4", "blocksize": 5 * 12 * 8},
    "b2nd_one": {"codec": "blosclz"},
    "fletcher": {"codec": "zstd", "fletcher32": True, "blocksize": 4 * 12 * 8},
    "bits": {"compression": "blosc", "codec": "zstd", "filter": "bitshuffle"},
}


#: Blosc chunks of 8 blocks (zstd, clevel 1: 32 KiB blocks) for reads filling blocks one by one
BIG, BIG_CHUNKS = np.random.default_rng(6).normal(size=(230, 300)).round(2), (100, 300)
SUB = DATA[:, :36].reshape(50, 12, 3)


def _arrays(name: str) -> tuple[np.ndarray, tuple[int, ...]]:
    """The values of dataset ``name`` and its chunks."""
    return {"sub": (SUB, (16, 4)), "blosc_blocks": (BIG, BIG_CHUNKS)}.get(name, (DATA, CHUNKS))


ALL = [*KINDS, "sub", "blosc_blocks"]


@pytest.fixture(scope="module")
def h5path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cache") / "c.h5"
    with h5py.File(path, "w") as f:
        for name, kw in KINDS.items():
            hdf5.create_dataset(f, name, data=DATA, chunks=CHUNKS, **kw)
        hdf5.create_dataset(f, "sub", data=SUB, chunks=(16, 4), dtype=("<f8", (3,)))
        hdf5.create_dataset(
            f, "blosc_blocks", data=BIG, chunks=BIG_CHUNKS, compression="blosc", clevel=1
        )
    return path


def test_the_flat_chunks_are_in_blocks(h5path) -> None:
    with hdf5.open(h5path, "blosc_blocks") as d:
        d[5, :10]
        plan = next(iter(d._plans._plans.values()))
        assert plan.reader.header.nblocks == 8


def _axis(n: int, c: int):
    """Keys of one axis: ints, slices inside one chunk (the kept chunk's own path), any
    slices, sorted and unsorted index arrays."""
    inside = st.integers(0, n - 1).flatmap(
        lambda a: st.integers(a + 1, min(n, (a // c + 1) * c)).map(lambda b: slice(a, b))
    )
    # slices starting or ending at a chunk boundary, or one item past it
    edge = st.integers(0, n // c).flatmap(
        lambda q: st.tuples(
            st.integers(max(0, q * c - 2), q * c + 1), st.integers(q * c, q * c + 2)
        ).map(lambda t: slice(*t))
    )
    return st.one_of(
        st.integers(-n, n - 1),
        inside,
        edge,
        st.builds(
            slice,
            st.none() | st.integers(-n - 3, n + 3),
            st.none() | st.integers(-n - 3, n + 3),
            st.none() | st.sampled_from([1, 2, 5, 17, -1, -3]),
        ),
        st.lists(st.integers(0, n - 1), min_size=1, max_size=6),
    )


def _key(name: str):
    want, chunks = _arrays(name)
    one = st.tuples(*[_axis(n, c) for n, c in zip(want.shape, chunks, strict=False)])
    # at most one array index (numpy's orthogonal case)
    return one.filter(lambda k: sum(isinstance(x, list) for x in k) <= 1)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(ALL), nchunks=st.sampled_from([1, 2, 9]))
def test_cached_reads_equal_uncached_ones(h5path, data, name, nchunks) -> None:
    """A run of reads through a small cache (1, 2 or 9 chunks, 3 slots: evictions, slot
    collisions, chunks filled block by block) against a handle that keeps nothing and numpy."""
    keys = data.draw(st.lists(_key(name), min_size=1, max_size=12))
    want, chunks = _arrays(name)
    bound = nchunks * math.prod(chunks) * want.itemsize * math.prod(want.shape[len(chunks) :])
    with (
        hdf5.open(h5path, name, rdcc_nbytes=bound, rdcc_nslots=3) as d,
        hdf5.open(h5path, name, rdcc_nbytes=0) as plain,
    ):
        for key in keys:
            got = d[key]
            np.testing.assert_array_equal(got, plain[key])
            np.testing.assert_array_equal(got, want[key])
        info = d.cache_info()
        assert info.peak_nbytes <= bound
        assert info.held <= min(nchunks, 3)
        assert plain.cache_info().added == 0


@settings(max_examples=300, deadline=None)
@given(
    key=st.one_of(
        st.integers(-60, 60),
        st.tuples(*[_axis(50, 16), _axis(37, 12)]),
        st.tuples(_axis(50, 16)),
        st.just(()),
        st.just(Ellipsis),
        st.tuples(st.integers(0, 3), st.just(Ellipsis)),
    )
)
def test_one_chunk_keys_index_their_chunk_as_numpy_indexes_the_array(key) -> None:
    found = one_chunk_key(key, SHAPE, CHUNKS)
    if found is None:
        return
    index, local = found
    region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, CHUNKS, strict=True))
    got = DATA[region][local]
    assert np.shape(got) == np.shape(DATA[key]) and np.array_equal(got, DATA[key])
    assert not isinstance(key, list) and key is not Ellipsis


@pytest.mark.parametrize("name", ALL)
def test_rows_one_by_one_are_served_from_kept_chunks(h5path, name) -> None:
    want, chunks = _arrays(name)
    with hdf5.open(h5path, name) as d:
        for i in range(want.shape[0]):
            np.testing.assert_array_equal(d[i, :], want[i, :])
            np.testing.assert_array_equal(d[i, 2:4], want[i, 2:4])
            assert d[i, 1, ...].tolist() == want[i, 1, ...].tolist()
        info = d.cache_info()
        nchunks = math.prod(-(-n // c) for n, c in zip(want.shape, chunks, strict=False))
        assert info.added == nchunks and info.evicted == 0
        assert info.hits >= 3 * want.shape[0] - 20 * nchunks  # some reads fill blocks
        before = d.chunks_read
        d[7, 1], d[49, :3]
        assert d.chunks_read == before  # nothing fetched again


def test_a_kept_row_is_a_copy(h5path) -> None:
    with hdf5.open(h5path, "blosc") as d:
        d[3, :]
        row = d[3, :]
        row[:] = -1
        np.testing.assert_array_equal(d[3, :], DATA[3, :])


def test_a_kept_structured_item_is_a_copy(tmp_path) -> None:
    """numpy's scalar of a structured item is a view of its array: the kept chunk's must not
    leak out (``np.array`` of it would still share the memory)."""
    dt = np.dtype([("a", "<i4"), ("b", "<f8")])
    a = np.zeros((40, 10), dt)
    a["a"] = np.arange(400).reshape(40, 10)
    with h5py.File(tmp_path / "s.h5", "w") as f:
        hdf5.create_dataset(f, "x", data=a, chunks=(8, 10), compression="blosc")
    with hdf5.open(tmp_path / "s.h5", "x") as d:
        d[3, 4], d[3, 4]  # kept from its second read
        item = d[3, 4]
        assert d.cache_info().hits == 1
        item["a"] = -1
        row = d[3, :]
        row["a"] = -1
        assert d[3, 4]["a"] == 34 and d[3, :]["a"].tolist() == a[3]["a"].tolist()


@pytest.mark.parametrize("name", ["blosc_blocks", "b2nd_padded"])
def test_kept_chunks_on_threads(h5path, name) -> None:
    """Chunks filled on the pool (two at a time): the same values, the bound kept."""
    want, chunks = _arrays(name)
    bound = 2 * math.prod(chunks) * want.itemsize
    with hdf5.open(h5path, name, nthreads=2, rdcc_nbytes=bound) as d:
        for key in [np.s_[3:40, 5:9], np.s_[::3, -5:], np.s_[7, :], np.s_[::-2, 3], np.s_[...]]:
            np.testing.assert_array_equal(d[key], want[key])
        assert d.cache_info().peak_nbytes <= bound


def test_a_dataset_bigger_than_the_cache_streams(h5path) -> None:
    """Every row of 12 chunks through a cache of 2: never more than 2 chunks' bytes held."""
    with hdf5.open(h5path, "b2nd", rdcc_nbytes=2 * CHUNK_NBYTES) as d:
        for j in range(0, SHAPE[1], 6):
            for i in range(SHAPE[0]):
                np.testing.assert_array_equal(d[i, j : j + 6], DATA[i, j : j + 6])
        info = d.cache_info()
        # 7 passes down the rows, each through 4 chunks, each chunk taken again
        assert (info.added, info.evicted, info.held) == (28, 26, 2)
        assert info.peak_nbytes == 2 * CHUNK_NBYTES


def test_chunks_larger_than_the_cache_are_not_kept(h5path) -> None:
    with hdf5.open(h5path, "blosc", rdcc_nbytes=CHUNK_NBYTES - 1) as d:
        for i in range(20):
            np.testing.assert_array_equal(d[i, :5], DATA[i, :5])
        assert d.cache_info().added == 0 and d.chunks_read == 20


def test_whole_chunk_reads_are_not_kept(h5path) -> None:
    with hdf5.open(h5path, "b2nd") as d:
        np.testing.assert_array_equal(d[...], DATA)
        assert d.cache_info().added == 0
        for region, values in d.iter_chunks():
            np.testing.assert_array_equal(values, DATA[region])
        assert d.cache_info().added == 0


def test_one_slot_holds_one_chunk(h5path) -> None:
    # chunks of 8 blocks, 3 items read: a chunk kept from its second read, if no other
    # chunk was read in between (one slot: it would not have been held by then)
    with hdf5.open(h5path, "blosc_blocks", rdcc_nslots=1) as d:
        for i in (0, 100, 0, 100):
            np.testing.assert_array_equal(d[i, :3], BIG[i, :3])
        assert d.cache_info().added == 0
        for i in (0, 0, 100, 100, 0, 0):
            np.testing.assert_array_equal(d[i, :3], BIG[i, :3])
        info = d.cache_info()
        assert (info.held, info.added, info.evicted, info.hits) == (1, 3, 2, 0)
    # 70 rows of chunks of 8 blocks (6 of them): each kept from its first read
    with hdf5.open(h5path, "blosc_blocks", rdcc_nslots=1) as d:
        for i in (0, 100, 0, 100, 0, 100):
            np.testing.assert_array_equal(d[i : i + 70, 100], BIG[i : i + 70, 100])
        info = d.cache_info()
        assert (info.held, info.added, info.evicted, info.hits) == (1, 6, 5, 0)


def test_a_first_read_keeps_a_chunk_only_if_it_decodes_most_of_it(h5path) -> None:
    """Chunks of 100 rows in 8 blocks of ~13.6 rows (and an edge chunk of 30 rows)."""
    with hdf5.open(h5path, "blosc_blocks") as d:
        d[5, :3]  # one block of 8: noted, not kept
        d[150, :]  # a row: one block of chunk 1
        assert d.cache_info().added == 0
        d[5, 10:20], d[150, :]  # read again: kept
        assert d.cache_info().added == 2
    with hdf5.open(h5path, "blosc_blocks") as d:
        np.testing.assert_array_equal(d[:, 7], BIG[:, 7])  # all blocks of chunks 0 and 1,
        assert d.cache_info().added == 2  # 3 of 8 of the edge chunk: not kept
        d[5, :3], d[205, :3]
        assert d.cache_info().hits == 1


@pytest.mark.parametrize(("fits", "added", "hits"), [(1, 0, 0), (2, 0, 0), (3, 3, 3)])
def test_reads_cycling_over_more_chunks_than_fit_keep_nothing(h5path, fits, added, hits) -> None:
    """Three chunks read in turn, three times: kept on their second read only if the cache
    holds all three (else each would be evicted before it is read again)."""
    nbytes = fits * math.prod(BIG_CHUNKS) * 8
    with hdf5.open(h5path, "blosc_blocks", rdcc_nbytes=nbytes) as d:
        for _ in range(3):
            for i in (5, 105, 205):
                np.testing.assert_array_equal(d[i, :3], BIG[i, :3])
        info = d.cache_info()
        assert (info.added, info.hits) == (added, hits)


def test_a_row_across_two_of_three_blocks_is_kept_at_once(tmp_path) -> None:
    a = BIG[:40]
    with h5py.File(tmp_path / "t.h5", "w") as f:  # 96,000-byte chunks: 32 KiB blocks, 3
        hdf5.create_dataset(f, "x", data=a, chunks=(40, 300), compression="blosc", clevel=1)
    with hdf5.open(tmp_path / "t.h5", "x") as d:
        np.testing.assert_array_equal(d[12, :], a[12])  # bytes 28,800-31,200: one block
        assert d.cache_info().added == 0
    with hdf5.open(tmp_path / "t.h5", "x") as d:
        np.testing.assert_array_equal(d[13, :], a[13])  # bytes 31,200-33,600: blocks 0, 1
        assert d.cache_info().added == 1


def test_the_read_loop_allocates_within_the_bound(tmp_path) -> None:
    """tracemalloc sees numpy's allocations: reading every row of 16 chunks of 256 KiB through
    a cache of 3 allocates at most the cache's bound plus one chunk (the stored bytes of the
    chunk being decoded) and small objects, once the decoder's per-thread work buffers exist
    (each at most a chunk, allocated once per thread): under 128 KiB more."""
    chunk = (64, 512)
    nbytes = math.prod(chunk) * 8
    a = np.random.default_rng(1).normal(size=(512, 1024))
    path = tmp_path / "big.h5"
    with h5py.File(path, "w") as f:
        hdf5.create_dataset(f, "x", data=a, chunks=chunk, compression="blosc", codec="lz4")
    bound = 3 * nbytes
    with hdf5.open(path, "x", rdcc_nbytes=bound) as d:
        for i in range(0, 512, 64):  # work buffers made: every chunk read once, then twice
            for j in (0, 512):
                d[i, j : j + 300], d[i + 1, j : j + 300]
        wait_for_kernels()  # numba's import in the background is traced too
        d.refresh()
        added = d.cache_info().added
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            for j in (0, 512):
                for i in range(512):
                    d[i, j : j + 300]
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        info = d.cache_info()
        assert info.peak_nbytes == bound and info.added - added == 16
        assert bound < peak <= bound + nbytes + 128 * 1024, peak


# -- writes and other handles -------------------------------------------------------------------
@pytest.fixture
def writable(tmp_path):
    path = tmp_path / "w.h5"
    with h5py.File(path, "w") as f:
        for name in ("blosc", "b2nd"):
            hdf5.create_dataset(
                f, name, data=DATA, chunks=CHUNKS, maxshape=(None, None), **KINDS[name]
            )
    return path


@pytest.mark.parametrize("name", ["blosc", "b2nd"])
def test_writes_through_r_plus_are_seen_by_the_next_read(writable, name) -> None:
    want = DATA.copy()
    with hdf5.open(writable, name, mode="r+") as d:
        for i in range(SHAPE[0]):
            d[i, :]
        assert d.cache_info().held == 16
        for key, value, chunks in [
            ((3, slice(None)), -1.0, 4),
            ((slice(10, 20), 5), np.arange(10.0), 2),
            ((slice(None, None, 7), slice(30, None)), 8.5, 8),
        ]:
            want[key] = value
            d[key] = value
            assert d.cache_info().held == 16 - chunks  # the chunks written were dropped
            for i in range(SHAPE[0]):
                np.testing.assert_array_equal(d[i, :], want[i, :])
                np.testing.assert_array_equal(d[i, 30:33], want[i, 30:33])
        d.resize((60, 37))
        assert d.cache_info().held == 0
        np.testing.assert_array_equal(d[:50], want)
    with h5py.File(writable, "r") as f:  # and they were stored
        np.testing.assert_array_equal(hdf5.open(f[name])[:50], want)


def test_a_chunk_rewritten_by_another_handle_is_read_again(writable) -> None:
    """In a writable file a kept chunk is checked against HDF5's chunk index: a rewrite
    through h5py (new size, new address) is seen; refresh() drops every kept chunk."""
    with hdf5.open(writable, "blosc", mode="r+") as d:
        d[0, :], d[1, :]
        assert d.cache_info().held == 4
        other = d.h5.file["blosc"]  # another h5py handle of the dataset
        new = np.full(CHUNKS, 4.25)
        mask, data = d.codec.encode(new)
        other.id.write_direct_chunk((0, 0), data, filter_mask=mask)
        np.testing.assert_array_equal(d[1, :12], new[1])
        np.testing.assert_array_equal(d[1, 12:], DATA[1, 12:])
        d.refresh()
        assert d.cache_info().held == 0
        np.testing.assert_array_equal(d[0, :12], new[0])


def test_a_chunk_that_fails_to_decode_is_not_kept(tmp_path) -> None:
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as f:
        d = hdf5.create_dataset(f, "x", data=DATA, chunks=CHUNKS, codec="zstd", blocksize=768)
        mask, data = d.codec.encode(DATA[:16, :12].copy())
        bad = bytearray(data)
        bad[-40:] = bytes(40)  # the last blocks' streams
        f["x"].id.write_direct_chunk((0, 0), bytes(bad), filter_mask=mask)
    with hdf5.open(path, "x") as d:
        for _ in range(2):
            with pytest.raises(FormatError):
                d[15, :12]
            assert d.cache_info().held == 0
        np.testing.assert_array_equal(d[20, :], DATA[20, :])


# -- the knobs ----------------------------------------------------------------------------------
def test_defaults_are_the_datasets_own_h5py_settings(h5path) -> None:
    default = h5py.h5p.create(h5py.h5p.FILE_ACCESS).get_cache()[1:]  # HDF5's (nslots, nbytes, w0)
    with hdf5.open(h5path, "blosc") as d:
        p = d.cache.params
        assert (p.nslots, p.nbytes, p.w0) == default
    with h5py.File(h5path, "r", rdcc_nbytes=3 << 20, rdcc_nslots=101, rdcc_w0=0.5) as f:
        p = hdf5.open(f["blosc"]).cache.params
        assert (p.nbytes, p.nslots, p.w0) == (3 << 20, 101, 0.5)
        p = hdf5.open(f["blosc"], rdcc_w0=1).cache.params
        assert (p.nbytes, p.nslots, p.w0) == (3 << 20, 101, 1.0)
    with hdf5.open(h5path, "blosc", rdcc_nbytes=12345, rdcc_nslots=7) as d:
        # a path is opened with them: HDF5's own cache (datasets it decodes) uses them too
        assert d.h5.id.get_access_plist().get_chunk_cache()[:2] == (7, 12345)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"rdcc_nbytes": -1},
        {"rdcc_nbytes": 1.5},
        {"rdcc_nbytes": True},
        {"rdcc_nslots": -2},
        {"rdcc_w0": 1.5},
        {"rdcc_w0": -0.1},
        {"rdcc_w0": "0.5"},
    ],
)
def test_bad_knobs_are_refused(h5path, kwargs) -> None:
    with pytest.raises(ParamError):
        hdf5.open(h5path, "blosc", **kwargs)


# -- the eviction order (HDF5's two pointers) ---------------------------------------------------
def _filled(w0: float, read_in_full: set[int], n: int = 4) -> ChunkCache:
    cache = ChunkCache(CacheParams(nbytes=n * 80, nslots=101, w0=w0), grid=(100,))
    for i in range(n):
        held = cache.add((i,), (10,), np.dtype("f8"), (i, 80, 0))
        cache.read(held, 80 if i in read_in_full else 8, hit=False)
    return cache


def _held(cache: ChunkCache) -> list[int]:
    return sorted(i for i in range(100) if cache.get((i,)) is not None)


def test_w0_0_evicts_least_recently_used_first() -> None:
    cache = _filled(0.0, read_in_full={2})
    cache.get((0,))  # now the most recently used
    cache.add((9,), (10,), np.dtype("f8"), (9, 80, 0))
    assert _held(cache) == [0, 2, 3, 9]


def test_w0_1_evicts_chunks_read_in_full_first() -> None:
    cache = _filled(1.0, read_in_full={2})
    cache.add((9,), (10,), np.dtype("f8"), (9, 80, 0))
    assert _held(cache) == [0, 1, 3, 9]
    # none read in full: the walk ends without room; the least recently used goes
    cache.add((8,), (10,), np.dtype("f8"), (8, 80, 0))
    assert _held(cache) == [1, 3, 8, 9]


def test_w0_between_starts_the_second_pointer_after_w0_of_the_chunks() -> None:
    # w0 0.5 of 4 chunks: the first pointer alone over chunks 0 and 1, then both: chunk 3
    # (read in full, met by the first pointer at its fourth step) would go only after chunk 0
    cache = _filled(0.5, read_in_full={3})
    cache.add((9,), (10,), np.dtype("f8"), (9, 80, 0))
    assert _held(cache) == [1, 2, 3, 9]
    cache = _filled(0.5, read_in_full={1})
    cache.add((9,), (10,), np.dtype("f8"), (9, 80, 0))
    assert _held(cache) == [0, 2, 3, 9]


def test_cache_params_refuse_bad_values() -> None:
    with pytest.raises(ParamError):
        CacheParams(nbytes=-1, nslots=1, w0=0.5)
    assert not CacheParams(nbytes=100, nslots=0, w0=0.5).holds(10)
    assert not CacheParams(nbytes=100, nslots=3, w0=0.5).holds(101)
    assert CacheParams(nbytes=100, nslots=3, w0=0.5).holds(100)
