"""Dotted (nested) column names of a CTable: nested mappings as rows, ``t.trip.begin.lon``,
dotted names in where strings, the hierarchical storage path python-blosc2 uses
(``_cols/trip/begin/lon``, segments percent-encoded), files both ways with python-blosc2
(its side in a child process), bad names refused."""

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
from pyblosc2.ctable.nested import join_field_path, relpath, split_field_path
from pyblosc2.errors import FormatError, ParamError
from tests.bounded import run_child


@dataclasses.dataclass
class Flat:
    a: float = 0.0
    b: float = 0.0
    c: float = 0.0


NAMES = {"a": "trip.begin.lon", "b": "trip.begin.lat", "c": "payment.fare"}
ROWS = [(1.0, 2.0, 5.0), (3.0, 4.0, 15.0), (5.0, 6.0, 25.0)]


def _table(**kwargs: Any) -> Any:
    t = pb.CTable(Flat, **kwargs)
    for old, new in NAMES.items():
        t.rename_column(old, new)
    return t


def _nested(lon: float, lat: float, fare: float) -> dict[str, Any]:
    return {"trip": {"begin": {"lon": lon, "lat": lat}}, "payment": {"fare": fare}}


def test_nested_rows_namespaces_and_where_strings() -> None:
    t = _table()
    t.append(_nested(*ROWS[0]))
    t.extend([_nested(*ROWS[1])])
    t.extend({"trip": {"begin": {"lon": [5.0], "lat": [6.0]}}, "payment.fare": [25.0]})
    assert t["trip.begin.lat"][:].tolist() == [2.0, 4.0, 6.0]
    assert t.trip.begin.lon.max() == 5.0 and "lon" in dir(t.trip.begin)
    assert t.where("payment.fare > 10").nrows == 2
    assert t.trip.begin.lon.sum(where="payment.fare > 10") == 8.0
    with pytest.raises(ParamError, match="not columns"):
        t.append({"trip": {"end": {"lon": 1.0}}})
    with pytest.raises(AttributeError):
        _ = t.trip.end
    assert len(t) == 3


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_hierarchical_layout_and_reopen(tmp_path: Path, form: str) -> None:
    path = tmp_path / f"t.{form}"
    with _table(urlpath=str(path), mode="w") as t:
        t.extend([_nested(*r) for r in ROWS])
    if form == "b2d":
        assert (path / "_cols" / "trip" / "begin" / "lon.b2nd").is_file()
        assert (path / "_cols" / "payment" / "fare.b2nd").is_file()
    back = pb.CTable.open(str(path))
    assert back.col_names == list(NAMES.values())
    assert back.payment.fare[:].tolist() == [5.0, 15.0, 25.0]


def test_segments_escaped_and_refused() -> None:
    assert relpath("a\\.b.c/d") == "a%2Eb/c%2Fd"
    with pytest.raises(ParamError, match="empty segment"):
        relpath("a..b")
    t = pb.CTable(Flat)
    with pytest.raises(ParamError, match="empty segment"):
        t.rename_column("a", "x.")
    with pytest.raises(ParamError, match=r"not columns|deeper"):  # bounded, never a recursion
        deep: Any = 1.0
        for _ in range(70):
            deep = {"trip": deep}
        u = pb.CTable(Flat)
        u.rename_column("a", ".".join(["trip"] * 71))
        u.append(deep)


def test_a_bad_dotted_name_in_a_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.b2d"
    with _table(urlpath=str(path), mode="w") as t:
        t.extend([_nested(*r) for r in ROWS])
    doc = pb.CTable.open(str(path)).schema_dict()
    doc["columns"][0]["name"] = "trip..lon"
    meta = pb.open(str(path / "_meta.b2f"), mode="a")
    meta.vlmeta["schema"] = json.dumps(doc)
    with pytest.raises((FormatError, ParamError), match="segment"):
        pb.CTable.open(str(path))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=4))
def test_paths_round_trip_property(parts: list[str]) -> None:
    assert split_field_path(join_field_path(parts)) == tuple(parts)
    assert "/" not in "".join(
        relpath(join_field_path(parts)).split("/")[i] for i in range(len(parts))
    )


_THEIRS = """
import dataclasses, json, sys
import blosc2

@dataclasses.dataclass
class Flat:
    a: float = 0.0
    b: float = 0.0
    c: float = 0.0

path, mode = sys.argv[1], sys.argv[2]
if mode == "write":
    t = blosc2.CTable(Flat, urlpath=path, mode="w")
    for old, new in {"a": "trip.begin.lon", "b": "trip.begin.lat", "c": "payment.fare"}.items():
        t.rename_column(old, new)
    t.extend({"trip.begin.lon": [1.0, 3.0, 5.0], "trip.begin.lat": [2.0, 4.0, 6.0],
              "payment.fare": [5.0, 15.0, 25.0]})
    t.close()
else:
    t = blosc2.CTable.open(path)
    print(json.dumps({n: t[n][:].tolist() for n in t.col_names}))
"""


def _theirs(tmp_path: Path, *args: str) -> Any:
    pytest.importorskip("blosc2")
    script = tmp_path / "theirs.py"
    script.write_text(textwrap.dedent(_THEIRS))
    return run_child(
        [sys.executable, str(script), *args],
        f"python-blosc2 {args[1]}s a nested-column table",
        capture_output=True,
        check=True,
    )


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_python_blosc2_reads_ours_and_we_read_theirs(tmp_path: Path, form: str) -> None:
    ours, theirs = str(tmp_path / f"ours.{form}"), str(tmp_path / f"theirs.{form}")
    with _table(urlpath=ours, mode="w") as t:
        t.extend([_nested(*r) for r in ROWS])
    expected = {name: [r[i] for r in ROWS] for i, name in enumerate(NAMES.values())}
    assert json.loads(_theirs(tmp_path, ours, "read").stdout) == expected
    _theirs(tmp_path, theirs, "write")
    back = pb.CTable.open(theirs)
    assert {n: back[n][:].tolist() for n in back.col_names} == expected
    np.testing.assert_array_equal(back.trip.begin.lat[:], [2.0, 4.0, 6.0])
