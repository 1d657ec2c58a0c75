"""The decoded chunks pyblosc2.hdf5 keeps, against h5py + hdf5plugin's chunk cache, when another
process writes the file (real processes):

* a file open read-only: HDF5's file lock refuses the writer; with locking turned off the
  writer rewrites the file under both readers, and both go on returning the values of the
  chunks they keep until the file is opened again;
* SWMR: a writer appends rows to a dataset both readers keep the edge chunk of; neither sees
  the rows before a refresh, both see them after (pyblosc2's ``Dataset.refresh``, or h5py's
  on the underlying dataset: a kept chunk whose address or size changed is read again).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.bounded import (
    CHILD_S,
    communicate_within,
    readline_within,
    run_child,
    started,
    wait_child,
)
from tests.conftest import _reference

h5py = pytest.importorskip("h5py")
from pyblosc2 import hdf5  # noqa: E402

SHAPE, CHUNKS = (40, 100), (10, 100)
DATA = np.arange(4000.0).reshape(SHAPE)

REWRITE = """
import sys, h5py, hdf5plugin, numpy as np
try:
    with h5py.File(sys.argv[1], "r+", locking=sys.argv[2] == "lock") as f:
        for name in ("blosc", "blosc2"):
            f[name][...] = -np.arange(4000.0).reshape(40, 100)
except OSError as exc:
    print("refused:", exc)
else:
    print("rewritten")
"""


@pytest.fixture
def plugin_file(tmp_path):
    hdf5plugin = _reference("hdf5plugin")
    path = tmp_path / "shared.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("blosc", data=DATA, chunks=CHUNKS, **hdf5plugin.Blosc(cname="lz4"))
        f.create_dataset("blosc2", data=DATA, chunks=CHUNKS, **hdf5plugin.Blosc2(cname="zstd"))
    return path


def _rewrite(path, lock: bool) -> str:
    done = run_child(
        [sys.executable, "-c", REWRITE, str(path), "lock" if lock else "nolock"],
        f"rewrite the HDF5 file ({'with' if lock else 'without'} HDF5's lock)",
        120,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("name", ["blosc", "blosc2"])
def test_a_read_only_handle_keeps_its_view_as_h5py_does(plugin_file, name) -> None:
    with h5py.File(plugin_file, "r") as f:
        theirs = f[name]
        ours = hdf5.open(theirs)
        for i in (0, 1, 15, 16):  # chunks 0 and 1 kept by both (pyblosc2: from a 2nd read)
            np.testing.assert_array_equal(ours[i, :], theirs[i, :])
        assert ours.cache_info().held == 2
        assert "refused" in _rewrite(plugin_file, lock=True)  # HDF5's lock: no writer
        assert "rewritten" in _rewrite(plugin_file, lock=False)
        for i in (1, 5, 12, 19):
            np.testing.assert_array_equal(theirs[i, :], DATA[i, :])  # h5py: the old values
            np.testing.assert_array_equal(ours[i, :], DATA[i, :])  # and pyblosc2 too
            np.testing.assert_array_equal(ours[i, 40:60], DATA[i, 40:60])
    with h5py.File(plugin_file, "r") as f:  # opened again: the new values
        np.testing.assert_array_equal(f[name][5, :], -DATA[5, :])
        np.testing.assert_array_equal(hdf5.open(f[name])[5, :], -DATA[5, :])


SWMR_WRITER = """
import sys, h5py, hdf5plugin, numpy as np
filt = hdf5plugin.Blosc2(cname="zstd") if sys.argv[2] == "blosc2" else hdf5plugin.Blosc()
with h5py.File(sys.argv[1], "w", libver="latest") as f:
    d = f.create_dataset("x", data=np.arange(500.0).reshape(5, 100), chunks=(10, 100),
                         maxshape=(None, 100), **filt)
    f.swmr_mode = True
    print("ready", flush=True)
    sys.stdin.readline()
    d.resize((8, 100))
    d[5:8] = -np.arange(300.0).reshape(3, 100)
    d.flush()
    print("appended", flush=True)
    sys.stdin.readline()
"""


def _expect_line(writer: subprocess.Popen[str], line: str) -> None:
    """The writer's next line is ``line``; else it is killed and the test fails with its
    stderr (read once it has exited: a live child's stderr has no end)."""
    got = readline_within(writer.stdout, CHILD_S, f"the SWMR writer's {line!r}")
    if got.strip() != line:
        writer.kill()
        _, err = communicate_within(writer, "the SWMR writer, killed", 60)
        raise AssertionError(f"the SWMR writer said {got!r}, not {line!r}; stderr: {err[-2000:]}")


@pytest.mark.parametrize("name", ["blosc", "blosc2"])
@pytest.mark.parametrize("refresh", ["pyblosc2", "h5py"])
def test_swmr_readers_see_appended_rows_after_a_refresh(tmp_path, name, refresh) -> None:
    _reference("hdf5plugin")
    path = tmp_path / "swmr.h5"
    with started(
        [sys.executable, "-c", SWMR_WRITER, str(path), name],
        "the SWMR writer",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as writer:
        _expect_line(writer, "ready")
        with h5py.File(path, "r", libver="latest", swmr=True) as f:
            theirs = f["x"]
            ours = hdf5.open(theirs)
            for i in (2, 3):  # the edge chunk kept
                np.testing.assert_array_equal(ours[i, :], theirs[i, :])
            assert ours.cache_info().held == 1
            writer.stdin.write("go\n")
            writer.stdin.flush()
            _expect_line(writer, "appended")
            np.testing.assert_array_equal(ours[2, :], theirs[2, :])
            assert ours.shape == theirs.shape == (5, 100)  # nothing seen before a refresh
            theirs.refresh()
            if refresh == "pyblosc2":
                ours.refresh()
            assert ours.shape == theirs.shape == (8, 100)
            want = np.concatenate(
                [np.arange(500.0).reshape(5, 100), -np.arange(300.0).reshape(3, 100)]
            )
            for i in range(8):
                np.testing.assert_array_equal(theirs[i, :], want[i])
                np.testing.assert_array_equal(ours[i, :], want[i])
        writer.stdin.write("end\n")
        writer.stdin.flush()
        wait_child(writer, "the SWMR writer: exit after 'end'", 60)
