"""NDArray advanced indexing (ndarray/fancy.py): every key form against numpy as the model,
reads and writes, plus the strided and point gathers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ndarray import fancy

SHAPE = (7, 9, 5)
NP = np.arange(np.prod(SHAPE), dtype=np.int32).reshape(SHAPE)
MASK = (np.arange(9) % 3) == 1

KEYS = {
    "int list": [4, 0, -1, 4],
    "int array 2d": np.array([[1, 6], [0, -7]]),
    "empty list": [],
    "bool mask all axes": NP % 7 == 0,
    "bool mask first two": (NP % 7 == 0)[:, :, 0],
    "bool mask axis 1": (slice(None), MASK),
    "none": (None, 2, slice(1, 4)),
    "none middle": (slice(None), None, 3, None),
    "two arrays broadcast": ([[0], [6]], [1, 8, 2]),
    "array slice array": ([0, 2], slice(1, 8, 3), [4, 0]),
    "array and negative step": ([3, 1], slice(None, None, -2)),
    "int then array": (2, slice(None), [4, 1]),
    "scalar true": True,
    "scalar false in tuple": (slice(1), False, 2),
    "scalar true with ellipsis": (Ellipsis, True),
    "zero-d bool": (np.array(True), slice(None)),
    "negative step": (slice(None, None, -1), slice(8, 1, -3)),
    "coarse stride": (slice(None, None, 3), slice(None, None, 4), 2),
    "ellipsis array": (Ellipsis, [0, 4]),
    "ndarray index": "ndarray",
}


@pytest.fixture
def arr() -> pb.NDArray:
    return pb.asarray(NP, chunks=(3, 4, 5), blocks=(2, 2, 5))


def _key(name: str):
    key = KEYS[name]
    return pb.asarray(np.array([5, 1, 1])) if isinstance(key, str) else key


def _np_key(name: str):
    key = KEYS[name]
    return np.array([5, 1, 1]) if isinstance(key, str) else key


@pytest.mark.parametrize("name", list(KEYS))
def test_getitem_matches_numpy(arr, name) -> None:
    got = arr[_key(name)]
    want = NP[_np_key(name)]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", [n for n in KEYS if not n.startswith(("scalar", "zero-d"))])
def test_setitem_matches_numpy(arr, name) -> None:
    want = NP.copy()
    sel = want[_np_key(name)]
    value = -np.arange(sel.size, dtype=np.int32).reshape(sel.shape) - 1
    want[_np_key(name)] = value
    arr[_key(name)] = value
    np.testing.assert_array_equal(arr[...], want)


@pytest.mark.parametrize(
    "key",
    [(1, 2, 3, 4), (7,), (slice(None), -10), ([0, 9],), (slice(None), [9]), (1.5,), ..., None],
    ids=[
        "too many",
        "int oob",
        "neg int oob",
        "array oob",
        "array oob axis 1",
        "float",
        "ok",
        "ok2",
    ],
)
def test_errors_are_numpys(arr, key) -> None:
    try:
        want = NP[key]
    except Exception as exc:  # the model (numpy) decides the exception type
        with pytest.raises(type(exc)):
            arr[key]
    else:
        np.testing.assert_array_equal(arr[key], want)


def test_bool_mask_with_empty_axis_is_numpys() -> None:
    a = pb.asarray(np.arange(360).reshape(6, 5, 4, 3), chunks=(3, 2, 2, 1), blocks=(1, 1, 1, 1))
    mask = np.zeros((6, 0, 4), bool)
    assert a[mask].shape == np.arange(360).reshape(6, 5, 4, 3)[mask].shape == (0, 3)


def test_strided_read_gathers_only_needed_blocks(tmp_path) -> None:
    x = np.arange(100_000, dtype=np.float64)
    a = pb.asarray(x, chunks=(20_000,), blocks=(500,), urlpath=str(tmp_path / "a.b2nd"))
    b = pb.open(str(tmp_path / "a.b2nd"))
    before = b.schunk.bytes_read
    np.testing.assert_array_equal(b[::10_000], x[::10_000])
    # 10 blocks of 4000 bytes, not 5 whole chunks of 160000 bytes
    assert b.schunk.bytes_read - before < 200_000
    assert a.chunks == (20_000,)


@pytest.mark.parametrize(
    ("shape", "chunks", "blocks"),
    [((100,), (23,), (7,)), ((10, 12), (4, 5), (2, 3)), ((5, 6, 7), (3, 4, 5), (2, 2, 3))],
)
def test_gather_flat(shape, chunks, blocks) -> None:
    x = np.arange(np.prod(shape)).reshape(shape)
    a = pb.asarray(x, chunks=chunks, blocks=blocks)
    flat = np.random.default_rng(0).integers(0, x.size, 50)
    np.testing.assert_array_equal(fancy.gather_flat(a, flat), x.reshape(-1)[flat])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_matches_numpy(arr, axis) -> None:
    idx = np.array([[0, -1], [2, 3]])
    got = pb.take(arr, idx, axis=axis)
    assert isinstance(got, pb.NDArray)
    np.testing.assert_array_equal(got[()], np.take(NP, idx, axis=axis))


@pytest.mark.parametrize(
    ("indices", "axis", "error"),
    [([1.5], 0, TypeError), ([0], 3, ValueError), ([7], 0, IndexError), ([-8], 0, IndexError)],
)
def test_take_rejects(arr, indices, axis, error) -> None:
    with pytest.raises(error):
        arr.take(indices, axis=axis)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_take_along_axis(arr, axis) -> None:
    shape = list(SHAPE)
    shape[axis] = 3
    idx = np.random.default_rng(axis).integers(0, SHAPE[axis], shape)
    got = pb.take_along_axis(arr, idx, axis=axis)[()]
    np.testing.assert_array_equal(got, np.take_along_axis(NP, idx, axis=axis))


@pytest.mark.parametrize(
    "key",
    [([3, 1], [2, 5], [0, 0, 4]), (slice(1, 5), [8, 0], 2), (MASK[:7], slice(None), [1])],
    ids=["arrays", "slice array int", "mask"],
)
def test_oindex(arr, key) -> None:
    axes = []
    for k, n in zip(key, SHAPE, strict=True):
        idx = np.arange(n)[k]
        axes.append(np.atleast_1d(idx))
    want = NP[np.ix_(*axes)].reshape(
        [len(a) for k, a in zip(key, axes, strict=True) if not isinstance(k, int)]
    )
    np.testing.assert_array_equal(arr.oindex[key], want)
    arr.oindex[key] = 0
    model = NP.copy()
    model[np.ix_(*axes)] = 0
    np.testing.assert_array_equal(arr[...], model)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(st.integers(-7, 6), min_size=1, max_size=6),
    cols=st.lists(st.integers(-9, 8), min_size=1, max_size=6),
    step=st.integers(-3, 3).filter(bool),
)
def test_random_fancy_keys(rows, cols, step) -> None:
    a = pb.asarray(NP, chunks=(3, 4, 5), blocks=(2, 2, 5))
    np.testing.assert_array_equal(a[rows, :, ::step], NP[rows, :, ::step])
    np.testing.assert_array_equal(
        a[np.array(rows)[:, None], cols], NP[np.array(rows)[:, None], cols]
    )


def test_point_keys_gather_instead_of_the_bounding_box(tmp_path) -> None:
    x = np.arange(400 * 400, dtype=np.float64).reshape(400, 400)
    path = str(tmp_path / "p.b2nd")
    pb.asarray(x, chunks=(100, 100), blocks=(20, 20), urlpath=path)
    a = pb.open(path)
    rows, cols = [0, 399, 7], [399, 0, 7]
    before = a.schunk.bytes_read
    np.testing.assert_array_equal(a[rows, cols], x[rows, cols])
    # three blocks (about 28 KB read); the bounding box is the whole array (about 110 KB)
    assert a.schunk.bytes_read - before < 50_000
