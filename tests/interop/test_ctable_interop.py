"""CTables both ways with python-blosc2 4.14.1: standalone tables (``.b2d``, ``.b2z``) and
tables inline in TreeStores, with int, float, bool and string columns and deleted rows,
written by one library and read by the other with the same rows; edits of one library seen
by the other (python-blosc2's indexes marked stale by pyblosc2's changes)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb

FORMS = ["b2d", "b2z"]
N = 300
DELETED = [0, 7, 8, 150, N - 1]


@dataclasses.dataclass
class Row:
    id: int = 0
    score: float = 0.0
    ok: bool = False
    name: str = ""


def _rows() -> dict[str, np.ndarray]:
    ids = np.arange(N, dtype=np.int64)
    return {
        "id": ids * 3,
        "score": ids * 0.25,
        "ok": ids % 3 == 0,
        "name": np.array([f"row-{i}" for i in range(N)]),
    }


def _expected() -> dict[str, np.ndarray]:
    keep = np.setdiff1d(np.arange(N), DELETED)
    return {k: v[keep] for k, v in _rows().items()}


def _fill(table: Any) -> None:
    table.extend(_rows())
    table.delete(DELETED)


def _check(table: Any) -> None:
    expected = _expected()
    assert len(table) == len(expected["id"])
    for name, values in expected.items():
        np.testing.assert_array_equal(np.asarray(table[name][:]), values, err_msg=name)


@pytest.mark.parametrize("form", FORMS)
def test_standalone_python_blosc2_to_pyblosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    t = cblosc2.CTable(Row, urlpath=path, mode="w")
    _fill(t)
    t.close()
    _check(pb.CTable.open(path))
    with pb.CTable.open(path, mode="a") as t2:  # and pyblosc2 appends to it
        t2.append(Row(id=-1, score=1.0, ok=True, name="new"))
    back = cblosc2.CTable.open(path)
    assert len(back) == len(_expected()["id"]) + 1
    assert back["name"][:][-1] == "new" and back["id"][:][-1] == -1


@pytest.mark.parametrize("form", FORMS)
def test_standalone_pyblosc2_to_python_blosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    with pb.CTable(Row, urlpath=path, mode="w") as t:
        _fill(t)
    _check(cblosc2.CTable.open(path))
    opened = cblosc2.open(path)  # python-blosc2's open recognises the table
    assert isinstance(opened, cblosc2.CTable)
    _check(opened)
    assert isinstance(pb.open(path), pb.CTable)
    t2 = cblosc2.CTable.open(path, mode="a")  # python-blosc2 appends, pyblosc2 reads
    t2.append(Row(id=-1, score=1.0, ok=True, name="new"))
    t2.close()
    back = pb.CTable.open(path)
    assert back["id"][-1] == -1 and len(back) == len(_expected()["id"]) + 1


@pytest.mark.parametrize("form", FORMS)
def test_inline_python_blosc2_to_pyblosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"bundle.{form}")
    t = cblosc2.CTable(Row)
    _fill(t)
    with cblosc2.TreeStore(path, mode="w") as ts:
        ts["/arr"] = np.arange(4)
        ts["/g/table"] = t
    with pb.open(path, mode="r") as ts:
        assert sorted(ts.keys()) == ["/arr", "/g", "/g/table"]
        _check(ts["/g/table"])


@pytest.mark.parametrize("form", FORMS)
def test_inline_pyblosc2_to_python_blosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"bundle.{form}")
    t = pb.CTable(Row)
    _fill(t)
    with pb.TreeStore(path, mode="w") as ts:
        ts["/arr"] = np.arange(4)
        ts["/g/table"] = t
    with cblosc2.open(path, mode="r") as ts:
        assert sorted(ts.keys()) == ["/arr", "/g", "/g/table"]
        table = ts["/g/table"]
        assert isinstance(table, cblosc2.CTable)
        _check(table)
        del table


@pytest.mark.parametrize("form", FORMS)
def test_same_inline_layout(cblosc2: Any, tmp_path: Path, form: str) -> None:
    """Both libraries put an inline table in the same members, with the same schema."""
    found = {}
    for lib in (pb, cblosc2):
        path = str(tmp_path / f"{lib.__name__}.{form}")
        t = lib.CTable(Row)
        _fill(t)
        with lib.TreeStore(path, mode="w") as ts:
            ts["/table"] = t
        with pb.DictStore(path, mode="r") as ds:
            meta = ds["/table/_meta"]
            schema = json.loads(meta.vlmeta["schema"])
            valid = ds["/table/_valid_rows"]
            found[lib.__name__] = (
                sorted(ds.keys()),
                schema,
                dict(ds._estore._store.vlmeta)["_object_registry"],
                valid.shape,
                ds["/table/_cols/name"].dtype,
            )
    assert found["pyblosc2"] == found["blosc2"]


@pytest.mark.parametrize("form", FORMS)
def test_pyblosc2_edits_make_python_blosc2_indexes_stale(
    cblosc2: Any, tmp_path: Path, form: str
) -> None:
    """python-blosc2 builds summary indexes on close; after pyblosc2 appends and deletes,
    python-blosc2's queries still see the rows as they are."""
    path = str(tmp_path / f"t.{form}")
    t = cblosc2.CTable(Row, urlpath=path, mode="w")
    _fill(t)
    t.close()
    with pb.CTable.open(path, mode="a") as t2:
        t2.extend({"id": [10_000, 10_001], "score": [1.0, 2.0]})
        t2.delete(0)  # the row with id 3
        t2["id"][4] = 50_000  # in place, inside the first indexed block
    with pb.DictStore(path, mode="r") as ds:  # the catalog python-blosc2 built: stale now
        vlmeta = ds["/_meta"].vlmeta
        catalog = vlmeta["index_catalog"]
        assert catalog and all(desc["stale"] for desc in catalog.values())
        assert vlmeta["value_epoch"] > 1 and vlmeta["visibility_epoch"] >= 1
    back = cblosc2.CTable.open(path)
    np.testing.assert_array_equal(back.where(back["id"] >= 50_000)["id"][:], [50_000])
    np.testing.assert_array_equal(
        back.where(back["id"] >= 10_000)["id"][:], [50_000, 10_000, 10_001]
    )
    assert 3 not in set(back.where(back["id"] < 10)["id"][:].tolist())
    assert len(back) == len(_expected()["id"]) + 1


@pytest.mark.parametrize("form", FORMS)
def test_where_agrees_with_python_blosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    t = cblosc2.CTable(Row, urlpath=path, mode="w")
    _fill(t)
    t.close()
    ours, theirs = pb.CTable.open(path), cblosc2.CTable.open(path)
    for lib, table in (("pyblosc2", ours), ("blosc2", theirs)):
        got = table.where((table["id"] > 100) & (table["score"] < 60) & ~table["ok"])
        np.testing.assert_array_equal(
            got["name"][:],
            [f"row-{i}" for i in range(34, 240) if i % 3 and i not in DELETED],
            err_msg=lib,
        )


@pytest.mark.parametrize("form", FORMS)
def test_close_leaves_summary_indexes_to_python_blosc2(
    cblosc2: Any, tmp_path: Path, form: str
) -> None:
    """A disagreement kept on purpose: python-blosc2's close builds summary indexes of the
    columns; pyblosc2's close builds none (it writes no index files) and records
    ``summary_indexes_built: false``, so python-blosc2 builds them the next time it closes
    the table in append mode. Both read the same rows before and after."""
    path = str(tmp_path / f"t.{form}")
    with pb.CTable(Row, urlpath=path, mode="w") as t:
        _fill(t)
    with pb.DictStore(path, mode="r") as ds:
        vlmeta = ds["/_meta"].vlmeta
        assert vlmeta.get("summary_indexes_built", False) is False
        assert not vlmeta.get("index_catalog")
    assert len(cblosc2.CTable.open(path).indexes) == 0
    theirs = cblosc2.CTable.open(path, mode="a")
    theirs.close()
    built = cblosc2.CTable.open(path)
    assert len(built.indexes) > 0
    assert all(idx.kind == "summary" for idx in built.indexes)
    _check(built)
    _check(pb.CTable.open(path))
