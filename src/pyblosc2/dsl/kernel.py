"""``DSLKernel`` and python-blosc2's DSL entry points: ``dsl_kernel`` (the decorator),
``validate_dsl``, ``validate_dsl_jit`` and ``kernel_from_source``.

A :class:`DSLKernel` keeps the user's function (``func``), the DSL source taken from it
(``dsl_source``: the ``def`` without decorators, ``np.sin`` written ``sin``), its inputs
(``input_names``) and, when the source is outside the DSL, the :class:`DSLSyntaxError`
(``dsl_error``). A valid kernel runs element by element (:mod:`.run`): ``lazyudf`` calls it
per piece of its result, with the piece's offset, so its index symbols and control flow mean
what they mean in python-blosc2. :func:`kernel_from_source` builds a kernel from stored
source text without executing it: its ``func`` is the numpy route over whole arrays.

>>> import numpy as np
>>> @dsl_kernel
... def relu_plus(x, y):
...     if x > 0:
...         return x + y
...     return y
>>> relu_plus.input_names, relu_plus.dsl_error is None
(['x', 'y'], True)
>>> out = np.empty(3)
>>> relu_plus((np.array([-1.0, 2.0, 3.0]), 10.0), out, (0,)); out.tolist()
[10.0, 12.0, 13.0]
>>> kernel_from_source("def twice(a):\\n    return a * 2\\n").func(np.arange(3)).tolist()
[0, 2, 4]
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from .rowidiom import rewrite_row_subscripts
from .run import Runner, numba_enabled, widen
from .syntax import (
    DSLRuntimeError,
    DSLSyntaxError,
    Program,
    extract,
    function_inputs,
    parse_program,
    parse_source,
    rewrite_numpy_calls,
    symbol_axis,
)

__all__ = ["DSLKernel", "dsl_kernel", "kernel_from_source", "validate_dsl", "validate_dsl_jit"]


class DSLKernel:
    """A function written in python-blosc2's DSL (see :mod:`.syntax`), or any function whose
    source is outside it (then ``dsl_error`` says why and it runs as plain Python).

    >>> k = DSLKernel(lambda x: x + 1)
    >>> k.dsl_error is not None, k.input_names
    (True, ['x'])
    """

    func: Callable[..., Any]

    def __init__(
        self,
        func: Callable[..., Any],
        _parts: tuple[str, tuple[str, ...], Program | DSLSyntaxError] | None = None,
    ) -> None:
        if isinstance(func, DSLKernel):
            func = func.func
        if not callable(func):
            raise ParamTypeError(f"dsl_kernel needs a function, got {type(func).__name__}")
        self.func = func
        self.__name__ = getattr(func, "__name__", type(self).__name__)
        self.__qualname__ = getattr(func, "__qualname__", self.__name__)
        self.__doc__ = getattr(func, "__doc__", None)
        try:
            self._sig: inspect.Signature | None = inspect.signature(func)
        except (TypeError, ValueError):
            self._sig = None
        params = list(self._sig.parameters.values()) if self._sig is not None else []
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._legacy_udf_signature = (
            len(positional) == 3
            and len(params) == 3
            and positional[1].name.lower() in ("output", "out")
            and positional[2].name.lower() == "offset"
        )
        #: pandas' row idiom (``row["col"]``, :mod:`.rowidiom`): the row parameter, and the
        #: kernel's parameters -> the column labels they stand for (None: not a row kernel)
        self.row_param: str | None = None
        self.row_columns: dict[str, str] | None = None
        self.dsl_source: str | None = None
        self.input_names: list[str] | None = [p.name for p in positional] if params else None
        self.dsl_error: Exception | None = None
        self._runner: Runner | None = None
        if _parts is None:
            try:
                source, inputs = extract(func)
            except (OSError, TypeError) as exc:
                self.dsl_error = DSLSyntaxError(
                    f"no source to take a DSL kernel from for {self.__name__!r}: {exc}"
                )
                return
            except DSLSyntaxError as exc:
                self.dsl_error = exc
                return
            try:
                rows = rewrite_row_subscripts(source, inputs)
            except DSLSyntaxError:
                rows = None
            if rows is not None:
                self.row_param, (source, self.row_columns) = inputs[0], rows
                inputs = tuple(self.row_columns)
            try:
                checked: Program | DSLSyntaxError = parse_program(source)
            except DSLSyntaxError as exc:
                checked = exc
            _parts = (source, inputs, checked)
        source, inputs, checked = _parts
        self.dsl_source, self.input_names = source, list(inputs)
        if isinstance(checked, DSLSyntaxError):
            self.dsl_error = checked
        else:
            self._runner = Runner(checked)

    @property
    def program(self) -> Program | None:
        """The checked kernel (None when the source is outside the DSL)."""
        return None if self._runner is None else self._runner.program

    def evaluate(
        self,
        inputs: Sequence[Any],
        dtype: Any,
        shape: tuple[int, ...],
        offset: tuple[int, ...],
        full: tuple[int, ...],
        jit: bool | None = None,
        backend: str | None = None,
    ) -> np.ndarray:
        """The kernel over the piece of ``shape`` at ``offset`` of an array of shape
        ``full``, from ``inputs`` (one per input name: items there or scalars)."""
        if self._runner is None:
            raise self.dsl_error or DSLSyntaxError(f"{self.__name__!r} is not a DSL kernel")
        names = self._runner.program.inputs
        if len(inputs) != len(names):
            raise ParamError(
                f"DSL kernel {self.__name__!r} takes {len(names)} operand(s) "
                f"({', '.join(names)}), but {len(inputs)} were passed."
            )
        values = dict(zip(names, inputs, strict=True))
        return self._runner.evaluate(values, np.dtype(dtype), shape, offset, full, jit, backend)

    def __call__(self, inputs_tuple: Sequence[Any], output: np.ndarray, offset: Any = None) -> None:
        """python-blosc2's UDF protocol: fill ``output`` from ``inputs_tuple`` (the piece at
        ``offset``; the index symbols take the array to end with the piece)."""
        if self._legacy_udf_signature:
            self.func(inputs_tuple, output, offset)
            return
        if self._runner is None:
            if self.dsl_error is not None and not isinstance(self.dsl_error, DSLSyntaxError):
                raise self.dsl_error
            output[...] = self.func(*inputs_tuple)
            return
        shape = tuple(output.shape)
        off = tuple(int(o) for o in offset) if offset is not None else (0,) * len(shape)
        full = tuple(o + s for o, s in zip(off, shape, strict=True))
        output[...] = self.evaluate(inputs_tuple, output.dtype, shape, off, full)

    def __repr__(self) -> str:
        return f"DSLKernel({self.__qualname__})"


def dsl_kernel(func: Callable[..., Any]) -> DSLKernel:
    """Mark ``func`` as a DSL kernel (python-blosc2's decorator).

    >>> @dsl_kernel
    ... def k(a, b):
    ...     return a * a + b
    >>> k.dsl_source.splitlines()[0]
    'def k(a, b):'
    """
    return DSLKernel(func)


def _whole(name: str, inputs: tuple[str, ...], checked: Program | DSLSyntaxError) -> Any:
    """The numpy route of a kernel over whole arrays (the ``func`` of a kernel built from
    source; calling it raises the kernel's error when it is outside the DSL)."""
    runner = Runner(checked) if isinstance(checked, Program) else None

    def call(*args: Any) -> Any:
        if not isinstance(checked, Program):
            raise checked
        assert runner is not None
        if len(args) != len(inputs):
            raise ParamError(f"{name}() takes {len(inputs)} arguments, got {len(args)}")
        values = [widen(np.asarray(a)) if np.ndim(a) else a for a in args]
        shapes = [np.shape(v) for v in values if isinstance(v, np.ndarray)]
        shape = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
        dtypes = [np.asarray(a).dtype for a in args if np.ndim(a)] or [np.result_type(*args)]
        values_by_name = dict(zip(inputs, values, strict=True))
        origin = (0,) * len(shape)
        res = runner.evaluate(values_by_name, np.result_type(*dtypes), shape, origin, shape, False)
        return res if shape else res[()]

    call.__name__ = call.__qualname__ = name
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in inputs]
    )
    return call


def kernel_from_source(source: str, name: str | None = None) -> DSLKernel:
    """A :class:`DSLKernel` from its stored source (python-blosc2's inverse of
    ``dsl_source``), never executed: the function ``name`` (or the only one; imports and a
    docstring may precede it and are ignored; ``np.f(...)`` is read as ``f(...)``). A source
    outside the DSL gives a kernel whose ``dsl_error`` says why (``validate_dsl`` reports
    it); one that is not a function definition is a :class:`~pyblosc2.errors.ParamError`.

    >>> k = kernel_from_source("import numpy as np\\ndef k(x):\\n    return np.sqrt(x)\\n")
    >>> k.dsl_source, k.func(np.array([4.0, 9.0])).tolist()
    ('def k(x):\\n    return sqrt(x)', [2.0, 3.0])
    """
    if not isinstance(source, str):
        raise ParamTypeError(f"kernel_from_source needs a str, got {type(source).__name__}")
    tree = parse_source(source)
    defs: list[ast.FunctionDef] = []
    aliases = {"np"}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defs.append(node)
        elif isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "numpy"}
        elif not isinstance(node, ast.ImportFrom) and not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            raise ParamError(
                "kernel_from_source needs a function definition only (after imports), found "
                f"{type(node).__name__} at line {node.lineno}"
            )
    if name is None and len(defs) != 1:
        raise ParamError(f"kernel_from_source: {len(defs)} functions and no name to pick one")
    picked = [d for d in defs if name is None or d.name == name]
    if not picked:
        raise ParamError(f"kernel_from_source: source did not define function {name!r}")
    node = picked[0]
    lines = source.splitlines()
    text = "\n".join(lines[node.lineno - 1 : node.end_lineno or len(lines)])
    inputs = function_inputs(node, source)
    text = rewrite_numpy_calls(text, parse_source(text), aliases - set(inputs))
    try:
        checked: Program | DSLSyntaxError = parse_program(text)
    except DSLSyntaxError as exc:
        checked = exc
    return DSLKernel(_whole(node.name, inputs, checked), _parts=(text, inputs, checked))


def validate_dsl(func: Any) -> dict[str, Any]:
    """Check ``func`` (a function or a :class:`DSLKernel`) against the DSL without running
    it: ``valid``, ``dsl_source``, ``input_names``, ``error`` (python-blosc2's report).

    >>> def bad(a):
    ...     return 1 if a > 0 else 0
    >>> r = validate_dsl(bad)
    >>> r["valid"], r["error"].splitlines()[0].split(";")[0]
    (False, 'Ternary expressions are not supported in DSL')
    """
    kernel = func if isinstance(func, DSLKernel) else DSLKernel(func)
    err = kernel.dsl_error
    return {
        "valid": err is None,
        "dsl_source": kernel.dsl_source,
        "input_names": kernel.input_names,
        "error": None if err is None else str(err),
    }


def validate_dsl_jit(
    func: Any,
    operands: Any,
    out_dtype: Any,
    *,
    shape: tuple[int, ...] = (64,),
    chunks: Any = None,
    blocks: Any = None,
) -> dict[str, Any]:
    """Whether ``func`` compiles by the numba route for these inputs (``operands``: a dtype
    per array input, a number per scalar one; a dict by name or a sequence) and
    ``out_dtype`` over arrays of ``len(shape)`` dimensions, without running it. The report
    is python-blosc2's: ``valid``, ``compiled`` (the kernel can run: the numpy route runs
    any valid one), ``jit`` (numba compiled it), ``status`` (python-blosc2's
    ``ME_COMPILE_SUCCESS``/``ME_COMPILE_ERROR``), ``error``; and ``route``.

    >>> def k(a, n):
    ...     return a * float(n)
    >>> r = validate_dsl_jit(k, {"a": "f8", "n": 3}, "f8")
    >>> r["valid"], r["compiled"], r["status"]
    (True, True, 'ME_COMPILE_SUCCESS')
    """
    kernel = func if isinstance(func, DSLKernel) else DSLKernel(func)
    report: dict[str, Any] = {"valid": False, "jit": False, "compiled": False, "status": None}
    report.update(error=None, route=None)
    if kernel.program is None or kernel._runner is None:
        report["error"] = str(kernel.dsl_error)
        return report
    names = list(kernel.program.inputs)
    if isinstance(operands, dict):
        specs = dict(operands)
    else:
        operands = list(operands)
        if len(operands) != len(names):
            raise ParamError(
                f"expected {len(names)} operand specs for inputs {names}, got {len(operands)}"
            )
        specs = dict(zip(names, operands, strict=True))
    missing = [n for n in names if n not in specs]
    if missing:
        raise ParamError(f"missing operand spec for input {missing[0]!r}")
    arrays = tuple(n for n in names if not isinstance(specs[n], bool | int | float | complex))
    if not arrays:
        raise ParamError("validate_dsl_jit needs at least one array operand (pass a dtype spec)")
    types = {n: widen(np.zeros(1, specs[n])).dtype if n in arrays else specs[n] for n in names}
    report.update(valid=True, compiled=True, status="ME_COMPILE_SUCCESS", route="numpy")
    for s in kernel.program.symbols:
        if s not in ("_ndim", "_flat_idx") and symbol_axis(s) >= len(shape):
            msg = f"the kernel reads {s}, the probe has {len(shape)} dimensions"
            report.update(compiled=False, status="ME_COMPILE_ERROR", error=msg, route=None)
            return report
    if not numba_enabled() or kernel.program.has_print:
        return report
    try:
        compiled = kernel._runner.compiled(arrays, len(shape))
        if isinstance(compiled, Exception):
            raise compiled
        compiled.compile_for(types, np.dtype(out_dtype))
    except DSLRuntimeError as exc:
        report.update(compiled=False, status="ME_COMPILE_ERROR", error=str(exc), route=None)
    except Exception as exc:  # numba could not type it: the numpy route runs it
        report["error"] = f"numba: {exc}"
    else:
        report.update(jit=True, route="numba")
    return report
