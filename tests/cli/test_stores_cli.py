"""``pyblosc2 info``/``verify``/``convert`` on stores (.b2z, .b2d, .b2e) written by
python-blosc2 and pyblosc2: a store lists its leaves, verify checks every leaf's frame (and
the embedded store's), convert moves a store between its zip and directory forms."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import pyblosc2


def _store(lib: ModuleType, path: Path) -> None:
    with lib.TreeStore(str(path), mode="w", threshold=500) as t:
        t["/grid/x"] = np.arange(10_000, dtype=np.int64)
        t["/small"] = np.arange(3, dtype=np.int16)
        t["/s"] = lib.SChunk(data=b"abc" * 1000)
        t.vlmeta["who"] = "me"


@pytest.mark.parametrize("writer", ["pyblosc2", "blosc2"])
@pytest.mark.parametrize("form", ["b2z", "b2d"])
def test_info_lists_the_leaves(
    cli, tmp_path: Path, cblosc2: ModuleType, writer: str, form: str
) -> None:
    lib = pyblosc2 if writer == "pyblosc2" else cblosc2
    _store(lib, tmp_path / f"t.{form}")
    r = cli("info", "--json", f"t.{form}")
    assert r.returncode == 0, r.stderr
    [d] = json.loads(r.stdout)
    assert (d["store"], d["format"], d["entries"]) == ("TreeStore", form, 4)
    assert d["vlmeta"] == {"who": "me"}
    rows = {row["key"]: row for row in d["leaves"]}
    assert set(rows) == {"/__vlmeta__", "/grid/x", "/small", "/s"}
    assert rows["/grid/x"]["where"] == "external" and rows["/small"]["where"] == "embedded"
    assert rows["/grid/x"]["shape"] == [10_000] and rows["/grid/x"]["nbytes"] == 80_000
    assert rows["/s"]["kind"] == "SChunk" and rows["/s"]["nbytes"] == 3000
    if form == "b2z":  # the member's window in the archive, for byte-range readers
        raw = (tmp_path / "t.b2z").read_bytes()
        offset = rows["/grid/x"]["offset"]
        assert raw[offset + 2 : offset + 9] == b"b2frame"
    text = cli("info", f"t.{form}").stdout
    assert "kind    : TreeStore" in text
    assert any(line.split()[:3] == ["/grid/x", "external", "NDArray"] for line in text.splitlines())


def test_info_of_an_embed_store_and_a_container_leaf(
    cli, tmp_path: Path, cblosc2: ModuleType
) -> None:
    e = pyblosc2.EmbedStore(str(tmp_path / "e.b2e"), mode="w")
    e["/a"] = np.arange(5)
    oarr = cblosc2.ObjectArray()
    oarr.extend([{"a": 1}, "x"])
    with cblosc2.DictStore(str(tmp_path / "d.b2d"), mode="w") as d:
        d["/obj"] = oarr
    r = cli("info", "--json", "e.b2e", "d.b2d")
    assert r.returncode == 0, r.stderr
    e_info, d_info = json.loads(r.stdout)
    assert e_info["store"] == "EmbedStore" and e_info["leaves"][0]["where"] == "embedded"
    assert d_info["leaves"][0]["kind"] == "ObjectArray"  # named, and its frame described


@pytest.mark.parametrize("form", ["b2z", "b2d"])
def test_verify_every_leaf(cli, tmp_path: Path, cblosc2: ModuleType, form: str) -> None:
    _store(cblosc2, tmp_path / f"t.{form}")
    r = cli("verify", f"t.{form}")
    assert r.returncode == 0, r.stderr + r.stdout
    lines = r.stdout.splitlines()
    assert lines[0] == f"t.{form}: OK (5 frames checked)"
    assert {ln.split(":")[0].strip() for ln in lines[1:] if not ln.startswith("    ")} >= {
        "(embed.b2e)",
        "/grid/x",
        "/small",
        "/s",
        "/__vlmeta__",
    }


def test_verify_finds_a_damaged_member(cli, tmp_path: Path) -> None:
    path = tmp_path / "t.b2z"
    _store(pyblosc2, path)
    offset, _nbytes = pyblosc2.open(str(path)).member_window("/grid/x")
    raw = bytearray(path.read_bytes())
    frame = pyblosc2.blosc2_ext.open(str(path), "r", offset)
    chunk_at = offset + frame.schunk.header.header_len + int(frame.schunk.chunk_offsets[0])
    raw[chunk_at + 4 : chunk_at + 6] = b"\xff\xff"  # the chunk's nbytes
    path.write_bytes(bytes(raw))
    r = cli("verify", "t.b2z")
    assert r.returncode == 1
    assert "t.b2z: DAMAGED" in r.stdout
    assert any(ln.strip().startswith("/grid/x: DAMAGED") for ln in r.stdout.splitlines())


def test_verify_of_a_cut_archive_is_unreadable(cli, tmp_path: Path) -> None:
    path = tmp_path / "t.b2z"
    _store(pyblosc2, path)
    path.write_bytes(path.read_bytes()[:-40])
    r = cli("verify", "t.b2z")
    assert r.returncode == 2
    assert r.stderr.startswith("pyblosc2: error: t.b2z: zip archive")


def test_convert_between_forms(cli, tmp_path: Path, cblosc2: ModuleType) -> None:
    _store(cblosc2, tmp_path / "t.b2z")
    assert cli("convert", "t.b2z", "out.b2d").returncode == 0
    assert cli("convert", "out.b2d", "back.b2z").returncode == 0
    with cblosc2.TreeStore(str(tmp_path / "back.b2z"), mode="r") as t:
        assert set(t.keys()) == {"/grid", "/grid/x", "/small", "/s"}
        assert t.vlmeta["who"] == "me"
        np.testing.assert_array_equal(t["/grid/x"][:], np.arange(10_000))
    r = cli("convert", "t.b2z", "out.b2d")
    assert r.returncode == 2 and "already exists" in r.stderr
    r = cli("convert", "t.b2z", "x.npy")
    assert r.returncode == 2 and ".b2z archive or a .b2d directory" in r.stderr
    r = cli("convert", "t.b2z", "y.b2z", "--codec", "lz4")
    assert r.returncode == 2 and "--codec does not apply" in r.stderr
