"""CTable schema changes, vlmeta, copies, files and cframes, compaction and computed columns
(pyblosc2.ctable.schema_ops, persist, computed): in memory and on disk (``.b2d``, ``.b2z``),
both ways with python-blosc2 4.14.1, and hostile computed-column documents refused on open."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.ctable import CTable, ctable_from_cframe
from pyblosc2.errors import FormatError, ParamError, ParamTypeError

FORMS = ["b2d", "b2z"]


def _row(lib: Any) -> type:
    @dataclasses.dataclass
    class Row:
        id: int = lib.field(lib.int64(ge=0), default=0)
        score: float = lib.field(lib.float64(), default=0.0)

    return Row


def _fill(lib: Any, path: str | None = None, n: int = 12) -> Any:
    t = lib.CTable(_row(lib), urlpath=path, mode="w") if path else lib.CTable(_row(lib))
    t.extend([(i, i / 4) for i in range(n)])
    t.delete([0, 5])
    return t


# -- schema changes -------------------------------------------------------------------------
@pytest.mark.parametrize("form", [None, *FORMS])
def test_add_drop_rename_columns(tmp_path: Path, form: str | None) -> None:
    path = str(tmp_path / f"t.{form}") if form else None
    t = _fill(pb, path)
    ids = t.id[:]
    t.add_column("w", pb.field(pb.float32(), default=1.5))
    t.add_column("n", pb.int8(), values=np.arange(len(t)))
    t.rename_column("score", "pts")
    t.drop_column("w")
    assert t.col_names == ["id", "pts", "n"] and t.n[:].tolist() == list(range(len(t)))
    t.append({"id": 99, "pts": 1.0, "n": 7})
    assert t.n[-1] == 7 and t.id[:-1].tolist() == ids.tolist()
    if path:
        t.close()
        again = CTable.open(path)
        assert again.col_names == ["id", "pts", "n"] and again.n[:].tolist()[-1] == 7
        assert "w" not in again.schema.columns_by_name
        if form == "b2d":
            assert not (tmp_path / "t.b2d" / "_cols" / "w.b2nd").exists()
            assert not (tmp_path / "t.b2d" / "_cols" / "score.b2nd").exists()


def test_schema_change_errors() -> None:
    t = _fill(pb)
    with pytest.raises(ParamError, match="requires a default"):
        t.add_column("w", pb.float64())
    with pytest.raises(ParamError, match="already exists"):
        t.add_column("score", pb.field(pb.float64(), default=0.0))
    with pytest.raises(ParamError, match="requires 10 entries"):
        t.add_column("w", pb.float64(), values=[1.0])
    with pytest.raises(ParamTypeError, match="Cannot coerce"):
        t.add_column("w", pb.int8(), values=["x"] * 10)
    with pytest.raises(ParamError, match="violates constraint le=3"):
        t.add_column("w", pb.int8(le=3), values=[9] * 10)
    with pytest.raises(ParamTypeError):
        t.add_column("w", pb.field(pb.int8(), default="x"))
    with pytest.raises(ParamTypeError, match="Cannot coerce"):
        t.add_column("s", pb.vlstring(), values=[1] * 10)
    with pytest.raises(ParamError, match="_"):
        t.add_column("_x", pb.field(pb.int8(), default=0))
    with pytest.raises(KeyError):
        t.drop_column("nope")
    with pytest.raises(KeyError):
        t.rename_column("nope", "x")
    with pytest.raises(ParamError, match="already exists"):
        t.rename_column("id", "score")
    t.drop_column("score")
    with pytest.raises(ParamError, match="last"):
        t.drop_column("id")
    assert t.col_names == ["id"] and len(t) == 10
    CTable(_row(pb)).add_column("w", pb.float64())  # no rows: no default needed


# -- vlmeta, copies, files ------------------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
def test_vlmeta_copies_and_files(tmp_path: Path, form: str) -> None:
    t = _fill(pb)
    t.vlmeta["who"] = "me"
    t.vlmeta["tags"] = [1, 2]
    assert t.vlmeta[:] == {"who": "me", "tags": [1, 2]}
    view = t.where(t.id > 6)
    saved = str(tmp_path / f"v.{form}")
    (view.to_b2z if form == "b2z" else view.to_b2d)(saved)
    back = CTable.open(saved)
    assert back.id[:].tolist() == [7, 8, 9, 10, 11] and back.vlmeta["who"] == "me"
    with pytest.raises(ParamError, match="overwrite"):
        view.save(saved)
    view.save(saved, overwrite=True)
    loaded = CTable.load(saved)
    loaded.append((50, 0.0))  # in memory and writable
    assert loaded.id[-1] == 50 and CTable.open(saved).id[-1] == 11
    c = t.copy(urlpath=str(tmp_path / f"c.{form}"), chunks=4, blocks=2)
    assert c._cols["id"].chunks == (4,) and c.id[:].tolist() == t.id[:].tolist()
    mem = t.copy()
    assert mem._valid_rows.shape[0] == len(t) and mem.vlmeta["tags"] == [1, 2]
    assert view.head(2).copy().vlmeta["who"] == "me"  # a view's copy: its table's vlmeta
    with pytest.raises(ParamError, match=r"\.b2z"):
        t.to_b2z(str(tmp_path / "x.b2d"))
    with pytest.raises(ValueError, match="reading mode"):  # python-blosc2's words
        CTable.open(saved).vlmeta["x"] = 1  # a read-only table: a read-only vlmeta


def test_persistent_vlmeta_survives_reopen(tmp_path: Path) -> None:
    for form in FORMS:
        path = str(tmp_path / f"m.{form}")
        with _fill(pb, path) as t:
            t.vlmeta["k"] = {"a": 1}
        with CTable.open(path, mode="a") as t:
            assert t.vlmeta["k"] == {"a": 1}
            del t.vlmeta["k"]
            t.vlmeta["j"] = 2
        assert dict(CTable.open(path).vlmeta[:]) == {"j": 2}


def test_cframes_and_compaction() -> None:
    t = _fill(pb)
    t.vlmeta["v"] = 1
    frame = t.where(t.id % 2 == 1).where(t.id > 0).to_cframe()  # a view of a view
    got = ctable_from_cframe(frame)
    assert got.id[:].tolist() == [1, 3, 7, 9, 11] and got.vlmeta["v"] == 1
    with pytest.raises(ParamError, match="read-only"):
        got.append((1, 1.0))
    with pytest.raises(ParamError, match="EmbedStore"):
        ctable_from_cframe(pb.asarray(np.arange(3)).to_cframe())
    other = pb.EmbedStore()
    other["/a"] = np.arange(3)
    with pytest.raises(ParamError, match="CTable"):
        ctable_from_cframe(other.to_cframe())
    before = t.id[:]
    t.compact()
    assert t._valid_rows[: len(t)].all() and not t._valid_rows[len(t) :].any()
    assert t.id[:].tolist() == before.tolist()
    t.append((77, 1.0))
    assert t.id[-1] == 77


# -- computed columns -----------------------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
def test_computed_columns_persist(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"c.{form}")
    t = _fill(pb, path)
    t.add_computed_column("twice", "id * 2")
    t.add_computed_column("mix", lambda c: c["id"] + c["score"], dtype=np.float32)
    assert t.col_names == ["id", "score", "twice", "mix"] and t.mix.dtype == np.float32
    np.testing.assert_array_equal(t.twice[:], t.id[:] * 2)
    np.testing.assert_array_equal(t.where(t.twice > 16).id[:], [9, 10, 11])
    assert t.sort_by("twice", ascending=False).id[0] == 11 and t.twice.sum() == 2 * t.id.sum()
    for _ in range(5000 // 12):  # the stored arrays grow under the expression
        t.extend([(1, 1.0)] * 12)
    assert t.twice[-1] == 2 and len(t.twice) == len(t)
    with pytest.raises(ParamError, match="computed column"):
        t.twice[0] = 1
    with pytest.raises(ParamError, match=r"used by|computed columns"):
        t.drop_column("id")
    t.close()
    again = CTable.open(path)
    assert again.computed_columns["twice"]["col_deps"] == ["id"]
    np.testing.assert_allclose(again.mix[:5], (again.id[:5] + again.score[:5]).astype(np.float32))
    loaded = CTable.load(path)
    loaded.drop_computed_column("mix")
    assert loaded.col_names == ["id", "score", "twice"]


def test_computed_column_errors() -> None:
    t, other = _fill(pb), _fill(pb)
    with pytest.raises(ParamError, match="does not reference a stored column"):
        t.add_computed_column("x", lambda c: other._cols["id"] * 2)
    with pytest.raises(ParamTypeError, match="LazyExpr"):
        t.add_computed_column("x", lambda c: 42)
    with pytest.raises(ParamTypeError, match="callable or an expression string"):
        t.add_computed_column("x", 12)
    with pytest.raises(ParamError, match="already exists"):
        t.add_computed_column("id", "score * 2")
    with pytest.raises(KeyError, match="not a computed column"):
        t.drop_computed_column("id")


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        (
            {"name": "x", "expression": "o0 * 2", "col_deps": ["nope"], "dtype": "int64"},
            FormatError,
        ),
        ({"name": "x", "expression": "o0 * 2", "col_deps": "id", "dtype": "int64"}, FormatError),
        (
            {"name": "x", "expression": "__import__('os')", "col_deps": [], "dtype": "i8"},
            FormatError,
        ),
        ({"name": "x", "expression": "o0 * 2", "col_deps": ["id"], "dtype": "nope"}, FormatError),
        (
            {"name": "x", "kind": "dsl", "dsl_source": "import os\nos.system('x')", "col_deps": []},
            FormatError,
        ),
        (
            {
                "name": "x",
                "kind": "dsl",
                "dsl_source": "def f(a):\n    return open(a)\n",
                "col_deps": ["id"],
                "dtype": "i8",
            },
            FormatError,
        ),
        ({"name": "x", "kind": "nope", "expression": "o0", "col_deps": ["id"]}, FormatError),
        ("not an object", FormatError),
    ],
    ids=[
        "unknown-dep",
        "deps-not-list",
        "python-code",
        "bad-dtype",
        "dsl-not-a-function",
        "dsl-outside-the-dsl",
        "unknown-kind",
        "not-object",
    ],
)
def test_hostile_computed_columns_refused_on_open(
    tmp_path: Path, entry: Any, error: type[Exception]
) -> None:
    path = str(tmp_path / "h.b2d")
    _fill(pb, path).close()
    with CTable.open(path, mode="a") as t:  # write the hostile entry into the stored schema
        doc = t._storage.load_schema()
        doc["computed_columns"] = [entry]
        t._storage.replace_schema(doc)
    with pytest.raises(error):
        CTable.open(path)


# -- both ways with python-blosc2 ----------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
def test_python_blosc2_changes_read_by_pyblosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    t = _fill(cblosc2, path)
    t.add_column("w", cblosc2.field(cblosc2.float32(), default=1.5))
    t.rename_column("score", "pts")
    t.add_computed_column("twice", "id * 2")
    t.vlmeta["who"] = "ref"
    t.close()
    ours = CTable.open(path)
    assert ours.col_names == ["id", "pts", "w", "twice"] and ours.vlmeta["who"] == "ref"
    np.testing.assert_array_equal(ours.twice[:], ours.id[:] * 2)
    np.testing.assert_array_equal(ours.w[:], np.full(10, 1.5, np.float32))
    frame = cblosc2.CTable.open(path).to_cframe()
    assert ctable_from_cframe(frame).twice[:].tolist() == ours.twice[:].tolist()


@pytest.mark.parametrize("form", FORMS)
def test_pyblosc2_changes_read_by_python_blosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    with _fill(pb, path) as t:
        t.add_column("n", pb.int8(), values=np.arange(10))
        t.drop_column("score")
        t.add_computed_column("sq", "id * id")
        t.vlmeta["me"] = [1, "x"]
    theirs = cblosc2.CTable.open(path)
    assert theirs.col_names == ["id", "n", "sq"] and theirs.vlmeta["me"] == [1, "x"]
    np.testing.assert_array_equal(theirs.sq[:], theirs.id[:] ** 2)
    np.testing.assert_array_equal(theirs.where(theirs.n > 6).id[:], [9, 10, 11])
    got = cblosc2.ctable_from_cframe(CTable.open(path).to_cframe())
    assert got.col_names == ["id", "n", "sq"] and got.sq[-1] == 121
    saved = str(tmp_path / "s.b2z")
    CTable.open(path).sort_by("n", ascending=False).to_b2z(saved)
    assert cblosc2.CTable.open(saved).n[:].tolist() == list(range(9, -1, -1))


# -- timestamp columns ------------------------------------------------------------------------
@pytest.mark.parametrize("unit", ["s", "ms", "ns"])
def test_timestamp_columns_both_ways(cblosc2: Any, tmp_path: Path, unit: str) -> None:
    def row(lib: Any) -> type:
        @dataclasses.dataclass
        class R:
            a: int = lib.field(lib.int64(), default=0)
            t: int = lib.field(lib.timestamp(unit=unit), default=0)

        return R

    when = np.datetime64("2021-03-04T05:06:07", unit)
    ours = str(tmp_path / "ours.b2d")
    with CTable(row(pb), new_data=[(1, 1000), (2, when)], urlpath=ours, mode="w") as t:
        assert t.t[1] == when and t.t[:].dtype == np.dtype(f"datetime64[{unit}]")
        assert t.where(t.t > np.datetime64("2000-01-01")).a[:].tolist() == [2]
        assert t.t._raw_col.dtype == np.int64  # stored as epoch offsets, as python-blosc2
    theirs = cblosc2.CTable.open(ours)
    assert theirs.t[:].tolist() == CTable.open(ours).t[:].tolist()
    path = str(tmp_path / "theirs.b2d")
    ref = cblosc2.CTable(row(cblosc2), new_data=[(1, 5), (2, when)], urlpath=path, mode="w")
    ref.close()
    got = CTable.open(path)
    np.testing.assert_array_equal(got.t[:], cblosc2.CTable.open(path).t[:])
    with pytest.raises(ParamTypeError, match="'t'"):
        CTable(row(pb)).append((1, "yesterday"))
