"""Proxy caches and random streams shared with python-blosc2 4.14.1, both ways, with real
files: a cache one library filled is adopted by the other, which fetches only what is missing
and reads the same values."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2


def _spy(lib: Any, a: Any) -> Any:
    """A source over ``a`` (an NDArray of ``lib``) recording the chunks asked of it."""

    class Spy(lib.ProxyNDSource):
        asked: list[int]

        def __init__(self) -> None:
            self.asked = []

        shape = property(lambda self: a.shape)
        chunks = property(lambda self: a.chunks)
        blocks = property(lambda self: a.blocks)
        dtype = property(lambda self: a.dtype)

        def get_chunk(self, nchunk: int) -> bytes:
            self.asked.append(nchunk)
            return a.schunk.get_chunk(nchunk)

    return Spy()


@pytest.mark.parametrize("first", ["pyblosc2", "blosc2"])
def test_a_cache_filled_by_one_library_is_adopted_by_the_other(
    tmp_path: Path, cblosc2: Any, first: str
) -> None:
    libs = {"pyblosc2": pyblosc2, "blosc2": cblosc2}
    one, other = libs[first], libs["blosc2" if first == "pyblosc2" else "pyblosc2"]
    x = np.arange(120 * 50, dtype=np.float64).reshape(120, 50)
    src = str(tmp_path / "src.b2nd")
    cblosc2.asarray(x, chunks=(20, 50), blocks=(5, 50), urlpath=src, mode="w")
    cache = str(tmp_path / "cache.b2nd")
    s1 = _spy(one, one.open(src))
    np.testing.assert_array_equal(one.Proxy(s1, urlpath=cache, mode="w")[10:50], x[10:50])
    s2 = _spy(other, other.open(src))
    p = other.Proxy(s2, urlpath=cache, mode="a")
    np.testing.assert_array_equal(p[...], x)
    assert sorted(s2.asked) == [n for n in range(6) if n not in s1.asked]
    assert s1.asked == [0, 1, 2]


def test_python_blosc2_opens_a_proxy_pyblosc2_wrote(tmp_path: Path, cblosc2: Any) -> None:
    x = np.arange(300, dtype=np.int32)
    src, cache = str(tmp_path / "src.b2nd"), str(tmp_path / "cache.b2nd")
    a = pyblosc2.asarray(x, chunks=(50,), blocks=(10,), urlpath=src, mode="w")
    pyblosc2.Proxy(a, urlpath=cache)[0:60]
    p = cblosc2.open(cache, mode="a", deserialize="full")
    assert isinstance(p, cblosc2.Proxy)
    np.testing.assert_array_equal(p[...], x)
    q = pyblosc2.open(cache, mode="a", deserialize="full")  # and back: theirs filled the rest
    np.testing.assert_array_equal(q[...], x)
    assert q.schunk.vlmeta["proxy-fetched"] == bytes([0b111111])


@pytest.mark.parametrize("first", ["pyblosc2", "blosc2"])
def test_block_caches_of_fsspec_sources_are_shared(
    first: str, cblosc2: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """The stamp (fsspec's ukey), the block bitmap and the kept index are the same in both
    libraries: neither reads anything the other already fetched."""
    fsspec = pytest.importorskip("fsspec")
    libs = {"pyblosc2": pyblosc2, "blosc2": cblosc2}
    for lib in libs.values():
        monkeypatch.setattr(lib.proxy_source, "BLOCK_MIN_CBYTES", 0)
    one, other = libs[first], libs["blosc2" if first == "pyblosc2" else "pyblosc2"]
    x = np.random.default_rng(0).random((200, 200))
    name = f"/interop-{uuid.uuid4().hex[:8]}/a.b2nd"
    fsspec.filesystem("memory").pipe_file(
        name, cblosc2.asarray(x, chunks=(100, 200), blocks=(10, 20)).to_cframe()
    )
    url, cache = f"memory://{name.lstrip('/')}", str(tmp_path / "c.b2nd")
    p = one.Proxy(one.FsspecNDSource(url), urlpath=cache, mode="w")
    np.testing.assert_array_equal(p[0:5, 0:10], x[0:5, 0:10])
    np.testing.assert_array_equal(p[150:160], x[150:160])
    del p
    src = other.FsspecNDSource(url)
    reads: list[tuple[int, int]] = []
    read = src.read_range
    src.read_range = lambda o, s: (reads.append((o, s)), read(o, s))[1]
    q = other.Proxy(src, urlpath=cache, mode="a")
    np.testing.assert_array_equal(q[0:5, 0:10], x[0:5, 0:10])
    np.testing.assert_array_equal(q[150:160], x[150:160])
    assert reads == []
    np.testing.assert_array_equal(q[...], x)
    assert reads


@pytest.mark.parametrize(
    ("method", "args", "kw"),
    [
        ("random", ((30, 41),), {"chunks": (7, 9)}),
        ("normal", (1.0, 2.0), {"shape": (30, 41), "chunks": (30, 5)}),
        ("integers", (0, 100), {"shape": (1000,), "chunks": (128,), "dtype": np.int16}),
        ("choice", (5,), {"shape": (100,), "chunks": (7,)}),
        ("dirichlet", ([1.0, 2.0, 3.0],), {"shape": (50,), "chunks": (7, 3)}),
        ("permutation", (100,), {}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_random_draws_python_blosc2s_values(cblosc2: Any, method: str, args: Any, kw: Any) -> None:
    """For the same seed, shape and chunks, each draw (and the next) is python-blosc2's."""
    ours, theirs = pyblosc2.random.default_rng(7), cblosc2.random.default_rng(7)
    for _ in range(2):
        a = getattr(ours, method)(*args, **kw)
        b = getattr(theirs, method)(*args, **kw)
        np.testing.assert_array_equal(a[...], b[...])
        assert a.chunks == b.chunks
