"""NDArray selections (ints, slices with any step, Ellipsis) read by ndarray/reader.py give
numpy's answer, from memory and from files, whole-chunk and block-by-block, with one thread
and with several; strided selections read only the blocks that hold a selected item."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.kernels import kernels_in_use
from pyblosc2.ndarray.reader import _pieces

SHAPE = (37, 50, 23)
X = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE) * 0.5

KEYS = [
    pytest.param((slice(None),) * 3, id="all"),
    pytest.param((5, 7, 3), id="point"),
    pytest.param((36, 49, 22), id="last-point"),
    pytest.param((slice(3, 30), slice(11, 12), slice(None)), id="cross-1"),
    pytest.param((slice(None), 17, slice(None)), id="cross-int"),
    pytest.param((4,), id="slab"),
    pytest.param((slice(None, None, 7), slice(None, None, 9), slice(None, None, 5)), id="steps"),
    pytest.param((slice(None, None, 40), slice(None, None, 60), 0), id="steps-over-chunks"),
    pytest.param((slice(None, None, -3), slice(40, 2, -7), slice(None)), id="negative-steps"),
    pytest.param((Ellipsis, slice(2, 21, 2)), id="ellipsis-step"),
    pytest.param((slice(10, 10), 3), id="empty"),
    pytest.param((slice(1, 36), slice(1, 49), slice(1, 22)), id="inner-box"),
]
PARTITIONS = [
    pytest.param((10, 16, 23), (5, 4, 8), id="uneven-blocks"),
    pytest.param((8, 25, 23), (2, 5, 23), id="block-rows"),
    pytest.param((37, 50, 23), (37, 50, 23), id="one-chunk-one-block"),
]


@pytest.fixture(params=["memory", "file"])
def where(request, tmp_path) -> dict:
    return {} if request.param == "memory" else {"urlpath": str(tmp_path / "a.b2nd")}


@pytest.mark.parametrize(("chunks", "blocks"), PARTITIONS)
@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("nthreads", [1, 2])
def test_selection_matches_numpy(where, chunks, blocks, key, nthreads) -> None:
    a = pb.asarray(X, chunks=chunks, blocks=blocks, dparams={"nthreads": nthreads}, **where)
    got = a[key]
    want = X[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_zero_dim_array_reads_its_value() -> None:
    a = pb.asarray(np.array(2.5))
    assert a[()] == 2.5


@pytest.mark.parametrize(
    ("first", "count", "step", "block", "want"),
    [
        pytest.param(0, 8, 1, 4, [(0, 2, slice(0, 4, 1), 0, 8)], id="two-whole-blocks-merged"),
        pytest.param(
            2,
            7,
            1,
            4,
            [
                (0, 1, slice(2, 4, 1), 0, 2),
                (1, 1, slice(0, 4, 1), 2, 4),
                (2, 1, slice(0, 1, 1), 6, 1),
            ],
            id="head-run-tail",
        ),
        pytest.param(
            1,
            3,
            5,
            4,
            [
                (0, 1, slice(1, 2, 5), 0, 1),
                (1, 1, slice(2, 3, 5), 1, 1),
                (2, 1, slice(3, 4, 5), 2, 1),
            ],
            id="step-over-blocks",
        ),
        pytest.param(
            0,
            4,
            2,
            4,
            [(0, 1, slice(0, 3, 2), 0, 2), (1, 1, slice(0, 3, 2), 2, 2)],
            id="step-in-blocks",
        ),
    ],
)
def test_pieces_group_selected_indices_by_block(first, count, step, block, want) -> None:
    assert _pieces(first, count, step, block, 0) == want


def test_strided_read_touches_only_blocks_with_selected_items(tmp_path, decoded_blocks) -> None:
    x = np.arange(64 * 64, dtype=np.int32).reshape(64, 64)
    a = pb.asarray(x, chunks=(64, 64), blocks=(8, 8), urlpath=str(tmp_path / "s.b2nd"))
    decoded_blocks.clear()
    np.testing.assert_array_equal(a[::40, ::40], x[::40, ::40])
    # items at rows/cols 0 and 40: blocks (0, 0), (0, 5), (5, 0), (5, 5) of the 8 x 8 grid
    assert sorted(decoded_blocks) == [0, 5, 40, 45]


def test_fast_unshuffle_sets_decode_whole_chunks_at_once(monkeypatch) -> None:
    """A kernel set whose unshuffle runs near memory speed unshuffles a whole chunk into a
    buffer and copies rows out of it: no byte planes are scattered."""
    from pyblosc2.kernels.numpy_set import NUMPY
    from pyblosc2.ndarray import reader

    calls: list[int] = []
    monkeypatch.setattr(reader, "_scatter_planes", lambda *a: calls.append(1))
    fast = dataclasses.replace(NUMPY, fast_unshuffle=True)
    monkeypatch.setattr(reader, "active", lambda: fast)
    a = pb.asarray(X, chunks=(10, 16, 23), blocks=(5, 4, 8))
    np.testing.assert_array_equal(a[...], X)
    np.testing.assert_array_equal(a[1:30, 3:47:2], X[1:30, 3:47:2])
    assert calls == []


@pytest.mark.parametrize(
    ("chunks", "blocks", "in_place"),
    [
        pytest.param((10, 50, 23), (2, 50, 23), 3, id="block-slabs"),  # 4 chunks, 1 ragged
        pytest.param((10, 50, 23), (5, 50, 23), 3, id="half-chunk-slabs"),
        pytest.param((10, 50, 23), (10, 25, 23), 0, id="half-rows"),
        pytest.param((10, 16, 23), (5, 4, 8), 0, id="blocks-not-in-c-order"),
    ],
)
def test_whole_chunk_in_c_order_is_decoded_in_place(monkeypatch, chunks, blocks, in_place) -> None:
    """A whole chunk whose blocks lie in the result's C order (blocks spanning the trailing
    axes) is decoded straight into the result: no buffer, no copy; a ragged edge chunk and
    blocks in another order go through the buffer. Both give numpy's items."""
    from pyblosc2.kernels.numpy_set import NUMPY
    from pyblosc2.ndarray import reader

    fast = dataclasses.replace(NUMPY, fast_unshuffle=True)  # the buffer path, not planes
    monkeypatch.setattr(reader, "active", lambda: fast)
    seen: list[int] = []
    real = reader.ChunkReader.decode

    def decode(self, out=None, nthreads=1):
        seen.append(int(out.ctypes.data))
        return real(self, out, nthreads)

    monkeypatch.setattr(reader.ChunkReader, "decode", decode)
    a = pb.asarray(X, chunks=chunks, blocks=blocks)
    out = np.empty(SHAPE, X.dtype)
    got = reader.read_selection(a, [range(n) for n in SHAPE], out=out)
    assert got is out
    np.testing.assert_array_equal(out, X)
    lo, hi = out.ctypes.data, out.ctypes.data + out.nbytes
    assert sum(lo <= p < hi for p in seen) == in_place
    np.testing.assert_array_equal(a[12:30], X[12:30])
    with pytest.raises(ValueError, match="C-contiguous"):
        reader.read_selection(a, [range(n) for n in SHAPE], out=out[:, :, ::2])


@pytest.mark.parametrize("planes_max", [1 << 23, 1000])
def test_whole_chunks_scatter_planes_only_up_to_planes_max(monkeypatch, planes_max) -> None:
    from pyblosc2.ndarray import reader

    calls: list[int] = []
    real = reader._scatter_planes

    def spy(r, geo, pieces, out):
        calls.append(r.header.nbytes)
        return real(r, geo, pieces, out)

    monkeypatch.setattr(reader, "_scatter_planes", spy)
    monkeypatch.setattr(reader, "PLANES_MAX", planes_max)
    a = pb.asarray(X, chunks=(10, 16, 23), blocks=(5, 4, 8))  # chunks of 10*16*24*8 bytes
    with kernels_in_use("numpy"):
        np.testing.assert_array_equal(a[...], X)
        np.testing.assert_array_equal(a[1:30, 3:47:2], X[1:30, 3:47:2])
    if planes_max > 30720:
        assert calls and set(calls) == {30720}
    else:  # larger chunks: block by block straight into the result, no plane buffer
        assert calls == []


@pytest.fixture
def fast_numpy(monkeypatch):
    """The numpy kernel set flagged as unshuffling near memory speed (the numba set's
    paths, run without numba)."""
    from pyblosc2.kernels.numpy_set import NUMPY
    from pyblosc2.ndarray import reader

    monkeypatch.setattr(reader, "active", lambda: dataclasses.replace(NUMPY, fast_unshuffle=True))
    return reader


def test_most_of_touched_blocks_are_gathered_per_chunk(fast_numpy, monkeypatch) -> None:
    """A slab of a shuffled array with a fast unshuffle: the touched blocks of each chunk are
    decoded, unshuffled per run and copied out per combination of pieces (one call per
    chunk), and the result is numpy's."""
    calls: list[list[int]] = []
    real = fast_numpy._gather_blocks

    def spy(bound, plan, pieces, touched, out):
        calls.append(list(touched))
        return real(bound, plan, pieces, touched, out)

    monkeypatch.setattr(fast_numpy, "_gather_blocks", spy)
    a = pb.asarray(X, chunks=(10, 16, 23), blocks=(5, 4, 8))
    np.testing.assert_array_equal(a[4], X[4])
    # a[4]: per chunk of the first chunk row, the 4 x 3 blocks of block row 0
    assert calls and all(len(t) == 12 for t in calls)
    calls.clear()
    np.testing.assert_array_equal(a[3:4, 5:6, :], X[3:4, 5:6, :])  # 1 item in 20: picked
    assert calls == []


def _axis_keys(n: int) -> st.SearchStrategy:
    """An int, a slice with small steps (dense selections, which the gather serves), or any
    slice."""
    dense = st.builds(slice, st.integers(0, n - 1), st.integers(1, n), st.sampled_from([1, 2, 3]))
    return st.one_of(st.integers(-n, n - 1), dense, st.slices(n))


@given(
    key=st.tuples(*(_axis_keys(n) for n in SHAPE)),
    dtype=st.sampled_from(["<f8", "<i4", "<u2", "u1"]),
    nthreads=st.sampled_from([1, 2]),
)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_gathered_and_picked_selections_match_numpy(fast_numpy, key, dtype, nthreads) -> None:
    """Random selections (any step) give numpy's answer through the per-chunk gather (with a
    fast unshuffle) and the per-block picks."""
    x = X.astype(dtype)
    a = pb.asarray(x, chunks=(10, 16, 23), blocks=(5, 4, 8), dparams={"nthreads": nthreads})
    np.testing.assert_array_equal(a[key], x[key])
