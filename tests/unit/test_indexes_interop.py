"""NDArray indexes shared with python-blosc2 4.14.1 both ways, with real files: an index one
library writes (vlmeta ``blosc2_indexes`` and the ``.b2nd`` sidecars) the other lists, uses
for its filters with the scan's results, drops and rebuilds; a write by one marks the
other's index stale."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import run_child

KINDS = ["summary", "bucket", "partial", "full", "opsi"]
DT = np.dtype([("id", np.int64), ("x", np.float64)])


def _write(lib: Any, folder: Path, kind: str) -> tuple[str, np.ndarray]:
    s = np.zeros(24_000, dtype=DT)
    s["id"] = np.arange(24_000)
    s["x"] = np.random.default_rng(5).normal(size=24_000)
    path = str(folder / f"s_{kind}.b2nd")
    a = lib.asarray(s, urlpath=path, mode="w", chunks=(4000,), blocks=(1000,))
    a.create_index("id", kind=lib.IndexKind(kind))
    a.create_index(expression="abs(x)", kind=lib.IndexKind(kind))
    del a
    return path, s


def _query(lib: Any, path: str, s: np.ndarray) -> None:
    a = lib.open(path, mode="r")
    assert sorted(i.name for i in a.indexes) == ["abs(x)", "id"]
    e = lib.lazyexpr("(id >= 10_100) & (id < 10_130)", a.fields).where(a)
    assert e.will_use_index()
    np.testing.assert_array_equal(e.compute()[:], s[10_100:10_130])
    e2 = lib.lazyexpr("abs(x) < 0.002", a.fields).where(a)
    np.testing.assert_array_equal(e2.compute()[:], s[np.abs(s["x"]) < 0.002])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", ["pyblosc2", "blosc2"])
def test_an_index_written_by_one_library_is_used_by_the_other(
    tmp_path: Path, cblosc2: Any, writer: str, kind: str
) -> None:
    libs = {"pyblosc2": pb, "blosc2": cblosc2}
    reader = libs["blosc2" if writer == "pyblosc2" else "pyblosc2"]
    path, s = _write(libs[writer], tmp_path, kind)
    _query(reader, path, s)
    _query(libs[writer], path, s)


@pytest.mark.parametrize("kind", KINDS)
def test_both_libraries_name_the_same_sidecar_files(
    tmp_path: Path, cblosc2: Any, kind: str
) -> None:
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    _write(pb, tmp_path / "ours", kind)
    _write(cblosc2, tmp_path / "theirs", kind)

    # OPSI's payload is named by the ordering pass that produced it: python-blosc2 keeps its
    # best of several, we build the ordered end state in one (opsi_cycle0)
    def names(d: Path) -> list[str]:
        return sorted(re.sub(r"opsi_cycle\d+", "opsi_cycleN", n) for n in os.listdir(d))

    assert names(tmp_path / "ours") == names(tmp_path / "theirs")


def _ref(cblosc2: Any, code: str) -> Any:
    """Run ``code`` with python-blosc2 in a process of its own (python-blosc2 caches an
    array's index store per path for the life of a process); returns its JSON output."""
    del cblosc2  # the fixture: skip (or fail in CI) without the reference library
    head = "import json, numpy as np, blosc2\n"
    out = run_child(
        [sys.executable, "-c", head + code],
        "run python-blosc2",
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_write_by_python_blosc2_makes_our_index_stale_and_back(
    tmp_path: Path, cblosc2: Any
) -> None:
    path = str(tmp_path / "w.b2nd")
    a = pb.asarray(np.arange(5000), urlpath=path, mode="w", chunks=(1000,), blocks=(100,))
    a.create_index(kind=pb.IndexKind.FULL)
    del a
    assert _ref(cblosc2, f"b = blosc2.open({path!r}, mode='a'); b[100] = -7; print(1)") == 1
    c = pb.open(path, mode="a")
    assert c.index().stale
    e = ((c >= 99) & (c <= 101)).where(c)
    assert not e.will_use_index()
    np.testing.assert_array_equal(e.compute()[:], [99, 101])
    c.rebuild_index()
    del c
    got = _ref(
        cblosc2,
        f"""d = blosc2.open({path!r})
e = ((d >= -7) & (d <= 101)).where(d)
print(json.dumps([e.will_use_index(), e.compute()[:].tolist()]))""",
    )
    assert got == [True, [*range(100), -7, 101]]  # in the array's order


def test_a_write_by_us_makes_python_blosc2_index_stale(tmp_path: Path, cblosc2: Any) -> None:
    path = str(tmp_path / "w.b2nd")
    _ref(
        cblosc2,
        f"""a = blosc2.asarray(np.arange(5000), urlpath={path!r}, mode="w",
                   chunks=(1000,), blocks=(100,))
a.create_index(kind=blosc2.IndexKind.PARTIAL); print(1)""",
    )
    b = pb.open(path, mode="a")
    assert not b.index().stale
    b[100] = -7
    b.append([7])
    del b
    got = _ref(
        cblosc2,
        f"""d = blosc2.open({path!r}, mode="a")
e = ((d >= 99) & (d <= 101)).where(d)
print(json.dumps([d.index().stale, e.will_use_index(), e.compute()[:].tolist()]))""",
    )
    assert got == [True, False, [99, 101]]


def test_python_blosc2_appends_runs_we_read_and_compact(tmp_path: Path, cblosc2: Any) -> None:
    path = str(tmp_path / "r.b2nd")
    a = cblosc2.asarray(np.arange(3000), urlpath=path, mode="w", chunks=(500,), blocks=(100,))
    a.create_index(kind=cblosc2.IndexKind.FULL)
    a.append(np.arange(5000, 5100))
    del a
    b = pb.open(path, mode="a")
    assert len(b.index()["full"]["runs"]) == 1
    e = ((b >= 2990) & (b < 5010)).where(b)
    assert e.will_use_index()
    np.testing.assert_array_equal(e.compute()[:], np.r_[2990:3000, 5000:5010])
    b.compact_index()
    del b
    got = _ref(
        cblosc2,
        f"""c = blosc2.open({path!r})
e = ((c >= 2990) & (c < 5010)).where(c)
print(json.dumps([c.index()["full"]["runs"], e.will_use_index(), e.compute()[:].tolist()]))""",
    )
    assert got == [[], True, [*range(2990, 3000), *range(5000, 5010)]]
    assert not list(tmp_path.glob("r.__index__.full.full_run.*"))
