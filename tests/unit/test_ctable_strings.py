"""CTable text columns (pyblosc2.ctable.strings, textexpr): ``utf8``, ``vlstring``,
``vlbytes`` and ``dictionary`` columns in memory and in ``.b2d``/``.b2z`` files, their
stored layout, queries (operators, where() strings, sort_by), schema changes, and stored
columns that are damaged or hostile refused with a FormatError on open."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.ctable.strings import VarSpec, var_spec
from pyblosc2.ctable.utf8array import have_string_dtype
from pyblosc2.errors import FormatError, ParamError, ParamTypeError
from tests.bounded import run_child

#: UTF8Array reads and builds numpy's StringDType (numpy >= 2)
needs_string_dtype = pytest.mark.skipif(not have_string_dtype(), reason="numpy 1.x: no StringDType")


@dataclasses.dataclass
class Row:
    name: str = pb.field(pb.utf8())
    v: str = pb.field(pb.vlstring(nullable=True), default=None)
    b: bytes = pb.field(pb.vlbytes(), default=b"")
    d: str = pb.field(pb.dictionary(), default=None)
    x: int = 0


ROWS = [
    ("héllo", "a", b"x", "Uber", 1),
    ("", None, b"", None, 2),
    ("日本語 🎉", "c", b"\x00y", "Lyft", 3),
    ("x" * 3000, "ddd", b"\xff" * 9, "Uber", 4),
]


def _table(path: str | None = None) -> CTable:
    t = CTable(Row, urlpath=path, mode="w") if path else CTable(Row)
    t.extend(ROWS)
    return t


def _expect(rows: list[tuple[Any, ...]]) -> dict[str, list[Any]]:
    return {k: [r[i] for r in rows] for i, k in enumerate(["name", "v", "b", "d", "x"])}


def _values(t: CTable) -> dict[str, list[Any]]:
    return {k: list(np.asarray(t[k][:], dtype=object).tolist()) for k in t.col_names}


# -- specs ------------------------------------------------------------------------------------
def test_specs_and_their_metadata() -> None:
    assert pb.vlstring().to_metadata_dict() == {
        "kind": "vlstring",
        "nullable": False,
        "serializer": "msgpack",
        "batch_rows": 2048,
    }
    assert pb.utf8().to_metadata_dict() == {"kind": "utf8"}
    d = pb.dictionary(ordered=True).to_metadata_dict()
    assert d == {
        "kind": "dictionary",
        "index_type": {"kind": "int32"},
        "value_type": {
            "kind": "vlstring",
            "nullable": False,
            "serializer": "msgpack",
            "batch_rows": 2048,
        },
        "ordered": True,
        "nullable": True,
        "null_code": -1,
    }
    assert type(var_spec(**d)).__name__ == "DictionarySpec"
    assert isinstance(pb.vlbytes(), VarSpec) and pb.vlbytes().python_type is bytes
    with pytest.raises(ParamError, match="msgpack"):
        pb.vlstring(serializer="arrow")
    with pytest.raises(ParamError, match="batch_rows"):
        pb.vlbytes(batch_rows=0)
    with pytest.raises(ParamTypeError, match="int32"):
        pb.dictionary(index_type=pb.int64())
    with pytest.raises(ParamTypeError, match="vlstring"):
        pb.dictionary(value_type=pb.string(max_length=4))
    with pytest.raises(ParamTypeError, match="options"):
        var_spec("utf8", nope=1)


# -- in memory ----------------------------------------------------------------------------------
def test_reads_writes_and_deletes() -> None:
    t = _table()
    assert _values(t) == _expect(ROWS)
    # numpy's StringDType, as python-blosc2's (numpy 1.x has none: Python strings, object array)
    assert isinstance(t["name"][:], np.ndarray)
    assert t["name"][:].dtype.kind == ("T" if have_string_dtype() else "O")
    assert t["v"][:] == ["a", None, "c", "ddd"] and t["d"][1] is None
    t.append({"name": "new", "x": 5})
    assert t["d"][-1] is None and t["b"][-1] == b""
    t.delete([0, 2])
    assert _values(t) == _expect([ROWS[1], ROWS[3], ("new", None, b"", None, 5)])
    t["v"][0] = "set"
    t["name"][:] = ["p", "q", "r"]
    assert t["v"][:3] == ["set", "ddd", None] and t["name"][:].tolist() == ["p", "q", "r"]
    codes = t._cols["d"].codes
    assert t._cols["d"].dictionary == ["Uber", "Lyft"] and codes.dtype == np.int32
    assert isinstance(t._cols["d"], pb.dictionary_column.DictionaryColumn)


def test_wrong_values_are_refused_before_any_write() -> None:
    t = _table()
    with pytest.raises(ParamTypeError, match="bytes"):
        t.append({"name": "a", "b": "not bytes"})
    with pytest.raises(ParamTypeError, match="str"):
        t.extend({"name": ["a", 7], "x": [1, 2]})
    with pytest.raises(ParamTypeError, match="not nullable"):
        t.append({"name": None})
    assert len(t) == len(ROWS) and _values(t) == _expect(ROWS)


def test_comparisons_where_and_sort() -> None:
    t = _table()
    assert t.where(t["name"] == "").x[:].tolist() == [2]
    assert t.where(t["d"] == "Uber").x[:].tolist() == [1, 4]
    assert t.where(t["v"] >= "c").x[:].tolist() == [3, 4]  # the null row matches nothing
    assert t.where(t["d"] == None).x[:].tolist() == [2]  # noqa: E711
    assert t.where('d == "Uber" and x > 1').x[:].tolist() == [4]
    assert t.where('"é" in name or x >= 4').x[:].tolist() == [1, 4]
    assert t.where('not (v != "a")').x[:].tolist() == [1]
    assert t.where("'Lyft' == d").x[:].tolist() == [3]
    with pytest.raises(ParamTypeError, match="non-text"):
        t.where("name == 3")
    assert t.where("startswith(name, 'h') or endswith(d, 'ft')").x[:].tolist() == [1, 3]
    assert t.where("contains(v, 'd') & (x > 1)").x[:].tolist() == [4]
    with pytest.raises(NotImplementedError, match="upper"):
        t.where("upper(name) == 'H'")
    with pytest.raises(NotImplementedError, match=r"name\.startswith"):
        t.where('name.startswith("h")')
    with pytest.raises(ParamError, match="Unknown symbol"):
        t.where('nope == "a" or name == "b"')
    assert t.sort_by("name").x[:].tolist() == [2, 1, 4, 3]
    assert t.sort_by("v", ascending=False).x[:].tolist() == [4, 3, 1, 2]  # nulls last
    assert t.sort_by(["d", "x"], ascending=[True, False]).x[:].tolist() == [3, 4, 1, 2]
    assert t.sort_by("b").x[:].tolist() == [2, 3, 1, 4]


def test_schema_changes_and_copies(tmp_path: Path) -> None:
    t = _table(str(tmp_path / "t.b2d"))
    t.add_column("tag", pb.field(pb.vlstring(), default="z"))
    t.add_column("u", pb.utf8(), values=["1", "2", "3", "4"])
    t.rename_column("d", "dd")
    t.drop_column("v")
    t.close()
    names = sorted(os.listdir(tmp_path / "t.b2d" / "_cols"))
    assert names == [
        "b.b2b",
        "dd.b2nd",
        "dd_dict.b2b",
        "name.b2nd",
        "name.utf8.b2nd",
        "tag.b2b",
        "u.b2nd",
        "u.utf8.b2nd",
        "x.b2nd",
    ]
    again = CTable.open(str(tmp_path / "t.b2d"))
    assert again["tag"][:] == ["z"] * 4 and again["u"][:].tolist() == ["1", "2", "3", "4"]
    assert again["dd"][:] == ["Uber", None, "Lyft", "Uber"]
    saved = str(tmp_path / "copy.b2z")
    again.where("x > 2").save(saved)
    assert CTable.open(saved)["name"][:].tolist() == [ROWS[2][0], ROWS[3][0]]
    frame = pb.ctable_from_cframe(again.to_cframe())
    assert frame["dd"][:] == ["Uber", None, "Lyft", "Uber"]


# -- files ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_files_reopen_append_and_layout(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    with _table(path) as t:
        t.delete(1)
    with CTable.open(path, mode="a") as t:
        assert _values(t) == _expect([ROWS[0], *ROWS[2:]])
        t.append(("tail", "t", b"t", "Via", 9))
    t = CTable.open(path)
    assert _values(t) == _expect([ROWS[0], *ROWS[2:], ("tail", "t", b"t", "Via", 9)])
    if form == "b2d":
        store = pb.TreeStore(path, mode="r")
        offsets = store["/_cols/name"][:]
        blob = store["/_cols/name.utf8"][:].tobytes()
        assert offsets[0] == 0 and len(offsets) == 6  # 5 physical rows (one deleted) + 1
        assert blob[offsets[4] : offsets[5]] == b"tail"
        ba = store["/_cols/v"]
        assert ba.schunk.meta["ctable_varlen_scalar"] == {
            "version": 1,
            "py_type": "str",
            "nullable": True,
            "batch_rows": 2048,
        }
        assert list(store["/_cols/d_dict"].iter_items()) == ["Uber", "Lyft", "Via"]
        assert store["/_cols/d"][:5].tolist() == [0, -1, 1, 0, 2]


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=20), st.none() | st.text(max_size=5), st.binary(max_size=8)),
        max_size=30,
    )
)
@example(rows=[("", "\x00", b"")])  # a dictionary value ending in NUL (numpy "U" drops it)
def test_any_text_round_trips_through_a_file(rows: list[tuple[str, Any, bytes]]) -> None:
    @dataclasses.dataclass
    class R:
        s: str = pb.field(pb.utf8())
        v: str = pb.field(pb.vlstring(nullable=True, batch_rows=7))
        b: bytes = pb.field(pb.vlbytes(batch_rows=3))
        d: str = pb.field(pb.dictionary())

    import tempfile

    text = [r for r in rows if "\ud800" not in r[0]]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.b2d")
        with CTable(R, urlpath=path, mode="w") as t:
            t.extend([(s, v, b, v) for s, v, b in text])
        back = CTable.open(path)
        assert back["s"][:].tolist() == [r[0] for r in text]
        assert back["v"][:] == [r[1] for r in text] == back["d"][:]
        assert back["b"][:] == [r[2] for r in text]


# -- hostile files -------------------------------------------------------------------------------
def _damage(tmp_path: Path, key: str, value: Any) -> str:
    path = str(tmp_path / "t.b2d")
    _table(path).close()
    store = pb.TreeStore(path, mode="a")
    store[key] = value
    store.close()
    return path


def _batch(items: list[Any], **meta: Any) -> Any:
    ba = pb.BatchArray(meta=meta) if meta else pb.BatchArray()
    ba.append(items)
    return ba


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("/_cols/name", np.array([1, 2, 3, 4, 5], dtype=np.int64), "offsets"),
        ("/_cols/name", np.array([0, 5, 3, 4, 5], dtype=np.int64), "offsets"),
        ("/_cols/name", np.array([0, 1, 2, 3, 10**12], dtype=np.int64), "offsets"),
        ("/_cols/name", np.arange(100, dtype=np.int64), "offsets"),
        ("/_cols/name", np.zeros(5, dtype=np.int32), "int64"),
        ("/_cols/name.utf8", np.full(4000, 0xFF, dtype=np.uint8), "UTF-8"),
        ("/_cols/d", np.array([0, -1, 7, 0], dtype=np.int32), "code 2"),
        ("/_cols/d", np.array([0, -5, 1, 0], dtype=np.int32), "code 1"),
        ("/_cols/d", np.array([0, 1], dtype=np.int32), "int32"),
        ("/_cols/d_dict", "batch-of-ints", "str"),
        ("/_cols/v", "batch-of-bytes", "str"),
        ("/_cols/b", "too-many-rows", "rows"),
        ("/_cols/b", "batch-with-null", "bytes"),
        ("/_cols/v", np.zeros(4), "BatchArray"),
    ],
    ids=[
        "offsets-start",
        "offsets-decrease",
        "offsets-past-data",
        "offsets-more-rows",
        "offsets-dtype",
        "invalid-utf8",
        "code-past-dictionary",
        "code-negative",
        "codes-short",
        "dictionary-not-text",
        "vlstring-bytes",
        "vlbytes-too-many-rows",
        "vlbytes-null-not-nullable",
        "vlstring-not-batches",
    ],
)
def test_hostile_columns_refused_on_open(tmp_path: Path, key: str, value: Any, match: str) -> None:
    value = (
        {
            "batch-of-ints": _batch([1, 2]),
            "batch-of-bytes": _batch([b"a", b"b", b"c", b"d"]),
            "too-many-rows": _batch([b"a"] * 5000),
            "batch-with-null": _batch([b"a", None, b"c", b"d"]),
        }.get(value, value)
        if isinstance(value, str)
        else pb.asarray(value)
    )
    path = _damage(tmp_path, key, value)
    with pytest.raises(FormatError, match=match):
        CTable.open(path)


def test_hostile_schema_entries_refused(tmp_path: Path) -> None:
    import json

    path = str(tmp_path / "t.b2d")
    _table(path).close()
    store = pb.TreeStore(path, mode="a")
    meta = store["/_meta"]
    doc = json.loads(meta.vlmeta["schema"])
    doc["columns"][1]["batch_rows"] = -3
    meta.vlmeta["schema"] = json.dumps(doc)
    store.close()
    with pytest.raises(FormatError, match="batch_rows"):
        CTable.open(path)


# -- UTF8Array ------------------------------------------------------------------------------------
@needs_string_dtype
def test_utf8array_pending_flush_reads_and_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    from pyblosc2.ctable import utf8array

    monkeypatch.setattr(utf8array, "_FLUSH_ROWS", 3)
    values = ["a", "", "日本", "x" * 50, "\x00z", "last"]
    arr = pb.UTF8Array(pb.utf8())
    arr.extend(values[:4])  # three flushed, one pending
    assert arr._persisted == 3 and len(arr) == 4
    arr.append(values[4])
    assert arr[:].tolist() == values[:5] and arr[3] == values[3] and arr[-1] == values[4]
    arr.extend([values[5]])
    arr.flush()
    offsets = arr.offsets[:].tolist()
    assert offsets == [0, 1, 1, 7, 57, 59, 63]
    assert arr.data[:63].tobytes() == "".join(values).encode()
    assert arr[np.array([5, 0])].tolist() == ["last", "a"]
    assert arr._span_max_bytes(0, 6) == 50 and arr._span_max_bytes(1, 3) == 6
    arr[1] = "filled"
    assert arr[:].tolist() == [values[0], "filled", *values[2:]]
    assert (arr == "last").tolist() == [False] * 5 + [True]
    assert (arr < "b").tolist() == [True, False, False, False, True, False]


@needs_string_dtype
def test_utf8array_refuses_and_recovers() -> None:
    arr = pb.UTF8Array(pb.utf8())
    with pytest.raises(TypeError, match="Expected str"):
        arr.append(4)
    with pytest.raises(TypeError, match="not nullable"):
        arr.append(None)
    arr.extend(["first"])
    arr.flush()
    arr.extend(["ok", "bad\udc80"])
    with pytest.raises(UnicodeEncodeError):
        arr.flush()
    arr.extend(["second"])
    arr.flush()
    assert arr[:].tolist() == ["first", "second"]
    assert pb.utf8_array([None], pb.utf8(null_value="<NA>"))[:].tolist() == ["<NA>"]
    with pytest.raises(ParamTypeError, match="utf8 spec"):
        pb.UTF8Array(pb.vlstring())


def test_scalar_varlen_array_batches_and_rewrites() -> None:
    from pyblosc2.scalar_array import _ScalarVarLenArray

    a = _ScalarVarLenArray(pb.vlbytes(nullable=True, batch_rows=3))
    a.extend([b"a", None, b"c", b"d"])
    assert a._persisted_row_count == 3 and len(a._pending) == 1
    a[1] = b"B"  # a stored batch rewritten
    a[3] = b"D"  # a pending row
    a.flush()
    assert a[:] == [b"a", b"B", b"c", b"D"] and a[[3, 0]] == [b"D", b"a"] and a[-2] == b"c"
    assert [len(b) for b in a._backend] == [3, 1]
    assert a._backend.schunk.meta["ctable_varlen_scalar"]["py_type"] == "bytes"
    with pytest.raises(TypeError, match="Expected bytes"):
        a.append("text")
    with pytest.raises(TypeError, match="not nullable"):
        _ScalarVarLenArray(pb.vlstring()).append(None)
    with pytest.raises(IndexError):
        a[9]


def test_text_with_nul_orders_as_python_and_isin() -> None:
    @dataclasses.dataclass
    class R:
        s: str = pb.field(pb.utf8())
        d: str = pb.field(pb.dictionary())

    values = ["nul\x00in", "nul\x00INSIDE", "nul"]
    t = CTable(R, new_data={"s": values, "d": [None, "a", "b"]})
    assert t.where(t.s < "nul\x00in").s[:].tolist() == ["nul\x00INSIDE", "nul"]
    assert t.sort_by("s").s[:].tolist() == sorted(values)
    assert t.d.isin(["a", None]).tolist() == [False, True, False]
    assert t.d.is_dictionary and not t.s.is_dictionary
    assert t.s.is_varlen_scalar and t.s.is_utf8  # python-blosc2 counts utf8 as varlen scalar


# -- a table changed and not closed ----------------------------------------------------------------
_KILLED_CHILD = """
import dataclasses, os, signal, sys
import pyblosc2 as pb
t = pb.CTable.open(sys.argv[1], mode="a")
t.extend([(i, f"n{i}") for i in range(5, 8)])
if sys.argv[2] == "flush":
    t._flush_varlen_columns()
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("flush", ["no", "flush"])
def test_a_table_killed_before_close_keeps_its_text(tmp_path: Path, flush: str) -> None:
    """Text columns are written in python-blosc2's layout at close (or a flush); a process
    killed after changing the table once read back '' for the new rows (python-blosc2 an
    IndexError), then was refused whole. The change log (varlog.py) now holds every write:
    the table opens with the rows as the writer left them, and a writable open and close
    writes the layout, which python-blosc2 then reads."""

    @dataclasses.dataclass
    class R:
        x: int = 0
        s: str = pb.field(pb.utf8(), default="")

    path = str(tmp_path / "t.b2d")
    with CTable(R, urlpath=path, mode="w") as t:
        t.extend([(i, f"s{i}") for i in range(5)])
    script = tmp_path / "child.py"
    script.write_text(_KILLED_CHILD)
    env = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
    done = run_child([sys.executable, str(script), path, flush], "a CTable writer", env=env)
    assert done.returncode == -signal.SIGKILL
    want = [f"s{i}" for i in range(5)] + ["n5", "n6", "n7"]
    back = CTable.open(path)
    assert back.x[:].tolist() == list(range(8))
    assert list(back.s[:]) == want
    assert os.path.exists(os.path.join(path, "_varlog.b2f")) == (flush == "no")
    CTable.open(path, mode="a").close()  # the layout takes the log's rows; the log goes
    assert not os.path.exists(os.path.join(path, "_varlog.b2f"))
    assert list(CTable.open(path).s[:]) == want
