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


@pytest.mark.parametrize("newshape", [(8, 9), (4, 3), (5, 7), (2, 12)])
def test_resize_both_ways(cblosc2, newshape) -> None:
    x = np.arange(35, dtype=np.int16).reshape(5, 7)
    want = np.zeros(newshape, np.int16)
    keep = tuple(slice(0, min(a, b)) for a, b in zip(x.shape, newshape, strict=True))
    want[keep] = x[keep]
    ours = pb.asarray(x, chunks=(3, 4), blocks=(2, 3))
    ours.resize(newshape)
    np.testing.assert_array_equal(ours[...], want)
    np.testing.assert_array_equal(cblosc2.ndarray_from_cframe(ours.to_cframe())[:], want)
    theirs = cblosc2.asarray(x, chunks=(3, 4), blocks=(2, 3))
    theirs.resize(newshape)
    np.testing.assert_array_equal(pb.ndarray_from_cframe(theirs.to_cframe())[...], want)


def test_shrink_then_grow_shows_zeros() -> None:
    a = pb.asarray(np.ones((10, 10)), chunks=(4, 4), blocks=(2, 2))
    a.resize((3, 3))
    a.resize((10, 10))
    want = np.zeros((10, 10))
    want[:3, :3] = 1
    np.testing.assert_array_equal(a[...], want)


@pytest.mark.parametrize("dtype", ["<f4", [("x", "<i4"), ("y", "<f8")], "<U3"], ids=str)
def test_pack_save_load_both_ways(cblosc2, tmp_path, dtype) -> None:
    x = np.zeros((4, 6), dtype=dtype)
    np.testing.assert_array_equal(cblosc2.unpack_array2(pb.pack_array2(x)), x)
    np.testing.assert_array_equal(pb.unpack_array2(cblosc2.pack_array2(x)), x)
    p1, p2 = str(tmp_path / "a.b2frame"), str(tmp_path / "b.b2frame")
    pb.save_array(x, p1)
    cblosc2.save_array(x, p2)
    np.testing.assert_array_equal(cblosc2.load_array(p1), x)
    np.testing.assert_array_equal(pb.load_array(p2), x)


def test_evaluate_chunk_by_chunk(monkeypatch) -> None:
    x = np.arange(600.0).reshape(20, 30)
    y = np.linspace(0, 1, 30)
    a = pb.asarray(x, chunks=(7, 11), blocks=(3, 4))
    b = pb.asarray(y, chunks=(11,), blocks=(4,))
    reads = []
    original = pb.NDArray._chunk_array

    def spy(self, n):
        reads.append(n)
        return original(self, n)

    monkeypatch.setattr(pb.NDArray, "_chunk_array", spy)
    out = pb.evaluate("a * b + 2 * c", {"a": a, "b": b, "c": 3.0})
    assert len(reads) <= 2 * a.schunk.nchunks  # at most one chunk per operand and output chunk
    np.testing.assert_allclose(out, x * y + 6.0)
    assert isinstance(out, np.ndarray)  # a numpy result, as python-blosc2 and numexpr give


def test_constructors_like_numpy() -> None:
    np.testing.assert_array_equal(pb.arange(0, 12, shape=(3, 4))[...], np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(pb.linspace(0, 1, 10)[...], np.linspace(0, 1, 10))
    np.testing.assert_array_equal(
        pb.frombuffer(bytes(range(6)), (2, 3))[...], np.arange(6, dtype=np.uint8).reshape(2, 3)
    )


def test_single_element_decodes_one_block(decoded_blocks, tmp_path) -> None:
    x = np.random.default_rng(3).random((64, 64, 64)).astype(np.float32)
    path = str(tmp_path / "big.b2nd")
    pb.asarray(x, chunks=(64, 64, 64), blocks=(8, 8, 8), urlpath=path)
    a = pb.open(path)
    chunk_bytes = pb.get_cbuffer_sizes(a.schunk.get_chunk(0))[1]
    decoded_blocks.clear()
    store = a.schunk._store
    before = store.bytes_read
    assert a[40, 17, 3] == x[40, 17, 3]
    assert len(decoded_blocks) == 1
    assert store.bytes_read - before < chunk_bytes / 8
    np.testing.assert_array_equal(a[30:34, 5:9, 60], x[30:34, 5:9, 60])  # spans blocks


def test_copy_with_new_partition_and_cparams(cblosc2, tmp_path) -> None:
    x = np.arange(2000, dtype=np.int64).reshape(40, 50)
    a = pb.asarray(x, chunks=(10, 10), blocks=(5, 5))
    b = a.copy(
        chunks=(20, 25),
        blocks=(4, 5),
        cparams={"codec": pb.Codec.LZ4, "clevel": 9},
        urlpath=str(tmp_path / "b.b2nd"),
    )
    assert b.chunks == (20, 25) and b.schunk.cparams.codec == pb.Codec.LZ4
    np.testing.assert_array_equal(cblosc2.open(str(tmp_path / "b.b2nd"))[:], x)
    a.save(str(tmp_path / "c.b2nd"))
    np.testing.assert_array_equal(cblosc2.open(str(tmp_path / "c.b2nd"))[:], x)


@pytest.mark.parametrize("dtype", ["S255", "S256", "S300", "<U64", "<U100"])
def test_wide_itemsize_frame_header_records_the_itemsize(cblosc2, tmp_path, dtype) -> None:
    """C-Blosc2 4.x (python-blosc2 4.14.1) writes the whole itemsize in the frame header even
    above 255 (frame-format §2.7 says 1; the bytes C writes win) and cannot read an array whose
    header says 1; chunk headers still clamp it to 1."""
    x = np.array([b"hello", b"x" * 20] * 300).astype(dtype)
    ours, theirs = str(tmp_path / "p.b2nd"), str(tmp_path / "c.b2nd")
    a = pb.asarray(x, urlpath=ours)
    cblosc2.asarray(x, urlpath=theirs)
    itemsize = np.dtype(dtype).itemsize
    assert a.schunk.typesize == pb.open(theirs).schunk.typesize == itemsize
    assert bytes(a.schunk.get_chunk(0))[3] == (itemsize if itemsize <= 255 else 1)
    np.testing.assert_array_equal(cblosc2.open(ours)[:], x)
    np.testing.assert_array_equal(pb.open(theirs)[:], x)
