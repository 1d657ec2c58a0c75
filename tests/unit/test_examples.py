"""Every script in examples/ runs as a user would run it (a subprocess), in a temporary cwd."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyblosc2

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(pyblosc2.__file__).resolve().parents[1]


def run_example(name: str, *args: str, cwd: Path) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_runs(tmp_path: Path) -> None:
    out = run_example("quickstart.py", cwd=tmp_path)
    assert "ratio" in out and "Blosc1 chunk" in out
