"""One item per axis (``a[i, j, k]``) takes the short path of ndarray/reader.read_point: it
gives numpy's answer (a 0-d array of the dtype), reads and decodes one block, and leaves
what it does not serve (indices out of range, subarray dtypes, special chunks, pipelines
items cannot be picked from) to the general path, which answers or raises the same way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ndarray import reader

X = (np.arange(37 * 50 * 23, dtype=np.float64).reshape(37, 50, 23) * 0.25) - 100


@pytest.fixture
def served(monkeypatch) -> list[bool]:
    """Per read_point call: whether it served the item (False: it left it to the general
    path)."""
    seen: list[bool] = []
    real = reader.read_point

    def spy(arr, key):
        got = real(arr, key)
        seen.append(got is not None)
        return got

    monkeypatch.setattr("pyblosc2.ndarray.ndarray.read_point", spy)
    return seen


@pytest.mark.parametrize(
    "key",
    [(0, 0, 0), (36, 49, 22), (-1, -50, 5), (np.int64(9), np.uint8(17), 3), (20, 10, -23)],
)
@pytest.mark.parametrize(
    ("chunks", "blocks"), [((10, 16, 23), (5, 4, 8)), ((37, 50, 23), (37, 50, 23))]
)
def test_point_matches_numpy(tmp_path, served, key, chunks, blocks) -> None:
    a = pb.asarray(X, chunks=chunks, blocks=blocks, urlpath=str(tmp_path / "p.b2nd"))
    got = a[key]
    assert isinstance(got, np.ndarray)
    assert got.shape == () and got.dtype == X.dtype
    assert got == X[key]
    assert served == [True]


def test_point_reads_one_block(tmp_path, decoded_blocks, served) -> None:
    a = pb.asarray(X, chunks=(10, 16, 23), blocks=(5, 4, 8), urlpath=str(tmp_path / "p.b2nd"))
    decoded_blocks.clear()
    assert a[13, 21, 17] == X[13, 21, 17]
    # chunk (1, 1, 0); in it, item (3, 5, 17) is in block (0, 1, 2) of the 2 x 4 x 3 grid
    assert decoded_blocks == [0 * 12 + 1 * 3 + 2]
    assert served == [True]


def test_out_of_range_is_an_index_error_before_any_read(served) -> None:
    a = pb.asarray(X, chunks=(10, 16, 23), blocks=(5, 4, 8))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 37"):
        a[37, 0, 0]
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 50"):
        a[0, -51, 0]
    assert served == []  # the key is checked once, before the short path is tried


@pytest.mark.parametrize(
    ("make", "want_served"),
    [
        pytest.param(lambda: pb.zeros((30, 40), np.int32, chunks=(10, 10)), False, id="zeros"),
        pytest.param(
            lambda: pb.asarray(
                np.arange(1200.0).reshape(30, 40), chunks=(10, 10), cparams={"filters": [2]}
            ),
            False,
            id="bitshuffle",
        ),
        pytest.param(
            lambda: pb.asarray(
                np.arange(1200.0).reshape(30, 40), chunks=(10, 10), cparams={"filters": [0]}
            ),
            True,
            id="unfiltered",
        ),
        pytest.param(
            lambda: pb.asarray(np.array([[(1, 2.5)] * 40] * 30, "i2,f8"), chunks=(10, 10)),
            True,
            id="structured",
        ),
    ],
)
def test_other_chunks_and_pipelines(served, make, want_served) -> None:
    a = make()
    want = a[...][7, 33]
    got = a[7, 33]
    assert got.shape == () and got.dtype == a.dtype
    assert got == want
    assert served == [want_served]


def test_subarray_dtype_is_left_to_the_general_path(served) -> None:
    dtype = np.dtype(("<f8", (3,)))
    a = pb.zeros((5, 4), dtype=dtype, chunks=(2, 2), blocks=(1, 2))
    got = a[3, 1]
    assert got.shape == (3,) and got.dtype == np.float64
    np.testing.assert_array_equal(got, np.zeros(3))
    assert served == [False]


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    data=st.data(),
    dtype=st.sampled_from(["u1", "<i2", "<f4", ">i4", "<f8", "<c16", "S3"]),
)
def test_point_property(shape, data, dtype) -> None:
    x = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    chunks = [data.draw(st.integers(1, n)) for n in shape]
    blocks = [data.draw(st.integers(1, c)) for c in chunks]
    a = pb.asarray(x, chunks=chunks, blocks=blocks)
    key = tuple(data.draw(st.integers(-n, n - 1)) for n in shape)
    got = a[key]
    assert got.shape == () and got.dtype == x.dtype
    assert got == x[key]
