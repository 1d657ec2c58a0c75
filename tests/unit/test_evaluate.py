"""``evaluate`` (compute/api.py): numpy results, the caller's variables, reductions inside
the expression, ``out=`` as an NDArray or a numpy array, chunk-by-chunk reads."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2
from pyblosc2.errors import ParamError

X = np.arange(60.0).reshape(6, 10)
Y = np.linspace(-1, 1, 10)


@pytest.fixture
def a() -> blosc2.NDArray:
    return blosc2.asarray(X, chunks=(4, 3), blocks=(2, 3))


@pytest.fixture
def b() -> blosc2.NDArray:
    return blosc2.asarray(Y, chunks=(4,), blocks=(2,))


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ("a * b + 2 * c", X * Y + 6.0),
        ("sin(a) + sqrt(abs(b))", np.sin(X) + np.sqrt(np.abs(Y))),
        ("where(a > 30, a, -a)", np.where(X > 30, X, -X)),
        ("(a > 10) & (a < 20) | ~(b < 0)", ((X > 10) & (X < 20)) | ~(Y < 0)),
        ("-a ** 2 // 7 % 5", -(X**2) // 7 % 5),
        ("10 < a <= 40", (X > 10) & (X <= 40)),
        ("a + sum(b)", X + Y.sum()),
        ("sum(a, axis=0) * b", X.sum(axis=0) * Y),
        ("sum(a > 7)", np.sum(X > 7)),
        ("mean(a * 2) - max(b) + min(a)", (X * 2).mean() - Y.max() + X.min()),
        ("std(a, axis=1)", X.std(axis=1)),
        ("any(a > 58) & all(b < 2)", True),
        ("prod(b + 2)", np.prod(Y + 2)),
    ],
)
def test_expressions_match_numpy(a, b, expr, want) -> None:
    got = blosc2.evaluate(expr, {"a": a, "b": b, "c": 3.0})
    assert isinstance(got, np.ndarray | np.generic)
    np.testing.assert_allclose(got, want)


def test_returns_numpy_and_uses_the_callers_variables(a) -> None:
    b = np.ones(10)  # noqa: F841 (a local operand evaluate finds in this frame)
    got = blosc2.evaluate("a - b")
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, X - 1)


def test_local_dict_wins_over_the_caller(a) -> None:
    got = blosc2.evaluate("a + 1", {"a": np.zeros(2)})
    np.testing.assert_array_equal(got, [1.0, 1.0])


def test_out_numpy_is_filled_and_returned(a) -> None:
    out = np.zeros(X.shape)
    assert blosc2.evaluate("a * 2", out=out) is out
    np.testing.assert_array_equal(out, X * 2)


def test_out_ndarray_is_filled_and_returned(a, b) -> None:
    out = blosc2.zeros(X.shape, np.float32, chunks=(3, 5))
    assert blosc2.evaluate("a + b", out=out) is out
    np.testing.assert_allclose(out[...], (X + Y).astype(np.float32))


def test_numpy_casting_rules() -> None:
    i8 = blosc2.asarray(np.arange(5, dtype=np.int8))  # noqa: F841 (used by name)
    assert blosc2.evaluate("i8 + 1").dtype == np.int8
    assert blosc2.evaluate("i8 / 2").dtype == np.float64


def test_reads_each_chunk_once_per_output_chunk(monkeypatch, a, b) -> None:
    from pyblosc2.ndarray import reader

    reads = []
    original = reader._read_chunk

    def spy(frame, geo, task, out):
        reads.append(task)
        return original(frame, geo, task, out)

    monkeypatch.setattr(reader, "_read_chunk", spy)
    blosc2.evaluate("a * b")
    assert 0 < len(reads) <= 2 * (a.schunk.nchunks + b.schunk.nchunks)


@settings(max_examples=20, deadline=None)
@given(
    x=hnp.arrays(
        "f8", hnp.array_shapes(min_dims=1, max_dims=3, max_side=8), elements=st.floats(-9, 9)
    )
)
def test_property_elementwise_and_sum(x) -> None:
    chunks = tuple(max(1, n // 2) for n in x.shape)
    a = blosc2.asarray(x, chunks=chunks)
    np.testing.assert_allclose(blosc2.evaluate("a * a - 3", {"a": a}), x * x - 3)
    np.testing.assert_allclose(blosc2.evaluate("sum(a * 2)", {"a": a}), np.sum(x * 2), atol=1e-9)


@pytest.mark.parametrize(
    ("expr", "match"),
    [
        ("x +* 1", "is not valid"),
        ("__import__('os')", "is not allowed: function '__import__'"),
        ("x.real", "attribute .real"),
        ("nope + 1", "'nope'"),
        ("sum()", "needs an operand"),
        ("sum(x, bogus=True)", "no keyword 'bogus'"),
        ("sum(x, axis=x)", "literal"),
        ("x + 'a'", "does not take operands"),
        ("x + np.load('f')", "function 'load'"),
        ("[i for i in x]", "ListComp"),
        ("(lambda: 1)()", "call of"),
    ],
)
def test_bad_expressions_are_param_errors(expr, match) -> None:
    with pytest.raises(ParamError, match=match):
        blosc2.evaluate(expr, {"x": np.arange(3)})


def test_bad_arguments() -> None:
    with pytest.raises(ParamError, match="out"):
        blosc2.evaluate("x + 1", {"x": np.arange(3)}, out=[0, 0, 0])
    with pytest.raises(ParamError, match="shape"):
        blosc2.evaluate("x + 1", {"x": np.arange(3)}, out=blosc2.zeros((4,)))
    with pytest.raises(ParamError, match="unknown evaluate"):
        blosc2.evaluate("x + 1", {"x": np.arange(3)}, bogus=1)
    # numexpr's keywords are accepted (casting follows numpy)
    np.testing.assert_array_equal(
        blosc2.evaluate("x + 1", {"x": np.arange(3)}, casting="unsafe"), [1, 2, 3]
    )


def test_pieces_go_to_the_thread_pool(monkeypatch) -> None:
    import pyblosc2.compute.blockwise as blockwise
    from pyblosc2._threads import pool_of

    sizes: list[int] = []
    submitted: list[object] = []

    class Spy:
        def __init__(self, n: int) -> None:
            self.pool = pool_of(n)

        def submit(self, fn, *args):
            submitted.append(args)
            return self.pool.submit(fn, *args)

    def spy_pool_of(n: int) -> Spy:
        sizes.append(n)
        return Spy(n)

    monkeypatch.setattr(blockwise, "pool_of", spy_pool_of)
    a = blosc2.asarray(X, chunks=(2, 5), blocks=(1, 5), dparams={"nthreads": 3})
    np.testing.assert_array_equal(blosc2.evaluate("a + 1", {"a": a}), X + 1)
    # 6 chunks, at most three at a time on a pool of 3 threads (a sliding window)
    assert sizes and set(sizes) == {3}
    assert len(submitted) == 6
