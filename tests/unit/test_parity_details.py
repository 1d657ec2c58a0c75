"""Small API-parity details with python-blosc2: module-level sort/argsort, chunk coordinates
in NDArray.iterchunks_info, the error classes of opening at a wrong offset and of a bad chunk
order, and read-only mmap opens at an offset."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2
from pyblosc2.errors import FormatError, NotAFrameError, OrderError, ParamError

STRUCT = np.array([(x + 1, x - 2, -x) for x in range(10)], dtype="i4, i4, i8")[::-1].copy()


@pytest.mark.parametrize("order", ["f0", "f1", "f2", None])
def test_module_sort_and_argsort_match_numpy_on_structured_items(order) -> None:
    a = pyblosc2.asarray(STRUCT)
    np.testing.assert_array_equal(pyblosc2.sort(a, order=order)[:], np.sort(STRUCT, order=order))
    np.testing.assert_array_equal(
        pyblosc2.argsort(a, order=order)[:], np.argsort(STRUCT, order=order, kind="stable")
    )


def test_sort_accepts_numpy_input_and_refuses_nd() -> None:
    np.testing.assert_array_equal(pyblosc2.sort(np.array([3, 1, 2]))[:], [1, 2, 3])
    with pytest.raises(ParamError, match="sort needs a 1-d array"):
        pyblosc2.sort(pyblosc2.zeros((2, 2)))


def test_iterchunks_info_gives_grid_coordinates_in_chunk_order() -> None:
    a = pyblosc2.zeros((5, 7), np.int32, chunks=(2, 3), blocks=(1, 3))
    infos = list(a.iterchunks_info())
    assert [i.coords for i in infos] == [(r, c) for r in range(3) for c in range(3)]
    assert [i.nchunk for i in infos] == list(range(9))
    assert all(i.special.name == "ZERO" for i in infos)


def test_iterchunks_info_coords_match_python_blosc2(tmp_path) -> None:
    blosc2 = pytest.importorskip("blosc2")
    path = str(tmp_path / "a.b2nd")
    pyblosc2.asarray(np.arange(35).reshape(5, 7), chunks=(2, 3), blocks=(1, 3), urlpath=path)
    theirs = [
        (i.nchunk, tuple(int(c) for c in i.coords)) for i in blosc2.open(path).iterchunks_info()
    ]
    ours = [(i.nchunk, i.coords) for i in pyblosc2.open(path).iterchunks_info()]
    assert ours == theirs


@pytest.fixture
def frame_at_42(tmp_path):
    inner = tmp_path / "inner.b2frame"
    pyblosc2.SChunk(data=np.arange(100), urlpath=str(inner))
    path = tmp_path / "outer.bin"
    path.write_bytes(bytes(42) + inner.read_bytes())
    return str(path)


@pytest.mark.parametrize("offset", [0, 43])
def test_no_frame_at_the_offset_is_a_format_error_and_a_runtime_error(frame_at_42, offset) -> None:
    with pytest.raises(NotAFrameError, match="magic") as info:
        pyblosc2.open(frame_at_42, "r", offset=offset)
    assert isinstance(info.value, FormatError) and isinstance(info.value, RuntimeError)


@pytest.mark.parametrize(("mode", "mmap_mode"), [("r", None), (None, "r")])
def test_read_only_opens_at_an_offset(frame_at_42, mode, mmap_mode) -> None:
    s = pyblosc2.open(frame_at_42, mode, mmap_mode=mmap_mode, offset=42)
    assert s[:] == np.arange(100).tobytes()


def test_writable_open_at_an_offset_is_not_implemented(frame_at_42) -> None:
    with pytest.raises(NotImplementedError, match="embedded at an offset"):
        pyblosc2.open(frame_at_42, "a", offset=42)


@pytest.mark.parametrize(
    ("order", "error", "runtime"),
    [
        ([[0, 1]], ParamError, False),
        ([0, 1], ParamError, False),
        ([0, 0, 1], OrderError, True),
        ([0, 1, 3], OrderError, True),
    ],
)
def test_reorder_offsets_error_classes(order, error, runtime) -> None:
    s = pyblosc2.SChunk(chunksize=16, cparams={"typesize": 1})
    for payload in (b"a" * 16, b"b" * 16, b"c" * 16):
        s.append_data(payload)
    with pytest.raises(error, match="permutation") as info:
        s.reorder_offsets(order)
    assert isinstance(info.value, RuntimeError) is runtime
    assert s[:] == b"a" * 16 + b"b" * 16 + b"c" * 16


@pytest.mark.parametrize("fn", [pyblosc2.decompress, pyblosc2.decompress2])
def test_an_empty_destination_is_refused_even_for_an_empty_chunk(fn) -> None:
    c = pyblosc2.compress2(b"")
    with pytest.raises(ParamError, match="dst is empty"):
        fn(c, dst=bytearray())
    assert fn(c) == b""


def test_get_slice_into_a_short_out_names_the_missing_space() -> None:
    s = pyblosc2.SChunk(chunksize=8 * 256, cparams={"typesize": 256}, data=bytes(20 * 256))
    with pytest.raises(
        ParamError, match="Not enough space in out: 256 bytes, the slice needs 2560"
    ):
        s.get_slice(0, 10, out=bytearray(256))


@pytest.mark.parametrize(
    "dtype", [np.dtype(("<f8", (10,))), np.dtype(("<i8", (10,))), np.dtype(("<i4,>f4", (10,)))]
)
def test_subarray_dtypes_read_as_numpy_does(dtype) -> None:
    a = pyblosc2.zeros((5,), dtype=dtype, chunks=(2,), blocks=(1,))
    x = np.zeros((5,), dtype)
    assert a.dtype == dtype
    for key in (slice(None), slice(None, None, -2), 3):
        got, want = a[key], x[key]
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.int8), want.view(np.int8))


def test_integer_keys_give_a_zero_d_array_as_python_blosc2() -> None:
    a = pyblosc2.asarray(np.arange(12).reshape(3, 4), chunks=(2, 2), blocks=(1, 2))
    got = a[1, 2]
    assert isinstance(got, np.ndarray) and got.shape == () and got == 6
