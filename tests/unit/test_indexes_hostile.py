"""Damaged or hostile index data (the vlmeta descriptor store and the sidecar files) is
refused with a pyblosc2 error naming the field, before anything is sized or read by it; a
sidecar path can name only a file of the array's own index, in its directory."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError, MissingPartError

KEY = "blosc2_indexes"


def _indexed(tmp_path: Path, kind: pb.IndexKind = pb.IndexKind.PARTIAL) -> tuple[str, dict]:
    path = str(tmp_path / "h.b2nd")
    a = pb.asarray(np.arange(5000), urlpath=path, mode="w", chunks=(1000,), blocks=(100,))
    a.create_index(kind=kind)
    return path, copy.deepcopy(a.schunk.vlmeta[KEY])


def _with(path: str, store: Any) -> pb.NDArray:
    a = pb.open(path, mode="a")
    a.schunk.vlmeta[KEY] = store
    return a


def _query(a: pb.NDArray) -> Any:
    return ((a > 10) & (a < 20)).where(a).compute()[:]


def _edit(store: dict, *keys: Any, value: Any) -> dict:
    d = store["indexes"]["__self__"]
    for k in keys[:-1]:
        d = d[k]
    d[keys[-1]] = value
    return store


CASES = {
    "store not a map": lambda s: [1, 2],
    "version": lambda s: {**s, "version": 2},
    "indexes not a map": lambda s: {**s, "indexes": "x"},
    "kind": lambda s: _edit(s, "kind", value="bogus"),
    "token": lambda s: _edit(s, "token", value="other"),
    "dtype object": lambda s: _edit(s, "dtype", value="|O"),
    "dtype huge": lambda s: _edit(s, "dtype", value="V" + "9" * 12),
    "target source": lambda s: _edit(s, "target", value={"source": "shell"}),
    "target field": lambda s: _edit(s, "target", value={"source": "field", "field": "nope"}),
    "shape huge": lambda s: _edit(s, "shape", value=[(1 << 63) - 1]),
    "nsegments": lambda s: _edit(s, "levels", "block", "nsegments", value=1 << 40),
    "segment_len zero": lambda s: _edit(s, "levels", "block", "segment_len", value=0),
    "level name": lambda s: _edit(s, "levels", "galaxy", value={"segment_len": 1}),
    "chunk_len": lambda s: _edit(s, "partial", "chunk_len", value=-1),
    "nav_segment_len": lambda s: _edit(s, "partial", "nav_segment_len", value=1 << 50),
    "nsegments_per_chunk": lambda s: _edit(s, "partial", "nsegments_per_chunk", value=3),
    "position_dtype": lambda s: _edit(s, "partial", "position_dtype", value="<f8"),
    "optlevel": lambda s: _edit(s, "optlevel", value=99),
}


@pytest.mark.parametrize("case", CASES)
def test_a_damaged_descriptor_is_refused(tmp_path: Path, case: str) -> None:
    path, store = _indexed(tmp_path)
    a = _with(path, CASES[case](store))
    with pytest.raises(FormatError):
        _ = a.indexes
    with pytest.raises(FormatError):
        _query(a)


@pytest.mark.parametrize(
    "where", ["/etc/passwd", "../../h.b2nd", "h.b2nd", "h.__index__.partial.values.b2nd/../x"]
)
def test_a_sidecar_path_outside_the_index_is_refused(tmp_path: Path, where: str) -> None:
    path, store = _indexed(tmp_path)
    a = _with(path, _edit(store, "partial", "values_path", value=where))
    with pytest.raises(FormatError, match="values"):
        _query(a)
    assert Path(path).exists()
    a.drop_index()  # never deletes a file that is not of the index
    assert Path(path).exists()


def test_a_sidecar_of_the_wrong_length_or_dtype_is_refused(tmp_path: Path) -> None:
    path, _ = _indexed(tmp_path)
    folder = Path(path).parent
    shutil.copy(
        folder / "h.__index__.partial.offsets.b2nd", folder / "h.__index__.partial.values.b2nd"
    )
    with pytest.raises(FormatError, match=r"partial\.values"):
        _query(pb.open(path, mode="r"))


def test_a_missing_sidecar_is_a_missing_part(tmp_path: Path) -> None:
    path, _ = _indexed(tmp_path)
    (Path(path).parent / "h.__index__.partial.partial_nav.l1.b2nd").unlink()
    with pytest.raises(MissingPartError):
        _query(pb.open(path, mode="r"))


def test_tampered_offsets_and_positions_are_refused(tmp_path: Path) -> None:
    path, _ = _indexed(tmp_path)
    folder = Path(path).parent
    off = pb.open(str(folder / "h.__index__.partial.offsets.b2nd"), mode="a")
    off[1] = 999
    with pytest.raises(FormatError, match="offsets"):
        _query(pb.open(path, mode="r"))
    (tmp_path / "x").mkdir()
    path2, _ = _indexed(tmp_path / "x")
    pos = pb.open(str(Path(path2).parent / "h.__index__.partial.positions.b2nd"), mode="a")
    pos[:] = np.full(pos.shape, 2000, pos.dtype)  # beyond the 2000-row index chunk
    with pytest.raises(FormatError, match="positions"):
        _query(pb.open(path2, mode="r"))


def test_full_positions_out_of_range_are_refused(tmp_path: Path) -> None:
    path, _ = _indexed(tmp_path, pb.IndexKind.FULL)
    pos = pb.open(str(Path(path).parent / "h.__index__.full.positions.b2nd"), mode="a")
    pos[:] = np.full(pos.shape, 1 << 40, np.int64)
    with pytest.raises(FormatError, match="full"):
        _query(pb.open(path, mode="r"))


def test_too_many_runs_are_refused_before_reading_any(tmp_path: Path) -> None:
    path, store = _indexed(tmp_path, pb.IndexKind.FULL)
    run = {"id": 0, "length": 1, "values_path": None, "positions_path": None}
    a = _with(path, _edit(store, "full", "runs", value=[run] * ((1 << 16) + 1)))
    with pytest.raises(FormatError, match="runs"):
        _query(a)


def test_a_write_to_an_array_with_a_damaged_store_stands(tmp_path: Path) -> None:
    path, store = _indexed(tmp_path)
    a = _with(path, _edit(store, "levels", "block", "nsegments", value=1 << 40))
    a[5] = -5  # the write is not refused; the damaged index is marked stale
    b = pb.open(path, mode="r")
    assert b[5] == -5
    assert b.schunk.vlmeta[KEY]["indexes"]["__self__"]["stale"] is True
