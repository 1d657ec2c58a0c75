"""CTable as storage (pyblosc2.ctable): schemas, rows in and out, deletion, persistence,
inline tables in TreeStores, the errors of bad input and the features not built."""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable, compile_row_type, schema_from_dict, schema_to_dict
from pyblosc2.errors import BoundsError, FormatError, ParamError, ParamTypeError


@dataclasses.dataclass
class Row:
    x: int = 0
    y: float = 0.0
    name: str = ""
    ok: bool = False


@dataclasses.dataclass
class Bounded:
    n: int = pb.field(pb.int32(ge=0, lt=100), default=0)
    code: str = pb.field(pb.string(max_length=4), default="")
    raw: bytes = b""
    z: complex = 0j


# -- schema ---------------------------------------------------------------------------------
def test_schema_document_as_python_blosc2_writes_it() -> None:
    doc = schema_to_dict(compile_row_type(Bounded))
    assert doc == {
        "version": 1,
        "columns": [
            {"name": "n", "kind": "int32", "ge": 0, "lt": 100, "default": 0},
            {"name": "code", "kind": "string", "max_length": 4, "default": ""},
            {
                "name": "raw",
                "kind": "bytes",
                "max_length": 32,
                "default": {"__bytes__": True, "base64": ""},
            },
            {
                "name": "z",
                "kind": "complex128",
                "default": {"__complex__": True, "real": 0.0, "imag": 0.0},
            },
        ],
    }
    again = schema_from_dict(json.loads(json.dumps(doc)))
    assert schema_to_dict(again) == doc
    assert [c.default for c in again] == [0, "", b"", 0j]


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ({"columns": "x"}, ParamTypeError),
        ({"version": 9, "columns": []}, ParamError),
        ({"columns": [{"kind": "int8"}]}, ParamTypeError),
        ({"columns": [{"name": "_x", "kind": "int8"}]}, ParamError),
        ({"columns": [{"name": "x", "kind": "nope"}]}, ParamError),  # python-blosc2: ValueError
        ({"columns": [{"name": "x", "kind": "object", "serializer": "arrow"}]}, ParamError),
        ({"columns": [], "materialized_columns": [{"name": "c"}]}, NotImplementedError),
    ],
    ids=[
        "columns-not-list",
        "version",
        "no-name",
        "reserved-name",
        "unknown",
        "object-arrow",
        "materialized",
    ],
)
def test_bad_schema_documents(doc: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        schema_from_dict(doc)


def test_row_types_refused_by_name() -> None:
    @dataclasses.dataclass
    class Listy:  # list columns are stored now: a bare list annotation is refused by name
        tags: list = pb.field(pb.list(pb.int32()))  # noqa: RUF009

    @dataclasses.dataclass
    class Reserved:
        _hidden: int = 0

    @dataclasses.dataclass
    class Odd:
        when: object = None

    with pytest.raises(ParamTypeError, match=r"'tags'.*list\[T\]"):
        CTable(Listy)
    with pytest.raises(ParamError, match="_hidden"):
        CTable(Reserved)
    with pytest.raises(ParamTypeError, match="when"):
        CTable(Odd)
    with pytest.raises(ParamTypeError, match="dataclass"):
        CTable(dict)


# -- rows -----------------------------------------------------------------------------------
def test_append_forms_and_defaults() -> None:
    t = CTable(Row)
    t.append(Row(x=1, name="a"))
    t.append({"x": 2, "ok": True})
    t.append((3, 1.5))
    t.append(
        np.array(
            [(4, 2.5, "d", True)], dtype=[("x", "i8"), ("y", "f8"), ("name", "U4"), ("ok", "?")]
        )[0]
    )
    assert t["x"][:].tolist() == [1, 2, 3, 4]
    assert t["name"][:].tolist() == ["a", "", "", "d"]
    assert t["ok"][:].tolist() == [False, True, False, True]
    assert t[1] == (2, 0.0, "", True) and t[1].x == 2
    assert [r.x for r in t] == [1, 2, 3, 4]


def test_extend_forms() -> None:
    t = CTable(Row)
    t.extend({"x": np.arange(3), "name": ["a", "b", "c"]})
    t.extend([Row(x=10), (11, 2.0, "z", True), {"x": 12}])
    other = CTable(Row)
    other.extend({"x": [20, 21, 22]})
    other.delete(1)
    t.extend(other)
    t.extend(
        np.array(
            [(30, 1.0, "s", False)], dtype=[("x", "i8"), ("y", "f8"), ("name", "U4"), ("ok", "?")]
        )
    )
    t.extend([])
    assert t["x"][:].tolist() == [0, 1, 2, 10, 11, 12, 20, 22, 30]
    assert t.nrows == len(t) == 9 and t.ncols == 4


@pytest.mark.parametrize(
    ("row", "error", "match"),
    [
        ({"n": -1}, ParamError, "'n'.*>= 0"),
        ({"n": 100}, ParamError, "'n'.*< 100"),
        ({"code": "toolong"}, ParamError, "'code'.*max_length"),
        ({"n": "x"}, ParamTypeError, "'n'"),
        ({"n": 1.5}, ParamError, "'n'.*non-integral"),
        ({"n": 2**40}, ParamError, "'n'.*range"),
        ({"nope": 1}, ParamError, "nope"),
        ((1, "a", b"", 0j, 5), ParamError, "5 values"),
        ("text", ParamTypeError, "str"),
    ],
    ids=[
        "ge",
        "lt",
        "max-length",
        "str-for-int",
        "fraction",
        "overflow",
        "unknown-key",
        "too-long",
        "str-row",
    ],
)
def test_bad_rows_refused_before_writing(row: Any, error: type[Exception], match: str) -> None:
    t = CTable(Bounded)
    t.append({"n": 5})
    with pytest.raises(error, match=match):
        t.append(row)
    with pytest.raises(error, match=match):
        t.extend([row])
    assert len(t) == 1 and t["n"][:].tolist() == [5]


def test_missing_value_without_default() -> None:
    @dataclasses.dataclass
    class Required:
        a: int
        b: int = 1

    t = CTable(Required)
    with pytest.raises(ParamError, match="'a' has no value"):
        t.append({"b": 2})
    with pytest.raises(ParamError, match="different lengths"):
        t.extend({"a": [1, 2], "b": [1]})


# -- deletion and column access -------------------------------------------------------------
def test_delete_forms_and_column_indexing() -> None:
    t = CTable(Row, expected_size=4)  # grows past its first capacity
    t.extend({"x": np.arange(10)})
    t.delete(0)
    t.delete([-1, 2])
    t.delete(slice(0, 2))
    assert t["x"][:].tolist() == [4, 5, 6, 7, 8]
    col = t["x"]
    assert col[0] == 4 and col[-1] == 8 and col[1:3].tolist() == [5, 6]
    assert col[::-2].tolist() == [8, 6, 4] and col[[0, -1]].tolist() == [4, 8]
    assert col[np.array([True, False, False, False, True])].tolist() == [4, 8]
    col[1] = 50
    col[2:4] = [60, 70]
    assert t["x"][:].tolist() == [4, 50, 60, 70, 8]
    with pytest.raises(BoundsError):
        col[5]
    with pytest.raises(BoundsError):
        t.delete(99)
    with pytest.raises(ParamError, match="Unknown symbol: nope"):  # python-blosc2's ValueError
        t["nope"]
    t.delete(slice(None))
    assert len(t) == 0 and t["x"][:].tolist() == []
    t.append({"x": 1})
    assert t["x"][:].tolist() == [1]


@pytest.mark.parametrize("name", ["iter_sorted", "sorted_slice"])
def test_features_not_built_are_named(name: str) -> None:
    with pytest.raises(NotImplementedError, match=name):
        getattr(CTable(Row), name)


def test_where_views() -> None:
    t = CTable(Row)
    t.extend({"x": np.arange(20), "y": np.arange(20) / 4, "name": [str(i) for i in range(20)]})
    t.delete([0, 5])
    v = t.where((t["x"] >= 3) & ~(t["name"] == "7") & (t["y"] < t["x"]))
    assert v["x"][:].tolist() == [i for i in range(3, 20) if i not in (5, 7)]
    assert v.base is t and len(v) == 15 and v[0].x == 3
    assert v.where(v["x"] > 17)["x"][:].tolist() == [18, 19]
    t["ok"][[0, 1]] = True  # x = 1, 2
    assert t.where(t["ok"])["x"][:].tolist() == [1, 2]
    assert t.where(~t["ok"] & (t["x"] < 4))["x"][:].tolist() == [3]
    assert t.where((t["x"] == 3) | t["ok"])["x"][:].tolist() == [1, 2, 3]
    assert len(t.where(t["x"] > 100)) == 0 and t.where(t["x"] > 100)["x"][:].size == 0
    with pytest.raises(ParamError, match="view"):  # views are read-only (python-blosc2's)
        v["y"][0] = -1.0
    with pytest.raises(ParamError, match="view"):
        v.append(Row())
    with pytest.raises(ParamError, match="view"):
        v.delete(0)
    with pytest.raises(ParamTypeError, match="compared"):
        t["x"] > "a"  # noqa: B015
    with pb.TreeStore(os.path.join(tempfile.mkdtemp(), "v.b2z"), mode="w") as ts:
        ts["/v"] = v.where(v["x"] < 6)  # a view is stored as its rows
        assert ts["/v"]["x"][:].tolist() == [3, 4]


# -- persistence ----------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_standalone_table_reopens(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    with CTable(Row, urlpath=path, mode="w", expected_size=8) as t:
        t.extend({"x": np.arange(20), "name": [str(i) for i in range(20)]})
        t.delete([3, 19])
    with CTable.open(path, mode="a") as t:
        assert len(t) == 18 and t["x"][-1] == 18
        t.append(Row(x=100, name="new"))
    t = CTable(Row, urlpath=path, mode="r")
    assert t["x"][:].tolist() == [i for i in range(19) if i != 3] + [100]
    with pytest.raises(ParamError, match="read-only"):
        t.append(Row())
    with pb.DictStore(path, mode="r") as ds:  # trimmed to the last live row, count recorded
        assert ds["/_valid_rows"].shape == (20,)
        assert json.loads(ds["/_meta"].vlmeta["schema"])["n_rows"] == 19


def test_unclosed_changes_leave_no_stale_row_count(tmp_path: Path) -> None:
    path = str(tmp_path / "t.b2d")
    with CTable(Row, urlpath=path, mode="w") as t:
        t.extend({"x": [1, 2]})
    t = CTable.open(path, mode="a")
    t.append({"x": 3})  # not closed: the stored count is dropped, readers count the rows
    with pb.DictStore(path, mode="r") as ds:
        assert "n_rows" not in json.loads(ds["/_meta"].vlmeta["schema"])
    assert len(CTable.open(path)) == 3
    t.close()


def test_open_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        CTable.open(str(tmp_path / "missing.b2d"))
    with pytest.raises(FileNotFoundError, match="mode='w'"):
        CTable(Row, urlpath=str(tmp_path / "missing.b2d"), mode="a")
    with pytest.raises(ParamError, match="mode"):
        CTable(Row, mode="x")
    with pytest.raises(ParamError, match="mmap_mode"):
        CTable.open(str(tmp_path), mode="a", mmap_mode="r")
    store = str(tmp_path / "plain.b2d")
    with pb.TreeStore(store, mode="w") as ts:
        ts["/a"] = np.arange(3)
    with pytest.raises(FileNotFoundError, match="No CTable"):
        CTable.open(store)
    with pytest.raises(FileNotFoundError, match="No CTable"):
        CTable(Row, urlpath=store, mode="a")  # not turned into a table
    assert sorted(pb.TreeStore(store, mode="r").keys()) == ["/a"]


def test_corrupt_manifest_is_a_format_error(tmp_path: Path) -> None:
    path = str(tmp_path / "t.b2d")
    with CTable(Row, urlpath=path, mode="w") as t:
        t.append(Row(x=1))
    meta = pb.open(os.path.join(path, "_meta.b2f"), mode="a")
    meta.vlmeta["schema"] = "{not json"
    with pytest.raises(FormatError, match="schema"):
        CTable.open(path)
    meta.vlmeta["schema"] = json.dumps({"version": 1, "columns": [{"name": "x", "kind": "int64"}]})
    meta.vlmeta["kind"] = "other"
    with pytest.raises(FormatError, match="kind"):
        CTable.open(path)


# -- inline in TreeStores -------------------------------------------------------------------
@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_inline_table_append_mode_and_close(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"s.{form}")
    t = CTable(Row)
    t.extend({"x": [1, 2, 3]})
    t.delete(1)
    with pb.TreeStore(path, mode="w") as ts:
        ts["/t"] = t
        with pytest.raises(ParamError, match="object root"):
            ts["/t"] = t
    with pb.TreeStore(path, mode="a") as ts:
        ts["/t"].append(Row(x=9))  # closed by the store
    with pb.TreeStore(path, mode="r") as ts:
        assert ts["/t"]["x"][:].tolist() == [1, 3, 9]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is Python >= 3.11")
def test_store_close_reports_every_failing_table(tmp_path: Path) -> None:
    path = str(tmp_path / "s.b2z")
    with pb.TreeStore(path, mode="w") as ts:
        for name in "abc":
            ts[f"/{name}"] = CTable(Row)
    ts = pb.TreeStore(path, mode="a")
    handles = [ts[f"/{name}"] for name in "abc"]
    for h in handles:
        h.append(Row(x=1))

    def boom() -> None:
        raise OSError("cannot close")

    handles[0].close = boom  # type: ignore[method-assign]
    handles[2].close = boom  # type: ignore[method-assign]
    with pytest.raises(builtins.ExceptionGroup) as info:
        ts.close()
    assert len(info.value.exceptions) == 2 and ts._closed
    with pb.TreeStore(path, mode="r") as ts:
        assert ts["/b"].nrows == 1


# -- a property against a list model --------------------------------------------------------
_op = st.one_of(
    st.tuples(st.just("append"), st.integers(-(2**40), 2**40)),
    st.tuples(st.just("extend"), st.lists(st.integers(-1000, 1000), max_size=40)),
    st.tuples(st.just("delete"), st.integers(0, 60)),
    st.tuples(st.just("reopen"), st.none()),
)


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(_op, max_size=25))
def test_rows_follow_a_list_model(tmp_path_factory: pytest.TempPathFactory, ops: list[Any]) -> None:
    path = str(tmp_path_factory.mktemp("model") / "t.b2d")
    model: list[int] = []
    t = CTable(Row, urlpath=path, mode="w", expected_size=3)
    for op, arg in ops:
        if op == "append":
            t.append({"x": arg, "name": str(arg)[:32]})
            model.append(arg)
        elif op == "extend":
            t.extend({"x": arg, "name": [str(v) for v in arg]})
            model.extend(arg)
        elif op == "delete" and model:
            i = arg % len(model)
            t.delete(i)
            del model[i]
        elif op == "reopen":
            t.close()
            t = CTable.open(path, mode="a")
        assert len(t) == len(model)
    t.close()
    back = CTable.open(path)
    assert back["x"][:].tolist() == model
    assert back["name"][:].tolist() == [str(v) for v in model]


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_open_returns_a_standalone_table(tmp_path: Path, form: str) -> None:
    """As python-blosc2: ``open`` of a table's store gives the table (modes "r" and "a")."""
    path = str(tmp_path / f"t.{form}")
    with CTable(Row, urlpath=path, mode="w") as t:
        t.append(Row(x=7))
    opened = pb.open(path)
    assert isinstance(opened, CTable) and opened["x"][:].tolist() == [7]
    with pb.open(path, mode="a") as t:
        t.append(Row(x=8))
    assert pb.open(path)["x"][:].tolist() == [7, 8]
    plain = str(tmp_path / f"plain.{form}")
    with pb.TreeStore(plain, mode="w") as ts:
        ts["/_meta"] = pb.SChunk()  # a manifest of no table: the store stays a store
    assert isinstance(pb.open(plain), pb.TreeStore)


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("/_cols/x", np.arange(2), "at least 4 rows"),
        ("/_cols/x", np.arange(4, dtype=np.int32), "int64"),
        ("/_valid_rows", np.ones(4, dtype=np.int8), "bool"),
    ],
    ids=["short-column", "column-dtype", "mask-dtype"],
)
def test_inconsistent_leaves_are_format_errors(
    tmp_path: Path, key: str, value: np.ndarray, match: str
) -> None:
    path = str(tmp_path / "t.b2d")
    with CTable(Row, urlpath=path, mode="w") as t:
        t.extend({"x": [1, 2, 3, 4]})
    with pb.DictStore(path, mode="a") as ds:
        ds[key] = value
    with pytest.raises(FormatError, match=match):
        CTable.open(path)
