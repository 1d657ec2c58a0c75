"""compute/reductions.py: every reduction agrees with numpy over random arrays of random
partitions (axis, keepdims, dtype, NaNs, empty axes), cumulative ones carry across pieces,
argmin/argmax take the first extreme, and the results do not depend on the thread count."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2
from pyblosc2.compute.api import npcumprod, npcumsum
from pyblosc2.errors import ParamError

SETTINGS = settings(max_examples=15, deadline=None)


@st.composite
def partitioned(draw: st.DrawFn, nan: bool = False) -> tuple[np.ndarray, blosc2.NDArray]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=8))
    dt = draw(st.sampled_from(["f8", "f4", "i4", "i2", "u1", "?"]))
    if np.dtype(dt).kind == "f":
        elements = st.floats(-50, 50, width=np.dtype(dt).itemsize * 8)
        if nan:
            elements = elements | st.just(float("nan"))
    elif dt == "?":
        elements = st.booleans()
    else:
        elements = st.integers(0, 20)
    x = draw(hnp.arrays(dt, shape, elements=elements))
    chunks = tuple(draw(st.integers(1, n)) for n in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    return x, blosc2.asarray(x, chunks=chunks, blocks=blocks)


def _axis(draw: st.DrawFn, ndim: int, single: bool = False) -> object:
    if single:
        return draw(st.none() | st.integers(-ndim, ndim - 1))
    return draw(
        st.none()
        | st.integers(-ndim, ndim - 1)
        | st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(tuple)
    )


def _same(got: object, want: object) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    rtol = 1e-3 if want.dtype in (np.float32, np.float16) else 1e-9
    np.testing.assert_allclose(got.astype(float), want.astype(float), rtol=rtol, atol=1e-4)


@pytest.mark.parametrize(
    "name", ["sum", "prod", "mean", "std", "var", "min", "max", "any", "all", "count_nonzero"]
)
@SETTINGS
@given(pair=partitioned(nan=True), data=st.data(), keepdims=st.booleans())
def test_reductions_agree_with_numpy(name, pair, data, keepdims) -> None:
    x, a = pair
    if name == "prod":
        x = np.clip(x, -2, 2).astype(x.dtype)
        a = blosc2.asarray(x, chunks=a.chunks, blocks=a.blocks)
    axis = _axis(data.draw, x.ndim)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        got = getattr(blosc2, name)(a, axis=axis, keepdims=keepdims)
    _same(got, want)


@pytest.mark.parametrize("name", ["argmin", "argmax"])
@SETTINGS
@given(pair=partitioned(nan=True), data=st.data(), keepdims=st.booleans())
def test_arg_reductions_take_the_first_extreme(name, pair, data, keepdims) -> None:
    x, a = pair
    axis = _axis(data.draw, x.ndim, single=True)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    got = getattr(a, name)(axis=axis, keepdims=keepdims)
    assert np.asarray(got).dtype == np.int64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@SETTINGS
@given(pair=partitioned(), data=st.data(), include=st.booleans())
def test_cumulative_reductions_carry_across_pieces(name, pair, data, include) -> None:
    x, a = pair
    if x.dtype == np.float32 or x.dtype == np.float16:
        return  # float32 running sums differ by rounding from numpy's order
    if name == "cumulative_prod":
        x = np.clip(x, 0, 2).astype(x.dtype)
        a = blosc2.asarray(x, chunks=a.chunks, blocks=a.blocks)
    axis = data.draw(st.integers(0, x.ndim - 1))
    ref = npcumsum if name == "cumulative_sum" else npcumprod  # numpy's, before numpy 2.1 too
    want = ref(x, axis=axis, include_initial=include)
    got = getattr(a, name)(axis=axis, include_initial=include)
    _same(got, want)


def test_cumulative_needs_an_axis_beyond_one_dimension() -> None:
    with pytest.raises(ParamError, match="axis"):
        blosc2.zeros((2, 3)).cumulative_sum()
    np.testing.assert_array_equal(blosc2.asarray([1, 2, 3]).cumulative_sum(), [1, 3, 6])


def test_dtype_keyword_and_results_of_integers() -> None:
    x = np.arange(10, dtype=np.int8).reshape(2, 5)
    a = blosc2.asarray(x, chunks=(1, 2))
    _same(a.sum(dtype=np.int8), x.sum(dtype=np.int8))
    _same(a.mean(axis=1, dtype=np.float32), x.mean(axis=1, dtype=np.float32))
    _same(a.sum(), x.sum())  # int8 sums in int64, as numpy
    _same(blosc2.asarray(np.array([True, True])).sum(), np.array([True, True]).sum())


def test_empty_reductions_are_numpys() -> None:
    e = blosc2.zeros((0, 3))
    _same(e.sum(axis=0), np.zeros((0, 3)).sum(axis=0))
    with pytest.raises(ValueError):
        e.max()
    with pytest.raises(ValueError):
        e.argmax()


def test_item_where_out_and_storage_keywords(tmp_path) -> None:
    x = np.arange(60.0).reshape(6, 10)
    a = blosc2.asarray(x, chunks=(4, 3), blocks=(2, 3))
    _same(a.sum(item=(slice(1, 5), 3)), x[1:5, 3].sum())
    _same(a.max(item=(0, slice(2, 9, 3)), axis=0), x[0, 2:9:3].max(axis=0))
    _same(a.min(axis=0, where=a > 20), np.min(x, axis=0, where=x > 20, initial=np.inf))
    out = np.empty(10)
    assert a.mean(axis=0, out=out) is out
    _same(out, x.mean(axis=0))
    r = a.std(axis=1, urlpath=str(tmp_path / "s.b2nd"), mode="w")
    assert isinstance(r, blosc2.NDArray)
    _same(blosc2.open(str(tmp_path / "s.b2nd"))[:], x.std(axis=1))


def test_results_do_not_depend_on_the_thread_count() -> None:
    x = np.random.default_rng(1).random((37, 41))
    results = []
    for n in (1, 2, 4):
        a = blosc2.asarray(x, chunks=(5, 7), blocks=(5, 7), dparams={"nthreads": n})
        results.append((a.sum(), a.var(axis=0).tobytes(), (a * 2).argmax()))
    assert results[0] == results[1] == results[2]
