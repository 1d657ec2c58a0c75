"""``lazyudf``/``LazyUDF`` (pyblosc2.compute.udf): python-blosc2's ``(inputs, output, offset)``
protocol on the engine — which pieces the function sees, selections, ``compute`` into memory
and files, the storage arguments, reductions, ``where``, expressions over a UDF, DSL kernels,
``in_place`` — and the refusals."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.dsl import DSLSyntaxError, dsl_kernel
from pyblosc2.errors import MemoryBudgetError, ParamError, ParamTypeError


def add(inputs, output, offset):
    a, b = inputs
    output[:] = a + b


def position(shape):
    """A UDF giving each item's flat position in the whole result (checks the offsets)."""

    def udf(inputs, output, offset):
        idx = np.indices(output.shape)
        flat = 0
        for d in range(output.ndim):
            flat = flat * int(shape[d]) + idx[d] + offset[d]
        output[...] = flat

    return udf


class Spy:
    """A UDF recording each call's offset and output shape."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def __call__(self, inputs, output, offset):
        self.calls.append((tuple(offset), output.shape))
        output[:] = inputs[0] * 2


def test_the_function_sees_the_chunks_of_its_input() -> None:
    a = pb.asarray(np.arange(100.0).reshape(10, 10), chunks=(4, 5), blocks=(2, 5))
    spy = Spy()
    u = pb.lazyudf(spy, (a,), np.float64)
    assert (u.chunks, u.blocks) == ((4, 5), (2, 5))
    np.testing.assert_array_equal(u[:], a[:] * 2)
    assert sorted(spy.calls) == sorted(
        ((r, c), (min(4, 10 - r), 5)) for r in (0, 4, 8) for c in (0, 5)
    )
    spy.calls.clear()
    np.testing.assert_array_equal(u[5:7, 1:3], a[5:7, 1:3] * 2)
    assert spy.calls == [((5, 1), (2, 2))]  # only the chunk the slice covers, clipped to it


def test_chunks_given_to_lazyudf_cut_the_pieces_and_the_result() -> None:
    spy = Spy()
    u = pb.lazyudf(spy, (np.ones((6, 4)),), np.float64, chunks=(3, 4), blocks=(1, 4))
    res = u.compute()
    assert (res.chunks, res.blocks) == ((3, 4), (1, 4))
    assert sorted(o for o, _ in spy.calls) == [(0, 0), (3, 0)]


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple),
    data=st.data(),
)
def test_any_selection_equals_numpy(shape, data) -> None:
    chunks = tuple(data.draw(st.integers(1, n)) for n in shape)
    want = np.arange(np.prod(shape)).reshape(shape)
    u = pb.lazyudf(position(shape), (), np.int64, shape=shape, chunks=chunks)
    key = tuple(
        data.draw(
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
    )
    np.testing.assert_array_equal(u[key], want[key])
    np.testing.assert_array_equal(u.compute(item=key)[()], want[key])
    assert u[key].dtype == np.int64


def test_none_ints_and_fancy_keys() -> None:
    a = pb.asarray(np.arange(20.0).reshape(4, 5))
    u = pb.lazyudf(add, (a, np.arange(5.0)), np.float64)
    want = a[:] + np.arange(5.0)
    for key in [(None,), (1, None), (Ellipsis, None), (slice(None), 0), (0, 0), ([3, 0], 2)]:
        np.testing.assert_array_equal(u[key], want[key])
    np.testing.assert_array_equal(u[want > 10], want[want > 10])


def test_inputs_broadcast_scalars_lists_and_objects() -> None:
    seen = {}

    def f(inputs, output, offset):
        x, y, s, lst, obj = inputs
        seen.update(y=y.shape, s=s, obj=obj)
        output[:] = x + y + s + lst

    x = np.arange(12.0).reshape(3, 4)
    u = pb.lazyudf(f, (x, np.ones((1, 4)), 2.5, [1, 2, 3, 4], {"k": 1}), np.float64)
    np.testing.assert_array_equal(u[:], x + 1 + 2.5 + np.arange(1, 5))
    assert seen == {"y": (1, 4), "s": 2.5, "obj": {"k": 1}}


def test_compute_into_a_file_with_the_storage_arguments(tmp_path) -> None:
    a = pb.asarray(np.arange(30.0), chunks=(10,), blocks=(5,))
    lazy_path, out_path = tmp_path / "lazy.b2nd", tmp_path / "out.b2nd"
    u = pb.lazyudf(
        add,
        (a, a),
        np.float64,
        urlpath=str(lazy_path),
        cparams={"clevel": 1, "nthreads": 3},
        dparams={"nthreads": 2},
        contiguous=False,
    )
    with pytest.raises(ParamError, match="same urlpath"):
        u.compute(urlpath=str(lazy_path))
    res = u.compute(urlpath=str(out_path), cparams={"nthreads": 1}, chunks=(15,))
    assert res.schunk.urlpath == str(out_path) and res.chunks == (15,)
    assert res.schunk.cparams.clevel == 1 and res.schunk.cparams.nthreads == 1  # merged
    assert res.schunk.dparams.nthreads == 2 and res.schunk.contiguous is False
    np.testing.assert_array_equal(pb.open(str(out_path))[:], np.arange(30.0) * 2)
    mem = u.compute()
    assert mem.schunk.urlpath is None and mem.chunks == (10,)
    assert not lazy_path.exists()  # the UDF's own urlpath is never written by compute


def test_compute_into_out_and_with_a_bound() -> None:
    u = pb.lazyudf(add, (np.arange(6.0), 1.0), np.float64, chunks=(2,))
    out = pb.zeros((6,), np.float64, chunks=(3,), blocks=(3,))
    assert u.compute(out=out) is out and out[:].tolist() == [1, 2, 3, 4, 5, 6]
    outn = np.zeros(6)
    assert u.compute(out=outn) is outn and outn.tolist() == [1, 2, 3, 4, 5, 6]
    with pytest.raises(MemoryBudgetError):
        pb.lazyudf(add, (np.ones(10**6), 1.0), np.float64).compute(max_memory=1 << 16)


def test_reductions_where_asarray_and_expressions() -> None:
    a = pb.asarray(np.linspace(-1, 1, 50).reshape(5, 10), chunks=(2, 5), blocks=(1, 5))
    u = pb.lazyudf(add, (a, a), np.float64)
    want = a[:] * 2
    assert np.isclose(u.sum(), want.sum()) and np.isclose(pb.mean(u), want.mean())
    np.testing.assert_allclose(u.max(axis=0), want.max(axis=0))
    np.testing.assert_allclose(pb.std(u, axis=1), want.std(axis=1))
    assert int(u.argmax()) == int(want.argmax())
    np.testing.assert_array_equal(np.asarray(u), want)
    np.testing.assert_array_equal((u > 0).where(u, 0)[:], np.where(want > 0, want, 0))
    np.testing.assert_array_equal(u[u > 0.5], want[want > 0.5])
    e = np.sin(u) + u * 2  # a LazyUDF inside a lazy expression
    assert type(e).__name__ == "LazyExpr"
    np.testing.assert_allclose(e[1:3], np.sin(want[1:3]) + want[1:3] * 2)
    np.testing.assert_allclose(pb.lazyudf(add, (u, u), np.float64)[:], want * 2)  # UDF of a UDF


def test_to_dask_and_get_chunk() -> None:
    pytest.importorskip("dask")
    a = pb.asarray(np.arange(20.0), chunks=(5,), blocks=(5,))
    u = pb.lazyudf(add, (a, a), np.float64)
    d = u.to_dask()
    assert d.chunks == ((5, 5, 5, 5),)
    np.testing.assert_array_equal(d.compute(), np.arange(20.0) * 2)
    out = pb.empty((20,), np.float64, chunks=(5,), blocks=(5,))
    out.schunk.update_chunk(1, u.get_chunk(1))
    assert out[5:10].tolist() == [10.0, 12.0, 14.0, 16.0, 18.0]


def test_a_plain_function_is_called_by_one_thread_at_a_time() -> None:
    inside, most = [0], [0]
    lock = threading.Lock()

    def slow(inputs, output, offset):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.002)
        output[:] = inputs[0]
        with lock:
            inside[0] -= 1

    a = pb.asarray(np.arange(64.0), chunks=(4,), blocks=(4,), dparams={"nthreads": 4})
    np.testing.assert_array_equal(pb.lazyudf(slow, (a,), np.float64).compute()[:], a[:])
    assert most[0] == 1


@dsl_kernel
def clamp_ramp(x, lo):
    if x < lo:
        return lo + _i0 * 0.0  # noqa: F821 (the DSL's index symbol)
    return x + _flat_idx  # noqa: F821


def test_a_dsl_kernel_runs_per_piece_with_its_offsets() -> None:
    x = pb.asarray(np.linspace(-1, 1, 40).reshape(4, 10), chunks=(3, 4), blocks=(1, 4))
    u = pb.lazyudf(clamp_ramp, (x, 0.0))
    assert u.dtype == np.float64 and u.inputs_dict.keys() == {"x", "lo"}
    flat = np.arange(40).reshape(4, 10)
    want = np.where(x[:] < 0, 0.0, x[:] + flat)
    np.testing.assert_array_equal(u[:], want)
    np.testing.assert_array_equal(u[1:3, 5:9], want[1:3, 5:9])
    np.testing.assert_array_equal(u.compute(jit=False)[:], want)
    with pytest.raises(ParamError, match="takes 2 operand"):
        pb.lazyudf(clamp_ramp, (x,))
    with pytest.raises(ParamTypeError, match="no array inputs"):
        pb.lazyudf(clamp_ramp, (1.0, 2.0))


def test_an_invalid_dsl_kernel_is_refused() -> None:
    @dsl_kernel
    def bad(x):
        return 1 if x else 0

    with pytest.raises(DSLSyntaxError, match="Invalid DSL kernel 'bad'"):
        pb.lazyudf(bad, (np.ones(3),), np.int32)


def test_in_place() -> None:
    def fill(inputs, output, offset):
        (x,) = inputs
        n = len(x)
        output[offset[0] : offset[0] + n] = x * 3

    x = pb.asarray(np.arange(10.0), chunks=(4,), blocks=(2,))
    u = pb.lazyudf(fill, (x,), np.float64, in_place=True)
    assert u.compute()[:].tolist() == (np.arange(10.0) * 3).tolist()
    assert u[2:4].tolist() == [6.0, 9.0]
    with pytest.raises(NotImplementedError, match="in_place"):
        u.compute(item=slice(1, 3))


def test_zero_inputs_need_a_shape_and_state_is_kept() -> None:
    def ones(inputs, output, offset):
        output[:] = 1

    with pytest.raises(ParamError, match="shape"):
        pb.lazyudf(ones, (), np.int8)
    u = pb.lazyudf(ones, (), np.int8, shape=(3, 2), chunks=(2, 2), jit=False)
    assert u[:].tolist() == [[1, 1]] * 3 and u.shape == (3, 2) and u.func is ones
    assert u.inputs == [] and u.inputs_dict == {}
    assert u.kwargs["chunks"] == (2, 2) and u.kwargs["jit"] is False
    assert u.kwargs["dtype"] == np.int8 and u.kwargs["shape"] == (3, 2)
    assert "LazyUDF" in u.info and "(3, 2)" in repr(u)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((add, (np.ones(2),)), {}, ParamTypeError, "dtype is required"),
        ((3, (np.ones(2),), "f8"), {}, ParamTypeError, "callable"),
        ((add, np.ones(2), "f8"), {}, ParamTypeError, "sequence"),
        ((add, (np.ones(2),), "f8"), {"bogus": 1}, ParamError, "unknown lazyudf"),
        ((add, (np.ones(2),), "f8"), {"jit": "yes"}, ParamTypeError, "jit must be"),
        ((add, (np.ones(2),), "f8"), {"jit_backend": "gcc"}, ParamError, "jit_backend"),
        ((add, (np.ones(2), np.ones(3)), "f8"), {}, ParamError, "do not broadcast"),
        ((add, (np.ones(2),), object), {}, ParamTypeError, "dtype"),
        ((add, (np.ones((2, 3)),), "f8"), {"shape": (2, 3, 4)}, ParamError, "does not fit"),
    ],
)
def test_refusals(args, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        pb.lazyudf(*args, **kwargs)


def test_not_here_yet() -> None:
    u = pb.lazyudf(add, (np.ones(2), 1.0), np.float64)
    for call in (u.sort, u.argsort):
        with pytest.raises(NotImplementedError):
            call()


def test_saving_needs_stored_inputs(tmp_path) -> None:
    """A UDF saves as LazyArray's (compute/saved, tests/interop/test_saved_interop): an
    input in memory is refused before the carrier is written."""
    u = pb.lazyudf(add, (np.ones(2), 1.0), np.float64)
    for call in (lambda: u.save(urlpath=str(tmp_path / "x.b2nd")), u.to_cframe):
        with pytest.raises(ParamError, match="must be stored"):
            call()
    assert not (tmp_path / "x.b2nd").exists()
