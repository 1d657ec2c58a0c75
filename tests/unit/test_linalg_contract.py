"""``tensordot``, ``outer`` and ``vecdot`` (linalg/contract.py) against numpy, with default and
tiny budgets (many work regions and steps), and their errors."""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
import pyblosc2.linalg as la
from pyblosc2.errors import BoundsError, ParamError, ParamTypeError
from pyblosc2.linalg import plan
from pyblosc2.ndarray.npnames import npvecdot

from .test_linalg_matmul import Duck, _rand, _same


@pytest.fixture(params=["default", "tiny"])
def budgets(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """Default budgets (NDArray operands), or tiny ones (operands in memory, read by boxes:
    many work regions and steps, without the time of thousands of small NDArray reads)."""
    if request.param == "tiny":
        monkeypatch.setattr(plan, "STEP_BYTES", 128)
        monkeypatch.setattr(plan, "PANEL_BYTES", 128)
        monkeypatch.setattr(plan, "WORK_BYTES", 256)
    return str(request.param)


def _operand(x: np.ndarray, chunks: tuple[int, ...], budgets: str) -> Any:
    return Duck(x, chunks) if budgets == "tiny" else pb.asarray(x, chunks=chunks)


# (shape1, chunks1, shape2, chunks2, result chunks, axes): python-blosc2's test_tensordot cases
TENSORDOT = {
    "vector.vector": ((50,), (17,), (50,), (13,), (), 1),
    "matrix product": ((30, 40), (17, 21), (40, 20), (19, 20), (10, 5), ([1], [0])),
    "3d.3d last/first": ((10, 20, 30), (9, 11, 17), (30, 15, 5), (16, 15, 5), (7, 6, 3, 1), 1),
    "two axes": ((6, 7, 8, 9), (5, 6, 7, 8), (8, 9, 5), (7, 9, 5), (4, 5, 2), ([2, 3], [0, 1])),
    "three axes, permuted": (
        (5, 6, 7, 8),
        (4, 5, 6, 7),
        (7, 8, 6, 10),
        (6, 7, 5, 9),
        (3, 7),
        ([1, 2, 3], [2, 0, 1]),
    ),
    "negative axes": ((4, 5, 6), (3, 2, 4), (6, 5, 2), (5, 5, 1), None, ([-1, -2], [0, 1])),
    "no contraction": ((1, 2, 5, 3), (1, 1, 2, 2), (2, 3, 1), (1, 2, 1), None, ([], [])),
    "outer by int": ((3, 4), (2, 2), (5,), (2,), None, 0),
}


@pytest.mark.parametrize("case", sorted(TENSORDOT))
@pytest.mark.parametrize("dtype", ["i4", "f8", "c8"])
def test_tensordot_is_numpys(case: str, dtype: str, budgets: str) -> None:
    s1, c1, s2, c2, cr, axes = TENSORDOT[case]
    x, y = _rand(s1, dtype, 1), _rand(s2, dtype, 2)
    a, b = _operand(x, c1, budgets), _operand(y, c2, budgets)
    got = la.tensordot(a, b, axes=axes, chunks=cr)
    _same(got, np.tensordot(x, y, axes=axes))
    _same(la.tensordot(x, pb.asarray(y, chunks=c2), axes, fast_path=True), got[()])


@pytest.mark.parametrize(
    ("axes", "error", "match"),
    [
        (-1, ParamError, "axes must be in"),
        (4, ParamError, "axes must be in"),
        (([0], [0]), ParamError, "shape-mismatch"),
        (([1, 1], [0, 1]), ParamError, "duplicate axes"),
        (([5], [0]), BoundsError, "out of bounds"),
        (([1, 2], [0]), ParamError, "differ in length"),
        ("ab", ParamTypeError, "an int or a pair"),
        (([0.5], [0]), ParamTypeError, "sequence of ints"),
    ],
)
def test_tensordot_refuses_bad_axes(axes: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        la.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 2)), axes=axes)


def test_fast_path_must_be_a_bool() -> None:
    with pytest.raises(ParamTypeError, match="fast_path"):
        la.tensordot(np.ones(3), np.ones(3), 1, fast_path="yes")


@pytest.mark.parametrize("dtype", ["i8", "f4", "?"])
def test_outer_of_vectors(dtype: str, budgets: str) -> None:
    x, y = _rand((21,), dtype, 3), _rand((13,), dtype, 4)
    _same(la.outer(pb.asarray(x, chunks=(5,)), y, chunks=(4, 5)), np.outer(x, y))
    with pytest.raises(ParamError, match="1-d inputs"):
        la.outer(np.ones((2, 2)), y)


# (shape1, chunks1, shape2, chunks2, axis): python-blosc2's test_vecdot cases and a few more
VECDOT = {
    "vectors": ((50,), (17,), (50,), (13,), -1),
    "rows": ((30, 40), (17, 21), (30, 40), (19, 20), -1),
    "length-1 axes": ((10, 1, 5), (9, 1, 1), (10, 1, 1), (4, 1, 1), -2),
    "broadcast 4d.4d": ((6, 7, 8, 9), (5, 6, 7, 8), (1, 7, 8, 1), (1, 7, 3, 1), -2),
    "matrix.vector": ((12, 7), (11, 7), (7,), (5,), -1),
    "vector.3d": ((20,), (9,), (20, 4, 20), (19, 3, 5), -1),
    "5d": ((3, 4, 5, 6, 7), (2, 3, 4, 5, 6), (3, 1, 1, 6, 7), (2, 1, 1, 3, 5), -2),
    "positive axis": ((4, 6, 5), (3, 2, 5), (1, 6, 5), (1, 4, 2), 1),
}


@pytest.mark.parametrize("case", sorted(VECDOT))
@pytest.mark.parametrize("dtype", ["i4", "f8", "c16"])
def test_vecdot_is_numpys_with_the_conjugate(case: str, dtype: str, budgets: str) -> None:
    s1, c1, s2, c2, axis = VECDOT[case]
    x, y = _rand(s1, dtype, 5), _rand(s2, dtype, 6)
    got = la.vecdot(_operand(x, c1, budgets), _operand(y, c2, budgets), axis=axis)
    _same(got, npvecdot(x, y, axis=axis))


@pytest.mark.parametrize(
    ("s1", "s2", "axis", "match"),
    [
        ((3, 4), (3, 5), -1, "differ in length"),
        ((3, 4), (2, 4), -1, "do not broadcast"),
        ((3, 4), (4,), -2, r"axis must be in \[-1, 0\]"),
        ((3, 4), (4,), 1, r"axis must be in \[-1, 0\]"),
        ((), (3,), -1, "axis must be in"),
    ],
)
def test_vecdot_refuses_what_numpy_refuses(s1: Any, s2: Any, axis: int, match: str) -> None:
    with pytest.raises(ParamError, match=match):
        la.vecdot(np.ones(s1), np.ones(s2), axis=axis)


def test_empty_contractions_are_zeros() -> None:
    _same(la.tensordot(np.ones((3, 0)), np.ones((0, 2)), 1), np.zeros((3, 2)))
    _same(la.vecdot(np.ones((3, 0)), np.ones((3, 0))), np.zeros(3))


@settings(max_examples=20, deadline=None)
@given(
    data=st.data(),
    dtype=st.sampled_from(["i2", "i8", "f8", "c16"]),
    naxes=st.integers(0, 2),
    step=st.sampled_from([16, 1 << 20]),
)
def test_any_tensordot_equals_numpys(data: Any, dtype: str, naxes: int, step: int) -> None:
    common = data.draw(st.lists(st.integers(1, 5), min_size=naxes, max_size=naxes))
    left = data.draw(st.lists(st.integers(1, 5), max_size=2))
    right = data.draw(st.lists(st.integers(1, 5), max_size=2))
    x = data.draw(hnp.arrays(dtype, (*left, *common), elements=_small(dtype)))
    y = data.draw(hnp.arrays(dtype, (*common, *right), elements=_small(dtype)))
    cx = tuple(data.draw(st.integers(1, n)) for n in x.shape)
    saved = plan.STEP_BYTES, plan.WORK_BYTES
    plan.STEP_BYTES = plan.WORK_BYTES = step
    try:
        got = la.tensordot(pb.asarray(x, chunks=cx), y, axes=naxes)
    finally:
        plan.STEP_BYTES, plan.WORK_BYTES = saved
    want = np.tensordot(x, y, axes=naxes)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(got[()], want, rtol=1e-9, atol=1e-6)


def _small(dtype: str) -> Any:
    if np.dtype(dtype).kind in "iu":
        return st.integers(-50, 50)
    if np.dtype(dtype).kind == "c":
        return st.complex_numbers(max_magnitude=50, allow_nan=False, allow_infinity=False)
    return st.floats(-50, 50, allow_nan=False)
