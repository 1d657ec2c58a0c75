"""A Proxy and a ProxyNDField are operands of lazy expressions, as python-blosc2's (its
tests/ndarray/test_lazyexpr*.py compute ``proxy + proxy`` and expressions of proxy fields)."""

from __future__ import annotations

import numpy as np

import pyblosc2 as blosc2


def test_a_proxy_is_an_operand() -> None:
    x = np.arange(60.0).reshape(6, 10)
    p = blosc2.Proxy(blosc2.asarray(x, chunks=(4, 5), blocks=(2, 5)))
    e = p * 2 + p
    assert isinstance(e, blosc2.LazyExpr) and e.shape == x.shape
    np.testing.assert_array_equal(e[1:3], (x * 3)[1:3])
    np.testing.assert_allclose(blosc2.sin(p)[...], np.sin(x), rtol=1e-15, atol=1e-300)  # numexpr
    assert float(p.sum()) == x.sum()
    np.testing.assert_array_equal(p[p > 50][...], x[x > 50])


def test_a_proxy_field_is_an_operand() -> None:
    x = np.zeros(8, dtype=[("a", "i4"), ("b", "f8")])
    x["a"], x["b"] = np.arange(8), np.linspace(0, 1, 8)
    p = blosc2.Proxy(blosc2.asarray(x, chunks=(3,)))
    a, b = p.fields["a"], p.fields["b"]
    assert a.dtype == np.dtype("i4") and a.shape == (8,)
    np.testing.assert_allclose((a + b)[...], x["a"] + x["b"])
