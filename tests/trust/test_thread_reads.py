"""Threads of one handle read at the same time (frame/holds.py, frame/sharing.py): a read hold
does not keep another thread's read from completing, while a change or a re-read of the frame
waits for the reads under way and every read sees one state, whole; nested holds behave as
documented; processes of threads reading a file another process appends to see whole chunks
(with and without locking; tests/trust/thread_reader.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import (
    THREAD_S,
    join_all,
    readline_within,
    started,
    wait_child,
    wait_until,
)

from . import appender, thread_reader

CASES = ["memory", "file", "file-locking", "sparse", "sparse-locking"]
ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}


def _array(tmp_path: Path, case: str, data: np.ndarray) -> pb.NDArray:
    if case == "memory":
        return pb.asarray(data, chunks=(7, 6), blocks=(7, 3))
    path = str(tmp_path / "a.b2nd")
    pb.asarray(data, chunks=(7, 6), blocks=(7, 3), urlpath=path, contiguous="sparse" not in case)
    return pb.open(path, mode="a", locking="locking" in case)


def _threads(fns: list[Callable[[], None]], errors: list[BaseException]) -> list[threading.Thread]:
    def run(fn: Callable[[], None]) -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(fn,), daemon=True) for fn in fns]
    for t in threads:
        t.start()
    return threads


@pytest.mark.parametrize("case", ["memory", "file", "sparse"])
def test_a_read_completes_while_another_thread_holds_a_read(tmp_path: Path, case: str) -> None:
    """One thread stays inside a read hold (until an Event); another thread's read of the same
    handle completes meanwhile. (A per-handle lock around every hold made it wait.)"""
    data = np.arange(40 * 6).reshape(40, 6)
    a = _array(tmp_path, case, data)
    inside, done = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def holder() -> None:
        with a.schunk.holding_shared_lock():
            inside.set()
            seen["the other read ended meanwhile"] = done.wait(THREAD_S / 2)

    def other() -> None:
        assert inside.wait(THREAD_S)
        seen["read"] = a[...]
        done.set()

    errors: list[BaseException] = []
    join_all(_threads([holder, other], errors), "two reads of one handle")
    assert errors == [] and seen["the other read ended meanwhile"] is True
    assert np.array_equal(seen["read"], data)


@pytest.mark.parametrize("case", ["file-locking", "sparse-locking"])
def test_with_locking_the_reads_of_threads_take_turns(tmp_path: Path, case: str) -> None:
    """With locking, each read hold takes and lets go of C-Blosc2's shared lock alone among
    the handle's threads (as before: overlapping holds would keep the lock from another
    process's writer): a read asked for while a thread holds one waits for it, then ends."""
    data = np.arange(40 * 6).reshape(40, 6)
    a = _array(tmp_path, case, data)
    inside, release = threading.Event(), threading.Event()
    order: list[str] = []

    def holder() -> None:
        with a.schunk.holding_shared_lock():
            inside.set()
            assert release.wait(THREAD_S)
            order.append("holder leaves")

    def other() -> None:
        assert inside.wait(THREAD_S)
        got = a[...]
        order.append("other read")
        assert np.array_equal(got, data)

    errors: list[BaseException] = []
    threads = _threads([holder, other], errors)
    wait_until(lambda: a.schunk._frame._holds.waiting == 1 or bool(errors), "a waiting read")
    release.set()
    join_all(threads, "two reads of one locking handle")
    assert errors == [] and order == ["holder leaves", "other read"]


@pytest.mark.parametrize("case", CASES)
def test_a_change_waits_for_the_reads_under_way(tmp_path: Path, case: str) -> None:
    """A resize asked for while a thread reads waits for that read hold to end: the reader
    sees one shape and its data throughout, then the new shape."""
    data = np.arange(40 * 6).reshape(40, 6)
    a = _array(tmp_path, case, data)
    inside, release = threading.Event(), threading.Event()
    seen: list[Any] = []

    def reader() -> None:
        with a.schunk.holding_shared_lock():
            inside.set()
            seen.append(a.shape)
            assert release.wait(THREAD_S)
            seen.append(a[...])

    def writer() -> None:
        assert inside.wait(THREAD_S)
        a.resize((80, 6))

    errors: list[BaseException] = []
    threads = _threads([reader, writer], errors)
    wait_until(lambda: a.schunk._frame._holds.waiting == 1 or bool(errors), "a waiting resize")
    release.set()
    join_all(threads, "a read hold and a resize")
    assert errors == []
    assert seen[0] == (40, 6) and np.array_equal(seen[1], data)
    assert a.shape == (80, 6) and (a[40:] == 0).all()


@pytest.mark.parametrize("case", ["memory", "file", "file-locking"])
def test_nested_holds_of_one_thread(tmp_path: Path, case: str) -> None:
    """A read inside a read or a write hold of the same thread shares it; a change or a
    refresh() inside a read hold raises RuntimeError (it would replace what the handle's other
    readers read); a refresh() inside a write hold re-reads at once. Run in a thread, so that
    a hold waiting on itself fails the test instead of hanging it."""
    a = _array(tmp_path, case, np.ones((40, 6), np.int64))
    s = a.schunk
    got: list[Any] = []

    def nest() -> None:
        with s.holding_shared_lock(), s.holding_shared_lock():
            got.append(int(a[3, 2]))
            with pytest.raises(RuntimeError, match="inside a read"):
                a[0, 0] = 5
            if case != "memory":  # (a memory frame has nothing to re-read)
                with pytest.raises(RuntimeError, match="inside a read"):
                    a.refresh()
        with s.holding_lock():
            a[0, 0] = 7
            with s.holding_shared_lock():
                got.append(int(a[0, 0]))
            assert a.refresh() is False
        got.append(int(a[0, 0]))

    errors: list[BaseException] = []
    join_all(_threads([nest], errors), "nested holds of one thread")
    assert errors == [] and got == [1, 7, 7]


def _ndarray_ops(n: int) -> list[tuple[str, int]]:
    """A writer's changes: resizes (each to another length) and whole-slice writes."""
    return [("resize", 14 + 7 * ((k // 2) % 4)) if k % 2 else ("write", k) for k in range(1, n + 1)]


def _replay(ops: list[tuple[str, int]], first: np.ndarray) -> list[np.ndarray]:
    """The states the changes go through (pyblosc2's resize zero-fills new rows)."""
    states = [first]
    for op, v in ops:
        cur = states[-1]
        if op == "resize":
            new = np.zeros((v, cur.shape[1]), cur.dtype)
            keep = min(v, cur.shape[0])
            new[:keep] = cur[:keep]
        else:
            new = cur.copy()
            new[1 : cur.shape[0] - 1] = v * 1000 + np.arange(cur.shape[1])
        states.append(new)
    return states


def _order_of(reads: list[np.ndarray], states: list[np.ndarray]) -> list[int]:
    """For each read in order, the first state it equals at or after the previous one's (a
    read that equals no state from there on fails the test)."""
    at, out = 0, []
    for r in reads:
        k = next(
            (i for i in range(at, len(states)) if np.array_equal(r, states[i])),
            None,
        )
        assert k is not None, f"read {len(out)} (shape {r.shape}) is no state from {at} on"
        out.append(k)
        at = k
    return out


@pytest.mark.parametrize("case", CASES)
def test_reads_of_many_threads_see_whole_states_while_one_writes(tmp_path: Path, case: str) -> None:
    """Four threads read the whole array again and again (each read one hold, its chunks
    decoded on the pool) while a fifth resizes it and rewrites it: every read returned is one
    of the states the array went through, whole, and each thread's reads go forward."""
    first = np.arange(21 * 6, dtype=np.int64).reshape(21, 6)
    a = _array(tmp_path, case, first)
    ops = _ndarray_ops(24)
    states = _replay(ops, first)
    stop = threading.Event()
    started_reads = threading.Barrier(5)
    reads: list[list[np.ndarray]] = [[] for _ in range(4)]

    def reader(k: int) -> Callable[[], None]:
        def run() -> None:
            try:
                reads[k].append(a[...])
            finally:
                started_reads.wait(THREAD_S)
            while not stop.is_set():
                reads[k].append(a[...])

        return run

    def writer() -> None:
        try:
            started_reads.wait(THREAD_S)
            for op, v in ops:
                if op == "resize":
                    a.resize((v, 6))
                else:
                    a[1 : a.shape[0] - 1] = v * 1000 + np.arange(6)
        finally:
            stop.set()

    errors: list[BaseException] = []
    join_all(_threads([*(reader(k) for k in range(4)), writer], errors), "reads and changes")
    assert errors == []
    assert np.array_equal(a[...], states[-1])
    for got in reads:
        _order_of(got, states)


@pytest.mark.parametrize("case", ["file", "file-locking", "sparse-locking"])
def test_a_read_hold_sees_one_state_of_an_schunk_being_appended_to(
    tmp_path: Path, case: str
) -> None:
    """Threads each hold the handle for reading and read its chunk count and every chunk,
    while another thread of the same handle appends and rewrites chunk 0: inside a hold the
    count and the chunks agree (no view replaced under a reader)."""
    path = tmp_path / ("a.b2frame" if "sparse" not in case else "a.dir")
    s = pb.SChunk(
        chunksize=appender.ITEMS * 8,
        urlpath=str(path),
        contiguous="sparse" not in case,
        mode="w",
        cparams={"typesize": 8, "nthreads": 1},
        locking="locking" in case,
    )
    s.append_data(appender.chunk(1, 0))
    stop = threading.Event()
    counts: list[list[int]] = [[] for _ in range(3)]

    def reader(k: int) -> Callable[[], None]:
        def run() -> None:
            while not stop.is_set():
                with s.holding_shared_lock():
                    n = s.nchunks
                    head = int(np.frombuffer(s.decompress_chunk(0), np.int64)[0])
                    tags = [
                        int(np.frombuffer(s.decompress_chunk(i), np.int64)[0]) for i in range(n)
                    ]
                # chunk 0 is rewritten to 0..: its tag says how many chunks there were
                assert tags[0] == head and tags[1:] == [100_000 + i for i in range(1, n)]
                assert head in (100_000, n - 1), (head, n)
                counts[k].append(n)

        return run

    def writer() -> None:
        try:
            for i in range(1, 30):
                with s.holding_lock():
                    s.append_data(appender.chunk(1, i))
                    s.update_data(0, np.full(appender.ITEMS, i, np.int64), True)
        finally:
            stop.set()

    errors: list[BaseException] = []
    join_all(_threads([*(reader(k) for k in range(3)), writer], errors), "holds and appends")
    assert errors == []
    for got in counts:
        assert got == sorted(got)


@pytest.mark.parametrize(
    ("locking", "lib"),
    [(True, "pyblosc2"), (True, "blosc2"), (False, "unlocked")],
    ids=["locking", "locking-python-blosc2-writer", "unlocked"],
)
def test_processes_of_reading_threads_follow_a_writer_process(
    tmp_path: Path, locking: bool, lib: str, cblosc2: Any
) -> None:
    """Two processes of three reading threads each (one handle per process) read a frame
    while another process appends 40 chunks: every read hold sees whole chunks and a count
    that never goes back, and a read after the writer ended sees all 40."""
    path = tmp_path / "a.b2frame"
    pb.SChunk(
        chunksize=appender.ITEMS * 8,
        urlpath=str(path),
        mode="w",
        cparams={"typesize": 8, "nthreads": 1},
    )
    stop = str(tmp_path / "stop")
    args = [sys.executable, thread_reader.__file__, str(path), "1" if locking else "0", "3", stop]
    what = "read the frame from 3 threads until told to stop"
    writing = f"append 40 chunks ({lib})"
    with (
        started(args, what, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as one,
        started(args, what, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as two,
    ):
        for child in (one, two):
            assert child.stdout is not None
            assert readline_within(child.stdout, THREAD_S, f"{what}: ready") == b"ready\n"
        with started(
            [sys.executable, appender.__file__, str(path), "1", "40", lib],
            writing,
            env=ENV,
            stdout=subprocess.DEVNULL,
        ) as writer:
            assert wait_child(writer, writing) == 0
        Path(stop).touch()
        for child in (one, two):
            assert child.stdout is not None and child.stderr is not None
            status = wait_child(child, what)
            out, err = child.stdout.read().decode(), child.stderr.read().decode()
            assert status == 0, err[-2000:]
            reads, last = map(int, out.split())
            assert reads >= 3 and last == 40
