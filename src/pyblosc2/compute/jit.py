"""``jit``: python-blosc2's decorator that runs a function of arrays on the compute engine.

Two routes, chosen when the function is decorated (``strict=``, as python-blosc2's):

* **tracing** (functions without ``if``/``for``/``while``, or ``strict=False``): the function
  is called once with its array arguments as operands (:class:`~.simpleproxy.SimpleProxy`
  around anything that is not one already; NDArrays as they are), so its operators and
  numpy's ufuncs (``__array_ufunc__``) and reductions (``np.sum(x)`` calls ``x.sum()``) build
  a lazy expression instead of computing; the expression is then computed piece by piece —
  into a numpy array, into ``out=``, or into an NDArray when storage arguments
  (``urlpath=``, ``cparams=``, ``chunks=``...) are given. A function whose control flow
  depends on the arrays cannot be traced (a branch taken once is all the trace sees).
* **DSL** (``if``/``for``/``while`` in a function that is valid DSL, or ``strict=True``): the
  function is a :class:`~pyblosc2.dsl.DSLKernel` run element by element through
  :func:`~.udf.lazyudf`, so every branch and loop runs as written, for each element (numba
  or numpy; ``jit=``/``jit_backend=`` choose). Its array arguments must share one shape.

``jit=``, ``jit_backend=`` and ``fp_accuracy=`` tune how it runs, never what it returns;
``max_memory=`` is the memory bound; ``disable=True`` returns the function itself.

>>> import numpy as np
>>> @jit
... def f(a, b):
...     return np.sin(a) * 2 + b
>>> f(np.zeros(3), np.arange(3.0)).tolist()
[0.0, 1.0, 2.0]
>>> @jit
... def clamp(x):
...     if x < 0.0:
...         return 0.0
...     return x
>>> clamp(np.array([-1.5, 2.0])).tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dsl import DSLKernel, DSLSyntaxError
from ..errors import ParamError, ParamTypeError
from ..ndarray.constructors import asarray
from ..ndarray.ndarray import NDArray
from ..ndarray.operand import Operand
from .lazyarray import _STORAGE_KEYS, LazyArray
from .pandas_engine import PandasUdfEngine, row_column, wide_frame_hint
from .plan import memory_bound
from .simpleproxy import SimpleProxy
from .udf import lazyudf

__all__ = ["jit"]

#: keywords that tune how a function runs (never what it returns)
TUNING = frozenset({"jit", "jit_backend", "fp_accuracy"})


def _has_control_flow(source: str | None) -> bool:
    if source is None:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(n, ast.If | ast.For | ast.While) for n in ast.walk(tree))


def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """The decorator's keywords as (storage, tuning, max_memory)."""
    storage = {k: v for k, v in kwargs.items() if k in _STORAGE_KEYS}
    tuning = {k: v for k, v in kwargs.items() if k in TUNING and v is not None}
    return storage, tuning, kwargs.get("max_memory")


def _stored(storage: dict[str, Any]) -> bool:
    return any(v is not None for v in storage.values())


def _values(kernel: DSLKernel, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The kernel's operands in its inputs' order (defaults filled in); array-protocol
    objects (a pandas Series...) as numpy arrays."""
    sig = kernel._sig
    if sig is None:
        raise ParamTypeError(f"@jit: cannot introspect the signature of {kernel.__name__!r}")
    if kernel.row_columns and len(args) == 1 and not kwargs:
        # pandas' row idiom: one parameter per column the kernel reads (:mod:`..dsl.rowidiom`)
        return tuple(row_column(args[0], label) for label in kernel.row_columns.values())
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        hint = wide_frame_hint(exc, kernel.__name__, kernel.input_names or sig.parameters)
        raise TypeError(f"{kernel.__name__}() {exc}" + (f"\n{hint}" if hint else "")) from None
    bound.apply_defaults()
    values = tuple(bound.arguments[n] for n in kernel.input_names or ())
    return tuple(
        np.asarray(v)
        if not isinstance(v, np.ndarray | NDArray)
        and hasattr(v, "__array__")
        and getattr(v, "ndim", 0) > 0
        else v
        for v in values
    )


def _jit_dsl_wrapper(kernel: DSLKernel, out: Any, kwargs: dict[str, Any]) -> Callable[..., Any]:
    """The DSL route: each call runs ``kernel`` through :func:`~.udf.lazyudf`."""
    storage, tuning, max_memory = _split(kwargs)

    def dsl_wrapper(*args: Any, **fkwargs: Any) -> Any:
        values = _values(kernel, args, fkwargs)
        shapes = {
            tuple(v.shape) for v in values if isinstance(v, np.ndarray | NDArray) and v.ndim > 0
        }
        if not shapes:
            shape = kwargs.get("shape")
            if shape is None:
                raise TypeError(
                    "@jit DSL kernels with only scalar inputs need shape= (given to the "
                    "decorator) for the result's shape"
                )
        elif len(shapes) > 1:
            raise TypeError(
                "jit DSL kernels do not support broadcasting; all array arguments must "
                f"share one shape, got {sorted(shapes)}"
            )
        else:
            (shape,) = shapes
        # scalars only: numpy's type of them (python-blosc2 asks for a dtype it cannot be given)
        dtypes = [np.asarray(v).dtype for v in values] or [np.dtype(np.float64)]
        dtype = None if shapes else np.result_type(*dtypes)
        udf = lazyudf(
            kernel,
            values,
            dtype=dtype,
            shape=shape,
            jit=tuning.get("jit"),
            jit_backend=tuning.get("jit_backend"),
        )
        run = {} if max_memory is None else {"max_memory": max_memory}
        if out is not None:
            if isinstance(out, NDArray):
                raise NotImplementedError(
                    "jit does not take an NDArray out= on the DSL (control-flow) route; "
                    "use lazyudf(...).compute(urlpath=..., mode='w') to write a result chunk "
                    "by chunk instead"
                )
            if not isinstance(out, np.ndarray):
                raise TypeError(f"jit out= must be a NumPy array or NDArray, got {type(out)!r}")
            if tuple(out.shape) != tuple(shape):
                raise TypeError(f"`out` shape {out.shape} does not match operand shape {shape}")
            if out.dtype != udf.dtype:
                raise TypeError(
                    f"`out` dtype {out.dtype} does not match the inferred result dtype {udf.dtype}"
                )
            return udf.compute(out=out, **run)
        if _stored(storage):
            return udf.compute(**storage, **run)
        return udf._getitem((), memory_bound(max_memory))

    return dsl_wrapper


def _params(func: Any) -> list[str]:
    try:
        return list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return []


def _trace_wrapper(func: Any, out: Any, kwargs: dict[str, Any], hint: str | None) -> Any:
    """The tracing route: ``func`` called once with operands; its expression computed."""
    storage, _, max_memory = _split(kwargs)
    chunks, blocks = kwargs.get("chunks"), kwargs.get("blocks")

    def wrap(v: Any) -> Any:
        if isinstance(v, Operand):
            return v
        ndim = len(getattr(v, "shape", np.shape(v)))
        fits = [p if p is not None and len(p) == ndim else None for p in (chunks, blocks)]
        return SimpleProxy(v, *fits)  # the result's chunks, for the proxies they fit

    def wrapper(*args: Any, **fkwargs: Any) -> Any:
        try:
            retval = func(*[wrap(a) for a in args], **{k: wrap(v) for k, v in fkwargs.items()})
        except Exception as exc:
            add_note = getattr(exc, "add_note", None)  # Python 3.11+
            name = getattr(func, "__name__", "the function")
            for note in (wide_frame_hint(exc, name, _params(func)), hint):
                if note is not None and add_note is not None:
                    add_note(note)
            raise
        run = {} if max_memory is None else {"max_memory": max_memory}
        if isinstance(retval, np.ndarray):
            return asarray(retval, **storage) if _stored(storage) else retval
        if not isinstance(retval, LazyArray):
            return retval
        if out is not None:
            return retval.compute(out=out, **storage, **run)
        if _stored(storage):
            return retval.compute(**storage, **run)
        return retval._getitem((), memory_bound(max_memory))

    return wrapper


def jit(
    func: Callable[..., Any] | None = None,
    *,
    out: Any = None,
    disable: bool = False,
    strict: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``func`` on the compute engine (python-blosc2's ``jit``; see the module
    docstring for the two routes). ``out``: a numpy array or NDArray to fill; ``kwargs``:
    storage arguments (an NDArray result), ``jit``/``jit_backend``/``fp_accuracy``,
    ``max_memory``, and ``shape`` for DSL kernels of scalars only.

    >>> import numpy as np
    >>> @jit(cparams={"clevel": 1})
    ... def g(a):
    ...     return a + 1
    >>> type(g(np.arange(3))).__name__
    'NDArray'
    """
    if strict not in (None, True, False):
        raise ParamTypeError(f"strict must be None, True or False, got {strict!r}")
    unknown = set(kwargs) - _STORAGE_KEYS - TUNING - {"max_memory", "shape"}
    if unknown:
        raise ParamError(f"unknown jit() arguments {sorted(unknown)}")

    def decorator(f: Callable[..., Any]) -> Any:
        if disable:
            return f
        if hasattr(f, "_blosc2_jit_wrapped"):
            return f  # decorated once already
        kernel = DSLKernel(f)
        valid = kernel.program is not None
        has_cf = _has_control_flow(kernel.dsl_source)
        if strict is True and not valid:
            raise kernel.dsl_error or DSLSyntaxError(
                f"strict=True: could not extract a DSL kernel from {f.__name__!r}"
            )
        wrapper: Any
        if strict is True or (strict is None and has_cf and valid):
            wrapper = _jit_dsl_wrapper(kernel, out, kwargs)
        else:
            hint = None
            if strict is None and has_cf:
                hint = (
                    f"Note: {f.__name__!r} contains control flow (if/for/while) but is not a "
                    f"DSL kernel, so it was traced: {kernel.dsl_error}"
                )
            wrapper = _trace_wrapper(f, out, kwargs, hint)
        wrapper = functools.wraps(f)(wrapper)
        wrapper._blosc2_jit_wrapped = f
        return wrapper

    # pandas takes any engine with __pandas_udf__ and uses the engine itself as the decorator:
    # so does a configured jit(strict=True)
    decorator.__pandas_udf__ = PandasUdfEngine  # type: ignore[attr-defined]
    return decorator if func is None else decorator(func)


jit.__pandas_udf__ = PandasUdfEngine  # type: ignore[attr-defined]
