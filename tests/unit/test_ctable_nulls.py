"""Nullable CTable columns (pyblosc2.ctable.nulls, nullstore, nullcol, kleene): the null
policy and the two stored forms, writes of None, the null API, reductions and sorts that
skip nulls, the sidecar moved with the rows (growth, delete, sort, compact, copy, save,
schema changes), Kleene logic checked against a NumPy oracle (hypothesis), and hostile
null metadata refused with a pyblosc2 error."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.ctable.kleene import NullableBoolExpr
from pyblosc2.ctable.nulls import NullPolicy, null_policy, resolve_nullable
from pyblosc2.ctable.schema import TableColumn
from pyblosc2.errors import FormatError, ParamError, ParamTypeError


def _table(**specs: Any) -> type:
    return dataclasses.make_dataclass("Row", [(n, Any, pb.field(s)) for n, s in specs.items()])


def _row(**specs: Any) -> type:
    fields = []
    for name, spec in specs.items():
        fields.append((name, spec.python_type, pb.field(spec)))
    return dataclasses.make_dataclass("Row", fields)


# -- the policy ------------------------------------------------------------------------------
def test_bare_nullable_resolves_to_mask_and_keeps_the_dtype() -> None:
    t = CTable(_row(b=pb.bool(nullable=True), s=pb.string(max_length=4, nullable=True)))
    assert t["b"].null_storage == "mask" and t["b"].dtype == np.bool_
    assert t["s"].dtype == np.dtype("U4")
    assert t.schema_dict()["columns"][0] == {
        "name": "b", "kind": "bool", "nullable": True, "null_storage": "mask",
    }  # fmt: skip


def test_sentinel_storage_takes_the_policy_sentinels() -> None:
    t = CTable(
        _row(
            i=pb.int32(nullable=True, null_storage="sentinel"),
            u=pb.uint8(nullable=True, null_storage="sentinel"),
            f=pb.float32(nullable=True, null_storage="sentinel"),
            b=pb.bool(nullable=True, null_storage="sentinel"),
            s=pb.string(max_length=2, nullable=True, null_storage="sentinel"),
        )
    )
    assert t["i"].null_value == np.iinfo(np.int32).min
    assert t["u"].null_value == 255
    assert math.isnan(t["f"].null_value)
    assert t["b"].null_value == 255 and t["b"].dtype == np.uint8
    assert t["s"].null_value == "__BLOSC2_NULL__" and t["s"].dtype == np.dtype("U15")


def test_policy_fields_imply_sentinels_and_column_values_win() -> None:
    row = _row(i=pb.int32(nullable=True), s=pb.string(max_length=4, nullable=True))
    policy = NullPolicy(signed_int_strategy="max", string_value="<N>", column_null_values={"i": -1})
    with null_policy(policy):
        t = CTable(row)
    assert (t["i"].null_value, t["s"].null_value) == (-1, "<N>")
    assert pb.get_null_policy() == NullPolicy()  # restored


def test_resolution_does_not_change_the_callers_spec() -> None:
    spec = pb.int8(nullable=True)
    resolve_nullable([TableColumn("x", spec, dataclasses.MISSING)])
    assert spec.null_storage is None


@pytest.mark.parametrize(
    ("spec", "value", "error", "match"),
    [
        (pb.int8(nullable=True), 1000, ParamError, "outside int8 range"),
        (pb.string(nullable=True), b"NA", TypeError, "must be str"),
        (pb.bytes(nullable=True), "NA", TypeError, "must be bytes"),
        (pb.int64(nullable=True), 1.5, TypeError, "must be an integer"),
    ],
)
def test_policy_refuses_a_bad_sentinel(spec: Any, value: Any, error: type, match: str) -> None:
    policy = NullPolicy(column_null_values={"x": value})
    with null_policy(policy), pytest.raises(error, match=match):
        CTable(_row(x=spec))


def test_policy_refuses_unknown_columns_and_contradictions() -> None:
    unknown = NullPolicy(column_null_values={"nope": 1})
    with null_policy(unknown), pytest.raises(KeyError, match="nope"):
        CTable(_row(x=pb.int8(nullable=True)))
    with pytest.raises(ParamError, match="contradicts"):
        NullPolicy(null_storage="mask", float_value=0.0)
    with pytest.raises(ParamTypeError), null_policy("mask"):  # type: ignore[arg-type]
        pass


# -- writes and the null API -----------------------------------------------------------------
SPECS = [
    (pb.int64(null_storage="mask"), 7),
    (pb.int8(null_storage="mask"), -128),
    (pb.float64(null_storage="mask"), 1.5),
    (pb.complex128(null_storage="mask"), 1 + 2j),
    (pb.bool(null_storage="mask"), True),
    (pb.string(max_length=4, null_storage="mask"), "abcd"),
    (pb.bytes(max_length=4, null_storage="mask"), b"abcd"),
]


@pytest.mark.parametrize(("spec", "value"), SPECS)
def test_none_is_written_as_null_by_every_write(spec: Any, value: Any) -> None:
    t = CTable(_row(a=spec), new_data=[(value,), (None,), (value,)])
    t.append((None,))
    assert t["a"].is_null().tolist() == [False, True, False, True]
    t["a"][0] = None
    t["a"][1] = value
    t["a"][2:4] = [value, None]
    assert t["a"].is_null().tolist() == [True, False, False, True]
    t["a"].assign([value, None, None, value])
    assert t["a"].notnull().tolist() == [True, False, False, True]
    assert t["a"].null_count() == 2


@pytest.mark.parametrize(
    ("spec", "value", "null"),
    [
        (pb.int64(null_value=-1), 7, -1),
        (pb.string(max_length=4, null_value=""), "abcd", ""),
        (pb.bool(nullable=True, null_storage="sentinel"), True, 255),
    ],
)
def test_sentinel_columns_take_the_sentinel_not_none(spec: Any, value: Any, null: Any) -> None:
    t = CTable(_row(a=spec), new_data=[(value,), (null,)])
    t["a"][0] = null
    assert t["a"].is_null().tolist() == [True, True]
    with pytest.raises(ParamTypeError, match="null_value"):
        t.append((None,))
    assert len(t) == 2


def test_none_is_nan_in_a_nan_sentinel_column() -> None:
    t = CTable(_row(a=pb.float64(null_value=float("nan"))), new_data=[(1.5,), (None,)])
    assert t["a"].is_null().tolist() == [False, True]


def test_extend_from_another_table_translates_the_nulls() -> None:
    src = CTable(_row(b=pb.bool(null_storage="mask")), new_data=[(True,), (None,)])
    dst = CTable(_row(b=pb.bool(nullable=True, null_storage="sentinel")))
    dst.extend(src)
    assert dst["b"][:].tolist() == [1, 255]
    back = CTable(_row(b=pb.bool(null_storage="mask")))
    back.extend(dst)
    assert back["b"].is_null().tolist() == [False, True]


def test_mask_storage_keeps_nan_and_the_full_range_as_values() -> None:
    t = CTable(_row(f=pb.float64(null_storage="mask"), i=pb.int8(null_storage="mask")))
    t.extend({"f": [np.nan, None, 1.0], "i": [-128, 127, None]})
    assert t["f"].is_null().tolist() == [False, True, False]
    assert t["i"].is_null().tolist() == [False, False, True]
    assert t["i"][:2].tolist() == [-128, 127]
    assert t["i"].min() == -128 and t["i"].max() == 127
    assert t["f"].fillna(5.0)[1] == 5.0


def test_masked_array_input_and_masked_output() -> None:
    t = CTable(_row(f=pb.float64(null_storage="mask")))
    t.extend({"f": np.ma.MaskedArray([1.0, 2.0, np.nan], mask=[False, True, False])})
    assert t["f"].is_null().tolist() == [False, True, False]
    out = t["f"].to_numpy(masked=True)
    assert isinstance(out, np.ma.MaskedArray) and out.mask.tolist() == [False, True, False]


def test_sentinel_bypasses_bounds_but_values_are_checked() -> None:
    t = CTable(_row(s=pb.int64(ge=0, le=10, null_value=-1)))
    t.extend([(1,), (-1,), (-1,)])
    assert t["s"].null_count() == 2
    with pytest.raises(ParamError):
        t.append((11,))


def test_a_column_without_nulls_refuses_none() -> None:
    t = CTable(_row(a=pb.int64()))
    with pytest.raises(ParamTypeError, match="not nullable"):
        t.append((None,))


def test_no_sidecar_until_the_first_null() -> None:
    t = CTable(_row(a=pb.int64(nullable=True)), new_data=[(1,), (2,)])
    assert t._null_mask("a") is None and t["a"].null_count() == 0
    t.append((None,))
    assert t._null_mask("a") is not None and t["a"].null_count() == 1


def test_reductions_skip_nulls() -> None:
    t = CTable(_row(s=pb.int64(null_value=-1), m=pb.float64(nullable=True)))
    t.extend({"s": [10, -1, 20, -1], "m": [1.0, None, 3.0, None]})
    for name in ("s", "m"):
        col = t[name]
        assert col.null_count() == 2
        assert col.mean() == pytest.approx(col.sum() / 2)
        assert col.min() in (1.0, 10) and col.max() in (3.0, 20)
        assert len(col.unique()) == 2 and sum(col.value_counts().values()) == 2
    all_null = CTable(_row(x=pb.int64(null_value=-1)), new_data=[(-1,)])
    with pytest.raises(ValueError, match="null"):
        all_null["x"].min()
    assert math.isnan(CTable(_row(x=pb.float64(nullable=True)), new_data=[(None,)])["x"].mean())


def test_sort_puts_nulls_last_both_ways() -> None:
    t = CTable(_row(a=pb.int64(nullable=True)), new_data=[(5,), (None,), (2,), (8,)])
    assert t.sort_by("a")["a"].is_null().tolist() == [False, False, False, True]
    assert t.sort_by("a")["a"][:3].tolist() == [2, 5, 8]
    assert t.sort_by("a", ascending=False)["a"][:3].tolist() == [8, 5, 2]
    t.sort_by("a", inplace=True)
    assert t["a"].is_null().tolist() == [False, False, False, True]


def test_sidecar_follows_rows_through_growth_delete_copy_and_schema_changes() -> None:
    t = CTable(_row(a=pb.int64(nullable=True), b=pb.int64()), expected_size=2)
    values = [None if i % 3 == 0 else i for i in range(50)]
    t.extend({"a": values[:2], "b": [0, 1]})  # the sidecar is made here
    t.extend({"a": values[2:], "b": list(range(2, 50))})  # and grown here
    expect = np.array([v is None for v in values])
    assert t["a"].is_null().tolist() == expect.tolist()
    side = t._null_mask("a")
    assert side.shape == t._valid_rows.shape
    t.append((1, 50))  # grows again, past the row written
    assert side.shape[0] > 51 and np.asarray(side[51:]).all()  # the tail: valid
    t.delete(50)
    t.delete([1, 2])
    expect = np.delete(expect, [1, 2])
    for copy in (t.copy(), t.take(np.arange(len(t))), t.where(t.b >= 0)):
        assert copy["a"].is_null().tolist() == expect.tolist()
    t.compact()
    assert t["a"].is_null().tolist() == expect.tolist()
    t.rename_column("a", "z")
    assert t["z"].is_null().tolist() == expect.tolist()
    t.add_column("n", pb.field(pb.int32(nullable=True), default=None))
    assert t["n"].null_count() == len(t)
    t.drop_column("z")
    assert t._null_mask("z") is None
    assert t.dropna()["b"][:].tolist() == []


def test_dropna_keeps_rows_without_nulls() -> None:
    t = CTable(
        _row(a=pb.int64(nullable=True), b=pb.int64(null_value=-1)),
        new_data=[(1, 1), (None, 2), (3, -1), (4, 4)],
    )
    assert t.dropna()["a"][:].tolist() == [1, 4]
    assert t.dropna(["a"])["a"][:].tolist() == [1, 3, 4]


# -- persistence -----------------------------------------------------------------------------
@pytest.mark.parametrize("ext", ["b2d", "b2z"])
def test_nulls_persist(tmp_path: Any, ext: str) -> None:
    path = str(tmp_path / f"t.{ext}")
    row = _row(a=pb.float64(nullable=True), s=pb.string(max_length=3, null_value="?"))
    t = CTable(row, urlpath=path, mode="w")
    t.extend({"a": [1.0, None, np.nan], "s": ["x", "?", "?"]})
    t.close()
    back = CTable.open(path)
    assert back["a"].is_null().tolist() == [False, True, False]
    assert back["s"].is_null().tolist() == [False, True, True]
    saved = str(tmp_path / f"u.{ext}")
    back.where(back["a"].notnull() if False else back.s != "?").save(saved)
    assert CTable.open(saved)["a"].is_null().tolist() == [False]
    back.close()
    loaded = CTable.load(path)
    loaded.append((None, "y"))
    assert loaded["a"].null_count() == 2


def test_trimmed_sidecar_on_close_and_growth_after_reopen(tmp_path: Any) -> None:
    path = str(tmp_path / "t.b2d")
    t = CTable(_row(a=pb.int64(nullable=True)), urlpath=path, mode="w", expected_size=100)
    t.extend([(None,), (1,)])
    t.close()
    t = CTable.open(path, mode="a")
    assert t._null_mask("a").shape == (2,)
    t.extend([(i,) for i in range(10)])
    assert t["a"].is_null().tolist() == [True] + [False] * 11
    t.close()


# -- hostile metadata ------------------------------------------------------------------------
def _edit_schema(path: str, edit: Any) -> None:
    t = CTable.open(path, mode="a")
    doc = t._storage.load_schema()
    edit(doc)
    t._storage.replace_schema(doc)
    t.close()


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["columns"][0].update(null_value="text"),
        lambda d: d["columns"][0].update(null_value=2**70),
        lambda d: d["columns"][0].update(null_storage="bitmap"),
        lambda d: d["columns"][1].update(null_value=7),
        lambda d: d["columns"][2].update(null_value=3),
        lambda d: d["columns"][0].update(null_storage="mask", null_value=1),
    ],
)
def test_hostile_null_metadata_is_refused(tmp_path: Any, edit: Any) -> None:
    path = str(tmp_path / "t.b2d")
    row = _row(a=pb.int32(null_value=-1), b=pb.bool(nullable=True), s=pb.string(max_length=3))
    CTable(row, urlpath=path, mode="w", new_data=[(1, True, "x")]).close()
    _edit_schema(path, edit)
    with pytest.raises((FormatError, NotImplementedError, ParamError)) as info:
        CTable.open(path)
    assert not isinstance(info.value, NotImplementedError)


def test_a_hostile_sidecar_is_refused(tmp_path: Any) -> None:
    path = str(tmp_path / "t.b2d")
    t = CTable(_row(a=pb.int64(nullable=True)), urlpath=path, mode="w")
    t.extend([(None,), (1,)])
    t.close()
    side = os.path.join(path, "_cols", "a.notnull.b2nd")
    os.remove(side)
    pb.asarray(np.zeros(1, dtype=np.int8), urlpath=side, mode="w")
    with pytest.raises(FormatError, match="notnull"):
        CTable.open(path)


# -- Kleene logic ----------------------------------------------------------------------------
def _oracle(values: list[Any], op: str, x: int) -> tuple[np.ndarray, np.ndarray]:
    null = np.array([v is None for v in values])
    arr = np.array([0 if v is None else v for v in values])
    true = {"<": arr < x, ">": arr > x, "==": arr == x}[op] & ~null
    return true, null


def _k(op: str, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> Any:
    (ta, na), (tb, nb) = a, b
    if op == "&":
        return ta & tb, (na | nb) & ~(ta & tb) & ~((~ta & ~na) | (~tb & ~nb))
    if op == "|":
        return ta | tb, (na | nb) & ~(ta | tb)
    return (ta ^ tb) & ~(na | nb), na | nb


@pytest.mark.parametrize("storage", ["mask", "sentinel"])
@settings(max_examples=25, deadline=None)
@given(
    a=st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=1, max_size=30),
    seed=st.integers(0, 2**16),
)
def test_kleene_matches_an_oracle(storage: str, a: list[Any], seed: int) -> None:
    rng = np.random.default_rng(seed)
    b = [None if rng.random() < 0.3 else int(rng.integers(0, 6)) for _ in a]
    kw: dict[str, Any] = {"null_storage": "mask"} if storage == "mask" else {"null_value": -9}
    t = CTable(_row(a=pb.int64(**kw), b=pb.int64(**kw)))
    if storage == "sentinel":
        t.extend(
            {"a": [-9 if v is None else v for v in a], "b": [-9 if v is None else v for v in b]}
        )
    else:
        t.extend({"a": a, "b": b})
    pa, pb_ = _oracle(a, ">", 2), _oracle(b, "<", 3)
    for op in "&|^":
        expr = {"&": (t.a > 2) & (t.b < 3), "|": (t.a > 2) | (t.b < 3), "^": (t.a > 2) ^ (t.b < 3)}
        true, null = _k(op, pa, pb_)
        got = expr[op]
        assert isinstance(got, NullableBoolExpr)
        assert got.is_null().tolist() == null.tolist()
        assert t.where(got)._live_positions().tolist() == np.flatnonzero(true).tolist()
        negated = t.where(~got)._live_positions().tolist()
        assert negated == np.flatnonzero(~true & ~null).tolist()
        text = t.where(f"~((a > 2) {op} (b < 3))")._live_positions().tolist()
        assert text == negated


@pytest.mark.parametrize("storage", ["mask", "sentinel"])
def test_nullable_bool_columns_are_three_valued(storage: str) -> None:
    kw: dict[str, Any] = {"null_storage": "mask"} if storage == "mask" else {"null_value": 255}
    null = None if storage == "mask" else 255
    t = CTable(_row(p=pb.bool(**kw)), new_data=[(True,), (False,), (null,)])
    assert t.where(t.p)["p"].is_null().tolist() == [False]
    assert len(t.where(~t.p)) == 1
    assert (~t.p).is_null().tolist() == [False, False, True]
    assert len(t.where((~t.p).fillna(True))) == 2
    assert len(t.where("~p")) == 1


def test_two_valued_conditions_stay_plain() -> None:
    t = CTable(_row(a=pb.int64(), b=pb.int64(nullable=True)), new_data=[(1, None), (2, 3)])
    assert not isinstance(t.a > 1, NullableBoolExpr)
    mixed = (t.a > 0) & (t.b > 0)
    assert isinstance(mixed, NullableBoolExpr)
    assert mixed.null_count() == 1 and len(t.where(mixed)) == 1


def test_schema_document_is_json_with_nan(tmp_path: Any) -> None:
    doc = CTable(_row(f=pb.float64(null_value=float("nan")))).schema_dict()
    assert json.loads(json.dumps(doc))["columns"][0]["nullable"] is True
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_text_constraints_skip_the_nulls() -> None:
    t = CTable(_row(s=pb.string(min_length=2, max_length=4, null_storage="mask")))
    t.extend([("ab",), (None,)])
    assert t["s"].is_null().tolist() == [False, True]
    with pytest.raises(ParamError, match="min_length"):
        t.append(("a",))


def test_null_channel_reads_through_to_the_spec() -> None:
    t = CTable(_row(v=pb.int64()), new_data=[(1,), (-1,)])
    channel = t["v"]._nulls
    assert channel.kind == "none" and channel.null_pred() is None
    t._schema.columns_by_name["v"].spec.null_value = -1
    assert channel.kind == "sentinel" and channel.null_count() == 1
    assert np.asarray(channel.valid_pred().compute()[:2]).tolist() == [True, False]
    assert np.concatenate(list(channel.nonnull_chunks())).tolist() == [1]


def test_describe_and_info_name_the_nulls(capsys: Any) -> None:
    t = CTable(
        _row(a=pb.int64(null_value=-1), b=pb.bool(nullable=True), c=pb.int64()),
        new_data=[(1, True, 0), (-1, None, 0), (3, False, 0)],
    )
    t.describe()
    out = capsys.readouterr().out
    assert "a (int64): count=2 nulls=1 mean=2" in out
    assert "b (bool): count=2 nulls=1 true=1 false=1" in out
    assert "c (int64): count=3 mean" in out
    columns = dict(t.info_items)["columns"]
    assert "nullable[sentinel]" in str(columns["a"]) and "nullable[mask]" in str(columns["b"])
    assert "nullable" not in str(columns["c"])
