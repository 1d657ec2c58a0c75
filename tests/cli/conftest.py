"""Fixtures for the command line tests: a runner for ``python -m pyblosc2`` in a subprocess
(the source tree first on the path) and small files written by python-blosc2 and pyblosc2."""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import pyblosc2
from tests.bounded import run_child

#: where the pyblosc2 under test lives (the source tree, or an installed wheel)
SRC = Path(pyblosc2.__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    raw: bytes


def run_cli(*args: str, cwd: Path, stdin: bytes | None = None, tty: bool = False) -> Result:
    """Run ``python -m pyblosc2 ARGS`` in ``cwd``; stdout kept as bytes too."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = run_child(
        [sys.executable, "-m", "pyblosc2", *args],
        "python -m pyblosc2",
        cwd=cwd,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=env,
        check=False,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode(errors="replace"),
        proc.stderr.decode(errors="replace"),
        proc.stdout,
    )


@pytest.fixture
def cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    def _run(*args: str, stdin: bytes | None = None) -> Result:
        return run_cli(*args, cwd=tmp_path, stdin=stdin)

    return _run


def reference(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if IN_CI:
            pytest.fail(f"{name} is required in CI: {exc}")
        pytest.skip(f"{name} not installed")


@pytest.fixture(scope="session")
def zarr_mod() -> ModuleType:
    return reference("zarr")


ARRAY = np.linspace(0, 1, 60 * 40).reshape(60, 40)


@pytest.fixture
def c_b2nd(tmp_path: Path, cblosc2: ModuleType) -> Path:
    """A 60x40 float64 .b2nd written by python-blosc2, with a metalayer and vlmeta."""
    path = tmp_path / "c.b2nd"
    a = cblosc2.asarray(
        ARRAY, chunks=(25, 40), blocks=(5, 40), urlpath=str(path), mode="w", meta={"units": "K"}
    )
    a.vlmeta["source"] = {"instrument": "x7"}
    return path


@pytest.fixture
def c_b2frame(tmp_path: Path, cblosc2: ModuleType) -> Path:
    """An SChunk of 4 chunks of 1000 int32, written by python-blosc2."""
    path = tmp_path / "c.b2frame"
    s = cblosc2.SChunk(chunksize=4000, urlpath=str(path), mode="w", cparams={"typesize": 4})
    for i in range(4):
        s.append_data(np.arange(1000, dtype=np.int32) + i)
    return path


@pytest.fixture
def fp_b2frame(tmp_path: Path) -> Path:
    """An SChunk with pyblosc2's fingerprint (per-chunk digests), random-ish data."""
    import pyblosc2

    path = tmp_path / "fp.b2frame"
    s = pyblosc2.SChunk(
        chunksize=40_000, urlpath=str(path), mode="w", cparams={"typesize": 4}, fingerprint=True
    )
    rng = np.random.default_rng(0)
    for _ in range(3):
        s.append_data(rng.integers(0, 50, 10_000).astype(np.int32))
    return path
