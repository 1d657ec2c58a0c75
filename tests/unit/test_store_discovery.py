"""Which files of a store directory are its files (stores/discovery.py): a leaf, an
``embed.b2e`` or a table member that is a symlink out of the directory, or not a regular file,
is left out of the keys with a warning (and out of an archive packed from the directory), and
refused with a FormatError when it is opened all the same; nothing is read, written or removed
outside the store. Symlinks inside the directory are followed. python-blosc2 4.14.1 reads the
escaping leaf (shown where it helps)."""

from __future__ import annotations

import dataclasses
import os
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError
from pyblosc2.stores import DictStore, TreeStore
from pyblosc2.stores.discovery import refusal, store_file

LEAK = "Ignoring 'leak.b2nd' during DictStore discovery: a symlink to .*secret.b2nd, outside"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A TreeStore directory with leaf /a, and a secret array outside it."""
    pb.asarray(np.arange(10) * 7, urlpath=str(tmp_path / "secret.b2nd"), mode="w")
    path = tmp_path / "s.b2d"
    with TreeStore(str(path), mode="w") as t:
        t["/a"] = np.arange(3)
    return path


def _leak(store: Path, name: str = "leak.b2nd") -> None:
    (store / name).symlink_to(store.parent / "secret.b2nd")


@pytest.mark.parametrize("cls", [DictStore, TreeStore])
@pytest.mark.parametrize("mode", ["r", "a"])
def test_a_leaf_symlinked_out_is_left_out(store: Path, cls: Any, mode: str) -> None:
    _leak(store)
    with pytest.warns(UserWarning, match=LEAK), cls(str(store), mode=mode) as s:
        assert sorted(s.keys()) == ["/a"]
        assert "/leak" not in s
        with pytest.raises(
            FormatError,
            match=r"^store .*s.b2d: leaf '/leak' is 'leak.b2nd', a symlink to .*secret.b2nd, "
            "outside the store directory, expected a regular file of the store$",
        ):
            s["/leak"]
        if mode == "a":  # writing the key replaces the symlink, not what it points to
            s["/leak"] = np.arange(2)
            assert list(s["/leak"][:]) == [0, 1]
    assert (store / "leak.b2nd").is_symlink() is (mode == "r")
    assert list(pb.open(str(store.parent / "secret.b2nd"))[:]) == list(np.arange(10) * 7)


def test_python_blosc2_reads_the_leaf_symlinked_out(store: Path, cblosc2: Any) -> None:
    _leak(store)
    with cblosc2.TreeStore(str(store), mode="r") as t:
        assert "/leak" in t
        assert list(t["/leak"][:]) == list(np.arange(10) * 7)  # the file outside


def test_open_refuses_the_leaf_swapped_after_listing(store: Path) -> None:
    (store / "b.b2nd").write_bytes((store / "a.b2nd").read_bytes())
    with TreeStore(str(store), mode="r") as t:
        assert sorted(t.keys()) == ["/a", "/b"]
        (store / "b.b2nd").unlink()
        _leak(store, "b.b2nd")
        with pytest.raises(FormatError, match=r"store .*: file 'b.b2nd' is a symlink to .*secret"):
            t["/b"]


def test_a_leaf_symlinked_inside_is_read(store: Path) -> None:
    (store / "alias.b2nd").symlink_to("a.b2nd")
    (store / "g").mkdir()
    (store / "g" / "up.b2nd").symlink_to("../a.b2nd")
    (store / "g2").symlink_to("g")  # a directory symlink inside: not followed, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = TreeStore(str(store), mode="r")
    with t:
        assert sorted(t.keys()) == ["/a", "/alias", "/g", "/g/up"]
        assert list(t["/alias"][:]) == list(t["/g/up"][:]) == [0, 1, 2]


def test_a_fifo_or_dangling_symlink_is_left_out(store: Path) -> None:
    os.mkfifo(store / "fifo.b2nd")
    (store / "gone.b2nd").symlink_to("nothing-here.b2nd")
    with pytest.warns(UserWarning) as caught, TreeStore(str(store), mode="r") as t:
        assert sorted(t.keys()) == ["/a"]
    messages = sorted(str(w.message) for w in caught)
    assert "'fifo.b2nd' during DictStore discovery: a FIFO" in messages[0]
    assert "'gone.b2nd' during DictStore discovery: a symlink to nothing" in messages[1]


def test_leaves_under_a_directory_symlinked_out_are_not_listed(store: Path) -> None:
    outside = store.parent / "elsewhere"
    outside.mkdir()
    (outside / "x.b2nd").write_bytes((store / "a.b2nd").read_bytes())
    (store / "g").symlink_to(outside)
    with (
        pytest.warns(UserWarning, match="Ignoring 'g' .*: a symlink to .*elsewhere, outside"),
        TreeStore(str(store), mode="r") as t,
    ):
        assert sorted(t.keys()) == ["/a"]


@pytest.mark.parametrize("mode", ["r", "a"])
def test_an_embed_file_symlinked_out_is_refused(store: Path, tmp_path: Path, mode: str) -> None:
    other = tmp_path / "other.b2d"
    TreeStore(str(other), mode="w").close()
    (store / "embed.b2e").unlink()
    (store / "embed.b2e").symlink_to(other / "embed.b2e")
    before = (other / "embed.b2e").read_bytes()
    with pytest.raises(FormatError, match=r"file 'embed.b2e' is a symlink to .*other.b2d"):
        TreeStore(str(store), mode=mode)
    assert (other / "embed.b2e").read_bytes() == before


def test_no_leaf_is_written_through_a_directory_symlinked_out(store: Path) -> None:
    outside = store.parent / "elsewhere"
    outside.mkdir()
    (store / "g").symlink_to(outside)
    with (
        pytest.warns(UserWarning, match="Ignoring 'g'"),
        TreeStore(str(store), mode="a") as t,
        pytest.raises(FormatError, match=r"directory of 'g/sub/x.b2nd' is .*elsewhere/sub"),
    ):
        t["/g/sub/x"] = np.arange(5)
    assert list(outside.iterdir()) == []  # not even the directory "sub"


def test_packing_leaves_out_what_is_no_file_of_the_store(store: Path, tmp_path: Path) -> None:
    _leak(store)
    with pytest.warns(UserWarning, match=LEAK), TreeStore(str(store), mode="r") as t:
        packed = t.to_b2z(filename=str(tmp_path / "p.b2z"))
        copied = t.to_b2d(str(tmp_path / "copy.b2d"))
    with zipfile.ZipFile(packed) as zf:
        assert sorted(zf.namelist()) == ["a.b2nd", "embed.b2e"]
    assert sorted(os.listdir(copied)) == ["a.b2nd", "embed.b2e"]


def test_python_blosc2_packs_the_file_outside(store: Path, tmp_path: Path, cblosc2: Any) -> None:
    _leak(store)
    with cblosc2.TreeStore(str(store), mode="a") as t:
        packed = t.to_b2z(filename=str(tmp_path / "p.b2z"))
    with zipfile.ZipFile(packed) as zf:
        assert "leak.b2nd" in zf.namelist()


def test_rewriting_a_store_removes_symlinks_not_their_targets(store: Path) -> None:
    outside = store.parent / "elsewhere"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (store / "g").symlink_to(outside)
    _leak(store)
    with TreeStore(str(store), mode="w") as t:
        t["/b"] = np.arange(2)
    assert (outside / "keep.txt").read_text() == "mine"
    assert (store.parent / "secret.b2nd").exists()
    assert sorted(os.listdir(store)) == ["b.b2nd", "embed.b2e"]


def test_deleting_an_object_never_removes_through_a_symlink(store: Path) -> None:
    @dataclasses.dataclass
    class Row:
        x: int = 0

    outside = store.parent / "elsewhere"
    (outside / "t").mkdir(parents=True)
    (outside / "t" / "keep.txt").write_text("mine")
    with TreeStore(str(store), mode="a") as t:
        t["/g/t"] = pb.CTable(Row, new_data=[(1,)])
    tree = store / "g"
    os.rename(tree, store / "real-g")
    tree.symlink_to(outside)  # /g now leads out of the store, to a directory "t"
    with pytest.warns(UserWarning, match="Ignoring 'g'"), TreeStore(str(store), mode="a") as t:
        del t["/g/t"]  # the table's registry entry: its leftover directory is not removed
    assert (outside / "t" / "keep.txt").read_text() == "mine"


@dataclasses.dataclass
class Row:
    x: int = 0


def test_a_table_column_symlinked_out_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.b2d"
    with pb.CTable(Row, urlpath=str(path), mode="w") as t:
        t.extend([(1,), (2,)])
    other = tmp_path / "other.b2d"
    with pb.CTable(Row, urlpath=str(other), mode="w") as t:
        t.extend([(5,), (6,)])
    col = path / "_cols" / "x.b2nd"
    col.unlink()
    col.symlink_to(other / "_cols" / "x.b2nd")
    with (
        pytest.warns(UserWarning, match="'_cols/x.b2nd'"),
        pytest.raises(
            FormatError, match=r"leaf '/_cols/x' is '_cols/x.b2nd', a symlink to .*other.b2d"
        ),
    ):
        pb.CTable.open(str(path))


def test_refusal_and_store_file(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "f").write_bytes(b"x")
    (d / "in").symlink_to("f")
    (d / "out").symlink_to(tmp_path)
    real = os.path.realpath(d)
    assert refusal(real, str(d / "f")) is None
    assert refusal(real, str(d / "in")) is None
    assert (
        refusal(real, str(d / "out"))
        == f"a symlink to {os.path.realpath(tmp_path)}, outside the store directory"
    )
    assert store_file(str(d), "missing", "w") == str(d / "missing")  # left to the caller
    with pytest.raises(FormatError, match="w: file 'out' is a symlink to"):
        store_file(str(d), "out", "w")
