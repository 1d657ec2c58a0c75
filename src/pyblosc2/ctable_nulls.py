"""python-blosc2's ``blosc2.ctable_nulls`` module names (``from blosc2.ctable_nulls import
is_na_marker`` works): the null kinds of a column spec and the value tests, over
:mod:`pyblosc2.ctable.nulls`, and the string-predicate rewriter (``rewrite_null_predicates``,
``sentinel_guard_expr``, :mod:`pyblosc2.ctable.nullrewrite`).

>>> from pyblosc2.ctable_nulls import kind_of_spec
>>> import pyblosc2
>>> kind_of_spec(pyblosc2.int64(null_value=-1)), kind_of_spec(pyblosc2.vlstring())
('sentinel', 'native')
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pyblosc2.ctable.nullrewrite import rewrite_null_predicates, sentinel_guard_expr
from pyblosc2.ctable.nulls import NULL_MASK, NULL_NONE, NULL_SENTINEL, null_kind, sentinel_mask
from pyblosc2.ctable.nulls import is_na as is_na_marker
from pyblosc2.schema import fill_value_for

__all__ = [
    "NULL_CODE",
    "NULL_MASK",
    "NULL_NATIVE",
    "NULL_NONE",
    "NULL_SENTINEL",
    "fill_value_for",
    "is_na_marker",
    "is_nan_sentinel",
    "is_null_value",
    "kind_of_spec",
    "rewrite_null_predicates",
    "sentinel_guard_expr",
    "sentinel_mask",
]

NULL_CODE = "code"  # a dictionary column's reserved code
NULL_NATIVE = "native"  # variable-length kinds: a None cell
_NATIVE_KINDS = frozenset({"vlstring", "vlbytes", "struct", "object"})


def kind_of_spec(spec: Any) -> str:
    """How a column of ``spec`` represents its nulls: ``"mask"``, ``"sentinel"``,
    ``"code"`` (dictionary), ``"native"`` (``None`` cells) or ``"none"``."""
    if spec is None:
        return NULL_NONE
    kind = getattr(spec, "kind", "")
    if kind == "dictionary":
        return NULL_CODE
    if null_kind(spec) == NULL_MASK:
        return NULL_MASK
    if kind in _NATIVE_KINDS:
        return NULL_NATIVE
    options = getattr(spec, "options", {})
    if getattr(spec, "null_value", options.get("null_value")) is not None:
        return NULL_SENTINEL
    return NULL_NONE


def is_nan_sentinel(value: Any) -> bool:
    """Whether ``value`` is a NaN used as a sentinel (any float width)."""
    return isinstance(value, float | np.floating) and math.isnan(value)


def is_null_value(value: Any, null_value: Any) -> bool:
    """Whether one value is the sentinel ``null_value`` (NaN matches NaN)."""
    if null_value is None:
        return False
    if is_nan_sentinel(null_value):
        return is_nan_sentinel(value)
    return bool(value == null_value)
