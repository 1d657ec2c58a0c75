"""Killed writers lose nothing: a child process mutating a frame is SIGKILLed (at random
moments, and at every write, truncate and sync call of each operation, torn writes
included); the frame then opens, in pyblosc2 and in python-blosc2, with the content after
the last returned operation or after the one in flight.

The long campaign (thousands of kills) is tools/kill_campaign.py; this is its smoke run.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import CHILD_S, readline_within, run_child, started

from . import mutator

CHILD = [sys.executable, str(Path(mutator.__file__))]
ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}


def _logged(log: Path) -> int:
    """How many operations returned (the log holds their indices, after ``c`` when the child
    created the frame)."""
    return len([w for w in log.read_text().split() if w != "c"]) if log.exists() else 0


def _created(log: Path) -> bool:
    return log.exists() and log.read_text().split()[:1] == ["c"]


def _check_creation(path: str, seed: int, log: Path, cblosc2=None) -> int:
    """After a kill of a child that creates the frame: no frame, or one that opens with the
    content after the operations that returned (none if the creation did not return),
    fingerprint included. Returns the state found (-1: no frame)."""
    if not _created(log) and not os.path.exists(path):
        return -1
    return _check(path, seed, _logged(log), cblosc2)


def _check(path: str, seed: int, done: int, cblosc2=None) -> int:
    """The frame holds the state after ``done`` or ``done + 1`` operations; returns which."""
    if path.endswith(".b2nd"):
        return _check_b2nd(path, seed, done, cblosc2)
    s = pb.open(path)
    states = mutator.states(seed, done + 1)
    for k in (done, done + 1):
        if k < len(states) and mutator.matches(s, states[k]):
            if s.contiguous:
                assert s.verify() == []
            if cblosc2 is not None:
                c = _c_open(cblosc2, path, s)
                assert c.nchunks == s.nchunks
                assert all(c.decompress_chunk(i) == s.decompress_chunk(i) for i in range(c.nchunks))
            return k
    raise AssertionError(f"{path}: content matches neither {done} nor {done + 1} operations")


def _c_open(cblosc2, path: str, s) -> object:
    """python-blosc2's handle on ``path``; if C refuses a frame we read, the file is kept
    (under the system temp dir) and the message says what we see, for diagnosis."""
    try:
        return cblosc2.open(path)
    except RuntimeError as exc:
        keep = Path(tempfile.gettempdir()) / "pyblosc2-kill-failures"
        keep.mkdir(exist_ok=True)
        kept = keep / f"{os.getpid()}-{Path(path).name}"
        shutil.copyfile(path, kept)
        raise AssertionError(
            f"python-blosc2 cannot open a frame pyblosc2 reads ({exc}); kept as {kept}: "
            f"file size {os.path.getsize(path)}, header frame_len {s.header.frame_len}, "
            f"nchunks {s.nchunks}"
        ) from exc


def _check_b2nd(path: str, seed: int, done: int, cblosc2=None) -> int:
    nd = pb.open(path)
    got = nd[:]
    states = mutator.b2nd_states(seed, done + 1)
    for k in (done, done + 1):
        if k < len(states) and got.shape == states[k].shape and np.array_equal(got, states[k]):
            if cblosc2 is not None:
                assert np.array_equal(cblosc2.open(path)[:], got)
            return k
    raise AssertionError(f"{path}: content matches neither {done} nor {done + 1} operations")


def random_kill(
    path: str, log: Path, seed: int, nops: int, delay: float, create: bool = False
) -> tuple[int, int]:
    """Run the mutator on a fresh frame (``create``: the child creates it), SIGKILL it
    ``delay`` seconds after it is ready; returns (operations returned, state found; -1: the
    creation was killed and left no frame)."""
    log.unlink(missing_ok=True)
    if create:
        pb.remove_urlpath(path)
    else:
        mutator.create(path)
    extra = ["-", "create"] if create else []
    args = [*CHILD, path, str(seed), str(nops), str(log), *extra]
    with started(args, "mutate a frame until killed", env=ENV, stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        ready = readline_within(child.stdout, CHILD_S, "the mutator's ready line")
        assert ready == b"ready\n", f"the mutator failed before its first operation: {ready!r}"
        time.sleep(delay)  # a random moment of the run: any outcome is checked
        child.send_signal(signal.SIGKILL)
    done = _logged(log)
    return done, _check_creation(path, seed, log) if create else _check(path, seed, done)


NAMES = {"contiguous": "f.b2frame", "sparse": "f.sparse", "b2nd": "f.b2nd"}


@pytest.mark.parametrize("kind", sorted(NAMES))
@pytest.mark.parametrize("seed", range(3))
def test_random_kills(tmp_path: Path, seed: int, kind: str, cblosc2) -> None:
    rng = random.Random(seed)
    path = str(tmp_path / NAMES[kind])
    for _ in range(3):
        done, reached = random_kill(path, tmp_path / "log", seed, 300, rng.uniform(0.0, 0.4))
        assert reached in (done, done + 1)
    _check(path, seed, _logged(tmp_path / "log"), cblosc2)  # and python-blosc2 reads it


def _kill_at(tmp_path: Path, name: str, seed: int, op: int, nth: int) -> tuple[bool, int]:
    """Kill the child at storage call ``nth`` of operation ``op`` (-1: the creation)."""
    path = str(tmp_path / f"k{op}_{nth}_{name}")
    if op >= 0:
        mutator.create(path)
    log = tmp_path / f"log{op}_{nth}_{name}"
    extra = ["create"] if op < 0 else []
    r = run_child(
        [*CHILD, path, str(seed), str(op + 1), str(log), f"{op}:{nth}", *extra],
        f"operation {op} of a frame, killing itself at its storage call {nth}",
        env=ENV,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    killed = r.returncode == -signal.SIGKILL
    assert killed or r.returncode == 0, r.returncode
    if op < 0:
        return killed, _check_creation(path, seed, log)
    return killed, _check(path, seed, _logged(log))


def _one_of_each(ops: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The first operation of each kind (after a few that give the frame some chunks)."""
    seen: dict[str, int] = {}
    for i, (kind, _) in enumerate(ops):
        if i >= 3:
            seen.setdefault(kind, i)
    return sorted(seen.items())


CASES = [
    *((NAMES["contiguous"], k, op) for k, op in _one_of_each(mutator.operations(1, 60))),
    *((NAMES["sparse"], k, op) for k, op in _one_of_each(mutator.operations(1, 60))),
    *((NAMES["b2nd"], k, op) for k, op in _one_of_each(mutator.b2nd_operations(1, 30))),
]


@pytest.mark.parametrize(("name", "kind", "op"), CASES, ids=[f"{n}-{k}" for n, k, _ in CASES])
def test_kill_at_every_write_call(tmp_path: Path, name: str, kind: str, op: int) -> None:
    nth, outcomes = 1, set()
    while True:
        killed, reached = _kill_at(tmp_path, name, 1, op, nth)
        if not killed:
            assert reached == op + 1
            break
        outcomes.add(reached - op)
        nth += 1
    assert nth >= 2  # the operation made storage calls, each one a kill point
    assert outcomes <= {0, 1}


@pytest.mark.parametrize("name", sorted(NAMES.values()))
def test_kill_at_every_write_call_of_the_creation(tmp_path: Path, name: str) -> None:
    """Creation is part of the commit: killed at any storage call while the frame is being
    created (fingerprinted, its first chunks included), the child leaves no frame or the
    whole new one, which opens empty (a b2nd array as created)."""
    nth, outcomes = 1, set()
    while True:
        killed, reached = _kill_at(tmp_path, name, 1, -1, nth)
        if not killed:
            assert reached == 0
            break
        outcomes.add(reached)
        nth += 1
    assert nth >= 2 and outcomes <= {-1, 0}


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_random_kills_of_a_child_that_creates_the_frame(tmp_path: Path, kind: str) -> None:
    rng = random.Random(7)
    path = str(tmp_path / NAMES[kind])
    for _ in range(4):
        done, reached = random_kill(path, tmp_path / "log", 3, 50, rng.uniform(0.0, 0.3), True)
        assert reached in (-1, done, done + 1)
