"""``permute_dims``, ``matrix_transpose``, ``transpose``, ``diagonal`` (linalg/layout.py) and
NDArray's ``.T``/``.mT`` (ndarray/linalg_members.py) against numpy."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
import pyblosc2.linalg as la
from pyblosc2.errors import ParamError, ParamTypeError
from pyblosc2.linalg import plan

from .test_linalg_matmul import Duck


@pytest.mark.parametrize("axes", [*itertools.permutations(range(3)), None, (-1, 0, -2)])
def test_permute_dims_is_numpys_and_keeps_the_chunks_permuted(axes: Any) -> None:
    x = np.arange(11 * 7 * 5, dtype=np.int32).reshape(11, 7, 5)
    a = pb.asarray(x, chunks=(4, 3, 5), blocks=(2, 3, 2))
    got = la.permute_dims(a, axes)
    perm = tuple(range(3))[::-1] if axes is None else tuple(d % 3 for d in axes)
    np.testing.assert_array_equal(got[...], np.transpose(x, perm))
    assert got.chunks == tuple((4, 3, 5)[d] for d in perm)


def test_permute_dims_takes_any_dtype_without_objects_and_array_likes() -> None:
    x = np.array([["ab", "c"], ["d", "efg"], ["h", "i"]])
    np.testing.assert_array_equal(la.permute_dims(x)[...], x.T)
    s = np.zeros((2, 3), dtype=[("a", "i4"), ("b", "f8")])
    s["a"] = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(la.permute_dims(pb.asarray(s))[...], s.T)
    duck = Duck(np.arange(12).reshape(3, 4), chunks=(2, 2))
    got = la.permute_dims(duck, (1, 0))
    assert got.chunks == (2, 2) and all(k != (slice(None),) * 2 for k in duck.reads)
    with pytest.raises(ParamTypeError, match="without Python objects"):
        la.permute_dims(np.empty((2, 2), object))


def test_scalars_and_vectors_come_back_as_they_are() -> None:
    v = pb.asarray(np.arange(4))
    assert la.permute_dims(v) is v and la.permute_dims(3.5) == 3.5
    assert la.matrix_transpose(v) is v
    copy = la.permute_dims(v, urlpath=None, chunks=(2,))  # storage keywords: a new array
    assert copy is not v and copy.chunks == (2,)
    np.testing.assert_array_equal(copy[...], np.arange(4))


@pytest.mark.parametrize(
    "axes", [(0, 0, 1), (0, -1, -1), (0, 1), (0, 1, 2, 3), (0, 1, 3), (0, 0.5, 1)]
)
def test_invalid_permutations_are_refused(axes: Any) -> None:
    with pytest.raises(ParamError, match="not a valid permutation"):
        la.permute_dims(np.ones((2, 3, 4)), axes)


@pytest.mark.parametrize("shape", [(2, 3), (4, 5, 6), (2, 4, 8, 5)])
def test_matrix_transpose_and_mT(shape: tuple[int, ...]) -> None:
    x = np.arange(np.prod(shape)).reshape(shape)
    a = pb.asarray(x, chunks=tuple(max(1, n // 2) for n in shape))
    want = np.swapaxes(x, -1, -2)
    np.testing.assert_array_equal(la.matrix_transpose(a)[...], want)
    np.testing.assert_array_equal(a.mT[...], want)


def test_T_is_for_matrices_only() -> None:
    x = np.arange(6.0).reshape(2, 3)
    t = pb.asarray(x).T
    assert isinstance(t, pb.NDArray)
    np.testing.assert_array_equal(t[...], x.T)
    for shape in [(10,), (4, 5, 6)]:
        with pytest.raises(ParamError, match="only works for 2-dimensional"):
            pb.zeros(shape).T  # noqa: B018
    with pytest.raises(ParamError, match="N>=2"):
        pb.zeros(3).mT  # noqa: B018


def test_transpose_is_deprecated_and_for_matrices() -> None:
    x = np.arange(6).reshape(2, 3)
    with pytest.warns(DeprecationWarning, match="^transpose is deprecated"):
        np.testing.assert_array_equal(la.transpose(pb.asarray(x))[...], x.T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ParamError, match="at most 2 dimensions"):
            la.transpose(np.ones((2, 2, 2)))
        assert la.transpose(5) == 5


@pytest.mark.parametrize(
    ("shape", "chunks", "offset"),
    [
        ((10, 10), (5, 5), 0),
        ((20, 15), (6, 7), 2),
        ((30, 25), (10, 8), -3),
        ((2, 4, 30, 25), (1, 3, 10, 8), -3),
        ((5, 7), (5, 7), 9),  # past the last column: empty
        ((5, 7), (2, 2), -5),  # past the last row: empty
    ],
)
@pytest.mark.parametrize("step", [None, 64])
def test_diagonal_is_numpys(
    shape: Any, chunks: Any, offset: int, step: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if step:  # boxes of a few items along the diagonal
        monkeypatch.setattr(plan, "STEP_BYTES", step)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = la.diagonal(pb.asarray(x, chunks=chunks), offset=offset)
    want = np.diagonal(x, offset, -2, -1)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got[...], want)


def test_diagonal_reads_boxes_along_the_diagonal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan, "STEP_BYTES", 8 * 16)  # 4 x 4 boxes
    x = np.arange(40 * 40).reshape(40, 40)
    duck = Duck(x, chunks=(10, 10))
    np.testing.assert_array_equal(la.diagonal(duck, chunks=(10,))[...], np.diagonal(x))
    sides = {(k[0].stop - k[0].start, k[1].stop - k[1].start) for k in duck.reads}
    assert sides == {(4, 4), (2, 2)}  # squares on the diagonal; 10 = 4 + 4 + 2 per chunk


def test_diagonal_refuses_vectors_and_bad_offsets() -> None:
    with pytest.raises(ParamError, match="at least 2 dimensions"):
        la.diagonal(np.ones(3))
    with pytest.raises(ParamError, match="offset must be an int"):
        la.diagonal(np.ones((3, 3)), offset=1.5)  # type: ignore[arg-type]
