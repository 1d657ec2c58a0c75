"""CTable ``list`` columns both ways with python-blosc2 4.14.1 (in a child process): tables
written by one library and read, changed and appended to by the other, in ``.b2d`` and
``.b2z`` files, with nulls, empty lists, deleted rows and struct items."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import pyblosc2 as pb
from tests.bounded import run_child

pytest.importorskip("blosc2")

FORMS = ["b2d", "b2z"]
ROWS = [("a", 1, ["x", "y"], [1, 2]), ("b", 2, [], None), ("c", 3, None, [3])] + [
    (f"r{i}", 10 + i, [f"t{j}" for j in range(i % 4)], list(range(i % 3))) for i in range(200)
]
DELETED = [1, 50]

_DECLARE = """
import dataclasses, json, sys
import blosc2 as lib

@dataclasses.dataclass
class Row:
    code: str = lib.field(lib.string(max_length=8))
    qty: int = lib.field(lib.int32())
    tags: list[str] = lib.field(lib.list(lib.string(max_length=16), nullable=True, batch_rows=16))
    nums: list[int] = lib.field(lib.list(lib.int64(), nullable=True), default=None)
"""

_THEY_WRITE = (
    _DECLARE
    + """
rows, deleted = json.loads(sys.argv[2])
t = lib.CTable(Row, urlpath=sys.argv[1], mode="w")
t.extend([tuple(r) for r in rows])
t.delete(deleted)
t.close()
"""
)

_THEY_READ = """
import json, sys
import blosc2
t = blosc2.CTable.open(sys.argv[1], mode="a")
out = {"tags": t["tags"][:], "nums": t["nums"][:], "qty": t["qty"][:].tolist()}
t.append(("tail", 999, ["z"], [9]))
t.close()
print(json.dumps(out))
"""


def _row() -> type:
    @dataclasses.dataclass
    class Row:
        code: str = pb.field(pb.string(max_length=8))
        qty: int = pb.field(pb.int32())
        tags: list[str] = pb.field(  # noqa: RUF009
            pb.list(pb.string(max_length=16), nullable=True, batch_rows=16)
        )
        nums: list[int] = pb.field(pb.list(pb.int64(), nullable=True), default=None)  # noqa: RUF009

    return Row


def _expected(extra: tuple[Any, ...] | None = None) -> dict[str, list[Any]]:
    rows = [r for i, r in enumerate(ROWS) if i not in DELETED] + ([extra] if extra else [])
    return {"qty": [r[1] for r in rows], "tags": [r[2] for r in rows], "nums": [r[3] for r in rows]}


def _child(code: str, *args: str) -> str:
    done = run_child(
        [sys.executable, "-c", code, *args], "a python-blosc2 child", capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return str(done.stdout.decode())


@pytest.mark.parametrize("form", FORMS)
def test_python_blosc2_reads_and_extends_ours(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    t = pb.CTable(_row(), urlpath=path, mode="w")
    t.extend(ROWS)
    t.delete(DELETED)
    t.close()
    theirs = json.loads(_child(_THEY_READ, path))
    assert theirs == _expected()
    back = pb.CTable.open(path)
    tail = ("tail", 999, ["z"], [9])
    assert {k: list(back[k][:]) for k in ("qty", "tags", "nums")} == _expected(tail)


@pytest.mark.parametrize("form", FORMS)
def test_we_read_change_and_extend_python_blosc2s(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    _child(_THEY_WRITE, path, json.dumps([ROWS, DELETED]))
    ours = pb.CTable.open(path, mode="a")
    assert {k: list(ours[k][:]) for k in ("qty", "tags", "nums")} == _expected()
    ours.tags[0] = ["changed"]
    ours.append(("tail", 999, ["z"], [9]))
    ours.close()
    theirs = json.loads(_child(_THEY_READ, path))
    want = _expected(("tail", 999, ["z"], [9]))
    want["tags"][0] = ["changed"]
    assert theirs == want


_THEY_IMPORT = """
import json, sys
import pyarrow as pa
import blosc2
item = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
at = pa.table({
    "x": pa.array([1, 2, 3]),
    "v": pa.array([[1], None, [2, 3]]),
    "w": pa.array([[[1]], [[2, 3]], []]),
    "items": pa.array([[{"a": 1, "b": "x"}], None, []], type=pa.list_(item)),
})
t = blosc2.CTable.from_arrow(at.schema, at.to_batches(), urlpath=sys.argv[1], mode="w")
print(json.dumps(blosc2.schema_compiler.schema_to_dict(t._schema)["columns"]))
t.close()
"""


def test_arrow_imports_give_python_blosc2s_schema_and_files_both_read(tmp_path: Path) -> None:
    """The same Arrow table imported by each library: the same list column entries (item
    specs nullable as Arrow's value field, text items string(max_length=1_000_000)), and
    python-blosc2's file (its schema records the flat names as 'nested' metadata) opens."""
    pa = pytest.importorskip("pyarrow")
    path = str(tmp_path / "theirs.b2d")
    theirs = json.loads(_child(_THEY_IMPORT, path))
    item = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
    at = pa.table(
        {
            "x": pa.array([1, 2, 3]),
            "v": pa.array([[1], None, [2, 3]]),
            "w": pa.array([[[1]], [[2, 3]], []]),
            "items": pa.array([[{"a": 1, "b": "x"}], None, []], type=pa.list_(item)),
        }
    )
    ours = pb.CTable.from_arrow(at.schema, at.to_batches())
    lists = [c.to_dict() for c in ours._columns if c.spec.kind == "list"]
    assert lists == [c for c in theirs if c["kind"] == "list"] and len(lists) == 3
    back = pb.CTable.open(path)
    assert back.v[:] == [[1], None, [2, 3]] and back.w[:] == [[[1]], [[2, 3]], []]
    assert back["items"][:] == [[{"a": 1, "b": "x"}], None, []]
