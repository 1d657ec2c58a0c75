"""Nullable CTable columns among other operands and in the table's own reads: operand order
(an NDArray or a plain lazy condition on the left keeps Kleene's logic), the null kinds of
text columns (code, native), rows and iteration, ``info_items`` and ``assign``."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.ctable.kleene import NullableBoolExpr
from pyblosc2.ctable.nullexpr import NullableExpr


def _table() -> Any:
    row = dataclasses.make_dataclass(
        "R",
        [
            ("id", int, pb.field(pb.int64())),
            ("a", int, pb.field(pb.int64(nullable=True))),
            ("p", bool, pb.field(pb.bool(nullable=True))),
        ],
    )
    return CTable(row, new_data=[(0, 1, True), (1, None, None), (2, 3, False), (3, None, True)])


def _ids(t: Any, cond: Any) -> list[int]:
    return sorted(np.asarray(t.where(cond)["id"][:]).tolist())


def test_a_plain_operand_on_the_left_keeps_three_values() -> None:
    t = _table()
    plain = t.id < 2
    assert isinstance(plain & t.p, NullableBoolExpr) and isinstance(
        plain & (t.a > 0), NullableBoolExpr
    )
    materialized = pb.asarray(np.asarray(plain[:]))
    assert isinstance(materialized & (t.a > 0), NullableBoolExpr)
    # SQL: NOT (plain AND unknown) is unknown where plain is true, true where plain is false
    assert _ids(t, ~(plain & (t.a > 0))) == _ids(t, ~((t.a > 0) & plain)) == [2, 3]
    assert _ids(t, ~(materialized | (t.a > 0))) == []
    total = t.id + (t.a + 1)
    assert isinstance(total, NullableExpr) and float(total.sum()) == (0 + 2) + (2 + 4)


def test_dictionary_and_vlstring_nulls_are_unknown() -> None:
    row = dataclasses.make_dataclass(
        "D",
        [
            ("id", int, pb.field(pb.int64())),
            ("v", str, pb.field(pb.dictionary())),
            ("s", str, pb.field(pb.vlstring(nullable=True))),
        ],
    )
    t = CTable(row, new_data=[(0, "x", "a"), (1, None, None), (2, "y", "b")])
    assert (t["v"].null_storage, t["s"].null_storage) == ("code", "native")
    assert t["v"].is_null().tolist() == [False, True, False]
    assert _ids(t, t.v != "x") == [2] and _ids(t, ~(t.v == "x")) == [2]
    assert _ids(t, t.v == None) == [1]  # noqa: E711  (the null test itself)
    assert t["v"].fillna("?") == ["x", "?", "y"] and t["s"].fillna("") == ["a", "", "b"]
    with pytest.raises(ValueError, match="only representation its kind has"):
        t.convert_nulls("v")


def test_rows_read_none_for_mask_nulls_and_sentinels_as_written() -> None:
    row = dataclasses.make_dataclass(
        "S",
        [
            ("m", int, pb.field(pb.int64(nullable=True))),
            ("s", int, pb.field(pb.int64(null_value=-1))),
        ],
    )
    t = CTable(row, new_data=[(1, 1), (None, -1), (3, 3)])
    assert tuple(t[1]) == (None, -1)
    assert [tuple(r) for r in t] == [(1, 1), (None, -1), (3, 3)]
    t.delete(0)
    assert tuple(t[0]) == (None, -1)


def test_info_items_and_assign() -> None:
    t = _table()
    items = dict(t["a"].info_items)
    assert (items["nullable"], items["null_storage"], items["null_sidecar"]) == (True, "mask", True)
    assert "null_storage" not in dict(t["id"].info_items)
    with pytest.raises(ValueError, match=r"requires 4 values.*single value"):
        t["id"].assign(5)
    t["a"].assign([None, 1, None, 2])
    assert t["a"].is_null().tolist() == [True, False, True, False]
