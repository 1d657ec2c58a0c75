"""The python blocks of docs/linalg.md run as written (each in a fresh namespace)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "linalg.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("n", range(len(BLOCKS)))
def test_python_block_runs(n: int, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(BLOCKS[n], f"{PAGE.name}[{n}]", "exec"), {"__name__": "__doc_block__"})
    capsys.readouterr()
