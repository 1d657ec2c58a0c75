"""Remote frames from servers as they are (all on 127.0.0.1, started by the tests): one that
refuses suffix ranges (``bytes=-16384`` answered 400, as RangeHTTPServer and some CDNs and
proxies do), one that refuses every range, and one without Range support (``200`` and the
whole body). The range-less object is fetched once, streamed to a temporary file, with one
warning; the peak memory of a child process opening it stays under half the file's size.
And ``open()`` takes fsspec file objects and plain binary file objects."""

from __future__ import annotations

import io
import json
import os
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import pyblosc2
from pyblosc2.backends.fsspec import HEAD_BYTES, TAIL_BYTES
from pyblosc2.errors import ParamError, RemoteWarning
from tests.bounded import run_child

from .conftest import RangeServer

SHAPE, CHUNKS, BLOCKS = (400, 500), (100, 500), (20, 100)
BIG_MIB = 48  # the range-less memory check: an incompressible 48 MiB frame


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return np.random.default_rng(3).random(SHAPE)


@pytest.fixture(scope="module")
def served(http_server: RangeServer, data: np.ndarray) -> str:
    path = os.path.join(http_server.root, "s.b2nd")
    pyblosc2.asarray(data, chunks=CHUNKS, blocks=BLOCKS, urlpath=path, mode="w")
    return "s.b2nd"


@pytest.fixture(scope="module")
def big(http_server: RangeServer) -> str:
    """A frame of BIG_MIB MiB of random bytes stored as they are (clevel 0)."""
    path = os.path.join(http_server.root, "big.b2nd")
    x = np.random.default_rng(0).integers(0, 256, BIG_MIB << 20, dtype=np.uint8)
    pyblosc2.asarray(
        x.reshape(-1, 1 << 16), chunks=(64, 1 << 16), urlpath=path, mode="w", cparams={"clevel": 0}
    )
    return "big.b2nd"


def _open_quietly(url: str) -> tuple[object, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        a = pyblosc2.open(url)
    return a, [w for w in seen if issubclass(w.category, RemoteWarning)]


def test_suffix_refusing_server_opens_with_absolute_ranges(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    http.mode = "no-suffix"
    a, warned = _open_quietly(http.url(served))
    assert warned == []
    assert http.counts.refused == [f"bytes=-{TAIL_BYTES}"]
    assert http.counts.heads == 0  # the size came from the first range's Content-Range
    size = os.path.getsize(os.path.join(http.root, served))
    assert sorted(r[1:] for r in http.counts.ranges) == [
        (0, HEAD_BYTES),
        (size - TAIL_BYTES, size),
    ]
    np.testing.assert_array_equal(a[150:160, 20:30], data[150:160, 20:30])
    np.testing.assert_array_equal(a[...], data)
    assert http.counts.refused == [f"bytes=-{TAIL_BYTES}"]  # reads use absolute ranges


def test_server_refusing_every_range_is_read_once_through_head(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    http.mode = "refuse-ranges"
    a, warned = _open_quietly(http.url(served))
    assert len(warned) == 1
    assert http.counts.heads == 1 and http.counts.whole_bodies == 1
    gets = http.counts.gets
    np.testing.assert_array_equal(a[...], data)
    assert http.counts.gets == gets


def test_rangeless_server_is_fetched_once_with_one_warning(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    http.mode = "no-ranges"
    size = os.path.getsize(os.path.join(http.root, served))
    a, warned = _open_quietly(http.url(served))
    assert len(warned) == 1
    message = str(warned[0].message)
    assert "does not answer Range requests" in message and f"({size} bytes)" in message
    # two concurrent GETs (the open's one round trip); the body of one is read and the other
    # answer dropped unread (its bytes may still reach the socket buffers: the 48 MiB case
    # below shows the server could not send it whole)
    assert http.counts.gets == 2 and a.schunk.bytes_read <= size
    np.testing.assert_array_equal(a[5:7, 3:9], data[5:7, 3:9])
    np.testing.assert_array_equal(a[...], data)
    assert http.counts.gets == 2  # every read served from the temporary file


def test_rangeless_object_lazy_false_and_pickled(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    http.mode = "no-ranges"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RemoteWarning)
        whole = pyblosc2.open(http.url(served), lazy=False)
        np.testing.assert_array_equal(whole[...], data)
        a = pyblosc2.open(http.url(served))
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(a))[...], data)


_CHILD = """
import json, resource, sys, warnings
import numpy as np
import aiohttp, fsspec, fsspec.implementations.http  # imported before the baseline
import pyblosc2

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB

base = peak()
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    a = pyblosc2.open(sys.argv[1])
row = a[70, :8]
last = a[-1, -4:]
print(json.dumps({"base": base, "peak": peak(), "warnings": len(seen),
                  "row": row.tolist(), "last": last.tolist()}))
"""


@pytest.mark.parametrize("mode", ["no-ranges", "ranges"])
def test_rangeless_open_peak_memory_is_under_half_the_file(
    http: RangeServer, big: str, tmp_path: Path, mode: str
) -> None:
    """A child process opens the frame and reads two rows; its peak RSS (``ru_maxrss``) grows
    by less than half the file's size (the whole body was streamed to a temporary file)."""
    http.mode = mode
    size = os.path.getsize(os.path.join(http.root, big))
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = run_child(
        [sys.executable, str(script), http.url(big)],
        "open a range-less remote frame and report its peak memory",
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    grown = got["peak"] - got["base"]
    x = np.random.default_rng(0).integers(0, 256, BIG_MIB << 20, dtype=np.uint8)
    rows = x.reshape(-1, 1 << 16)
    assert got["row"] == rows[70, :8].tolist() and got["last"] == rows[-1, -4:].tolist()
    assert grown < size // 2, f"peak RSS grew by {grown >> 20} MiB for a {size >> 20} MiB file"
    if mode == "no-ranges":
        # one whole body: the other answer was dropped after a part of it
        assert got["warnings"] == 1 and http.counts.whole_bodies == 1
        assert http.counts.partial_bytes < size
        assert not list(tmp_path.glob("pyblosc2-spill-*"))  # anonymous, gone with the child
    else:
        assert got["warnings"] == 0 and http.counts.whole_bodies == 0
    print(
        f"{mode}: peak RSS +{grown / 2**20:.1f} MiB for a {size / 2**20:.1f} MiB file; "
        f"{http.counts.bytes_sent + http.counts.partial_bytes} bytes sent"
    )


# -- file objects ------------------------------------------------------------------------------


def test_fsspec_open_result_is_opened_by_its_url(
    http: RangeServer, served: str, data: np.ndarray
) -> None:
    import fsspec

    a = pyblosc2.open(fsspec.open(http.url(served)))
    assert isinstance(a, pyblosc2.NDArray)
    assert http.counts.gets == 2  # lazy, as a URL: head and tail only
    np.testing.assert_array_equal(a[10:12], data[10:12])
    assert a.schunk.urlpath == http.url(served)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a))[3], data[3])


def test_fsspec_buffered_file_is_accepted(http: RangeServer, served: str, data: np.ndarray) -> None:
    import fsspec
    from fsspec.spec import AbstractBufferedFile

    fs = fsspec.filesystem("http")
    with fs.open(http.url(served), "rb") as f:
        assert isinstance(f, AbstractBufferedFile)
        a = pyblosc2.open(f)
        np.testing.assert_array_equal(a[-1], data[-1])


def test_fsspec_memory_and_local_file_objects(tmp_path: Path, data: np.ndarray) -> None:
    import fsspec

    cframe = pyblosc2.asarray(data, chunks=CHUNKS, blocks=BLOCKS).to_cframe()
    fsspec.filesystem("memory").pipe_file("/servers/m.b2nd", cframe)
    with fsspec.open("memory://servers/m.b2nd", "rb") as f:
        np.testing.assert_array_equal(pyblosc2.open(f)[7], data[7])
    local = tmp_path / "l.b2nd"
    local.write_bytes(cframe)
    with fsspec.open(f"file://{local}", "rb") as f:
        np.testing.assert_array_equal(pyblosc2.open(f)[8], data[8])
    with pytest.raises(ParamError, match="storage_options come from the fsspec file object"):
        pyblosc2.open(fsspec.open("memory://servers/m.b2nd"), storage_options={"x": 1})


def test_plain_binary_file_objects_are_read_in_place(tmp_path: Path, data: np.ndarray) -> None:
    cframe = pyblosc2.asarray(data, chunks=CHUNKS, blocks=BLOCKS).to_cframe()
    buf = io.BytesIO(b"pad" + cframe)
    buf.seek(1)
    a = pyblosc2.open(buf, offset=3)
    np.testing.assert_array_equal(a[...], data)
    assert buf.tell() == 1  # the caller's position is left as it was
    path = tmp_path / "f.b2nd"
    path.write_bytes(cframe)
    with open(path, "rb") as f:
        np.testing.assert_array_equal(pyblosc2.open(f)[9], data[9])
        with pytest.raises(ParamError, match="opens read-only"):
            pyblosc2.open(f, mode="a")
    with pytest.raises(ParamError, match="reading mode"):
        pyblosc2.open(io.BytesIO(cframe))[0] = 1
    with open(path, "ab") as w, pytest.raises(ParamError, match="not open for reading"):
        pyblosc2.open(w)


def test_rangeless_spill_goes_to_cache_storage(
    http: RangeServer, served: str, data: np.ndarray, tmp_path: Path
) -> None:
    """With ``cache_storage`` (a directory not made yet) the temporary file is made there."""
    http.mode = "no-ranges"
    where = tmp_path / "cache" / "sub"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RemoteWarning)
        a = pyblosc2.open(http.url(served), cache_storage=str(where))
    assert where.is_dir()
    np.testing.assert_array_equal(a[...], data)
