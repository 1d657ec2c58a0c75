"""NumPy-like constructors built chunk by chunk (ndarray/numpylike.py, ndarray/chunkfill.py,
arange/linspace in ndarray/extra.py, asarray's copy/dtype in ndarray/constructors.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.ndarray.partition import ChunkTooLargeError


class Counting:
    """An iterator counting the items it gave."""

    def __init__(self, n: int) -> None:
        self._it = iter(range(n))
        self.count = 0

    def __iter__(self) -> Counting:
        return self

    def __next__(self) -> int:
        v = next(self._it)
        self.count += 1
        return v


@pytest.mark.parametrize(("n", "m"), [(10, None), (10, 20), (20, 10), (1, 1), (0, 3)])
@pytest.mark.parametrize("k", [-3, 0, 2, 25])
@pytest.mark.parametrize("chunks", [(5, 6), (10, 9)])
def test_eye_matches_numpy(n: int, m: int | None, k: int, chunks: tuple[int, int]) -> None:
    a = pb.eye(n, m, k, dtype=np.int32, chunks=chunks if n else None)
    np.testing.assert_array_equal(a[...], np.eye(n, m, k, dtype=np.int32))


def test_eye_stores_chunks_off_the_diagonal_as_zero_chunks() -> None:
    a = pb.eye(20, chunks=(5, 5), blocks=(5, 5))
    specials = [i.special.name for i in a.iterchunks_info()]
    assert specials.count("ZERO") == 16 - 4


@pytest.mark.parametrize(
    ("shape", "chunks", "blocks"),
    [
        ((10,), (4,), (2,)),
        ((5, 7), (2, 3), (1, 2)),
        ((3, 4, 5), (2, 2, 3), (1, 1, 2)),
        ((), None, None),
    ],
)
@pytest.mark.parametrize("c_order", [True, False])
def test_fromiter_consumes_exactly_the_items(shape, chunks, blocks, c_order) -> None:
    n = math.prod(shape)
    it = Counting(n + 5)
    a = pb.fromiter(it, shape, np.int64, c_order=c_order, chunks=chunks, blocks=blocks)
    assert it.count == n
    if c_order or len(shape) <= 1:
        np.testing.assert_array_equal(a[...], np.arange(n).reshape(shape))
    else:
        assert sorted(a[...].ravel().tolist()) == list(range(n))


def test_fromiter_chunk_order_puts_consecutive_items_in_each_chunk() -> None:
    a = pb.fromiter(range(24), (4, 6), np.int32, c_order=False, chunks=(2, 3), blocks=(1, 2))
    for n, (i, j) in enumerate(itertools.product(range(2), range(2))):
        piece = a[i * 2 : i * 2 + 2, j * 3 : j * 3 + 3]
        np.testing.assert_array_equal(piece.ravel(), np.arange(n * 6, n * 6 + 6))


def test_fromiter_structured_and_numpy_input() -> None:
    dt = np.dtype([("x", "<i4"), ("y", "<f4")])
    data = [(i, i / 2) for i in range(12)]
    a = pb.fromiter(iter(data), (3, 4), dt, chunks=(2, 2), blocks=(1, 1))
    np.testing.assert_array_equal(a[...], np.array(data, dt).reshape(3, 4))
    src = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(pb.fromiter(src, (3, 4), np.float64)[...], src)


def test_fromiter_refuses_a_short_iterable() -> None:
    with pytest.raises(pb.ParamError, match="ended early"):
        pb.fromiter(range(5), (2, 3), np.int8)


@pytest.mark.parametrize(
    ("sss", "shape", "chunks"),
    [
        ((0, 10, 1), (10,), (3,)),
        ((1, 11, 1), (2, 5), (1, 3)),
        ((3, 33, 3), (2, 5), (2, 2)),
        ((50, None, None), (10, 5, 1), (3, 5, 1)),
        ((0.5, 3.0, 0.25), (10,), (4,)),
    ],
)
@pytest.mark.parametrize("c_order", [True, False])
def test_arange_matches_numpy(sss, shape, chunks, c_order: bool) -> None:
    a = pb.arange(*sss, shape=shape, chunks=chunks, c_order=c_order)
    start, stop, step = sss
    expected = np.arange(start, stop, step) if stop is not None else np.arange(start)
    np.testing.assert_allclose(a[...], expected.reshape(shape))
    assert a.dtype == expected.dtype


@pytest.mark.parametrize(("start", "stop", "step"), [(10, 2, 1), (2, 10, -1), (5, 5, 1)])
def test_arange_empty(start: int, stop: int, step: int) -> None:
    assert pb.arange(start, stop, step).shape == (0,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32])
@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("c_order", [True, False])
def test_linspace_matches_numpy(dtype, endpoint: bool, c_order: bool) -> None:
    a = pb.linspace(
        -1,
        7,
        100,
        dtype=dtype,
        shape=(10, 10),
        endpoint=endpoint,
        c_order=c_order,
        chunks=(3, 4),
        blocks=(2, 2),
    )
    expected = np.linspace(-1, 7, 100, dtype=dtype, endpoint=endpoint).reshape(10, 10)
    np.testing.assert_allclose(a[...], expected, rtol=1e-6)
    assert a.dtype == np.dtype(dtype)


def test_linspace_refuses_num_and_shape_that_disagree() -> None:
    with pytest.raises(pb.ParamError, match="shape"):
        pb.linspace(0, 1, 10, shape=(20,))
    with pytest.raises(pb.ParamError):
        pb.linspace(0, 1)


@pytest.mark.parametrize(
    ("src", "dst"), [((10,), (5, 10)), ((1, 3), (2, 4, 3)), ((2, 1), (2, 5)), ((), (3,))]
)
def test_broadcast_to_matches_numpy(src, dst) -> None:
    x = np.arange(math.prod(src)).reshape(src)
    np.testing.assert_array_equal(pb.broadcast_to(pb.asarray(x), dst)[...], np.broadcast_to(x, dst))


def test_broadcast_to_refuses_incompatible_shapes() -> None:
    with pytest.raises(ValueError, match="cannot be broadcast"):
        pb.broadcast_to(pb.asarray(np.arange(3)), (4,))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("lengths", [(3,), (4, 5), (2, 3, 4)])
def test_meshgrid_matches_numpy(indexing: str, lengths) -> None:
    vecs = [np.arange(n, dtype=np.float32) * (i + 1) for i, n in enumerate(lengths)]
    ours = pb.meshgrid(*[pb.asarray(v, chunks=(2,), blocks=(1,)) for v in vecs], indexing=indexing)
    theirs = np.meshgrid(*vecs, indexing=indexing)
    assert len(ours) == len(theirs)
    for g, e in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(g[...], e)


def test_array_and_asarray_copy_semantics() -> None:
    a = pb.asarray(np.arange(6), chunks=(4,), blocks=(2,))
    assert pb.asarray(a) is a
    assert pb.array(a, copy=None) is a and pb.array(a, copy=False) is a
    b = pb.array(a)
    assert b is not a and b.chunks == a.chunks and b.blocks == a.blocks
    np.testing.assert_array_equal(b[...], a[...])
    cast = pb.asarray(a, dtype=np.float32)
    assert cast.dtype == np.float32
    with pytest.raises(ValueError, match="copy=False"):
        pb.asarray(a, dtype=np.float64, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        pb.array([1, 2], copy=False)


def test_asarray_of_an_ndarray_to_a_file(tmp_path) -> None:
    a = pb.asarray(np.arange(10), chunks=(5,), blocks=(2,))
    path = tmp_path / "p.b2nd"
    b = pb.asarray(a, urlpath=path, mode="w")
    assert b is not a and path.exists()
    np.testing.assert_array_equal(pb.open(path)[...], np.arange(10))


@pytest.mark.parametrize(("shape", "axis"), [((4,), 0), ((2, 3), -1), ((2, 3), (0, 3)), ((), 0)])
def test_expand_dims_is_a_view(shape, axis) -> None:
    x = np.arange(math.prod(shape)).reshape(shape)
    a = pb.asarray(x)
    v = pb.expand_dims(a, axis)
    np.testing.assert_array_equal(v[...], np.expand_dims(x, axis))
    vv = pb.expand_dims(v, 0)
    assert vv._base is a  # a view of a view refers to the owner
    np.testing.assert_array_equal(vv[...], np.expand_dims(np.expand_dims(x, axis), 0))


def test_expand_dims_refuses_more_than_max_dim() -> None:
    with pytest.raises(pb.ParamError, match="MAX_DIM"):
        pb.expand_dims(pb.zeros((2,) * pb.MAX_DIM), 0)


@pytest.mark.parametrize("c_order", [True, False])
@pytest.mark.parametrize(
    ("shape", "new", "chunks"),
    [((10,), (2, 5), (1, 5)), ((60,), (3, 5, 4), (2, 5, 2)), ((4, 6), (3, -1), (2, 3))],
)
def test_reshape_module_function(shape, new, chunks, c_order: bool) -> None:
    x = np.arange(math.prod(shape)).reshape(shape)
    r = pb.reshape(
        pb.asarray(x, chunks=tuple(max(1, s // 2) for s in shape)),
        new,
        c_order=c_order,
        chunks=chunks,
    )
    assert r.shape == x.reshape(new).shape
    if c_order:
        np.testing.assert_array_equal(r[...], x.reshape(new))
    else:
        assert sorted(r[...].ravel().tolist()) == x.ravel().tolist()


def test_reshape_refuses_a_different_size() -> None:
    with pytest.raises(pb.ParamError, match="shape"):
        pb.reshape(pb.arange(10), (3, 3))


def test_like_constructors_and_nans_uninit() -> None:
    a = pb.asarray(np.arange(6, dtype=np.int16).reshape(2, 3), chunks=(1, 3), blocks=(1, 1))
    for made, value in ((pb.zeros_like(a), 0), (pb.ones_like(a), 1), (pb.full_like(a, 9), 9)):
        assert (made.shape, made.dtype, made.chunks, made.blocks) == (
            a.shape,
            a.dtype,
            (1, 3),
            (1, 1),
        )
        np.testing.assert_array_equal(made[...], np.full((2, 3), value, np.int16))
    assert pb.empty_like(a, dtype=np.float32).dtype == np.float32
    assert np.isnan(pb.nans((2, 2), np.float32)[...]).all()
    assert pb.uninit(3, np.int8).shape == (3,)
    with pytest.raises(pb.ParamError, match="dtype"):
        pb.nans(3, np.int32)


@pytest.mark.parametrize(
    ("shape", "chunks", "blocks", "behaved"),
    [
        ((10, 10), (5, 10), (1, 10), True),
        ((10, 10), (5, 5), (1, 5), False),
        ((146, 23802), (147, 23802), (1, 23802), False),
        ((8,), (8,), (8,), True),
        ((8,), (4,), (4,), False),
    ],
)
def test_are_partitions_behaved(shape, chunks, blocks, behaved: bool) -> None:
    assert pb.are_partitions_behaved(shape, chunks, blocks) is behaved


def test_compute_chunks_blocks_is_the_constructors_choice() -> None:
    chunks, blocks = pb.compute_chunks_blocks((1000, 1000), dtype=np.float64)
    a = pb.zeros((1000, 1000))
    assert (a.chunks, a.blocks) == (chunks, blocks)


def test_chunks_larger_than_a_chunk_can_hold_raise_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="2147483615"):
        pb.zeros((2**31 - 1,), np.float32, chunks=(2**30,))
    with pytest.raises(ChunkTooLargeError):
        pb.zeros((2**31 - 1,), np.float32, chunks=(2**30,))


@pytest.mark.parametrize("c_order", [True, False])
def test_fromiter_takes_a_numpy_array_in_c_order(c_order: bool) -> None:
    src = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = pb.fromiter(src, (4, 6), np.float32, c_order=c_order, chunks=(2, 3), blocks=(1, 2))
    np.testing.assert_array_equal(a[...], src)
