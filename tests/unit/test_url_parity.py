"""python-blosc2 4.x's remote and file-level details (issue 34): whole frames saved to fsspec
URLs (frame/location.py put_cframe), containers refused there, ``file://`` URLs
(frame/location.py local_path, core.py), local copies of remote stores
(backends/localize.py), memory-map rules and ``BLOSC_INFO`` lines (storage.py,
backends/mmap.py), 0-d tensors (packing.py)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.errors import FormatError, ParamError

fsspec = pytest.importorskip("fsspec")


def _url(name: str) -> str:
    return f"memory://url-parity-{uuid.uuid4().hex[:8]}/{name}"


def test_saves_write_whole_frames_that_both_libraries_read(cblosc2: Any) -> None:
    x = np.arange(100.0).reshape(10, 10)
    urls = [_url(f"{n}.b2nd") for n in range(4)]
    assert blosc2.save_array(x, urls[0]) > 0
    blosc2.save_tensor(x, urls[1])
    blosc2.asarray(x, chunks=(5, 10)).save(urls[2], cparams=blosc2.CParams(codec=blosc2.Codec.LZ4))
    blosc2.save(blosc2.asarray(x), urls[3])
    fs = fsspec.filesystem("memory")
    np.testing.assert_array_equal(blosc2.load_array(urls[0]), x)
    np.testing.assert_array_equal(blosc2.load_tensor(urls[1]), x)
    for url in urls[2:]:
        np.testing.assert_array_equal(blosc2.open(url)[...], x)
        frame = fs.cat_file(url)
        np.testing.assert_array_equal(cblosc2.ndarray_from_cframe(frame)[...], x)
    assert blosc2.open(urls[2]).schunk.cparams.codec == blosc2.Codec.LZ4
    with pytest.raises(ParamError, match="reading mode"):
        blosc2.save_array(x, _url("r.b2nd"), mode="r")


@pytest.mark.parametrize(
    "make",
    [
        lambda url: blosc2.zeros((10,), urlpath=url, mode="w"),
        lambda url: blosc2.SChunk(chunksize=100, urlpath=url, mode="w"),
    ],
    ids=["ndarray", "schunk"],
)
def test_a_container_is_not_written_at_a_url_chunk_by_chunk(make: Any) -> None:
    """python-blosc2 refuses with a ValueError naming save(); pyblosc2's error is a
    ValueError and a NotImplementedError (contiguous frames; sparse ones are written)."""
    with pytest.raises(ValueError, match="save") as info:
        make(_url("c.b2nd"))
    assert isinstance(info.value, NotImplementedError)


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("file:///tmp/a.b2nd", "/tmp/a.b2nd"),
        ("file://localhost/tmp/a.b2nd", "/tmp/a.b2nd"),
        ("a.b2nd", "a.b2nd"),
    ],
)
def test_file_urls_name_local_paths(url: str, path: str) -> None:
    assert blosc2.core.normalize_urlpath(url) == path


@pytest.mark.skipif(os.name == "nt", reason="hosts and drives are reachable on Windows")
@pytest.mark.parametrize("url", ["file://server/share/a.b2nd", "file://C:/data/a.b2nd"])
def test_a_file_url_with_a_host_is_refused_off_windows(url: str) -> None:
    with pytest.raises(ParamError, match=url.split("/")[2]):
        blosc2.core.normalize_urlpath(url)


def test_a_local_copy_follows_the_remote(tmp_path: Path) -> None:
    fs = fsspec.filesystem("memory")
    base = _url("d.b2d")
    fs.pipe_file(base + "/a.bin", b"A" * 100)
    local = blosc2.core.localize_fsspec_url(base, tmp_path)
    assert Path(local, "a.bin").read_bytes() == b"A" * 100
    fs.pipe_file(base + "/a.bin", b"B" * 100)  # the same size: the ukey tells
    fs.pipe_file(base + "/sub/b.bin", b"b")
    local = blosc2.core.localize_fsspec_url(base, tmp_path)
    assert Path(local, "a.bin").read_bytes() == b"B" * 100 and Path(local, "sub", "b.bin").exists()


def test_a_remote_dict_store_is_opened_from_a_local_copy(tmp_path: Path) -> None:
    store = str(tmp_path / "s.b2d")
    with blosc2.DictStore(store, mode="w") as d:
        d["/a"] = np.arange(10)
    url = _url("s.b2d")
    fsspec.filesystem("memory").put(store, url, recursive=True)
    with blosc2.open(url, cache_storage=tmp_path / "cache") as d:
        np.testing.assert_array_equal(d["/a"][...], np.arange(10))
    with pytest.raises(NotImplementedError, match="mode='r'"):
        blosc2.open(url, mode="a", cache_storage=tmp_path / "cache")


def test_a_remote_listing_naming_outside_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = fsspec.filesystem("memory")
    base = _url("h.b2d")
    fs.pipe_file(base + "/a.bin", b"a")
    root = base.removeprefix("memory:/")
    monkeypatch.setattr(type(fs), "find", lambda self, path, **kw: [root + "/../../etc/passwd"])
    with pytest.raises(FormatError, match="listed name"):
        blosc2.core.localize_fsspec_url(base, tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("initial", [None, 1000])
def test_memory_maps_are_announced_as_c_blosc2_does(
    tmp_path: Path, capfd: Any, monkeypatch: Any, initial: Any
) -> None:
    monkeypatch.setenv("BLOSC_INFO", "")
    path = tmp_path / "m.b2frame"
    s = blosc2.SChunk(chunksize=80, urlpath=path, mmap_mode="w+", initial_mapping_size=initial)
    s.append_data(np.arange(10, dtype=np.int64))
    del s
    blosc2.open(path, mode="r", mmap_mode="r")
    err = capfd.readouterr().err
    size = 2**30 if initial is None else initial
    assert (
        f"Opened memory-mapped file {path} in mode w+ with an mapping size of {size} bytes." in err
    )
    assert f"in mode r with an mapping size of {path.stat().st_size} bytes." in err
    monkeypatch.delenv("BLOSC_INFO")
    blosc2.open(path, mode="r", mmap_mode="r")
    assert capfd.readouterr().err == ""


def test_memory_map_arguments_python_blosc2_refuses(tmp_path: Path) -> None:
    path = tmp_path / "m.b2frame"
    blosc2.SChunk(chunksize=80, urlpath=path, mmap_mode="w+")
    with pytest.raises(ParamError, match="w\\+ mmap_mode cannot be used to open an existing file"):
        blosc2.open(path, mode="a", mmap_mode="w+")
    with pytest.raises(ParamError, match="writing modes"):
        blosc2.open(path, mmap_mode="r", initial_mapping_size=100)
    with pytest.raises(ParamError, match="with mmap_mode"):
        blosc2.SChunk(urlpath=tmp_path / "n.b2frame", initial_mapping_size=100)
    with pytest.raises(ParamError, match="Only contiguous storage"):
        blosc2.SChunk(urlpath=tmp_path / "n", contiguous=False, mmap_mode="w+")


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_a_0d_tensor_keeps_its_shape(dtype: str, cblosc2: Any) -> None:
    scalar = np.array(17, dtype=dtype)
    packed = blosc2.pack_tensor(scalar)
    for unpack in (blosc2.unpack_tensor, cblosc2.unpack_tensor):
        back = unpack(packed)
        assert back.shape == () and back.dtype == scalar.dtype and back == scalar
    assert blosc2.unpack_tensor(cblosc2.pack_tensor(scalar)).shape == ()
