"""Appends whose cost does not grow with the frame (issue 24, part 0): NDArray.append through
one commit of the changed tail (Frame.replace_tail), the same chunks as resize + assignment,
on contiguous, sparse and in-memory frames."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb


def _grown_by_resize(dtype, chunks, blocks, pieces, **kw):
    a = pb.zeros(0, dtype=dtype, chunks=chunks, blocks=blocks, **kw)
    for p in pieces:
        n = a.shape[0]
        a.resize((n + len(p),))
        a[n:] = p
    return a


def _chunks(a) -> list[bytes]:
    s = a.schunk
    return [bytes(s.get_chunk(i)) for i in range(s.nchunks)]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=8),
    st.sampled_from([(8, 4), (10, 4), (5, 5)]),
)
def test_append_writes_the_chunks_resize_and_assignment_write(sizes, cb) -> None:
    rng = np.random.default_rng(len(sizes))
    pieces = [rng.integers(-5, 5, n).astype(np.int32) for n in sizes]
    ours = pb.zeros(0, dtype=np.int32, chunks=(cb[0],), blocks=(cb[1],))
    for p in pieces:
        ours.append(p)
    ref = _grown_by_resize(np.int32, (cb[0],), (cb[1],), pieces)
    np.testing.assert_array_equal(ours[:], np.concatenate(pieces))
    assert ours.shape == ref.shape
    assert _chunks(ours) == _chunks(ref)


@pytest.mark.parametrize("contiguous", [True, False])
def test_append_on_disk_reopens(tmp_path, contiguous) -> None:
    path = str(tmp_path / ("a.b2nd" if contiguous else "a.sb2nd"))
    a = pb.zeros(0, dtype=np.float64, chunks=(16,), blocks=(8,), urlpath=path, mode="w",
                 contiguous=contiguous)  # fmt: skip
    expected = []
    for i in range(40):
        piece = np.arange(i, i + 7, dtype=np.float64)
        a.append(piece)
        expected.append(piece)
    del a
    b = pb.open(path, mode="r")
    np.testing.assert_array_equal(b[:], np.concatenate(expected))


def test_append_of_zeros_keeps_special_chunks() -> None:
    a = pb.zeros(0, dtype=np.int64, chunks=(8,), blocks=(8,))
    a.append(np.zeros(32, np.int64))
    ref = _grown_by_resize(np.int64, (8,), (8,), [np.zeros(32, np.int64)])
    assert _chunks(a) == _chunks(ref)
    assert a.schunk._frame.offsets.min() < 0  # stored as special offsets, no bytes


def test_replace_tail_keeps_whole_chunks_in_place(tmp_path) -> None:
    s = pb.SChunk(chunksize=32, urlpath=str(tmp_path / "s.b2frame"), cparams={"typesize": 4})
    for i in range(5):
        s.append_data(np.full(8, i, np.int32))
    before = s._frame.offsets.copy()
    new = [s.compress_data(np.full(8, 9, np.int32)), s.compress_data(np.full(3, 7, np.int32))]
    assert s.replace_tail(3, new, {}) == 5
    assert s._frame.offsets[:3].tolist() == before[:3].tolist()
    assert np.frombuffer(s[:], np.int32).tolist() == [0] * 8 + [1] * 8 + [2] * 8 + [9] * 8 + [7] * 3


def test_replace_tail_falls_back_to_a_rewrite_when_sizes_become_variable() -> None:
    s = pb.SChunk(chunksize=32, cparams={"typesize": 4})
    for i in range(3):
        s.append_data(np.full(8, i, np.int32))
    big = s.compress_data(np.full(16, 5, np.int32))  # larger than the chunk size
    s.replace_tail(3, [big, s.compress_data(np.full(8, 6, np.int32))], {})
    assert s._frame.header.chunksize == 0
    assert np.frombuffer(s[:], np.int32).tolist()[-24:] == [5] * 16 + [6] * 8


def _readonly(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6500), st.lists(st.integers(1, 2500), min_size=1, max_size=6))
def test_index_encoder_told_of_appends_writes_what_a_fresh_encoder_writes(start, steps) -> None:
    """An encoder told that the offsets extend the ones it encoded last (an append) skips the
    comparison of its kept blocks: its bytes stay those of an encoder that knows nothing, also
    across whole blocks, after a change that is not an append, and when the hint is not the
    array it encoded last (it is then ignored)."""
    from pyblosc2.frame.writer import IndexEncoder

    rng = np.random.default_rng(start)
    offsets = np.cumsum(rng.integers(50, 400, start + sum(steps))).astype(np.int64)
    enc = IndexEncoder()
    prev = _readonly(offsets[:start])
    assert enc.encode(prev) == IndexEncoder().encode(prev)
    n = start
    for i, k in enumerate(steps):
        n += k
        cur = _readonly(offsets[:n])
        if i == 1:  # another writer's change: the first offset moved
            changed = cur.copy()
            changed[0] += 1
            assert enc.encode(changed) == IndexEncoder().encode(changed)
        hint = prev if i != 2 else _readonly(prev)  # a stranger: compared, not trusted
        assert enc.encode(cur, hint) == IndexEncoder().encode(cur)
        prev = cur


def test_appended_offsets_are_read_only_views_that_later_appends_leave_alone(tmp_path) -> None:
    s = pb.SChunk(chunksize=80, urlpath=str(tmp_path / "s.b2frame"), mode="w")
    s.append_data(np.arange(10, dtype=np.int64))
    first = s._frame.offsets
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0] = 1
    kept = first.copy()
    for k in range(70):
        s.append_data(np.full(10, k, np.int64))
    np.testing.assert_array_equal(first, kept)  # the older view still says what it said
    s.delete_chunk(3)  # a rewrite: a new offsets array, the next append a new buffer
    s.append_data(np.full(10, 99, np.int64))
    again = pb.open(str(tmp_path / "s.b2frame"))
    np.testing.assert_array_equal(again._frame.offsets, s._frame.offsets)
    assert s.nchunks == again.nchunks == 71
    assert np.frombuffer(again.decompress_chunk(70), np.int64).tolist() == [99] * 10
