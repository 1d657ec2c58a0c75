"""dask reading pyblosc2 arrays (local and over HTTP) and writing them in parallel, with the
threaded scheduler and with a ``distributed.LocalCluster`` of worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask
import dask.array as da  # the test extra installs dask (pyblosc2[dask])
import numpy as np
import pytest

import pyblosc2
from tests.bounded import HEAVY_S, run_child
from tests.conftest import _reference
from tests.trust import dasker

from .conftest import RangeServer


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    distributed = _reference("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # any free port: never collides with another cluster
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(autouse=True)
def _threads_unless_clustered(request: pytest.FixtureRequest) -> Iterator[None]:
    """The tests that do not ask for the cluster run on dask's threads: the module's cluster,
    while it lives (until this worker's last test of the module), is the default scheduler,
    and ``from_dask`` of 1,000 items sent there took 78 s in a full run instead of 3."""
    if "client" in request.fixturenames:
        yield
        return
    with dask.config.set(scheduler="threads"):
        yield


@pytest.fixture
def local(tmp_path: Path) -> tuple[str, np.ndarray]:
    x = np.random.default_rng(3).random((200, 300))
    path = str(tmp_path / "a.b2nd")
    pyblosc2.asarray(x, chunks=(64, 100), blocks=(16, 50), urlpath=path)
    return path, x


def test_from_array_threads(local: tuple[str, np.ndarray]) -> None:
    path, x = local
    nd = pyblosc2.open(path)
    d = da.from_array(nd, chunks=nd.chunks)
    assert float(d.sum().compute(scheduler="threads")) == pytest.approx(x.sum())
    np.testing.assert_array_equal(d[50:150, 7:290].compute(scheduler="threads"), x[50:150, 7:290])


def test_from_array_remote_threads(http: RangeServer, local: tuple[str, np.ndarray]) -> None:
    path, x = local
    with open(path, "rb") as src, open(os.path.join(http.root, "d.b2nd"), "wb") as dst:
        dst.write(src.read())
    nd = pyblosc2.open(http.url("d.b2nd"))
    d = da.from_array(nd, chunks=nd.chunks)
    np.testing.assert_array_equal(d.compute(scheduler="threads"), x)


def test_from_dask_threads_matches_numpy_and_python_blosc2(tmp_path: Path, cblosc2: Any) -> None:
    x = np.arange(120_000, dtype=np.int32).reshape(300, 400)
    d = da.from_array(x, chunks=(128, 150))
    path = str(tmp_path / "w.b2nd")
    nd = pyblosc2.from_dask(d, path, blocks=(32, 50))
    assert nd.chunks == (128, 150) and not nd.schunk.contiguous
    np.testing.assert_array_equal(nd[...], x)
    np.testing.assert_array_equal(pyblosc2.open(path)[...], x)
    np.testing.assert_array_equal(cblosc2.open(path)[...], x)


def test_from_dask_rechunks_irregular(tmp_path: Path) -> None:
    x = np.arange(1000, dtype=np.float64)
    d = da.from_array(x, chunks=((100, 300, 600),))
    nd = pyblosc2.from_dask(d, str(tmp_path / "r.b2nd"), chunks=(250,))
    assert nd.chunks == (250,)
    np.testing.assert_array_equal(nd[...], x)


def test_from_dask_to_memory_url() -> None:
    url = f"memory://dask{uuid.uuid4().hex[:8]}/m.b2nd"
    x = np.linspace(0, 1, 5000).reshape(50, 100)
    nd = pyblosc2.from_dask(da.from_array(x, chunks=(20, 40)), url)
    np.testing.assert_array_equal(pyblosc2.open(url)[...], x)
    assert nd.schunk.nchunks == 9


def test_from_dask_contiguous_is_not_implemented(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match="contiguous"):
        pyblosc2.from_dask(da.zeros(10, chunks=5), str(tmp_path / "c.b2nd"), contiguous=True)


def test_da_store_into_ndarray(tmp_path: Path) -> None:
    x = np.arange(6000, dtype=np.int64).reshape(60, 100)
    nd = pyblosc2.zeros(x.shape, x.dtype, chunks=(20, 50), urlpath=str(tmp_path / "s.b2nd"))
    da.store(da.from_array(x, chunks=nd.chunks), nd, scheduler="threads")
    np.testing.assert_array_equal(pyblosc2.open(str(tmp_path / "s.b2nd"))[...], x)


def test_cluster_reads_local_and_remote(
    client: Any, http: RangeServer, local: tuple[str, np.ndarray]
) -> None:
    path, x = local
    nd = pyblosc2.open(path)
    assert float(da.from_array(nd, chunks=nd.chunks).sum().compute()) == pytest.approx(x.sum())
    with open(path, "rb") as src, open(os.path.join(http.root, "c.b2nd"), "wb") as dst:
        dst.write(src.read())
    remote = pyblosc2.open(http.url("c.b2nd"))
    np.testing.assert_array_equal(da.from_array(remote, chunks=remote.chunks).compute(), x)


def test_cluster_writes_in_parallel(client: Any, tmp_path: Path, cblosc2: Any) -> None:
    x = np.random.default_rng(4).integers(0, 100, (256, 256), dtype=np.int16)
    path = str(tmp_path / "p.b2nd")
    pyblosc2.from_dask(da.from_array(x, chunks=(64, 128)), path)
    np.testing.assert_array_equal(pyblosc2.open(path)[...], x)
    np.testing.assert_array_equal(cblosc2.open(path)[...], x)
    chunk_files = [n for n in os.listdir(path) if n.endswith(".chunk")]
    assert len(chunk_files) == 8


def test_cluster_store_into_locking_ndarray(client: Any, tmp_path: Path) -> None:
    x = np.arange(60_000, dtype=np.int64).reshape(600, 100)
    path = str(tmp_path / "l.b2nd")
    nd = pyblosc2.zeros(x.shape, x.dtype, chunks=(50, 100), urlpath=path, locking=True)
    da.store(da.from_array(x, chunks=nd.chunks), nd)  # workers' handles take the frame lock
    np.testing.assert_array_equal(pyblosc2.open(path)[...], x)


@pytest.mark.timeout(HEAVY_S)  # a child importing dask per storage call: 306 s at load 25
def test_from_dask_killed_at_every_storage_call_leaves_old_or_new(
    tmp_path: Path, cblosc2: Any
) -> None:
    """``from_dask`` over an existing sparse array, SIGKILLed at each of its storage calls
    (tests/trust/dasker.py): the directory always opens, in both libraries, with the old
    array or the new one (tools/kill_campaign.py --kind from_dask: random kills)."""
    path, log = str(tmp_path / "k.b2nd"), tmp_path / "log"
    env = {**os.environ, "PYTHONPATH": str(Path(pyblosc2.__file__).parents[1])}
    nth, outcomes = 1, set()
    while True:
        dasker.create(path)
        log.unlink(missing_ok=True)
        child = [sys.executable, dasker.__file__, path, "0", "1", str(log), f"0:{nth}"]
        r = run_child(
            child,
            "from_dask, killing itself at a storage call",
            env=env,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        assert r.returncode in (0, -signal.SIGKILL), r.returncode
        done = len(log.read_text().split()) if log.exists() else 0
        reached = dasker.matches(path, done, pyblosc2)
        assert reached is not None and reached == dasker.matches(path, done, cblosc2)
        outcomes.add(reached)
        if r.returncode == 0:
            break
        nth += 1
    assert nth >= 5 and outcomes == {-1, 0}
