"""The holds of one handle's threads on its frame: an in-process readers/writer lock
(docs/crash-safety.md, "Other handles").

Read holds of different threads run at the same time. An *exclusive* hold (a change, or a
replacement of the handle's view of the frame) runs alone: it waits for the read holds under
way to end, and a read hold asked for while an exclusive one is held or waited for waits for
it (a waiting exclusive hold goes first, so a stream of overlapping reads cannot starve a
writer). Exclusive holds are granted in the order they were asked for, so a thread that asks
again at once does not take a hold from one that has been waiting. Each thread knows its own
hold (:attr:`Holds.mine`): nested calls of the frame re-enter it instead of waiting on
themselves.

>>> h = Holds()
>>> h.enter_read(); h.readers
1
>>> h.leave_read()
>>> h.enter_exclusive(); h.leave_exclusive(); h.readers
0
"""

from __future__ import annotations

import threading
from collections import deque

__all__ = ["NONE", "READ", "WRITE", "Holds"]

#: this thread's hold: none, a read hold, a write hold
NONE, READ, WRITE = 0, 1, 2


class Holds:
    """Which threads of one handle hold its frame, and how (see the module docstring)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._local = threading.local()
        #: threads in a read hold
        self.readers = 0
        self._owner: int | None = None  # the thread in the exclusive hold
        self._queue: deque[object] = deque()  # the waiting exclusive holds, first first

    @property
    def waiting(self) -> int:
        """Threads waiting for the exclusive hold."""
        return len(self._queue)

    @property
    def mine(self) -> int:
        """This thread's hold: ``NONE``, ``READ`` or ``WRITE`` (set by the frame's holds)."""
        return int(getattr(self._local, "kind", NONE))

    @mine.setter
    def mine(self, kind: int) -> None:
        self._local.kind = kind

    def enter_read(self) -> None:
        """Wait until no exclusive hold is held or waited for, then join the readers."""
        with self._cond:
            while self._owner is not None or self._queue:
                self._cond.wait()
            self.readers += 1

    def leave_read(self) -> None:
        """Leave a read hold; the last reader wakes the threads waiting for the exclusive
        hold (only they wait for the readers to leave: no wake-up when none waits)."""
        with self._cond:
            self.readers -= 1
            if not self.readers and self._queue:
                self._cond.notify_all()

    def enter_exclusive(self) -> None:
        """Wait until no thread holds the frame and the exclusive holds asked for before
        this one were granted, then hold it alone."""
        turn = object()
        with self._cond:
            self._queue.append(turn)
            try:
                while self._owner is not None or self.readers or self._queue[0] is not turn:
                    self._cond.wait()
            except BaseException:  # (interrupted) the threads held back for it go on
                self._queue.remove(turn)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._owner = threading.get_ident()

    def leave_exclusive(self) -> None:
        with self._cond:
            self._owner = None
            self._cond.notify_all()

    def downgrade(self) -> None:
        """Turn this thread's exclusive hold into a read hold (no other thread can take the
        exclusive hold in between)."""
        with self._cond:
            self._owner = None
            self.readers += 1
            self._cond.notify_all()
