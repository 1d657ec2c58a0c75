"""``group_reduce`` (pyblosc2.compute.groupreduce): against a plain-Python grouping, over
NDArrays read in pieces, with NaN keys and values, object keys, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.compute import groupreduce
from pyblosc2.errors import ParamError


def _python(keys, values, op):
    groups: dict = {}
    for i, k in enumerate(keys.tolist()):
        if isinstance(k, float) and math.isnan(k):
            continue
        groups.setdefault(k, []).append(None if values is None else values[i])
    out = {}
    for k, vs in groups.items():
        ok = [v for v in vs if v is not None and not (isinstance(v, float) and math.isnan(v))]
        out[k] = {
            "size": len(vs),
            "count": len(ok),
            "sum": sum(ok) if ok else math.nan,
            "mean": sum(ok) / len(ok) if ok else math.nan,
            "min": min(ok) if ok else math.nan,
            "max": max(ok) if ok else math.nan,
        }[op]
    return out


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.sampled_from([0.0, 1.5, -2.0, 7.0, math.nan]), min_size=0, max_size=60),
    values=st.data(),
    op=st.sampled_from(groupreduce.OPS),
    piece=st.integers(1, 7),
)
def test_against_python(keys, values, op, piece) -> None:
    k = np.array(keys, dtype=np.float64)
    v = np.array(
        values.draw(
            st.lists(st.sampled_from([1.0, -3.25, 8.0, math.nan]), min_size=len(k), max_size=len(k))
        ),
        dtype=np.float64,
    )
    old = groupreduce.PIECE_ITEMS
    groupreduce.PIECE_ITEMS = piece  # pieces merged into the running groups
    try:
        groups, res = pb.group_reduce(k, v, op=op, sort=True)
    finally:
        groupreduce.PIECE_ITEMS = old
    want = _python(k, v.tolist(), op)
    assert groups.tolist() == sorted(want)
    np.testing.assert_allclose(res, [want[g] for g in groups.tolist()], equal_nan=True)
    assert res.dtype == (np.int64 if op in ("size", "count") else np.float64)


def test_integer_values_and_ndarrays() -> None:
    keys = pb.asarray(np.array([2, 1, 2, 1, 2] * 40, dtype=np.int16), chunks=(16,), blocks=(8,))
    values = pb.asarray(np.array([10, 1, 30, 3, 50] * 40, dtype=np.int32), chunks=(32,))
    groups, sums = pb.group_reduce(keys, values, op="sum")
    assert groups.dtype == np.int16 and groups.tolist() == [1, 2]
    assert sums.dtype == np.int64 and sums.tolist() == [160, 3600]
    assert pb.group_reduce(keys, values, op="max")[1].tolist() == [3, 50]
    assert pb.group_reduce(keys, op="size")[1].tolist() == [80, 120]
    b = pb.group_reduce(np.array([True, False, True]), np.array([1.0, 2.0, 3.0]), op="mean")
    assert b[0].tolist() == [False, True] and b[1].tolist() == [2.0, 2.0]


def test_nan_keys_and_signed_zeros() -> None:
    keys = np.array([0.5, np.nan, 0.5, -0.0, 0.0, np.nan])
    values = np.array([1.0, 2.0, 3.0, 10.0, 20.0, 5.0])
    groups, sums = pb.group_reduce(keys, values, op="sum", dropna=False)
    assert groups[0] == 0.0 and groups[1] == 0.5 and np.isnan(groups[2])
    assert sums.tolist() == [30.0, 4.0, 7.0]
    assert pb.group_reduce(keys, values, op="sum")[0].tolist() == [0.0, 0.5]


def test_object_keys() -> None:
    keys = np.array([np.nan, None, "b", "a", np.nan, None], dtype=object)
    groups, sizes = pb.group_reduce(keys, op="size", sort=True, dropna=False)
    assert groups[:3].tolist() == [None, "a", "b"] and np.isnan(groups[3])
    assert sizes.tolist() == [2, 1, 1, 2]
    groups, sums = pb.group_reduce(keys, np.arange(6.0), op="sum")  # unsorted, NaN dropped
    assert groups.tolist() == [None, "b", "a"] and sums.tolist() == [6.0, 2.0, 3.0]


def test_refusals() -> None:
    with pytest.raises(ParamError, match="1-D"):
        pb.group_reduce(np.ones((2, 2)), op="size")
    with pytest.raises(ParamError, match="values are required"):
        pb.group_reduce(np.arange(3), op="sum")
    with pytest.raises(ParamError, match="same length"):
        pb.group_reduce(np.arange(3), np.arange(2), op="sum")
    with pytest.raises(ParamError, match="unsupported"):
        pb.group_reduce(np.arange(3), op="bad")
    with pytest.raises(ParamError, match="dtype"):
        pb.group_reduce(np.arange(2), np.array(["a", "b"]), op="sum")
    g, r = pb.group_reduce(np.array([], np.int8), np.array([]), op="mean")
    assert g.dtype == np.int8 and len(g) == len(r) == 0
