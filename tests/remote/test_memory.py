"""Frames at fsspec ``memory://`` URLs (no server): what opens, what writes, what refuses."""

from __future__ import annotations

import os
import pickle
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pyblosc2
from pyblosc2.backends.fsspec import FsspecStore
from pyblosc2.errors import ParamError
from tests.bounded import run_child
from tests.conftest import _reference


@pytest.fixture
def mem() -> Iterator[str]:
    """A fresh memory:// directory URL."""
    fsspec = _reference("fsspec")
    base = f"memory://t{uuid.uuid4().hex[:8]}"
    yield base
    fs = fsspec.filesystem("memory")
    if fs.exists(base[len("memory://") :]):
        fs.rm(base[len("memory://") :], recursive=True)


def _put(url: str, data: bytes) -> None:
    import fsspec

    fsspec.filesystem("memory").pipe_file(url[len("memory://") :], data)


@pytest.fixture
def arr() -> pyblosc2.NDArray:
    a = pyblosc2.asarray(np.arange(6000, dtype=np.int32).reshape(60, 100), chunks=(20, 50))
    a.schunk.vlmeta["note"] = "remote"
    return a


def test_open_ndarray_reads_meta_and_vlmeta(mem: str, arr: pyblosc2.NDArray) -> None:
    _put(f"{mem}/a.b2nd", arr.to_cframe())
    b = pyblosc2.open(f"{mem}/a.b2nd")
    assert isinstance(b, pyblosc2.NDArray)
    assert b.schunk.vlmeta["note"] == "remote"
    assert "b2nd" in b.schunk.meta
    np.testing.assert_array_equal(b[13:47, 3:99], arr[13:47, 3:99])


def test_open_schunk(mem: str) -> None:
    s = pyblosc2.SChunk(chunksize=400, data=np.arange(300, dtype=np.int64), cparams={"typesize": 8})
    _put(f"{mem}/s.b2frame", s.to_cframe())
    t = pyblosc2.open(f"{mem}/s.b2frame")
    assert isinstance(t, pyblosc2.SChunk) and t.nchunks == s.nchunks
    assert t[10:14] == s[10:14]


def test_open_at_offset(mem: str, arr: pyblosc2.NDArray) -> None:
    _put(f"{mem}/emb.bin", b"x" * 100 + arr.to_cframe())
    b = pyblosc2.open(f"{mem}/emb.bin", offset=100)
    np.testing.assert_array_equal(b[...], arr[...])


@pytest.mark.parametrize("op", ["setitem", "append", "vlmeta"])
def test_writes_to_contiguous_url_raise(mem: str, arr: pyblosc2.NDArray, op: str) -> None:
    _put(f"{mem}/a.b2nd", arr.to_cframe())
    b = pyblosc2.open(f"{mem}/a.b2nd")
    with pytest.raises(ParamError, match="reading mode"):
        if op == "setitem":
            b[0, 0] = 1
        elif op == "append":
            b.schunk.append_data(np.zeros(1000, np.int32))
        else:
            b.schunk.vlmeta["x"] = 1


def test_create_contiguous_at_url_is_not_implemented(mem: str) -> None:
    with pytest.raises(NotImplementedError, match="contiguous=False"):
        pyblosc2.asarray(np.arange(10), urlpath=f"{mem}/c.b2nd", contiguous=True)


def test_sparse_frame_is_writable(mem: str) -> None:
    url = f"{mem}/sp.b2nd"
    x = np.arange(1000, dtype=np.float64)
    a = pyblosc2.asarray(x, chunks=(100,), blocks=(25,), urlpath=url, contiguous=False)
    a[150:250] = -1
    x[150:250] = -1
    a.schunk.vlmeta["k"] = [1, 2]
    b = pyblosc2.open(url)
    np.testing.assert_array_equal(b[...], x)
    assert b.schunk.vlmeta["k"] == [1, 2]
    assert not b.schunk.contiguous


def test_sparse_mode_w_replaces(mem: str) -> None:
    url = f"{mem}/sp.b2nd"
    pyblosc2.asarray(np.arange(10), urlpath=url, contiguous=False)
    pyblosc2.asarray(np.arange(5), urlpath=url, contiguous=False, mode="w")
    assert pyblosc2.open(url).shape == (5,)


def test_pickle_of_url_array(mem: str, arr: pyblosc2.NDArray) -> None:
    _put(f"{mem}/a.b2nd", arr.to_cframe())
    b = pickle.loads(pickle.dumps(pyblosc2.open(f"{mem}/a.b2nd")))
    np.testing.assert_array_equal(b[59], arr[59])


def test_lazy_false_holds_the_frame_in_memory(mem: str, arr: pyblosc2.NDArray) -> None:
    _put(f"{mem}/a.b2nd", arr.to_cframe())
    b = pyblosc2.open(f"{mem}/a.b2nd", lazy=False)
    assert not isinstance(b.schunk._frame.store, FsspecStore)
    np.testing.assert_array_equal(b[...], arr[...])


def test_file_url_opens_local_file(tmp_path: Path, arr: pyblosc2.NDArray) -> None:
    path = tmp_path / "a.b2nd"
    arr.save(str(path))
    b = pyblosc2.open(path.as_uri())
    np.testing.assert_array_equal(b[...], arr[...])


def test_storage_options_on_local_path_is_an_error(tmp_path: Path, arr: pyblosc2.NDArray) -> None:
    path = str(tmp_path / "a.b2nd")
    arr.save(path)
    with pytest.raises(ParamError, match="storage_options"):
        pyblosc2.open(path, storage_options={"anon": True})


def test_store_reads_count_and_prefetch(mem: str) -> None:
    payload = bytes(range(256)) * 400
    _put(f"{mem}/raw", payload)
    s = FsspecStore(f"{mem}/raw")
    opened = s.requests
    s.prefetch([(30_000, 40_000), (40_000, 50_000), (60_000, 61_000)])
    assert s.requests - opened == 2  # adjacent spans merged
    assert s.read(35_000, 10_000) == payload[35_000:45_000]
    assert s.requests - opened == 2  # served from memory


def test_import_does_not_load_fsspec_or_dask() -> None:
    code = "import sys, pyblosc2; print(sorted({'fsspec', 'dask'} & set(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = run_child(
        [sys.executable, "-c", code], "import pyblosc2", capture_output=True, text=True, env=env
    )
    assert out.stdout.strip() == "[]", out.stderr
