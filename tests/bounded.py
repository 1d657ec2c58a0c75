"""Bounded waits for the tests: every child process, thread and budget a test waits on ends in
a failure that names what was waited for, never in a hang and never in a failure that depends
on how loaded the machine is.

* Children (``run_child``, ``started``, ``wait_child``, ``readline_within``): a child
  still running after its bound is killed and the test fails with the child's name and what
  it was expected to do; a test that fails for another reason kills and reaps the children it
  started.
* Speed bounds are CPU time (``cpu_budget``, ``cpu_seconds``): a loaded machine stretches
  wall time by the load (a 0.2 s CPU decode took 4.5 s of wall time at load 18), not the
  CPU time of the process. They use ``ITIMER_PROF``/``SIGPROF``, never ``SIGALRM``:
  pytest-timeout's timer (``timeout = 300`` in pyproject.toml) runs on ``ITIMER_REAL`` and
  an ``alarm()`` in a test replaced and then cancelled it.

Every bound here is below pytest-timeout's (300 s; ``HEAVY_S`` for the few tests marked with
it), so that the test's own message (which child, which input) is the one shown;
pytest-timeout stays the net under everything else.

Wall-time bounds stretch with the machine's load (:func:`load_factor`, the 1-minute load per
core, 1 to 4, read when the wait starts; tests/conftest.py stretches pytest-timeout's the same
way when a test starts): with both cores kept busy by other processes, a child doing a
minute of work took over 240 s, and a kill test over 300 s, on a fresh clone (issue 38). A hang
still fails, named, within four times the bound.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

#: seconds a child process may run before it counts as hung (killed, the test fails)
CHILD_S = 240.0
#: seconds a thread of a test may take to finish once it was told to
THREAD_S = 120.0
#: pytest-timeout of the few tests whose children do tens of seconds of CPU work (mypy from a
#: cold cache: 22 s of CPU, 614 s of wall time at load 25; building and testing the wheel; the
#: HDF5 reference files): ``@pytest.mark.timeout(HEAVY_S)``, their children bounded by
#: ``HEAVY_CHILD_S``. Still a bound: a hang of theirs fails, named, within it
HEAVY_S = 1500.0
HEAVY_CHILD_S = 1200.0


#: the most a load stretches the wall-time bounds
MAX_LOAD_FACTOR = 4.0


def load_factor() -> float:
    """How much the machine's load stretches wall time now: the 1-minute load average per
    core, between 1 and :data:`MAX_LOAD_FACTOR`.

    >>> 1.0 <= load_factor() <= MAX_LOAD_FACTOR
    True
    """
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 1.0
    return min(MAX_LOAD_FACTOR, max(1.0, load / (os.cpu_count() or 1)))


def stretch_timeout(item: Any, factor: float) -> float | None:
    """Put a ``timeout`` marker on the pytest ``item`` ahead of its others: its closest one
    (or the ini's ``timeout``) times ``factor``; the new bound (None: nothing to stretch)."""
    if factor <= 1.0:
        return None
    marker = item.get_closest_marker("timeout")
    base: Any = None
    if marker is not None:
        base = marker.args[0] if marker.args else marker.kwargs.get("timeout")
    if base is None:
        base = item.config.getini("timeout")
    if not base:
        return None
    import pytest

    bound = float(base) * factor
    item.add_marker(pytest.mark.timeout(bound), append=False)
    return bound


def _stretched(timeout: float) -> float:
    return timeout * load_factor()


def _tail(data: str | bytes | None, n: int = 2000) -> str:
    if not data:
        return ""
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    return text[-n:]


def run_child(
    args: Sequence[str], what: str, timeout: float = CHILD_S, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(args, **kwargs)``; a child that has not exited after ``timeout``
    seconds is killed and the test fails naming ``what`` it was expected to do (and the end
    of its stderr, when captured).

    >>> import sys
    >>> run_child([sys.executable, "-c", "print(1)"], "print 1", capture_output=True).stdout
    b'1\\n'
    """
    timeout = _stretched(timeout)
    try:
        return subprocess.run(args, timeout=timeout, **kwargs)  # kills it on any exception
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"child {what!r} had not exited after {timeout} s (killed); stderr: "
            f"{_tail(exc.stderr)!r}"
        ) from None


def wait_child(proc: subprocess.Popen[Any], what: str, timeout: float = CHILD_S) -> int:
    """``proc``'s exit status; a child still running after ``timeout`` seconds is killed and
    the test fails naming ``what`` it was expected to do."""
    timeout = _stretched(timeout)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(
            f"child {what!r} (pid {proc.pid}) had not exited after {timeout} s (killed)"
        ) from None


def communicate_within(
    proc: subprocess.Popen[Any], what: str, timeout: float = CHILD_S, **kwargs: Any
) -> tuple[Any, Any]:
    """``proc.communicate(**kwargs)``; a child still running after ``timeout`` seconds is
    killed and the test fails naming ``what`` it was expected to do."""
    timeout = _stretched(timeout)
    try:
        return proc.communicate(timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        proc.communicate()
        raise AssertionError(
            f"child {what!r} (pid {proc.pid}) had not exited after {timeout} s (killed); "
            f"stderr: {_tail(exc.stderr)!r}"
        ) from None


@contextmanager
def started(args: Sequence[str], what: str, **kwargs: Any) -> Iterator[subprocess.Popen[Any]]:
    """A child process (``subprocess.Popen(args, **kwargs)``) for the ``with`` block: however
    the block ends, a child still running is killed, reaped, and its pipes closed.

    >>> import sys
    >>> with started([sys.executable, "-c", "input()"], "wait for a line",
    ...              stdin=subprocess.PIPE) as child:
    ...     pass
    >>> child.returncode == -signal.SIGKILL
    True
    """
    proc = subprocess.Popen(args, **kwargs)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def readline_within(pipe: IO[bytes], timeout: float, what: str) -> bytes:
    """The next line of a child's unread ``pipe`` (``b""``: the child closed it, e.g. it
    died); no line within ``timeout`` seconds fails the test naming ``what`` was awaited.

    >>> import sys
    >>> with started([sys.executable, "-c", "print('ready')"], "say ready",
    ...              stdout=subprocess.PIPE) as child:
    ...     readline_within(child.stdout, 60, "ready")
    b'ready\\n'
    """
    timeout = _stretched(timeout)
    if not select.select([pipe], [], [], timeout)[0]:
        raise AssertionError(f"{what}: nothing from the child after {timeout} s")
    return pipe.readline()


def join_all(threads: Sequence[threading.Thread], what: str, timeout: float = THREAD_S) -> None:
    """Join ``threads`` within ``timeout`` seconds in all; fails naming ``what`` they were
    doing and which are still alive (they cannot be killed: run them as daemons)."""
    timeout = _stretched(timeout)
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    if alive:
        raise AssertionError(f"threads {alive} ({what}) still running after {timeout} s")


def wait_until(cond: Callable[[], bool], what: str, timeout: float = THREAD_S) -> None:
    """Poll ``cond()`` every 5 ms until it holds (another thread reached a state); fails
    naming ``what`` after ``timeout`` seconds (stretched with the load, as every wait here).

    >>> wait_until(lambda: True, "nothing")
    """
    timeout = _stretched(timeout)
    tick = threading.Event()
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached within {timeout} s")
        tick.wait(0.005)


def _kernels_loaded() -> None:
    """Wait for pyblosc2's kernel set to finish its background load: the process's CPU time
    counts every thread's, and numba's import and compiles (from a cold cache: minutes of CPU
    on a fresh clone) are no bounded call's. A budget started during the load was spent by the
    loader: ``test_bad_arguments`` cases failed after 173 s waiting for numba's compiler lock."""
    from pyblosc2.kernels import wait_for_kernels

    wait_for_kernels()


@contextmanager
def cpu_budget(seconds: float, what: str) -> Iterator[None]:
    """Raise ``TimeoutError`` naming ``what`` when the process spends more than ``seconds``
    of CPU time (all its threads) inside the block: a bound for a busy loop that a loaded
    machine does not reach (it stretches wall time, not CPU time). A block waiting without
    using CPU is left to pytest-timeout.

    >>> with cpu_budget(5.0, "a sum"):
    ...     sum(range(10))
    45
    """

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what}: more than {seconds} s of CPU time")

    _kernels_loaded()

    old = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def cpu_seconds(fn: Callable[..., Any], *args: Any) -> float:
    """The CPU time of the process (all threads) spent in ``fn(*args)``.

    >>> cpu_seconds(sum, range(10)) < 1
    True
    """
    _kernels_loaded()
    start = time.process_time()
    fn(*args)
    return time.process_time() - start
