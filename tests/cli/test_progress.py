"""The progress bar: tqdm only when asked for and stderr is a terminal."""

from __future__ import annotations

import io
import sys

import pytest

from pyblosc2.cli.progress import _Silent, progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("enabled", "tty", "shown"), [(True, True, True), (True, False, False), (False, True, False)]
)
def test_progress_only_on_a_terminal(monkeypatch, enabled: bool, tty: bool, shown: bool) -> None:
    tqdm = pytest.importorskip("tqdm")
    err = _Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = progress(3, "work", enabled=enabled)
    bar.update(3)
    bar.close()
    assert isinstance(bar, tqdm.tqdm) is shown
    assert isinstance(bar, _Silent) is not shown
    assert ("work" in err.getvalue()) is shown
