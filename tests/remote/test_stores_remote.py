"""Stores at fsspec URLs (read-only): a .b2z over HTTP (against the local range server that
counts what it sends) and on S3 (moto's server), written by pyblosc2 and by python-blosc2;
members read where they lie in the archive, by ranges."""

from __future__ import annotations

import os
import pickle
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import pyblosc2
from pyblosc2.errors import ParamError

from .conftest import RangeServer

X = np.random.default_rng(3).random((400, 500))  # 1.6 MB, incompressible


def _store(lib: ModuleType, path: str) -> None:
    with lib.TreeStore(path, mode="w", threshold=1000) as t:
        t["/big"] = lib.asarray(X, chunks=(100, 500), blocks=(10, 500))
        t["/g/small"] = np.arange(5)
        t["/g/ext"] = np.arange(5000)
        t.vlmeta["origin"] = lib.__name__


@pytest.fixture(scope="module")
def served(http_server: RangeServer, cblosc2: ModuleType) -> dict[str, str]:
    names = {}
    for lib in (pyblosc2, cblosc2):
        names[lib.__name__] = name = f"{lib.__name__}.b2z"
        _store(lib, os.path.join(http_server.root, name))
    return names


@pytest.mark.parametrize("writer", ["pyblosc2", "blosc2"])
def test_b2z_over_http(http: RangeServer, served: dict[str, str], writer: str) -> None:
    url = http.url(served[writer])
    size = os.path.getsize(os.path.join(http.root, served[writer]))
    t = pyblosc2.open(url)
    assert isinstance(t, pyblosc2.TreeStore)
    assert t.keys() == {"/big", "/g", "/g/small", "/g/ext"}
    assert t.vlmeta["origin"] == writer
    np.testing.assert_array_equal(t["/g/small"][:], np.arange(5))
    np.testing.assert_array_equal(t["/g/ext"][:], np.arange(5000))
    sent = http.counts.bytes_sent
    np.testing.assert_array_equal(t["/big"][250, 10:20], X[250, 10:20])
    assert http.counts.bytes_sent - sent < size // 10  # the member read where it lies
    assert http.counts.bytes_sent < size // 2  # and the archive was never fetched whole
    offset, nbytes = t.member_window("/big")
    leaf = pickle.loads(pickle.dumps(t["/big"]))  # a copy reconnects to the URL
    np.testing.assert_array_equal(leaf[399], X[399])
    assert leaf.schunk.urlpath == url and nbytes > X.nbytes // 2 and offset > 0


def test_remote_store_is_read_only(http: RangeServer, served: dict[str, str]) -> None:
    url = http.url(served["pyblosc2"])
    with pytest.raises(ParamError, match="read-only"):
        pyblosc2.TreeStore(url, mode="a")
    t = pyblosc2.open(url)
    with pytest.raises(ValueError, match="read-only"):
        t["/new"] = np.arange(3)
    with pytest.raises(ValueError):
        t["/big"][0, 0] = 1.0


def test_remote_b2z_unpacked(http: RangeServer, served: dict[str, str], tmp_path: Path) -> None:
    t = pyblosc2.open(http.url(served["blosc2"]))
    out = t.to_b2d(str(tmp_path / "local.b2d"))
    with pyblosc2.TreeStore(out, mode="r") as local:
        np.testing.assert_array_equal(local["/big"][:], X)
        assert local.vlmeta["origin"] == "blosc2"


def test_missing_remote_store(http: RangeServer) -> None:
    with pytest.raises(FileNotFoundError):
        pyblosc2.open(http.url("none.b2z"))


def test_embed_store_over_http(http: RangeServer, cblosc2: ModuleType) -> None:
    e = cblosc2.EmbedStore(os.path.join(http.root, "e.b2e"), mode="w")
    e["/a"] = np.arange(100)
    r = pyblosc2.open(http.url("e.b2e"))
    assert isinstance(r, pyblosc2.EmbedStore) and set(r.keys()) == {"/a"}
    np.testing.assert_array_equal(r["/a"][:], np.arange(100))
    with pytest.raises(ValueError, match="read-only"):
        pyblosc2.open(http.url("e.b2e"), mode="a")


def test_remote_directory_store_is_named(http: RangeServer) -> None:
    with pytest.raises(NotImplementedError, match=r"remote \.b2d"):
        pyblosc2.DictStore(http.url("d.b2d"), mode="r")


def test_b2z_on_s3(s3_options: dict[str, Any], cblosc2: ModuleType, tmp_path: Path) -> None:
    import s3fs

    key = f"test/{uuid.uuid4().hex[:8]}"
    for lib in (pyblosc2, cblosc2):
        local = str(tmp_path / f"{lib.__name__}.b2z")
        _store(lib, local)
        s3fs.S3FileSystem(**s3_options).put_file(local, f"{key}/{lib.__name__}.b2z")
        t = pyblosc2.open(f"s3://{key}/{lib.__name__}.b2z", storage_options=s3_options)
        assert t.keys() == {"/big", "/g", "/g/small", "/g/ext"}
        np.testing.assert_array_equal(t["/big"][100:102], X[100:102])
        np.testing.assert_array_equal(t["/g/small"][:], np.arange(5))
        leaf = pickle.loads(pickle.dumps(t["/g/ext"]))  # reconnects with the same options
        np.testing.assert_array_equal(leaf[:], np.arange(5000))
