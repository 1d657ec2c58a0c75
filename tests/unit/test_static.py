"""The codebase stays type-checked and lint-clean: mypy (configured in pyproject.toml) reports
no error in src/, and ruff none in src/ and tests/. Both run as part of the README's test
command, so CI enforces them."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.bounded import HEAVY_CHILD_S, HEAVY_S, run_child

ROOT = Path(__file__).parents[2]


IN_CI = os.environ.get("CI", "").lower() == "true"


def _require(module: str) -> None:
    if run_child(
        [sys.executable, "-c", f"import {module}"], "import the checker", check=False
    ).returncode:
        if IN_CI:
            pytest.fail(f"{module} is required in CI (the test extra installs it)")
        pytest.skip(f"{module} is not installed (the test extra installs it)")


@pytest.mark.timeout(HEAVY_S)  # a fresh clone's cold cache: seconds of CPU per module
def test_mypy_reports_no_error() -> None:
    _require("mypy")
    r = run_child(
        [sys.executable, "-m", "mypy", "--no-error-summary"],
        "mypy over src/pyblosc2",
        HEAVY_CHILD_S,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_reports_nothing() -> None:
    _require("ruff")
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    r = run_child(
        [ruff, "check", "src", "tests", "tools", "benchmarks", "examples"],
        "ruff check",
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
