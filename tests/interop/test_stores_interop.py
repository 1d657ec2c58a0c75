"""Stores both ways with python-blosc2 4.14.1: what one library writes (.b2z, .b2d, .b2e;
DictStore and TreeStore; embedded and external leaves; NDArray and SChunk; vlmeta of
leaves, of the tree and of its groups) the other reads with the same data and metadata, and
both put the same values in the same places (the threshold rule, the file names)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb

FORMS = ["b2d", "b2z"]
THRESHOLDS = [0, 1000, None]


def _content(lib: Any, tmp_path: Path) -> dict[str, Any]:
    """The same values, built by ``lib`` (on-disk ones under ``tmp_path``)."""
    rng = np.random.default_rng(5)
    ext = lib.asarray(
        rng.normal(size=(30, 40)).astype(np.float32),
        chunks=(10, 40),
        blocks=(5, 20),
        urlpath=str(tmp_path / f"{lib.__name__}-ext.b2nd"),
        mode="w",
    )
    ext.vlmeta["description"] = "an external array"
    sc = lib.SChunk(chunksize=200, data=b"0123456789" * 50, cparams={"typesize": 1})
    sc.vlmeta["note"] = {"a": [1, 2, 3], "b": "text"}
    return {
        "/small": np.arange(5, dtype=np.int16),
        "/grid/big": np.arange(10_000, dtype=np.int64).reshape(100, 100),
        "/grid/sub/ext": ext,
        "/sc": sc,
        "/u": np.array(["alpha", "beta"]),
    }


def _check_value(key: str, got: Any, want: Any) -> None:
    if isinstance(want, np.ndarray):
        np.testing.assert_array_equal(np.asarray(got[:]), want, err_msg=key)
        return
    if hasattr(want, "schunk"):  # an NDArray of either library
        np.testing.assert_array_equal(np.asarray(got[:]), want[:], err_msg=key)
        assert tuple(got.chunks) == tuple(want.chunks) and tuple(got.blocks) == tuple(want.blocks)
        assert got.vlmeta["description"] == want.vlmeta["description"]
        return
    assert bytes(got[:]) == bytes(want[:]), key
    assert got.vlmeta["note"] == {"a": [1, 2, 3], "b": "text"}


def _write(lib: Any, cls_name: str, path: str, threshold: int | None, tmp_path: Path) -> dict:
    content = _content(lib, tmp_path)
    with getattr(lib, cls_name)(path, mode="w", threshold=threshold) as store:
        for key, value in content.items():
            store[key] = value
        if cls_name == "TreeStore":
            store.vlmeta["author"] = "interop"
            store["/grid"].vlmeta["level"] = (1, 2)
        split = {k: k in store.map_tree for k in content}
    return {"content": content, "split": split}


def _check_store(lib: Any, cls_name: str, path: str, written: dict) -> Any:
    store = lib.open(path, mode="r")
    assert type(store).__name__ == cls_name
    meta = {"DictStore": "b2dict", "TreeStore": "b2tree"}[cls_name]
    assert meta in store.storage.meta
    content = written["content"]
    if cls_name == "TreeStore":
        assert set(store.keys()) == set(content) | {"/grid", "/grid/sub"}
        assert store.vlmeta["author"] == "interop"
        assert store["/grid"].vlmeta["level"] == (1, 2)
    else:
        assert set(store.keys()) == set(content)
    for key, want in content.items():
        got = store[key]  # held while its vlmeta is read (python-blosc2 needs that)
        _check_value(key, got, want)
    assert {k: k in store.map_tree for k in content} == written["split"]
    return store


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("threshold", THRESHOLDS, ids=lambda t: f"t{t}")
@pytest.mark.parametrize("cls_name", ["DictStore", "TreeStore"])
def test_python_blosc2_to_pyblosc2(
    cblosc2: Any, tmp_path: Path, form: str, threshold: int | None, cls_name: str
) -> None:
    path = str(tmp_path / f"s.{form}")
    written = _write(cblosc2, cls_name, path, threshold, tmp_path)
    _check_store(pb, cls_name, path, written)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("threshold", THRESHOLDS, ids=lambda t: f"t{t}")
@pytest.mark.parametrize("cls_name", ["DictStore", "TreeStore"])
def test_pyblosc2_to_python_blosc2(
    cblosc2: Any, tmp_path: Path, form: str, threshold: int | None, cls_name: str
) -> None:
    path = str(tmp_path / f"s.{form}")
    written = _write(pb, cls_name, path, threshold, tmp_path)
    _check_store(cblosc2, cls_name, path, written)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("threshold", THRESHOLDS, ids=lambda t: f"t{t}")
def test_same_layout(cblosc2: Any, tmp_path: Path, form: str, threshold: int | None) -> None:
    """Both libraries put the same values in the same files, in the same archive order."""
    names = {}
    for lib in (pb, cblosc2):
        path = tmp_path / f"{lib.__name__}.{form}"
        _write(lib, "TreeStore", str(path), threshold, tmp_path)
        if form == "b2d":
            names[lib.__name__] = sorted(
                str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()
            )
        else:
            with zipfile.ZipFile(path) as zf:
                infos = zf.infolist()
                assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
                assert infos[-1].filename == "embed.b2e"
                names[lib.__name__] = sorted(i.filename for i in infos)
        estore = lib.open(str(path), mode="r").estore
        assert sorted(estore.keys()) == sorted(estore._embed_map)
    assert names["pyblosc2"] == names["blosc2"]


@pytest.mark.parametrize("form", FORMS)
def test_edits_across_libraries(cblosc2: Any, tmp_path: Path, form: str) -> None:
    """python-blosc2 creates, pyblosc2 changes (adds, overwrites, deletes), python-blosc2
    changes again, pyblosc2 reads the result."""
    path = str(tmp_path / f"s.{form}")
    with cblosc2.TreeStore(path, mode="w", threshold=500) as t:
        t["/keep"] = np.arange(1000)
        t["/gone"] = np.arange(3)
        t["/swap"] = np.arange(4)
        t.vlmeta["v"] = 1
    with pb.TreeStore(path, mode="a", threshold=500) as t:
        del t["/gone"]
        t["/swap"] = np.arange(2000)  # embedded -> external
        t["/g/new"] = np.ones(3)
        t.vlmeta["v"] = 2
    with cblosc2.TreeStore(path, mode="a", threshold=500) as t:
        assert sorted(t.keys()) == ["/g", "/g/new", "/keep", "/swap"]
        t["/g/more"] = np.zeros(2)
        assert t.vlmeta["v"] == 2
    with pb.TreeStore(path, mode="r") as t:
        assert t.keys() == {"/g", "/g/new", "/g/more", "/keep", "/swap"}
        np.testing.assert_array_equal(t["/swap"][:], np.arange(2000))
        np.testing.assert_array_equal(t["/g/more"][:], np.zeros(2))


def test_embed_store_both_ways(cblosc2: Any, tmp_path: Path) -> None:
    for writer, reader in ((cblosc2, pb), (pb, cblosc2)):
        path = str(tmp_path / f"{writer.__name__}.b2e")
        e = writer.EmbedStore(path, mode="w")
        e["/a"] = np.arange(10, dtype=np.float64)
        nd = writer.arange(12, dtype=np.int32)
        nd.vlmeta["d"] = "vl"
        e["/nd"] = nd
        e["/s"] = writer.SChunk(data=b"bytes" * 10)
        del e["/a"]
        r = reader.open(path, mode="r")
        assert type(r).__name__ == "EmbedStore" and "b2embed" in r.storage.meta
        assert set(r.keys()) == {"/nd", "/s"}
        nd = r["/nd"]  # held: python-blosc2's vlmeta dies with its array
        np.testing.assert_array_equal(nd[:], np.arange(12, dtype=np.int32))
        assert nd.vlmeta["d"] == "vl"
        assert bytes(r["/s"][:]) == b"bytes" * 10
        back = reader.from_cframe(e.to_cframe())
        assert type(back).__name__ == "EmbedStore" and set(back.keys()) == {"/nd", "/s"}


def test_locked_directory_store_shared_with_python_blosc2(cblosc2: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "shared.b2d")
    ours = pb.DictStore(path, mode="w", threshold=500, locking=True)
    ours["/ours"] = np.arange(1000)
    theirs = cblosc2.DictStore(path, mode="a", threshold=500, locking=True)
    assert set(theirs.keys()) == {"/ours"}
    theirs["/theirs"] = np.arange(5)
    theirs["/theirs_ext"] = np.arange(2000)
    assert set(ours.keys()) == {"/ours", "/theirs", "/theirs_ext"}
    np.testing.assert_array_equal(ours["/theirs_ext"][:], np.arange(2000))
    del ours["/theirs"]
    assert set(theirs.keys()) == {"/ours", "/theirs_ext"}
    theirs._closed = True


def test_python_blosc2_ctable_is_an_object_root(cblosc2: Any, tmp_path: Path) -> None:
    import dataclasses

    @dataclasses.dataclass
    class Row:
        x: int = 0
        y: float = 0.0

    for form in FORMS:
        path = str(tmp_path / f"bundle.{form}")
        table = cblosc2.CTable(Row)
        table.extend({"x": np.arange(5), "y": np.arange(5) * 1.5})
        with cblosc2.TreeStore(path, mode="w") as t:
            t["/arr"] = np.arange(10)
            t["/data/table"] = table
        t = pb.open(path, mode="r")
        assert t.keys() == {"/arr", "/data", "/data/table"}
        assert "/data/table/_meta" not in t
        np.testing.assert_array_equal(t["/arr"][:], np.arange(10))
        opened = t["/data/table"]  # the table itself (pyblosc2.ctable)
        assert isinstance(opened, pb.CTable)
        np.testing.assert_array_equal(opened["y"][:], np.arange(5) * 1.5)
        with pytest.raises(ValueError, match="object root"):
            t.get_subtree("/data/table")


def test_python_blosc2_containers_in_stores(cblosc2: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "vl.b2z")
    oarr = cblosc2.ObjectArray()
    oarr.extend([{"a": 1}, None, "x"])
    barr = cblosc2.BatchArray(items_per_block=2)
    barr.extend([[1, 2], [3]])
    with cblosc2.DictStore(path, mode="w", threshold=10**9) as d:
        d["/obj"] = oarr  # embedded
    with cblosc2.DictStore(str(tmp_path / "vl.b2d"), mode="w") as d:
        d["/batch"] = barr  # external .b2b
        d["/plain"] = np.arange(3)
    obj = pb.open(path)["/obj"]
    assert type(obj).__name__ == "ObjectArray" and list(obj) == [{"a": 1}, None, "x"]
    d = pb.open(str(tmp_path / "vl.b2d"))
    assert d.map_tree["/batch"] == "batch.b2b"
    batch = d["/batch"]
    assert type(batch).__name__ == "BatchArray" and [b[:] for b in batch] == [[1, 2], [3]]
    np.testing.assert_array_equal(d["/plain"][:], np.arange(3))


def test_archive_modes(cblosc2: Any, tmp_path: Path) -> None:
    """python-blosc2 leaves its archives 0600 (mkstemp's mode); pyblosc2's follow the umask
    (a disagreement; both read either)."""
    paths = {}
    for lib in (pb, cblosc2):
        paths[lib.__name__] = p = str(tmp_path / f"{lib.__name__}.b2z")
        with lib.DictStore(p, mode="w") as d:
            d["/a"] = np.arange(3)
    old = os.umask(0o022)
    os.umask(old)
    assert os.stat(paths["blosc2"]).st_mode & 0o777 == 0o600
    assert os.stat(paths["pyblosc2"]).st_mode & 0o777 == 0o666 & ~old


@pytest.mark.parametrize("args", [{}, {"chunksize": 8192}, {"chunksize": -1}])
def test_empty_frame_with_vlmeta_records_its_chunksize(
    cblosc2: Any, tmp_path: Path, args: dict
) -> None:
    """C-Blosc2 writes the container's chunk size into every header it rewrites, so an empty
    frame given vlmeta says 8192 (or the 16 MiB default); pyblosc2 wrote -1 ("from the first
    chunk"), and python-blosc2's SChunk then silently drops slice writes past its end: an
    EmbedStore created by pyblosc2 lost every value python-blosc2 stored into it."""
    heads = {}
    for lib in (pb, cblosc2):
        path = str(tmp_path / f"{lib.__name__}.b2frame")
        s = lib.SChunk(urlpath=path, mode="w", **args)  # held: python-blosc2's vlmeta needs it
        s.vlmeta["a"] = 1
        del s
        heads[lib.__name__] = pb.blosc2_ext.open(path, "r", 0).header.chunksize
    assert heads["pyblosc2"] == heads["blosc2"]
    path = str(tmp_path / "e.b2e")
    pb.EmbedStore(path, mode="w")
    theirs = cblosc2.EmbedStore(path, mode="a")
    theirs["/x"] = np.arange(5)
    np.testing.assert_array_equal(pb.EmbedStore(path, mode="r")["/x"][:], np.arange(5))
