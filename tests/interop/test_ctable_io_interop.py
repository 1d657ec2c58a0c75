"""group_by, Parquet, Arrow and CSV both ways with python-blosc2 4.14.1: the same table built
by both libraries groups to the same results; group_by results and Arrow imports stored by one
library are opened by the other; Parquet and CSV files written by one are read by the other,
and both write the same CSV text."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb

pa = pytest.importorskip("pyarrow")

N = 500
DELETED = [0, 3, 99, 250, N - 1]


@dataclasses.dataclass
class Row:
    k: int = 0
    city: str = ""
    v: float = 0.0
    ok: bool = False


def _data() -> dict[str, np.ndarray]:
    i = np.arange(N)
    return {
        "k": (i * 7) % 5,
        "city": np.array(["Paris", "Rome", "Oslo", "Lima"])[(i * 3) % 4],
        "v": np.sin(i) * 100,
        "ok": i % 3 == 0,
    }


def _table(lib: Any, **kwargs: Any) -> Any:
    t = lib.CTable(Row, **kwargs)
    t.extend(_data())
    t.delete(DELETED)
    return t


def _cols(t: Any) -> dict[str, list[Any]]:
    return {n: np.asarray(t[n][:]).tolist() for n in t.col_names}


@pytest.mark.parametrize("keys", ["k", "city", ["city", "k"]])
def test_group_by_same_results(cblosc2: Any, keys: Any) -> None:
    aggs = {"v": ["sum", "mean", "min", "max", "argmin", "argmax", "count"], "ok": "sum"}
    theirs = _table(cblosc2).group_by(keys, sort=True).agg(aggs, n=("*", "size"))
    ours = _table(pb).group_by(keys, sort=True).agg(aggs, n=("*", "size"))
    assert ours.col_names == theirs.col_names
    got, want = _cols(ours), _cols(theirs)
    for name in ours.col_names:
        if isinstance(want[name][0], float):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-12, err_msg=name)
        else:
            assert got[name] == want[name], name


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_group_by_results_stored_both_ways(cblosc2: Any, tmp_path: Path, form: str) -> None:
    ours_path, theirs_path = str(tmp_path / f"ours.{form}"), str(tmp_path / f"theirs.{form}")
    _table(pb).group_by("city").agg({"v": "mean", "k": "max"}, urlpath=ours_path).close()
    _table(cblosc2).group_by("city").agg({"v": "mean", "k": "max"}, urlpath=theirs_path).close()
    ours_read = cblosc2.CTable.open(ours_path)
    theirs_read = pb.CTable.open(theirs_path)
    assert ours_read.col_names == theirs_read.col_names == ["city", "v_mean", "k_max"]
    a, b = _cols(ours_read), _cols(theirs_read)
    assert a["city"] == b["city"] and a["k_max"] == b["k_max"]
    np.testing.assert_allclose(a["v_mean"], b["v_mean"], rtol=1e-12)  # summation order


def test_parquet_both_ways(cblosc2: Any, tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    _table(pb).to_parquet(ours)
    _table(cblosc2).to_parquet(theirs)
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(ours).equals(pq.read_table(theirs))
    a = pb.CTable.from_parquet(theirs, string_max_length=8)
    b = cblosc2.CTable.from_parquet(str(ours), string_max_length=8)
    assert _cols(a) == _cols(b)
    assert a["city"].dtype == b["city"].dtype


def test_arrow_import_stored_opened_by_python_blosc2(cblosc2: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "arrow.b2d")
    at = _table(cblosc2).to_arrow()
    t = pb.CTable.from_arrow(at, urlpath=path, string_max_length={"city": 8})
    t.close()
    back = cblosc2.CTable.open(path)
    assert back.to_arrow().equals(at)


def test_csv_same_text_and_read_both_ways(cblosc2: Any, tmp_path: Path) -> None:
    ours, theirs = _table(pb).to_csv(), _table(cblosc2).to_csv()
    assert ours == theirs
    path = tmp_path / "t.csv"
    path.write_text(ours, encoding="utf-8", newline="")
    assert _cols(pb.CTable.from_csv(path, Row)) == _cols(cblosc2.CTable.from_csv(str(path), Row))


def test_group_by_a_dictionary_key_with_nulls_as_python_blosc2() -> None:
    """A null key is left out (dropna=True, both libraries), or kept as a group of its own
    with dropna=False, keyed null and first (both libraries)."""
    cblosc2 = pytest.importorskip("blosc2")
    at = pa.table({"x": [1, None, 3, 4], "d": pa.array(["x", None, "x", "y"]).dictionary_encode()})
    for dropna in (True, False):
        ours = pb.CTable.from_arrow(at).group_by("d", dropna=dropna).agg({"x": "sum"})
        theirs = cblosc2.CTable.from_arrow(at).group_by("d", dropna=dropna).agg({"x": "sum"})
        assert ours.to_arrow().to_pylist() == theirs.to_arrow().to_pylist()
