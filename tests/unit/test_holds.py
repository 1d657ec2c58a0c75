"""frame/holds.py: one handle's threads hold its frame together for reading, alone for a change
or a re-read of it; a waiting exclusive hold goes before later readers. Every wait of a
thread here is an Event or a bounded join, never a sleep."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from pyblosc2.frame.holds import READ, WRITE, Holds
from tests.bounded import THREAD_S, join_all, wait_until


def _spawn(fn: Callable[[], None], errors: list[BaseException], name: str = "") -> threading.Thread:
    def run() -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True, name=name or None)
    t.start()
    return t


def _spy_waits(h: Holds, thread_name: str) -> threading.Event:
    """An Event set when the thread named ``thread_name`` waits on ``h``'s condition."""
    waits = threading.Event()
    plain_wait = h._cond.wait

    def spy(timeout: float | None = None) -> bool:
        if threading.current_thread().name == thread_name:
            waits.set()
        return plain_wait(timeout)

    h._cond.wait = spy  # type: ignore[method-assign]
    return waits


def test_read_holds_of_two_threads_are_held_at_once() -> None:
    h = Holds()
    inside, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    seen: dict[str, bool] = {}

    def first() -> None:
        h.enter_read()
        inside.set()
        seen["other entered meanwhile"] = done.wait(THREAD_S / 2)
        h.leave_read()

    def second() -> None:
        assert inside.wait(THREAD_S)
        h.enter_read()
        seen["readers"] = h.readers == 2
        h.leave_read()
        done.set()

    join_all([_spawn(first, errors), _spawn(second, errors)], "two read holds", THREAD_S)
    assert errors == [] and seen == {"other entered meanwhile": True, "readers": True}


def test_an_exclusive_hold_waits_for_readers_and_goes_before_later_ones() -> None:
    """A reader holds; a writer waits for it; a reader asked for after that waits behind the
    writer (its wait observed through the condition), so the order is writer, then reader."""
    h = Holds()
    order: list[str] = []
    errors: list[BaseException] = []
    h.enter_read()

    def writer() -> None:
        h.enter_exclusive()
        order.append("W")
        h.leave_exclusive()

    def late() -> None:
        h.enter_read()
        order.append("R")
        h.leave_read()

    late_waits = _spy_waits(h, "late")
    w = _spawn(writer, errors)
    wait_until(lambda: h.waiting == 1, "the writer waits for the reader")
    r = _spawn(late, errors, "late")
    assert late_waits.wait(THREAD_S) and order == []
    h.leave_read()
    join_all([w, r], "a writer and a later reader")
    assert errors == [] and order == ["W", "R"] and h.readers == 0


def test_a_downgraded_hold_lets_readers_in_but_no_writer() -> None:
    """An exclusive hold turned into a read hold (a re-read done, the read goes on): a reader
    waiting for the exclusive hold joins it; a writer waits until both left."""
    h = Holds()
    h.enter_exclusive()
    errors: list[BaseException] = []
    reader_waits = _spy_waits(h, "reader")
    joined = threading.Event()

    def reader() -> None:
        h.enter_read()
        joined.set()

    t = _spawn(reader, errors, "reader")
    assert reader_waits.wait(THREAD_S) and not joined.is_set()
    h.downgrade()
    assert joined.wait(THREAD_S)
    join_all([t], "a reader joining a downgraded hold")
    assert h.readers == 2
    order: list[str] = []
    w = _spawn(lambda: (h.enter_exclusive(), order.append("W"), h.leave_exclusive()), errors)
    wait_until(lambda: h.waiting == 1, "the writer waits for both readers")
    h.leave_read()
    order.append("one left")
    h.leave_read()
    join_all([w], "a writer after two readers")
    assert errors == [] and order == ["one left", "W"]


def test_each_thread_knows_its_own_hold() -> None:
    h = Holds()
    h.mine = WRITE
    got: list[int] = []
    t = threading.Thread(target=lambda: got.append(h.mine), daemon=True)
    t.start()
    join_all([t], "read another thread's hold")
    assert got == [0] and h.mine == WRITE
    h.mine = READ
    assert h.mine == READ


def test_an_interrupted_wait_leaves_no_waiting_writer() -> None:
    """An exception while waiting for the exclusive hold (a KeyboardInterrupt) leaves no
    writer counted as waiting, so later readers are not held back by it."""
    h = Holds()
    h.enter_read()

    def interrupted(timeout: float | None = None) -> bool:
        raise KeyboardInterrupt

    h._cond.wait = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        h.enter_exclusive()
    assert h.waiting == 0
    h.enter_read()
    assert h.readers == 2


def test_exclusive_holds_are_granted_in_the_order_asked() -> None:
    """A thread leaving its exclusive hold and asking again at once goes after the threads
    already waiting (a lock without order let readers of a locking handle keep a writer
    waiting for minutes)."""
    h = Holds()
    h.enter_exclusive()
    order: list[str] = []
    errors: list[BaseException] = []

    def take(name: str) -> Callable[[], None]:
        def run() -> None:
            h.enter_exclusive()
            order.append(name)
            h.leave_exclusive()

        return run

    b = _spawn(take("B"), errors)
    wait_until(lambda: h.waiting == 1, "B waits")
    c = _spawn(take("C"), errors)
    wait_until(lambda: h.waiting == 2, "C waits")
    h.leave_exclusive()
    h.enter_exclusive()
    order.append("A")
    h.leave_exclusive()
    join_all([b, c], "two exclusive holds in turn")
    assert errors == [] and order == ["B", "C", "A"]
