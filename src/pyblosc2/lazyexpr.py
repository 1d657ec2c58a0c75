"""python-blosc2's ``blosc2.lazyexpr`` module names (``from blosc2.lazyexpr import
ne_evaluate`` works): re-exports of :mod:`pyblosc2.compute`.

The imports are absolute so that this module, imported under an alias of the package
(``blosc2.lazyexpr`` when ``pyblosc2`` is installed as ``blosc2``), re-exports the very objects
of ``pyblosc2`` instead of loading a second copy of the engine.

>>> from pyblosc2.lazyexpr import LazyExpr, ne_evaluate
>>> import numpy as np; x = np.arange(3.0)
>>> ne_evaluate("x + 1").tolist()
[1.0, 2.0, 3.0]
"""

from pyblosc2.compute.api import (
    FPAccuracy,
    can_cast,
    evaluate,
    lazyexpr,
    ne_evaluate,
    npcumprod,
    npcumsum,
    result_type,
    seek_operands,
)
from pyblosc2.compute.lazyarray import LazyArray
from pyblosc2.compute.lazyexpr import LazyExpr
from pyblosc2.compute.parser import get_expr_operands, validate_expr

# -- issue 33, user functions: python-blosc2's UDF names, and two private helpers of its
# module that its tests call or patch (the compiler pragma; the gate of its JavaScript route)
from pyblosc2.compute.udf import LazyUDF, lazyudf
from pyblosc2.dsl.run import backend_pragma as _apply_jit_backend_pragma
from pyblosc2.ndarray.linalg_members import LINALG_FUNCS

#: python-blosc2's ``linalg_funcs`` (the names of its linear-algebra and shape functions)
linalg_funcs = list(LINALG_FUNCS)


def _js_dtypes_ok(operands: object, kwargs: object) -> bool:
    """python-blosc2's gate of its JavaScript (WebAssembly) route: pyblosc2 has none.

    >>> _js_dtypes_ok({}, {})
    False
    """
    return False


__all__ = [
    "FPAccuracy",
    "LazyArray",
    "LazyExpr",
    "LazyUDF",
    "_apply_jit_backend_pragma",
    "_js_dtypes_ok",
    "can_cast",
    "evaluate",
    "get_expr_operands",
    "lazyexpr",
    "lazyudf",
    "linalg_funcs",
    "ne_evaluate",
    "npcumprod",
    "npcumsum",
    "result_type",
    "seek_operands",
    "validate_expr",
]
