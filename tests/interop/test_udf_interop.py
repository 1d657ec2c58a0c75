"""User functions against python-blosc2 (issue 33): the same ``lazyudf``, DSL kernel and ``jit``
function on the same files written by python-blosc2 give the same results in both libraries,
our results open in python-blosc2, the function is called on the same pieces with the same
offsets, and ``group_reduce`` agrees."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pyblosc2 as pb

SHAPE = (300, 200)


def add_sin(inputs, output, offset):
    a, b = inputs
    output[:] = np.sin(a) * 2 + b


@pb.dsl_kernel
def ours_kernel(x, y):
    acc = 0.0
    for i in range(3):
        if x > y:  # noqa: SIM108 (the DSL has no ternary)
            acc = acc + x * (i + 1)
        else:
            acc = acc - y
    return acc + _i0 * 0.5 + _i1  # noqa: F821 (the DSL's index symbols)


@pytest.fixture
def files(cblosc2, tmp_path):
    rng = np.random.default_rng(3)
    a = rng.random(SHAPE)
    b = rng.random(SHAPE)
    for name, v in (("a", a), ("b", b)):
        cblosc2.asarray(
            v, urlpath=str(tmp_path / f"{name}.b2nd"), mode="w", chunks=(64, 100), blocks=(16, 100)
        )
    return tmp_path, a, b


def test_the_same_udf_on_the_same_files(cblosc2, files) -> None:
    d, a, b = files
    theirs = cblosc2.lazyudf(
        add_sin, (cblosc2.open(str(d / "a.b2nd")), cblosc2.open(str(d / "b.b2nd"))), np.float64
    ).compute(urlpath=str(d / "theirs.b2nd"), mode="w")
    ours = pb.lazyudf(add_sin, (pb.open(str(d / "a.b2nd")), pb.open(str(d / "b.b2nd"))), np.float64)
    res = ours.compute(urlpath=str(d / "ours.b2nd"), mode="w")
    np.testing.assert_array_equal(res[:], theirs[:])
    back = cblosc2.open(str(d / "ours.b2nd"))  # our result read by python-blosc2
    assert back.shape == SHAPE and back.chunks == theirs.chunks == (64, 100)
    np.testing.assert_array_equal(back[:], np.sin(a) * 2 + b)
    np.testing.assert_array_equal(ours[10:20, 5:50], theirs[10:20, 5:50])


def test_the_function_sees_the_same_pieces(cblosc2, files) -> None:
    d, _, _ = files
    seen: dict[str, list] = {"C": [], "ours": []}

    def spy(key):
        def udf(inputs, output, offset):
            seen[key].append((tuple(int(o) for o in offset), output.shape))
            output[:] = inputs[0]

        return udf

    cblosc2.lazyudf(spy("C"), (cblosc2.open(str(d / "a.b2nd")),), np.float64).compute()
    pb.lazyudf(spy("ours"), (pb.open(str(d / "a.b2nd")),), np.float64).compute()
    assert sorted(seen["ours"]) == sorted(seen["C"])
    assert len(seen["C"]) == 5 * 2


def test_a_dsl_kernel_against_miniexpr(cblosc2, files) -> None:
    d, a, b = files
    theirs_kernel = cblosc2.dsl_kernel(ours_kernel.func)
    ta, tb = cblosc2.open(str(d / "a.b2nd")), cblosc2.open(str(d / "b.b2nd"))
    theirs = cblosc2.lazyudf(theirs_kernel, (ta, tb), np.float64)[()]
    oa, ob = pb.open(str(d / "a.b2nd")), pb.open(str(d / "b.b2nd"))
    ours = pb.lazyudf(ours_kernel, (oa, ob), np.float64)
    np.testing.assert_allclose(ours[()], theirs, rtol=1e-13, atol=0)
    np.testing.assert_allclose(ours.compute(jit=True)[:], theirs, rtol=1e-13, atol=0)
    i0, i1 = np.indices(SHAPE)
    want = np.where(a > b, a * 6, -3 * b) + i0 * 0.5 + i1
    np.testing.assert_allclose(ours[()], want, rtol=1e-13)


def test_jit_on_the_same_files(cblosc2, files) -> None:
    d, a, b = files

    def f(x, y):
        return np.sum(np.sin(x) * 2 + y, axis=1)

    theirs = cblosc2.jit(f)(cblosc2.open(str(d / "a.b2nd")), cblosc2.open(str(d / "b.b2nd")))
    ours = pb.jit(f)(pb.open(str(d / "a.b2nd")), pb.open(str(d / "b.b2nd")))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)

    def g(x, y):
        return (x > 0.5) & (y < 0.5)

    path = str(d / "g.b2nd")
    res = pb.jit(urlpath=path, mode="w")(g)(pb.open(str(d / "a.b2nd")), pb.open(str(d / "b.b2nd")))
    np.testing.assert_array_equal(cblosc2.open(path)[:], (a > 0.5) & (b < 0.5))
    assert isinstance(res, pb.NDArray)


@pytest.mark.parametrize(
    ("keys", "values", "op"),
    [
        (np.array([2, 1, 2, 1, 2, 7], np.int16), np.array([10, 1, 30, 3, 50, 5], np.int32), "sum"),
        (np.array([0, 1, 0, 1, 2], np.uint16), np.array([1.0, np.nan, 3.0, np.nan, 10.0]), "mean"),
        (np.array([0, 1, 0, 1, 2], np.uint16), np.array([1.0, np.nan, 3.0, np.nan, 10.0]), "min"),
        (np.array([0.5, np.nan, 0.5, -0.0, 0.0]), np.array([1.0, 2.0, 3.0, 10.0, 20.0]), "count"),
        (np.array([3, 1, 3]), None, "size"),
    ],
)
def test_group_reduce_agrees(cblosc2, keys, values, op) -> None:
    theirs = cblosc2.group_reduce(keys, values, op=op, sort=True)
    ours = pb.group_reduce(keys, values, op=op, sort=True)
    assert ours[0].dtype == theirs[0].dtype
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], equal_nan=True)
    assert all(
        math.isnan(x) == math.isnan(y)
        for x, y in zip(ours[1].astype(float), theirs[1].astype(float), strict=True)
    )
