"""ndarray/geometry.py: an array's geometry derived once from its ``b2nd`` metalayer
(frame-format.md §8.1, §8.3-§8.4), and held by the array as one object replaced whole."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ndarray.b2nd_meta import B2NDMeta
from pyblosc2.ndarray.geometry import Geometry, resize_plan

#: (shape, chunks, blocks, dtype) -> (ext, grid, bgrid, nchunks, chunk_nbytes, ext_shape)
DERIVED = {
    "spec 11.2 (chunks padded to blocks)": (
        ((5, 7), (3, 4), (2, 3), "<i2"),
        ((4, 6), (2, 2), (2, 2), 4, 48, (6, 8)),
    ),
    "exact fit": (((8, 8), (4, 8), (2, 4), "<f8"), ((4, 8), (2, 1), (2, 2), 2, 256, (8, 8))),
    "0-d": (((), (), (), "<f8"), ((), (), (), 1, 8, ())),
    "empty axis, zero chunk": (
        ((0, 5), (0, 5), (0, 5), "u1"),
        ((0, 5), (0, 1), (0, 1), 0, 0, (0, 5)),
    ),
    "wide items": (((3,), (2,), (1,), "S300"), ((2,), (2,), (2,), 2, 600, (4,))),
}


def _meta(shape, chunks, blocks, dtype) -> B2NDMeta:
    return B2NDMeta(tuple(shape), tuple(chunks), tuple(blocks), np.dtype(dtype))


@pytest.mark.parametrize(("given_", "want"), DERIVED.values(), ids=list(DERIVED))
def test_derived_fields(given_, want) -> None:
    g = Geometry.from_meta(_meta(*given_))
    assert (g.ext, g.grid, g.bgrid, g.nchunks, g.chunk_nbytes, g.ext_shape) == want
    shape, _, blocks, dtype = given_
    assert g.itemsize == np.dtype(dtype).itemsize
    assert g.ndim == len(shape)
    assert g.size == math.prod(shape)
    assert g.nbytes == math.prod(shape) * np.dtype(dtype).itemsize
    assert g.block_nbytes == math.prod(blocks) * np.dtype(dtype).itemsize


@pytest.mark.parametrize("given_", [g for g, _ in DERIVED.values()], ids=list(DERIVED))
def test_round_trip_from_the_metalayer_bytes(given_) -> None:
    meta = _meta(*given_)
    parsed = B2NDMeta.from_bytes(meta.to_bytes(), typesize=meta.dtype.itemsize)
    g = Geometry.from_meta(parsed)
    assert g.to_meta() == meta
    assert g.to_meta().to_bytes() == meta.to_bytes()


@st.composite
def _partitions(draw: st.DrawFn) -> tuple[tuple[int, ...], ...]:
    ndim = draw(st.integers(1, 4))
    blocks = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    chunks = tuple(b * draw(st.integers(1, 3)) + draw(st.integers(0, b - 1)) for b in blocks)
    shape = tuple(draw(st.lists(st.integers(1, 40), min_size=ndim, max_size=ndim)))
    return shape, chunks, blocks


@given(part=_partitions(), dtype=st.sampled_from(["u1", "<i4", "<c16", "S3"]))
def test_derived_fields_model(part, dtype) -> None:
    """Against numpy's own arithmetic: a chunk is padded to the fewest whole blocks, the
    grid holds the shape in the fewest whole chunks."""
    shape, chunks, blocks = part
    g = Geometry.from_meta(_meta(shape, chunks, blocks, dtype))
    s, c, b = np.array(shape), np.array(chunks), np.array(blocks)
    assert g.ext == tuple(np.ceil(c / b).astype(int) * b)
    assert g.grid == tuple(np.ceil(s / c).astype(int))
    assert g.bgrid == tuple(np.ceil(c / b).astype(int))
    assert g.nchunks == int(np.prod(g.grid))
    assert g.chunk_nbytes == int(np.prod(g.ext)) * np.dtype(dtype).itemsize
    assert g.to_meta() == _meta(shape, chunks, blocks, dtype)


def test_an_array_built_with_it_has_its_chunk_count_and_size() -> None:
    g = Geometry.from_meta(_meta((10, 7), (4, 4), (3, 2), "<i4"))
    a = pb.zeros(g.shape, g.dtype, g.chunks, g.blocks)
    assert (a.schunk.nchunks, a.schunk.chunksize) == (g.nchunks, g.chunk_nbytes)
    assert (a.ext_shape, a.ext_chunks, a.chunksize, a.blocksize) == (
        g.ext_shape,
        g.ext,
        g.chunk_nbytes,
        g.block_nbytes,
    )


def test_frozen_and_equal_by_its_metalayer_fields() -> None:
    g = Geometry.from_meta(_meta((5, 7), (3, 4), (2, 3), "<i2"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.shape = (6, 7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.grid = (9, 9)
    same = Geometry((5, 7), (3, 4), (2, 3), np.dtype("<i2"))
    assert g == same and hash(g) == hash(same)
    assert g != Geometry((5, 7), (3, 4), (2, 3), np.dtype(">i2"))


def test_derived_fields_are_not_arguments() -> None:
    with pytest.raises(TypeError):
        Geometry((4,), (2,), (1,), np.dtype("u1"), (2,))


def test_pickles_with_its_derived_fields() -> None:
    g = Geometry.from_meta(_meta((5, 7), (3, 4), (2, 3), "<i2"))
    back = pickle.loads(pickle.dumps(g))
    assert back == g
    assert (back.ext, back.grid, back.bgrid, back.itemsize) == (g.ext, g.grid, g.bgrid, 2)


def test_resized_is_a_new_geometry_and_leaves_the_old_one() -> None:
    g = Geometry.from_meta(_meta((5, 7), (3, 4), (2, 3), "<i2"))
    h = g.resized((10, 2))
    assert (h.shape, h.grid, h.ext, h.bgrid) == ((10, 2), (4, 1), g.ext, g.bgrid)
    assert (g.shape, g.grid) == ((5, 7), (2, 2))


def test_an_array_holds_one_geometry_and_resize_replaces_it_whole() -> None:
    """The state a shape change touches is one attribute (the frame version it was derived
    at and the geometry), swapped in one assignment (what lets a shared handle see the old
    or the new shape, never a mix); ``_axes`` and ``_dropped`` (an expand_dims or squeeze
    view's) never change."""
    a = pb.asarray(np.arange(10, dtype=np.int16), chunks=(4,), blocks=(2,))
    before = a._geometry
    assert set(vars(a)) == {"schunk", "_state", "_axes", "_dropped"}
    a.resize((13,))
    assert a._geometry is not before
    assert before.shape == (10,) and before.grid == (3,)
    assert a._geometry == before.resized((13,))
    assert (a.shape, a.schunk.nchunks) == ((13,), 4)
    assert set(vars(a)) == {"schunk", "_state", "_axes", "_dropped"}
    np.testing.assert_array_equal(a[...], np.r_[np.arange(10), 0, 0, 0])


def test_resize_of_an_empty_array_with_a_zero_chunk_length() -> None:
    """Its chunk grid is empty before and after (the shape's own arithmetic divided by the
    zero chunk length, a ZeroDivisionError, before the geometry owned the grid)."""
    a = pb.zeros((0, 5), chunks=(0, 5), blocks=(0, 5))
    a.resize((0, 6))
    assert a.shape == (0, 6) and a.schunk.nchunks == 0
    assert pb.ndarray_from_cframe(a.to_cframe())[...].shape == (0, 6)


def _walked(old: Geometry, newshape: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """resize_plan's answer the slow way: the new grid walked chunk by chunk."""
    import itertools

    new = old.resized(newshape)
    flat, edges = [], []
    for i, coords in enumerate(itertools.product(*[range(g) for g in new.grid])):
        if not all(c < g for c, g in zip(coords, old.grid, strict=True)):
            flat.append(-1)
            continue
        flat.append(int(np.ravel_multi_index(coords, old.grid)) if coords else 0)
        keep = [
            min(k, o - c * k, n - c * k)
            for k, o, n, c in zip(old.chunks, old.shape, newshape, coords, strict=True)
        ]
        if keep != list(old.chunks):
            edges.append(i)
    return flat, edges


@given(
    part=_partitions(),
    grow=st.lists(st.integers(-6, 9), min_size=4, max_size=4),
)
def test_resize_plan_matches_the_chunk_by_chunk_walk(part, grow) -> None:
    """Each new chunk's old number (-1: new) and the edge chunks, for growth and shrinkage
    on every axis, equal those of the per-chunk walk resize used before."""
    shape, chunks, blocks = part
    old = Geometry(shape, chunks, blocks, np.dtype("u1"))
    newshape = tuple(max(0, n + g) for n, g in zip(shape, grow[: len(shape)], strict=True))
    if all(newshape) and not all(chunks):
        return  # (resize refuses it)
    flat, edges = resize_plan(old, newshape)
    assert (flat.tolist(), edges.tolist()) == _walked(old, newshape)


def test_resize_plan_of_a_growing_array_has_one_edge() -> None:
    old = Geometry((25, 8), (10, 8), (5, 8), np.dtype("<i8"))
    flat, edges = resize_plan(old, (35, 8))
    assert flat.tolist() == [0, 1, 2, -1]
    assert edges.tolist() == [2]
    assert resize_plan(Geometry((), (), (), np.dtype("<f8")), ())[0].tolist() == [0]
