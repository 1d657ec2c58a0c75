"""compute/selection.py: selections of numpy's basic keys, and the pieces a selection is
computed in — they tile it exactly, follow the chunk grid on unit-step axes, and are
generated one at a time (never planned whole)."""

from __future__ import annotations

import itertools
import types

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pyblosc2.compute.selection import Selection, piece_boxes, split_fancy


@st.composite
def keys(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[object, ...]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=12))
    key = [
        draw(
            st.one_of(
                st.integers(-n, n - 1),
                st.builds(
                    slice,
                    st.none() | st.integers(-n - 2, n + 2),
                    st.none() | st.integers(-n - 2, n + 2),
                    st.none() | st.sampled_from([1, 2, 3, -1, -2]),
                ),
            )
        )
        for n in shape
    ]
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), None)
    return shape, tuple(key)


@settings(max_examples=60, deadline=None)
@given(case=keys(), data=st.data())
def test_pieces_tile_the_selection_and_give_numpys_result(case, data) -> None:
    shape, key = case
    x = np.arange(int(np.prod(shape))).reshape(shape)
    sel = Selection.of(key, shape)
    assert sel.result_shape == x[key].shape
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    got = np.full(sel.shape, -1)
    boxes = piece_boxes(sel, chunks, 7)
    assert isinstance(boxes, types.GeneratorType)
    for box in boxes:
        assert (got[box] == -1).all()  # no item twice
        got[box] = x[sel.source_key(box)]
        src = sel.source_key(box)
        for k, c, r in zip(src, chunks, sel.ranges, strict=True):
            if r.step == 1 and len(r) and k.stop is not None:
                assert (k.start // c) == ((k.stop - 1) // c)  # one chunk per unit-step axis
    result = sel.finish(got)
    np.testing.assert_array_equal(result, x[key])


@settings(max_examples=40, deadline=None)
@given(case=keys(), data=st.data())
def test_composed_keys_read_what_a_view_selects(case, data) -> None:
    shape, key = case
    key = tuple(k for k in key if k is not None)
    x = np.arange(int(np.prod(shape))).reshape(shape)
    sel = Selection.of(key, shape)
    view = x[key]
    inner = tuple(
        slice(*sorted(data.draw(st.tuples(st.integers(0, n), st.integers(0, n)))))
        for n in view.shape
    )
    np.testing.assert_array_equal(x[sel.compose(inner)], view[inner])


def test_an_empty_part_of_a_reversed_selection_is_empty() -> None:
    """Found by hypothesis: range(0, -1, -1)[1:1] starts at -1, which as a slice start is the
    last item, not an empty selection."""
    x = np.arange(5)
    sel = Selection.of((slice(None, None, -1),), x.shape)
    for inner in [(slice(5, 5),), (slice(2, 2),), (slice(0, 0),)]:
        np.testing.assert_array_equal(x[sel.compose(inner)], x[::-1][inner])
    one = Selection.of((slice(None, None, -1),), (1,))
    assert np.arange(1)[one.compose((slice(1, 1),))].size == 0


def test_a_huge_grid_is_not_listed() -> None:
    sel = Selection.everything((10**9, 10**9))
    boxes = piece_boxes(sel, (1000, 1000), 10**6)
    assert list(itertools.islice(boxes, 2)) == [
        (slice(0, 1000), slice(0, 1000)),
        (slice(0, 1000), slice(1000, 2000)),
    ]


def test_fancy_keys_read_their_bounding_box() -> None:
    x = np.arange(100).reshape(10, 10)
    for key in [
        np.array([7, 2, 7]),
        (slice(1, 4), [0, 9]),
        x > 90,
        (3, np.array([True] * 5 + [False] * 5)),
    ]:
        sel, local = split_fancy(key, (10, 10))
        box = x[tuple(slice(r.start, r.stop) for r in sel.ranges)]
        np.testing.assert_array_equal(box[local], x[key])
