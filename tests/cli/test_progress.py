"""The progress bar: tqdm only when asked for and stderr is a terminal."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from pyblosc2.cli.progress import Line, _Silent, progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("enabled", "tty", "shown"), [(True, True, True), (True, False, False), (False, True, False)]
)
def test_progress_only_on_a_terminal(monkeypatch, enabled: bool, tty: bool, shown: bool) -> None:
    tqdm = pytest.importorskip("tqdm")
    err = _Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = progress(3, "work", enabled=enabled)
    bar.update(3)
    bar.close()
    assert isinstance(bar, tqdm.tqdm) is shown
    assert isinstance(bar, _Silent) is not shown
    assert ("work" in err.getvalue()) is shown


def test_plain_line_without_tqdm(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    bar = progress(3 << 20, "convert", enabled=True, unit="B")
    assert isinstance(bar, Line)
    bar.update(3 << 20)
    bar.close()
    shown = err.getvalue().split("\r")
    assert shown[1] == "convert: 0.0/3.0 MiB (0%)"
    assert shown[2] == "convert: 3.0/3.0 MiB (100%)"
    assert shown[-1] == ""  # erased at the end


_NO_TQDM = 'raise ImportError("tqdm hidden by the test")\n'


def _on_a_terminal(args: list[str], cwd: Path, hide_tqdm: bool) -> tuple[int, str]:
    """Run ``python -m pyblosc2 ARGS`` with standard error on a pseudo-terminal."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import subprocess
    import termios
    import time

    from tests.bounded import CHILD_S, started, wait_child
    from tests.cli.conftest import SRC

    path = [str(SRC)]
    if hide_tqdm:
        shim = cwd / "shim" / "tqdm"
        shim.mkdir(parents=True, exist_ok=True)
        (shim / "__init__.py").write_text(_NO_TQDM)
        path.insert(0, str(shim.parent))
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    what = f"pyblosc2 {' '.join(args)} on a terminal"
    with started(
        [sys.executable, "-m", "pyblosc2", *args],
        what,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
    ) as proc:
        os.close(slave)
        chunks = []
        deadline = time.monotonic() + CHILD_S
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([master], [], [], left)[0]:
                    raise AssertionError(f"{what}: the terminal still open after {CHILD_S} s")
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
        finally:
            os.close(master)
        status = wait_child(proc, what)
    return status, b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("out", ["out.b2nd", "out.b2frame", "out.npy", "out.zarr"])
@pytest.mark.parametrize("hide_tqdm", [False, True], ids=["tqdm", "plain"])
def test_convert_shows_progress_on_a_terminal(
    tmp_path: Path, c_b2nd: Path, out: str, hide_tqdm: bool
) -> None:
    if not hide_tqdm:
        pytest.importorskip("tqdm")
    status, shown = _on_a_terminal(["convert", c_b2nd.name, out], tmp_path, hide_tqdm)
    assert status == 0, shown
    assert "convert: " in shown
    if hide_tqdm:
        assert "MiB (100%)" in shown and "%|" not in shown
    else:  # tqdm's bar, drawn at once and then as it goes (at most every 0.1 s)
        assert "%|" in shown and "B/s]" in shown
    status, shown = _on_a_terminal(["convert", "-q", c_b2nd.name, "q" + out], tmp_path, hide_tqdm)
    assert status == 0 and shown == ""


def test_no_progress_when_stderr_is_not_a_terminal(cli, c_b2nd: Path) -> None:
    r = cli("convert", c_b2nd.name, "out.b2nd")
    assert r.returncode == 0 and r.stderr == ""
