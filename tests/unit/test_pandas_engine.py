"""pandas' engine protocol for jit (pyblosc2.compute.pandas_engine) and the row idiom of DSL
kernels (pyblosc2.dsl.rowidiom): ``df.apply(f, engine=jit)`` and ``s.map(f, engine=jit)``
give pandas' own answers (its default engine is the oracle), argument errors are pyblosc2's.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyblosc2 as pb
from pyblosc2.compute.pandas_engine import PandasUdfEngine, RowProxy
from pyblosc2.dsl import DSLKernel, DSLSyntaxError
from pyblosc2.dsl.rowidiom import rewrite_row_subscripts
from pyblosc2.errors import ParamError, ParamTypeError
from tests.bounded import run_child

pd = pytest.importorskip("pandas")
needs_pandas3 = pytest.mark.skipif(
    int(pd.__version__.split(".")[0]) < 3, reason="engine= is pandas 3's"
)

FLOATS = st.floats(-1e6, 1e6, allow_nan=False, width=64)


def frames(min_rows: int = 1) -> Any:
    return hnp.arrays(
        np.float64, st.tuples(st.integers(min_rows, 30), st.integers(1, 4)), elements=FLOATS
    )


# -- the adapter over numpy data ---------------------------------------------------------------


@given(hnp.arrays(np.int64, st.integers(0, 50), elements=st.integers(-1000, 1000)))
@settings(max_examples=25, deadline=None)
def test_map_is_the_vectorized_function(values: np.ndarray) -> None:
    got = PandasUdfEngine.map(values, lambda x, k: x * k + 1, (3,), {}, pb.jit, False)
    np.testing.assert_array_equal(got, values * 3 + 1)


@given(frames(), st.sampled_from([0, 1, None]))
@settings(max_examples=25, deadline=None)
def test_apply_over_ndarray_by_axis(values: np.ndarray, axis: Any) -> None:
    got = PandasUdfEngine.apply(values, lambda x: x * 2.0 - 1.0, (), {}, pb.jit, axis)
    np.testing.assert_allclose(got, values * 2.0 - 1.0)


def test_map_na_action_ignore_not_built() -> None:
    with pytest.raises(NotImplementedError, match="na_action='ignore'"):
        PandasUdfEngine.map(np.ones(2), lambda x: x, (), {}, pb.jit, True)


@pytest.mark.parametrize("axis", [2, -1, "rows", 0.5])
def test_apply_bad_axis_names_it(axis: Any) -> None:
    with pytest.raises(ParamError, match="axis must be"):
        PandasUdfEngine.apply(np.ones((2, 2)), lambda x: x, (), {}, pb.jit, axis)


def test_non_numeric_data_refused() -> None:
    with pytest.raises(ParamTypeError, match="numeric dtype"):
        PandasUdfEngine.map(np.array(["a"]), lambda x: x, (), {}, pb.jit, False)
    with pytest.raises(ParamTypeError, match="not supported"):
        PandasUdfEngine.map([1, 2], lambda x: x, (), {}, pb.jit, False)


def test_engine_on_jit_and_on_a_configured_jit() -> None:
    assert getattr(pb.jit, "__pandas_udf__", None) is PandasUdfEngine
    assert getattr(pb.jit(strict=True), "__pandas_udf__", None) is PandasUdfEngine


def test_import_pyblosc2_does_not_import_pandas() -> None:
    code = "import sys, pyblosc2; print('pandas' in sys.modules)"
    out = run_child([sys.executable, "-c", code], "import pyblosc2", capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# -- through pandas ----------------------------------------------------------------------------


def _shift(col: Any) -> Any:
    return col * 2.0 + 1.0


def _branch(col: Any) -> Any:  # a DSL kernel: no ternary there
    if col >= 0:  # noqa: SIM108
        out = col + 1.0
    else:
        out = col - 1.0
    return out


def _row_sum(row: Any) -> Any:
    return row["a"] * 2.0 + row["b"]


def _row_branch(row: Any) -> Any:
    if row["a"] > row["b"]:
        return row["a"] - row["b"]
    return row["b"] * 2.0


@needs_pandas3
@given(frames(), st.sampled_from([0, 1]))
@settings(max_examples=20, deadline=None)
def test_apply_matches_pandas(values: np.ndarray, axis: int) -> None:
    df = pd.DataFrame(values, columns=[f"c{i}" for i in range(values.shape[1])])
    got = df.apply(_shift, engine=pb.jit, axis=axis)
    pd.testing.assert_frame_equal(got, df.apply(_shift, axis=axis))
    # a branch is per element with jit (a DSL kernel); pandas' own engine needs np.where
    expected = df.apply(lambda c: np.where(c >= 0, c + 1.0, c - 1.0))
    pd.testing.assert_frame_equal(df.apply(_branch, engine=pb.jit), expected)


@needs_pandas3
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 30), st.just(2)), elements=FLOATS))
@settings(max_examples=20, deadline=None)
def test_row_idiom_matches_pandas(values: np.ndarray) -> None:
    df = pd.DataFrame(values, columns=["a", "b"])
    for func in (_row_sum, _row_branch):  # traced; a DSL kernel over the columns
        got = df.apply(func, engine=pb.jit, axis=1)
        pd.testing.assert_series_equal(got, df.apply(func, axis=1))


@needs_pandas3
@given(hnp.arrays(np.float64, st.integers(1, 40), elements=FLOATS))
@settings(max_examples=20, deadline=None)
def test_series_map_matches_pandas(values: np.ndarray) -> None:
    s = pd.Series(values)
    got = s.map(_branch, engine=pb.jit)
    np.testing.assert_allclose(got.to_numpy(), np.where(values >= 0, values + 1.0, values - 1.0))


def test_row_idiom_keeps_each_column_dtype() -> None:
    df = pd.DataFrame({"i": np.array([1, 2], dtype=np.int8), "f": [0.5, 0.25]})
    row = RowProxy(df)
    assert row["i"].dtype == np.int8 and row["f"].dtype == np.float64


def test_row_proxy_refusals() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0], "t": pd.to_datetime(["2020-01-01", "2020-01-02"])})
    row = RowProxy(df)
    with pytest.raises(ParamTypeError, match="by name"):
        row[0]
    with pytest.raises(KeyError, match="no such column"):
        row["zz"]
    with pytest.raises(ParamError, match="cannot vectorize"):
        row["t"]
    with pytest.raises(AttributeError, match=r"row\['a'\]"):
        row.a  # noqa: B018
    dup = pd.DataFrame(np.ones((2, 2)), columns=["a", "a"])
    with pytest.raises(KeyError, match="duplicated"):
        RowProxy(dup)["a"]
    with pytest.raises(ParamError, match="contains nulls"):
        RowProxy(pd.DataFrame({"s": ["x", None]}))["s"]
    with pytest.raises(ParamError, match="cannot vectorize"):  # not text, as in python-blosc2
        RowProxy(pd.DataFrame({"c": pd.Categorical(["x", "y"])}))["c"]


def test_row_idiom_over_text_columns_traced() -> None:
    df = pd.DataFrame({"s": ["ab", "c"], "o": np.array(["x", "yz"], dtype=object)})
    assert RowProxy(df)["s"].dtype.kind == "U" and RowProxy(df)["o"].dtype.kind == "U"
    got = PandasUdfEngine.apply(df, lambda r: r["s"] + "-" + r["o"], (), {}, pb.jit, 1)
    assert got.tolist() == ["ab-x", "c-yz"]


@needs_pandas3
def test_row_idiom_with_a_loop_refused() -> None:
    def loop(row: Any) -> Any:
        e = row["a"]
        for _ in range(3):
            e = e + 1
        return e

    with pytest.raises(ParamTypeError, match="for/while loop"):
        pd.DataFrame({"a": [1.0]}).apply(loop, engine=pb.jit, axis=1)


def test_wide_frame_hint_on_both_routes() -> None:
    @pb.jit
    def traced(a: Any, b: Any) -> Any:
        return a + b

    @pb.jit
    def dsl(a: Any, b: Any) -> Any:
        if a > b:
            return a
        return b

    cols = {"a": np.ones(2), "b": np.zeros(2), "extra": np.ones(2)}
    for func in (traced, dsl):
        with pytest.raises(TypeError) as info:
            func(**cols)
        text = "\n".join([str(info.value), *getattr(info.value, "__notes__", [])])
        assert "**df[['a', 'b']]" in text


def test_strict_refuses_a_non_dsl_function_through_pandas() -> None:
    def not_dsl(col: Any) -> Any:
        return np.where(col >= 0, col.mean(), col)

    with pytest.raises(DSLSyntaxError):
        PandasUdfEngine.apply(np.ones((2, 2)), not_dsl, (), {}, pb.jit(strict=True), 0)


# -- the row idiom in DSL kernels --------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "name"),
    [("a", "a"), ("room type", "_col0"), ("if", "_col0"), ("_i0", "_col0"), ("row", "_col0")],
)
def test_row_rewrite_parameter_names(label: str, name: str) -> None:
    src = f"def f(row):\n    return row[{label!r}] + 1"
    got = rewrite_row_subscripts(src, ("row",))
    assert got is not None and got[1] == {name: label}
    assert got[0].splitlines()[0] == f"def f({name}):"


@pytest.mark.parametrize(
    "body",
    ["row[0]", "row.a", "row", "row['a'] + row[1]", "len(row)"],
)
def test_row_rewrite_not_applicable(body: str) -> None:
    assert rewrite_row_subscripts(f"def f(row):\n    return {body}", ("row",)) is None


def test_row_rewrite_needs_one_parameter() -> None:
    assert rewrite_row_subscripts("def f(row, k):\n    return row['a']", ("row", "k")) is None


def test_row_kernel_runs_over_columns() -> None:
    k = DSLKernel(_row_branch)
    assert k.row_param == "row" and k.row_columns == {"a": "a", "b": "b"}
    a, b = np.array([3.0, 1.0]), np.array([1.0, 5.0])
    out = np.empty(2)
    k((a, b), out, (0,))
    np.testing.assert_array_equal(out, [2.0, 10.0])
