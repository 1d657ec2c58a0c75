"""Every script in examples/ runs as a user would run it (a subprocess), in a temporary cwd."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import pyblosc2
from tests.bounded import run_child

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(pyblosc2.__file__).resolve().parents[1]


def run_example(name: str, *args: str, cwd: Path, **env: str) -> str:
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join([str(SRC), environ.get("PYTHONPATH", "")])
    environ.update(env)
    done = run_child(
        [sys.executable, str(ROOT / "examples" / name), *args],
        "run an example script",
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
