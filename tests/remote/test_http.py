"""Frames over HTTP (fsspec + aiohttp) against a local server that honours Range and counts
what it sends: lazy opens, block-granular slices, concurrent chunk fetches, the local cache,
and faults (404/500, truncated bodies, dropped connections, stalls, a file that changes)."""

from __future__ import annotations

import os
import pickle
from typing import Any

import numpy as np
import pytest

import pyblosc2
from pyblosc2.backends.fsspec import HEAD_BYTES, RETRIES, TAIL_BYTES
from pyblosc2.errors import FrameChangedError, RemoteError

from .conftest import Fault, RangeServer

SHAPE, CHUNKS, BLOCKS = (1000, 1000), (500, 1000), (50, 100)  # 4 MB chunks, 40 KB blocks
FAST_FAIL = {"client_kwargs": {"timeout": None}}


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return np.random.default_rng(0).random(SHAPE)


@pytest.fixture(scope="module")
def served(http_server: RangeServer, data: np.ndarray) -> str:
    """A 2-chunk b2nd file (incompressible, so each chunk stores about 4 MB)."""
    path = os.path.join(http_server.root, "a.b2nd")
    pyblosc2.asarray(
        data, chunks=CHUNKS, blocks=BLOCKS, urlpath=path, cparams={"codec": pyblosc2.Codec.LZ4}
    )
    return "a.b2nd"


def _timeout(seconds: float) -> dict[str, Any]:
    import aiohttp

    return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=seconds)}}


def test_open_reads_head_and_tail_only(http: RangeServer, served: str) -> None:
    a = pyblosc2.open(http.url(served))
    assert isinstance(a, pyblosc2.NDArray) and a.shape == SHAPE
    assert http.counts.heads == 0
    assert http.counts.gets == 2  # the head (whose Content-Range gives the size), the tail
    assert http.counts.bytes_sent == HEAD_BYTES + TAIL_BYTES


def test_small_slice_fetches_only_needed_blocks(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    a = pyblosc2.open(http.url(served))
    sent, gets = http.counts.bytes_sent, http.counts.gets
    np.testing.assert_array_equal(a[600:610, 300:310], data[600:610, 300:310])
    assert http.counts.bytes_sent - sent < 64 * 1024
    assert http.counts.gets - gets <= 3  # chunk header, block starts, one block


def test_full_read_fetches_chunks_concurrently(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    a = pyblosc2.open(http.url(served))
    http.overlap = 2  # each GET waits for a second one: only requests sent together overlap
    np.testing.assert_array_equal(a[...], data)
    assert http.counts.max_inflight >= 2
    assert http.counts.bytes_sent < a.schunk.cbytes + HEAD_BYTES + TAIL_BYTES + 4096


def test_schunk_slice_and_meta(http: RangeServer, served: str, data: np.ndarray) -> None:
    s = pyblosc2.open(http.url(served)).schunk
    assert s.meta["b2nd"][2] == list(SHAPE)
    got = np.frombuffer(s[10:20], np.float64)
    np.testing.assert_array_equal(got, data.ravel()[10:20])


def test_pickled_handle_reopens(http: RangeServer, served: str, data: np.ndarray) -> None:
    a = pickle.loads(pickle.dumps(pyblosc2.open(http.url(served))))
    np.testing.assert_array_equal(a[999, 990:], data[999, 990:])


def test_write_is_a_clear_error(http: RangeServer, served: str) -> None:
    a = pyblosc2.open(http.url(served))
    with pytest.raises(pyblosc2.errors.ParamError):
        a[0, 0] = 1.0
    with pytest.raises(NotImplementedError, match="mode='r'"):
        pyblosc2.open(http.url(served), mode="a")


def test_missing_is_file_not_found(http: RangeServer) -> None:
    with pytest.raises(FileNotFoundError):
        pyblosc2.open(http.url("missing.b2nd"))


@pytest.mark.parametrize("kind", ["500", "truncate", "drop"])
def test_transient_fault_is_retried(
    http: RangeServer, served: str, data: np.ndarray, kind: str
) -> None:
    a = pyblosc2.open(http.url(served))
    http.faults[served] = Fault(kind, times=RETRIES)
    np.testing.assert_array_equal(a[100:110, 5:9], data[100:110, 5:9])


@pytest.mark.parametrize("kind", ["500", "truncate", "drop", "404"])
def test_persistent_fault_is_remote_error(http: RangeServer, served: str, kind: str) -> None:
    a = pyblosc2.open(http.url(served))
    gets = http.counts.gets
    http.faults[served] = Fault(kind)
    with pytest.raises(RemoteError, match=r"127\.0\.0\.1"):
        a[100:110, 5:9]
    # bounded (aiohttp itself resends once on a connection closed under it)
    assert http.counts.gets - gets <= 2 * (RETRIES + 1)


def test_stalled_server_times_out(http: RangeServer, served: str) -> None:
    a = pyblosc2.open(http.url(served), storage_options=_timeout(0.5))
    http.faults[served] = Fault("stall")
    with pytest.raises(RemoteError, match="Timeout"):
        a[100:110, 5:9]


def test_answers_a_test_leaves_end_at_reset_and_count_in_no_later_test(
    http: RangeServer, served: str
) -> None:
    """The harness itself: the stalled answers above outlived their test and, ending later,
    took their figures from the next test's (``inflight`` -1, so ``counts`` stopped waiting
    for the answers in flight and a byte count came up short). ``reset`` ends them first."""
    a = pyblosc2.open(http.url(served), storage_options=_timeout(0.5))
    http.faults[served] = Fault("stall")
    with pytest.raises(RemoteError, match="Timeout"):
        a[100:110, 5:9]
    assert http.in_flight  # still stalled after the client gave up
    http.reset()
    assert not http.in_flight
    pyblosc2.open(http.url(served))
    assert http.counts.inflight == 0 and http.counts.gets == 2
    assert http.counts.bytes_sent == HEAD_BYTES + TAIL_BYTES


def test_file_changed_after_open(http: RangeServer, tmp_path: Any) -> None:
    path = os.path.join(http.root, "changing.b2nd")
    big = np.random.default_rng(1).integers(0, 2**40, 400_000)  # larger than head + tail
    pyblosc2.asarray(big, chunks=(100_000,), blocks=(10_000,), urlpath=path, mode="w")
    a = pyblosc2.open(http.url("changing.b2nd"))
    assert a.schunk.cbytes > HEAD_BYTES + TAIL_BYTES
    pyblosc2.asarray(big[::-1].copy(), chunks=(100_000,), blocks=(10_000,), urlpath=path, mode="w")
    with pytest.raises(FrameChangedError, match="changed since it was opened"):
        a[150_000:150_010]


def test_cache_storage_avoids_refetch(http: RangeServer, tmp_path: Any) -> None:
    path = os.path.join(http.root, "cached.b2nd")
    x = np.arange(300_000, dtype=np.int32)
    pyblosc2.asarray(x, chunks=(100_000,), blocks=(10_000,), urlpath=path, mode="w")
    cache = str(tmp_path / "cache")
    url = http.url("cached.b2nd")
    np.testing.assert_array_equal(pyblosc2.open(url, cache_storage=cache)[...], x)
    gets = http.counts.gets
    again = pyblosc2.open(url, cache_storage=cache)
    np.testing.assert_array_equal(again[...], x)
    assert http.counts.gets == gets + 2  # only the head and tail (with size and ETag)
    # a changed file invalidates the cache
    pyblosc2.asarray(-x, chunks=(100_000,), blocks=(10_000,), urlpath=path, mode="w")
    np.testing.assert_array_equal(pyblosc2.open(url, cache_storage=cache)[...], -x)
    assert http.counts.gets > gets


def test_sparse_frame_over_http(http: RangeServer) -> None:
    path = os.path.join(http.root, "sparse.b2nd")
    x = np.arange(1000, dtype=np.float32).reshape(10, 100)
    pyblosc2.asarray(x, chunks=(5, 50), blocks=(5, 10), urlpath=path, contiguous=False, mode="w")
    a = pyblosc2.open(http.url("sparse.b2nd"))
    assert not a.schunk.contiguous
    np.testing.assert_array_equal(a[...], x)
    np.testing.assert_array_equal(a[7, 60:70], x[7, 60:70])


def test_lazy_false_fetches_the_whole_frame(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    a = pyblosc2.open(http.url(served), lazy=False)
    sent = http.counts.bytes_sent
    np.testing.assert_array_equal(a[5], data[5])
    assert http.counts.bytes_sent == sent  # everything was in memory already


def test_many_threads_share_one_handle(http: RangeServer, served: str, data: np.ndarray) -> None:
    from concurrent.futures import ThreadPoolExecutor

    a = pyblosc2.open(http.url(served))
    keys = [(slice(r, r + 37), slice(c, c + 101)) for r in range(0, 900, 150) for c in (0, 450)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda k: a[k], keys))
    for k, g in zip(keys, got, strict=True):
        np.testing.assert_array_equal(g, data[k])
