"""DictStore (stores/dictstore.py): python-blosc2's threshold rule and file names, both
forms (.b2d, .b2z), members read where they lie, packing and unpacking, and the refusals
that keep a store (and what is around it) intact."""

from __future__ import annotations

import os
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.backends.mmap import MmapStore
from pyblosc2.errors import FormatError, ParamError
from pyblosc2.stores import DictStore
from tests.bounded import run_child

FORMS = ["b2d", "b2z"]


def _files(path: Path) -> list[str]:
    if path.is_dir():
        return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    with zipfile.ZipFile(path) as zf:
        return sorted(zf.namelist())


# value -> (where it goes for threshold 0, 100, None)
def _values(tmp_path: Path) -> dict[str, tuple[object, tuple[str, str, str]]]:
    on_disk = pb.asarray(np.arange(3), urlpath=str(tmp_path / "src.b2nd"), mode="w")
    sc_disk = pb.SChunk(data=b"x" * 10, urlpath=str(tmp_path / "src.b2f"), mode="w")
    return {
        "small": (np.arange(3, dtype=np.int8), ("ext", "emb", "emb")),
        "large": (np.arange(1000), ("ext", "ext", "emb")),
        "small on disk": (on_disk, ("ext", "emb", "ext")),
        "schunk": (pb.SChunk(data=b"y" * 500), ("ext", "ext", "emb")),
        "schunk on disk": (sc_disk, ("ext", "emb", "ext")),
    }


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("tcase", [(0, 0), (100, 1), (None, 2)], ids=["t0", "t100", "tNone"])
def test_threshold_rule(tmp_path: Path, form: str, tcase: tuple[int | None, int]) -> None:
    threshold, col = tcase
    path = tmp_path / f"s.{form}"
    values = _values(tmp_path)
    with DictStore(str(path), mode="w", threshold=threshold) as d:
        for i, (value, _) in enumerate(values.values()):
            d[f"/k{i}"] = value
        where = {k: ("ext" if k in d.map_tree else "emb") for k in set(d.keys())}
    assert [where[f"/k{i}"] for i in range(len(values))] == [w[col] for _, w in values.values()]
    with DictStore(str(path), mode="r") as d:
        for i, (value, _) in enumerate(values.values()):
            got = d[f"/k{i}"]
            if isinstance(value, pb.SChunk):
                assert got[:] == value[:]
            else:
                np.testing.assert_array_equal(got[:], np.asarray(value[:]))


@pytest.mark.parametrize("form", FORMS)
def test_file_names(tmp_path: Path, form: str) -> None:
    path = tmp_path / f"s.{form}"
    with DictStore(str(path), mode="w") as d:
        d["/dir1/node3"] = np.arange(5)
        d["/sc"] = pb.SChunk(data=b"abc")
    assert _files(path) == ["dir1/node3.b2nd", "embed.b2e", "sc.b2f"]
    if form == "b2z":
        with zipfile.ZipFile(path) as zf:
            assert zf.namelist()[-1] == "embed.b2e"
            assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}


@pytest.mark.parametrize("form", FORMS)
def test_overwrite_across_tiers(tmp_path: Path, form: str) -> None:
    path = tmp_path / f"s.{form}"
    with DictStore(str(path), mode="w", threshold=100) as d:
        d["/k"] = np.array([1, 2, 3], dtype=np.int8)  # embedded
        d["/k"] = np.arange(1000)  # external
        assert "/k" in d.map_tree and "/k" not in d.estore
        d["/k"] = np.array([9], dtype=np.int8)  # embedded again
        assert "/k" not in d.map_tree and len(d) == 1
        d["/s"] = pb.SChunk(data=b"z" * 200)  # .b2f
        d["/s"] = pb.asarray(np.arange(100))  # same key, now .b2nd: the .b2f goes
    assert _files(path) == ["embed.b2e", "s.b2nd"]
    with DictStore(str(path), mode="r") as d:
        assert d["/k"][:].tolist() == [9] and sorted(d) == ["/k", "/s"]


@pytest.mark.parametrize("form", FORMS)
def test_delete(tmp_path: Path, form: str) -> None:
    path = tmp_path / f"s.{form}"
    with DictStore(str(path), mode="w", threshold=100) as d:
        d["/e"] = np.arange(1000)
        d["/m"] = np.arange(2, dtype=np.int8)
        del d["/e"], d["/m"]
        with pytest.raises(KeyError, match="not found"):
            del d["/e"]
    assert _files(path) == ["embed.b2e"]
    assert len(DictStore(str(path), mode="r")) == 0


def test_member_window_and_lazy_reads(tmp_path: Path) -> None:
    path = tmp_path / "s.b2z"
    x = np.arange(1_000_000, dtype=np.int64)
    with DictStore(str(path), mode="w", threshold=1000) as d:
        d["/big"] = pb.asarray(x, chunks=(100_000,), blocks=(10_000,))
        d["/small"] = np.arange(3)
    d = DictStore(str(path), mode="r")
    offset, nbytes = d.member_window("/big")
    assert d.member_window("/small") is None and d.member_window("/none") is None
    raw = path.read_bytes()
    np.testing.assert_array_equal(pb.ndarray_from_cframe(raw[offset : offset + nbytes])[:], x)
    big = d["/big"]
    assert big[500_000:500_010].tolist() == list(range(500_000, 500_010))
    assert big.schunk.bytes_read < nbytes // 4  # read where it lies, not extracted
    assert big.schunk.urlpath == str(path)  # python-blosc2 also names the archive
    with pytest.raises(ValueError):
        big[0] = 1  # an archive member is read-only


def test_mmap_members(tmp_path: Path) -> None:
    path = tmp_path / "s.b2z"
    with DictStore(str(path), mode="w") as d:
        d["/a"] = np.arange(100)
    d = DictStore(str(path), mode="r", mmap_mode="r")
    a = d["/a"]
    assert isinstance(a.schunk._frame.store.inner, MmapStore)
    np.testing.assert_array_equal(a[10:20], np.arange(10, 20))


@pytest.mark.parametrize("form", FORMS)
def test_leaves_writable_only_when_opened_for_writing(tmp_path: Path, form: str) -> None:
    path = tmp_path / f"s.{form}"
    with DictStore(str(path), mode="w") as d:
        d["/a"] = np.zeros(10)
    with DictStore(str(path), mode="a") as d:
        d["/a"][2:4] = 7.0  # changes the leaf itself (packed back for a .b2z)
    with DictStore(str(path), mode="r") as d:
        assert d["/a"][:].tolist() == [0, 0, 7, 7, 0, 0, 0, 0, 0, 0]
        with pytest.raises(ValueError):
            d["/a"][0] = 1.0
        with pytest.raises(ValueError, match="read-only"):
            d["/b"] = np.arange(3)


def test_pack_and_unpack(tmp_path: Path) -> None:
    b2d, b2z = tmp_path / "s.b2d", tmp_path / "s.b2z"
    with DictStore(str(b2d), mode="w", threshold=50) as d:
        d["/g/a"] = np.arange(100)
        d["/b"] = np.arange(2, dtype=np.int8)
    with DictStore(str(b2d), mode="r") as d:
        assert d.to_b2z(str(b2z)) == str(b2z)
        with pytest.raises(FileExistsError):
            d.to_b2z(filename=str(b2z))
        with pytest.raises(ParamError, match=r"\.b2z extension"):
            d.to_b2z(filename=str(tmp_path / "x.zip"))
        assert d.to_b2d() == str(b2d)  # itself
    out = tmp_path / "out.b2d"
    with DictStore(str(b2z), mode="r") as z:
        with pytest.raises(ValueError, match="read mode"):
            z.to_b2z(filename=str(tmp_path / "o.b2z"))
        assert z.to_b2d(str(out)) == str(out)
        with pytest.raises(FileExistsError):
            z.to_b2d(str(out))
        z.to_b2d(str(out), overwrite=True)
    assert _files(out) == _files(b2d) == ["embed.b2e", "g/a.b2nd"]
    with DictStore(str(out), mode="r") as d:
        np.testing.assert_array_equal(d["/g/a"][:], np.arange(100))
        assert sorted(d) == ["/b", "/g/a"]


def test_write_mode_refuses_a_directory_that_is_no_store(tmp_path: Path) -> None:
    precious = tmp_path / "precious.b2d"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    with pytest.raises(ParamError, match="holds no store"):
        DictStore(str(precious), mode="w")
    assert (precious / "thesis.txt").read_text() == "years of work"
    with pytest.raises(ParamError, match="holds no store"):
        DictStore(str(tmp_path / "s.b2z"), mode="w", tmpdir=str(precious))
    assert (precious / "thesis.txt").exists()


def test_write_mode_empties_a_store(tmp_path: Path) -> None:
    path = tmp_path / "s.b2d"
    with DictStore(str(path), mode="w") as d:
        d["/old"] = np.arange(3)
    with DictStore(str(path), mode="w") as d:
        d["/new"] = np.arange(3)
    assert sorted(DictStore(str(path), mode="r")) == ["/new"]  # python-blosc2 keeps /old


def test_keys_never_escape_the_store(tmp_path: Path) -> None:
    path = tmp_path / "s.b2d"
    with DictStore(str(path), mode="w") as d:
        for key in ("/../escaped", "/a/../../escaped", "noslash"):
            with pytest.raises(ParamError):
                d[key] = np.arange(3)
    assert not (tmp_path / "escaped.b2nd").exists()


def test_values_from_other_places(tmp_path: Path) -> None:
    src = tmp_path / "src.b2z"
    with DictStore(str(src), mode="w") as d:
        d["/a"] = np.arange(50)
    sparse = pb.asarray(np.arange(40), urlpath=str(tmp_path / "sp.b2nd"), contiguous=False)
    member = DictStore(str(src), mode="r")["/a"]
    path = tmp_path / "dst.b2z"
    with DictStore(str(path), mode="w", threshold=None) as d:
        d["/member"] = member  # its urlpath names an archive: stored from its frame
        d["/sparse"] = sparse  # a directory: stored as one frame file
    with DictStore(str(path), mode="r") as d:
        np.testing.assert_array_equal(d["/member"][:], np.arange(50))
        np.testing.assert_array_equal(d["/sparse"][:], np.arange(40))


@pytest.mark.parametrize("form", FORMS)
def test_discovery_of_renamed_and_foreign_files(tmp_path: Path, form: str) -> None:
    b2d = tmp_path / "s.b2d"
    with DictStore(str(b2d), mode="w") as d:
        d["/n"] = np.arange(5)
    os.rename(b2d / "n.b2nd", b2d / "n.weird")
    (b2d / "notes.txt").write_text("not a frame")  # ignored: not a frame
    lazy = pb.asarray(np.arange(3), urlpath=str(b2d / "lazy.frame"), meta={"LazyArray": 1})
    del lazy
    path = b2d
    if form == "b2z":
        path = tmp_path / "s.b2z"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with DictStore(str(b2d), mode="r") as d:
                d.to_b2z(str(path))
    with pytest.warns(UserWarning) as seen:
        d = DictStore(str(path), mode="r")
    messages = " | ".join(str(w.message) for w in seen)
    assert "n.weird' uses extension '.weird' but metadata resolves to NDArray" in messages
    assert "unsupported Blosc2 object at 'lazy.frame'" in messages
    assert d.map_tree == {"/n": "n.weird"}
    np.testing.assert_array_equal(d["/n"][:], np.arange(5))


def test_deflated_members(tmp_path: Path) -> None:
    path = tmp_path / "s.b2z"
    with DictStore(str(path), mode="w") as d:
        d["/a"] = np.arange(1000)
        d["/b"] = np.arange(1000)
    raw = {}
    with zipfile.ZipFile(path) as zf:
        raw = {i.filename: zf.read(i) for i in zf.infolist()}
    for deflate in ({"a.b2nd"}, {"a.b2nd", "embed.b2e"}):
        out = tmp_path / f"r{len(deflate)}.b2z"
        with zipfile.ZipFile(out, "w") as zf:
            for name, data in raw.items():
                kind = zipfile.ZIP_DEFLATED if name in deflate else zipfile.ZIP_STORED
                zf.writestr(name, data, compress_type=kind)
        if "embed.b2e" in deflate:
            with pytest.raises(FormatError, match=r"compressed embed\.b2e"):
                DictStore(str(out), mode="r")
            continue
        d = DictStore(str(out), mode="r")
        assert "/a" not in d and d.member_window("/a") is None
        np.testing.assert_array_equal(d["/b"][:], np.arange(1000))
        with DictStore(str(out), mode="a") as w:  # unpacking inflates it: a leaf again
            np.testing.assert_array_equal(w["/a"][:], np.arange(1000))
        assert "/a" in DictStore(str(out), mode="r")


def test_unclosed_store_packs_only_when_changed(tmp_path: Path) -> None:
    path = tmp_path / "s.b2z"
    with DictStore(str(path), mode="w") as d:
        d["/a"] = np.arange(20)
    before = os.stat(path).st_mtime_ns
    time.sleep(0.01)
    d = DictStore(str(path), mode="a")
    np.testing.assert_array_equal(d["/a"][:], np.arange(20))
    del d  # nothing changed: the archive is not rewritten
    assert os.stat(path).st_mtime_ns == before
    d = DictStore(str(path), mode="a")
    d["/b"] = np.arange(2)
    del d  # changed: packed back, as python-blosc2 does
    assert sorted(DictStore(str(path), mode="r")) == ["/a", "/b"]
    assert not [p for p in os.listdir(tmp_path) if p != "s.b2z"]  # no working dir left


def test_extensionless_path_is_a_directory(tmp_path: Path) -> None:
    path = tmp_path / "plain"
    with DictStore(str(path), mode="w") as d:
        d["/a"] = np.arange(4)
    assert (path / "embed.b2e").is_file()
    assert DictStore(str(path), mode="r").b2z_path == str(path) + ".b2z"


def test_argument_checks(tmp_path: Path) -> None:
    p = str(tmp_path / "s.b2z")
    with pytest.raises(ValueError, match="mode must be"):
        DictStore(p, mode="x")
    with pytest.raises(ValueError, match="mmap_mode must be None or 'r'"):
        DictStore(p, mode="r", mmap_mode="r+")
    with pytest.raises(ValueError, match="mmap_mode='r' requires mode='r'"):
        DictStore(p, mode="a", mmap_mode="r")
    with pytest.raises(ValueError, match="zip"):
        DictStore(p, mode="w", locking=True)
    with pytest.raises(ValueError, match="mmap_mode"):
        DictStore(str(tmp_path / "s.b2d"), mode="r", mmap_mode="r", locking=True)
    with pytest.raises(ValueError, match="threshold"):
        DictStore(str(tmp_path / "t.b2d"), mode="w", threshold="big")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        DictStore(str(tmp_path / "none.b2d"), mode="r")
    with pytest.raises(FileNotFoundError):
        DictStore(str(tmp_path / "none.b2z"), mode="r")
    assert not [p for p in os.listdir(tmp_path) if not p.endswith(".b2d")]


def test_two_locking_handles(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.b2d")
    h1 = DictStore(path, mode="w", locking=True)
    h1["/ext"] = np.arange(100)
    h2 = DictStore(path, mode="a", locking=True)
    assert set(h2.keys()) == {"/ext"}
    h1["/dir/other"] = np.arange(50)
    np.testing.assert_array_equal(h2["/dir/other"][:], np.arange(50))
    del h1["/ext"]
    assert set(h2.keys()) == {"/dir/other"}
    h2["/back"] = np.arange(7)
    np.testing.assert_array_equal(h1["/back"][:], np.arange(7))


def test_info(tmp_path: Path) -> None:
    path = tmp_path / "s.b2z"
    with DictStore(str(path), mode="w") as d:
        d["/b"] = np.arange(3)
        d["/a"] = np.arange(3)
    info = dict(DictStore(str(path), mode="r").info_items)
    assert info["format"] == "b2z" and info["entries"] == 2 and info["contents"] == "/a\n/b"
    assert "DictStore" in repr(DictStore(str(path), mode="r").info)


def test_no_warnings_on_a_clean_store(tmp_path: Path) -> None:
    path = tmp_path / "s.b2z"
    with DictStore(str(path), mode="w") as d:
        d["/a"] = np.arange(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DictStore(str(path), mode="r")


def test_stale_staging_files_removed_on_open(tmp_path: Path) -> None:
    import sys

    path = tmp_path / "s.b2d"
    with DictStore(str(path), mode="w") as d:
        d["/g/a"] = np.arange(100)
    dead = run_child(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        "print its pid and exit",
        capture_output=True,
        text=True,
        check=True,
    )
    frame = (path / "g" / "a.b2nd").read_bytes()
    (path / "g" / f"b.b2nd.{int(dead.stdout)}.tmp").write_bytes(frame)  # killed before rename
    (path / "g" / f"c.b2nd.{os.getpid()}.tmp").write_bytes(frame)  # a live writer's
    with DictStore(str(path), mode="a") as d:
        assert sorted(d) == ["/g/a"]
    assert sorted(os.listdir(path / "g")) == ["a.b2nd", f"c.b2nd.{os.getpid()}.tmp"]
