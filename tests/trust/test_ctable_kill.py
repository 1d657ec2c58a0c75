"""Killed table writers lose nothing: a child process appending to, extending and deleting
from a standalone CTable (``.b2d``) is SIGKILLed at random moments; the table then opens, in
pyblosc2 and in python-blosc2, with the rows after the last operation that returned or after
the one in flight (a row shows only once its values are in: ``_valid_rows`` is written last;
the arrays grow before the mask and are trimmed after it)."""

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

from . import table_appender as ta

CHILD = [sys.executable, str(Path(ta.__file__))]
ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
#: more operations than the child makes before its kill (~60/s): the kill lands in the run
#: however slowly the test is scheduled (400 could end first on a loaded machine)
NOPS = 1_000_000


def _check(path: str, done: int, cblosc2: Any) -> int:
    states = ta.states(done + 1)
    t = pb.CTable.open(path)
    got = t["x"][:].tolist()
    assert t["name"][:].tolist() == [str(v) for v in got]
    for k in (done, done + 1):
        if k < len(states) and got == states[k]:
            if cblosc2 is not None:
                ref = cblosc2.CTable.open(path)
                assert ref["x"][:].tolist() == got and len(ref) == len(got)
            return k
    raise AssertionError(f"{len(got)} rows match neither {done} nor {done + 1} operations")


def _logged(log: Path) -> int:
    return len(log.read_text().split()) if log.exists() else 0


@pytest.mark.parametrize("delay", [0.0, 0.03, 0.1, 0.25])
def test_killed_table_writer_loses_nothing(tmp_path: Path, delay: float, cblosc2: Any) -> None:
    path = str(tmp_path / "t.b2d")
    log = tmp_path / "log"
    with pb.CTable(ta.Row, urlpath=path, mode="w", expected_size=8):
        pass  # small capacity: the child grows the arrays too
    with started(
        [*CHILD, path, str(NOPS), str(log)], "change a table until killed", env=ENV
    ) as child:
        deadline = time.monotonic() + CHILD_S
        while _logged(log) == 0:  # until the child is writing (past its imports)
            assert child.poll() is None, f"the child exited ({child.returncode}) before writing"
            assert time.monotonic() < deadline, f"the child wrote nothing in {CHILD_S} s"
            time.sleep(0.005)
        time.sleep(delay)  # a moment of the run: any outcome is checked
        child.send_signal(signal.SIGKILL)
    done = _logged(log)
    assert 0 < done < NOPS, f"the kill came outside the run ({done} operations)"
    _check(path, done, cblosc2)
    with pb.CTable.open(path, mode="a") as t:  # and the table takes more rows
        t.append(ta.Row(x=-1, name="-1"))
    assert pb.CTable.open(path)["x"][-1] == -1
