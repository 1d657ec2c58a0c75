"""A ``.b2nd`` whose ``b2nd`` metalayer names a dtype holding Python objects (``|O``, an ``O``
field of a structured dtype, nested, in a subarray) is refused when the metalayer is parsed
(ndarray/b2nd_meta.py), with a ``FormatError`` naming the field, its offset and the dtype found,
on every route that opens an array: ``open``, ``from_cframe``, ``ndarray_from_cframe``,
``blosc2_ext.open``, ``NDArray(schunk)``, a store's member, an HDF5 chunk, ``pyblosc2 info``.

Before, the file opened and the first read failed with numpy's ``TypeError`` ("Cannot change
data-type for array of references"). python-blosc2 4.14.1 opens these files without complaint
and takes the stored bytes as ``PyObject`` pointers: reading the ``|O`` file below (items 0..3
as int64) kills the interpreter with SIGSEGV; structured ones whose object bytes are zero read
as ``None`` (checked by hand, in a child process: not a test, as a crash is not a behaviour to
pin). The files are built byte by byte: no writer of either library makes one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import blosc2_ext
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.constants import Codec
from pyblosc2.errors import FormatError
from pyblosc2.frame.writer import build_cframe
from pyblosc2.ndarray.b2nd_meta import B2NDMeta
from tests.bounded import run_child

DTYPES = {
    "object": np.dtype("O"),
    "object field": np.dtype([("a", "<f8"), ("b", "O")]),
    "nested object field": np.dtype([("a", [("x", "<i4"), ("o", "O")])]),
    "object subarray": np.dtype(("O", (2,))),
    "object subarray field": np.dtype([("n", "<i2"), ("o", "O", (2,))]),
}
N = 4


def hostile_frame(dtype: np.dtype) -> bytes:
    """A contiguous frame of one chunk of ``N`` items of ``dtype``'s size (bytes 0, 1, 2...),
    with a ``b2nd`` metalayer naming ``dtype``."""
    data = np.arange(N * dtype.itemsize // 8, dtype="<i8").tobytes()
    spec = EncodeSpec(typesize=dtype.itemsize, clevel=5, codec=Codec.ZSTD, blocksize=len(data))
    chunk = encode_chunk(memoryview(data), spec)
    meta = B2NDMeta((N,), (N,), (N,), dtype).to_bytes()
    return build_cframe(
        [chunk], typesize=dtype.itemsize, chunksize=len(data), metalayers=[("b2nd", meta)]
    )


def _file(tmp_path: Path, dtype: np.dtype) -> str:
    path = tmp_path / "obj.b2nd"
    path.write_bytes(hostile_frame(dtype))
    return str(path)


def _store_member(tmp_path: Path, dtype: np.dtype) -> Any:
    path = str(tmp_path / "s.b2d")
    with pb.DictStore(path, mode="w", threshold=0) as store:
        store["/x"] = np.arange(N, dtype="<i8")
    (tmp_path / "s.b2d" / "x.b2nd").write_bytes(hostile_frame(dtype))
    return pb.DictStore(path, mode="r")["/x"]


ROUTES: dict[str, Callable[[Path, np.dtype], Any]] = {
    "open": lambda d, dt: pb.open(_file(d, dt)),
    "open(mmap_mode)": lambda d, dt: pb.open(_file(d, dt), mmap_mode="r"),
    "from_cframe": lambda d, dt: pb.from_cframe(hostile_frame(dt)),
    "ndarray_from_cframe": lambda d, dt: pb.ndarray_from_cframe(hostile_frame(dt)),
    "blosc2_ext.open": lambda d, dt: blosc2_ext.open(_file(d, dt), "r", 0),
    "NDArray(schunk)": lambda d, dt: pb.NDArray(pb.schunk_from_cframe(hostile_frame(dt))),
    "DictStore member": _store_member,
}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("name", sorted(DTYPES))
def test_object_dtypes_are_refused_on_every_route(tmp_path: Path, route: str, name: str) -> None:
    with pytest.raises(FormatError, match=r"b2nd metalayer: dtype at offset \d+ is .*O") as e:
        ROUTES[route](tmp_path, DTYPES[name])
    assert "no Python objects" in str(e.value)


def test_the_same_files_with_plain_dtypes_open(tmp_path: Path) -> None:
    """The builder makes valid files: only the dtype is hostile."""
    for dtype in (np.dtype("<i8"), np.dtype([("a", "<f8"), ("b", "<i8")])):
        a = pb.open(_file(tmp_path, dtype))
        assert a.dtype == dtype
        assert a[...].tobytes() == np.arange(N * dtype.itemsize // 8, dtype="<i8").tobytes()


def test_the_command_line_reports_it(tmp_path: Path) -> None:
    path = _file(tmp_path, DTYPES["object field"])
    out = run_child(
        [sys.executable, "-m", "pyblosc2", "info", path],
        "report the object dtype of pyblosc2 info",
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "dtype at offset" in out.stderr and "no Python objects" in out.stderr


def test_an_hdf5_chunk_with_an_object_dtype_is_refused(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    from pyblosc2 import hdf5

    with h5py.File(tmp_path / "h.h5", "w") as f:
        hdf5.create_dataset(f, "x", data=np.arange(N, dtype="<i8"), chunks=(N,))
        f["x"].id.write_direct_chunk((0,), hostile_frame(np.dtype("O")))
    with h5py.File(tmp_path / "h.h5", "r") as f, pytest.raises(FormatError, match="dtype at"):
        hdf5.open(f["x"])[...]
