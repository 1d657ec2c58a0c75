"""utf8 CTable columns with mask storage both ways with python-blosc2 4.14.1, its side in a
child process: a table pyblosc2 writes is read and appended to by python-blosc2, and the
other way round, with the same nulls, the same ``""`` values and the schema version 3 both
write for a mask column."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import run_child

pytestmark = pytest.mark.skipif(
    not hasattr(getattr(np, "dtypes", None), "StringDType"), reason="utf8 columns need numpy 2"
)

VALUES = ["a", None, "", "héllo", None, "__BLOSC2_NULL__"]
MORE = [None, "z", ""]

_CHILD = """
import dataclasses, json, sys
import blosc2
assert blosc2.__version__ == "4.14.1", blosc2.__version__
path, action = sys.argv[1], sys.argv[2]
values = json.loads(sys.argv[3])
if action == "write":
    Row = dataclasses.make_dataclass("U", [
        ("u", str, blosc2.field(blosc2.utf8(null_storage="mask"))),
        ("i", int, blosc2.field(blosc2.int64()))])
    t = blosc2.CTable(Row, urlpath=path, mode="w")
    t.extend([(v, i) for i, v in enumerate(values)])
    t.close()
    print(json.dumps(None))
else:
    t = blosc2.CTable.open(path, mode="a" if action == "append" else "r")
    if action == "append":
        t.extend([(v, 100 + i) for i, v in enumerate(values)])
    nulls = t["u"].is_null().tolist()
    cells = [None if n else str(v) for v, n in zip(t["u"][:], nulls)]
    out = {"cells": cells, "storage": t["u"].null_storage}
    t.close()
    print(json.dumps(out))
"""


def _theirs(path: str, action: str, values: list[Any]) -> Any:
    proc = run_child(
        [sys.executable, "-c", _CHILD, path, action, json.dumps(values)],
        f"python-blosc2 {action} {path}",
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def _logical(col: Any) -> list[Any]:
    nulls = np.asarray(col.is_null()).tolist()
    return [None if n else str(v) for v, n in zip(col[:], nulls, strict=True)]


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_pyblosc2_writes_python_blosc2_reads(tmp_path: Path, form: str) -> None:
    pytest.importorskip("blosc2")
    path = str(tmp_path / f"t.{form}")
    row = dataclasses.make_dataclass(
        "U",
        [("u", str, pb.field(pb.utf8(null_storage="mask"))), ("i", int, pb.field(pb.int64()))],
    )
    t = pb.CTable(row, urlpath=path, mode="w", expected_size=4)  # grown by the extend
    t.extend([(v, i) for i, v in enumerate(VALUES)])
    t.close()
    assert pb.CTable.open(path)._storage.load_schema()["version"] == 3
    got = _theirs(path, "read", [])
    assert got["cells"] == VALUES and got["storage"] == "mask"
    if form == "b2d":  # python-blosc2 appends, pyblosc2 reads its sidecar back
        assert _theirs(path, "append", MORE)["cells"] == VALUES + MORE
        assert _logical(pb.CTable.open(path)["u"]) == VALUES + MORE


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_python_blosc2_writes_pyblosc2_reads(tmp_path: Path, form: str) -> None:
    pytest.importorskip("blosc2")
    path = str(tmp_path / f"t.{form}")
    _theirs(path, "write", VALUES)
    t = pb.CTable.open(path, mode="a" if form == "b2d" else "r")
    assert t["u"].null_storage == "mask" and _logical(t["u"]) == VALUES
    assert t._storage.load_schema()["version"] == 3
    if form == "b2d":  # pyblosc2 appends, python-blosc2 reads
        t.extend({"u": MORE, "i": [100, 101, 102]})
        t.close()
        assert _theirs(path, "read", [])["cells"] == VALUES + MORE
    else:
        t.close()
