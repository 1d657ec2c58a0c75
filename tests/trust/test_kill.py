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

from . import mutator

CHILD = [sys.executable, str(Path(mutator.__file__))]
ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}


def _logged(log: Path) -> int:
    """How many operations returned (the log holds their indices)."""
    return len(log.read_text().split()) if log.exists() else 0


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


def random_kill(path: str, log: Path, seed: int, nops: int, delay: float) -> tuple[int, int]:
    """Run the mutator on a fresh frame, SIGKILL it ``delay`` seconds after it is ready;
    returns (operations returned, state found)."""
    mutator.create(path)
    log.unlink(missing_ok=True)
    child = subprocess.Popen(
        [*CHILD, path, str(seed), str(nops), str(log)], env=ENV, stdout=subprocess.PIPE
    )
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    done = _logged(log)
    return done, _check(path, seed, done)


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
    path = str(tmp_path / f"k{op}_{nth}_{name}")
    mutator.create(path)
    log = tmp_path / f"log{op}_{nth}_{name}"
    r = subprocess.run(
        [*CHILD, path, str(seed), str(op + 1), str(log), f"{op}:{nth}"], env=ENV, check=False
    )
    killed = r.returncode == -signal.SIGKILL
    assert killed or r.returncode == 0, r.returncode
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
