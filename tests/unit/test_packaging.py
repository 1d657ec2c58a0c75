"""The package as an index or a distribution takes it: ``python -m build`` (offline, no
isolation) gives an sdist and a wheel built from it, without a warning; both carry LICENSE and
full metadata; ``twine check --strict`` passes; the sdist carries every tracked file of the
tests, docs, examples, benchmarks and tools; the wheel, installed alone, runs tests from the
sdist. (``tools/release_check.sh`` runs the whole suite on such a wheel.)
"""

from __future__ import annotations

import email
import os
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.bounded import HEAVY_CHILD_S, HEAVY_S, run_child
from tests.conftest import _reference

# building the sdist and the wheel, and running tests in a child: minutes on a loaded machine
pytestmark = pytest.mark.timeout(HEAVY_S)
ROOT = Path(__file__).resolve().parents[2]
SHIPPED_DIRS = ("tests", "docs", "examples", "benchmarks", "tools")
NAME = "pyblosc2"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(sdist, wheel, build output): the wheel is built from the sdist, as ``build`` does."""
    _reference("build")
    _reference("setuptools")
    out = tmp_path_factory.mktemp("dist")
    # a copy of the tracked tree: a build never writes into the checkout (egg-info) and never
    # picks up its caches
    tree = out / "tree"
    files = _tracked()
    if files is None:
        shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".venv*", "dist", "build"))
    else:
        for name in files:
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tree / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = run_child(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out / "d"), str(tree)],
        "build the sdist and the wheel",
        HEAVY_CHILD_S,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (sdist,) = (out / "d").glob("*.tar.gz")
    (wheel,) = (out / "d").glob("*.whl")
    return sdist, wheel, done.stdout + done.stderr


def _tracked() -> list[str] | None:
    """The files git tracks (None outside a git checkout, e.g. in an unpacked sdist)."""
    if shutil.which("git") is None:
        return None
    done = run_child(
        ["git", "ls-files", "-z"],
        "list git's tracked files",
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout:
        return None
    return [f for f in done.stdout.split("\0") if f and (ROOT / f).is_file()]


def test_build_prints_no_warning(dist: tuple[Path, Path, str]) -> None:
    output = dist[2]
    warnings = [ln for ln in output.splitlines() if "warning" in ln.lower()]
    assert warnings == [], "\n".join(warnings)
    assert f"Successfully built {dist[0].name} and {dist[1].name}" in output


def test_sdist_carries_license_changelog_tests_and_docs(dist: tuple[Path, Path, str]) -> None:
    with tarfile.open(dist[0]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for name in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "MANIFEST.in"):
        assert name in names
    assert {"requirements-test.txt", ".ci/run", "tools/floors.sh", "conftest.py"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    tracked = _tracked()
    if tracked is None:
        pytest.skip("not a git checkout: the tracked files are unknown")
    wanted = {f for f in tracked if f.split("/", 1)[0] in SHIPPED_DIRS}
    assert wanted - names == set()


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(z.read(meta))


def test_wheel_carries_license_and_full_metadata(dist: tuple[Path, Path, str]) -> None:
    wheel = dist[1]
    assert wheel.name.endswith("-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        licence = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert licence and b"BSD 3-Clause License" in z.read(licence[0])
        assert b"Copyright (c) 2026, The pyblosc2 developers" in z.read(licence[0])
        assert f"{NAME}/py.typed" in names
        (eps,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entry_points = z.read(eps).decode()
    assert not [n for n in names if n.startswith("tests/")]
    meta = _metadata(wheel)
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["Author"] and meta["Keywords"] and meta.get_all("Project-URL")
    classifiers = meta.get_all("Classifier")
    for c in ("Typing :: Typed", "Operating System :: OS Independent"):
        assert c in classifiers
    versions = {c.rsplit(" :: ", 1)[1] for c in classifiers if c.count("::") == 2 and "3." in c}
    assert versions == {"3.10", "3.11", "3.12", "3.13", "3.14"}
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    # the test tools and reference libraries are not offered to users as an extra
    extras = set(meta.get_all("Provides-Extra"))
    assert "test" not in extras and {"zarr", "remote", "dask", "cli", "plot", "all"} <= extras
    requires = " ".join(meta.get_all("Requires-Dist"))
    for test_only in ("pytest", "hypothesis", "moto", "blosc2==", "imagecodecs"):
        assert test_only not in requires
    assert "[numcodecs.codecs]\nblosc2 = pyblosc2.compat.numcodecs_blosc2:Blosc2" in entry_points
    assert "numcodecs.blosc2 = pyblosc2.compat.zarr_blosc2:Blosc2Codec" in entry_points


def test_twine_check_is_clean(dist: tuple[Path, Path, str]) -> None:
    _reference("twine")
    done = run_child(
        [sys.executable, "-m", "twine", "check", "--strict", str(dist[0]), str(dist[1])],
        "twine check",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_wheel_alone_runs_tests_from_the_sdist(
    dist: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """The wheel installed in a directory of its own (first on the path, so the checkout is not
    imported) runs the sdist's golden-file, API and example tests."""
    sdist, wheel, _ = dist
    target = tmp_path / "site"
    run_child(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", target, wheel],
        "pip install the wheel into a directory",
        check=True,
        capture_output=True,
    )
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    tree = tmp_path / sdist.name.removesuffix(".tar.gz")
    shutil.rmtree(tree / "src")  # what runs is the wheel's code
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("PYTEST_XDIST_WORKER", None)
    tests = ["tests/unit/test_golden.py", "tests/unit/test_api.py", "tests/unit/test_examples.py"]
    done = run_child(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests],
        "run the sdist's tests against the wheel",
        HEAVY_CHILD_S,
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
    where = run_child(
        [sys.executable, "-c", "import pyblosc2; print(pyblosc2.__file__)"],
        "import pyblosc2 from the wheel",
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(target))
