"""CTable.group_by (pyblosc2/ctable/groupby.py): every reduction against a pandas reference
over random tables (hypothesis), key kinds, views, ordering, UDFs, persistent results and the
errors of bad requests."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2
from pyblosc2.ctable import CTable
from pyblosc2.errors import ParamError

pd = pytest.importorskip("pandas")


@dataclasses.dataclass
class Row:
    k1: int = blosc2.field(blosc2.int16())
    k2: str = blosc2.field(blosc2.string(max_length=4))
    v: float = blosc2.field(blosc2.float64(), default=0.0)
    q: int = blosc2.field(blosc2.int32(), default=0)


def _rows(out: CTable) -> list[tuple]:
    return [tuple(out[name][i].item() for name in out.col_names) for i in range(len(out))]


def _frame(t: CTable) -> pd.DataFrame:
    return pd.DataFrame({n: t[n][:] for n in t.col_names})


_row = st.tuples(
    st.integers(-3, 3),
    st.sampled_from(["a", "b", "cc", ""]),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.integers(-1000, 1000),
)


@pytest.mark.parametrize("keys", [["k1"], ["k2"], ["k1", "k2"]])
@settings(max_examples=30, deadline=None)
@given(st.lists(_row, max_size=60), st.lists(st.integers(0, 59), max_size=10))
def test_reductions_match_pandas(keys: list[str], data: list[tuple], deleted: list[int]) -> None:
    t = CTable(Row, new_data=data)
    gone = sorted({i for i in deleted if i < len(data)})
    if gone:
        t.delete(gone)
    out = t.group_by(keys).agg(
        {"q": ["sum", "min", "max", "argmin", "argmax", "count"], "v": ["mean", "sum"]},
        n=("*", "size"),
    )
    df = _frame(t).reset_index(drop=True)
    g = df.groupby(keys, sort=True)
    ref = pd.DataFrame(
        {
            "q_sum": g["q"].sum(),
            "q_min": g["q"].min(),
            "q_max": g["q"].max(),
            "q_argmin": g["q"].idxmin(),
            "q_argmax": g["q"].idxmax(),
            "q_count": g["q"].count(),
            "v_mean": g["v"].mean(),
            "v_sum": g["v"].sum(),
            "n": g.size(),
        }
    ).reset_index()
    assert out.col_names == [*keys, *ref.columns[len(keys) :]]
    assert len(out) == len(ref)
    for name in out.col_names:
        got, want = out[name][:], ref[name].to_numpy()
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)
        else:
            assert got.tolist() == want.tolist(), name


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([0.5, -1.0, np.nan, 2.0]), st.floats(0, 10)), max_size=30)
)
def test_float_keys_nan_dropped_or_kept(data: list[tuple]) -> None:
    @dataclasses.dataclass
    class F:
        k: float = 0.0
        v: float = 0.0

    t = CTable(F, new_data=data)
    df = pd.DataFrame(
        {
            "k": np.array([r[0] for r in data], dtype=float),
            "v": np.array([r[1] for r in data], dtype=float),
        }
    )
    dropped = t.group_by("k").sum("v")
    ref = df.groupby("k", sort=True)["v"].sum()
    assert dropped.k[:].tolist() == ref.index.tolist()
    np.testing.assert_allclose(dropped.v_sum[:], ref.to_numpy(dtype=float))
    kept = t.group_by("k", dropna=False).size()
    ref_kept = df.groupby("k", sort=True, dropna=False).size()
    assert kept["size"][:].tolist() == ref_kept.tolist()
    assert len(kept) == len(dropped) + int(df["k"].isna().any())


def test_views_deleted_rows_and_logical_argmax() -> None:
    t = CTable(
        Row, new_data=[(1, "a", 5.0, 1), (1, "a", 9.0, 2), (2, "b", 1.0, 3), (1, "a", 9.0, 4)]
    )
    t.delete(0)
    view = t.where(t.q >= 2)
    out = view.group_by("k1").agg({"v": ["argmax", "argmin"]})
    assert _rows(out) == [(1, 0, 0), (2, 1, 1)]  # ties keep the first row of the view


def test_order_sorted_and_first_seen() -> None:
    t = CTable(Row, new_data=[(3, "z", 0.0, 0), (1, "a", 0.0, 0), (2, "m", 0.0, 0)])
    assert t.group_by("k2").size().k2[:].tolist() == ["a", "m", "z"]
    assert t.group_by("k2", sort=False).size().k2[:].tolist() == ["z", "a", "m"]
    assert t.group_by("k1", sort=False).size().k1[:].tolist() == [1, 2, 3]  # ints ascending


def test_string_min_max_and_empty_table() -> None:
    t = CTable(Row, new_data=[(1, "b", 0.0, 0), (1, "a", 0.0, 0), (2, "c", 0.0, 0)])
    assert _rows(t.group_by("k1").agg({"k2": ["min", "max"]})) == [(1, "a", "b"), (2, "c", "c")]
    empty = CTable(Row).group_by("k2").agg({"v": "mean"}, n=("*", "size"))
    assert empty.col_names == ["k2", "v_mean", "n"] and len(empty) == 0


def test_reduction_functions_as_ops_and_column_objects() -> None:
    t = CTable(Row, new_data=[(1, "a", 1.0, 1), (1, "a", 3.0, 2)])
    out = t.group_by(t.k1).agg([(t.v, [blosc2.sum, "mean"])], top=(t.q, blosc2.max))
    assert _rows(out) == [(1, 4.0, 2.0, 2)]


def test_udf_once_per_group_with_its_values() -> None:
    seen = []

    def spread(a: np.ndarray) -> float:
        seen.append(sorted(a.tolist()))
        return float(a.max() - a.min())

    t = CTable(Row, new_data=[(1, "a", 1.0, 0), (2, "a", 7.0, 0), (1, "a", 4.0, 0)])
    out = t.group_by("k1", chunk_size=1).agg(r=("v", spread), total=("v", "sum"))
    assert _rows(out) == [(1, 3.0, 5.0), (2, 0.0, 7.0)]
    assert seen == [[1.0, 4.0], [7.0]]
    typed = t.group_by("k1").agg(r=("v", lambda a: a.sum(), blosc2.float32()))
    assert typed.r.dtype == np.float32


def test_udf_errors() -> None:
    t = CTable(Row, new_data=[(1, "a", 1.0, 0), (2, "b", 2.0, 0)])
    g = t.group_by("k2")
    with pytest.raises(ValueError, match="never called"):
        g.agg(x=("v", lambda a: None))
    with pytest.raises(ValueError, match="inconsistent or unsupported"):
        g.agg(x=("v", lambda a: [1, 2] if a[0] == 1.0 else 3.0))
    with pytest.raises(ValueError, match="Cannot infer a CTable dtype"):
        g.agg(x=("v", lambda a: "text"))
    with pytest.raises(RuntimeError, match=r"raised for group \('a',\)"):
        g.agg(x=("v", lambda a: 1 / 0))
    with pytest.raises(ValueError, match="Unsupported aggregation function"):
        g.agg({"v": lambda a: a.sum()})
    with pytest.raises(ValueError, match="Unsupported aggregation function"):
        g.agg([("v", np.sum)])


def test_udf_none_is_null_of_the_output() -> None:
    t = CTable(Row, new_data=[(1, "a", 1.0, 0), (2, "b", 30.0, 0)])
    out = t.group_by("k1").agg(x=("v", lambda a: None if a.sum() > 20 else float(a.sum())))
    assert out.x[0] == 1.0 and math.isnan(out.x[1])


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((), {}, "requires a mapping"),
        (("v",), {}, "mapping or a list"),
        (([("v",)],), {}, r"\(column, ops\) pairs"),
        (({"v": "median"},), {}, "Unsupported aggregation 'median'"),
        (({"*": "sum"},), {}, "Only the 'size'"),
        ((), {"x": ("v",)}, r"\(column, op\) or \(column, op, dtype\)"),
        ((), {"x": ("v", ("sum", "mean"))}, "takes a single op"),
        (({"v": "sum"},), {"v_sum": ("v", "sum")}, "must be unique"),
        ((), {"k1": ("v", "sum")}, "would not be unique"),
        ((), {"x": ("v", "sum", blosc2.float32())}, "only supported for UDFs"),
    ],
)
def test_bad_aggregations(args: tuple, kwargs: dict, match: str) -> None:
    t = CTable(Row, new_data=[(1, "a", 1.0, 0)])
    with pytest.raises(ParamError, match=match):
        t.group_by("k1").agg(*args, **kwargs)


def test_bad_group_by_arguments() -> None:
    t = CTable(Row, new_data=[(1, "a", 1.0, 0)])
    with pytest.raises(ParamError, match="engine"):
        t.group_by("k1", engine="cython")
    with pytest.raises(NotImplementedError, match="jit"):
        t.group_by("k1", engine="jit")
    with pytest.raises(ParamError, match="chunk_size"):
        t.group_by("k1", chunk_size=0)
    with pytest.raises(KeyError, match="nope"):
        t.group_by("nope")
    with pytest.raises(ParamError, match="at least one key"):
        t.group_by([])
    with pytest.raises(TypeError, match="not supported for column 'k2'"):
        t.group_by("k1").sum("k2")
    assert t.group_by("k1", engine="numpy").size()["size"][:].tolist() == [1]


def test_persistent_result(tmp_path) -> None:
    t = CTable(Row, new_data=[(1, "a", 1.0, 2), (1, "b", 3.0, 4), (2, "b", 5.0, 6)])
    path = tmp_path / "g.b2d"
    out = t.group_by("k1").agg({"q": "sum"}, urlpath=path)
    out.close()
    again = CTable.open(str(path))
    assert again.col_names == ["k1", "q_sum"] and _rows(again) == [(1, 6), (2, 6)]
    t.group_by("k1").mean("v", urlpath=path).close()  # mode "w": replaced
    assert _rows(CTable.open(str(path))) == [(1, 2.0), (2, 5.0)]
