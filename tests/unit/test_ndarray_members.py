"""NDArray members (ndarray/members.py) and the key helpers (ndarray/keys.py), with numpy
as the model."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.ndarray import detect_aligned_chunks, get_ndarray_start_stop
from pyblosc2.utils import process_key

X = np.arange(24 * 10, dtype=np.int64).reshape(24, 10)


@pytest.fixture
def arr() -> pb.NDArray:
    return pb.asarray(X, chunks=(8, 5), blocks=(4, 5), cparams={"clevel": 3})


@pytest.mark.parametrize(
    "key",
    [
        (slice(8, 24), slice(0, 5)),  # whole chunks: copied compressed
        (slice(3, 20), slice(1, 9)),
        (5, slice(None)),
        (slice(None, None, 3), 2),
    ],
    ids=["aligned", "unaligned", "int", "steps"],
)
def test_slice_is_an_ndarray(arr, key) -> None:
    b = arr.slice(key)
    assert isinstance(b, pb.NDArray)
    assert b.cparams.clevel == 3
    np.testing.assert_array_equal(b[...], X[key])


def test_aligned_slice_copies_chunks(arr) -> None:
    b = arr.slice((slice(8, 24), slice(5, 10)))
    assert [b.get_chunk(i) for i in range(2)] == [arr.get_chunk(3), arr.get_chunk(5)]


@pytest.mark.parametrize(
    ("shape", "kw"),
    [((4, 60), {}), ((2, 3, 40), {"chunks": (1, 2, 16), "blocks": (1, 1, 8)}), ((-1, 8), {})],
)
def test_reshape_c_order(arr, shape, kw) -> None:
    r = arr.reshape(shape, **kw)
    np.testing.assert_array_equal(r[...], X.reshape(shape))


def test_reshape_insertion_order(arr) -> None:
    r = arr.reshape((6, 40), c_order=False, chunks=(4, 20), blocks=(2, 10))
    # chunk k of the new grid holds items [80k, 80k + 80) of the flat array, in C order
    np.testing.assert_array_equal(r[0:4, 20:40], X.reshape(-1)[80:160].reshape(4, 20))


def test_reshape_refuses_another_size(arr) -> None:
    with pytest.raises(ValueError, match="cannot reshape array of size 240"):
        arr.reshape((1, 1))


def test_tobytes_and_members(arr) -> None:
    assert arr.tobytes() == X.tobytes()
    assert arr.ext_shape == (24, 10) and arr.ext_chunks == (8, 5)
    assert arr.chunksize == 8 * 5 * 8 and arr.blocksize == 4 * 5 * 8
    assert arr.cparams is arr.schunk.cparams and arr.dparams is arr.schunk.dparams
    assert arr.urlpath is None
    items = dict(arr.info_items)
    assert items["nbytes"] == "1920 (1.88 KiB)" and items["shape"] == (24, 10)
    with arr as same:
        assert same is arr


def test_argsort_is_stable() -> None:
    data = np.array([7, 2, 9, 2, 1, 8])
    np.testing.assert_array_equal(pb.asarray(data).argsort()[...], [4, 1, 3, 0, 5, 2])


def test_fields_views() -> None:
    dt = np.dtype([("id", "<f8"), ("n", "<i4")])
    a = pb.zeros(5, dtype=dt, chunks=(2,), blocks=(1,))
    with pytest.raises(TypeError, match=r'array\.fields\["id"\]\[:\] = values'):
        a.fields["id"] = np.arange(5.0)
    a.fields["id"][1:4] = [1.0, 2.0, 3.0]
    a["n"][::2] = 9
    np.testing.assert_array_equal(a["id"][...], [0, 1, 2, 3, 0])
    np.testing.assert_array_equal(a.fields["n"][...], [9, 0, 9, 0, 9])
    assert list(a.fields) == ["id", "n"] and a.fields["n"].dtype == np.int32


@pytest.mark.parametrize(
    ("shape", "new", "chunks", "blocks"),
    [
        ((0,), (4,), (20,), (6,)),
        ((0, 0, 0), (4, 4, 100), (20, 10, 33), (6, 6, 26)),
        ((5, 3), (0, 3), (2, 2), (1, 1)),
    ],
)
def test_resize_with_empty_dimensions(shape, new, chunks, blocks) -> None:
    a = pb.full(shape, 3, chunks=chunks, blocks=blocks)
    a.resize(new)
    assert a.shape == new
    np.testing.assert_array_equal(a[...], np.zeros(new))


@pytest.mark.parametrize("dtype", ["<i8", "<f4", "S3", [("x", "<i2"), ("y", "u1")]], ids=str)
def test_growing_keeps_an_edge_chunk_already_zero_past_the_old_shape(dtype) -> None:
    """A growing array's edge chunk holds zeros past its old extent: resize keeps its bytes
    (C-Blosc2 leaves it too) and compresses nothing; data past it (after a shrink) is zeroed."""
    a = pb.zeros((10, 3), dtype=dtype, chunks=(8, 3), blocks=(2, 3))
    a[:10] = np.ones((10, 3), dtype=np.int8).astype(dtype)
    stored = bytes(a.schunk.get_chunk(1))
    written: list[int] = []
    real = a.schunk.compress_data
    a.schunk.compress_data = lambda data, *k: written.append(1) or real(data, *k)  # type: ignore[method-assign]
    decoded: list[int] = []
    whole = a.schunk.decompress_chunk
    a.schunk.decompress_chunk = lambda n, *k: decoded.append(n) or whole(n, *k)  # type: ignore[method-assign]
    a.resize((14, 3))
    assert written == [] and bytes(a.schunk.get_chunk(1)) == stored
    assert decoded == []  # its blocks past row 10 are zero runs: told without decoding
    a.resize((9, 3))  # row 9 stays in chunk 1's bytes
    a.resize((16, 3))
    assert written != []  # rewritten: its bytes past row 9 were not zero
    want = np.zeros((16, 3), dtype)
    want[:9] = np.ones((9, 3), dtype=np.int8).astype(dtype)
    np.testing.assert_array_equal(a[...], want)


def test_append_grows_from_empty(tmp_path) -> None:
    path = str(tmp_path / "log.b2nd")
    pb.zeros(0, dtype=np.int32, chunks=(4,), blocks=(2,), urlpath=path)
    for run in range(3):  # three "runs" of a script, each appending to the file
        a = pb.open(path, mode="a")
        assert a.append(np.arange(run * 3, run * 3 + 3)) == run * 3 + 3
    np.testing.assert_array_equal(pb.open(path)[...], np.arange(9))


@pytest.mark.parametrize(("values", "n"), [(7, 1), ([[1, 2], [3, 4]], 4), ([], 0)])
def test_append_flattens(values, n) -> None:
    a = pb.asarray(np.arange(3), chunks=(2,), blocks=(1,))
    assert a.append(values) == 3 + n
    np.testing.assert_array_equal(a[3:], np.asarray(values).reshape(-1))


def test_append_needs_one_dimension(arr) -> None:
    with pytest.raises(ValueError, match="1-d"):
        arr.append(1)


def test_save_overwrites(tmp_path) -> None:
    path = tmp_path / "s.b2nd"
    pb.asarray(np.arange(5)).save(str(path))
    pb.asarray(np.arange(3)).save(path, mode="w", contiguous=False)
    np.testing.assert_array_equal(pb.open(str(path))[...], np.arange(3))


@pytest.mark.parametrize(
    ("key", "shape", "chunks", "want"),
    [
        ((slice(5, 10), slice(0, 10)), (10, 20), (5, 10), [2]),
        ((slice(1, 2), slice(0, 40_000)), (2, 100_003), (1, 40_000), [3]),
        ((slice(1, 2), slice(0, 40_001)), (2, 100_003), (1, 40_000), []),
        ((slice(2, 4), slice(0, 3), slice(0, 4)), (4, 7, 11), (2, 3, 4), [9]),
    ],
)
def test_detect_aligned_chunks(key, shape, chunks, want) -> None:
    assert detect_aligned_chunks(key, shape, chunks) == want


@pytest.mark.parametrize(("consecutive", "want"), [(True, []), (False, [0, 3])])
def test_detect_aligned_chunks_consecutive(consecutive, want) -> None:
    key = (slice(0, 2), slice(0, 40_000))
    assert detect_aligned_chunks(key, (2, 100_003), (1, 40_000), consecutive) == want


@pytest.mark.parametrize(
    ("key", "want"),
    [
        ((None, slice(None, None, 32), slice(None, None, 16)), ([0, 0], [200, 200], (32, 16))),
        ((5, slice(-10, None)), ([5, 190], [6, 200], (1, 1))),
    ],
)
def test_process_key_and_start_stop(key, want) -> None:
    norm, _ = process_key(key, (200, 200))
    start, stop, step, none_mask = get_ndarray_start_stop(2, norm, (200, 200))
    counts = [len(range(a, b, s)) for a, b, s in zip(start, stop, step, strict=True)]
    assert counts == [len(range(*k.indices(200))) for k in norm if k is not None]
    assert (start[0], step) == (want[0][0], want[2])
    assert none_mask == [k is None for k in norm]


def test_slice_with_new_cparams_recompresses(arr) -> None:
    b = arr.slice((slice(8, 24), slice(0, 5)), cparams={"codec": pb.Codec.LZ4})
    assert b.cparams.codec == pb.Codec.LZ4
    assert b.get_chunk(0) != arr.get_chunk(2)
    np.testing.assert_array_equal(b[...], X[8:24, 0:5])


def _grow(path: str, monkeypatch=None) -> bytes:
    """The frame a (0, 3) array grown by six batches (resize, then the batch written) leaves,
    every shape commit through a whole chunk-list rewrite when ``monkeypatch`` is given."""
    if monkeypatch is not None:
        monkeypatch.setattr(
            pb.SChunk,
            "replace_tail",
            lambda self, keep, chunks, meta: self.set_chunks([*range(keep), *chunks], meta),
        )
    a = pb.zeros((0, 3), dtype=np.int64, chunks=(8, 3), blocks=(2, 3), urlpath=path, mode="w")
    for i in range(6):
        n = a.shape[0]
        a.resize((n + 3, 3))
        a[n:] = np.full((3, 3), i + 1)
    a.resize((4, 3))  # a shrink: the tail dropped, the edge chunk zeroed past row 4
    a.resize((20, 3))
    return open(path, "rb").read()


def test_a_grown_array_commits_the_bytes_a_whole_rewrite_commits(tmp_path, monkeypatch) -> None:
    """Resize commits a kept prefix plus new chunks through replace_tail: the frame is byte
    for byte the one a rewrite of the whole chunk list gives."""
    fast = _grow(str(tmp_path / "fast.b2nd"))
    slow = _grow(str(tmp_path / "slow.b2nd"), monkeypatch)
    assert fast == slow
    want = np.zeros((20, 3), np.int64)
    want[:3], want[3:4] = 1, 2
    np.testing.assert_array_equal(pb.open(str(tmp_path / "fast.b2nd"))[...], want)
