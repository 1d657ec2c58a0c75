"""NDArray over b2nd frames (issue 5, core): python-blosc2 reads our arrays and we read
theirs, over dtypes x shapes x chunk/block choices with partial edge chunks; slices against
numpy as the model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb

DTYPES = [
    "<f8",
    "<f4",
    "<i2",
    "|u1",
    "|b1",
    "<c16",
    "<M8[ns]",
    "<m8[s]",
    "<U5",
    "|S3",
    [("a", "<i4"), ("b", "<f8")],
]
GEOMS = [
    ((5, 7), (3, 4), (2, 3)),
    ((100,), (30,), (7,)),
    ((9, 11, 4), (4, 5, 3), (2, 3, 2)),
    ((3, 4, 5, 6), (2, 3, 4, 5), (1, 2, 2, 3)),
    ((), (), ()),
]


def _data(shape, dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    n = int(np.prod(shape)) if shape else 1
    raw = np.random.default_rng(len(shape)).integers(0, 256, n * dt.itemsize, dtype=np.uint8)
    if dt.kind == "b":
        raw %= 2  # numpy normalises other bytes of a bool
    out = raw.view(dt).reshape(shape).copy()
    if dt.kind == "f" or dt.kind == "c":
        out = np.nan_to_num(out)
    return out


@pytest.mark.parametrize("geom", GEOMS, ids=lambda g: "x".join(map(str, g[0])) or "0d")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_interop_both_ways(cblosc2, dtype, geom) -> None:
    shape, chunks, blocks = geom
    x = _data(shape, dtype)
    kw = {} if not shape else {"chunks": chunks, "blocks": blocks}
    ours = pb.asarray(x, **kw)
    theirs = cblosc2.asarray(x, **kw)
    c = cblosc2.ndarray_from_cframe(ours.to_cframe())
    assert c.dtype == x.dtype and c.shape == x.shape
    assert np.asarray(c[()] if not shape else c[:]).tobytes() == x.tobytes()
    back = pb.ndarray_from_cframe(theirs.to_cframe())
    assert back.chunks == theirs.chunks and back.blocks == theirs.blocks
    assert back[...].tobytes() == x.tobytes()


def test_files_and_open_dispatch(cblosc2, tmp_path) -> None:
    x = np.arange(1000, dtype=np.float32).reshape(20, 50)
    path = str(tmp_path / "a.b2nd")
    pb.asarray(x, chunks=(7, 20), blocks=(3, 6), urlpath=path, meta={"units": "m"})
    opened = pb.open(path)
    assert isinstance(opened, pb.NDArray) and opened.meta["units"] == "m"
    np.testing.assert_array_equal(opened[5:9, ::7], x[5:9, ::7])
    c = cblosc2.open(path, mode="a")
    c[0:2, 0:3] = -1
    x[0:2, 0:3] = -1
    np.testing.assert_array_equal(pb.open(path)[...], x)
    theirs = str(tmp_path / "c.b2nd")
    cblosc2.asarray(x, chunks=(6, 11), blocks=(2, 5), urlpath=theirs)
    ours = pb.open(theirs, mode="a")
    ours[3:15, 7:40] = 5
    x[3:15, 7:40] = 5
    np.testing.assert_array_equal(cblosc2.open(theirs)[:], x)


@pytest.mark.parametrize("ctor", ["zeros", "ones", "full", "empty"])
def test_constructors_read_by_c(cblosc2, ctor) -> None:
    shape, kw = (30, 17), {"chunks": (8, 8), "blocks": (4, 3), "dtype": np.float32}
    arr = {
        "zeros": lambda: pb.zeros(shape, **kw),
        "ones": lambda: pb.ones(shape, **kw),
        "full": lambda: pb.full(shape, 2.5, **kw),
        "empty": lambda: pb.empty(shape, **kw),
    }[ctor]()
    want = {"zeros": 0, "ones": 1, "full": 2.5, "empty": 0}[ctor]
    np.testing.assert_array_equal(arr[...], np.full(shape, want, np.float32))
    np.testing.assert_array_equal(
        cblosc2.ndarray_from_cframe(arr.to_cframe())[:], np.full(shape, want, np.float32)
    )


def test_bad_b2nd_metadata() -> None:
    from pyblosc2.ndarray.b2nd_meta import B2NDMeta

    raw = bytearray(B2NDMeta((5, 7), (3, 4), (2, 3), np.dtype("<i2")).to_bytes())
    raw[2] = 17  # ndim
    with pytest.raises(pb.FormatError, match="ndim"):
        B2NDMeta.from_bytes(bytes(raw), 2)
    bad_dtype = B2NDMeta((5,), (3,), (2,), np.dtype("<i2")).to_bytes().replace(b"<i2", b"<q9")
    with pytest.raises(pb.FormatError, match="dtype"):
        B2NDMeta.from_bytes(bad_dtype, 2)
    s = pb.SChunk(
        chunksize=16,
        cparams={"typesize": 2},
        meta={
            "b2nd": pb.meta.RawMetalayer(B2NDMeta((50,), (8,), (4,), np.dtype("<i2")).to_bytes())
        },
    )
    with pytest.raises(pb.FormatError, match="nchunks"):
        pb.NDArray(s)  # shape says 7 chunks, the frame has none


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_slices_against_numpy(data) -> None:
    nd = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 12)) for _ in range(nd))
    chunks = tuple(data.draw(st.integers(1, s)) for s in shape)
    blocks = tuple(data.draw(st.integers(1, c)) for c in chunks)
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    a = pb.asarray(x, chunks=chunks, blocks=blocks)
    key = tuple(
        data.draw(
            st.one_of(
                st.integers(-s, s - 1),
                st.builds(
                    slice,
                    st.none() | st.integers(-s - 2, s + 2),
                    st.none() | st.integers(-s - 2, s + 2),
                    st.none() | st.integers(1, 3) | st.integers(-3, -1),
                ),
            )
        )
        for s in shape
    )
    np.testing.assert_array_equal(a[key], x[key])
    value = -np.ones_like(x[key])
    a[key] = value
    x[key] = value
    np.testing.assert_array_equal(a[...], x)
