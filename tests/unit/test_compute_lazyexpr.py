"""LazyExpr and LazyArray (compute/lazyexpr.py, lazyarray.py, blockwise.py, filters.py):
what a slice decodes, compute() into memory, into a file and into out=, filters of arrays and
of structured fields, strings with constructors and eager functions, the engine's numpy
protocol, and what is not here yet."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.compute import registry
from pyblosc2.compute.kernel import Kernel
from pyblosc2.errors import ParamError


@pytest.fixture
def a() -> blosc2.NDArray:
    return blosc2.asarray(np.arange(100.0).reshape(10, 10), chunks=(4, 5), blocks=(2, 5))


def test_a_slice_decodes_only_the_chunks_it_covers(monkeypatch, a) -> None:
    from pyblosc2.compute import blockwise
    from pyblosc2.ndarray import ndarray as module

    seen: list[object] = []
    real = module.read_selection

    def read(arr, ranges, out=None):
        seen.append(ranges)
        return real(arr, ranges, out=out)

    monkeypatch.setattr(module, "read_selection", read)  # NDArray.__getitem__
    monkeypatch.setattr(blockwise, "read_selection", read)  # a piece's parts, into its buffers
    expr = a * 3 - a
    np.testing.assert_array_equal(expr[5:7, 1:3], (np.arange(100.0).reshape(10, 10) * 2)[5:7, 1:3])
    # rows 5-6 and columns 1-2 lie in chunk (1, 0): one read per operand occurrence
    assert len(seen) == 1 and [list(r) for r in seen[0]] == [[5, 6], [1, 2]]


def test_compute_into_memory_a_file_and_out(a, tmp_path) -> None:
    expr = (a + 1) * 2
    want = (np.arange(100.0).reshape(10, 10) + 1) * 2
    res = expr.compute()
    assert isinstance(res, blosc2.NDArray) and res.chunks == a.chunks and res.blocks == a.blocks
    path = str(tmp_path / "r.b2nd")
    res = expr.compute(urlpath=path, mode="w", chunks=(5, 5), blocks=(5, 5), cparams={"clevel": 1})
    assert res.urlpath == path and res.chunks == (5, 5) and res.schunk.cparams.clevel == 1
    np.testing.assert_array_equal(blosc2.open(path)[...], want)
    out = blosc2.zeros((10, 10), chunks=(3, 3))
    assert expr.compute(out=out) is out
    np.testing.assert_array_equal(out[...], want)
    out_np = np.empty((2, 10))
    assert expr.compute(item=slice(2, 4), out=out_np) is out_np
    np.testing.assert_array_equal(out_np, want[2:4])
    np.testing.assert_array_equal(expr.compute(item=(slice(None), 3))[...], want[:, 3])
    with pytest.raises(ParamError, match="out"):
        expr.compute(out=[1, 2])
    with pytest.raises(ParamError, match="unknown compute"):
        expr.compute(bogus=1)


def test_getitem_takes_numpys_keys(a) -> None:
    expr = a - 50
    want = np.arange(100.0).reshape(10, 10) - 50
    for key in [
        (),
        3,
        (3, -1),
        (slice(None, None, -2), Ellipsis),
        (None, 2, slice(1, 8, 3)),
        np.array([3, 1, 3]),
        (slice(0, 3), [0, 9]),
        want > 20,
    ]:
        np.testing.assert_array_equal(expr[key], want[key])
    assert isinstance(expr[3, 4], np.floating)  # a scalar, as numpy's
    assert expr[3, 4, ...].shape == ()


def test_get_chunk_is_the_compressed_chunk_of_the_result(a) -> None:
    expr = a * 2
    out = blosc2.empty(expr.shape, expr.dtype, chunks=expr.chunks, blocks=expr.blocks)
    for n in range(out.schunk.nchunks):
        out.schunk.update_chunk(n, expr.get_chunk(n))
    np.testing.assert_array_equal(out[...], a[...] * 2)
    with pytest.raises(ParamError, match="nchunk"):
        expr.get_chunk(99)


def test_filters_of_arrays_and_structured_fields() -> None:
    x = np.arange(20)
    a = blosc2.asarray(x, chunks=(6,))
    np.testing.assert_array_equal(a[a > 15][:], x[x > 15])
    np.testing.assert_array_equal(blosc2.where(a % 7 == 0, a)[:], x[x % 7 == 0])
    np.testing.assert_array_equal((a > 15).where(a).compute()[:], x[x > 15])
    assert int((a > 15).where(a).sum()) == int(x[x > 15].sum())
    # python-blosc2's reading of an item of a filter: the operands' item, then filtered
    np.testing.assert_array_equal((a > 5).where(a)[:8], x[:8][x[:8] > 5])
    s = np.empty(20, dtype=[("p", "i4"), ("q", "f8")])
    s["p"], s["q"] = x, x[::-1] / 2
    sa = blosc2.asarray(s, chunks=(7,))
    np.testing.assert_array_equal(sa["p > q"][:], s[s["p"] > s["q"]])
    np.testing.assert_array_equal(sa["p"][:], x)  # a field name stays a field
    np.testing.assert_array_equal(
        sa["p > 10"].sort("q").compute()[:], np.sort(s[x > 10], order="q")
    )
    np.testing.assert_array_equal(
        sa["p > 10"].argsort("q").compute()[:], np.flatnonzero(x > 10)[::-1]
    )
    f = sa.fields["q"]
    np.testing.assert_array_equal(f[f > 8][:], s["q"][s["q"] > 8])
    with pytest.raises(ParamError, match="boolean"):
        sa["p + q"]
    with pytest.raises(ParamError, match="boolean"):
        (a + 1).where(a)


def test_filters_keep_numpys_c_order_over_any_chunking() -> None:
    x = np.arange(60).reshape(6, 10)
    a = blosc2.asarray(x, chunks=(4, 3), blocks=(2, 3))
    np.testing.assert_array_equal(a[(a % 4) == 1][:], x[(x % 4) == 1])


def test_strings_with_constructors_and_eager_functions(a) -> None:
    n = 10  # noqa: F841 - found by name in this frame
    e = blosc2.lazyexpr("arange(n) + linspace(0, 1, 10) + ones((10,), dtype=i2)")
    np.testing.assert_allclose(e[:], np.arange(10) + np.linspace(0, 1, 10) + 1)
    e = blosc2.lazyexpr("concat((a[:2], a[8:]), axis=0).sum(axis=0) + a.T[0]")
    np.testing.assert_allclose(e[:], np.concatenate((a[:2], a[8:])).sum(axis=0) + a[:].T[0])
    e = blosc2.lazyexpr("squeeze(expand_dims(a, axis=0), axis=0) * 2")
    np.testing.assert_array_equal(e[:], a[:] * 2)
    e = blosc2.lazyexpr("a.reshape((100,))[::25]")
    np.testing.assert_array_equal(e[:], a[:].reshape(100)[::25])


def test_registered_functions_join_expressions(monkeypatch) -> None:
    monkeypatch.setitem(
        registry._EAGER, "twice", registry.EagerFunction(lambda x: np.asarray(x) * 2)
    )
    x = blosc2.asarray(np.arange(4))  # noqa: F841 (read from this frame by lazyexpr)
    np.testing.assert_array_equal(blosc2.lazyexpr("twice(x) + 1")[:], [1, 3, 5, 7])
    with pytest.raises(ParamError, match="identifier"):
        registry.register_function("no good", print)


def test_numpy_protocol(a) -> None:
    x = a[...]
    assert np.sin(a).expression == "sin(o0)"
    assert np.add(a, x).expression == "(o0 + o1)"
    out = np.empty((10, 10))
    assert np.multiply(a, 2, out=out) is out
    np.testing.assert_array_equal(out, x * 2)
    np.testing.assert_array_equal(np.add.accumulate(a, axis=1), np.add.accumulate(x, axis=1))
    q, r = np.divmod(a, 7)  # two outputs: numpy on the decompressed operands
    np.testing.assert_array_equal(q, x // 7)
    np.testing.assert_array_equal(r, x % 7)
    # a generalized ufunc is not elementwise: np.matmul is linalg's product (an NDArray)
    np.testing.assert_allclose(np.matmul(a, a)[...], x @ x)
    assert np.asarray(a + 1).dtype == np.float64
    assert float((a[0, 0] + a).max()) == 99.0


def test_numexpr_computes_what_it_computes_as_numpy() -> None:
    f8 = {"a": np.dtype("f8")}
    from pyblosc2.compute.tree import Call, Const, Name

    assert Kernel(Call("sin", (Name("a"),)), f8, np.dtype("f8")).numexpr_text == "sin(a)"
    # // and % are numpy's (numexpr has no floor division; its % differs for negatives)
    assert Kernel(Call("remainder", (Name("a"), Const(3))), f8, np.dtype("f8")).numexpr_text is None
    # a typed numpy scalar keeps numpy's promotion
    assert (
        Kernel(Call("add", (Name("a"), Const(np.float32(1)))), f8, np.dtype("f8")).numexpr_text
        is None
    )
    # logical operators on numbers are numpy's
    k = Kernel(Call("logical_not", (Name("a"),)), f8, np.dtype("?"))
    assert k.numexpr_text is None
    np.testing.assert_array_equal(k({"a": np.array([0.0, 2.0])}), [True, False])


def test_narrow_integers_do_not_wrap_inside_an_expression() -> None:
    # a deliberate difference from numpy that python-blosc2's tests require: numexpr computes
    # int8 in int32, so the squares compare as integers; numpy's int8 squares wrap
    x = np.array([100, -100, 3], np.int8)
    a = blosc2.asarray(x)
    np.testing.assert_array_equal((a**2 > 200)[:], [True, True, False])
    with np.errstate(over="ignore"):
        assert not (x**2 > 200).any()  # numpy: 100**2 wraps to 16
    assert (a**2).dtype == np.int8 and (a * 2)[:].tolist() == (x * 2).tolist()


def test_special_chunks_are_not_decoded(monkeypatch) -> None:
    from pyblosc2.compute import blockwise
    from pyblosc2.ndarray import ndarray as module

    z = blosc2.zeros((40,), chunks=(10,))
    z[15] = 1.0  # chunk 1 is stored; chunks 0, 2, 3 stay special zeros
    seen: list[object] = []
    real = module.read_selection

    def read(arr, ranges, out=None):
        seen.append(ranges)
        return real(arr, ranges, out=out)

    monkeypatch.setattr(module, "read_selection", read)
    monkeypatch.setattr(blockwise, "read_selection", read)
    assert float((z * 2 + 1).sum()) == 42.0
    assert len(seen) == 1  # only chunk 1


def test_what_is_not_here_yet(a) -> None:
    # saving: tests/unit/test_saved_*.py (an operand in memory cannot be saved)
    with pytest.raises(ParamError, match="stored on disk"):
        (a + 1).to_cframe()
    # jit= of an expression is python-blosc2's miniexpr tuning: accepted, same values
    np.testing.assert_array_equal((a + 1).compute(jit=True)[...], a[...] + 1)
    with pytest.raises(NotImplementedError, match="argsort"):
        (a > 1).argsort()


def test_info_and_repr(a) -> None:
    e = a + 1
    assert "(o0 + 1)" in e.info and "shape" in e.info
    assert str(e) == "(o0 + 1)" and "LazyExpr" in repr(e)
    assert e.ndim == 2 and len(e) == 10 and e.size == 100


def test_to_dask(a) -> None:
    da = pytest.importorskip("dask.array")
    d = (a * 2).to_dask()
    assert isinstance(d, da.Array) and d.chunks == ((4, 4, 2), (5, 5))
    np.testing.assert_array_equal(d.compute(), a[...] * 2)


def test_lazyexpr_entry_points(a) -> None:
    b = np.ones(10)  # noqa: F841 - found by name
    e = blosc2.lazyexpr("a + b")
    assert e.expression == "(o0 + o1)" and e.operands["o0"] is a
    assert blosc2.lazyexpr(a).expression == "o0"
    assert blosc2.lazyexpr(e) is e
    same = blosc2.lazyexpr(e, operands={"o1": np.zeros(10)})  # rebinds, as python-blosc2
    assert same is e and float(e[0, 0]) == 0.0
    w = blosc2.lazyexpr("a > 50", where=(1, 0))
    assert w[:].sum() == 49
    with pytest.raises(ParamError, match="'nowhere'"):
        blosc2.lazyexpr("nowhere + 1")
    with pytest.raises(ParamError, match="do not broadcast"):
        (a + np.ones(3)).shape  # noqa: B018 - refused when the shape is needed, as python-blosc2
