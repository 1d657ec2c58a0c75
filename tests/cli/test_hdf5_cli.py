"""``pyblosc2 convert file.h5:/dataset out.b2nd``: HDF5 datasets (written by hdf5plugin, read
without it) converted to b2nd with their chunk shape; errors name the input."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import pyblosc2
from tests.bounded import run_child
from tests.cli.conftest import run_cli
from tests.conftest import _reference

h5py = pytest.importorskip("h5py")


@pytest.mark.parametrize("filt", ["Blosc", "Blosc2"])
def test_convert_hdf5_dataset_to_b2nd(tmp_path, filt) -> None:
    hdf5plugin = _reference("hdf5plugin")
    a = np.arange(60 * 70, dtype="i4").reshape(60, 70)
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f.create_dataset("g/v", data=a, chunks=(25, 30), **getattr(hdf5plugin, filt)())
    done = run_cli("convert", "d.h5:/g/v", "out.b2nd", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = pyblosc2.open(str(tmp_path / "out.b2nd"))
    assert out.chunks == (25, 30)
    np.testing.assert_array_equal(out[...], a)


def test_convert_missing_dataset_names_the_input(tmp_path) -> None:
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f["x"] = np.arange(3)
    done = run_cli("convert", "d.h5:/nope", "out.b2nd", cwd=tmp_path)
    assert done.returncode == 2 and "d.h5:/nope" in done.stderr
    assert not (tmp_path / "out.b2nd").exists()


# -- info and verify -----------------------------------------------------------------------------
A = np.arange(60 * 70, dtype="f8").reshape(60, 70)


@pytest.fixture
def h5_mixed(tmp_path):
    """Datasets of every kind ``info`` tells apart: pyblosc2's Blosc2 (b2nd, explicit block
    size), hdf5plugin's Blosc (lz4, bitshuffle), Blosc2 with Fletcher-32, gzip (HDF5's own),
    contiguous, and a pipeline that needs a plugin nobody has."""
    hdf5plugin = _reference("hdf5plugin")
    from pyblosc2 import hdf5

    path = tmp_path / "m.h5"
    with h5py.File(path, "w") as f:
        hdf5.create_dataset(f, "g/b2", data=A, chunks=(25, 30), codec="zstd", blocksize=1200)
        f["g/b2"].attrs["units"] = "K"
        f.create_dataset(
            "b1",
            data=A,
            chunks=(32, 32),
            **hdf5plugin.Blosc(cname="lz4", clevel=9, shuffle=hdf5plugin.Blosc.BITSHUFFLE),
        )
        f.create_dataset("fl", data=A, chunks=(30, 70), fletcher32=True, **hdf5plugin.Blosc2())
        f.create_dataset("gz", data=A, chunks=(32, 32), compression="gzip")
        f.create_dataset("plain", data=np.arange(10))
    return path


def _by_name(rows: list[dict]) -> dict[str, dict]:
    return {r["name"]: r for r in rows}


def test_info_lists_every_dataset_and_its_filter(h5_mixed) -> None:
    done = run_cli("info", "--json", "m.h5", cwd=h5_mixed.parent)
    assert done.returncode == 0, done.stderr
    (got,) = json.loads(done.stdout)
    assert got["kind"] == "HDF5 file"
    rows = _by_name(got["datasets"])
    assert sorted(rows) == ["/b1", "/fl", "/g/b2", "/gz", "/plain"]
    b2 = rows["/g/b2"]
    assert (b2["filter"], b2["codec"], b2["clevel"], b2["shuffle"]) == (
        "Blosc2 (32026)",
        "zstd",
        5,
        "shuffle",
    )
    assert (b2["typesize"], b2["blocksize"], b2["b2nd"], b2["blocks"]) == (8, 1200, True, [8, 16])
    assert b2["attrs"] == {"units": "K"} and b2["chunks"] == [25, 30]
    b1 = rows["/b1"]
    assert (b1["filter"], b1["codec"], b1["clevel"], b1["shuffle"]) == (
        "Blosc (32001)",
        "lz4",
        9,
        "bitshuffle",
    )
    assert rows["/fl"]["fletcher32"] is True and rows["/fl"]["pipeline"].endswith("(3)]")
    assert rows["/gz"]["filter"] == "HDF5's own pipeline" and rows["/plain"]["filter"] == "none"
    with h5py.File(h5_mixed) as f:
        sizes = [f["g/b2"].id.get_chunk_info(i).size for i in range(f["g/b2"].id.get_num_chunks())]
    assert (b2["stored_chunks"], b2["grid_chunks"], b2["storage_bytes"]) == (9, 9, sum(sizes))
    assert b2["ratio"] == pytest.approx(9 * 25 * 30 * 8 / sum(sizes), rel=1e-3)


def test_info_of_one_dataset_and_as_text(h5_mixed) -> None:
    done = run_cli("info", "m.h5:/g/b2", "m.h5", cwd=h5_mixed.parent)
    assert done.returncode == 0, done.stderr
    one, table = done.stdout.split("m.h5:\n")
    assert "kind           : HDF5 dataset" in one and "blocks         : (8, 16)" in one
    assert "cd_values      : (1, 1200, 8, 6000, 5, 1, 5, 2, 25, 30)" in one
    rows = {line.split()[0]: line.split() for line in table.splitlines()[2:]}
    assert rows["/b1"][:7] == ["/b1", "(60,", "70)", "float64", "(32,", "32)", "Blosc"]
    assert rows["/plain"][:4] == ["/plain", "(10,)", "int64", "-"]


def test_info_names_a_pipeline_that_needs_a_plugin(tmp_path) -> None:
    with h5py.File(tmp_path / "u.h5", "w") as f:
        f.create_dataset(
            "z", shape=(10,), dtype="i4", chunks=(5,), compression=32999, allow_unknown_filter=True
        )
    done = run_cli("info", "--json", "u.h5:/z", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "not readable without plugins" in json.loads(done.stdout)[0]["filter"]
    done = run_cli("verify", "u.h5", cwd=tmp_path)
    assert done.returncode == 2 and "/z: NOT CHECKED" in done.stdout


def test_verify_intact_file(h5_mixed) -> None:
    done = run_cli("verify", "m.h5", cwd=h5_mixed.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "m.h5: OK (5 datasets checked)" in done.stdout
    assert "/fl: OK (2 chunks decoded, Fletcher-32 checked)" in done.stdout
    assert "/g/b2: OK (9 chunks decoded)" in done.stdout


def _flip(path, name, offsets, at) -> None:
    with h5py.File(path, "r") as f:
        address = f[name].id.get_chunk_info_by_coord(offsets).byte_offset
    with open(path, "r+b") as fh:
        fh.seek(address + at)
        b = fh.read(4)
        fh.seek(address + at)
        fh.write(bytes(x ^ 0xFF for x in b))


@pytest.mark.parametrize(
    ("name", "offsets", "at", "index", "why"),
    [
        ("g/b2", (25, 30), 120, "(1, 1)", "HDF5 /g/b2 chunk (1, 1)"),
        ("fl", (30, 0), 100, "(1, 0)", "fletcher32 checksum"),
        ("b1", (32, 0), 20, "(1, 0)", "HDF5 /b1 chunk (1, 0)"),
        ("gz", (0, 32), 30, "(0, 1)", "filter returned failure"),
    ],
    ids=["blosc2", "fletcher32", "blosc", "gzip"],
)
def test_verify_names_damaged_chunks(h5_mixed, name, offsets, at, index, why) -> None:
    _flip(h5_mixed, name, offsets, at)
    done = run_cli("verify", f"m.h5:/{name}", "m.h5", cwd=h5_mixed.parent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"m.h5:/{name}: DAMAGED (1 dataset checked)" in done.stdout
    assert f"/{name}: DAMAGED (1 of " in done.stdout
    line = next(x for x in done.stdout.splitlines() if f"chunk {index}:" in x)
    assert why in line
    assert "/plain: OK" in done.stdout  # the other datasets are checked all the same


def test_verify_truncated_and_unreadable_files(h5_mixed) -> None:
    data = h5_mixed.read_bytes()
    (h5_mixed.parent / "t.h5").write_bytes(data[: len(data) // 2])
    (h5_mixed.parent / "n.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\x00" * 100)
    done = run_cli("verify", "t.h5", cwd=h5_mixed.parent)
    assert done.returncode == 1 and "t.h5: DAMAGED (" in done.stdout and "truncated" in done.stdout
    done = run_cli("verify", "n.h5", "m.h5", cwd=h5_mixed.parent)
    assert done.returncode == 2 and "pyblosc2: error: n.h5:" in done.stderr
    assert "m.h5: OK" in done.stdout
    done = run_cli("info", "m.h5:/nothing", cwd=h5_mixed.parent)
    assert done.returncode == 2 and "m.h5:/nothing" in done.stderr


def test_without_h5py_an_hdf5_file_is_named(h5_mixed) -> None:
    code = (
        "import sys; sys.modules['h5py'] = None\n"
        "from pyblosc2.cli import main\n"
        "sys.exit(main(['info', 'm.h5']))\n"
    )
    done = run_child(
        [sys.executable, "-c", code],
        "info on an HDF5 file without h5py",
        capture_output=True,
        text=True,
        cwd=h5_mixed.parent,
    )
    assert done.returncode == 2 and "needs h5py (pyblosc2[hdf5])" in done.stderr
