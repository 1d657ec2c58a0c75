"""``pyblosc2 info/verify/convert`` on xarray-blosc2 stores: ``.b2`` directories and ``.b2z``
zips (written by pyblosc2 and by xarray-blosc2), told apart from python-blosc2's DictStore and
TreeStore ``.b2z`` by their content; ``STORE:NAME`` for one variable."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile

import numpy as np
import pytest

import pyblosc2
from tests.bounded import run_child
from tests.cli.conftest import run_cli
from tests.conftest import _reference

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

T = np.arange(24.0).reshape(4, 6)


def _dataset():
    return xr.Dataset(
        {"t": (("time", "x"), T, {"units": "K", "long_name": "temp"}), "n": ("x", np.arange(6))},
        coords={
            "time": pd.date_range("2024-01-01", periods=4),
            "x": np.arange(6) * 10,
            "site": ("x", list("abcdef")),
        },
        attrs={"title": "demo"},
    )


@pytest.fixture
def ours(tmp_path):
    from pyblosc2.xarray import to_blosc2

    return to_blosc2(_dataset(), tmp_path / "w.b2", encoding={"t": {"chunks": (2, 6)}})


@pytest.fixture
def theirs_zip(tmp_path):
    xb = _reference("xarray_blosc2")
    return xb.save_dataset(_dataset(), tmp_path / "z.b2", freeze=True)


def _info(path, *names):
    done = run_cli("info", "--json", *names, cwd=path.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_info_of_a_directory_store(ours) -> None:
    (got,) = _info(ours, ours.name)
    assert got["kind"] == "xarray-blosc2 store (directory)"
    assert got["dims"] == {"x": 6, "time": 4} or got["dims"] == {"time": 4, "x": 6}
    assert sorted(got["coords"]) == ["site", "time", "x"] and sorted(got["data_vars"]) == ["n", "t"]
    assert got["attrs"] == {"title": "demo"}
    rows = {r["name"]: r for r in got["variables"]}
    t = rows["t"]
    assert (t["role"], t["dims"], t["shape"], t["dtype"], t["chunks"]) == (
        "data",
        ["time", "x"],
        [4, 6],
        "float64",
        [2, 6],
    )
    assert t["attrs"] == {"units": "K", "long_name": "temp"} and t["codec"] == "zstd"
    assert (rows["site"]["role"], rows["site"]["dtype"]) == ("coord", "str (labels)")
    assert rows["time"]["dtype"].startswith("datetime64")


def test_info_of_their_zip_and_of_one_variable(theirs_zip) -> None:
    assert zipfile.is_zipfile(theirs_zip) and theirs_zip.suffix == ".b2z"
    store, one = _info(theirs_zip, theirs_zip.name, f"{theirs_zip.name}:t")
    assert store["kind"] == "xarray-blosc2 store (zip archive)"
    assert {r["name"] for r in store["variables"]} == {"t", "n", "time", "x", "site"}
    assert one["kind"] == "xarray-blosc2 variable" and one["dims"] == ["time", "x"]
    assert one["array"]["shape"] == [4, 6] and one["array"]["vlmeta"]["var"] == "t"
    done = run_cli("info", f"{theirs_zip.name}:t", cwd=theirs_zip.parent)
    assert "array (t.b2nd):" in done.stdout and "    codec         : zstd" in done.stdout


@pytest.mark.parametrize("cls", ["DictStore", "TreeStore"])
def test_python_blosc2_stores_in_b2z_stay_stores(tmp_path, cls) -> None:
    with getattr(pyblosc2, cls)(str(tmp_path / "s.b2z"), mode="w") as s:
        s["/g/a"] = np.arange(10)
        s["/g/b"] = np.arange(50_000.0)
    (got,) = _info(tmp_path / "s.b2z", "s.b2z")
    assert got["store"] == cls and {leaf["key"] for leaf in got["leaves"]} >= {"/g/a", "/g/b"}
    done = run_cli("verify", "s.b2z", cwd=tmp_path)
    assert done.returncode == 0 and "frames checked" in done.stdout


def test_a_zip_of_arrays_without_manifest_is_told_by_their_vlmeta(ours, tmp_path) -> None:
    bare = tmp_path / "bare.zip"
    with zipfile.ZipFile(bare, "w", zipfile.ZIP_STORED) as zf:
        for p in sorted(ours.glob("*.b2nd")):
            zf.write(p, p.name)
    (got,) = _info(bare, "bare.zip")
    assert got["kind"] == "xarray-blosc2 store (zip archive)" and got["attrs"] == {}
    plain = tmp_path / "plain.zip"  # .b2nd arrays without xarray's vlmeta: not a store
    pyblosc2.asarray(np.arange(5), urlpath=str(tmp_path / "a.b2nd"), mode="w")
    with zipfile.ZipFile(plain, "w", zipfile.ZIP_STORED) as zf:
        zf.write(tmp_path / "a.b2nd", "a.b2nd")
    done = run_cli("info", "plain.zip", cwd=tmp_path)
    assert done.returncode == 2 and "xarray" not in done.stdout


def test_verify_intact_and_damaged_stores(ours, theirs_zip) -> None:
    done = run_cli("verify", str(ours), str(theirs_zip), cwd=ours.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{ours}: OK (5 arrays checked)" in done.stdout
    assert "  t.b2nd: OK (2 chunks decoded)" in done.stdout
    data = bytearray((ours / "t.b2nd").read_bytes())
    s = pyblosc2.open(str(ours / "t.b2nd")).schunk
    at = s.header.header_len + int(s.chunk_offsets[1]) + 40  # inside chunk 1's streams
    data[at : at + 8] = b"\xff" * 8
    (ours / "t.b2nd").write_bytes(bytes(data))
    (ours / "dataset.json").write_text("{not json")
    done = run_cli("verify", str(ours), cwd=ours.parent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "dataset.json: DAMAGED" in done.stdout
    assert "t.b2nd: DAMAGED (1 of 2 chunks damaged" in done.stdout
    assert "n.b2nd: OK" in done.stdout
    done = run_cli("verify", f"{ours}:n", cwd=ours.parent)
    assert done.returncode == 0 and "(1 array checked)" in done.stdout


def test_verify_a_member_that_cannot_be_opened(ours) -> None:
    (ours / "n.b2nd").write_bytes(b"garbage" * 20)
    done = run_cli("verify", ours.name, cwd=ours.parent)
    assert done.returncode == 1 and "n.b2nd: DAMAGED (cannot be opened" in done.stdout


def test_convert_a_variable(ours, theirs_zip) -> None:
    for src, where in ((f"{ours.name}:t", ours.parent), (f"{theirs_zip.name}:t", ours.parent)):
        done = run_cli("convert", src, "out.b2nd", cwd=where)
        assert done.returncode == 0, done.stderr
        out = pyblosc2.open(str(where / "out.b2nd"))
        np.testing.assert_array_equal(out[...], T)
        assert out.vlmeta["dims"] == ["time", "x"]  # still an xarray-blosc2 variable
        (where / "out.b2nd").unlink()
    done = run_cli("convert", f"{ours.name}:site", "site.b2nd", cwd=ours.parent)
    assert done.returncode == 0, done.stderr
    assert pyblosc2.open(str(ours.parent / "site.b2nd"))[...].tolist() == list("abcdef")
    done = run_cli("convert", f"{ours.name}:nope", "x.b2nd", cwd=ours.parent)
    assert done.returncode == 2 and "no variable 'nope'" in done.stderr
    assert not (ours.parent / "x.b2nd").exists()


def test_a_copied_store_keeps_its_kind(ours, tmp_path) -> None:
    copy = tmp_path / "copy.b2d"  # a DictStore's suffix, an xarray-blosc2 store's content
    shutil.copytree(ours, copy)
    (got,) = _info(copy, "copy.b2d")
    assert got["kind"] == "xarray-blosc2 store (directory)"


def test_stores_are_described_without_xarray(ours) -> None:
    """The layout is read with pyblosc2 alone: xarray is not imported (here: cannot be)."""
    code = (
        "import sys; sys.modules['xarray'] = None\n"
        "from pyblosc2.cli import main\n"
        f"status = main(['info', {str(ours)!r}]) + main(['verify', {str(ours)!r}])\n"
        "assert 'xarray' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
        "sys.exit(status)\n"
    )
    done = run_child(
        [sys.executable, "-c", code], "info on an xarray store", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "xarray-blosc2 store (directory)" in done.stdout and "(5 arrays checked)" in done.stdout
