"""Killed writers of tables with text, list and object columns lose nothing (the change log,
``pyblosc2/ctable/varlog.py``): a child process appending, extending, deleting and setting
values is SIGKILLed at random moments, and one closing a table (the log secured, the layout
rewritten, the log dropped) is SIGKILLed during the close. The table then opens with the rows
after the last operation that returned or after the one in flight; a writable open and close
writes the layout, which python-blosc2 reads the same."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import pyblosc2 as pb
from tests.bounded import CHILD_S, started

from . import varlog_writer as vw

CHILD = [sys.executable, str(Path(vw.__file__))]
ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
NOPS = 1_000_000  # more than the child makes before its kill
LOG_FILE = "_varlog.b2f"


def _logged(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _wait_for(child: Any, log: Path, what: str) -> None:
    deadline = time.monotonic() + CHILD_S
    while not _logged(log):
        assert child.poll() is None, f"the child exited ({child.returncode}) before {what}"
        assert time.monotonic() < deadline, f"the child did not reach {what} in {CHILD_S} s"
        time.sleep(0.005)


def _peer_rows(path: str, cblosc2: Any) -> list[tuple[Any, ...]]:
    ref = cblosc2.CTable.open(path)
    cols = [[int(v) for v in ref["x"][:]]] + [list(ref[c][:]) for c in vw.COLS[1:]]
    return [tuple(r) for r in zip(*cols, strict=True)]


def _repair_and_compare(path: str, want: list[tuple[Any, ...]], cblosc2: Any) -> None:
    pb.CTable.open(path, mode="a").close()  # the log's rows go into the layout
    assert not os.path.exists(os.path.join(path, LOG_FILE))
    assert vw.rows_of(pb.CTable.open(path)) == want
    if cblosc2 is not None:
        assert _peer_rows(path, cblosc2) == want


def kill_run(tmp: Path, delay: float, cblosc2: Any) -> int:
    """One kill of the changing child ``delay`` s into its run, checked; the operations
    that returned."""
    path = str(tmp / "t.b2d")
    log = tmp / "log"
    pb.CTable(vw.Row, urlpath=path, mode="w", expected_size=8).close()
    with started([*CHILD, "run", path, str(NOPS), str(log)], "change a table", env=ENV) as child:
        _wait_for(child, log, "its first operation")
        time.sleep(delay)  # a moment of the run: any outcome is checked
        child.send_signal(signal.SIGKILL)
    done = len(_logged(log))
    assert 0 < done < NOPS, f"the kill came outside the run ({done} operations)"
    states = vw.states(done + 1)
    got = vw.rows_of(pb.CTable.open(path))
    assert got in (states[done], states[done + 1]), f"{len(got)} rows after {done} operations"
    _repair_and_compare(path, got, cblosc2)
    with pb.CTable.open(path, mode="a") as t:  # and the table takes more rows
        t.append(vw.row(-1))
    assert vw.rows_of(pb.CTable.open(path))[-1] == vw.row(-1)
    return done


def kill_close(tmp: Path, delay: float, cblosc2: Any, n: int = 20_000) -> str:
    """One kill of the closing child ``delay`` s after its close began, checked; how far
    the close got."""
    path = str(tmp / "t.b2d")
    log = tmp / "log"
    with started([*CHILD, "close", path, str(n), str(log)], "close a table", env=ENV) as child:
        _wait_for(child, log, "its close")
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
    want = [vw.row(x) for x in range(n + 10)]
    want[1] = (want[1][0], "changed", *want[1][2:])
    assert vw.rows_of(pb.CTable.open(path)) == want, f"after {_logged(log)}"
    _repair_and_compare(path, want, cblosc2)
    return _logged(log)[-1]


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.2, 0.5])
def test_killed_writer_of_text_lists_objects_loses_nothing(
    tmp_path: Path, delay: float, cblosc2: Any
) -> None:
    kill_run(tmp_path, delay, cblosc2)


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.08, 0.3])
def test_writer_killed_while_closing_loses_nothing(
    tmp_path: Path, delay: float, cblosc2: Any
) -> None:
    """The close of a table whose layout the log does not cover: the log gets every row of
    the two-leaf columns (utf8, dictionary) first, so a kill between their leaves, or before
    the log goes, reads the same rows."""
    kill_close(tmp_path, delay, cblosc2)
