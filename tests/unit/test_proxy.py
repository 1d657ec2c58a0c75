"""pyblosc2.Proxy: a cache of a source filled as reads touch it (pyblosc2/proxies/proxy.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2
from pyblosc2.errors import FormatError, ParamError, ParamTypeError
from pyblosc2.vlarrays import UnsafeDeserializationError
from tests.bounded import run_child


class Spy(blosc2.ProxyNDSource):
    """An N-d source over an NDArray that records the chunks asked of it."""

    def __init__(self, a: Any) -> None:
        self.a, self.asked = a, []

    shape = property(lambda self: self.a.shape)
    chunks = property(lambda self: self.a.chunks)
    blocks = property(lambda self: self.a.blocks)
    dtype = property(lambda self: self.a.dtype)

    def get_chunk(self, nchunk: int) -> bytes:
        self.asked.append(nchunk)
        return self.a.schunk.get_chunk(nchunk)


def _array(tmp_path: Path | None = None, **kw: Any) -> tuple[np.ndarray, Any]:
    x = np.arange(31 * 17, dtype=np.float64).reshape(31, 17)
    urlpath = None if tmp_path is None else str(tmp_path / "src.b2nd")
    return x, blosc2.asarray(x, chunks=(8, 6), blocks=(3, 4), urlpath=urlpath, mode="w", **kw)


KEYS = [
    (),
    (slice(2, 9), slice(3, 16)),
    (5, slice(None)),
    (slice(None, None, 5), 3),
    ([4, 30, 4], slice(0, 2)),
    (np.array([True] * 10 + [False] * 21), slice(1, 4)),
    (Ellipsis, 16),
    (slice(30, 2, -4), slice(None, None, -3)),
]


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_reads_are_the_sources(key: Any) -> None:
    x, a = _array()
    p = blosc2.Proxy(a)
    np.testing.assert_array_equal(p[key], x[key])
    np.testing.assert_array_equal(p[...], x)


def test_only_the_chunks_a_key_touches_are_fetched_once() -> None:
    x, a = _array()
    src = Spy(a)
    p = blosc2.Proxy(src)
    np.testing.assert_array_equal(p[9:12, 7:13], x[9:12, 7:13])
    assert src.asked == [4, 5]  # chunk row 1 (rows 8..15), chunk columns 1 and 2
    np.testing.assert_array_equal(p[9:12, 7:13], x[9:12, 7:13])
    assert src.asked == [4, 5]


def test_a_byte_source(tmp_path: Path) -> None:
    data = np.arange(1000, dtype=np.int32)
    s = blosc2.SChunk(chunksize=400, data=data, cparams={"typesize": 4})
    p = blosc2.Proxy(s, urlpath=str(tmp_path / "c.b2frame"))
    assert p[10:20] == data[10:20].tobytes()
    assert p.shape == 1000 and p.dtype is None and p.fields is None
    assert p.schunk.vlmeta["proxy-fetched"] == bytes([1, 0])  # chunk 0 of 10


def test_a_file_cache_is_adopted_by_a_later_run(tmp_path: Path) -> None:
    x, a = _array(tmp_path)
    cache = str(tmp_path / "cache.b2nd")
    first = Spy(a)
    assert np.array_equal(blosc2.Proxy(first, urlpath=cache)[0:8], x[0:8])
    again = Spy(blosc2.open(str(tmp_path / "src.b2nd")))
    p = blosc2.Proxy(again, urlpath=cache, mode="a")
    np.testing.assert_array_equal(p[0:8], x[0:8])
    assert again.asked == []
    np.testing.assert_array_equal(p[...], x)
    assert sorted(again.asked) == [n for n in range(12) if n not in first.asked]


def test_mode_w_starts_afresh(tmp_path: Path) -> None:
    x, a = _array()
    cache = str(tmp_path / "cache.b2nd")
    blosc2.Proxy(a, urlpath=cache)[...]
    src = Spy(a)
    np.testing.assert_array_equal(blosc2.Proxy(src, urlpath=cache, mode="w")[0:1, 0:1], x[0:1, 0:1])
    assert src.asked == [0]


def test_a_changed_local_source_makes_its_cache_stale(tmp_path: Path) -> None:
    """pyblosc2 stamps a local file source (python-blosc2 adopts such a cache on its geometry
    alone, and serves what the source held before): a cache of bytes that changed since is
    refused with mode='a', and rebuilt with mode='w'."""
    x, a = _array(tmp_path)
    cache = str(tmp_path / "cache.b2nd")
    blosc2.Proxy(a, urlpath=cache)[...]
    y = x + 1000
    b = blosc2.asarray(
        y, chunks=(8, 6), blocks=(3, 4), urlpath=str(tmp_path / "src.b2nd"), mode="w"
    )
    with pytest.raises(ParamError, match="different remote bytes"):
        blosc2.Proxy(b, urlpath=cache, mode="a")
    np.testing.assert_array_equal(blosc2.Proxy(b, urlpath=cache, mode="w")[...], y)


def test_opening_a_cache_needs_deserialize_full(tmp_path: Path) -> None:
    x, a = _array(tmp_path)
    cache = str(tmp_path / "cache.b2nd")
    blosc2.Proxy(a, urlpath=cache)[0:8]
    with pytest.raises(UnsafeDeserializationError, match="proxy"):
        blosc2.open(cache)
    p = blosc2.open(cache, mode="a", deserialize="full")
    assert isinstance(p, blosc2.Proxy)
    np.testing.assert_array_equal(p[...], x)


def test_opening_a_stale_cache_empties_it(tmp_path: Path) -> None:
    x, a = _array(tmp_path)
    cache = str(tmp_path / "cache.b2nd")
    blosc2.Proxy(a, urlpath=cache)[...]
    y = -x
    blosc2.asarray(y, chunks=(8, 6), blocks=(3, 4), urlpath=str(tmp_path / "src.b2nd"), mode="w")
    np.testing.assert_array_equal(blosc2.open(cache, mode="a", deserialize="full")[...], y)


def test_a_read_only_stale_cache_reads_through_and_writes_nothing(tmp_path: Path) -> None:
    x, a = _array(tmp_path)
    cache = tmp_path / "cache.b2nd"
    blosc2.Proxy(a, urlpath=str(cache))[...]
    y = x * 2
    blosc2.asarray(y, chunks=(8, 6), blocks=(3, 4), urlpath=str(tmp_path / "src.b2nd"), mode="w")
    before = (cache.read_bytes(), os.stat(cache).st_mtime_ns)
    p = blosc2.open(str(cache), mode="r", deserialize="full")
    np.testing.assert_array_equal(p[3:20], y[3:20])
    assert (cache.read_bytes(), os.stat(cache).st_mtime_ns) == before
    with pytest.raises(ParamError, match="reading mode"):
        p.fetch()


def test_a_cache_whose_source_is_unknown_is_refused(tmp_path: Path) -> None:
    _, a = _array()  # in memory: the cache cannot say where its source is
    cache = str(tmp_path / "cache.b2nd")
    blosc2.Proxy(a, urlpath=cache)[...]
    with pytest.raises(FormatError, match="Could not find the source"):
        blosc2.open(cache, deserialize="full")


@pytest.mark.parametrize(
    "name", ["proxy-fetched", "proxy-fetched-blocks", "proxy-stamp", "proxy-index"]
)
def test_the_proxys_vlmeta_cannot_be_set_by_callers(name: str) -> None:
    with pytest.raises(ParamError, match="reserved"):
        blosc2.Proxy(_array()[1], vlmeta={name: b"\xff"})
    assert blosc2.Proxy(_array()[1], vlmeta={"mine": 1}).vlmeta["mine"] == 1


def test_an_existing_cache_takes_no_constructor_arguments(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.b2nd")
    blosc2.Proxy(_array()[1], urlpath=cache)
    with pytest.raises(ParamError, match="contiguous"):
        blosc2.Proxy(_array()[1], urlpath=cache, contiguous=False)


@pytest.mark.parametrize(
    ("other", "match"),
    [
        (
            lambda: blosc2.asarray(np.zeros((31, 17)), chunks=(4, 6), blocks=(3, 4)),
            "different source",
        ),
        (lambda: blosc2.SChunk(chunksize=8, data=bytes(80)), "does not fit"),
    ],
    ids=["geometry", "kind"],
)
def test_a_cache_of_another_source_is_refused(tmp_path: Path, other: Any, match: str) -> None:
    cache = str(tmp_path / "cache.b2nd")
    blosc2.Proxy(_array()[1], urlpath=cache)[...]
    with pytest.raises(ParamError, match=match):
        blosc2.Proxy(other(), urlpath=cache)


def test_a_container_that_is_no_cache_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "plain.b2nd")
    blosc2.asarray(np.zeros((31, 17)), chunks=(8, 6), blocks=(3, 4), urlpath=path)
    with pytest.raises(ParamError, match="not a proxy cache"):
        blosc2.Proxy(_array()[1], urlpath=path)


def test_an_evicted_chunk_is_fetched_again(tmp_path: Path) -> None:
    x, a = _array()
    src = Spy(a)
    p = blosc2.Proxy(src, urlpath=str(tmp_path / "cache.b2nd"))
    np.testing.assert_array_equal(p[0:2, 0:2], x[0:2, 0:2])
    p.schunk.update_special(0, blosc2.SpecialValue.UNINIT)
    np.testing.assert_array_equal(p[0:2, 0:2], x[0:2, 0:2])
    assert src.asked == [0, 0]


class BadSource(Spy):
    """Serves a chunk that does not fit the cache."""

    def __init__(self, a: Any, chunk: bytes) -> None:
        super().__init__(a)
        self.bad = chunk

    def get_chunk(self, nchunk: int) -> bytes:
        return self.bad if nchunk == 1 else super().get_chunk(nchunk)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: blosc2.compress2(np.zeros(8 * 6, np.float64), typesize=8), "nbytes"),  # unpadded
        (
            lambda: blosc2.compress2(np.arange(9 * 8, dtype=np.float64), typesize=8, blocksize=64),
            "blocksize",
        ),
        (lambda: blosc2.compress2(np.zeros(9 * 8, np.float32), typesize=4), "nbytes"),
        (lambda: b"\x05\x01" + bytes(30), "cbytes"),
    ],
    ids=["nbytes", "blocksize", "typesize", "garbage"],
)
def test_a_source_chunk_that_does_not_fit_is_refused_before_a_byte_is_written(
    tmp_path: Path, make: Any, field: str
) -> None:
    x, a = _array()
    cache = tmp_path / "cache.b2nd"
    p = blosc2.Proxy(BadSource(a, make()), urlpath=str(cache))
    np.testing.assert_array_equal(p[0:2, 0:2], x[0:2, 0:2])
    before = cache.read_bytes()
    with pytest.raises(FormatError):
        p[0:2, 6:8]
    assert cache.read_bytes() == before
    np.testing.assert_array_equal(p[0:2, 0:2], x[0:2, 0:2])


def test_a_never_written_source_chunk_is_cached_as_zeros() -> None:
    a = blosc2.uninit((10,), np.int32, chunks=(4,), blocks=(2,))
    src = Spy(a)
    p = blosc2.Proxy(src)
    np.testing.assert_array_equal(p[...], np.zeros(10, np.int32))
    np.testing.assert_array_equal(p[...], np.zeros(10, np.int32))
    assert src.asked == [0, 1, 2]  # once each: not taken for evicted chunks


def test_a_lazy_expression_source_is_not_implemented() -> None:
    class LazyExpr:
        shape, dtype = (3,), np.dtype("f8")

        def compute(self) -> None: ...

    with pytest.raises(NotImplementedError, match="lazy expression"):
        blosc2.Proxy(LazyExpr())


def test_a_source_without_the_protocol_is_refused() -> None:
    class Half:
        shape = (3,)

    with pytest.raises(ParamTypeError, match="chunks, blocks, dtype"):
        blosc2.Proxy(Half())


def test_afetch_runs_at_most_max_concurrency_fetches() -> None:
    x, a = _array()
    inflight, seen = [0], [0]

    class Slow(Spy):
        async def aget_chunk(self, nchunk: int) -> bytes:
            inflight[0] += 1
            seen[0] = max(seen[0], inflight[0])
            await asyncio.sleep(0)
            inflight[0] -= 1
            return self.get_chunk(nchunk)

    src = Slow(a)
    cache = asyncio.run(blosc2.Proxy(src).afetch(max_concurrency=3))
    np.testing.assert_array_equal(cache[...], x)
    assert seen[0] == 3 and sorted(src.asked) == list(range(12))


def test_fields_and_simple_proxies() -> None:
    data = np.zeros(12, dtype=[("i", "i4"), ("f", "f8")])
    data["i"], data["f"] = np.arange(12), np.arange(12) / 2
    p = blosc2.Proxy(blosc2.asarray(data, chunks=(5,), blocks=(2,)))
    assert sorted(p.fields) == ["f", "i"]
    np.testing.assert_array_equal(p.fields["f"][3:6], data["f"][3:6])
    s = blosc2.SimpleProxy(np.arange(10.0))
    assert s.shape == (10,) and s.dtype == np.float64 and s.ndim == 1 and s.chunks == (10,)
    np.testing.assert_array_equal(s[2:4], [2.0, 3.0])
    a = blosc2.asarray(np.arange(3))
    assert blosc2.as_simpleproxy(a) is a
    assert [type(v).__name__ for v in blosc2.as_simpleproxy([1], p)] == ["SimpleProxy", "Proxy"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.lists(st.integers(1, 12), min_size=1, max_size=3),
    data=st.data(),
)
def test_any_sequence_of_reads_returns_the_source(shape: list[int], data: Any) -> None:
    chunks = [data.draw(st.integers(1, n)) for n in shape]
    blocks = [data.draw(st.integers(1, c)) for c in chunks]
    x = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    src = Spy(blosc2.asarray(x, chunks=chunks, blocks=blocks))
    p = blosc2.Proxy(src)
    for _ in range(3):
        key = tuple(
            data.draw(
                st.one_of(
                    st.integers(0, n - 1),
                    st.builds(slice, st.integers(0, n), st.integers(0, n), st.integers(1, 3)),
                    st.lists(st.integers(-n, n - 1), min_size=1, max_size=3),
                )
            )
            for n in shape
        )
        if sum(isinstance(k, list) for k in key) > 1:
            continue  # numpy pairs several lists: a different selection
        np.testing.assert_array_equal(p[key], x[key])
    assert len(src.asked) == len(set(src.asked))  # nothing fetched twice


def test_the_proxy_page_runs(tmp_path: Path) -> None:
    """Every python block of docs/proxy.md, in a fresh interpreter."""
    import re
    import sys

    pytest.importorskip("fsspec")
    page = (Path(__file__).resolve().parents[2] / "docs" / "proxy.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) >= 5
    env = {**os.environ, "PYTHONPATH": str(Path(blosc2.__file__).resolve().parents[1])}
    for n, block in enumerate(blocks):
        for run in range(2):
            done = run_child(
                [sys.executable, "-c", block],
                f"run block {n} of docs/proxy.md (run {run + 1} of 2)",
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stderr
