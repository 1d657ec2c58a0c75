"""The parsed small chunks an open frame keeps (``FrameReader._wholes``) never outlive what
it read: another process's commit between two reads of one handle is seen by the second."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb

ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
ITEMS = 1024  # int64 items per chunk: 8 KiB chunks, read whole and kept

UPDATE = """
import sys
import numpy as np
lib, path, locking, value = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
if lib == "pyblosc2":
    import pyblosc2 as mod
else:
    import blosc2 as mod
kw = {"locking": True} if locking else {}
s = mod.open(path, mode="a", **kw)
s.update_data(1, np.full(1024, value, dtype=np.int64), copy=True)
"""


def _update(lib: str, path: Path, locking: bool, value: int) -> None:
    cmd = [sys.executable, "-c", UPDATE, lib, str(path), "1" if locking else "0", str(value)]
    subprocess.run(cmd, env=ENV, check=True)


@pytest.mark.parametrize("locking", [False, True], ids=["polled", "locked"])
@pytest.mark.parametrize("lib", ["pyblosc2", "python-blosc2"])
def test_a_commit_by_another_process_between_two_reads_is_seen(
    tmp_path: Path, lib: str, locking: bool
) -> None:
    pytest.importorskip("blosc2")
    path = tmp_path / "f.b2frame"
    data = np.arange(4 * ITEMS, dtype=np.int64)
    pb.SChunk(chunksize=8 * ITEMS, data=data, urlpath=str(path), mode="w", cparams={"typesize": 8})
    s = pb.open(str(path), mode="r", locking=locking)
    for value in (7, 8):
        before = np.frombuffer(s[ITEMS + 3], np.int64)[0]
        assert 1 in s._frame.reader._wholes  # chunk 1 parsed and kept
        assert np.frombuffer(s[ITEMS + 4], np.int64)[0] == before + (value == 7)
        _update(lib, path, locking, value)
        assert np.frombuffer(s[ITEMS + 3], np.int64)[0] == value
        assert np.frombuffer(s[ITEMS + 4], np.int64)[0] == value
        assert np.frombuffer(s[3], np.int64)[0] == 3
