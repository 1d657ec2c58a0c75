"""``jit`` (pyblosc2.compute.jit) and ``SimpleProxy``: the tracing route (operands recorded into
a lazy expression, computed into numpy, ``out=`` or an NDArray), the DSL route for functions
with control flow, ``strict=``, ``disable=``, and the refusals."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.dsl import DSLSyntaxError
from pyblosc2.errors import ParamError, ParamTypeError


@pytest.fixture
def data():
    a = pb.linspace(0, 1, 200, dtype=np.float64, shape=(10, 20), chunks=(4, 20), blocks=(2, 20))
    b = np.linspace(1, 2, 200).reshape(10, 20)
    c = np.linspace(-10, 10, 20)
    return a, b, c


def expr(a, b, c):
    return ((a**3 + np.sin(a * 2)) < c) & (b > 0)


def test_tracing_calls_the_function_once_with_operands(data) -> None:
    a, b, c = data
    seen = []

    def f(a, b, c):
        seen.append((type(a).__name__, type(b).__name__, type(c).__name__))
        return expr(a, b, c)

    res = pb.jit(f)(a, b, c)
    assert isinstance(res, np.ndarray) and res.dtype == np.bool_
    np.testing.assert_array_equal(res, expr(a[:], b, c))
    assert seen == [("NDArray", "SimpleProxy", "SimpleProxy")]


def test_storage_arguments_give_an_ndarray(data, tmp_path) -> None:
    a, b, c = data
    path = tmp_path / "r.b2nd"
    f = pb.jit(urlpath=str(path), mode="w", cparams={"clevel": 1}, chunks=(5, 20))(expr)
    res = f(a, b, c)
    assert isinstance(res, pb.NDArray) and res.chunks == (5, 20)
    assert res.schunk.cparams.clevel == 1
    np.testing.assert_array_equal(pb.open(str(path))[:], expr(a[:], b, c))
    # the tuning keywords alone change nothing
    assert isinstance(pb.jit(jit=False, fp_accuracy=pb.FPAccuracy.HIGH)(expr)(a, b, c), np.ndarray)


def test_out_and_reductions(data) -> None:
    a, b, c = data
    out = pb.zeros((10, 20), dtype=np.bool_)
    assert pb.jit(out=out)(expr)(a, b, c) is out
    np.testing.assert_array_equal(out[:], expr(a[:], b, c))
    outn = np.zeros(10, np.int64)

    @pb.jit
    def red(a, b, c):
        return np.sum(expr(a, b, c), axis=1, out=outn)

    res = red(a, b, c)
    np.testing.assert_array_equal(outn, expr(a[:], b, c).sum(axis=1))
    assert res is outn

    @pb.jit(cparams={"clevel": 2})
    def mean(a, b, c):
        return np.mean(a * 2 + b, axis=0)

    m = mean(a, b, c)
    assert isinstance(m, pb.NDArray) and m.schunk.cparams.clevel == 2
    np.testing.assert_allclose(m[:], (a[:] * 2 + b).mean(axis=0))


def test_control_flow_on_plain_values_still_traces() -> None:
    jit_module = importlib.import_module("pyblosc2.compute.jit")
    calls = []
    real = jit_module._jit_dsl_wrapper

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    jit_module._jit_dsl_wrapper = spy
    try:

        @pb.jit
        def flag(a, b, plus):
            if plus:  # a bool wrapped as a 0-d operand: a Python value, traceable
                return a + b
            return a - b

        @pb.jit
        def elementwise(a, b):
            return a * 2.0 + b

    finally:
        jit_module._jit_dsl_wrapper = real
    x = np.arange(5.0)
    assert flag(x, x, True).tolist() == (x * 2).tolist()
    assert flag(x, x, False).tolist() == [0.0] * 5
    assert elementwise(x, x).tolist() == (x * 3).tolist()
    # `flag` has an `if` and is valid DSL: the DSL route, as python-blosc2's; `elementwise`
    # has no control flow: traced
    assert len(calls) == 1


def mandel_np(cr, ci, max_iter):
    zr, zi = np.zeros_like(cr), np.zeros_like(ci)
    n = np.zeros(cr.shape, np.int64)
    active = np.ones(cr.shape, bool)
    for _ in range(max_iter):
        active &= zr * zr + zi * zi <= 4.0
        zr, zi = (
            np.where(active, zr * zr - zi * zi + cr, zr),
            np.where(active, 2 * zr * zi + ci, zi),
        )
        n = np.where(active, n + 1, n)
    return n


@pb.jit
def mandel(cr, ci, max_iter=20):
    zr = 0.0
    zi = 0.0
    n = 0
    for _i in range(max_iter):
        if zr * zr + zi * zi > 4.0:
            break
        new_zr = zr * zr - zi * zi + cr
        zi = 2 * zr * zi + ci
        zr = new_zr
        n = n + 1
    return n


def test_data_dependent_control_flow_goes_to_the_dsl_route(tmp_path) -> None:
    cr = np.linspace(-2, 1, 16)[None, :] * np.ones((12, 1))
    ci = np.linspace(-1, 1, 12)[:, None] * np.ones((1, 16))
    np.testing.assert_array_equal(mandel(cr, ci), mandel_np(cr, ci, 20))  # the default
    np.testing.assert_array_equal(mandel(pb.asarray(cr), pb.asarray(ci), 7), mandel_np(cr, ci, 7))
    out = np.empty(cr.shape)
    assert pb.jit(out=out)(mandel._blosc2_jit_wrapped)(cr, ci) is out
    np.testing.assert_array_equal(out, mandel_np(cr, ci, 20))
    path = str(tmp_path / "m.b2nd")
    res = pb.jit(urlpath=path, mode="w")(mandel._blosc2_jit_wrapped)(cr, ci)
    assert isinstance(res, pb.NDArray)
    np.testing.assert_array_equal(pb.open(path)[:], mandel_np(cr, ci, 20))
    with pytest.raises(TypeError, match="broadcasting"):
        mandel(cr, ci[:1])
    with pytest.raises(TypeError, match="shape"):
        pb.jit(out=np.empty(3))(mandel._blosc2_jit_wrapped)(cr, ci)
    with pytest.raises(TypeError, match="dtype"):
        pb.jit(out=np.empty(cr.shape, np.float32))(mandel._blosc2_jit_wrapped)(cr, ci)
    with pytest.raises(NotImplementedError, match="urlpath"):
        pb.jit(out=pb.zeros(cr.shape))(mandel._blosc2_jit_wrapped)(cr, ci)
    assert pb.jit(mandel) is mandel  # decorated once


def test_strict() -> None:
    def elementwise(a, b):
        return a * 2.0 + b

    x = np.arange(4.0)
    assert pb.jit(strict=True)(elementwise)(x, x).tolist() == (x * 3).tolist()  # DSL route
    with pytest.raises(DSLSyntaxError, match="axis"):

        @pb.jit(strict=True)
        def bad(a):
            return np.sum(a, axis=1)

    @pb.jit(strict=False)
    def cf(a, b):
        if True:
            return a + b
        return a - b

    assert cf(x, x).tolist() == (x * 2).tolist()


def test_a_traced_failure_keeps_its_exception_with_a_note() -> None:
    class TwoArgs(Exception):
        def __init__(self, code, detail):
            super().__init__(f"{code}: {detail}")
            self.code = code

    @pb.jit
    def f(a, flag):
        if flag:
            raise TwoArgs(7, "boom")
        return a

    with pytest.raises(TwoArgs) as info:
        f(np.ones(3), True)
    assert info.value.code == 7
    notes = getattr(info.value, "__notes__", [])
    assert not hasattr(info.value, "add_note") or any("control flow" in n for n in notes)


def test_disable_and_refusals() -> None:
    def f(a):
        return a + 1

    assert pb.jit(disable=True)(f) is f
    with pytest.raises(ParamError, match="unknown jit"):
        pb.jit(bogus=1)
    with pytest.raises(ParamTypeError, match="strict"):
        pb.jit(strict="yes")

    @pb.jit(jit=False)
    def scalars(start, step):
        n = 0
        for i in range(3):
            n = n + start + step * i
        return n

    with pytest.raises(TypeError, match="shape="):
        scalars(1.0, 2.0)
    assert pb.jit(shape=(2,))(scalars._blosc2_jit_wrapped)(1.0, 2.0).tolist() == [9.0, 9.0]


def test_simpleproxy() -> None:
    p = pb.SimpleProxy([[1, 2], [3, 4]])
    assert p.shape == (2, 2) and p.dtype == np.int64 and len(p) == 2 and p.ndim == 2
    assert (p * 10)[1].tolist() == [30, 40] and np.asarray(p).sum() == 10
    assert p[0, 1] == 2 and pb.as_simpleproxy(p) is p
    a = pb.asarray(np.arange(4))
    assert pb.as_simpleproxy(a) is a
    assert isinstance(pb.as_simpleproxy(np.ones(2), a)[0], pb.SimpleProxy)
    src = pb.asarray(np.arange(100.0), chunks=(30,), blocks=(10,))
    proxied = pb.SimpleProxy(src[:])
    assert pb.SimpleProxy(src).chunks == (30,) and proxied.chunks != (30,)

    class NoItems:
        shape = (2,)
        dtype = np.dtype("f8")

    with pytest.raises(ParamTypeError, match="__getitem__"):
        pb.SimpleProxy(NoItems())
