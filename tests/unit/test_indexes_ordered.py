"""Ordered access (pyblosc2.indexes.ordered): sort/argsort/iter_sorted by fields or by an
expression of fields, through a FULL index of the first key where there is one, equal to
numpy's stable order; ordered filters; explain of an ordered query."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import IndexKind

DT = np.dtype([("x", np.float64), ("k", np.int32)])


def _data(n: int = 3000) -> np.ndarray:
    rng = np.random.default_rng(8)
    s = np.zeros(n, DT)
    s["x"] = np.round(rng.normal(size=n), 1)  # many ties
    s["k"] = rng.integers(0, 5, n)
    return s


@pytest.mark.parametrize("indexed", [False, True])
def test_argsort_and_sort_by_an_expression(indexed: bool) -> None:
    s = _data()
    a = pb.asarray(s, chunks=(500,), blocks=(100,))
    if indexed:
        a.create_index(expression="abs(x)", kind=IndexKind.FULL)
    want = np.argsort(np.abs(s["x"]), kind="stable")
    np.testing.assert_array_equal(a.argsort(order="abs(x)")[:], want)
    np.testing.assert_array_equal(a.sort(order="abs(x)")[:], s[want])
    both = np.lexsort((s["k"], np.abs(s["x"])))
    np.testing.assert_array_equal(a.argsort(order=["abs(x)", "k"])[:], both)


def test_the_full_index_order_includes_appended_runs() -> None:
    s = _data()
    a = pb.asarray(s[:2000], chunks=(500,), blocks=(100,))
    a.create_index(expression="abs(x)", kind=IndexKind.FULL)
    a.append(s[2000:])
    assert len(a.index()["full"]["runs"]) == 1
    np.testing.assert_array_equal(
        a.argsort(order="abs(x)")[:], np.argsort(np.abs(s["x"]), kind="stable")
    )


def test_ordered_filters_and_their_explanation() -> None:
    s = _data()
    a = pb.asarray(s, chunks=(500,), blocks=(100,))
    a.create_index("k", kind=IndexKind.FULL)
    e = pb.lazyexpr("(k >= 1) & (k < 3) & (x > 0)", a.fields).where(a)
    m = (s["k"] >= 1) & (s["k"] < 3) & (s["x"] > 0)
    want = np.flatnonzero(m)[np.argsort(s[m], order=["k", "x"], kind="stable")]
    np.testing.assert_array_equal(e.argsort(order=["k", "x"]).compute()[:], want)
    np.testing.assert_array_equal(e.sort(order=["k", "x"]).compute()[:], s[want])
    info = e.sort(order=["k", "x"]).explain()
    assert info["will_use_index"] and info["ordered_access"] and info["field"] == "k"
    assert info["secondary_refinement"]
    info = e.sort(order="x").explain()
    assert not info["will_use_index"]
    assert info["reason"] == "no matching full index was found for ordered access"


def test_iter_sorted_needs_a_full_index_and_walks_its_order() -> None:
    s = _data(100)
    a = pb.asarray(s, chunks=(30,), blocks=(10,))
    with pytest.raises(ValueError, match="FULL index"):
        next(a.iter_sorted(order="k"))
    a.create_index("k", kind=IndexKind.FULL)
    rows = np.array(list(a.iter_sorted(order=["k", "x"], batch_size=7)), dtype=DT)
    np.testing.assert_array_equal(rows, np.sort(s, order=["k", "x"], kind="stable"))
    part = np.array(list(a.iter_sorted(order="k", start=5, stop=20, step=3)), dtype=DT)
    np.testing.assert_array_equal(part, s[np.argsort(s["k"], kind="stable")][5:20:3])


def test_an_unknown_key_is_refused() -> None:
    a = pb.asarray(_data(10))
    with pytest.raises(ValueError, match="unknown field"):
        a.argsort(order="nope + 1")


def test_an_ordered_filter_is_served_from_the_result_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyblosc2.indexes as ix
    from pyblosc2.indexes.cache import scope_of

    s = _data()
    a = pb.asarray(s, chunks=(500,), blocks=(100,))
    a.create_index("k", kind=IndexKind.FULL)
    e = pb.lazyexpr("(k >= 1) & (k < 3)", a.fields).where(a)
    first = e.argsort(order="k").compute()[:]
    scope = scope_of(a)
    assert any(k[0] == scope for k in ix.HOT.entries)

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("computed again")

    monkeypatch.setattr(ix, "ordered_query_indices", boom)
    np.testing.assert_array_equal(e.argsort(order="k").compute()[:], first)
    a[0] = a[0]  # a write clears the array's cached results
    assert not any(k[0] == scope for k in ix.HOT.entries)
    a.rebuild_index("k")
    with pytest.raises(AssertionError, match="computed again"):
        e.argsort(order="k").compute()
