"""ndarray/core.py: the array state below NDArray. The read path (reader.py), the gathers
(fancy.py), the fillers (chunkfill.py) and the storage builders (build.py) work on an
:class:`ArrayCore` alone, without the NDArray class, and give the bytes NDArray gives; the
builders make arrays of the class they are given."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.meta import RawMetalayer
from pyblosc2.ndarray.b2nd_meta import B2NDMeta
from pyblosc2.ndarray.build import asarray_of, copy_of, empty_of, new_array
from pyblosc2.ndarray.chunkfill import fill_regions
from pyblosc2.ndarray.core import ArrayCore
from pyblosc2.ndarray.fancy import gather_flat, take_numpy
from pyblosc2.ndarray.reader import read_box, read_point, read_selection

X = np.arange(11 * 13, dtype=np.int32).reshape(11, 13) * 3 - 7
PARTS = {"chunks": (4, 5), "blocks": (2, 3), "cparams": {"nthreads": 1}}


@pytest.fixture
def core() -> ArrayCore:
    return ArrayCore(pb.asarray(X, **PARTS).schunk)


def test_properties_from_the_metalayer(core: ArrayCore) -> None:
    assert (core.shape, core.chunks, core.blocks, core.dtype) == (X.shape, (4, 5), (2, 3), X.dtype)
    assert (core.ndim, core.size, core.nbytes, len(core)) == (2, X.size, X.nbytes, 11)
    assert core.cbytes == core.schunk.cbytes and core.meta["b2nd"]


def test_reader_reads_a_core(core: ArrayCore) -> None:
    np.testing.assert_array_equal(read_box(core, (1, 2), (10, 12)), X[1:10, 2:12])
    ranges = [range(10, 0, -3), range(0, 13, 5)]
    np.testing.assert_array_equal(read_selection(core, ranges), X[10:0:-3, 0:13:5])
    assert read_point(core, (7, 11)) == X[7, 11]


def test_gathers_read_a_core(core: ArrayCore) -> None:
    flat = np.array([0, 142, 57, 57, 100])
    np.testing.assert_array_equal(gather_flat(core, flat), X.reshape(-1)[flat])
    np.testing.assert_array_equal(take_numpy(core, [[3, -1]], axis=1), np.take(X, [[3, -1]], 1))


def test_builders_make_a_core_with_the_bytes_of_an_ndarray() -> None:
    ours = asarray_of(ArrayCore, X, **PARTS)
    assert type(ours) is ArrayCore
    assert ours.schunk.to_cframe() == pb.asarray(X, **PARTS).to_cframe()
    zeros = empty_of(ArrayCore, (5, 3), np.float32, (2, 2), (1, 2))
    assert type(zeros) is ArrayCore
    assert zeros.schunk.to_cframe() == pb.zeros((5, 3), np.float32, (2, 2), (1, 2)).to_cframe()


def test_fillers_fill_a_core() -> None:
    arr = new_array(ArrayCore, (5, 4), "i2", (2, 3), (1, 3), {})
    filled = fill_regions(arr, lambda r: r[0].start * 10 + r[1].start)
    assert filled is arr
    want = np.array(
        [[0, 0, 0, 3], [0, 0, 0, 3], [20, 20, 20, 23], [20, 20, 20, 23], [40] * 3 + [43]]
    )
    np.testing.assert_array_equal(read_box(arr, (0, 0), (5, 4)), want)


def test_copy_of_keeps_the_class_and_the_layers() -> None:
    src = pb.asarray(X, meta={"units": "m"}, **PARTS)
    src.vlmeta["name"] = "x"
    core = ArrayCore(src.schunk)
    out = copy_of(core, chunks=(11, 13), blocks=(11, 13))
    assert type(out) is ArrayCore and out.chunks == (11, 13)
    assert out.meta["units"] == "m" and out.vlmeta["name"] == "x"
    np.testing.assert_array_equal(read_box(out, (0, 0), X.shape), X)


class _Sub(pb.NDArray):
    """An NDArray subclass: the methods that make new arrays give its class back."""


def test_new_arrays_of_an_ndarray_subclass_are_of_that_class() -> None:
    a = _Sub(pb.asarray(X, **PARTS).schunk)
    made = {
        "copy": a.copy(),
        "slice": a.slice((slice(4, 8), slice(0, 5))),
        "slice of whole chunks": a.slice((slice(0, 4), slice(0, 5))),
        "reshape": a.reshape((13, 11)),
        "take": a.take([2, 0], axis=0),
        "sort": _Sub(pb.asarray(X[0]).schunk).sort(),
    }
    assert {k: type(v) for k, v in made.items()} == dict.fromkeys(made, _Sub)
    np.testing.assert_array_equal(made["reshape"][...], X.reshape(13, 11))
    np.testing.assert_array_equal(made["slice"][...], X[4:8, 0:5])


def test_without_a_b2nd_metalayer() -> None:
    with pytest.raises(pb.FormatError, match="'b2nd' metalayer"):
        ArrayCore(pb.SChunk(chunksize=8, data=bytes(16)))


def test_chunk_count_must_follow_the_shape() -> None:
    meta = B2NDMeta((10,), (4,), (2,), np.dtype("<i2"))
    schunk = pb.SChunk(chunksize=8, data=bytes(16), meta={"b2nd": RawMetalayer(meta.to_bytes())})
    with pytest.raises(pb.FormatError, match=r"nchunks.*3 \(from the shape\)"):
        ArrayCore(schunk)


def test_chunksize_must_be_the_padded_chunk() -> None:
    meta = B2NDMeta((8,), (4,), (3,), np.dtype("<i2"))  # chunks padded to 6 items: 12 bytes
    schunk = pb.SChunk(chunksize=8, data=bytes(16), meta={"b2nd": RawMetalayer(meta.to_bytes())})
    with pytest.raises(pb.FormatError, match=r"chunksize.*12 \(padded chunk \* itemsize\)"):
        ArrayCore(schunk)


@pytest.mark.parametrize("whole_max", [1 << 24, 0], ids=["read whole", "region by region"])
def test_copies_read_their_source_whole_or_by_region(monkeypatch, whole_max) -> None:
    from pyblosc2.ndarray import chunkfill

    boxes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    real = chunkfill.read_box

    def spy(arr, lo, hi):
        boxes.append((lo, hi))
        return real(arr, lo, hi)

    monkeypatch.setattr(chunkfill, "WHOLE_READ_MAX", whole_max)
    monkeypatch.setattr(chunkfill, "read_box", spy)
    src = pb.asarray(X, **PARTS)
    out = pb.asarray(src, chunks=(6, 13), blocks=(3, 13))
    np.testing.assert_array_equal(out[...], X)
    if whole_max:
        assert boxes == [((0, 0), X.shape)]
    else:  # one read per chunk of the copy
        assert boxes == [((0, 0), (6, 13)), ((6, 0), (11, 13))]
