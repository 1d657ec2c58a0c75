"""TreeStore (stores/treestore.py, stores/treevlmeta.py): groups and leaves, subtree views,
walk, per-group vlmeta, and objects stored as subtrees (hidden, protected, named)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError, ParamError
from pyblosc2.stores import TreeStore
from pyblosc2.stores.treevlmeta import REGISTRY

FORMS = ["b2d", "b2z"]


@pytest.fixture(params=FORMS)
def tree(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    path = str(tmp_path / f"t.{request.param}")
    with TreeStore(path, mode="w") as t:
        t["/a/x"] = np.arange(3)
        t["/a/b/y"] = np.arange(4)
        t["/a/b/z"] = np.arange(5)
        t["/c"] = np.arange(6)
    return path


def test_keys_and_groups(tree: str) -> None:
    t = TreeStore(tree, mode="r")
    assert t.keys() == {"/a", "/a/x", "/a/b", "/a/b/y", "/a/b/z", "/c"}
    assert t.storage.meta == {"b2tree": {"version": 1}}
    assert isinstance(t["/a"], TreeStore) and isinstance(t["a/b"], TreeStore)
    np.testing.assert_array_equal(t["a/b/z"][:], np.arange(5))
    assert t.get_children("/") == ["/a", "/c"]
    assert t.get_children("a") == ["/a/b", "/a/x"]
    assert t.get_descendants("/a") == ["/a/b", "/a/b/y", "/a/b/z", "/a/x"]
    assert "/a/b" in t and "a/x" in t and "/nope" not in t and "/a//b" not in t
    assert len(t) == 6 and sorted(t) == sorted(t.keys())


def test_walk(tree: str) -> None:
    t = TreeStore(tree, mode="r")
    top = list(t.walk("/"))
    assert top == [("/", ["a"], ["c"]), ("/a", ["b"], ["x"]), ("/a/b", [], ["y", "z"])]
    assert [p for p, _, _ in t.walk("/", topdown=False)] == ["/a/b", "/a", "/"]
    assert list(t["/a"].walk("/")) == [("/", ["b"], ["x"]), ("/b", [], ["y", "z"])]


def test_subtree_views(tree: str) -> None:
    t = TreeStore(tree, mode="a")
    sub = t.get_subtree("/a")
    assert sub.keys() == {"/x", "/b", "/b/y", "/b/z"}
    sub["/b/new"] = np.arange(2)  # written through the view, into the store
    assert "/a/b/new" in t
    nested = sub.get_subtree("/b")
    assert nested.keys() == {"/y", "/z", "/new"}
    del nested["/y"]
    assert "/a/b/y" not in t
    sub.close()  # a view neither packs nor releases the store
    t.close()
    assert TreeStore(tree, mode="r").keys() == {"/a", "/a/x", "/a/b", "/a/b/z", "/a/b/new", "/c"}


def test_structure_rules(tree: str) -> None:
    t = TreeStore(tree, mode="a")
    with pytest.raises(ParamError, match="structural path"):
        t["/a"] = np.arange(3)
    with pytest.raises(ParamError, match="Cannot add child"):
        t["/c/under"] = np.arange(3)
    with pytest.raises(ParamError, match="end with '/'"):
        t["/bad/"] = np.arange(3)
    with pytest.raises(ParamError, match="empty path segments"):
        t["/bad//k"] = np.arange(3)
    with pytest.raises(KeyError, match="vlmeta"):
        t["/__vlmeta__"]
    with pytest.raises(KeyError):
        t["/none"]
    t.discard()


def test_delete_a_group(tree: str) -> None:
    t = TreeStore(tree, mode="a")
    t["/a"].vlmeta["note"] = "group metadata"
    del t["/a"]
    assert t.keys() == {"/c"}
    with pytest.raises(KeyError):
        del t["/a"]
    t.close()
    assert TreeStore(tree, mode="r").keys() == {"/c"}


def test_vlmeta_per_group(tree: str) -> None:
    with TreeStore(tree, mode="a") as t:
        t.vlmeta["author"] = "me"
        t.vlmeta[:] = {"year": 2025, "shape": (3, 2)}
        g = t["/a"]
        g.vlmeta["level"] = 1
        t.get_subtree("/a/b").attrs["deep"] = [1, 2]
        del t.vlmeta["year"]
        assert t.vlmeta[:] == {"author": "me", "shape": (3, 2)}
        assert g.vlmeta[:] == {"level": 1}
        assert "/__vlmeta__" not in t and "/a/__vlmeta__" not in set(t.keys())
    t = TreeStore(tree, mode="r")
    assert t.vlmeta[:] == {"author": "me", "shape": (3, 2)}
    assert t["/a"].vlmeta["level"] == 1 and t["/a/b"].vlmeta["deep"] == [1, 2]
    with pytest.raises(ValueError, match="read-only"):
        t.vlmeta["x"] = 1
    with pytest.raises(ValueError, match="read-only"):
        del t["/a"].vlmeta["level"]
    with pytest.raises(NotImplementedError):
        t.vlmeta[1:2]


@pytest.mark.parametrize("form", FORMS)
def test_metadata_only_group(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"m.{form}")
    with TreeStore(path, mode="w", threshold=None) as t:
        t["/leaf"] = np.arange(2)
        t.get_subtree("/empty").vlmeta["k"] = "v"  # a group with nothing but vlmeta
        assert "/empty" in set(t.keys()) and isinstance(t["/empty"], TreeStore)
    t = TreeStore(path, mode="r")
    assert t.keys() == {"/leaf", "/empty"}
    assert t["/empty"].vlmeta["k"] == "v"
    assert list(t.walk()) == [("/", ["empty"], ["leaf"]), ("/empty", [], [])]


def test_vlmeta_embedded_or_external(tmp_path: Path) -> None:
    for threshold, external in ((0, True), (None, False)):
        path = str(tmp_path / f"v{threshold}.b2d")
        with TreeStore(path, mode="w", threshold=threshold) as t:
            t.vlmeta["a"] = 1
            t.vlmeta["b"] = 2
            assert ("/__vlmeta__" in t.map_tree) is external
        assert TreeStore(path, mode="r").vlmeta[:] == {"a": 1, "b": 2}


def _with_object(path: str) -> None:
    """A store holding an object root as python-blosc2 writes one (a CTable's layout)."""
    with TreeStore(path, mode="w") as t:
        t["/arr"] = np.arange(3)
        t["/table/_cols/x"] = np.arange(5)
        meta = pb.SChunk()
        meta.vlmeta["kind"] = "ctable"
        t["/table/_meta"] = meta
        t._estore._store.vlmeta[REGISTRY] = {
            "/table": {"kind": "ctable", "version": 1, "layout": "inline-tree-subtree"}
        }


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("registered", [True, False])
def test_object_roots(tmp_path: Path, form: str, registered: bool) -> None:
    path = str(tmp_path / f"o.{form}")
    _with_object(path)
    if not registered:  # found by its manifest, as python-blosc2 finds it
        with TreeStore(path, mode="a") as t:
            del t._estore._store.vlmeta[REGISTRY]
    t = TreeStore(path, mode="a")
    assert t.keys() == {"/arr", "/table"}
    assert "/table" in t and "/table/_meta" not in t
    assert list(t.walk()) == [("/", [], ["arr", "table"])]
    with pytest.raises(FormatError, match="schema"):  # a manifest without a schema
        t["/table"]
    with pytest.raises(ParamError, match="object root"):
        t.get_subtree("/table")
    with pytest.raises(ParamError, match="internal component"):
        t["/table/_cols/y"] = np.arange(2)
    with pytest.raises(ParamError, match="internal component"):
        del t["/table/_meta"]
    with pytest.raises(ParamError, match="object root"):
        t["/table"] = np.arange(2)
    del t["/table"]
    assert t.keys() == {"/arr"}
    t.close()
    assert TreeStore(path, mode="r").keys() == {"/arr"}


def test_unsupported_members_named(tmp_path: Path) -> None:
    path = str(tmp_path / "r.b2z")
    with TreeStore(path, mode="w") as t:
        with pytest.raises(NotImplementedError, match="RemoteStore"):
            t.open_remote("/x")
        with pytest.raises(NotImplementedError, match="RemoteStore"):
            t.materialize(str(tmp_path / "m.b2z"))
