"""Object columns of a CTable (python-blosc2's ``blosc2.field(blosc2.object())``): any msgpack
value per row in msgpack batches at ``_cols/<name>``; reads, files both ways with
python-blosc2 (its side in a child process), damaged leaves refused with a FormatError."""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError, ParamTypeError
from tests.bounded import run_child


@dataclasses.dataclass
class Row:
    id: int = pb.field(pb.int32())
    payload: object = pb.field(pb.object(nullable=True))


DATA = [(1, {"x": 1, "y": [1, 2]}), (2, ["a", "b"]), (3, None), (4, 2.5), (5, "text")]


def test_rows_and_nulls() -> None:
    t = pb.CTable(Row, new_data=DATA)
    assert t.payload[:] == [d[1] for d in DATA]
    assert t[0].payload == {"x": 1, "y": [1, 2]} and t.payload.is_varlen_scalar
    assert t.take([4, 2]).payload[:] == ["text", None]

    @dataclasses.dataclass
    class Strict:
        payload: object = pb.field(pb.object())

    with pytest.raises(ParamTypeError, match="not nullable"):
        pb.CTable(Strict).append([None])


_THEIRS = """
import dataclasses, json, sys
import blosc2

@dataclasses.dataclass
class Row:
    id: int = blosc2.field(blosc2.int32())
    payload: object = blosc2.field(blosc2.object(nullable=True))

DATA = [(1, {"x": 1, "y": [1, 2]}), (2, ["a", "b"]), (3, None), (4, 2.5), (5, "text")]
path, mode = sys.argv[1], sys.argv[2]
if mode == "write":
    with blosc2.CTable(Row, urlpath=path, mode="w") as t:
        t.extend(DATA)
        t.delete(0)
else:
    t = blosc2.CTable.open(path)
    print(json.dumps({"payload": list(t.payload[:]), "schema": t.schema_dict()}))
"""


def _theirs(tmp_path: Path, *args: str) -> Any:
    pytest.importorskip("blosc2")
    script = tmp_path / "theirs.py"
    script.write_text(textwrap.dedent(_THEIRS))
    return run_child(
        [sys.executable, str(script), *args],
        f"python-blosc2 {args[1]}s an object-column table",
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
    assert got["payload"] == [d[1] for d in DATA[1:]]
    assert got["schema"]["columns"] == pb.CTable.open(ours).schema_dict()["columns"]
    _theirs(tmp_path, theirs, "write")
    assert pb.CTable.open(theirs).payload[:] == [d[1] for d in DATA[1:]]


def test_damaged_leaves_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.b2d"
    with pb.CTable(Row, urlpath=str(path), mode="w") as t:
        t.extend(DATA)
    doc = pb.CTable.open(str(path)).schema_dict()
    doc["columns"][1]["nullable"] = False  # the stored None is then out of place
    meta = pb.open(str(path / "_meta.b2f"), mode="a")
    meta.vlmeta["schema"] = json.dumps(doc)
    with pytest.raises(FormatError, match="row 2"):
        pb.CTable.open(str(path))
    doc["columns"][1] = {"name": "payload", "kind": "vlstring", "nullable": True}
    meta.vlmeta["schema"] = json.dumps(doc)
    with pytest.raises(FormatError, match="_cols/payload"):
        pb.CTable.open(str(path))
    doc["columns"][1] = {"name": "payload", "kind": "object", "batch_rows": -3}
    meta.vlmeta["schema"] = json.dumps(doc)
    with pytest.raises(FormatError, match="batch_rows"):
        pb.CTable.open(str(path))
