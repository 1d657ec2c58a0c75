"""The suite's own safety net, checked on its source (issue 38): every child process a test
starts goes through tests/bounded.py (bounded, named, killed on failure); no test waits
without a bound on a thread or a process; no test touches pytest-timeout's timer
(``SIGALRM``/``ITIMER_REAL``); hypothesis checks no wall time (tests/conftest.py's profile:
no deadline, no too_slow health check, and no test's own settings bring them back).

Child scripts (run as processes by the tests, never collected) are outside these rules: a
child is bounded by the parent that waits for it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parents[1]
#: modules run as child processes by the tests (their waits are bounded by the parent)
CHILD_SCRIPTS = {
    "trust/appender.py",
    "trust/dasker.py",
    "trust/hostile_child.py",
    "trust/mutator.py",
    "trust/store_mutator.py",
    "trust/table_appender.py",
    "trust/thread_reader.py",
    "interop/hdf5_cases.py",
}
SUBPROCESS_CALLS = {"Popen", "run", "call", "check_call", "check_output"}
#: zero-argument calls that wait for ever (``str.join`` takes one argument: a zero-argument
#: ``join`` is a thread's or a process's)
UNBOUNDED_WAITS = {"join", "wait", "communicate", "acquire"}


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if rel not in CHILD_SCRIPTS and rel != "bounded.py":
            out.append((rel, ast.parse(path.read_text())))
    return out


MODULES = _modules()


def _calls(tree: ast.Module) -> list[tuple[ast.Call, str, str]]:
    """(call, the name it is called on or "", the attribute) of every ``x.attr(...)``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value.id if isinstance(node.func.value, ast.Name) else ""
            found.append((node, base, node.func.attr))
    return found


def test_the_rules_see_the_test_modules() -> None:
    names = {rel for rel, _ in MODULES}
    assert {"trust/test_kill.py", "remote/conftest.py", "conftest.py"} <= names
    assert all((TESTS / rel).is_file() for rel in CHILD_SCRIPTS)


def _bounds_problems(rel: str, tree: ast.Module) -> list[str]:
    problems = []
    for call, base, attr in _calls(tree):
        where = f"{rel}:{call.lineno}"
        if base == "subprocess" and attr in SUBPROCESS_CALLS:
            problems.append(f"{where}: subprocess.{attr} (use tests.bounded: run_child, started)")
        if attr in UNBOUNDED_WAITS and not call.args and not call.keywords:
            problems.append(f"{where}: .{attr}() waits without a bound")
        if base == "signal" and attr in ("alarm", "setitimer"):
            problems.append(f"{where}: signal.{attr} (pytest-timeout's timer; use cpu_budget)")
        if attr == "Thread" and not any(k.arg == "daemon" for k in call.keywords):
            problems.append(f"{where}: a thread that is not a daemon can outlive its test")
    problems += [
        f"{rel}:{node.lineno}: {node.attr} is pytest-timeout's"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("SIGALRM", "ITIMER_REAL")
    ]
    return problems


def _hypothesis_problems(rel: str, tree: ast.Module) -> list[str]:
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for k in node.keywords:
            if k.arg == "deadline" and not (
                isinstance(k.value, ast.Constant) and k.value.value is None
            ):
                problems.append(f"{rel}:{node.lineno}: a hypothesis deadline")
            if k.arg == "suppress_health_check" and "too_slow" not in ast.unparse(k.value):
                problems.append(f"{rel}:{node.lineno}: health checks without too_slow")
    return problems


def test_children_waits_and_timers_are_bounded() -> None:
    assert [p for rel, tree in MODULES for p in _bounds_problems(rel, tree)] == []


def test_no_hypothesis_settings_bring_wall_time_back() -> None:
    assert [p for rel, tree in MODULES for p in _hypothesis_problems(rel, tree)] == []


def test_the_hypothesis_profile_checks_no_wall_time() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_wall_time_bounds_stretch_with_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38: with both cores kept busy, a child doing a minute of work passed CHILD_S and
    a kill test pytest-timeout's 300 s. The bounds are multiplied by the load per core (1 to
    4) read when the wait (or the test) starts."""
    import os
    import subprocess

    from tests import bounded

    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (3.0 * cores, 0.0, 0.0))
    assert bounded.load_factor() == 3.0
    seen: list[float] = []

    def fake_run(args: object, timeout: float, **kwargs: object) -> None:
        seen.append(timeout)

    monkeypatch.setattr(subprocess, "run", fake_run)
    bounded.run_child(["x"], "nothing", timeout=10.0)
    assert seen == [30.0]
    monkeypatch.setattr(os, "getloadavg", lambda: (100.0 * cores, 0.0, 0.0))
    assert bounded.load_factor() == bounded.MAX_LOAD_FACTOR
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert bounded.load_factor() == 1.0

    class Item:
        def __init__(self, marks: list[pytest.MarkDecorator]) -> None:
            self.marks = [m.mark for m in marks]
            self.config = type("C", (), {"getini": staticmethod(lambda name: "300")})()

        def get_closest_marker(self, name: str) -> object:
            return next((m for m in self.marks if m.name == name), None)

        def add_marker(self, mark: pytest.MarkDecorator, append: bool = True) -> None:
            self.marks.insert(len(self.marks) if append else 0, mark.mark)

    plain = Item([])
    assert bounded.stretch_timeout(plain, 2.0) == 600.0
    assert plain.get_closest_marker("timeout").args == (600.0,)  # type: ignore[attr-defined]
    heavy = Item([pytest.mark.timeout(bounded.HEAVY_S)])
    assert bounded.stretch_timeout(heavy, 2.0) == 2 * bounded.HEAVY_S
    assert bounded.stretch_timeout(Item([]), 1.0) is None
