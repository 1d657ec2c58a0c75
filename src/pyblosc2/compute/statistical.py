"""python-blosc2's reductions as module functions (the array API's "statistical" and
"utility" sections: ``sum``, ``prod``, ``mean``, ``std``, ``var``, ``min``, ``max``, ``any``,
``all``, ``argmin``, ``argmax``, ``count_nonzero``, ``cumulative_sum``, ``cumulative_prod``).
Each reads its operand (an NDArray, a lazy expression, a numpy array) chunk by chunk and
returns numpy's value (an NDArray when storage keywords such as ``urlpath=`` are given).

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> a = asarray(np.arange(12.0).reshape(3, 4), chunks=(2, 2), blocks=(1, 2))
>>> float(sum(a)), mean(a, axis=0).tolist(), int(argmax(a * -1))
(66.0, [4.0, 5.0, 6.0, 7.0], 0)
"""

from __future__ import annotations

from typing import Any

from .lazyarray import LazyArray
from .lazyexpr import LazyExpr

__all__ = [
    "all",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cumulative_prod",
    "cumulative_sum",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]


def as_lazy(x: Any) -> LazyArray:
    """``x`` as a lazy array (an NDArray, a numpy array... as the identity expression)."""
    return x if isinstance(x, LazyArray) else LazyExpr(new_op=(x, None, None))


def sum(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The sum over ``axis`` (numpy's ``sum``; ``where=``, ``item=``, ``out=`` and storage
    keywords as python-blosc2's).

    >>> from pyblosc2 import asarray
    >>> int(sum(asarray([1, 2, 3])))
    6
    """
    return as_lazy(x)._reduce("sum", axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)


def prod(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The product over ``axis`` (numpy's ``prod``).

    >>> from pyblosc2 import asarray
    >>> int(prod(asarray([1, 2, 3, 4])))
    24
    """
    return as_lazy(x)._reduce("prod", axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)


def mean(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The mean over ``axis`` (numpy's ``mean``).

    >>> from pyblosc2 import asarray
    >>> float(mean(asarray([1, 2, 3, 4])))
    2.5
    """
    return as_lazy(x)._reduce("mean", axis=axis, dtype=dtype, keepdims=keepdims, **kwargs)


def std(
    x: Any,
    axis: Any = None,
    dtype: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    """The standard deviation over ``axis`` (numpy's ``std``, one pass).

    >>> from pyblosc2 import asarray
    >>> float(std(asarray([1.0, 3.0])))
    1.0
    """
    return as_lazy(x)._reduce("std", axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **kwargs)


def var(
    x: Any,
    axis: Any = None,
    dtype: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    **kwargs: Any,
) -> Any:
    """The variance over ``axis`` (numpy's ``var``, one pass).

    >>> from pyblosc2 import asarray
    >>> float(var(asarray([1.0, 3.0]), ddof=1))
    2.0
    """
    return as_lazy(x)._reduce("var", axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **kwargs)


def min(x: Any, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The minimum over ``axis`` (NaN propagates, as numpy's ``min``).

    >>> from pyblosc2 import asarray
    >>> int(min(asarray([3, 1, 2])))
    1
    """
    return as_lazy(x)._reduce("min", axis=axis, keepdims=keepdims, **kwargs)


def max(x: Any, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The maximum over ``axis`` (NaN propagates, as numpy's ``max``).

    >>> from pyblosc2 import asarray
    >>> int(max(asarray([3, 1, 2])))
    3
    """
    return as_lazy(x)._reduce("max", axis=axis, keepdims=keepdims, **kwargs)


def any(x: Any, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """Whether any item over ``axis`` is true.

    >>> from pyblosc2 import asarray
    >>> bool(any(asarray([0, 0, 1])))
    True
    """
    return as_lazy(x)._reduce("any", axis=axis, keepdims=keepdims, **kwargs)


def all(x: Any, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """Whether all items over ``axis`` are true.

    >>> from pyblosc2 import asarray
    >>> bool(all(asarray([1, 0, 1])))
    False
    """
    return as_lazy(x)._reduce("all", axis=axis, keepdims=keepdims, **kwargs)


def argmin(x: Any, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The index of the first minimum (flat over all axes when ``axis`` is None).

    >>> from pyblosc2 import asarray
    >>> int(argmin(asarray([3, 1, 1])))
    1
    """
    return as_lazy(x)._reduce("argmin", axis=axis, keepdims=keepdims, **kwargs)


def argmax(x: Any, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """The index of the first maximum (flat over all axes when ``axis`` is None).

    >>> from pyblosc2 import asarray
    >>> int(argmax(asarray([3, 5, 5])))
    1
    """
    return as_lazy(x)._reduce("argmax", axis=axis, keepdims=keepdims, **kwargs)


def count_nonzero(x: Any, axis: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    """How many items over ``axis`` are not zero.

    >>> from pyblosc2 import asarray
    >>> int(count_nonzero(asarray([0, 2, 0, 3])))
    2
    """
    return as_lazy(x)._reduce("count_nonzero", axis=axis, keepdims=keepdims, **kwargs)


def cumulative_sum(
    x: Any, axis: Any = None, dtype: Any = None, include_initial: bool = False, **kwargs: Any
) -> Any:
    """The running sum along ``axis`` (required beyond one dimension; the array API's
    ``cumulative_sum``).

    >>> from pyblosc2 import asarray
    >>> cumulative_sum(asarray([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    return as_lazy(x)._reduce(
        "cumulative_sum", axis=axis, dtype=dtype, include_initial=include_initial, **kwargs
    )


def cumulative_prod(
    x: Any, axis: Any = None, dtype: Any = None, include_initial: bool = False, **kwargs: Any
) -> Any:
    """The running product along ``axis`` (the array API's ``cumulative_prod``).

    >>> from pyblosc2 import asarray
    >>> cumulative_prod(asarray([1, 2, 3])).tolist()
    [1, 2, 6]
    """
    return as_lazy(x)._reduce(
        "cumulative_prod", axis=axis, dtype=dtype, include_initial=include_initial, **kwargs
    )
