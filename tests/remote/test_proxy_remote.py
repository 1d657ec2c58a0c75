"""Proxies of frames behind real servers on 127.0.0.1 (pyblosc2/proxies/byterange.py,
backends/ranges.py): HTTP with Range and ETags, and S3 (moto) through s3fs. What a read costs
is counted at the server; a replaced object makes a cache stale."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2
from pyblosc2.errors import FrameChangedError, ParamError

from .conftest import RangeServer

SHAPE, CHUNKS, BLOCKS = (600, 600), (300, 600), (30, 600)  # 1.4 MB chunks of 144 kB blocks


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return np.random.default_rng(1).random(SHAPE)


def _serve(http: RangeServer, data: np.ndarray, name: str = "p.b2nd") -> str:
    pyblosc2.asarray(
        data, chunks=CHUNKS, blocks=BLOCKS, urlpath=os.path.join(http.root, name), mode="w"
    )
    return http.url(name)


def test_a_lazy_open_fetches_only_the_blocks_read(http: RangeServer, data: np.ndarray) -> None:
    url = _serve(http, data)
    http.reset()
    p = pyblosc2.open(url, lazy=True)
    assert isinstance(p, pyblosc2.Proxy) and isinstance(p.src, pyblosc2.FsspecNDSource)
    assert p.src.stamp and ":etag:" in p.src.stamp
    sent = http.counts.bytes_sent
    np.testing.assert_array_equal(p[40:45, 10:20], data[40:45, 10:20])
    assert (
        http.counts.bytes_sent - sent < 200_000
    )  # one block, its chunk's block starts, the offsets
    np.testing.assert_array_equal(p[40:45, 10:20], data[40:45, 10:20])
    assert http.counts.bytes_sent - sent < 200_000  # cached
    np.testing.assert_array_equal(p[...], data)


def test_a_cache_of_a_replaced_object_is_stale(
    http: RangeServer, data: np.ndarray, tmp_path: Path
) -> None:
    url = _serve(http, data, "r.b2nd")
    cache = str(tmp_path / "c.b2nd")
    p = pyblosc2.Proxy(pyblosc2.FsspecNDSource(url), urlpath=cache, mode="w")
    np.testing.assert_array_equal(p[0:10], data[0:10])
    other = data[::-1].copy()
    _serve(http, other, "r.b2nd")
    with pytest.raises(ParamError, match="different remote bytes"):
        pyblosc2.Proxy(pyblosc2.FsspecNDSource(url), urlpath=cache, mode="a")
    with pytest.raises(FrameChangedError):  # the handle made before the change: If-Match
        p[500:510]
    got = pyblosc2.open(url, lazy=True, cache_storage=str(tmp_path / "store"))
    np.testing.assert_array_equal(got[0:10], other[0:10])


def test_a_cache_storage_is_reused_across_opens(
    http: RangeServer, data: np.ndarray, tmp_path: Path
) -> None:
    url = _serve(http, data, "s.b2nd")
    store = str(tmp_path / "store")
    np.testing.assert_array_equal(
        pyblosc2.open(url, lazy=True, cache_storage=store)[0:30], data[0:30]
    )
    http.reset()
    p = pyblosc2.open(url, lazy=True, cache_storage=store)
    np.testing.assert_array_equal(p[0:30], data[0:30])
    assert http.counts.bytes_sent < 20_000  # the stamp and the header: no chunk, no block


def test_a_frame_on_s3(
    s3_options: dict[str, Any], data: np.ndarray, tmp_path: Path, cblosc2: Any
) -> None:
    import s3fs

    key = f"test/{uuid.uuid4().hex[:8]}/a.b2nd"
    local = str(tmp_path / "a.b2nd")
    cblosc2.asarray(data, chunks=CHUNKS, blocks=BLOCKS, urlpath=local)
    s3fs.S3FileSystem(**s3_options).put_file(local, key)
    src = pyblosc2.FsspecNDSource(f"s3://{key}", storage_options=s3_options)
    cache = str(tmp_path / "c.b2nd")
    p = pyblosc2.Proxy(src, urlpath=cache)
    np.testing.assert_array_equal(p[100:120, 5:9], data[100:120, 5:9])
    np.testing.assert_array_equal(p[...], data)
    assert p.src.stamp == s3fs.S3FileSystem(**s3_options).ukey(key)


def test_a_server_that_ignores_ranges_is_read_once(http: RangeServer, data: np.ndarray) -> None:
    url = _serve(http, data, "n.b2nd")
    http.mode = "no-ranges"
    with pytest.warns(pyblosc2.errors.RemoteWarning, match="Range"):
        p = pyblosc2.open(url, lazy=True)
        np.testing.assert_array_equal(p[300:310, 0:5], data[300:310, 0:5])
    whole = http.counts.whole_bodies
    np.testing.assert_array_equal(p[...], data)
    assert http.counts.whole_bodies == whole  # served from the one download since
