"""NDArray operators and ufuncs build lazy expressions (ndarray/operand.py through the
compute engine) whose shape, dtype and values agree with numpy on the same data, whatever the
partition; reductions read chunk by chunk and agree with numpy; nothing answers silently wrong
(the old ``a == 7`` was False)."""

from __future__ import annotations

import operator

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2
from pyblosc2.errors import ParamError

SETTINGS = settings(max_examples=15, deadline=None)


@st.composite
def partitioned(
    draw: st.DrawFn, dtype: np.dtype | None = None
) -> tuple[np.ndarray, blosc2.NDArray]:
    """A numpy array and an NDArray of it with a random chunk/block partition."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9))
    dt = dtype if dtype is not None else draw(st.sampled_from(["i1", "i4", "u2", "f8", "f4"]))
    elements = (
        st.floats(-100, 100, width=32) if np.dtype(dt).kind == "f" else st.integers(-100, 100)
    )
    if np.dtype(dt).kind == "u":
        elements = st.integers(0, 200)
    data = draw(hnp.arrays(dt, shape, elements=elements))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    return data, blosc2.asarray(data, chunks=chunks, blocks=blocks)


BINARY = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
]
BITWISE = [operator.and_, operator.or_, operator.xor]


def _check(got: object, want: np.ndarray, ulps: bool = False) -> None:
    """``got`` is a lazy expression with numpy's shape and dtype (known before computing),
    whose values, as numpy and as a computed NDArray, are numpy's (``ulps``: within an ulp or
    two, where numexpr computes a transcendental function with its own implementation)."""
    same = (
        (lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-15, atol=1e-300))
        if ulps
        else np.testing.assert_array_equal
    )
    assert isinstance(got, blosc2.LazyExpr)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    values = got[...]
    assert isinstance(values, np.ndarray)
    same(values, want)
    computed = got.compute()
    assert isinstance(computed, blosc2.NDArray)
    assert computed.dtype == want.dtype
    same(computed[...], want)


@pytest.mark.parametrize("op", BINARY + BITWISE, ids=lambda f: f.__name__)
@SETTINGS
@given(pair=partitioned(dtype=np.dtype("i4")), scalar=st.integers(1, 9))
def test_binary_with_scalar_matches_numpy(op, pair, scalar) -> None:
    x, a = pair
    with np.errstate(all="ignore"):
        _check(op(a, scalar), op(x, scalar))
        _check(op(scalar, a), op(scalar, x))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@SETTINGS
@given(pair=partitioned(), data=st.data())
def test_binary_with_arrays_broadcasts_as_numpy(op, pair, data) -> None:
    x, a = pair
    # another NDArray of the same shape, and a numpy array broadcasting over the last axis
    y = data.draw(hnp.arrays("f8", x.shape, elements=st.floats(1, 50)))
    b = blosc2.asarray(y, chunks=tuple(max(1, n // 2) for n in x.shape))
    row = data.draw(hnp.arrays("i2", x.shape[-1:], elements=st.integers(1, 7)))
    with np.errstate(all="ignore"):
        _check(op(a, b), op(x, y))
        _check(op(a, row), op(x, row))
        _check(op(row, a), op(row, x))


def test_python_scalars_are_weak_as_in_numpy() -> None:
    a = blosc2.asarray(np.arange(10, dtype=np.int8))
    assert (a + 1).dtype == np.int8
    assert (a * 2.5).dtype == np.float64
    # numpy >= 2: np.int64 is strong (int64); numpy 1.x casts by value (int8): as numpy does
    assert (a + np.int64(1)).dtype == (np.arange(10, dtype=np.int8) + np.int64(1)).dtype


@pytest.mark.parametrize("op", [operator.neg, operator.pos, abs, operator.invert])
def test_unary_matches_numpy(op) -> None:
    x = np.arange(-20, 20, dtype=np.int16).reshape(4, 10)
    a = blosc2.asarray(x, chunks=(3, 4), blocks=(2, 2))
    _check(op(a), op(x))


def test_power_and_booleans() -> None:
    x = np.arange(12).reshape(3, 4)
    a = blosc2.asarray(x, chunks=(2, 3))
    _check(a**2, x**2)
    _check(2**a, 2**x)
    _check((a > 3) & (a < 9), (x > 3) & (x < 9))
    _check(~(a > 3), ~(x > 3))


def test_issue_examples_are_right() -> None:
    x = np.arange(100) % 10
    a = blosc2.asarray(x, chunks=(7,), blocks=(3,))
    assert np.sum(a == 7) == 10
    assert int((a > 5).sum()) == 40
    assert a.max() == 9


def test_operators_are_lazy_and_read_nothing(monkeypatch) -> None:
    from pyblosc2.ndarray import reader

    reads = []
    real = reader.read_selection
    monkeypatch.setattr(reader, "read_selection", lambda *a: reads.append(a) or real(*a))
    a = blosc2.asarray(np.arange(10.0), chunks=(4,))
    expr = (a + 1) * 2 - np.sin(a)
    assert reads == [] and expr.shape == (10,) and expr.dtype == np.float64
    assert expr.expression == "(((o0 + 1) * 2) - sin(o0))"
    assert isinstance(expr.compute(), blosc2.NDArray) and isinstance(expr[:], np.ndarray)
    assert isinstance(a, blosc2.Operand) and isinstance(expr, blosc2.LazyArray)


@pytest.mark.parametrize("ufunc", [np.sin, np.sqrt, np.add, np.maximum, np.isnan])
def test_ufuncs_go_chunk_by_chunk_and_match_numpy(ufunc) -> None:
    x = np.linspace(0, 5, 60).reshape(6, 10)
    a = blosc2.asarray(x, chunks=(4, 3), blocks=(2, 3))
    args = (a,) if ufunc.nin == 1 else (a, x[0])
    want = ufunc(x) if ufunc.nin == 1 else ufunc(x, x[0])
    _check(ufunc(*args), want, ulps=ufunc in (np.sin, np.sqrt))


def test_ufunc_with_numpy_out_and_multiple_outputs() -> None:
    x = np.arange(6.0)
    a = blosc2.asarray(x, chunks=(4,))
    out = np.empty(6)
    np.add(a, 1, out=out)
    np.testing.assert_array_equal(out, x + 1)
    q, r = np.divmod(a, 4)
    np.testing.assert_array_equal(q, x // 4)
    np.testing.assert_array_equal(r, x % 4)


REDUCTIONS = ["sum", "prod", "min", "max", "any", "all", "mean", "std", "var"]


@pytest.mark.parametrize("name", REDUCTIONS)
@SETTINGS
@given(pair=partitioned(), data=st.data(), keepdims=st.booleans())
def test_reductions_match_numpy(name, pair, data, keepdims) -> None:
    x, a = pair
    axis = data.draw(
        st.none()
        | st.integers(-x.ndim, x.ndim - 1)
        | st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True).map(tuple)
    )
    if name == "prod":  # keep products in range
        x = np.sign(x).astype(x.dtype)
        a = blosc2.asarray(x, chunks=a.chunks, blocks=a.blocks)
    got = getattr(a, name)(axis=axis, keepdims=keepdims)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    rtol = 1e-4 if x.dtype == np.float32 else 1e-9
    # a spread of equal values is 0 exactly or a rounding error of their magnitude
    # (numpy's float32 std of seven 21.66 is 1.9e-06), and var its square
    scale = float(np.abs(x).max(initial=1.0)) if x.dtype.kind == "f" else 1.0
    atol = max(1e-6, rtol * scale ** (2 if name == "var" else 1))
    np.testing.assert_allclose(
        np.asarray(got, float), np.asarray(want, float), rtol=rtol, atol=atol
    )


@pytest.mark.parametrize("func", [np.sum, np.mean, np.min, np.max, np.any, np.all, np.std])
def test_numpy_functions_dispatch_to_the_methods(func) -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    a = blosc2.asarray(x, chunks=(1, 2, 3))
    np.testing.assert_allclose(func(a, axis=1), func(x, axis=1))
    np.testing.assert_allclose(func(a), func(x))


def test_ufunc_reduce_defaults_to_axis_0() -> None:
    x = np.arange(12).reshape(3, 4)
    a = blosc2.asarray(x, chunks=(2, 2))
    for got, want in [
        (np.add.reduce(a), np.add.reduce(x)),
        (np.maximum.reduce(a, axis=1), np.maximum.reduce(x, axis=1)),
        (np.add.accumulate(a), np.add.accumulate(x)),
    ]:
        assert isinstance(got, np.ndarray)  # reductions are computed at once, into numpy
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_reductions_options() -> None:
    x = np.arange(10, dtype=np.int8).reshape(2, 5)
    a = blosc2.asarray(x, chunks=(1, 2))
    assert a.sum(dtype=np.int8).dtype == np.int8
    assert a.var(ddof=1) == pytest.approx(x.var(ddof=1))
    out = np.empty(5)
    assert a.mean(axis=0, out=out) is out
    np.testing.assert_array_equal(out, x.mean(axis=0))
    assert np.isnan(blosc2.asarray(np.array([1.0, np.nan, 2.0]), chunks=(1,)).max())


def test_reductions_of_empty_and_scalar_arrays() -> None:
    e = blosc2.zeros((0, 3))
    assert e.sum() == 0
    np.testing.assert_array_equal(e.sum(axis=0), np.zeros(3))
    with pytest.raises(ValueError):
        e.max()
    s = blosc2.asarray(np.array(5.0))
    assert s.sum() == 5.0
    assert (s + 1) == 6.0


@pytest.mark.parametrize("axis", [3, -4, (0, 0), 1.5])
def test_bad_axis_is_a_param_error(axis) -> None:
    a = blosc2.zeros((2, 3, 4))
    with pytest.raises(ParamError, match="axis"):
        a.sum(axis=axis)


def test_an_axis_out_of_range_is_numpys_axis_error_too() -> None:
    # python-blosc2 raises numpy's AxisError (its tests expect it); ours is both
    with pytest.raises(getattr(np, "exceptions", np).AxisError):
        blosc2.zeros((2, 3)).sum(axis=2)


def test_reductions_take_where_as_numpy() -> None:
    x = np.arange(12.0).reshape(3, 4)
    a = blosc2.asarray(x, chunks=(2, 3), blocks=(1, 3))
    mask = x % 3 == 0
    np.testing.assert_allclose(a.sum(axis=0, where=mask), np.sum(x, axis=0, where=mask))
    np.testing.assert_allclose(a.mean(where=a > 4), np.mean(x, where=x > 4))
    np.testing.assert_allclose(a.var(axis=1, where=mask), np.var(x, axis=1, where=mask))


def test_transpose() -> None:
    """``a.transpose()`` is numpy's (a numpy result); ``a.T`` is python-blosc2's and the
    array API's: a 2-d array's transpose as an NDArray, other dimensions refused
    (tests/unit/test_linalg_layout.py)."""
    x = np.arange(24).reshape(2, 3, 4)
    a = blosc2.asarray(x, chunks=(1, 2, 3))
    np.testing.assert_array_equal(blosc2.asarray(x[0], chunks=(2, 3)).T[...], x[0].T)
    with pytest.raises(ParamError, match="only works for 2-dimensional"):
        a.T  # noqa: B018
    np.testing.assert_array_equal(a.transpose(1, 0, 2), x.transpose(1, 0, 2))
    np.testing.assert_array_equal(a.transpose((2, 0, 1)), x.transpose((2, 0, 1)))
    with pytest.raises(ParamError, match="permutation"):
        a.transpose(0, 0, 1)


def test_ndarrays_stay_hashable_and_unknown_operands_are_refused() -> None:
    a = blosc2.zeros((3,))
    assert {a: 1}[a] == 1
    with pytest.raises(TypeError):
        a + "x"
