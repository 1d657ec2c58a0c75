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
from pyblosc2.ctable.nulls import (
    NULL_CODE,
    NULL_MASK,
    NULL_NATIVE,
    NULL_NONE,
    NULL_SENTINEL,
    kind_of_spec,
    sentinel_mask,
)
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
