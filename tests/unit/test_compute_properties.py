"""Properties of the compute engine: any expression over random operands (NDArrays of random
chunkings, numpy arrays, scalars) broadcasting together equals numpy's result — the values,
the dtype, a random slice of it, its reductions over a random axis — built with the operators
or from a string."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2

SETTINGS = settings(max_examples=25, deadline=None)
DTYPES = ["f8", "f4", "i4", "i8", "i2", "u1"]


@st.composite
def operands(draw: st.DrawFn) -> tuple[list[np.ndarray], list[object]]:
    """1-3 numpy arrays broadcasting to a common shape, and each as the engine takes it: an
    NDArray of random chunks and blocks, the numpy array itself, or (0-d) a scalar."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=7))
    arrays, ops = [], []
    for _ in range(draw(st.integers(1, 3))):
        lead = draw(st.integers(0, len(shape) - 1))
        own = tuple(
            1 if draw(st.booleans()) and i < len(shape) - 1 else n
            for i, n in enumerate(shape[lead:])
        )
        dt = np.dtype(draw(st.sampled_from(DTYPES)))
        elements = (
            st.integers(1, 9) if dt.kind in "iu" else st.floats(0.5, 9, width=dt.itemsize * 8)
        )
        x = draw(hnp.arrays(dt, own, elements=elements))
        arrays.append(x)
        kind = draw(st.sampled_from(["ndarray", "ndarray", "numpy"]))
        if kind == "ndarray":
            chunks = tuple(draw(st.integers(1, n)) for n in own)
            blocks = tuple(draw(st.integers(1, c)) for c in chunks)
            ops.append(blosc2.asarray(x, chunks=chunks, blocks=blocks))
        else:
            ops.append(x)
    return arrays, ops


# (numpy function, lazy builder) pairs: binary, unary, where
BINARY = [
    (np.add, lambda a, b: a + b),
    (np.subtract, lambda a, b: a - b),
    (np.multiply, lambda a, b: a * b),
    (np.true_divide, lambda a, b: a / b),
    (np.maximum, blosc2.maximum),
    (np.minimum, blosc2.minimum),
    (np.hypot, blosc2.hypot),
]
UNARY = [
    (np.sin, blosc2.sin),
    (np.sqrt, blosc2.sqrt),
    (np.negative, lambda a: -a),
    (np.exp, blosc2.exp),
    (np.abs, abs),
    (np.square, blosc2.square),
]


@st.composite
def expressions(draw: st.DrawFn) -> tuple[np.ndarray, object, bool]:
    """A random expression: the numpy result, the lazy expression, and whether a float32 or
    narrow integer operand takes part (numexpr computes float32 with an integer partner in
    float32 where numpy widens to float64, and a function of int8/int16 in float64 where
    numpy computes it in float16/float32; python-blosc2 computes as numexpr: values agree
    within the narrower precision)."""
    arrays, ops = draw(operands())
    narrow = (np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint16)
    low = any(np.asarray(a).dtype in narrow for a in arrays)
    ref: list[object] = list(arrays)
    lazy: list[object] = list(ops)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(ref) - 1))
        what = draw(st.sampled_from(["binary", "unary", "scalar", "where"]))
        if what == "binary" and len(ref) > 1:
            j = draw(st.integers(0, len(ref) - 1))
            f, g = draw(st.sampled_from(BINARY))
            ref[i], lazy[i] = f(ref[i], ref[j]), g(lazy[i], lazy[j])
        elif what == "unary":
            f, g = draw(st.sampled_from(UNARY))
            ref[i], lazy[i] = f(ref[i]), g(lazy[i])
        elif what == "scalar":
            c = draw(st.sampled_from([2, 3, 0.5]))
            ref[i], lazy[i] = ref[i] * c + 1, lazy[i] * c + 1
        else:
            j = draw(st.integers(0, len(ref) - 1))
            ref[i] = np.where(ref[i] > 3, ref[i], ref[j])
            lazy[i] = blosc2.where(lazy[i] > 3, lazy[i], lazy[j])
    return np.asarray(ref[0]), lazy[0], low


def _close(got: np.ndarray, want: np.ndarray, dtype: object = None, low: bool = False) -> None:
    low = low or np.dtype(dtype or np.result_type(want)) in (np.float32, np.float16)
    rtol = 2e-3 if low else 1e-9
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


@SETTINGS
@given(case=expressions())
def test_any_expression_equals_numpy(case) -> None:
    with np.errstate(all="ignore"):
        want, lazy, low = case
        if not isinstance(lazy, blosc2.LazyExpr):
            return  # no operation drawn on an operand that is a plain array
        assert lazy.shape == want.shape
        assert lazy.dtype == want.dtype
        got = lazy[...]
        _close(got, want, low=low)
        _close(lazy.compute()[...], want, low=low)


@SETTINGS
@given(case=expressions(), data=st.data())
def test_a_slice_of_an_expression_is_the_slice_of_numpys(case, data) -> None:
    with np.errstate(all="ignore"):
        want, lazy, low = case
        if not isinstance(lazy, blosc2.LazyExpr):
            return
        key = tuple(
            data.draw(
                st.one_of(
                    st.integers(-n, n - 1),
                    st.builds(
                        slice,
                        st.none() | st.integers(-n, n),
                        st.none() | st.integers(-n, n),
                        st.none() | st.integers(1, 3) | st.integers(-3, -1),
                    ),
                )
            )
            for n in want.shape
        )
        _close(lazy[key], want[key], low=low)


@SETTINGS
@given(case=expressions(), data=st.data())
def test_reductions_of_expressions_equal_numpys(case, data) -> None:
    with np.errstate(all="ignore"):
        want, lazy, low = case
        if not isinstance(lazy, blosc2.LazyExpr):
            return
        name = data.draw(st.sampled_from(["sum", "mean", "min", "max", "std", "argmax", "any"]))
        axis = data.draw(st.none() | st.integers(0, want.ndim - 1))
        got = getattr(lazy, name)(axis=axis)
        ref = getattr(np, name)(want, axis=axis)
        assert np.asarray(got).dtype == np.asarray(ref).dtype
        _close(np.asarray(got, float), np.asarray(ref, float), want.dtype, low=low)


@SETTINGS
@given(
    arrays=hnp.arrays(
        "f8", hnp.array_shapes(min_dims=1, max_dims=3, max_side=9), elements=st.floats(-5, 5)
    ),
    data=st.data(),
)
def test_a_string_expression_equals_numpy(arrays, data) -> None:
    chunks = tuple(data.draw(st.integers(1, n)) for n in arrays.shape)
    a = blosc2.asarray(arrays, chunks=chunks)
    b = arrays[..., :1] + 1  # a numpy operand broadcasting over the last axis
    text = data.draw(
        st.sampled_from(
            [
                "a * 2 + b",
                "sin(a) ** 2 + cos(b) ** 2",
                "where(a > 0, a, b - 1)",
                "(a > 1) & (b < 3) | ~(a < -1)",
                "a + sum(a, axis=0) - max(b)",
                "a[..., ::2].mean()" if arrays.shape[-1] > 1 else "mean(a)",
                "abs(a) // 2 % 3",
            ]
        )
    )
    lazy = blosc2.lazyexpr(text, {"a": a, "b": b})
    want = blosc2.lazyexpr(text, {"a": arrays, "b": b})[()]  # all-numpy operands
    ref = eval(  # the reference: numpy itself
        text.replace("sin(", "np.sin(")
        .replace("cos(", "np.cos(")
        .replace("where(", "np.where(")
        .replace("sum(", "np.sum(")
        .replace("max(b)", "np.max(b)")
        .replace("abs(", "np.abs(")
        .replace("mean(a)", "np.mean(a)"),
        {"np": np, "a": arrays, "b": b},
    )
    assert lazy.dtype == np.asarray(ref).dtype
    _close(lazy[()], ref)
    _close(want, ref)
