"""``NDArray.append`` returns the length its own commit made, read under its lock, even when
what runs after the commit (the index hook) refreshes the handle with another process's
appends (found by tests/trust/test_shared_edits.py's vector case under load)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import pyblosc2 as pb
from pyblosc2.ndarray import indexhook


def test_append_returns_the_length_of_its_own_commit(tmp_path: Path, monkeypatch) -> None:
    path = str(tmp_path / "v.b2nd")
    pb.zeros(5, dtype=np.int64, chunks=(4,), blocks=(2,), urlpath=path, mode="w")
    mine = pb.open(path, mode="a", locking=True)
    other = pb.open(path, mode="a", locking=True)
    real = indexhook.provider()

    class Hook:
        """The real provider, after another handle appends and ours sees it."""

        def __getattr__(self, name: str):
            return getattr(real, name)

        done = False

        def appended(self, array, old_size, rows) -> None:
            if array is mine and not Hook.done:
                Hook.done = True
                other.append([7, 7, 7])
                array.refresh()
            real.appended(array, old_size, rows)

    monkeypatch.setattr(indexhook, "_slot", [Hook()])
    assert mine.append([1, 2]) == 7  # 5 + its own 2, not 10
    monkeypatch.setattr(indexhook, "_slot", [real])
    assert pb.open(path)[...].tolist() == [0] * 5 + [1, 2] + [7, 7, 7]
