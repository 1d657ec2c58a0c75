"""_threads.py: the block pool and the per-thread scratch buffers and caches."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyblosc2._threads import SCRATCH_MAX, run_parallel, scratch, thread_cache, thread_parts
from tests.bounded import join_all


@pytest.mark.parametrize("nthreads", [1, 2, 4])
def test_run_parallel_keeps_item_order(nthreads: int) -> None:
    assert run_parallel(lambda x: x * 3, range(50), nthreads) == [x * 3 for x in range(50)]


def test_run_parallel_propagates_the_first_error() -> None:
    def fn(x: int) -> int:
        if x >= 3:
            raise KeyError(x)
        return x

    with pytest.raises(KeyError, match="3"):
        run_parallel(fn, range(10), 2)


def test_run_parallel_raises_the_first_failing_item_in_item_order() -> None:
    """Item 0 fails after item 1 has failed: item 0's error is the one raised."""
    one_failed = threading.Event()

    def fn(x: int) -> int:
        if x == 0:
            assert one_failed.wait(10)
            raise KeyError("first")
        one_failed.set()
        raise ValueError("second")

    with pytest.raises(KeyError, match="first"):
        run_parallel(fn, range(2), 2)


def test_run_parallel_starts_no_item_after_one_raised() -> None:
    started: list[int] = []

    def fn(x: int) -> int:
        started.append(x)
        if x == 2:
            raise KeyError(x)
        time.sleep(0.001)  # (lets the failing thread record its error while others work)
        return x

    with pytest.raises(KeyError, match="2"):
        run_parallel(fn, range(1000), 2)
    # items taken before the error finish; then no new one starts (a few at most, taken by
    # the other thread before the error was recorded; all 1,000 started before this change)
    assert 3 <= len(started) <= 20, started


def test_run_parallel_works_on_the_caller_and_one_pool_thread_at_once() -> None:
    """Two items that each wait for the other to start: they can only both finish if two
    threads run them at once, the caller being one (it works rather than waits)."""
    both = threading.Barrier(2, timeout=10)
    names: list[str] = []

    def fn(x: int) -> int:
        names.append(threading.current_thread().name)
        both.wait(10)
        return x

    assert run_parallel(fn, range(2), 2) == [0, 1]
    assert threading.current_thread().name in names
    assert any(n.startswith("pyblosc2") for n in names)


def test_run_parallel_runs_nested_calls_inline_on_every_thread() -> None:
    """Work an item starts runs on the item's own thread, the caller's included (never
    queued behind the pool's busy threads)."""
    seen: list[tuple[str, list[str]]] = []

    def inner(_: int) -> str:
        return threading.current_thread().name

    def outer(x: int) -> int:
        seen.append((threading.current_thread().name, run_parallel(inner, range(4), 2)))
        return x

    assert run_parallel(outer, range(8), 2) == list(range(8))
    assert len(seen) == 8
    assert all(names == [name] * 4 for name, names in seen)
    # and afterwards the caller's calls use the pool again: two items that each wait for
    # the other to start finish only on two threads at once
    both = threading.Barrier(2, timeout=10)
    assert run_parallel(lambda x: (both.wait(10), x)[1], range(2), 2) == [0, 1]


@contextlib.contextmanager
def _pool_held_by_another_caller() -> Iterator[list[list[int]]]:
    """Another thread's run_parallel call whose item holds the pool's one thread (two
    threads asked for) until the block ends; yields that call's results (after the block)."""
    release = threading.Event()
    held = threading.Event()

    def slow(x: int) -> int:
        if threading.current_thread().name.startswith("pyblosc2"):
            held.set()
            assert release.wait(10)
        else:  # the caller's own item waits until the pool's thread has taken the other
            assert held.wait(10)
        return x

    results: list[list[int]] = []
    other = threading.Thread(
        target=lambda: results.append(run_parallel(slow, range(2), 2)), daemon=True
    )
    other.start()
    try:
        assert held.wait(10)  # the pool's one thread is busy with the other caller's item
        yield results
    finally:
        release.set()
        join_all([other], "the other caller")


def test_a_caller_does_not_wait_behind_another_callers_pool_work() -> None:
    """While another caller's item holds the pool's thread, a second caller does its items
    itself and returns (its queued pool task is dropped, not waited for)."""
    with _pool_held_by_another_caller() as first:
        done = threading.Event()
        got: list[list[int]] = []

        def second() -> None:
            got.append(run_parallel(lambda x: x + 1, range(6), 2))
            done.set()

        threading.Thread(target=second, daemon=True).start()
        assert done.wait(5), "the second caller waited behind the first caller's item"
        assert got == [[1, 2, 3, 4, 5, 6]]
    assert first == [[0, 1]]


def test_a_dropped_pool_task_keeps_no_view_of_the_items_alive() -> None:
    """A caller's pool task dropped while queued (the pool's thread busy with another
    caller's item) no longer references the items: a buffer they viewed can be resized at
    once (python-blosc2's test_schunk_delete resizes an in-memory frame right after a read)."""
    with _pool_held_by_another_caller():
        frame = bytearray(64)
        views = [memoryview(frame)[i : i + 8] for i in range(0, 64, 8)]
        assert run_parallel(len, views, 2) == [8] * 8
        del views
        frame += b"more"  # BufferError while a queued task still holds the views
        assert len(frame) == 68


def test_scratch_is_reused_per_slot_and_grows() -> None:
    a = scratch(100, "test-a")
    assert scratch(50, "test-a").base is a.base
    assert scratch(100, "test-b").base is not a.base
    big = scratch(1000, "test-a")
    assert big.nbytes == 1000 and scratch(10, "test-a").base is big.base


@pytest.mark.parametrize(("nbytes", "dtype", "length"), [(16, np.uint16, 8), (16, "<u8", 2)])
def test_scratch_views_as_dtype(nbytes: int, dtype: object, length: int) -> None:
    a = scratch(nbytes, "test-dtype", dtype)
    assert len(a) == length and a.dtype == np.dtype(dtype)


def test_large_scratch_is_not_kept() -> None:
    a = scratch(SCRATCH_MAX + 1, "test-big")
    assert scratch(SCRATCH_MAX + 1, "test-big").base is not a.base


def _in_thread(fn):  # type: ignore[no-untyped-def]
    out = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    join_all([t], "a call in another thread")
    return out[0]


def test_scratch_and_caches_are_per_thread() -> None:
    mine = scratch(64, "test-thread")
    theirs = _in_thread(lambda: scratch(64, "test-thread"))
    assert theirs.base is not mine.base
    thread_cache("test-cache")["k"] = "main"
    assert _in_thread(lambda: thread_cache("test-cache").get("k")) is None
    assert thread_cache("test-cache")["k"] == "main"


@given(st.integers(0, 50), st.integers(0, 200), st.integers(1, 9))
def test_thread_parts_cover_the_range_in_balanced_contiguous_parts(
    first: int, n: int, nthreads: int
) -> None:
    parts = thread_parts(first, first + n, nthreads)
    assert [j for p in parts for j in p] == list(range(first, first + n))
    assert len(parts) == min(nthreads, n) and all(len(p) for p in parts)
    if parts:
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
