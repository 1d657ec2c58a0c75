"""Killed store writers lose nothing: a child process changing a TreeStore is SIGKILLed (at
random moments, and at every commit call of an operation); the store then opens, in
pyblosc2 and in python-blosc2, with the content after the last returned operation or after
the one in flight. For a ``.b2z`` every operation rewrites the archive (a new file renamed
over the old one); for a ``.b2d`` each change commits on its own.

The long campaign is tools/store_kill_campaign.py; this is its smoke run.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import CHILD_S, readline_within, run_child, started

from . import store_mutator as sm

CHILD = [sys.executable, str(Path(sm.__file__))]
ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}


def create(path: str) -> None:
    """A store holding a little of everything (the state before operation 0)."""
    with pb.TreeStore(path, mode="w", threshold=sm.THRESHOLD):
        pass


def _logged(log: Path) -> int:
    return len(log.read_text().split()) if log.exists() else 0


def check(path: str, seed: int, done: int, cblosc2: Any = None) -> int:
    """The store holds the state after ``done`` or ``done + 1`` operations; returns which."""
    with pb.TreeStore(path, mode="r") as t:
        got = sm.content(t)
    states = sm.states(seed, done + 1)
    for k in (done, done + 1):
        if k < len(states) and got == states[k]:
            if cblosc2 is not None:
                with cblosc2.TreeStore(path, mode="r") as ref:
                    assert sm.content(ref) == got
            return k
    raise AssertionError(f"{path}: content matches neither {done} nor {done + 1} operations")


def random_kill(path: str, log: Path, seed: int, delay: float) -> tuple[int, int]:
    log.unlink(missing_ok=True)
    args = [*CHILD, path, str(seed), "400", str(log)]
    with started(args, "change a store until killed", env=ENV, stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        ready = readline_within(child.stdout, CHILD_S, "the store mutator's ready line")
        assert ready == b"ready\n", f"the store mutator failed before its first change: {ready!r}"
        time.sleep(delay)  # a random moment of the run: any outcome is checked
        child.send_signal(signal.SIGKILL)
    done = _logged(log)
    return done, check(path, seed, done)


@pytest.mark.parametrize("form", ["b2z", "b2d"])
def test_random_kills(tmp_path: Path, form: str, cblosc2: Any) -> None:
    rng = random.Random(7)
    for run in range(3):
        path = str(tmp_path / f"r{run}.{form}")
        create(path)
        done, reached = random_kill(path, tmp_path / f"log{run}", run, rng.uniform(0.2, 1.5))
        assert reached in (done, done + 1)
        check(path, run, _logged(tmp_path / f"log{run}"), cblosc2)
    # a killed .b2z writer leaves at most its staging file and working directory beside it
    leftovers = {p.rsplit(".", 1)[-1] for p in os.listdir(tmp_path) if p.startswith(".")}
    assert leftovers <= {"tmp", "work"}


def _kill_at(tmp_path: Path, form: str, seed: int, op: int, nth: int) -> tuple[bool, int]:
    path = str(tmp_path / f"k{op}_{nth}.{form}")
    create(path)
    log = tmp_path / f"log{op}_{nth}_{form}"
    log.unlink(missing_ok=True)
    r = run_child(
        [*CHILD, path, str(seed), str(op + 1), str(log), f"{op}:{nth}"],
        f"operation {op} of a store, killing itself at its commit call {nth}",
        env=ENV,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    killed = r.returncode == -signal.SIGKILL
    assert killed or r.returncode == 0, r.returncode
    return killed, check(path, seed, _logged(log))


def _first(kind: str, seed: int = 3) -> int:
    ops = sm.operations(seed, 60)
    return next(i for i, op in enumerate(ops) if op[0] == kind and i >= 2)


CASES = [("b2z", "big"), ("b2d", "big"), ("b2d", "small"), ("b2d", "delete")]


@pytest.mark.parametrize(("form", "kind"), CASES, ids=[f"{f}-{k}" for f, k in CASES])
def test_kill_at_every_commit_call(tmp_path: Path, form: str, kind: str) -> None:
    op = _first(kind)
    nth, outcomes = 1, set()
    while True:
        killed, reached = _kill_at(tmp_path, form, 3, op, nth)
        if not killed:
            assert reached == op + 1
            break
        outcomes.add(reached - op)
        nth += 1
    assert nth >= 2  # the operation made commit calls, each one a kill point
    assert outcomes <= {0, 1}


def test_model_is_deterministic() -> None:
    assert sm.states(3, 20) == sm.states(3, 20)
    assert np.unique([op[0] for op in sm.operations(3, 60)]).size == len(set(sm.KINDS))
