"""group_by over null keys and null values (pyblosc2.ctable.nullgroups) against a
plain-Python oracle, and nulls through pandas both ways (pyblosc2.ctable.nullpandas)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable


def _rows(spec: Any, keys: list[Any], values: list[Any]) -> Any:
    row = dataclasses.make_dataclass(
        "G",
        [("k", int, pb.field(spec)), ("v", int, pb.field(pb.int64(null_storage="mask")))],
    )
    return CTable(row, new_data={"k": keys, "v": values})


def _logical(col: Any) -> list[Any]:
    nulls = np.asarray(col.is_null()).tolist()
    return [None if n else v for v, n in zip(np.asarray(col[:]).tolist(), nulls, strict=True)]


@settings(max_examples=40, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-3, 3)), st.one_of(st.none(), st.integers(0, 9))
        ),
        min_size=1,
        max_size=30,
    ),
    dropna=st.booleans(),
)
def test_group_by_matches_an_oracle(pairs: list[tuple[Any, Any]], dropna: bool) -> None:
    keys, values = [k for k, _ in pairs], [v for _, v in pairs]
    t = _rows(pb.int64(null_storage="mask"), keys, values)
    g = t.group_by("k", dropna=dropna, sort=True).agg(
        n=("v", "count"), s=("v", "sum"), lo=("v", "min")
    )
    groups: dict[Any, list[Any]] = {}
    for k, v in pairs:
        if k is None and dropna:
            continue
        groups.setdefault(k, []).append(v)
    order = sorted(groups, key=lambda k: (k is not None, k or 0))  # the null group first
    assert _logical(g["k"]) == order
    present = [[v for v in groups[k] if v is not None] for k in order]
    assert _logical(g["n"]) == [len(p) for p in present]
    assert _logical(g["s"]) == [sum(p) for p in present]
    assert _logical(g["lo"]) == [min(p) if p else None for p in present]  # no value: null


def test_text_and_float_null_keys_form_one_group() -> None:
    row = dataclasses.make_dataclass(
        "T", [("s", str, pb.field(pb.string(max_length=2, null_storage="mask"))), ("v", int, 0)]
    )
    t = CTable(row, new_data=[("", 1), (None, 2), ("", 4)])
    g = t.group_by("s", dropna=False, sort=True).agg(total=("v", "sum"))
    assert _logical(g["s"]) == [None, ""] and g["total"][:].tolist() == [2, 5]
    row = dataclasses.make_dataclass(
        "F", [("k", float, pb.field(pb.float64(null_storage="mask"))), ("v", int, 0)]
    )
    t = CTable(row, new_data=[(1.0, 1), (float("nan"), 2), (None, 4)])
    assert len(t.group_by("k").agg(total=("v", "sum"))) == 1  # NaN keys drop with the nulls
    assert t.group_by("k", dropna=False, sort=True).agg(total=("v", "sum"))["total"][
        :
    ].tolist() == [
        6,
        1,
    ]


def test_a_nat_sentinel_key_is_dropped() -> None:
    row = dataclasses.make_dataclass(
        "S",
        [
            ("ts", object, pb.field(pb.timestamp(nullable=True, null_storage="sentinel"))),
            ("v", int, 0),
        ],
    )
    t = CTable(row, new_data=[(np.datetime64("2020-01-01"), 1), (np.iinfo(np.int64).min, 2)])
    assert len(t.group_by("ts").agg(total=("v", "sum"))) == 1


@pytest.mark.parametrize(
    ("spec", "values", "dtype"),
    [
        (pb.int16(nullable=True), [1, None, 3], "Int16"),
        (pb.uint8(null_value=255), [1, 255, 3], "UInt8"),
        (pb.bool(nullable=True), [True, None, False], "boolean"),
        (pb.bool(nullable=True, null_storage="sentinel"), [True, 255, False], "boolean"),
        (pb.float64(nullable=True), [1.5, None, 2.0], "float64"),
        (pb.string(max_length=3, nullable=True), ["a", None, ""], "object"),
        (pb.complex64(nullable=True), [1j, None, 2], "object"),
    ],
)
def test_nulls_reach_pandas_as_na_and_come_back(spec: Any, values: list[Any], dtype: str) -> None:
    pytest.importorskip("pandas")
    ann = bool if spec.kind == "bool" else spec.python_type
    row = dataclasses.make_dataclass("P", [("a", ann, pb.field(spec))])
    t = CTable(row, new_data=[(v,) for v in values])
    df = t.to_pandas()
    assert str(df["a"].dtype) == dtype or (dtype, str(df["a"].dtype)) == ("object", "str")
    assert df["a"].isna().tolist() == [False, True, False]
    back = CTable.from_pandas(df, row)
    if t["a"].null_storage != "mask" or spec.kind != "float64":  # NaN: a mask float's value
        assert back["a"].is_null().tolist() == [False, True, False]
    clean = CTable(row, new_data=[(values[0],), (values[2],)]).to_pandas()
    assert clean["a"].dtype == np.asarray(t["a"][:]).dtype or dtype == "object"  # no widening


def test_schema_version_3_only_with_a_mask_column() -> None:
    def version(spec: Any) -> int:
        row = dataclasses.make_dataclass("V", [("a", int, pb.field(spec))])
        return int(pb.ctable.schema_to_dict(CTable(row)._columns)["version"])

    assert version(pb.int64(nullable=True)) == 3
    assert version(pb.int64(null_value=-1)) == 1
    assert version(pb.int64()) == 1
