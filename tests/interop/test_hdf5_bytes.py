"""Bytes read from an HDF5 file for a small slice of a large Blosc2 chunk: pyblosc2 (byte ranges
of the file, no plugin) against b2h5py (python-blosc2 opening the chunk's frame in the file),
counted by the kernel (``rchar`` of ``/proc/self/io``) in a child process that has loaded both
libraries and read HDF5's chunk index before counting."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import _reference

h5py = pytest.importorskip("h5py")

CHILD = r"""
import json, sys
import b2h5py, blosc2, h5py
from pyblosc2 import hdf5

def rchar():
    with open("/proc/self/io") as f:
        return int(f.readline().split()[1])

blosc2.set_nthreads(1)
key = (slice(300, 310), slice(600, 610))
with h5py.File(sys.argv[1], "r") as f:
    warm = f["warm"]
    # code loaded before counting (the read path of a handle that keeps no chunk)
    b2h5py.B2Dataset(warm)[0:2, 0:2], hdf5.open(warm, rdcc_nbytes=0)[0:2, 0:2]
    x = f["x"]
    info = x.id.get_chunk_info_by_coord((0, 0))  # HDF5's chunk index read before counting
    theirs = b2h5py.B2Dataset(x)
    r0 = rchar(); want = theirs[key]; r1 = rchar()
    ours = hdf5.open(x, rdcc_nbytes=0)  # no decoded chunk kept: the second read fetches
    r2 = rchar(); got = ours[key]; r3 = rchar(); again = ours[key]; r4 = rchar()
print(json.dumps({
    "b2h5py": r1 - r0, "first": r3 - r2, "again": r4 - r3, "stored": info.size,
    "counted": ours.bytes_read, "chunks_read": ours.chunks_read,
    "same": bool((got == want).all() and (again == want).all()),
}))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux's /proc/self/io")
@pytest.mark.parametrize("cname", ["lz4", "zstd"])
def test_small_slice_reads_no_more_bytes_than_b2h5py(tmp_path, cname) -> None:
    hdf5plugin = _reference("hdf5plugin")
    _reference("b2h5py")
    a = np.random.default_rng(0).random((1024, 1024))
    path = tmp_path / "big.h5"
    with h5py.File(path, "w") as f:  # one 8 MB chunk, in blocks of 256 x 256 (the plugin's)
        f.create_dataset("x", data=a, chunks=(1024, 1024), **hdf5plugin.Blosc2(cname=cname))
        f.create_dataset("warm", data=a[:64, :64], chunks=(32, 32), **hdf5plugin.Blosc2())
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["same"] and got["chunks_read"] == 2
    assert got["first"] <= got["b2h5py"], got  # frame, index, chunk layout and one block
    assert got["again"] <= got["first"], got  # the layout is known: the block only
    assert got["first"] * 8 < got["stored"], got
    assert 0 < got["counted"] <= got["first"] + got["again"]  # what pyblosc2 says it read
