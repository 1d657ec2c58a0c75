"""Expression strings call the linear-algebra functions as python-blosc2's do
(``lazyexpr("matmul(A, B) + 1")``), and ``blosc2.lazyexpr.linalg_funcs`` names them."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.lazyexpr import linalg_funcs


def test_linalg_funcs_are_python_blosc2s_names() -> None:
    assert {"matmul", "diagonal", "tensordot", "vecdot", "permute_dims"} <= set(linalg_funcs)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ("diagonal(A)", lambda a, b: np.diagonal(a)),
        ("matmul(A, B) + 1", lambda a, b: a @ b + 1),
        ("matrix_transpose(A) * 2", lambda a, b: a.T * 2),
        ("permute_dims(A)", lambda a, b: a.T),
        ("tensordot(A, B, axes=1)", lambda a, b: np.tensordot(a, b, axes=1)),
        ("outer(diagonal(A), diagonal(A))", lambda a, b: np.outer(np.diagonal(a), np.diagonal(a))),
        ("vecdot(A, A)", lambda a, b: np.sum(a * a, axis=-1)),
    ],
)
def test_linalg_in_expression_strings(expr: str, want) -> None:
    a, b = np.arange(12.0).reshape(3, 4), np.arange(20.0).reshape(4, 5)
    A, B = blosc2.asarray(a, chunks=(2, 3)), blosc2.asarray(b, chunks=(3, 2))
    out = blosc2.lazyexpr(expr, operands={"A": A, "B": B})
    np.testing.assert_allclose(out[()], want(a, b))
    assert out.shape == want(a, b).shape
