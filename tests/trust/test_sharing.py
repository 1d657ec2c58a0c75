"""Handles that own their resources, and frames shared by handles, threads and processes:
python-blosc2's lock protocol (a `.b2lock` sidecar, flock, a generation counter), stale
handles refused without locking, pickled and copied handles that reopen their file."""

from __future__ import annotations

import copy
import gc
import os
import pickle
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import (
    CHILD_S,
    communicate_within,
    join_all,
    readline_within,
    run_child,
    started,
    wait_child,
)

from . import appender

ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
APPENDER = [sys.executable, str(Path(appender.__file__))]


def _new(path: Path, contiguous: bool = True, **kw) -> pb.SChunk:
    return pb.SChunk(
        chunksize=appender.ITEMS * 8,
        urlpath=str(path),
        contiguous=contiguous,
        mode="w",
        cparams={"typesize": 8, "nthreads": 1},
        **kw,
    )


def _tags(path: Path) -> list[int]:
    s = pb.open(str(path))
    return [int(np.frombuffer(s.decompress_chunk(i), np.int64)[0]) for i in range(s.nchunks)]


def test_a_pickled_copy_never_writes_into_another_file(tmp_path: Path) -> None:
    path = tmp_path / "a.b2frame"
    _new(path).append_data(np.arange(500, dtype=np.int64))
    s = pb.open(str(path), mode="a")
    clone = pickle.loads(pickle.dumps(s))
    del clone
    gc.collect()
    other = tmp_path / "other.bin"
    with open(other, "wb") as f:  # likely to get the descriptor number the copy had
        f.write(b"x" * 16)
        f.flush()
        s.vlmeta["x"] = 1
    assert other.read_bytes() == b"x" * 16
    assert pb.open(str(path)).vlmeta["x"] == 1


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_copies_reopen_and_see_the_frame(tmp_path: Path, how: str) -> None:
    path = tmp_path / "a.b2nd"
    a = pb.asarray(np.arange(100).reshape(10, 10), urlpath=str(path), mode="w")
    dup = {
        "pickle": lambda x: pickle.loads(pickle.dumps(x)),
        "copy": copy.copy,
        "deepcopy": copy.deepcopy,
    }[how](a)
    # a shallow copy shares the SChunk (one owner of the descriptor); the others reopen
    assert (a.schunk is dup.schunk) == (how == "copy")
    assert how == "copy" or a.schunk._store is not dup.schunk._store
    assert np.array_equal(dup[2:4, 3], [23, 33])
    del a
    gc.collect()
    assert np.array_equal(dup[:], np.arange(100).reshape(10, 10))  # its file is still open


def test_a_stale_handle_is_refused_without_locking(tmp_path: Path) -> None:
    path = tmp_path / "a.b2frame"
    _new(path).append_data(np.arange(500, dtype=np.int64))
    one, two = pb.open(str(path), mode="a"), pb.open(str(path), mode="a")
    one.append_data(np.arange(500, dtype=np.int64))
    with pytest.raises(pb.FrameChangedError, match="another handle"):
        two.vlmeta["x"] = 1
    assert pb.open(str(path)).nchunks == 2 and "x" not in pb.open(str(path)).vlmeta
    two.refresh()
    two.vlmeta["x"] = 1  # after a refresh it may write
    assert pb.open(str(path)).vlmeta["x"] == 1 and pb.open(str(path)).nchunks == 2


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "sparse"])
def test_locking_handles_follow_each_other(tmp_path: Path, contiguous: bool) -> None:
    path = tmp_path / ("a.b2frame" if contiguous else "a.dir")
    _new(path, contiguous, locking=True)
    one = pb.open(str(path), mode="a", locking=True)
    two = pb.open(str(path), mode="a", locking=True)
    one.append_data(appender.chunk(1, 0))
    two.append_data(appender.chunk(2, 0))  # re-syncs first: nothing is lost
    assert one.nchunks == 1  # a property does not re-sync ...
    assert one[:] == two[:]  # ... a read does
    lock = str(path) + ".b2lock" if contiguous else os.path.join(str(path), ".b2lock")
    with open(lock, "rb") as f:
        f.seek(8)
        assert struct.unpack("=Q", f.read(8))[0] == 2  # one bump per exclusive hold
    assert _tags(path) == [100_000, 200_000]


def test_holding_lock_is_reentrant_and_exclusive(tmp_path: Path) -> None:
    path = tmp_path / "a.b2frame"
    s = _new(path, locking=True)
    with s.holding_lock(), s.holding_lock():
        s.append_data(appender.chunk(1, 0))
        s.append_data(appender.chunk(1, 1))
        probe = run_child(  # another process cannot take the lock meanwhile
            [
                sys.executable,
                "-c",
                "import fcntl,os,sys; fd=os.open(sys.argv[1], os.O_RDWR)\n"
                "try:\n fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
                "except BlockingIOError: print('held')",
                str(path) + ".b2lock",
            ],
            "try the frame lock without waiting",
            capture_output=True,
            text=True,
            check=True,
        )
        assert probe.stdout.strip() == "held"
    assert s.locking and pb.open(str(path)).nchunks == 2


@pytest.mark.parametrize(
    ("libs", "contiguous"),
    [
        (("pyblosc2", "pyblosc2"), True),
        (("pyblosc2", "blosc2"), True),
        (("pyblosc2", "pyblosc2"), False),
    ],
    ids=["ours+ours", "ours+C", "ours+ours-sparse"],
)
def test_concurrent_writers_with_locking_lose_nothing(
    tmp_path: Path, libs, contiguous: bool, cblosc2
) -> None:
    path = tmp_path / ("a.b2frame" if contiguous else "a.dir")
    _new(path, contiguous, locking=True)
    n = 25
    args = [[*APPENDER, str(path), str(tag), str(n), lib] for tag, lib in enumerate(libs, 1)]
    with (
        started(args[0], f"append {n} chunks with {libs[0]}", env=ENV) as one,
        started(args[1], f"append {n} chunks with {libs[1]}", env=ENV) as two,
    ):
        codes = [
            wait_child(p, f"append {n} chunks with {lib}")
            for p, lib in ((one, libs[0]), (two, libs[1]))
        ]
    assert codes == [0, 0]
    tags = sorted(_tags(path))
    assert tags == sorted(t * 100_000 + i for t in (1, 2) for i in range(n))
    c = cblosc2.open(str(path))
    assert c.nchunks == 2 * n


def test_threads_share_one_handle(tmp_path: Path) -> None:
    s = _new(tmp_path / "a.b2frame")
    errors: list[BaseException] = []

    def work(tag: int) -> None:
        try:
            for i in range(20):
                s.append_data(appender.chunk(tag, i))
                assert s[0:1]  # reads interleaved with the other thread's appends
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in (1, 2, 3)]
    for t in threads:
        t.start()
    join_all(threads, "20 appends and reads each on one shared handle")
    assert errors == []
    assert sorted(_tags(tmp_path / "a.b2frame")) == sorted(
        t * 100_000 + i for t in (1, 2, 3) for i in range(20)
    )


def test_writers_without_locking_are_refused_never_lose(tmp_path: Path) -> None:
    """Two processes appending without locking: an append from a stale handle raises
    FrameChangedError (the child then refreshes and retries) instead of overwriting the other's
    chunks; every append that returned is in the frame exactly once."""
    path = tmp_path / "a.b2frame"
    _new(path)
    n = 20
    what = f"append {n} chunks without locking"
    args = [[*APPENDER, str(path), str(tag), str(n), "unlocked"] for tag in (1, 2)]
    with (
        started(args[0], what, env=ENV, stdout=subprocess.PIPE, text=True) as one,
        started(args[1], what, env=ENV, stdout=subprocess.PIPE, text=True) as two,
    ):
        outs = [communicate_within(p, what)[0] for p in (one, two)]
    assert [one.returncode, two.returncode] == [0, 0]
    returned = {
        t * 100_000 + int(i) for t, out in zip((1, 2), outs, strict=True) for i in out.split()
    }
    # pyblosc2 writers serialise their commits on the file even without the frame lock, so
    # every append that returned is there exactly once
    assert sorted(_tags(path)) == sorted(returned) and len(returned) == 2 * n


def test_a_reader_opens_while_a_writer_appends(tmp_path: Path) -> None:
    """The frame is opened and read after each append the writer reports, while it goes on
    appending: every open sees at least the chunks reported so far, whole (the reads
    interleave with the appends however the two processes are scheduled; counting opens
    during the run, as this test did, depended on the scheduling)."""
    path = tmp_path / "a.b2frame"
    _new(path)
    args = [*APPENDER, str(path), "1", "200", "unlocked"]
    what = "append 200 chunks without locking"
    with started(args, what, env=ENV, stdout=subprocess.PIPE) as writer:
        assert writer.stdout is not None
        opened = 0
        while line := readline_within(writer.stdout, CHILD_S, f"{what}: the next append"):
            s = pb.open(str(path))
            n = s.nchunks  # once: each call follows the writer (a poll of the header)
            assert n > int(line)  # chunk ``line`` was appended
            assert np.frombuffer(s.decompress_chunk(n - 1), np.int64)[0] == 100_000 + n - 1
            opened += 1
        assert wait_child(writer, what) == 0
    assert opened == 200
    assert _tags(path) == [100_000 + i for i in range(200)]


@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "sparse"])
def test_nested_changes_do_not_deadlock_without_locking(tmp_path: Path, contiguous: bool) -> None:
    """holding_lock() around changes, and a slice assignment (several chunks, one commit)
    inside it, re-enter the handle's write guard instead of waiting on themselves."""
    path = tmp_path / ("a.b2frame" if contiguous else "a.dir")
    s = _new(path, contiguous)
    with s.holding_lock(), s.holding_lock():
        s.append_data(appender.chunk(1, 0))
        s[0:10] = np.arange(10, dtype=np.int64)
    assert np.frombuffer(pb.open(str(path))[0:10], np.int64).tolist() == list(range(10))
