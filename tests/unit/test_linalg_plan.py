"""How products are cut (linalg/plan.py, linalg/output.py): work regions cover every result
chunk once, in storage order, within the budget; steps tile the contracted axes within theirs;
the default result blocks."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyblosc2.linalg import output, plan
from pyblosc2.ndarray.chunkfill import chunk_regions


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=4),
    data=st.data(),
    budget=st.sampled_from([1, 16, 100, 1000, 1 << 20]),
)
def test_work_regions_cover_each_chunk_once_in_storage_order(
    shape: list[int], data: Any, budget: int
) -> None:
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    saved = plan.WORK_BYTES
    plan.WORK_BYTES = budget
    try:
        works = list(plan.work_regions(tuple(shape), chunks, 8))
    finally:
        plan.WORK_BYTES = saved
    covered = [r for w in works for r in output._chunks_in(w, chunks)]
    assert covered == chunk_regions(tuple(shape), chunks)  # each once, in storage order
    chunk_bytes = math.prod(chunks) * 8
    for w in works:
        nbytes = math.prod(s.stop - s.start for s in w) * 8
        assert nbytes <= max(budget, chunk_bytes)


def test_work_regions_of_a_scalar_result() -> None:
    assert list(plan.work_regions((), (), 8)) == [()]


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 40), min_size=0, max_size=3),
    data=st.data(),
    per_unit=st.integers(1, 50),
    budget=st.sampled_from([8, 64, 1000, 1 << 20]),
)
def test_steps_tile_the_contracted_axes_within_the_budget(
    lengths: list[int], data: Any, per_unit: int, budget: int
) -> None:
    grains = [data.draw(st.integers(1, n)) for n in lengths]
    saved = plan.STEP_BYTES
    plan.STEP_BYTES = budget
    try:
        step, boxes = plan.steps(lengths, grains, per_unit, 8)
        boxes = list(boxes)
    finally:
        plan.STEP_BYTES = saved
    seen = np.zeros(lengths, int)
    for box in boxes:
        seen[box] += 1
    assert (seen == 1).all()
    assert math.prod(step) * per_unit * 8 <= budget or all(s == 1 for s in step)
    for s, g, n in zip(step, grains, lengths, strict=True):
        assert s == n or s < g or s % g == 0  # whole, or on the operand's chunk grain


def test_steps_without_contracted_axes_are_one_empty_box() -> None:
    step, boxes = plan.steps([], [], 10, 8)
    assert (step, list(boxes)) == ((), [()])


@pytest.mark.parametrize(
    ("chunks", "itemsize", "want"),
    [
        ((125, 4000), 8, (16, 4000)),
        ((3, 5), 8, (3, 5)),
        ((1, 1, 10**6), 1, (1, 1, 500_000)),
        ((), 8, ()),
    ],
)
def test_result_blocks(chunks: Any, itemsize: int, want: Any) -> None:
    blocks = output.result_blocks(chunks, itemsize)
    assert blocks == want
    assert math.prod(blocks) * itemsize <= max(output.RESULT_BLOCK_BYTES, itemsize)


def test_a_panel_is_kept_only_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(60).reshape(6, 10)
    op = plan.Operand(x, x.shape, x.dtype, x.shape)
    monkeypatch.setattr(plan, "PANEL_BYTES", 2 * 10 * x.itemsize)
    kept = plan.Panel(op, {0: slice(0, 2)}, (1,))
    unkept = plan.Panel(op, {0: slice(0, 3)}, (1,))
    assert kept.whole is not None and unkept.whole is None
    for p in (kept, unkept):
        rows = p.fixed[0]
        for a, b in itertools.pairwise(range(0, 11, 5)):
            np.testing.assert_array_equal(p.part((slice(a, b),)), x[rows, a:b])
