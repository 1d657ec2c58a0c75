"""ndarray/itemruns.py: the runs of selected items a chunk read unshuffles straight into the
result; each run's items lie where the b2nd block layout and the result put them, every
selected item in exactly one run, and reads through them equal numpy's slicing."""

from __future__ import annotations

import importlib.util
import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyblosc2
from pyblosc2.kernels import kernels_in_use, select
from pyblosc2.ndarray.itemruns import item_runs
from pyblosc2.ndarray.reader import _pieces

FAST = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@st.composite
def _selections(draw: st.DrawFn):
    """A chunk's block shape and grid, and a selection in it (one range per axis; the
    innermost with step 1)."""
    nd = draw(st.integers(1, 3))
    blocks = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    bgrid = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    ranges = []
    for d in range(nd):
        ext = blocks[d] * bgrid[d]
        a = draw(st.integers(0, ext - 1))
        b = draw(st.integers(a + 1, ext))
        step = 1 if d == nd - 1 else draw(st.integers(1, 3))
        ranges.append(range(a, b, step))
    # the chunk's part of a larger result: ``lead`` result items before it on each axis and
    # ``pad`` after (other chunks' items)
    lead = [draw(st.integers(0, 3)) for _ in range(nd)]
    pad = [draw(st.integers(0, 3)) for _ in range(nd)]
    return blocks, bgrid, ranges, lead, pad, draw(st.sampled_from([2, 4, 8]))


def _brute(blocks, bgrid, ranges, lead, shape, t) -> set[tuple[int, int]]:
    """(plane position, result byte) of every selected item, from the layout's definition."""
    bs = math.prod(blocks) * t
    pairs = set()
    for pos in itertools.product(*(range(len(r)) for r in ranges)):
        idx = [r[p] for r, p in zip(ranges, pos, strict=True)]
        g = np.ravel_multi_index([i // b for i, b in zip(idx, blocks, strict=True)], bgrid)
        i = np.ravel_multi_index([i % b for i, b in zip(idx, blocks, strict=True)], blocks)
        at = [p + k for p, k in zip(pos, lead, strict=True)]
        pairs.add((int(g) * bs + int(i), int(np.ravel_multi_index(at, shape)) * t))
    return pairs


@FAST
@given(_selections())
def test_every_selected_item_lies_in_exactly_one_run_at_its_place(sel) -> None:
    blocks, bgrid, ranges, lead, pad, t = sel
    pieces = [
        _pieces(r.start, len(r), r.step, b, k) for r, b, k in zip(ranges, blocks, lead, strict=True)
    ]
    shape = [k + len(r) + p for r, k, p in zip(ranges, lead, pad, strict=True)]
    out = np.empty(shape, np.dtype(f"V{t}"))
    table = item_runs(pieces, blocks, bgrid, out.strides, t)
    assert table is not None
    got = [(s + i, d + i * t) for s, d, m in table.tolist() for i in range(m)]
    assert len(got) == len(set(got)) == math.prod(len(r) for r in ranges)  # no item twice
    assert set(got) == _brute(blocks, bgrid, ranges, lead, shape, t)


def test_a_slab_of_whole_block_rows_is_one_run_per_block() -> None:
    # the benchmark's slab a[i] of a (8, 128, 512) chunk in (2, 32, 512) blocks
    pieces = [
        _pieces(5, 1, 1, 2, 0),
        _pieces(0, 128, 1, 32, 0),
        _pieces(0, 512, 1, 512, 0),
    ]
    out = np.empty((1, 128, 512), np.float32)
    table = item_runs(pieces, (2, 32, 512), (4, 4, 1), out.strides, 4)
    assert table is not None
    bs = 2 * 32 * 512 * 4
    assert table.tolist() == [
        [(8 + i) * bs + 32 * 512, i * 32 * 512 * 4, 32 * 512] for i in range(4)
    ]


def test_an_innermost_axis_read_with_a_step_has_no_runs() -> None:
    pieces = [_pieces(0, 2, 1, 2, 0), _pieces(0, 4, 2, 8, 0)]
    assert item_runs(pieces, (2, 8), (1, 1), (16, 4), 4) is None


needs_numba = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="the gather path is the fast set's"
)


@needs_numba
@pytest.mark.parametrize("chunks, blocks", [((6, 10, 9), (2, 5, 9)), ((6, 5, 9), (2, 5, 9))])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_reads_through_the_runs_equal_numpys_slicing(chunks, blocks, data) -> None:
    """(Chunks narrower than the array on an inner axis: a run must not be lengthened over
    an outer axis whose result rows are wider than the chunk's.)"""
    shape = (12, 10, 9)
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape) * 1.5
    a = pyblosc2.asarray(
        x, chunks=chunks, blocks=blocks, cparams={"filters": [pyblosc2.Filter.SHUFFLE]}
    )
    key = []
    for n in shape[:-1]:
        lo = data.draw(st.integers(0, n - 1))
        key.append(slice(lo, data.draw(st.integers(lo + 1, n)), data.draw(st.integers(1, 3))))
    lo = data.draw(st.integers(0, 8))
    key.append(slice(lo, data.draw(st.integers(lo + 1, 9))))
    with kernels_in_use("numba"):
        assert np.array_equal(a[tuple(key)], x[tuple(key)])


@needs_numba
def test_a_slab_read_takes_the_runs_kernel(monkeypatch) -> None:
    shape = (16, 64, 64)
    x = np.linspace(0, 1, math.prod(shape), dtype=np.float32).reshape(shape)
    a = pyblosc2.asarray(
        x, chunks=(8, 64, 64), blocks=(2, 16, 64), cparams={"filters": [pyblosc2.Filter.SHUFFLE]}
    )
    with kernels_in_use("numba") as ks:
        calls: list[int] = []

        def spy(src, q, dst, table, t):
            calls.append(len(table))
            return ks.unshuffle_runs(src, q, dst, table, t)

        import dataclasses

        monkeypatch.setattr(select, "_active", dataclasses.replace(ks, unshuffle_runs=spy))
        assert np.array_equal(a[5], x[5])
    assert calls == [4]  # one call for the chunk, one run per touched block
