"""Saved lazy expressions and UDFs between python-blosc2 4.14.1 and pyblosc2, both ways, with
real files: python-blosc2 saves (b2o carriers over files, with scalars, constructors,
reductions, saved expressions as operands, store members; UDFs of DSL kernels and of plain
functions; its legacy ``_LazyArray`` files from its own test data), pyblosc2 opens and
computes the same values; pyblosc2 saves, python-blosc2 opens (under its own policy) and
computes the same values, from carriers whose metalayers and vlmeta decode to what
python-blosc2 writes for the same expression.

python-blosc2's legacy test files are read at run time from a git mirror of python-blosc2
(``PYTHON_BLOSC2_GIT``, default the project's mirror) into ``tmp_path``; the legacy
expression form, which python-blosc2 4.14 no longer writes, is also built here byte for
byte (pyblosc2's metalayer and vlmeta writers) and read by both libraries.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb
from tests.bounded import run_child

MIRROR = os.environ.get("PYTHON_BLOSC2_GIT", "/work/.mirror/Blosc+python-blosc2/repo")
HAS_UDF = importlib.util.find_spec("pyblosc2.compute.udf") is not None
needs_udf = pytest.mark.skipif(
    not HAS_UDF, reason="LazyUDF (pyblosc2.compute.udf, issue 33 item 4) is not in this tree"
)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """Work in ``tmp_path`` (python-blosc2's saves take paths as given)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def theirs(cblosc2, here):
    """Three arrays python-blosc2 wrote (two partitions), as its own NDArrays."""
    a = cblosc2.linspace(0, 1, 600, shape=(20, 30), chunks=(8, 16), blocks=(4, 8))
    a = a.copy(urlpath="a.b2nd", mode="w")
    b = cblosc2.linspace(1, 2, 600, shape=(20, 30), chunks=(10, 30), blocks=(5, 10))
    b = b.copy(urlpath="b.b2nd", mode="w")
    c = cblosc2.arange(30, dtype=np.float64, urlpath="c.b2nd", mode="w")
    return a, b, c


def _values(obj) -> np.ndarray:
    return np.asarray(obj[()] if obj.shape == () else obj[:])


THEIR_EXPRESSIONS = {
    "operators": lambda m, a, b, c: a * 2 + b,
    "functions": lambda m, a, b, c: m.sin(a) + b**2 - m.sqrt(b),
    "string": lambda m, a, b, c: m.lazyexpr("a / b + a * c", operands={"a": a, "b": b, "c": c}),
    "scalars": lambda m, a, b, c: m.lazyexpr("where(a > 0.5, a * 3, b - 1.5)", {"a": a, "b": b}),
    "constructor": lambda m, a, b, c: m.lazyexpr(
        "a + linspace(0, 1, 600, shape=(20, 30))", {"a": a}
    ),
    "reduction": lambda m, a, b, c: m.lazyexpr("a + sum(b, axis=0)", {"a": a, "b": b}),
    "full reduction": lambda m, a, b, c: m.lazyexpr("sum(a * b)", {"a": a, "b": b}),
    "comparison": lambda m, a, b, c: (a > 0.25) & (b < 1.75),
}


@pytest.mark.parametrize("name", list(THEIR_EXPRESSIONS))
def test_python_blosc2_saves_pyblosc2_computes(cblosc2, theirs, name) -> None:
    expr = THEIR_EXPRESSIONS[name](cblosc2, *theirs)
    expr.save("expr.b2nd")
    want = _values(cblosc2.open("expr.b2nd", deserialize="full"))
    ours = pb.open("expr.b2nd", deserialize="full")
    assert isinstance(ours, pb.LazyExpr)
    np.testing.assert_allclose(_values(ours), want, rtol=1e-12)
    assert ours.array.shape == expr.shape and ours.schunk.urlpath == "expr.b2nd"
    with pytest.raises(pb.UnsafeDeserializationError, match="'lazyexpr'"):
        pb.open("expr.b2nd")  # the default policy, python-blosc2 4.14's


def test_python_blosc2_chain_of_saved_expressions(cblosc2, theirs) -> None:
    a, b, c = theirs
    cblosc2.lazyexpr("a ** 3 + sin(a ** 2)", {"a": a}).save("e1.b2nd")
    e1 = cblosc2.open("e1.b2nd", deserialize="full")
    cblosc2.lazyexpr("(e1 < c)", {"e1": e1, "c": c}).save("e2.b2nd")
    e2 = cblosc2.open("e2.b2nd", deserialize="full")
    cblosc2.lazyexpr("e2 & (b < 1.5)", {"e2": e2, "b": b}).save("e3.b2nd")
    want = cblosc2.open("e3.b2nd", deserialize="full")[:]
    ours = pb.open("e3.b2nd", deserialize="full")
    assert isinstance(ours.operands_tosave["e2"], pb.LazyExpr)  # a saved expression, opened
    np.testing.assert_array_equal(ours[:], want)


def test_missing_operands_are_reported_as_python_blosc2_does(cblosc2, theirs) -> None:
    a, b, _ = theirs
    cblosc2.lazyexpr("a + b", {"a": a, "b": b}).save("expr.b2nd")
    os.remove("b.b2nd")
    with pytest.raises(cblosc2.exceptions.MissingOperands) as want:
        cblosc2.open("expr.b2nd", deserialize="full")
    with pytest.raises(pb.exceptions.MissingOperands) as got:
        pb.open("expr.b2nd", deserialize="full")
    assert got.value.expr == want.value.expr == "a + b"
    assert got.value.missing_ops == want.value.missing_ops == {"b": Path("b.b2nd")}


def test_cframes_both_ways(cblosc2, theirs) -> None:
    a, b, _ = theirs
    cframe = cblosc2.lazyexpr("a - b", {"a": a, "b": b}).to_cframe()
    ours = pb.from_cframe(cframe, deserialize="full")  # operand paths: the current directory's
    np.testing.assert_array_equal(ours[:], a[:] - b[:])
    with pytest.raises(pb.UnsafeDeserializationError):
        pb.from_cframe(cframe)
    back = cblosc2.from_cframe(ours.to_cframe(), deserialize="full")
    np.testing.assert_array_equal(back[:], a[:] - b[:])


def _git_show(path: str, dest: Path) -> None:
    if not os.path.isdir(MIRROR):
        pytest.skip(f"no git mirror of python-blosc2 at {MIRROR} (PYTHON_BLOSC2_GIT)")
    data = run_child(
        ["git", "-C", MIRROR, "show", f"HEAD:{path}"],
        f"git show {path}",
        check=True,
        capture_output=True,
    ).stdout
    dest.write_bytes(data)


@pytest.fixture
def legacy(here):
    """python-blosc2's legacy test data (its tests/data/legacy_lazy*_v1), fetched now."""
    for kind in ("expr", "udf"):
        d = here / kind
        d.mkdir()
        for name in ("a", "b", "expr"):
            _git_show(f"tests/data/legacy_lazy{kind}_v1/{name}.b2nd", d / f"{name}.b2nd")
    return here


def test_python_blosc2_legacy_expression_file(cblosc2, legacy) -> None:
    ours = pb.open("expr/expr.b2nd", deserialize="full")
    assert isinstance(ours, pb.LazyExpr)
    np.testing.assert_array_equal(ours[:], np.arange(5) * 3)
    with pytest.raises(pb.UnsafeDeserializationError, match="'LazyArray'"):
        pb.open("expr/expr.b2nd")


@needs_udf
def test_python_blosc2_legacy_udf_file(cblosc2, legacy) -> None:
    ours = pb.open("udf/expr.b2nd", deserialize="full")
    assert type(ours).__name__ == "LazyUDF"
    np.testing.assert_allclose(ours.compute()[:], (np.arange(5.0) * 3) ** 2)


def test_legacy_expression_built_here_reads_in_both(cblosc2, here) -> None:
    """The legacy form of an expression, as python-blosc2 3.x wrote it, built from its
    layout (metalayer LazyArray=0, vlmeta _LazyArray)."""
    pb.asarray(np.arange(6.0), urlpath="x.b2nd", mode="w")
    carrier = pb.empty((6,), np.float64, urlpath="old.b2nd", mode="w", meta={"LazyArray": 0})
    carrier.schunk.vlmeta["_LazyArray"] = {
        "expression": "x * x + 1",
        "UDF": None,
        "operands": {"x": "x.b2nd"},
    }
    del carrier
    want = cblosc2.open("old.b2nd", deserialize="full")[:]
    np.testing.assert_array_equal(want, np.arange(6.0) ** 2 + 1)
    np.testing.assert_array_equal(pb.open("old.b2nd", deserialize="full")[:], want)


@needs_udf
def test_python_blosc2_udfs_open_here(cblosc2, theirs) -> None:
    a, b, _ = theirs

    def plain(inputs, output, offset):
        x, y = inputs
        output[:] = x - np.sin(y) + offset[0]

    cblosc2.lazyudf(plain, (a, b), dtype=np.float64).save("plain.b2nd")
    want = cblosc2.open("plain.b2nd", deserialize="full").compute()[:]
    ours = pb.open("plain.b2nd", deserialize="full")
    assert type(ours).__name__ == "LazyUDF"
    np.testing.assert_allclose(ours.compute()[:], want, rtol=1e-12)
    assert "LazyArray" in cblosc2.open("plain.b2nd", deserialize="full").array.schunk.meta


def test_python_blosc2_cannot_save_a_dsl_lazyudf(cblosc2, theirs) -> None:
    """python-blosc2 4.14.1 refuses to save a lazyudf of a DSL kernel over on-disk operands
    (its DSL route computes over operands it no longer sees as stored), so there is no such
    file of its to read; ours of a DSL kernel are read by it (the test below)."""
    a, b, _ = theirs

    @cblosc2.dsl_kernel
    def kernel(x, y):
        return x * x + y * 2.5

    with pytest.raises(ValueError, match="stored on disk"):
        cblosc2.lazyudf(kernel, (a, b), dtype=np.float64).save("dsl.b2nd")


@pytest.mark.parametrize("suffix", ["b2z", "b2d"])
def test_python_blosc2_store_bundle_with_a_recipe(cblosc2, here, suffix) -> None:
    path = f"bundle.{suffix}"
    with cblosc2.DictStore(path, mode="w", threshold=1) as store:
        store["/data/a"] = np.arange(5, dtype=np.float64)
        store["/data/b"] = np.arange(5, dtype=np.float64) * 2
        a, b = store["/data/a"], store["/data/b"]
        expr = cblosc2.lazyexpr("a + b * 2", operands={"a": a, "b": b})
        store["/recipes/expr"] = cblosc2.ndarray_from_cframe(expr.to_cframe())
    with pb.open(path, mode="r", deserialize="full") as store:
        got = store["/recipes/expr"]
        assert isinstance(got, pb.LazyExpr)
        np.testing.assert_array_equal(got[:], np.arange(5.0) * 5)
    with pb.open(path, mode="r") as store, pytest.raises(pb.UnsafeDeserializationError):
        store["/recipes/expr"]


def test_python_blosc2_expression_over_store_members(cblosc2, theirs) -> None:
    a, b, _ = theirs
    with cblosc2.DictStore("ops.b2z", mode="w", threshold=None) as d:
        d["/a"], d["/b"] = a, b
    with cblosc2.DictStore("ops.b2z", mode="r") as d:
        da, db = d["/a"], d["/b"]
        cblosc2.lazyexpr("da * db", {"da": da, "db": db}).save("expr.b2nd")
    carrier = cblosc2.open("expr.b2nd", deserialize="full").array  # held: see the test below
    refs = carrier.schunk.vlmeta["b2o"]["operands"]
    assert refs["da"] == {"kind": "dictstore_key", "version": 1, "urlpath": "ops.b2z", "key": "/a"}
    np.testing.assert_allclose(pb.open("expr.b2nd", deserialize="full")[:], a[:] * b[:])


# -- pyblosc2 saves, python-blosc2 opens ------------------------------------------------------


@pytest.fixture
def ours(here):
    a = pb.asarray(np.linspace(0, 1, 600).reshape(20, 30), chunks=(8, 16), blocks=(4, 8))
    a = a.copy(urlpath="a.b2nd", mode="w")
    b = pb.asarray(np.linspace(1, 2, 600).reshape(20, 30), urlpath="b.b2nd", mode="w")
    c = pb.asarray(np.arange(30.0), urlpath="c.b2nd", mode="w")
    return a, b, c


@pytest.mark.parametrize("name", list(THEIR_EXPRESSIONS))
def test_pyblosc2_saves_python_blosc2_computes(cblosc2, ours, name) -> None:
    expr = THEIR_EXPRESSIONS[name](pb, *ours)
    expr.save("mine.b2nd")
    back = cblosc2.open("mine.b2nd", deserialize="full")
    assert type(back).__name__ == "LazyExpr"
    np.testing.assert_allclose(_values(back), _values(expr), rtol=1e-12)
    with pytest.raises(cblosc2.exceptions.UnsafeDeserializationError):
        cblosc2.open("mine.b2nd")


@pytest.mark.parametrize("name", ["operators", "functions", "string", "scalars", "constructor"])
def test_carrier_layout_is_python_blosc2s(cblosc2, name, here) -> None:
    """The same expression saved by both libraries: the decoded metalayers and vlmeta are
    equal (frame bytes are not compared: the carriers' chunks may differ)."""
    ta = cblosc2.asarray(np.linspace(0, 1, 600).reshape(20, 30), urlpath="a.b2nd", mode="w")
    tb = cblosc2.asarray(np.linspace(1, 2, 600).reshape(20, 30), urlpath="b.b2nd", mode="w")
    tc = cblosc2.arange(30, dtype=np.float64, urlpath="c.b2nd", mode="w")
    THEIR_EXPRESSIONS[name](cblosc2, ta, tb, tc).save("theirs.b2nd")
    oa, ob, oc = (pb.open(p) for p in ("a.b2nd", "b.b2nd", "c.b2nd"))
    THEIR_EXPRESSIONS[name](pb, oa, ob, oc).save("mine.b2nd")
    # python-blosc2's carrier NDArray owns the C super-chunk its .schunk points into: held
    theirs = cblosc2.open("theirs.b2nd", deserialize="full").array
    t, m = theirs.schunk, pb.open("mine.b2nd", deserialize="full").schunk
    assert set(m.meta.keys()) == set(t.meta.keys()) == {"b2nd", "b2o"}  # its Meta has no items()
    assert m.meta["b2o"] == t.meta["b2o"]
    assert m.vlmeta[:] == t.vlmeta[:]


def test_python_blosc2_carrier_metadata_needs_its_array_held(cblosc2, here) -> None:
    """python-blosc2 4.14.1's ``vlmeta`` keeps a weak reference to its SChunk, which lives
    only as long as the carrier NDArray (``open(...).array``) does: read through a
    temporary, it raises ReferenceError (its ``Meta`` has no such check and reads a freed
    super-chunk: empty keys, or a crash in its repr), and its ``Meta.items()`` is
    NotImplementedError. So the tests here hold the carrier and compare ``meta.keys()``;
    pyblosc2's objects keep what they read from alive."""
    pb.asarray(np.arange(6.0), urlpath="x.b2nd", mode="w")
    cblosc2.lazyexpr("x + 1", {"x": cblosc2.open("x.b2nd")}).save("e.b2nd")
    with pytest.raises(ReferenceError, match="no longer exists"):
        cblosc2.open("e.b2nd", deserialize="full").array.schunk.vlmeta["b2o"]
    carrier = cblosc2.open("e.b2nd", deserialize="full").array
    assert carrier.schunk.vlmeta["b2o"]["expression"] == "x + 1"
    with pytest.raises(NotImplementedError, match="Items"):
        carrier.schunk.meta.items()
    ours = pb.open("e.b2nd", deserialize="full").array.schunk
    assert ours.vlmeta["b2o"] == carrier.schunk.vlmeta["b2o"]
    assert dict(ours.meta.items()).keys() == set(carrier.schunk.meta.keys())


def test_pyblosc2_chain_and_vlmeta_read_by_python_blosc2(cblosc2, ours) -> None:
    a, _b, c = ours
    e1 = pb.lazyexpr("a ** 2 + 1", {"a": a})
    e1.vlmeta["units"] = "m2"
    e1.save("e1.b2nd")
    e2 = pb.lazyexpr("e1 * c", {"e1": pb.open("e1.b2nd", deserialize="full"), "c": c})
    e2.save("e2.b2nd")
    back = cblosc2.open("e2.b2nd", deserialize="full")
    np.testing.assert_allclose(back[:], (a[:] ** 2 + 1) * c[:])
    assert cblosc2.open("e1.b2nd", deserialize="full").vlmeta["units"] == "m2"


def test_pyblosc2_store_bundle_read_by_python_blosc2(cblosc2, here) -> None:
    with pb.DictStore("mine.b2z", mode="w", threshold=1) as store:
        store["/data/a"] = np.arange(5.0)
        a = store["/data/a"]
        store["/recipes/e"] = pb.ndarray_from_cframe((a * 2 + 1).to_cframe())
    with cblosc2.open("mine.b2z", mode="r", deserialize="full") as store:
        np.testing.assert_array_equal(store["/recipes/e"][:], np.arange(5.0) * 2 + 1)


@needs_udf
def test_pyblosc2_udfs_read_by_python_blosc2(cblosc2, ours) -> None:
    a, b, _ = ours

    @pb.dsl_kernel
    def kernel(x, y):
        return x * x + y * 2.5

    def plain(inputs, output, offset):
        x, y = inputs
        output[:] = x - np.sin(y) + offset[0]

    pb.lazyudf(kernel, (a, b), dtype=np.float64).save("dsl.b2nd")
    pb.lazyudf(plain, (a, b), dtype=np.float64).save("plain.b2nd")
    for f in ("dsl.b2nd", "plain.b2nd"):
        want = pb.open(f, deserialize="full").compute()[:]
        back = cblosc2.open(f, deserialize="full")
        assert type(back).__name__ == "LazyUDF"
        np.testing.assert_allclose(back.compute()[:], want, rtol=1e-12)
    carrier = cblosc2.open("dsl.b2nd", deserialize="full").array  # held (its vlmeta's owner)
    payload = carrier.schunk.vlmeta["b2o"]
    assert payload["udf_source"].startswith("def kernel(x, y):")  # no decorator
    assert payload["kwargs"] == {"jit": None, "jit_backend": None, "in_place": False}
