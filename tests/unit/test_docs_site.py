"""The docs site builds, offline, with warnings as errors; its API reference holds every public
name with a docstring; its performance page shows plots made from the JSON it names.

The site is built once per run (``python -m sphinx -W -b html docs OUT`` in a subprocess; the
xdist workers share one build through a lock file) and the tests read the output.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import struct
import sys
import types
from pathlib import Path

import pytest

import pyblosc2
from tests.bounded import HEAVY_CHILD_S, HEAVY_S, run_child
from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SRC = Path(pyblosc2.__file__).resolve().parents[1]
PERF = DOCS / "performance"


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        if IN_CI:
            pytest.fail(f"{module} is required in CI (the [docs] extra installs it)")
        pytest.skip(f"{module} is not installed (the [docs] extra installs it)")


def _api() -> types.ModuleType:
    _need("sphinx")
    return _load("pyblosc2_api", DOCS / "_ext" / "pyblosc2_api.py")


def _plot() -> types.ModuleType:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return _load("pyblosc2_bench_plot", ROOT / "benchmarks" / "plot.py")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The built site (its html directory); one build shared by the xdist workers."""
    for module in ("sphinx", "myst_parser", "numpydoc", "pydata_sphinx_theme"):
        _need(module)
    base = tmp_path_factory.getbasetemp()
    worker = hasattr(request.config, "workerinput")  # an xdist worker: share the run's dir
    root = base.parent if worker else base
    out = root / "docs-site"
    with open(root / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = out / "result.json"
        if not done.exists():
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
            build = run_child(
                [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                 "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
                "build the docs site (sphinx -W)", HEAVY_CHILD_S,
                capture_output=True, text=True, env=env,
            )  # fmt: skip
            out.mkdir(exist_ok=True)
            done.write_text(json.dumps({"rc": build.returncode, "log": build.stderr}))
    result = json.loads(done.read_text())
    assert result["rc"] == 0, f"sphinx-build -W failed:\n{result['log']}"
    return out / "html"


@pytest.mark.timeout(HEAVY_S)  # the first to ask builds the site: minutes of CPU when loaded
def test_the_site_builds_with_warnings_as_errors(site: Path) -> None:
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    for page in ("index.html", "getting-started.html", "api/functions.html", "performance.html"):
        assert page in pages


# -- the API reference --------------------------------------------------------------------------


def test_every_public_name_and_member_has_a_docstring() -> None:
    missing = _api().undocumented()
    assert missing == [], f"public names without a docstring: {missing}"


def test_a_name_without_a_docstring_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    api = _api()

    def shiny() -> None:
        pass

    class Shiny:
        """Documented, but not its member."""

        def method(self) -> None:
            pass

    Shiny.__module__ = shiny.__module__ = "pyblosc2.shiny"
    monkeypatch.setattr(pyblosc2, "shiny", shiny, raising=False)
    monkeypatch.setattr(pyblosc2, "Shiny", Shiny, raising=False)
    monkeypatch.setattr(pyblosc2, "__all__", [*pyblosc2.__all__, "shiny", "Shiny"])
    assert {"shiny", "Shiny.method"} <= set(api.undocumented())
    assert {"pyblosc2.shiny", "pyblosc2.Shiny.method"} <= api.expected_targets()
    assert ".. autofunction:: pyblosc2.shiny" in api.rst("functions")
    assert ":members: method" in "\n".join(api.rst("classes"))


def _inventory(site: Path) -> set[str]:
    from sphinx.util.inventory import InventoryFile

    inv = InventoryFile.loads((site / "objects.inv").read_bytes(), uri="")
    data = inv.data if hasattr(inv, "data") else inv
    return {name for kind, objs in data.items() if kind.startswith("py:") for name in objs}


@pytest.mark.timeout(HEAVY_S)  # the first to ask builds the site: minutes of CPU when loaded
def test_every_public_name_and_member_is_in_the_reference(site: Path) -> None:
    documented = _inventory(site)
    missing = sorted(_api().expected_targets() - documented)
    assert missing == [], f"public names missing from the API reference: {missing}"


@pytest.mark.timeout(HEAVY_S)  # the first to ask builds the site: minutes of CPU when loaded
def test_builtin_annotations_do_not_link_to_the_schema_specs(site: Path) -> None:
    """``bytes`` in a signature is the builtin, not ``pyblosc2.bytes`` (a schema spec)."""
    html = (site / "api" / "classes.html").read_text()
    start = html.index('id="pyblosc2.Batch.lazybatch"')
    signature = html[start : html.index("</dt>", start)]
    assert "bytes" in signature and 'href="#pyblosc2.bytes"' not in signature


# -- the performance page -----------------------------------------------------------------------


def _png_text(path: Path) -> dict[str, str]:
    """The tEXt chunks of a PNG file."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    out, pos = {}, 8
    while pos < len(data):
        (length,) = struct.unpack_from(">I", data, pos)
        kind = data[pos + 4 : pos + 8]
        if kind == b"tEXt":
            key, _, value = data[pos + 8 : pos + 8 + length].partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        pos += 12 + length
    return out


@pytest.mark.timeout(HEAVY_S)  # the first to ask builds the site: minutes of CPU when loaded
def test_the_performance_page_shows_the_plots_of_the_json_it_names(site: Path) -> None:
    plot = _plot()
    page = (DOCS / "performance.md").read_text()
    html = (site / "performance.html").read_text()
    jsons = sorted(PERF.glob("bench_*.json"))
    assert {"bench_reads.json"} < {p.name for p in jsons}
    for path in jsons:  # the page names each run it shows (in the tables' headings)
        assert f"{path.name}</span></code>: run " in html, path.name
    for png in (plot.READS_PNG, plot.APPEND_PNG):
        assert f"performance/{png}" in page  # the page links it...
        built = re.findall(rf'<img [^>]*src="([^"]*{re.escape(png)})"', html)
        assert built and (site / built[0]).is_file()  # ...and the built page shows it
        sources = json.loads(_png_text(PERF / png)[plot.SOURCES_KEY])
        for name, digest in sources.items():  # drawn from these JSON files, as they are now
            assert name in {p.name for p in jsons}, name
            assert plot.sha256(PERF / name) == digest, f"{png} was drawn from an older {name}"
    reads = json.loads(_png_text(PERF / plot.READS_PNG)[plot.SOURCES_KEY])
    appends = json.loads(_png_text(PERF / plot.APPEND_PNG)[plot.SOURCES_KEY])
    assert list(reads) == ["bench_reads.json"]
    assert sorted(appends) == sorted(p.name for p in jsons if p.name.startswith("bench_append"))


def test_the_performance_tables_are_those_of_the_json() -> None:
    plot = _plot()
    appends = sorted(PERF.glob("bench_append_*.json"))
    expected = plot.figures_markdown(PERF / "bench_reads.json", appends)
    assert (PERF / plot.FIGURES_MD).read_text() == expected, (
        "docs/performance/figures.md is stale: run benchmarks/plot.py (docs/performance.md)"
    )


def test_the_benchmark_json_names_machine_versions_command_and_date() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        results = _load("pyblosc2_bench_results", ROOT / "benchmarks" / "results.py")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for path in sorted(PERF.glob("bench_*.json")):
        run = results.read(path)
        assert run["benchmark"] in path.name and run["command"].startswith("python benchmarks/")
        assert run["machine"]["cores"] and run["versions"]["pyblosc2"] and run["rows"]
        assert "python-blosc2" in run["versions"] and run["date"][:4].isdigit()
