"""CTable indexes shared with python-blosc2 4.14.1 both ways, with real files, python-blosc2
in a process of its own: the indexes one library builds (the ``index_catalog`` of ``_meta``,
the pieces in ``_indexes/<key>/``) the other lists and queries with the scan's rows, and a
write by either marks them stale for the other."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import run_child

KINDS = ["summary", "bucket", "partial", "full", "opsi"]
N = 3000

ROW = """
import dataclasses, json, numpy as np, blosc2
@dataclasses.dataclass
class Row:
    id: int = blosc2.field(blosc2.int32())
    value: float = blosc2.field(blosc2.float64())
    category: int = blosc2.field(blosc2.int32())
"""


def _ref(cblosc2: Any, code: str) -> Any:
    """Run ``code`` with python-blosc2 in a child process; its last line of output, JSON."""
    del cblosc2  # the fixture: skip (or fail in CI) without the reference library
    out = run_child(
        [sys.executable, "-c", ROW + code],
        "run python-blosc2",
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _columns() -> dict[str, np.ndarray]:
    ids = np.arange(N, dtype=np.int32)
    return {"id": ids, "value": ids * 1.5, "category": (ids % 5).astype(np.int32)}


def _expected_ids(lo: int) -> list[int]:
    return list(range(lo + 1, N))


def test_python_blosc2_indexes_are_listed_and_used_here(cblosc2: Any, tmp_path: Path) -> None:
    paths = {k: str(tmp_path / f"{k}.b2d") for k in KINDS}
    code = f"""
ids = np.arange({N}, dtype=np.int32)
for kind, path in {paths!r}.items():
    t = blosc2.CTable(Row, urlpath=path, mode="w", expected_size={N})
    t.extend({{"id": ids, "value": ids * 1.5, "category": (ids % 5).astype(np.int32)}})
    t.create_index("id", kind=blosc2.IndexKind(kind))
    t.create_index(expression="value * category", kind=blosc2.IndexKind.FULL, name="vc")
    t.close()
print(json.dumps(1))
"""
    assert _ref(cblosc2, code) == 1
    cols = _columns()
    want = np.flatnonzero(cols["value"] * cols["category"] >= 9000).tolist()
    for kind, path in paths.items():
        t = pb.CTable.open(path)
        assert {(i.col_name, i.kind) for i in t.indexes} >= {("id", kind), (None, "full")}
        cond = (t["id"] > 2900) | (t["id"] < 3)
        assert t._index_condition(cond) is not None, kind
        assert t.where(cond)["id"][:].tolist() == [0, 1, 2, *_expected_ids(2900)]
        expr = (t["value"] * t["category"]) >= 9000
        assert t._index_condition(expr) is not None
        assert t.where(expr)["id"][:].tolist() == want


def test_our_indexes_are_listed_and_answer_in_python_blosc2(cblosc2: Any, tmp_path: Path) -> None:
    paths = {k: str(tmp_path / f"{k}.b2d") for k in KINDS}
    for kind, path in paths.items():
        with pb.CTable(pb_row(), urlpath=path, mode="w", expected_size=N) as t:
            t.extend(_columns())
            t.create_index("id", kind=pb.IndexKind(kind))
            t.create_index(expression="value * category", kind=pb.IndexKind.FULL, name="vc")
    code = f"""
out = {{}}
for kind, path in {paths!r}.items():
    t = blosc2.CTable.open(path)
    kinds = sorted((i.kind, bool(i.stale)) for i in t.indexes)
    expr = (t._cols["value"] * t._cols["category"]) >= 9000
    used = t._try_index_where(expr) is not None
    out[kind] = [kinds, used, t.where(t["id"] > 2900)["id"][:].tolist(), len(t.where(expr))]
print(json.dumps(out))
"""
    got = _ref(cblosc2, code)
    cols = _columns()
    n_expr = int(np.count_nonzero(cols["value"] * cols["category"] >= 9000))
    for kind in KINDS:
        kinds, used, ids, n = got[kind]
        assert sorted(map(tuple, kinds)) == sorted([(kind, False), ("full", False)])
        assert used  # python-blosc2 answers the expression through our index
        assert ids == _expected_ids(2900) and n == n_expr


def pb_row() -> Any:
    import dataclasses

    @dataclasses.dataclass
    class Row:
        id: int = pb.field(pb.int32())
        value: float = pb.field(pb.float64())
        category: int = pb.field(pb.int32())

    return Row


@pytest.mark.parametrize("writer", ["pyblosc2", "blosc2"])
def test_a_write_by_the_other_library_makes_an_index_stale(
    cblosc2: Any, tmp_path: Path, writer: str
) -> None:
    path = str(tmp_path / "t.b2d")
    if writer == "pyblosc2":  # we build, python-blosc2 writes, we must not trust it
        with pb.CTable(pb_row(), urlpath=path, mode="w") as t:
            t.extend(_columns())
            t.create_index("id", kind=pb.IndexKind.FULL)
        code = f"""
t = blosc2.CTable.open({path!r}, mode="a")
t["id"][5] = 99999
t.close()
print(json.dumps(1))
"""
        assert _ref(cblosc2, code) == 1
        t2 = pb.CTable.open(path)
        assert t2.index("id").stale
        assert t2._index_condition(t2["id"] > 90000) is None
        assert t2.where(t2["id"] > 90000)["id"][:].tolist() == [99999]
    else:  # python-blosc2 builds, we write, it must see the index stale
        code = f"""
t = blosc2.CTable(Row, urlpath={path!r}, mode="w")
ids = np.arange({N}, dtype=np.int32)
t.extend({{"id": ids, "value": ids * 1.5, "category": (ids % 5).astype(np.int32)}})
t.create_index("id", kind=blosc2.IndexKind.FULL)
t.close()
print(json.dumps(1))
"""
        assert _ref(cblosc2, code) == 1
        with pb.CTable.open(path, mode="a") as t:
            t["id"][5] = 99999
            assert t.index("id").stale
        code = f"""
t = blosc2.CTable.open({path!r})
print(json.dumps([t.index("id").stale, t.where(t["id"] > 90000)["id"][:].tolist()]))
"""
        assert _ref(cblosc2, code) == [True, [99999]]
