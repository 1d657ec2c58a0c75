"""FULL's out-of-core build (pyblosc2.indexes.fullsort): runs sorted within a budget and
merged with small buffers give the stable sort, ties and NaNs included, in the temporary
directory asked for; the descriptor says how it was built."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.indexes import fullsort


@pytest.fixture
def small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fullsort, "RUN_ITEMS", 300)  # x2 at optlevel 5
    monkeypatch.setattr(fullsort, "MERGE_BUFFER_ITEMS", 37)
    monkeypatch.delenv("BLOSC2_FULL_OOC_RUN_ITEMS", raising=False)


def _check(a: Any, data: np.ndarray) -> dict:
    d = a.create_index(kind=pb.IndexKind.FULL)
    assert d["ooc"] is True
    folder = Path(a.urlpath).parent
    values = pb.open(str(folder / "f.__index__.full.values.b2nd"))[:]
    positions = pb.open(str(folder / "f.__index__.full.positions.b2nd"))[:]
    order = np.argsort(data, kind="stable")
    np.testing.assert_array_equal(positions, order)
    np.testing.assert_array_equal(values, data[order])
    return d


@settings(max_examples=25, deadline=None)
@given(
    data=st.lists(st.integers(-5, 5), min_size=0, max_size=3000),
    floats=st.booleans(),
)
def test_runs_merged_out_of_core_are_the_stable_sort(data: list[int], floats: bool) -> None:
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        mp.setattr(fullsort, "RUN_ITEMS", 300)
        mp.setattr(fullsort, "MERGE_BUFFER_ITEMS", 37)
        mp.delenv("BLOSC2_FULL_OOC_RUN_ITEMS", raising=False)
        values = np.asarray(data, dtype=np.float64 if floats else np.int64)
        if floats and len(values):
            values[::7] = np.nan
        a = pb.asarray(
            values, urlpath=str(Path(tmp) / "f.b2nd"), mode="w", chunks=(64,), blocks=(16,)
        )
        d = _check(a, values)
        assert d["full"]["ooc_run_items"] == max(64, min(len(values), 600))
        assert not list(Path(tmp).glob("blosc2-index-ooc-*"))  # the runs are gone


def test_descriptor_and_tmpdir(
    tmp_path: Path, small_runs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = np.random.default_rng(3).permutation(5000)
    a = pb.asarray(data, urlpath=str(tmp_path / "f.b2nd"), mode="w", chunks=(256,), blocks=(64,))
    seen: list[Any] = []
    real = tempfile.TemporaryDirectory

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryDirectory", spy)
    full = _check(a, data)["full"]
    assert seen == [str(tmp_path.resolve())]
    assert full["ooc_run_item_budget"] == 600 and full["ooc_run_item_budget_source"] == "optlevel"
    assert full["temp_peak_disk_bytes"] > 0 and full["temp_backend"] == "blosc2"
    monkeypatch.setenv("BLOSC2_FULL_OOC_RUN_ITEMS", "700")
    other = tmp_path / "o"
    other.mkdir()
    full = a.create_index(kind=pb.IndexKind.FULL, tmpdir=str(other))["full"]
    assert seen[-1] == str(other)
    assert full["ooc_run_item_budget"] == 700 and full["ooc_run_item_budget_source"] == "env"
    assert a.create_index(kind=pb.IndexKind.FULL, build="memory")["ooc"] is False
