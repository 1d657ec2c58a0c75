"""``pyblosc2.open``/``from_cframe`` over stores (stores/opener.py): what each path opens as,
in python-blosc2's order (store suffixes first, a frame at an offset directly, other paths as
frames and then as stores), and the containers pyblosc2 does not open named."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import ParamError, ParamTypeError


@pytest.fixture
def stores(tmp_path: Path) -> Path:
    with pb.TreeStore(str(tmp_path / "t.b2z"), mode="w") as t:
        t["/a"] = np.arange(5)
    with pb.DictStore(str(tmp_path / "d.b2d"), mode="w", threshold=None) as d:
        d["/a"] = np.arange(5)
    pb.EmbedStore(str(tmp_path / "e.b2e"), mode="w")["/a"] = np.arange(5)
    return tmp_path


@pytest.mark.parametrize(
    ("name", "cls"),
    [("t.b2z", "TreeStore"), ("d.b2d", "DictStore"), ("e.b2e", "EmbedStore")],
)
def test_by_metalayer(stores: Path, name: str, cls: str) -> None:
    s = pb.open(str(stores / name))
    assert type(s).__name__ == cls
    np.testing.assert_array_equal(s["/a"][:], np.arange(5))


def test_renamed_stores_are_found_by_their_metalayer(stores: Path) -> None:
    shutil.copy(stores / "t.b2z", stores / "archive.zip")  # a zip: regular open fails first
    shutil.copytree(stores / "d.b2d", stores / "plaindir")  # a directory with embed.b2e
    shutil.copytree(stores / "d.b2d", stores / "asdict.b2z")  # the metalayer wins the suffix
    assert type(pb.open(str(stores / "archive.zip"))).__name__ == "TreeStore"
    assert type(pb.open(str(stores / "plaindir"))).__name__ == "DictStore"
    assert type(pb.open(str(stores / "asdict.b2z"))).__name__ == "DictStore"


def test_suffix_added_when_missing(stores: Path) -> None:
    assert type(pb.open(str(stores / "t"))).__name__ == "TreeStore"  # t.b2z exists


def test_embedded_store_of_a_dict_store(stores: Path) -> None:
    # python-blosc2 opens it as a DictStore and fails: it is an EmbedStore
    e = pb.open(str(stores / "d.b2d" / "embed.b2e"))
    assert type(e).__name__ == "EmbedStore" and "b2dict" in e.storage.meta


def test_new_store_by_suffix(tmp_path: Path) -> None:
    t = pb.open(str(tmp_path / "new.b2z"), mode="w")
    assert type(t).__name__ == "TreeStore"
    t["/x"] = np.arange(2)
    t.close()
    assert set(pb.open(str(tmp_path / "new.b2z")).keys()) == {"/x"}


def test_frames_stay_frames(tmp_path: Path, stores: Path) -> None:
    p = str(tmp_path / "a.b2nd")
    pb.asarray(np.arange(10), urlpath=p, mode="w")
    assert isinstance(pb.open(p), pb.NDArray)
    pb.SChunk(data=b"x", urlpath=str(tmp_path / "s.b2frame"), mode="w")
    assert isinstance(pb.open(str(tmp_path / "s.b2frame")), pb.SChunk)
    offset, _ = pb.open(str(stores / "t.b2z")).member_window("/a")
    member = pb.open(str(stores / "t.b2z"), offset=offset)  # a frame at an offset: directly
    np.testing.assert_array_equal(member[:], np.arange(5))


def test_refusals(stores: Path, tmp_path: Path) -> None:
    with pytest.raises(pb.FormatError):  # a nonzero offset opens a frame there: none
        pb.open(str(stores / "t.b2z"), offset=5)
    with pytest.raises(ParamError, match="does not take"):
        pb.open(str(stores / "t.b2z"), chunks=(3,))
    with pytest.raises(NotImplementedError, match="Caterva2"):
        pb.open(pb.URLPath("@public/x.b2nd", "https://cat2.cloud/demo"))
    with pytest.raises(FileNotFoundError):
        pb.open(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="deserialize"):
        pb.open(str(stores / "t.b2z"), deserialize="unsafe")


def test_from_cframe(stores: Path) -> None:
    e = pb.EmbedStore()
    e["/a"] = np.arange(3)
    assert type(pb.from_cframe(e.to_cframe())).__name__ == "EmbedStore"
    assert isinstance(pb.from_cframe(pb.asarray(np.arange(3)).to_cframe()), pb.NDArray)
    assert isinstance(pb.from_cframe(pb.SChunk(data=b"abc").to_cframe()), pb.SChunk)


def test_a_proxy_cache_is_an_active_value(tmp_path: Path) -> None:
    """Opening a proxy's cache opens the source it names: refused under deserialize='safe'
    (python-blosc2 4.x); a cache in a cframe (no file to fill) is not rebuilt."""
    p = str(tmp_path / "c.b2frame")
    pb.SChunk(data=b"abc", urlpath=p, mode="w", meta={"proxy-source": {"version": 1}})
    with pytest.raises(pb.UnsafeDeserializationError, match="proxy"):
        pb.open(p)
    cframe = pb.SChunk(data=b"abc", meta={"proxy-source": {"version": 1}}).to_cframe()
    with pytest.raises(NotImplementedError, match="Proxy"):
        pb.from_cframe(cframe)
    # b2o carriers (saved expressions) open: tests/unit/test_saved_open.py


@pytest.mark.parametrize(
    ("layer", "name"), [("vlarray", "ObjectArray"), ("batcharray", "BatchArray")]
)
def test_containers_open_as_their_class(tmp_path: Path, layer: str, name: str) -> None:
    """A frame tagged with a vlarrays layer opens as that container (vlarrays.open_member)."""
    p = str(tmp_path / "c.b2frame")
    pb.SChunk(data=b"abc", urlpath=p, mode="w", meta={layer: {"version": 1}})
    assert type(pb.open(p)).__name__ == name
    cframe = pb.SChunk(data=b"abc", meta={layer: {"version": 1}}).to_cframe()
    assert type(pb.from_cframe(cframe)).__name__ == name


def test_listarray_without_its_spec_is_refused(tmp_path: Path) -> None:
    p = str(tmp_path / "c.b2frame")
    pb.SChunk(data=b"abc", urlpath=p, mode="w", meta={"listarray": {"version": 1}})
    with pytest.raises(ParamTypeError, match="spec"):
        pb.open(p)


def test_blosc2_ext_open(tmp_path: Path) -> None:
    p = str(tmp_path / "a.b2nd")
    pb.asarray(np.arange(4), urlpath=p, mode="w")
    assert isinstance(pb.blosc2_ext.open(p, "r", 0), pb.NDArray)
    from pyblosc2.dict_store import DictStore  # python-blosc2's module names
    from pyblosc2.embed_store import EmbedStore, estore_from_cframe
    from pyblosc2.tree_store import TreeStore

    assert (DictStore, TreeStore, EmbedStore) == (pb.DictStore, pb.TreeStore, pb.EmbedStore)
    assert estore_from_cframe is pb.estore_from_cframe
