"""Every script in examples/ runs as a user would run it (a subprocess), in a temporary cwd."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pyblosc2
from tests.conftest import _reference
from tests.remote.conftest import RangeServer

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(pyblosc2.__file__).resolve().parents[1]


def run_example(name: str, *args: str, cwd: Path, **env: str) -> str:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join([str(SRC), environ.get("PYTHONPATH", "")])
    environ.update(env)
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _check_quickstart_output(out: str, directory: Path) -> None:
    assert "ratio" in out and "verify(): 0 damaged chunks of 10" in out
    arr = pyblosc2.open(str(directory / "temperature.b2nd"))
    assert isinstance(arr, pyblosc2.NDArray) and arr.shape == (1500, 500)
    assert arr.meta["units"] == "degC" and arr.vlmeta["source"]["station"] == "x7"
    s = pyblosc2.open(str(directory / "series.b2frame"))
    assert s.nchunks == 10 and s.verify() == []
    assert np.frombuffer(s[4_999_999:5_000_000], np.float64)[0] == 10.0


def test_quickstart_writes_into_the_given_directory(tmp_path: Path) -> None:
    out = run_example("quickstart.py", str(tmp_path / "out"), cwd=tmp_path)
    _check_quickstart_output(out, tmp_path / "out")


def test_quickstart_defaults_to_a_temporary_directory(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = run_example("quickstart.py", cwd=tmp_path, TMPDIR=str(tmp))
    (made,) = tmp.iterdir()
    assert made.name.startswith("pyblosc2-quickstart-")
    _check_quickstart_output(out, made)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]  # nothing in the cwd


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples").glob("*.py")))
def test_every_example_is_tested(name: str) -> None:
    assert f'"{name}"' in Path(__file__).read_text()


# -- the task scripts --------------------------------------------------------------------------


def test_grow_array_grows_the_same_file_run_after_run(tmp_path: Path) -> None:
    path = tmp_path / "hourly.b2nd"
    run_example("grow_array.py", str(path), "--days", "3", cwd=tmp_path)
    out = run_example("grow_array.py", str(path), "--days", "2", cwd=tmp_path)
    assert "(120, 100) float32 (5 days, runs: 2)" in out
    a = pyblosc2.open(str(path))
    assert a.shape == (120, 100) and a.vlmeta["runs"] == 2
    assert a.meta["columns"] == {"sensors": 100, "step": "1h"}
    hours = np.arange(120)[:, None]
    expected = (15 + 8 * np.sin(2 * np.pi * hours / 24) + np.arange(100) / 10).astype("f4")
    np.testing.assert_array_equal(a[...], expected)
    theirs = _reference("blosc2").open(str(path))  # python-blosc2 reads what it grew
    np.testing.assert_array_equal(theirs[...], expected)


def test_append_log_appends_across_runs_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "events.b2frame"
    run_example("append_log.py", str(path), "--batches", "5", cwd=tmp_path)
    out = run_example("append_log.py", str(path), "--batches", "2", cwd=tmp_path)
    assert "7 chunks, 28,672 records" in out and "verify(): 0 damaged chunks" in out
    s = pyblosc2.open(str(path))
    assert s.nchunks == 7 and s.verify() == []
    rec = np.frombuffer(s[:], [("t", "<f8"), ("sensor", "<u2"), ("value", "<f4")])
    np.testing.assert_array_equal(rec["t"], np.arange(7 * 4096) * 0.5)
    theirs = _reference("blosc2").open(str(path))
    assert theirs.nchunks == 7 and theirs[:] == s[:]


def test_share_file_readers_follow_the_writer(tmp_path: Path) -> None:
    out = run_example("share_file.py", str(tmp_path), "--chunks", "12", cwd=tmp_path)
    assert "the writer appended 12 chunks" in out
    assert out.count("read 12 whole chunks") == 2
    s = pyblosc2.open(str(tmp_path / "shared.b2frame"))
    assert [int(np.frombuffer(s.decompress_chunk(i), np.int64)[0]) for i in range(12)] == list(
        range(12)
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[RangeServer, np.ndarray]]:
    """A .b2nd served by a Range-honouring HTTP server on 127.0.0.1 (tests/remote's)."""
    _reference("fsspec")
    _reference("aiohttp")
    x = np.random.default_rng(0).integers(0, 1000, (2000, 2000), dtype=np.int32)
    pyblosc2.asarray(x, urlpath=str(tmp_path / "a.b2nd"), chunks=(500, 2000), blocks=(50, 200))
    server = RangeServer(str(tmp_path))
    yield server, x
    server.close()


def test_remote_lazy_fetches_only_what_the_slice_needs(
    tmp_path: Path, served: tuple[RangeServer, np.ndarray]
) -> None:
    server, x = served
    out = run_example("remote_lazy.py", server.url("a.b2nd"), cwd=tmp_path)
    printed = out.split("=\n", 1)[1].split("\nafter", 1)[0]
    assert printed == str(x[1234:1237, 500:504])
    size = (tmp_path / "a.b2nd").stat().st_size
    assert 0 < server.counts.bytes_sent < size // 10, (server.counts.bytes_sent, size)
    assert server.counts.whole_bodies == 0  # every GET was a range


def test_remote_lazy_serves_its_own_example(tmp_path: Path) -> None:
    _reference("fsspec")
    _reference("aiohttp")
    out = run_example("remote_lazy.py", cwd=tmp_path)
    assert "http://127.0.0.1:" in out and "[[2468500 2468501 2468502 2468503]" in out


def test_hdf5_convert_reads_a_plugin_written_file(tmp_path: Path) -> None:
    """A dataset written by h5py + hdf5plugin's Blosc2 filter becomes a .b2nd and comes back
    as an HDF5 dataset that hdf5plugin reads."""
    h5py = _reference("h5py")
    hdf5plugin = _reference("hdf5plugin")
    x = np.linspace(-5, 5, 300 * 250).reshape(300, 250)
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f.create_dataset("g/x", data=x, chunks=(100, 100), **hdf5plugin.Blosc2(cname="zstd"))
    out = run_example(
        "hdf5_convert.py", str(tmp_path / "in.h5"), "g/x", "--out", str(tmp_path / "o"),
        cwd=tmp_path,
    )  # fmt: skip
    assert "(300, 250) float64, chunks (100, 100)" in out and "equal" in out
    np.testing.assert_array_equal(pyblosc2.open(str(tmp_path / "o" / "g_x.b2nd"))[...], x)
    with h5py.File(tmp_path / "o" / "roundtrip.h5", "r") as f:  # plugin registered: decodes
        np.testing.assert_array_equal(f["g/x"][...], x)


def test_hdf5_convert_writes_its_own_example(tmp_path: Path) -> None:
    _reference("h5py")
    out = run_example("hdf5_convert.py", "--out", str(tmp_path), cwd=tmp_path)
    assert "data.h5:/temperature" in out and "equal" in out
    a = pyblosc2.open(str(tmp_path / "temperature.b2nd"))
    np.testing.assert_array_equal(a[...], np.linspace(0, 30, 400 * 600).reshape(400, 600))
