"""docs/udf.md runs: each of its python blocks in a fresh interpreter, in a temporary working
directory (the blocks write and remove their files there)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

import pyblosc2
from tests.bounded import run_child

DOC = Path(__file__).resolve().parents[2] / "docs" / "udf.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_its_blocks() -> None:
    assert len(BLOCKS) == 4


@pytest.mark.parametrize("n", range(len(BLOCKS)))
def test_block_runs(n: int, tmp_path: Path) -> None:
    script = tmp_path / f"block{n}.py"  # a file: DSL kernels need their source
    script.write_text(BLOCKS[n])
    env = dict(os.environ, PYBLOSC2_KERNELS="numpy")
    src = str(Path(pyblosc2.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    p = run_child(
        [sys.executable, str(script)],
        f"run block {n} of the udf page",
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert not list(tmp_path.glob("*.b2nd"))  # each block cleans up after itself
