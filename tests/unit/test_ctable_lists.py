"""List columns of a CTable (python-blosc2's ``blosc2.field(blosc2.list(item_spec))``): rows
of typed lists (or None), stored as a ListArray leaf at ``_cols/<name>``; reads, takes,
views, files and cframes, files both ways with python-blosc2 (its side in a child process),
damaged leaves and schema entries refused with a FormatError naming them, and a property:
what is appended reads back."""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.errors import FormatError, ParamError, ParamTypeError
from tests.bounded import run_child


@dataclasses.dataclass
class Row:
    id: int = pb.field(pb.int64())
    note: str = pb.field(pb.vlstring(nullable=True))
    tags: list[int] = pb.field(pb.list(pb.int64(), nullable=True))  # noqa: RUF009


DATA = [(0, "zero", [0, 1]), (1, None, None), (2, "two", [2]), (3, "three", [3, 4]), (4, "", [])]
KEEP = [1, 2, 3, 4]  # after delete(0)


def test_rows_views_and_takes() -> None:
    t = pb.CTable(Row, new_data=DATA)
    assert t.tags[:] == [d[2] for d in DATA]
    row = t[1]
    assert row.tags is None and row["id"] == 1 and row.as_dict()["note"] is None
    assert t.take([3, 1, 3]).tags[:] == [[3, 4], None, [3, 4]]
    assert t.tags.take([0, -1])[:] == [[0, 1], []]
    assert t[1:3].tags[:] == [None, [2]]
    assert t.where(t.id > 2).tags[:] == [[3, 4], []]
    structured = np.asarray(t)
    assert structured.dtype["tags"] == np.dtype(object) and structured[2]["tags"] == [2]
    t.tags[4] = [7, 8, 9]
    t.append((5, "x", (5.0, 6)))
    assert t.tags[-2:] == [[7, 8, 9], [5, 6]]


def test_bad_rows_refused_before_writing() -> None:
    t = pb.CTable(Row, new_data=DATA)
    with pytest.raises(ParamTypeError, match="'tags'"):
        t.append((9, "x", "not a list"))
    with pytest.raises(ParamTypeError, match="'tags'"):
        t.append((9, "x", ["a"]))

    @dataclasses.dataclass
    class Strict:
        tags: list[int] = pb.field(pb.list(pb.int8()))  # noqa: RUF009

    s = pb.CTable(Strict)
    with pytest.raises(ParamError, match="Null list cells"):
        s.append((None,))
    with pytest.raises(ParamTypeError, match="'tags'"):
        s.extend([([1000],)])
    assert len(t) == len(DATA) and len(s) == 0


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_files_and_cframes_round_trip(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    with pb.CTable(Row, urlpath=path, mode="w") as t:
        t.extend(DATA)
        t.delete(0)
    back = pb.CTable.open(path)
    assert back.tags[:] == [DATA[i][2] for i in KEEP]
    assert back.schema_dict()["columns"][2] == {
        "name": "tags",
        "kind": "list",
        "item": {"kind": "int64"},
        "nullable": True,
        "storage": "batch",
        "serializer": "msgpack",
        "batch_rows": 2048,
    }
    again = pb.ctable_from_cframe(back.to_cframe())
    assert again.tags[:] == back.tags[:]


_THEIRS = """
import dataclasses, json, sys
import blosc2

@dataclasses.dataclass
class Row:
    id: int = blosc2.field(blosc2.int64())
    note: str = blosc2.field(blosc2.vlstring(nullable=True))
    tags: list[int] = blosc2.field(blosc2.list(blosc2.int64(), nullable=True))

DATA = [(0, "zero", [0, 1]), (1, None, None), (2, "two", [2]), (3, "three", [3, 4]), (4, "", [])]
path, mode = sys.argv[1], sys.argv[2]
if mode == "write":
    with blosc2.CTable(Row, urlpath=path, mode="w") as t:
        t.extend(DATA)
        t.delete(0)
else:
    t = blosc2.CTable.open(path)
    print(json.dumps({"tags": list(t.tags[:]), "note": list(t.note[:]), "id": t.id[:].tolist()}))
"""


def _theirs(tmp_path: Path, *args: str) -> Any:
    pytest.importorskip("blosc2")
    script = tmp_path / "theirs.py"
    script.write_text(textwrap.dedent(_THEIRS))
    return run_child(
        [sys.executable, str(script), *args],
        f"python-blosc2 {args[1]}s a list-column table",
        capture_output=True,
        check=True,
    )


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_python_blosc2_reads_ours_and_we_read_theirs(tmp_path: Path, form: str) -> None:
    ours, theirs = str(tmp_path / f"ours.{form}"), str(tmp_path / f"theirs.{form}")
    with pb.CTable(Row, urlpath=ours, mode="w") as t:
        t.extend(DATA)
        t.delete(0)
    got = json.loads(_theirs(tmp_path, ours, "read").stdout)
    assert got == {
        "tags": [DATA[i][2] for i in KEEP],
        "note": [DATA[i][1] for i in KEEP],
        "id": KEEP,
    }
    _theirs(tmp_path, theirs, "write")
    back = pb.CTable.open(theirs)
    assert back.tags[:] == [DATA[i][2] for i in KEEP]
    assert back.note[:] == [DATA[i][1] for i in KEEP]


def _table(tmp_path: Path) -> Path:
    path = tmp_path / "t.b2d"
    with pb.CTable(Row, urlpath=str(path), mode="w") as t:
        t.extend(DATA)
    return path


def _replace_leaf(path: Path, cells: list[Any], item: Any) -> None:
    leaf = path / "_cols" / "tags.b2b"
    leaf.unlink()
    la = pb.ListArray(item_spec=item, nullable=True, urlpath=str(leaf), mode="w", contiguous=True)
    la.extend(cells)
    la.close()


@pytest.mark.parametrize(
    ("cells", "item", "says"),
    [
        ([[1]] * (len(DATA) + 3), pb.int64(), "rows"),
        ([["a"]], pb.string(), "listarray spec"),
        ([[1]], pb.int8(), "listarray spec"),
    ],
)
def test_damaged_leaf_refused(tmp_path: Path, cells: list[Any], item: Any, says: str) -> None:
    path = _table(tmp_path)
    _replace_leaf(path, cells, item)
    with pytest.raises(FormatError, match=says):
        pb.CTable.open(str(path))


def test_leaf_of_another_kind_refused(tmp_path: Path) -> None:
    path = _table(tmp_path)
    (path / "_cols" / "tags.b2b").unlink()
    pb.asarray(np.arange(5), urlpath=str(path / "_cols" / "tags.b2nd"), mode="w")
    with pytest.raises(FormatError, match="_cols/tags leaf"):
        pb.CTable.open(str(path))


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"item": None}, "spec"),
        ({"batch_rows": 0}, "batch_rows"),
        ({"batch_rows": 1 << 40}, "batch_rows"),
        ({"nullable": "yes"}, "nullable"),
        ({"surprise": 1}, "surprise"),
        ({"item": {"kind": "list", "item": {"kind": "int8"}, "batch_rows": -1}}, "batch_rows"),
    ],
)
def test_hostile_schema_entries_refused(tmp_path: Path, entry: dict[str, Any], says: str) -> None:
    path = _table(tmp_path)
    doc = pb.CTable.open(str(path)).schema_dict()
    doc["columns"][2].update(entry)
    meta = pb.open(str(path / "_meta.b2f"), mode="a")
    meta.vlmeta["schema"] = json.dumps(doc)
    with pytest.raises(FormatError, match=says):
        pb.CTable.open(str(path))


_cell = st.one_of(st.none(), st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4))


@settings(max_examples=25, deadline=None)
@given(cells=st.lists(_cell, max_size=8), gone=st.sets(st.integers(0, 7)))
def test_lists_read_back_property(cells: list[Any], gone: set[int]) -> None:
    @dataclasses.dataclass
    class R:
        x: list[int] = pb.field(pb.list(pb.int32(), nullable=True, batch_rows=3))  # noqa: RUF009

    t = pb.CTable(R, expected_size=1)
    half = len(cells) // 2
    for cell in cells[:half]:
        t.append((cell,))
    t.extend({"x": cells[half:]})
    drop = sorted(i for i in gone if i < len(cells))
    t.delete(drop)
    keep = [cells[i] for i in range(len(cells)) if i not in drop]
    assert t.x[:] == keep
    assert pb.ctable_from_cframe(t.to_cframe()).x[:] == keep
