"""The documentation runs: every Python code block of the README and of the docs pages
(``docs/**/*.md``), and the doctests without zarr installed.

Each block runs in a fresh interpreter (they set zarr's and numcodecs' global registries), in
a temporary working directory, twice in a row (a second run must overwrite what the first
wrote). ``tests/unit/test_docs_site.py`` builds the site itself.
"""

from __future__ import annotations

import enum
import importlib.util
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pyblosc2
from tests.bounded import run_child
from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(pyblosc2.__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)


#: (where, code) of every Python block: ``README.md#0``, ``docs/chunks.md#1``...
PAGES = [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)]
BLOCKS = [
    (f"{page.relative_to(ROOT)}#{i}", code)
    for page in PAGES
    for i, code in enumerate(_python_blocks(page))
]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(ROOT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_child(
        [sys.executable, *args],
        "run a README command",
        cwd=cwd,
        env=_env(**env),
        capture_output=True,
        text=True,
    )


BASH = re.findall(r"```bash\n(.*?)```", README, re.S)


def test_readme_and_every_page_have_blocks_to_run() -> None:
    where = {w.split("#")[0] for w, _ in BLOCKS}
    assert "README.md" in where and len(where) >= 10, sorted(where)


def test_readme_fits_on_two_screens() -> None:
    """The README says what pyblosc2 is and links into the docs, which hold the rest."""
    assert len(README.splitlines()) <= 200


def test_readme_starts_with_what_it_is_and_how_to_install_it() -> None:
    """The package page opens with what pyblosc2 is and ``pip install pyblosc2`` (in the text:
    the first code block is exactly the two commands that work on a fresh machine, before the
    package is on PyPI too): the main example and the test suite."""
    first = README.split("```", 1)[0]
    assert "pure Python" in first and "Blosc2" in first
    assert "`pip install pyblosc2`" in " ".join(first.split())
    assert README.index("```bash") < README.index("```python")
    example, tests = BASH[0].strip().splitlines()
    assert example.endswith("&& python examples/quickstart.py")
    assert "-r requirements-test.txt" in tests and tests.endswith("python -m pytest -q -n 2")


def test_ci_runs_the_readme_test_command_verbatim_and_the_floors() -> None:
    tests = BASH[0].strip().splitlines()[1]
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in run
    assert "bash tools/floors.sh" in run[run.index(tests) + 1 :]


def test_the_docs_give_the_readme_commands() -> None:
    """Getting started repeats the two commands of the README, verbatim."""
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    assert BASH[0].strip() in page


@pytest.mark.parametrize(("where", "block"), BLOCKS, ids=[w for w, _ in BLOCKS])
def test_python_block_runs(where: str, block: str, tmp_path: Path) -> None:
    imported = set(re.findall(r"^(?:import|from) (\w+)", block, re.M))
    missing = sorted(m for m in imported if importlib.util.find_spec(m) is None)
    if missing:  # an optional extra (zarr, fsspec, dask, ...)
        if IN_CI:
            pytest.fail(f"{missing} are required in CI to run the docs' examples ({where})")
        pytest.skip(f"{missing} not installed")
    script = tmp_path / "block.py"
    script.write_text(block)
    for attempt in range(2):
        done = _run([str(script)], tmp_path)
        assert done.returncode == 0, f"{where}, run {attempt + 1}:\n{done.stderr}"


def _hidden_zarr(tmp_path: Path) -> Path:
    """A directory whose ``zarr`` package fails to import, as if zarr were not installed."""
    fake = tmp_path / "hide" / "zarr"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("zarr hidden by test_docs")\n')
    return fake.parent


@pytest.mark.parametrize(("ci", "collects"), [("", True), ("true", False)])
def test_doctests_collect_without_zarr(tmp_path: Path, ci: str, collects: bool) -> None:
    """Without zarr the zarr codec's doctests are not collected (a collection error in CI)."""
    hide = _hidden_zarr(tmp_path)
    done = run_child(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:zarr",  # zarr's own pytest plugin (entry point) is absent without zarr
            "src/pyblosc2/compat",
        ],
        "collect the compat doctests without zarr",
        cwd=ROOT,
        env=_env(CI=ci, PYTHONPATH=os.pathsep.join([str(hide), str(SRC), str(ROOT)])),
        capture_output=True,
        text=True,
    )
    if collects:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "passed" in done.stdout and "error" not in done.stdout.lower()
    else:
        assert done.returncode != 0 and "zarr hidden by test_docs" in done.stdout


# -- runnable examples on the public API -------------------------------------------------------

#: Public names whose docstring example lives in a module another branch is editing
#: (schunk.py); strict xfail, so pasting the example turns this into a reminder to drop them.
PENDING_EXAMPLES: set[str] = set()


def _public_callables() -> list[str]:
    names = []
    for name in pyblosc2.__all__:
        obj = getattr(pyblosc2, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException | enum.Enum):
            continue  # exceptions and enums document themselves
        if inspect.isfunction(obj) or inspect.isclass(obj):
            names.append(name)
    return names


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="example pending in schunk.py"))
        if n in PENDING_EXAMPLES
        else n
        for n in _public_callables()
    ],
)
def test_public_callable_has_a_runnable_example(name: str) -> None:
    """Each has a ``>>>`` example, which --doctest-modules runs."""
    assert ">>>" in (inspect.getdoc(getattr(pyblosc2, name)) or "")


@pytest.mark.parametrize(
    "name",
    sorted(
        {
            n
            for cls in pyblosc2.NDArray.__mro__[:-1]  # its bases: core, members, operators
            for n, v in vars(cls).items()
            if not n.startswith("_") and (isinstance(v, property) or inspect.isfunction(v))
        }
    ),
)
def test_ndarray_members_are_documented(name: str) -> None:
    assert inspect.getdoc(getattr(pyblosc2.NDArray, name))
