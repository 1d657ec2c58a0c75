"""A proxy cache shared by processes of pyblosc2 and python-blosc2 at once, killed ones, and
hostile cache files (pyblosc2/proxies/filler.py, cache.py): every read any process returned
is the source's, and a cache is refused with a pyblosc2 error when it is damaged."""

from __future__ import annotations

import os
import signal
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.errors import FormatError
from tests.bounded import started, wait_child

from . import proxy_worker as w

ENV = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
WORKER = [sys.executable, str(Path(w.__file__))]


def _setup(tmp_path: Path, kind: str) -> tuple[str, str]:
    src, cache = str(tmp_path / "src.b2nd"), str(tmp_path / "cache.b2nd")
    pb.asarray(w.data(), chunks=w.CHUNKS, blocks=w.BLOCKS, urlpath=src, mode="w")
    if kind == "blocks":
        pb.proxy_source.BLOCK_MIN_CBYTES, saved = 0, pb.proxy_source.BLOCK_MIN_CBYTES
        try:
            pb.Proxy(pb.FsspecNDSource("file://" + os.path.abspath(src)), urlpath=cache, mode="w")
        finally:
            pb.proxy_source.BLOCK_MIN_CBYTES = saved
    else:
        pb.Proxy(pb.open(src), urlpath=cache, mode="w")
    return src, cache


def _check_logs(logs: list[Path], nreads: int | None) -> int:
    x = w.data()
    seen = 0
    for log in logs:
        lines = log.read_text().splitlines() if log.exists() else []
        if nreads is not None:
            assert len(lines) == nreads, log
        for line in lines:
            a, b, c, d, dig = line.split()
            assert dig == w.digest(x[int(a) : int(b), int(c) : int(d)]), (log, line)
        seen += len(lines)
    return seen


@pytest.mark.parametrize("kind", ["chunks", "blocks"])
def test_processes_of_both_libraries_fill_one_cache(
    tmp_path: Path, kind: str, cblosc2: Any
) -> None:
    src, cache = _setup(tmp_path, kind)
    libs = ["pyblosc2", "pyblosc2", "blosc2", "blosc2"]
    nreads = 25
    logs = [tmp_path / f"log{i}" for i in range(len(libs))]
    whats = [
        f"worker {i} ({lib}): {nreads} reads through the shared {kind} cache"
        for i, lib in enumerate(libs)
    ]
    with ExitStack() as stack:
        procs = [
            stack.enter_context(
                started(
                    [*WORKER, lib, kind, src, cache, str(nreads), str(i), str(logs[i])],
                    whats[i],
                    env=ENV,
                )
            )
            for i, lib in enumerate(libs)
        ]
        codes = [wait_child(p, what) for p, what in zip(procs, whats, strict=True)]
    assert codes == [0] * len(libs)
    assert _check_logs(logs, nreads) == nreads * len(libs)
    # what they left: every bit set stands for the source's bytes, read by either library
    if kind == "blocks":
        pb.proxy_source.BLOCK_MIN_CBYTES, saved = 0, pb.proxy_source.BLOCK_MIN_CBYTES
    try:
        source = (
            pb.FsspecNDSource("file://" + os.path.abspath(src))
            if kind == "blocks"
            else pb.open(src)
        )
        p = pb.Proxy(source, urlpath=cache, mode="a")
        held = p._map.bits.copy()
        assert held.any()
        np.testing.assert_array_equal(p[...], w.data())
    finally:
        if kind == "blocks":
            pb.proxy_source.BLOCK_MIN_CBYTES = saved
    np.testing.assert_array_equal(cblosc2.open(cache, mode="a", deserialize="full")[...], w.data())


def test_a_process_killed_while_filling_leaves_a_cache_that_reads_right(
    tmp_path: Path, cblosc2: Any
) -> None:
    src, cache = _setup(tmp_path, "blocks")
    rng = np.random.default_rng(3)
    for round_ in range(4):
        log = tmp_path / f"kill{round_}"
        what = f"worker of round {round_}: fill the blocks cache, then be killed"
        with started(
            [*WORKER, "pyblosc2", "blocks", src, cache, "200", str(round_), str(log)],
            what,
            env=ENV,
        ) as p:
            time.sleep(float(rng.uniform(0.3, 1.5)))
            p.send_signal(signal.SIGKILL)
            wait_child(p, what, 60)
        _check_logs([log], None)
        pb.proxy_source.BLOCK_MIN_CBYTES, saved = 0, pb.proxy_source.BLOCK_MIN_CBYTES
        try:  # each held bit stands for the source's block; the rest is fetched
            q = pb.Proxy(
                pb.FsspecNDSource("file://" + os.path.abspath(src)), urlpath=cache, mode="a"
            )
            key = w.random_key(rng)
            np.testing.assert_array_equal(q[key], w.data()[key])
        finally:
            pb.proxy_source.BLOCK_MIN_CBYTES = saved
    pb.proxy_source.BLOCK_MIN_CBYTES, saved = 0, pb.proxy_source.BLOCK_MIN_CBYTES
    try:
        q = pb.Proxy(pb.FsspecNDSource("file://" + os.path.abspath(src)), urlpath=cache, mode="a")
        np.testing.assert_array_equal(q[...], w.data())
    finally:
        pb.proxy_source.BLOCK_MIN_CBYTES = saved


# -- hostile cache files -----------------------------------------------------------------------
def _cache(tmp_path: Path) -> tuple[Any, str]:
    src = pb.asarray(
        w.data(), chunks=w.CHUNKS, blocks=w.BLOCKS, urlpath=str(tmp_path / "src.b2nd"), mode="w"
    )
    cache = str(tmp_path / "cache.b2nd")
    pb.Proxy(src, urlpath=cache, mode="w")[0:10]
    return src, cache


def test_a_truncated_cache_is_refused(tmp_path: Path) -> None:
    src, cache = _cache(tmp_path)
    data = Path(cache).read_bytes()
    Path(cache).write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError):
        pb.Proxy(src, urlpath=cache, mode="a")


@pytest.mark.parametrize("value", [b"\xff" * 3, "nonsense", 12345], ids=repr)
def test_a_damaged_bitmap_is_refused(tmp_path: Path, value: Any) -> None:
    src, cache = _cache(tmp_path)
    raw = pb.blosc2_ext.open(cache, "a", 0)
    raw.schunk.vlmeta["proxy-fetched"] = value
    del raw
    with pytest.raises(FormatError, match="proxy-fetched"):
        pb.Proxy(src, urlpath=cache, mode="a")


@pytest.mark.parametrize(
    ("meta", "error"),
    [
        ([1, 2], FormatError),
        ({"source_kind": None, "local_abspath": 7, "urlpath": None}, FormatError),
        ({"source_kind": "hdf5", "local_abspath": None, "urlpath": "x.h5"}, NotImplementedError),
        ({"source_kind": None, "local_abspath": None, "urlpath": None}, FormatError),
    ],
    ids=["not-a-map", "bad-path", "hdf5", "nowhere"],
)
def test_a_hostile_source_metalayer_is_refused(tmp_path: Path, meta: Any, error: type) -> None:
    cache = str(tmp_path / "cache.b2nd")
    pb.zeros((10,), chunks=(5,), urlpath=cache, mode="w", meta={"proxy-source": meta})
    with pytest.raises(error):
        pb.open(cache, deserialize="full")


def test_a_proxy_of_a_proxy_is_not_opened_through(tmp_path: Path) -> None:
    """A cache naming another cache as its source stops there: the source is opened with
    deserialize='safe', so no chain (or loop) of proxies is followed."""
    outer = str(tmp_path / "outer.b2nd")
    pb.zeros(
        w.SHAPE,
        chunks=w.CHUNKS,
        blocks=w.BLOCKS,
        urlpath=outer,
        mode="w",
        meta={
            "proxy-source": {
                "source_kind": "local",
                "local_abspath": outer,
                "urlpath": None,
                "caterva2_env": False,
            }
        },
    )
    with pytest.raises(pb.UnsafeDeserializationError):
        pb.open(outer, deserialize="full")
