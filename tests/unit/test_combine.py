"""concat, stack and astype built chunk by chunk (ndarray/combine.py)."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb


@pytest.mark.parametrize(
    ("shapes", "axis", "chunks"),
    [
        (((3,), (5,), (1,)), 0, (2,)),
        (((2, 3, 4), (2, 3, 2)), 2, (2, 2, 3)),
        (((2, 3), (4, 3)), -2, (3, 2)),
    ],
)
def test_concat_matches_numpy(shapes, axis: int, chunks) -> None:
    parts = [np.arange(np.prod(s)).reshape(s) + 100 * i for i, s in enumerate(shapes)]
    ops = [pb.asarray(p) if i % 2 else p for i, p in enumerate(parts)]
    got = pb.concat(ops, axis=axis, chunks=chunks)
    np.testing.assert_array_equal(got[...], np.concatenate(parts, axis=axis))


def test_concat_promotes_dtypes_and_refuses_mismatched_shapes() -> None:
    got = pb.concat([np.arange(2, dtype=np.int8), pb.asarray(np.ones(2))])
    assert got.dtype == np.float64
    with pytest.raises(pb.ParamError, match="shapes"):
        pb.concat([np.zeros((2, 3)), np.zeros((2, 4))], axis=0)
    with pytest.raises(pb.ParamError, match="dimensions"):
        pb.concat([np.zeros(2), np.zeros((2, 2))])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_matches_numpy(axis: int) -> None:
    a = np.arange(12).reshape(3, 4)
    got = pb.stack([pb.asarray(a), a * 2, pb.asarray(a + 1)], axis=axis)
    np.testing.assert_array_equal(got[...], np.stack([a, a * 2, a + 1], axis=axis))


def test_astype_casts_and_checks_the_casting_rule() -> None:
    a = pb.asarray(np.arange(10), chunks=(4,), blocks=(2,))
    b = pb.astype(a, np.float32)
    assert (b.dtype, b.chunks, b.blocks) == (np.float32, (4,), (2,))
    np.testing.assert_array_equal(b[...], np.arange(10, dtype=np.float32))
    with pytest.raises(pb.ParamError, match="casting='safe'"):
        pb.astype(a, np.int8, casting="safe")
