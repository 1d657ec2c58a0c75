"""python-blosc2's DSL kernels (``blosc2.dsl_kernel``): elementwise functions with ``if``,
``for`` and ``while``, written in a checked subset of Python and run element by element.

* :mod:`.syntax` — the grammar as an allow-list over ``ast`` (``DSLSyntaxError``); sources
  are parsed, never executed;
* :mod:`.functions` — the functions a kernel may call, one table for both routes;
* :mod:`.interp` — the numpy route: whole pieces at once, with masks for control flow;
* :mod:`.numba_route` — the numba route (``pyblosc2[fast]``): the kernel compiled per item;
* :mod:`.run` — inputs as the kernel sees them and the choice of route;
* :mod:`.kernel` — ``DSLKernel``, ``dsl_kernel``, ``validate_dsl``, ``validate_dsl_jit``,
  ``kernel_from_source``.

``lazyudf`` (:mod:`pyblosc2.compute.udf`) runs kernels per piece of its result, under the
engine's memory bound.

>>> import numpy as np
>>> @dsl_kernel
... def steps(x):
...     n = 0
...     while x > 1.0 and n < 10:
...         x2 = x
...         n = n + 1
...         if x2 > 100.0:
...             break
...     return n
>>> out = np.empty(3, np.int64)
>>> steps((np.array([0.5, 2.0, 500.0]),), out, (0,)); out.tolist()
[0, 10, 1]
"""

from .kernel import DSLKernel, dsl_kernel, kernel_from_source, validate_dsl, validate_dsl_jit
from .syntax import DSLRuntimeError, DSLSyntaxError

__all__ = [
    "DSLKernel",
    "DSLRuntimeError",
    "DSLSyntaxError",
    "dsl_kernel",
    "kernel_from_source",
    "validate_dsl",
    "validate_dsl_jit",
]
