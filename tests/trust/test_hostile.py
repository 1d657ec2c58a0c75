"""Hostile files (hostile_files.py), each opened by a child process (hostile_child.py) that may
use at most 1 s of CPU and 100 MiB of address space beyond what it had after importing
pyblosc2 (its own limits: past them it dies of SIGXCPU or gets a ``MemoryError``), and that
must answer: a pyblosc2 error of the expected class and message, or — for the valid
controls — a result. A child that blocks (a FIFO, a lock) fails on :data:`ANSWER_S`, a crash
on the exit signal, an allocation past the limit as a ``MemoryError`` in the report. Speed is
bounded by CPU time, which a loaded machine does not stretch, never by wall time."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import bounded

from . import hostile_child
from .hostile_files import CASES
from .hostile_stores import PYTHON_BLOSC2, STORE_CASES

ALL_CASES = {**CASES, **STORE_CASES}

CHILD = [sys.executable, str(Path(hostile_child.__file__))]
#: wall-clock seconds after which a child that is ready (imports done) and has not answered is
#: a hang: it is blocked, its CPU limit (5-6 s, hostile_child.CPU_S) ends a busy one. Generous,
#: so that a loaded machine (answers of ~0.1 s CPU took 0.4 s at load 15) never reaches it
ANSWER_S = 60.0
IMPORT_S = 60.0
ENV = {**os.environ, "MALLOC_ARENA_MAX": "1", "PYTHONFAULTHANDLER": "1"}


def run_child(lib: str, action: str, path: str, answer_s: float = ANSWER_S) -> dict[str, Any]:
    """The child's report, with ``wall_s`` from ready to exit (reported, never asserted);
    ``{"timeout": True}`` when it did not answer in ``answer_s`` after ready (it is killed),
    ``{"signal": n}`` when it died of signal ``n``."""
    args = [*CHILD, lib, action, path]
    what = f"{lib}: {action} on {Path(path).name}"
    with bounded.started(
        args, what, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    ) as proc:  # killed, reaped and its pipes closed however this ends
        assert proc.stdout is not None
        line = bounded.readline_within(proc.stdout, IMPORT_S, f"{what}: ready")
        if line != b"ready\n":
            proc.wait(IMPORT_S)
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"the child failed before the action: {line!r} {err}")
        start = time.monotonic()
        try:
            proc.wait(answer_s)
        except subprocess.TimeoutExpired:
            return {"timeout": True}
        wall = time.monotonic() - start
        if proc.returncode < 0:
            return {"signal": -proc.returncode, "wall_s": wall}
        out = proc.stdout.read().decode()
        if proc.returncode != 0 or not out:
            err = proc.stderr.read().decode() if proc.stderr else ""
            return {"exit": proc.returncode, "stderr": err[-2000:]}
        return {**json.loads(out), "wall_s": wall}


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_hostile_file_gets_a_pyblosc2_answer(tmp_path: Path, name: str) -> None:
    case = ALL_CASES[name]
    path = case.build(tmp_path)
    report = run_child("pyblosc2", case.action, path)
    assert "error" in report, f"{name}: no answer to {case.action} ({report}; {ANSWER_S} s)"
    if case.error is None:
        assert report["error"] is None, f"{name}: {report}"
        assert re.search(case.match, report["result"]), report["result"]
    else:
        assert report["error"] is not None, f"{name}: read as {report['result']}"
        assert case.error in report["error"], f"{name}: {report['error'][0]}: {report['message']}"
        assert "Blosc2Error" in report["error"]
        assert re.search(case.match, report["message"]), report["message"]
    assert report["rss_growth_mib"] <= hostile_child.MEMORY_MIB


@pytest.mark.parametrize("name", sorted(PYTHON_BLOSC2))
def test_what_python_blosc2_answers(tmp_path: Path, name: str) -> None:
    """python-blosc2 4.14.1 on the same stores and tables (what pyblosc2 answers otherwise):
    a bare error, or the data of a file outside the store."""
    pytest.importorskip("blosc2")
    case = STORE_CASES[name]
    report = run_child("blosc2", case.action, case.build(tmp_path), answer_s=30.0)
    got = f"read: {report['result']}" if report.get("error") is None else report["error"][0]
    assert got == PYTHON_BLOSC2[name], report


def test_a_stuck_child_is_a_timeout(tmp_path: Path) -> None:
    """The harness itself: a FIFO opened by plain ``open`` hangs and is reported so."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    proc = [sys.executable, "-c", f"print('ready', flush=True); open({str(fifo)!r}).read()"]
    with bounded.started(proc, "block on a FIFO", stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        ready = bounded.readline_within(child.stdout, IMPORT_S, "the child's ready line")
        assert ready == b"ready\n"
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(1.0)  # blocked for good: any wait times out


@pytest.mark.parametrize("action", ["crash", "allocate"])
def test_the_child_limits_hold(tmp_path: Path, action: str) -> None:
    """The harness itself: a segfault is reported as a signal, an allocation past the
    address-space limit as a MemoryError."""
    code = {
        "crash": "import ctypes; ctypes.string_at(0)",
        "allocate": "bytearray(200 * 2**20)",
    }[action]
    script = tmp_path / "child.py"
    script.write_text(
        "import sys, json, os\n"
        f"sys.path.insert(0, {str(Path(hostile_child.__file__).parent)!r})\n"
        "import hostile_child as h, resource\n"
        "limit = h._vm_bytes() + h.MEMORY_MIB * 2**20\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "try:\n"
        f"    {code}\n"
        "    print(json.dumps({'error': None}))\n"
        "except BaseException as e:\n"
        "    print(json.dumps({'error': [type(e).__name__]}))\n"
    )
    r = bounded.run_child(
        [sys.executable, str(script)],
        "crash or allocate past its limit",
        capture_output=True,
        env=ENV,
    )
    if action == "crash":
        assert r.returncode == -11
    else:
        assert json.loads(r.stdout)["error"] == ["MemoryError"]
