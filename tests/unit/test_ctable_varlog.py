"""The change log of a stored table's text, list and object columns (ctable/varlog.py):
what a reader sees while the writer is open, I/O errors in the log or the layout, hostile
logs, and a property over random changes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import varlog
from pyblosc2.errors import ParamTypeError
from pyblosc2.vlarrays.objectarray import ObjectArray
from tests.trust import varlog_writer as vw


def _new(path: Path, n: int = 5) -> Any:
    t = pb.CTable(vw.Row, urlpath=str(path), mode="w", expected_size=4)
    t.extend([vw.row(x) for x in range(n)])
    return t


def test_a_reader_sees_the_open_writers_text(tmp_path: Path) -> None:
    """Before: the writer's new text was in its memory only (open refused the table)."""
    path = tmp_path / "t.b2d"
    t = _new(path)
    t.append(vw.row(7))
    t["v"][0] = "set \u00e9\U0001f600"
    t.delete(2)
    want = [vw.row(x) for x in (0, 1, 3, 4, 7)]
    want[0] = (*want[0][:2], "set \u00e9\U0001f600", *want[0][3:])
    assert vw.rows_of(pb.CTable.open(str(path))) == want
    t.close()
    assert not (path / varlog.LOG_KEY[1:]).with_suffix(".b2f").exists()
    assert vw.rows_of(pb.CTable.open(str(path))) == want


def test_a_log_write_error_refuses_the_change_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.b2d"
    t = _new(path)

    def broken(self: Any, values: Any) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(ObjectArray, "extend", broken)
        with pytest.raises(OSError, match="No space"):
            t.append(vw.row(9))
        with pytest.raises(OSError, match="No space"):
            t["u"][1] = "lost"
    assert len(t) == 5 and t["u"][1] == vw.row(1)[1]  # memory as the log: unchanged
    t.append(vw.row(9))  # the next change goes through
    t.close()
    assert vw.rows_of(pb.CTable.open(str(path))) == [vw.row(x) for x in (0, 1, 2, 3, 4, 9)]


def test_a_layout_write_error_at_close_keeps_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """close fails while writing the layout: the log still holds every change."""
    path = tmp_path / "t.b2d"
    t = _new(path)
    t.close()
    t = pb.CTable.open(str(path), mode="a")
    t.extend([vw.row(x) for x in range(5, 9)])
    t["d"][0] = "new"
    from pyblosc2.ctable import strings

    real = strings.save_var_column
    calls: list[str] = []

    def failing(storage: Any, key: str, column: Any, n: int) -> None:
        calls.append(key)
        if key == "/_cols/v":  # after u was rewritten
            raise OSError(5, "Input/output error")
        real(storage, key, column, n)

    monkeypatch.setattr(varlog, "save_var_column", failing)
    with pytest.raises(OSError, match="Input/output"):
        t.close()
    monkeypatch.undo()
    assert calls[:2] == ["/_cols/u", "/_cols/v"]
    want = [vw.row(x) for x in range(9)]
    want[0] = (*want[0][:3], "new", *want[0][4:])
    assert vw.rows_of(pb.CTable.open(str(path))) == want
    pb.CTable.open(str(path), mode="a").close()
    assert vw.rows_of(pb.CTable.open(str(path))) == want


def test_a_value_msgpack_cannot_hold_is_refused_before_the_row_shows(tmp_path: Path) -> None:
    path = tmp_path / "t.b2d"
    t = _new(path)
    with pytest.raises(ParamTypeError, match="'o'"):
        t.append((9, "u", "v", "d", None, object()))
    assert len(t) == 5
    t.close()
    assert len(pb.CTable.open(str(path))) == 5


BAD_ENTRIES = [
    ("not a list", "[op, name, rows"),
    (["set", "u", 0, "t"], "[op, name, rows"),
    (["put", "u", 0, "t", [b"x"]], "op 'set' or 'at'"),
    (["set", "u", -1, "t", [b"x"]], "first row"),
    (["set", "u", True, "t", [b"x"]], "first row"),
    (["at", "u", [0, 1], "t", [b"x"]], "1 row positions"),
    (["at", "u", [-3], "t", [b"x"]], "positions >= 0"),
    (["set", "u", 0, "z", [b"x"]], "encoding"),
    (["set", "u", 0, "t", [b"\xff\xfe"]], "UTF-8"),
    (["set", "u", 0, "t", [7]], "UTF-8 bytes or None"),
    (["set", "u", 0, "v", [7]], "values of column 'u'"),
    (["set", "ls", 0, "v", ["not a list"]], "values of column 'ls'"),
    (["set", "u", 0, "t", [b"x"] * (varlog.PIECE_ROWS + 1)], "at most"),
]


@pytest.mark.parametrize(("entry", "match"), BAD_ENTRIES)
def test_a_hostile_log_entry_is_refused_naming_it(tmp_path: Path, entry: Any, match: str) -> None:
    path = tmp_path / "t.b2d"
    t = _new(path)
    t.append(vw.row(5))  # the log exists
    t._varlog.log.append(entry)
    with pytest.raises(pb.FormatError, match=r"/_varlog") as info:
        pb.CTable.open(str(path))
    assert match in str(info.value)


def test_a_hostile_log_leaf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.b2d"
    t = _new(path)
    t.append(vw.row(5))
    t._varlog.log.vlmeta[varlog.FULL] = "u"
    with pytest.raises(pb.FormatError, match=r"/_varlog vlmeta 'full'"):
        pb.CTable.open(str(path))
    t._storage.install(varlog.LOG_KEY, ObjectArray(meta={varlog.ROLE: {"version": 9}}))
    with pytest.raises(pb.FormatError, match=r"/_varlog ctable_varlog"):
        pb.CTable.open(str(path))
    t._storage.install(varlog.LOG_KEY, pb.zeros((3,)))
    with pytest.raises(pb.FormatError, match=r"/_varlog .*ObjectArray"):
        pb.CTable.open(str(path))


def test_rows_past_the_capacity_and_dropped_columns_are_skipped(tmp_path: Path) -> None:
    """A row past the capacity was never live (the table was trimmed after the entry); a
    column no longer in the schema was renamed or dropped after its entries."""
    path = tmp_path / "t.b2d"
    t = _new(path)
    t.append(vw.row(5))
    t._varlog.log.append(["set", "u", 10**12, "t", [b"far"]])
    t._varlog.log.append(["set", "gone", 0, "t", [b"x"]])
    assert vw.rows_of(pb.CTable.open(str(path))) == [vw.row(x) for x in range(6)]


def test_rename_and_drop_write_the_layout_and_drop_the_log(tmp_path: Path) -> None:
    path = tmp_path / "t.b2d"
    t = _new(path)
    t.append(vw.row(5))
    t.rename_column("u", "w")
    assert t._varlog.log is None
    t["w"][0] = "after"
    t.drop_column("v")
    assert t._varlog.log is None
    t.add_column("v", pb.field(pb.vlstring(), default="new"))
    t["v"][1] = "set"
    back = pb.CTable.open(str(path))
    assert list(back["w"][:2]) == ["after", vw.row(1)[1]]
    assert list(back["v"][:3]) == ["new", "set", "new"]


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 999)),
        st.tuples(st.just("extend"), st.integers(0, 999)),
        st.tuples(st.just("delete"), st.integers(0, 50)),
        st.tuples(st.just("set"), st.integers(0, 50), st.sampled_from(vw.COLS[1:])),
        st.tuples(st.just("flush")),
    ),
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_a_reader_of_a_changing_table_sees_the_writers_rows(
    tmp_path_factory: Any, ops: Any
) -> None:
    path = str(tmp_path_factory.mktemp("vl") / "t.b2d")
    t = pb.CTable(vw.Row, urlpath=path, mode="w", expected_size=2)
    model: list[tuple[Any, ...]] = []
    for op in ops:
        if op[0] == "append":
            t.append(vw.row(op[1]))
            model.append(vw.row(op[1]))
        elif op[0] == "extend":
            rows = [vw.row(op[1] + j) for j in range(3)]
            t.extend({c: [r[i] for r in rows] for i, c in enumerate(vw.COLS)})
            model += rows
        elif op[0] == "delete" and model:
            i = op[1] % len(model)
            t.delete(i)
            del model[i]
        elif op[0] == "set" and model:
            i, name = op[1] % len(model), op[2]
            t[name][i] = vw.updated(name, op[1])
            row = list(model[i])
            row[vw.COLS.index(name)] = vw.updated(name, op[1])
            model[i] = tuple(row)
        elif op[0] == "flush":
            t._flush_varlen_columns()
        assert vw.rows_of(pb.CTable.open(path)) == model
    t.close()
    assert not os.path.exists(os.path.join(path, "_varlog.b2f"))
    assert vw.rows_of(pb.CTable.open(path)) == model
    assert np.array_equal(pb.CTable.open(path)["x"][:], [r[0] for r in model])


class _Killed(BaseException):
    """The process dies here (nothing after it runs; what is on disk stays)."""


@pytest.mark.parametrize("leaf", ["/_cols/u.utf8", "/_cols/d_dict"])
@pytest.mark.parametrize("change", ["append", "set", "trim"])
def test_a_close_torn_between_two_leaves_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leaf: str, change: str
) -> None:
    """A utf8 column's layout is its bytes and then its offsets, a dictionary column's its
    values and then its codes: a close that dies between the two leaves (each replaced
    whole) leaves the first new and the second old. Appends only: the old second leaf
    describes a prefix of the new first one. Values set in stored rows, or fewer rows: the
    log was given every row of the column first."""
    from pyblosc2.ctable.storage import TableStorage

    path = tmp_path / "t.b2d"
    _new(path, 12).close()
    t = pb.CTable.open(str(path), mode="a")
    want = [vw.row(x) for x in range(12)]
    if change == "append":
        t.extend([vw.row(x) for x in range(12, 20)])
        want += [vw.row(x) for x in range(12, 20)]
    elif change == "set":
        t["u"][0], t["d"][0] = "new u", "new d"
        want[0] = (0, "new u", want[0][2], "new d", *want[0][4:])
    else:
        t.delete([10, 11])
        want = want[:10]
    real = TableStorage.install

    def install(self: Any, key: str, array: Any) -> Any:
        out = real(self, key, array)
        if key == leaf:
            raise _Killed
        return out

    monkeypatch.setattr(TableStorage, "install", install)
    with pytest.raises(_Killed):
        t.close()
    monkeypatch.undo()
    assert os.path.exists(path / "_varlog.b2f")
    assert vw.rows_of(pb.CTable.open(str(path))) == want
    pb.CTable.open(str(path), mode="a").close()
    assert vw.rows_of(pb.CTable.open(str(path))) == want


def test_python_blosc2_reads_the_last_close_until_the_log_is_written(
    tmp_path: Path, cblosc2: Any
) -> None:
    """python-blosc2 does not read the log: a table with one shows it the text of the last
    close and an IndexError past it (python-blosc2 4.14.1 does the same with a table one of
    its own writers changed and has not closed); pyblosc2's writable open and close writes
    the log into the layout, which python-blosc2 then reads whole."""
    path = tmp_path / "t.b2d"
    _new(path, 4).close()
    t = pb.CTable.open(str(path), mode="a")
    t.append(vw.row(9))
    with pytest.raises(IndexError):
        list(cblosc2.CTable.open(str(path))["u"][:])
    t.close()
    assert list(cblosc2.CTable.open(str(path))["u"][:]) == [vw.row(x)[1] for x in (0, 1, 2, 3, 9)]
