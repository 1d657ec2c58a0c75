"""python-blosc2's DSL kernels (``blosc2.dsl_kernel``): an element-wise function written in
the subset of Python python-blosc2 compiles.

pyblosc2 compiles nothing: a :class:`DSLKernel` keeps the function and its source and calls it
(numpy evaluates the element-wise body on whole arrays). Lazy UDFs over kernels
(``lazyudf``) are python-blosc2 compute features pyblosc2 does not implement.

>>> @dsl_kernel
... def twice_plus(x, y):
...     return x + y * 2
>>> import numpy as np
>>> twice_plus(np.arange(3), np.ones(3)).tolist()
[2.0, 3.0, 4.0]
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import Any

__all__ = ["DSLKernel", "dsl_kernel"]


class DSLKernel:
    """A kernel function (``func``) with its source (``dsl_source``) and input names.

    >>> DSLKernel(lambda x: x + 1).input_names
    ['x']
    """

    def __init__(self, func: Callable[..., Any]) -> None:
        if not callable(func):
            raise TypeError(f"dsl_kernel needs a function, got {type(func).__name__}")
        self.func = func
        self.__name__ = getattr(func, "__name__", type(self).__name__)
        self.__qualname__ = getattr(func, "__qualname__", self.__name__)
        self.__doc__ = getattr(func, "__doc__", None)
        try:
            self.dsl_source: str | None = textwrap.dedent(inspect.getsource(func))
        except (OSError, TypeError):
            self.dsl_source = None
        try:
            params = inspect.signature(func).parameters
            self.input_names: list[str] | None = list(params)
        except (TypeError, ValueError):
            self.input_names = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"DSLKernel({self.__qualname__})"


def dsl_kernel(func: Callable[..., Any]) -> DSLKernel:
    """Mark ``func`` as a DSL kernel.

    >>> dsl_kernel(abs)(-3)
    3
    """
    return DSLKernel(func)
