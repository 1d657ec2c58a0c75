"""EmbedStore (stores/embed.py): values kept whole in one super-chunk, the map in the
``estore_metadata`` vlmeta entry, and a FormatError for a map that points outside the data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError, ParamError
from pyblosc2.stores.embed import MAP_ENTRY, EmbedStore


def test_layout(tmp_path: Path) -> None:
    path = str(tmp_path / "e.b2e")
    e = EmbedStore(path, mode="w")
    a = np.arange(10, dtype=np.int32)
    e["/a"] = a
    e["/s"] = pb.SChunk(data=b"hello")
    s = pb.SChunk(urlpath=path, mode="r")  # the super-chunk underneath, as stored
    assert s.typesize == 1 and s.chunksize == 2**13
    assert dict(s.meta) == {"b2embed": {"version": 1}}
    entry = s.vlmeta[MAP_ENTRY]
    assert entry["current_offset"] == s.nbytes
    frame = s[entry["embed_map"]["/a"]["offset"] :][: entry["embed_map"]["/a"]["length"]]
    np.testing.assert_array_equal(pb.ndarray_from_cframe(frame)[:], a)


def test_roundtrip_kinds(tmp_path: Path) -> None:
    path = str(tmp_path / "e.b2e")
    e = EmbedStore(path, mode="w")
    x = np.linspace(0, 1, 5000).reshape(50, 100)
    e["/nd"] = pb.asarray(x, chunks=(10, 100), blocks=(5, 50))
    e["/np"] = np.arange(3)
    sc = pb.SChunk(data=b"abc" * 1000, cparams={"typesize": 1})
    sc.vlmeta["note"] = {"k": [1, 2]}
    e["/sc"] = sc
    r = EmbedStore(path, mode="r")
    assert r.storage.meta == {"b2embed": {"version": 1}}
    np.testing.assert_array_equal(r["/nd"][:], x)
    assert r["/nd"].chunks == (10, 100)
    assert r["/sc"][:] == b"abc" * 1000 and r["/sc"].vlmeta["note"] == {"k": [1, 2]}
    assert sorted(r) == ["/nd", "/np", "/sc"] and len(r) == 3
    assert [k for k, _ in r.items()] == list(r.keys())


def test_in_memory_and_cframe() -> None:
    e = EmbedStore()
    e["/a"] = np.arange(4)
    back = pb.from_cframe(e.to_cframe())
    assert isinstance(back, EmbedStore)
    np.testing.assert_array_equal(back["/a"][:], np.arange(4))
    back["/b"] = np.ones(2)  # a store from a cframe can grow
    assert sorted(back) == ["/a", "/b"]


def test_keys_refused_and_existing(tmp_path: Path) -> None:
    e = EmbedStore()
    e["/a"] = np.arange(2)
    with pytest.raises(ParamError, match="already exists"):
        e["/a"] = np.arange(3)
    with pytest.raises(ParamError, match="start with"):
        e["a"] = np.arange(2)
    with pytest.raises(KeyError):
        e["/missing"]
    assert e.get("/missing", 7) == 7
    with pytest.raises(TypeError):
        e["/x"] = [1, 2, 3]  # a plain list is no container


def test_delete_keeps_bytes(tmp_path: Path) -> None:
    path = str(tmp_path / "e.b2e")
    e = EmbedStore(path, mode="w")
    e["/a"] = np.arange(100)
    size = pb.SChunk(urlpath=path, mode="r").nbytes
    del e["/a"]
    assert "/a" not in e and len(e) == 0
    assert pb.SChunk(urlpath=path, mode="r").nbytes == size  # unreachable, not reclaimed
    with pytest.raises(KeyError):
        del e["/a"]


def test_read_only(tmp_path: Path) -> None:
    path = str(tmp_path / "e.b2e")
    EmbedStore(path, mode="w")["/a"] = np.arange(3)
    r = EmbedStore(path, mode="r")
    with pytest.raises(ValueError, match="read-only"):
        r["/b"] = np.arange(3)
    with pytest.raises(ValueError, match="read-only"):
        del r["/a"]


def test_append_mode_creates(tmp_path: Path) -> None:
    # python-blosc2 raises RuntimeError here (it opens a file that does not exist yet)
    path = str(tmp_path / "new.b2e")
    e = EmbedStore(path)
    e["/a"] = np.arange(3)
    assert sorted(EmbedStore(path, mode="a")) == ["/a"]


def test_mmap_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mmap_mode must be None or 'r'"):
        EmbedStore(str(tmp_path / "x.b2e"), mode="r", mmap_mode="r+")
    with pytest.raises(ValueError, match="mmap_mode='r' requires mode='r'"):
        EmbedStore(str(tmp_path / "x.b2e"), mode="a", mmap_mode="r")
    with pytest.raises(FileNotFoundError):
        EmbedStore(str(tmp_path / "none.b2e"), mode="r")


def _with_map(tmp_path: Path, value: object) -> str:
    path = str(tmp_path / "bad.b2e")
    e = EmbedStore(path, mode="w")
    e["/a"] = np.arange(3)
    pb.SChunk(urlpath=path, mode="a").vlmeta[MAP_ENTRY] = value
    return path


@pytest.mark.parametrize(
    "value",
    [
        {"embed_map": {"/a": {"offset": 0, "length": 10**12}}, "current_offset": 0},
        {"embed_map": {"/a": {"offset": -5, "length": 3}}, "current_offset": 0},
        {"embed_map": {"/a": {"offset": "0", "length": 3}}, "current_offset": 0},
        {"embed_map": {"/a": [0, 3]}, "current_offset": 0},
        {"embed_map": [], "current_offset": 0},
        {"current_offset": 0},
        "not a map",
    ],
    ids=["huge length", "negative offset", "str offset", "list entry", "list map", "no map", "str"],
)
def test_hostile_maps(tmp_path: Path, value: object) -> None:
    path = _with_map(tmp_path, value)
    with pytest.raises(FormatError):
        EmbedStore(path, mode="r")


def test_c2array_reference_is_named(tmp_path: Path) -> None:
    path = _with_map(
        tmp_path,
        {
            "embed_map": {"/r": {"urlbase": "https://cat2.cloud/demo", "path": "x"}},
            "current_offset": 0,
        },
    )
    r = EmbedStore(path, mode="r")
    assert "/r" in r
    with pytest.raises(NotImplementedError, match="C2Array"):
        r["/r"]


def test_two_locking_handles(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.b2e")
    storage = {"contiguous": True, "urlpath": path, "locking": True}
    h1 = EmbedStore(path, mode="w", storage=pb.Storage(**storage, mode="w"))
    h1["/one"] = np.arange(10)
    h2 = EmbedStore(path, mode="a", storage=pb.Storage(**storage, mode="a"))
    assert set(h2) == {"/one"}
    h1["/two"] = np.arange(20)
    np.testing.assert_array_equal(h2["/two"][:], np.arange(20))
    del h2["/one"]
    assert set(h1) == {"/two"}
