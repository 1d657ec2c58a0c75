"""meta.py's mappings: ``meta``/``vlmeta`` behave like python-blosc2's (``[:]``, ``to_dict``,
repr of the contents, ``mode``/``urlpath``, dict methods, one-commit bulk updates)."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.errors import ParamError, ParamTypeError

VALUES = {"a": b"val1", "b": "val2", "c": {b"lorem": 4231}, "d": [1, 2, 3], "e": (1, 2, 3)}


@pytest.fixture
def schunk() -> blosc2.SChunk:
    s = blosc2.SChunk(chunksize=16, meta={"m": 5, "n": "xy"})
    for k, v in VALUES.items():
        s.vlmeta[k] = v
    return s


def test_vlmeta_whole_slice_to_dict_and_repr(schunk) -> None:
    assert schunk.vlmeta[:] == VALUES
    assert schunk.vlmeta.to_dict() == {k.encode(): v for k, v in VALUES.items()}
    assert repr(schunk.vlmeta) == repr(VALUES) == str(schunk.vlmeta)
    assert repr(schunk.meta) == repr({"m": 5, "n": "xy"})


def test_dict_methods(schunk) -> None:
    vl = schunk.vlmeta
    assert list(vl) == list(VALUES) == list(vl.keys())
    assert list(vl.values()) == list(VALUES.values())
    assert dict(vl.items()) == VALUES
    assert len(vl) == 5 and "a" in vl and "z" not in vl
    assert vl.get("z", 3) == 3 and vl.get("a") == b"val1"
    del vl["b"]
    assert "b" not in vl and len(vl) == 4
    with pytest.raises(KeyError):
        vl["b"]
    m = schunk.meta
    assert m.get("m") == 5 and m.get("q") is None and list(m.keys()) == ["m", "n"]
    assert dict(m.items()) == {"m": 5, "n": "xy"}
    assert m[:] == {"m": 5, "n": "xy"}


def test_whole_slice_assignment_is_one_commit(schunk, monkeypatch) -> None:
    commits = []
    original = type(schunk).set_vlmeta_entries

    def spy(self, entries):
        commits.append(entries)
        return original(self, entries)

    monkeypatch.setattr(type(schunk), "set_vlmeta_entries", spy)
    schunk.vlmeta[:] = {"a": 1, "new": np.arange(3)}
    assert len(commits) == 1
    assert schunk.vlmeta["a"] == 1 and list(schunk.vlmeta)[-1] == "new"
    schunk.vlmeta.clear()
    assert len(commits) == 2 and len(schunk.vlmeta) == 0


def test_mode_and_urlpath(tmp_path) -> None:
    path = str(tmp_path / "v.b2frame")
    blosc2.SChunk(urlpath=path, mode="w").vlmeta["x"] = 1
    r = blosc2.open(path, mode="r")
    assert (r.vlmeta.mode, r.vlmeta.urlpath, r.meta.mode) == ("r", path, "r")
    assert blosc2.SChunk().vlmeta.urlpath is None
    with pytest.raises(ParamError):
        r.vlmeta["y"] = 2


@pytest.mark.parametrize("key", [slice(1, 2), slice(None, 3), slice(None, None, 2)])
def test_partial_slices_are_refused(schunk, key) -> None:
    with pytest.raises(NotImplementedError, match="unless"):
        schunk.vlmeta[key]
    with pytest.raises(NotImplementedError, match="unless"):
        schunk.vlmeta[key] = {}
    with pytest.raises(NotImplementedError, match="unless"):
        schunk.meta[key]


def test_bad_bulk_values_and_meta_deletion(schunk) -> None:
    with pytest.raises(ParamTypeError, match="mapping"):
        schunk.vlmeta[:] = [("a", 1)]
    with pytest.raises(ParamError, match="names"):
        schunk.vlmeta[:] = {"": 1}
    assert schunk.vlmeta[:] == VALUES  # nothing of a refused update was written
    with pytest.raises(NotImplementedError, match="Cannot remove a metalayer"):
        del schunk.meta["m"]


def test_membership_decodes_no_entry(schunk, monkeypatch) -> None:
    """``name in vlmeta`` (a reader polling a writer's flag) looks at the names only: no
    entry is decoded, present or absent."""
    decoded = []
    original = blosc2.meta.layers.VLMeta._decode

    def spy(self, name, stored):
        decoded.append(name)
        return original(self, name, stored)

    monkeypatch.setattr(blosc2.meta.layers.VLMeta, "_decode", spy)
    assert "a" in schunk.vlmeta and "z" not in schunk.vlmeta and "m" in schunk.meta
    assert decoded == []
    assert schunk.vlmeta["a"] == b"val1" and decoded == ["a"]
