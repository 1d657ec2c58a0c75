"""docs/compute.md runs: every python block in a fresh interpreter, in a temporary
directory (the engine's user documentation, issue 33)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from tests.bounded import run_child

DOC = Path(__file__).resolve().parents[2] / "docs" / "compute.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_compute_doc_block_runs(index: int, tmp_path: Path) -> None:
    block = BLOCKS[index]
    if "to_dask" in block and importlib.util.find_spec("dask") is None:
        pytest.skip("dask not installed")
    script = tmp_path / "block.py"
    script.write_text(block)
    done = run_child(
        [sys.executable, str(script)],
        f"run block {index} of the compute page",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        # (the numpy kernels: loading numba in each child is not what is tested)
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYBLOSC2_KERNELS": "numpy"},
    )
    assert done.returncode == 0, done.stderr
