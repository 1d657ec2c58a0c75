"""Help texts, the console script and ``python -m pyblosc2``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pyblosc2.cli.main import EXAMPLES, main
from tests.bounded import run_child
from tests.cli.conftest import IN_CI


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_help_of_each_command_has_examples(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert f"pyblosc2 {command} " in out


def test_top_level_help_lists_every_command(cli) -> None:
    r = cli("--help")
    assert r.returncode == 0
    for command in EXAMPLES:
        assert f"pyblosc2 {command} " in r.stdout


def test_console_script(tmp_path: Path, c_b2frame: Path) -> None:
    exe = shutil.which("pyblosc2")
    if exe is None:
        if IN_CI:
            pytest.fail("the pyblosc2 console script is not installed")
        pytest.skip("pyblosc2 console script not on PATH (pip install -e . creates it)")
    proc = run_child(
        [exe, "verify", str(c_b2frame)],
        "the console script's verify",
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"{c_b2frame}: OK (4 chunks decoded)"


def test_no_progress_bar_when_not_on_a_terminal(cli, c_b2nd: Path) -> None:
    r = cli("verify", c_b2nd.name)
    assert r.returncode == 0 and r.stderr == ""


def test_the_declared_entry_point_is_main() -> None:
    from importlib import import_module

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    meta = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    module, _, func = meta["project"]["scripts"]["pyblosc2"].partition(":")
    assert getattr(import_module(module), func) is main
