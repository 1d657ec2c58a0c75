"""The compute engine: lazy expressions over arrays larger than memory, computed chunk by
chunk under a memory bound (python-blosc2's ``LazyExpr``, ``lazyexpr``, ``evaluate``, the
elementwise functions, the reductions, ``where`` and filters).

How to extend the engine
------------------------
* **The form of an expression** is python-blosc2's: ``LazyExpr.expression`` (a string over
  ``o0``, ``o1``...) and ``LazyExpr.operands`` (the dict they name). That pair is the whole
  state (plus ``_filter``, the ``x`` of a one-argument ``where``): a saved expression stores
  the string and references to the operands, and re-creates it with
  ``LazyExpr._new_expr(expression, operands)``, which parses the string through the
  allow-list of :mod:`.parser` (no ``eval``: names, functions and node kinds outside it are
  :class:`~pyblosc2.errors.ParamError`) and checks names, shapes and dtypes at once.
* **A new kind of lazy array** (``LazyUDF``) subclasses :class:`.lazyarray.LazyArray` and
  implements ``shape``, ``dtype`` and ``_source(bound)``: an object with ``shape``, ``dtype``,
  ``chunks``/``blocks`` (the partition pieces follow, or None), ``nthreads``,
  ``piece_bytes(items)`` (the memory one piece of that many items needs) and
  ``read(key)`` (the items at ``key``, a tuple of slices, as a numpy array). A UDF's
  ``(inputs_tuple, output, offset)`` protocol fits ``read``: read the inputs' parts at
  ``key``, allocate ``output`` of the key's shape, call the function with the key's start as
  ``offset``. ``compute``, ``__getitem__``, ``np.asarray``, the reductions, ``where``,
  ``get_chunk`` and ``to_dask`` then work unchanged, under the memory bound. A lazy array
  that can be merged into an enclosing expression gives ``_inline()`` -> ``(tree,
  operands)``; others (None) are read as array operands.
* **A new function in expression strings** (linear algebra, ...) is registered with
  :func:`.registry.register_function` (name, callable, optional shape rule): it is computed
  whole before the elementwise pass and its result joins the operands. Elementwise
  functions are numpy's ufuncs and :mod:`.functions`' table.
* **Memory**: every path plans first (:mod:`.plan`): ``max_memory=`` (or
  ``PYBLOSC2_MAX_MEMORY``, or the available memory) bounds the projected peak, and a plan
  that cannot fit raises :class:`~pyblosc2.errors.MemoryBudgetError` before it allocates.

The modules, one concept each: :mod:`.tree` (nodes), :mod:`.parser` (strings -> nodes),
:mod:`.functions` (elementwise names), :mod:`.registry` (constructors, eager functions),
:mod:`.operands`, :mod:`.selection` (keys, pieces), :mod:`.analysis` (binding, shape,
dtype), :mod:`.kernel` (numexpr/numpy on one piece), :mod:`.plan` (memory),
:mod:`.blockwise`, :mod:`.reductions`, :mod:`.filters`, :mod:`.lower`,
:mod:`.lazyarray`, :mod:`.lazyexpr`, :mod:`.exprtext`, :mod:`.elementwise`,
:mod:`.statistical`, :mod:`.api`, :mod:`.engine`, :mod:`.dask_adapter`.

Importing this package registers the engine for the NDArray operators
(:mod:`pyblosc2.ndarray.lazyhook`).

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> a = asarray(np.arange(6.0).reshape(2, 3))
>>> e = sin(a) + a * 2
>>> want = np.sum(np.sin(a[:]) + a[:] * 2)
>>> type(e).__name__, e.shape, bool(np.isclose(e.sum(max_memory=1 << 24), want))
('LazyExpr', (2, 3), True)
"""

from ..ndarray import lazyhook as _lazyhook
from .api import (
    FPAccuracy,
    can_cast,
    evaluate,
    isdtype,
    lazyexpr,
    ne_evaluate,
    npcumprod,
    npcumsum,
    result_type,
    seek_operands,
)
from .elementwise import *  # noqa: F403 - the namespace of elementwise functions
from .elementwise import __all__ as _elementwise
from .engine import ComputeEngine
from .groupreduce import group_reduce
from .jit import jit
from .lazyarray import LazyArray
from .lazyexpr import LazyExpr
from .parser import get_expr_operands, validate_expr
from .plan import available_memory, memory_bound
from .registry import register_function, squeeze
from .saved.reader import MissingOperands
from .saved.reader import register as _register_saved
from .simpleproxy import SimpleProxy, as_simpleproxy
from .statistical import *  # noqa: F403 - the module-level reductions
from .statistical import __all__ as _statistical
from .udf import LazyUDF, lazyudf

_lazyhook.register(ComputeEngine())
_register_saved()  # pyblosc2.open, from_cframe and the stores open saved expressions

__all__ = [
    "ComputeEngine",
    "FPAccuracy",
    "LazyArray",
    "LazyExpr",
    "LazyUDF",
    "MissingOperands",
    "SimpleProxy",
    "as_simpleproxy",
    "available_memory",
    "can_cast",
    "evaluate",
    "get_expr_operands",
    "group_reduce",
    "isdtype",
    "jit",
    "lazyexpr",
    "lazyudf",
    "memory_bound",
    "ne_evaluate",
    "npcumprod",
    "npcumsum",
    "register_function",
    "result_type",
    "seek_operands",
    "squeeze",
    "validate_expr",
    *_elementwise,
    *_statistical,
]
