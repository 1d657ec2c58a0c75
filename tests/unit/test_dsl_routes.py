"""DSL kernels run element by element (pyblosc2.dsl.interp, numba_route, run): the numpy
route against each element's plain Python run of the same function (the semantics), the
numba route against the numpy route (the same bytes where both compute exactly), and the
errors of both."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# the DSL's functions, for the plain Python runs of the kernels (and for ruff)
from numpy import arctan2, cbrt, exp, expm1, floor, fmax, log, sqrt, tan, tanh, where

from pyblosc2 import __file__ as pyblosc2_file
from pyblosc2.dsl import DSLKernel, DSLRuntimeError, dsl_kernel, validate_dsl_jit
from pyblosc2.dsl.run import Runner, choose, widen
from pyblosc2.errors import ParamTypeError
from tests.bounded import run_child


@dsl_kernel
def flow(x, y, n):
    # if/elif/else, for with break/continue, while, returns in branches and loops
    if x > 3.0:
        return x * 2.0 - y
    elif x < -3.0:
        acc = 0.0
        for i in range(n):
            if i == 1:
                continue
            acc = acc + y * i
            if acc > 4.0:
                break
        return acc
    steps = 0
    z = x
    while z < 2.0:
        z = z + abs(y) + 0.5
        steps += 1
        if steps >= 7:
            return -1.0
    return where(z > x, float(steps) + z, sqrt(abs(x)) + floor(y) + fmax(x, y))


@dsl_kernel
def bits(x, y):
    a = ((x + y) - (x * 2)) // 3
    a = a % 5
    a = a ^ (x & y)
    a = a | (x << 1)
    if a > 40:
        a -= 40
    return a + (y >> 1) + int(bool(x))


@dsl_kernel
def ramp(x, start):
    v = start + _i0 * _n1 + _i1  # noqa: F821  (the DSL's index symbols)
    if _flat_idx % 2 == 0:  # noqa: F821
        return v + x
    return v - _ndim  # noqa: F821


def _per_element(kernel: DSLKernel, *args: object) -> np.ndarray:
    """The kernel's function run in plain Python on each element (scalars as Python's)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    cols = [
        np.broadcast_to(a, shape).ravel().tolist() if isinstance(a, np.ndarray) else a for a in args
    ]
    n = math.prod(shape)
    vals = [kernel.func(*[c[i] if isinstance(c, list) else c for c in cols]) for i in range(n)]
    return np.array(vals, dtype=float).reshape(shape)


def _run(kernel: DSLKernel, inputs: tuple, dtype: str, jit: bool | None, **kw) -> np.ndarray:
    arrays = [a for a in inputs if isinstance(a, np.ndarray)]
    shape = tuple(np.broadcast_shapes(*[a.shape for a in arrays])) if arrays else kw.pop("shape")
    offset = kw.pop("offset", (0,) * len(shape))
    full = kw.pop("full", shape)
    return kernel.evaluate(inputs, dtype, shape, offset, full, jit, kw.pop("backend", None))


floats = hnp.arrays(
    np.float64,
    st.integers(1, 40),
    elements=st.floats(-8, 8, allow_nan=False).map(lambda v: round(v, 3)),
)


@settings(max_examples=40, deadline=None)
@given(x=floats, y=st.floats(-3, 3).map(lambda v: round(v, 2)), n=st.integers(0, 5))
def test_numpy_route_is_each_elements_python_run(x, y, n) -> None:
    got = _run(flow, (x, y, n), "f8", jit=False)
    np.testing.assert_array_equal(got, _per_element(flow, x, y, n))


@settings(max_examples=30, deadline=None)
@given(
    x=hnp.arrays(np.int32, st.integers(1, 30), elements=st.integers(-1000, 1000)),
    y=hnp.arrays(np.int16, 1, elements=st.integers(1, 300)),
)
def test_numpy_route_integer_kernels(x, y) -> None:
    got = _run(bits, (x, y), "i8", jit=False)
    want = _per_element(bits, x.astype(np.int64), y.astype(np.int64)).astype(np.int64)
    np.testing.assert_array_equal(got, want)


def test_index_symbols_follow_the_offset_and_the_whole_shape() -> None:
    full = (4, 6)
    whole = _run(ramp, (np.zeros(full), 10), "f8", jit=False)
    i0, i1 = np.indices(full)
    flat = i0 * 6 + i1
    want = np.where(flat % 2 == 0, 10 + flat, 10 + flat - 2)
    np.testing.assert_array_equal(whole, want)
    piece = _run(ramp, (np.zeros((2, 3)), 10), "f8", jit=False, offset=(1, 2), full=full)
    np.testing.assert_array_equal(piece, want[1:3, 2:5])


def test_runtime_errors_of_the_numpy_route(monkeypatch) -> None:
    @dsl_kernel
    def partial_return(x):
        if x > 0:
            return x
        y = x  # noqa: F841 (no return on this path)

    with pytest.raises(DSLRuntimeError, match="without a return"):
        _run(partial_return, (np.array([1.0, -1.0]),), "f8", jit=False)
    assert _run(partial_return, (np.array([1.0, 2.0]),), "f8", jit=False).tolist() == [1.0, 2.0]

    @dsl_kernel
    def step_zero(x, s):
        a = x
        for i in range(0, 4, s):
            a += i
        return a

    with pytest.raises(DSLRuntimeError, match="step must not be zero"):
        _run(step_zero, (np.ones(2), 0), "f8", jit=False)

    @dsl_kernel
    def forever(x):
        a = x
        while a > 0:
            a = a + 1
        return a

    monkeypatch.setenv("ME_DSL_WHILE_MAX_ITERS", "50")
    with pytest.raises(DSLRuntimeError, match="past 50 iterations"):
        _run(forever, (np.array([-1.0, 1.0]),), "f8", jit=False)
    assert _run(forever, (np.array([-1.0, -2.0]),), "f8", jit=False).tolist() == [-1.0, -2.0]

    with pytest.raises(DSLRuntimeError, match="has 1 dimensions"):
        _run(ramp, (np.zeros(3), 1), "f8", jit=False)


def test_inputs_as_the_kernel_sees_them() -> None:
    assert widen(np.arange(2, dtype=np.uint8)).dtype == np.int64
    assert widen(np.ones(2, np.float16)).dtype == np.float64
    assert widen(np.ones(2, np.complex64)).dtype == np.complex128
    assert widen(np.array([True])).dtype == np.bool_
    assert widen(np.float32(0.5)) == 0.5 and type(widen(np.float32(0.5))) is float
    assert widen(True) == 1 and widen(np.array(3)) == 3
    with pytest.raises(NotImplementedError, match="string DSL kernels"):
        widen(np.array(["a"]))
    with pytest.raises(ParamTypeError):
        widen(np.array([1], "M8[s]"))
    with pytest.raises(ParamTypeError):
        widen(object())


def test_the_route_choice(monkeypatch) -> None:
    p = flow.program
    assert p is not None
    assert choose(p, False, None) == "numpy"
    assert choose(p, None, "numpy") == "numpy"
    assert choose(p, None, None, items=10) == "numpy"  # small: not worth a compilation
    with pytest.raises(NotImplementedError, match="WebAssembly"):
        choose(p, None, "js")
    with pytest.raises(ParamTypeError):
        choose(p, None, "gcc")
    monkeypatch.setenv("ME_DSL_JIT", "0")
    assert choose(p, True, None) == "numpy"


# -- the numba route ---------------------------------------------------------------------------
def _numba() -> None:
    pytest.importorskip("numba")


@settings(max_examples=40, deadline=None)
@given(x=floats, y=st.floats(-3, 3).map(lambda v: round(v, 2)), n=st.integers(0, 5))
def test_numba_route_gives_the_numpy_routes_bytes(x, y, n) -> None:
    _numba()
    a = _run(flow, (x, y, n), "f8", jit=False)
    b = _run(flow, (x, y, n), "f8", jit=True, backend="numba")
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@settings(max_examples=20, deadline=None)
@given(x=hnp.arrays(np.int32, (3, 5), elements=st.integers(-1000, 1000)))
def test_numba_route_bytes_integers_and_symbols(x) -> None:
    _numba()
    y = np.arange(1, 6, dtype=np.int64)
    for dtype in ("i8", "u1"):  # (each output dtype is a compilation)
        a = _run(bits, (x, y), dtype, jit=False)
        b = _run(bits, (x, y), dtype, jit=True, backend="numba")
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    full = (7, 5)
    a = _run(ramp, (x.astype(float), 3), "f8", jit=False, offset=(2, 0), full=full)
    b = _run(ramp, (x.astype(float), 3), "f8", jit=True, backend="numba", offset=(2, 0), full=full)
    assert a.tobytes() == b.tobytes()


def test_numba_route_elementary_functions_within_ulps() -> None:
    _numba()

    @dsl_kernel
    def elementary(x):
        if x > 0:
            return exp(x * 0.1) + log(x) + tan(x) + arctan2(x, 3.0)
        return tanh(x) + expm1(x * 0.01) + cbrt(x)

    x = np.linspace(-20, 20, 1001)
    a = _run(elementary, (x,), "f8", jit=False)
    b = _run(elementary, (x,), "f8", jit=True, backend="numba")
    np.testing.assert_array_max_ulp(a, b, maxulp=8)  # numpy's SIMD loops against libm


def test_numba_route_errors_and_fallback(monkeypatch) -> None:
    _numba()

    @dsl_kernel
    def forever(x):
        a = x
        while a > 0:
            a = a + 1
        return a

    monkeypatch.setenv("ME_DSL_WHILE_MAX_ITERS", "50")
    with pytest.raises(DSLRuntimeError, match="iteration cap"):
        _run(forever, (np.array([-1.0, 1.0]),), "f8", jit=True, backend="numba")

    @dsl_kernel
    def no_return(x):
        if x > 0:
            return x
        y = x  # noqa: F841 (no return on this path)

    with pytest.raises(DSLRuntimeError, match="without a return"):
        _run(no_return, (np.array([1.0, -1.0]),), "f8", jit=True, backend="numba")

    @dsl_kernel
    def float_range(x, n):
        a = x
        for i in range(n):  # numba types range() on integers only
            a += i
        return a

    # jit=True prefers numba: a kernel numba cannot type runs on numpy (and fails there too)
    with pytest.raises(DSLRuntimeError, match="range"):
        _run(float_range, (np.ones(2), 2.5), "f8", jit=True)
    with pytest.raises(NotImplementedError, match="numba cannot compile"):
        _run(float_range, (np.ones(2), 2.5), "f8", jit=True, backend="numba")
    assert _run(float_range, (np.ones(2), 3), "f8", jit=True).tolist() == [4.0, 4.0]


def test_validate_dsl_jit_compiles_with_numba() -> None:
    _numba()
    st_ = validate_dsl_jit(flow, {"x": np.float32, "y": np.float64, "n": 3}, np.float64)
    assert st_["jit"] and st_["route"] == "numba" and st_["compiled"]


def test_runner_remembers_its_compilations() -> None:
    _numba()
    r = Runner(bits.program)
    x = np.arange(6, dtype=np.int64)
    r.evaluate({"x": x, "y": 3}, np.dtype("i8"), (6,), (0,), (6,), jit=True)
    assert list(r._compiled) == [(("x",), 1)] and len(r._ran) == 1
    r.evaluate({"x": x, "y": x}, np.dtype("i8"), (6,), (0,), (6,), jit=True)
    assert len(r._compiled) == 2  # another pattern of array inputs: another compilation
    # once compiled and run for these inputs, jit=None takes numba whatever the size
    r.evaluate({"x": x, "y": 3}, np.dtype("i8"), (6,), (0,), (6,), jit=None)
    assert len(r._ran) == 2 and not r._failed


CACHED = r"""
import json, sys
import numpy as np
from pyblosc2.dsl import dsl_kernel

@dsl_kernel
def k(x, n):
    acc = 0.0
    for i in range(n):
        acc = where(acc > 3.0, acc, acc + x * i)
    return acc

out = k.evaluate((np.arange(5.0), 4), "f8", (5,), (0,), (5,), jit=True)
c = k._runner._compiled[(("x",), 1)]
print(json.dumps({"out": out.tolist(), "hits": sum(c.driver.stats.cache_hits.values())}))
"""


def test_numba_compilations_are_cached_across_processes(tmp_path, monkeypatch) -> None:
    _numba()
    import json
    import os
    import sys

    from pyblosc2.dsl import numba_route

    cache = tmp_path / "cache"
    monkeypatch.setenv(numba_route.CACHE_ENV, str(cache))
    script = tmp_path / "cached.py"  # a file: the kernel needs its source
    script.write_text(CACHED)
    namespace: dict = {"__name__": "cached"}
    exec(compile(CACHED.replace("print(", "result = ("), str(script), "exec"), namespace)
    assert namespace["result"] is not None  # compiled here: the cache written
    (generated,) = cache.glob("dsl_*.py")
    text = generated.read_text()
    assert "def kernel(" in text and "def drive(" in text
    env = dict(os.environ, PYBLOSC2_KERNELS="numpy")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(pyblosc2_file).parents[1]), env.get("PYTHONPATH", "")]
    )
    p = run_child(
        [sys.executable, str(script)],
        "load the cached DSL kernel in a fresh process",
        env=env,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got == {"out": [0.0, 6.0, 6.0, 9.0, 4.0], "hits": 1}  # loaded, not compiled
    # the file is numba's anchor, never executed: a changed one is written again
    generated.write_text("raise SystemExit(3)\n")
    assert numba_route._source_file(text) == str(generated)
    assert generated.read_text() == text
