"""Nullable CTable columns both ways with python-blosc2 4.14.1: mask storage (the
``.notnull`` sidecar) and sentinel storage (int, float NaN, bool 255, text), written by one
library and read by the other with the same nulls and values; a table of one library
appended to by the other (the sidecar grown and written by both); the stored schema
entries alike."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb

FORMS = ["b2d", "b2z"]
N = 200
NULL_A = np.arange(N) % 7 == 3  # mask float column
NULL_B = np.arange(N) % 5 == 1  # sentinel int column (-1)
NULL_C = np.arange(N) % 4 == 2  # sentinel string column
NULL_D = np.arange(N) % 3 == 0  # mask bool column


def _row(lib: Any) -> type:
    return dataclasses.make_dataclass(
        "NRow",
        [
            ("id", int, lib.field(lib.int64())),
            ("a", float, lib.field(lib.float64(nullable=True))),
            ("b", int, lib.field(lib.int32(null_value=-1))),
            ("c", str, lib.field(lib.string(max_length=4, nullable=True, null_storage="sentinel"))),
            ("d", bool, lib.field(lib.bool(null_storage="mask"))),
        ],
    )


def _fill(t: Any, *, start: int = 0, n: int = N) -> None:
    i = np.arange(start, start + n)
    sentinel_c = t["c"].null_value
    t.extend(
        {
            "id": i,
            "a": [None if NULL_A[k % N] else k * 0.5 if k % 11 else np.nan for k in i],
            "b": np.where(NULL_B[i % N], -1, i).astype(np.int32),
            "c": [sentinel_c if NULL_C[k % N] else f"v{k % 100}" for k in i],
            "d": [None if NULL_D[k % N] else bool(k % 2) for k in i],
        }
    )


def _check(t: Any, n: int = N) -> None:
    i = np.arange(n)
    for name, nulls in (("a", NULL_A), ("b", NULL_B), ("c", NULL_C), ("d", NULL_D)):
        assert np.asarray(t[name].is_null()).tolist() == nulls[i % N].tolist(), name
    assert t["a"].null_count() == int(NULL_A[i % N].sum())
    values = np.asarray(t["a"][:])
    keep = ~NULL_A[i % N] & (i % 11 != 0)
    assert np.array_equal(values[keep], i[keep] * 0.5)
    assert np.isnan(values[~NULL_A[i % N] & (i % 11 == 0)]).all()  # NaN: a value
    d = np.asarray(t["d"][:])[~NULL_D[i % N]]
    assert d.tolist() == (i[~NULL_D[i % N]] % 2 == 1).tolist()


@pytest.mark.parametrize("form", FORMS)
def test_pyblosc2_nulls_to_python_blosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    t = pb.CTable(_row(pb), urlpath=path, mode="w", expected_size=16)  # grown by extend
    _fill(t)
    t.close()
    theirs = cblosc2.CTable.open(path)
    _check(theirs)
    assert theirs["b"].null_value == -1 and theirs["c"].null_value == "__BLOSC2_NULL__"
    assert theirs["a"].null_storage == "mask"
    if form == "b2d":
        theirs.close()
        t2 = cblosc2.CTable.open(path, mode="a")  # python-blosc2 appends, pyblosc2 reads
        _fill(t2, start=N)
        t2.close()
        _check(pb.CTable.open(path), 2 * N)


@pytest.mark.parametrize("form", FORMS)
def test_python_blosc2_nulls_to_pyblosc2(cblosc2: Any, tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    t = cblosc2.CTable(_row(cblosc2), urlpath=path, mode="w", expected_size=16)
    _fill(t)
    t.close()
    ours = pb.CTable.open(path)
    _check(ours)
    assert (
        ours.schema_dict()["columns"][1:] == cblosc2.CTable.open(path).schema_dict()["columns"][1:]
    )
    if form == "b2d":
        ours.close()
        with pb.CTable.open(path, mode="a") as t2:  # pyblosc2 appends, python-blosc2 reads
            _fill(t2, start=N)
        _check(cblosc2.CTable.open(path), 2 * N)


def test_a_sidecar_made_by_an_edit_is_read_by_python_blosc2(cblosc2: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "t.b2d")
    row = _row(pb)
    t = pb.CTable(row, urlpath=path, mode="w")
    t.extend({"id": [1, 2, 3], "a": [1.0, 2.0, 3.0], "b": [1, 2, 3], "c": ["x"] * 3,
              "d": [True] * 3})  # fmt: skip
    assert t._null_mask("a") is None  # no null: no sidecar
    t["a"][1] = None
    t.sort_by("id", ascending=False, inplace=True)
    t.close()
    theirs = cblosc2.CTable.open(path)
    assert theirs["a"].is_null().tolist() == [False, True, False]
    assert theirs["id"][:].tolist() == [3, 2, 1]
