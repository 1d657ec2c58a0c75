"""Running a checked kernel over one piece of an array, by the numba route or the numpy one.

The inputs are given as the kernel sees them: array inputs as their items over the piece
(broadcastable to it), widened to 64 bits of their kind (booleans stay booleans, integers
become ``int64``, floats ``float64``, complex numbers ``complex128``), scalar inputs as Python
numbers (numpy scalars by their ``item()``, booleans as ints, as python-blosc2 inlines them).
Both routes then compute the same way, item by item, and the result is cast to the output
dtype at the end (numpy's unsafe cast: truncation towards zero, wrap-around).

The route (:func:`choose`): ``jit=False`` or ``jit_backend="numpy"``, a kernel that prints,
``ME_DSL_JIT=0`` (python-blosc2's switch) or no numba: the numpy route. ``jit=True``: the
numba route. ``jit=None`` (the default): the numba route for kernels with loops over arrays
of at least :data:`NUMBA_MIN_ITEMS` items, or when numba already compiled the kernel for
such inputs, else numpy. A compilation takes seconds, and the numpy route is as fast as
numba's where every element runs the same statements (straight code and ``if``: measured
1.2 s against numba's 1.7 s on 4 M items, which numba compiled in 12 s); loops that elements
leave at different times are where numba's per-item code wins. Both fall back to numpy
when numba cannot compile the kernel for these inputs; ``jit_backend="numba"`` (or
python-blosc2's ``"tcc"``/``"cc"``) requires numba: a :class:`NotImplementedError`
without it.

>>> from .syntax import parse_program
>>> r = Runner(parse_program("def k(x, y):\\n    return where(x > y, x - y, 0) + _i0\\n"))
>>> values = {"x": np.array([1, 5, 9]), "y": 4}
>>> r.evaluate(values, np.dtype("f8"), (3,), (10,), (20,), jit=False).tolist()
[10.0, 12.0, 17.0]
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from . import interp
from .syntax import DSLRuntimeError, Program

__all__ = [
    "BACKENDS",
    "NUMBA_MIN_ITEMS",
    "Runner",
    "backend_pragma",
    "choose",
    "numba_enabled",
    "widen",
]

#: the fewest items for which ``jit=None`` compiles a kernel with numba
NUMBA_MIN_ITEMS = 1 << 20

#: jit_backend values: python-blosc2's ("tcc", "cc": its compilers; "js": WebAssembly) and ours
BACKENDS = (None, "numba", "numpy", "tcc", "cc", "js")
_WIDE: dict[str, np.dtype[Any]] = {"b": np.dtype(bool), "i": np.dtype(np.int64)}
_WIDE["u"] = np.dtype(np.int64)
_WIDE.update({"f": np.dtype(np.float64), "c": np.dtype(np.complex128)})


def numba_enabled() -> bool:
    """Whether the numba route may run: numba installed and ``ME_DSL_JIT`` not ``0``.

    >>> isinstance(numba_enabled(), bool)
    True
    """
    if os.environ.get("ME_DSL_JIT", "").strip().lower() in ("0", "false", "off", "no"):
        return False
    return importlib.util.find_spec("numba") is not None


def choose(
    program: Program, jit: bool | None, backend: str | None, items: int = NUMBA_MIN_ITEMS
) -> str:
    """The route (``"numba"`` or ``"numpy"``) for these ``jit``/``jit_backend`` settings
    over an array of ``items`` items.

    >>> from .syntax import parse_program
    >>> p = parse_program("def k(x):\\n    return x\\n")
    >>> choose(p, False, None), choose(p, None, "numpy"), choose(p, None, None, items=10)
    ('numpy', 'numpy', 'numpy')
    """
    if backend not in BACKENDS:
        raise ParamTypeError(f"jit_backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "js":
        raise NotImplementedError(
            "jit_backend='js': python-blosc2's JavaScript route (WebAssembly only); pyblosc2 "
            "runs DSL kernels with numba ('numba') or numpy ('numpy')"
        )
    if backend in ("numba", "tcc", "cc"):
        if importlib.util.find_spec("numba") is None:
            raise NotImplementedError(
                f"jit_backend={backend!r}: the DSL's compiled route needs numba "
                "(pip install 'pyblosc2[fast]')"
            )
        return "numba"
    if backend == "numpy" or jit is False or program.has_print or not numba_enabled():
        return "numpy"
    if jit:
        return "numba"
    return "numba" if program.has_loops and items >= NUMBA_MIN_ITEMS else "numpy"


def widen(value: Any) -> Any:
    """An input as the kernel sees it (see the module docstring).

    >>> widen(np.arange(2, dtype=np.int8)).dtype, widen(np.float32(1.5)), widen(True)
    (dtype('int64'), 1.5, 1)
    """
    if isinstance(value, np.ndarray) and value.ndim:
        kind = value.dtype.kind
        if kind in "US":
            raise NotImplementedError(
                "string DSL kernels (python-blosc2's miniexpr string functions) are not "
                "implemented in pyblosc2"
            )
        if kind not in _WIDE:
            raise ParamTypeError(f"a DSL kernel cannot take items of dtype {value.dtype}")
        return value.astype(_WIDE[kind], copy=False)
    if isinstance(value, np.ndarray | np.generic):
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float | complex):
        return value
    raise ParamTypeError(
        f"a DSL kernel input must be an array or a number, got {type(value).__name__}"
    )


class Runner:
    """A checked kernel and its numba compilations (one per pattern of array inputs and
    dimensions; a failed one is remembered and the numpy route used)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._compiled: dict[tuple[tuple[str, ...], int], Any] = {}
        self._failed: dict[Any, Exception] = {}  # numba's failures, per input types
        self._ran: set[Any] = set()  # the input types numba compiled and ran
        self._lock = threading.Lock()

    def compiled(self, arrays: tuple[str, ...], ndim: int) -> Any:
        """The numba kernel for these array inputs and dimensions (an exception when numba
        could not compile it)."""
        key = (arrays, ndim)
        with self._lock:
            got = self._compiled.get(key)
            if got is None:
                from .numba_route import compile_kernel

                try:
                    got = compile_kernel(self.program, arrays, ndim)
                except DSLRuntimeError:
                    raise
                except Exception as exc:  # numba's typing errors: the numpy route runs it
                    got = exc
                self._compiled[key] = got
        return got

    def evaluate(
        self,
        values: dict[str, Any],
        dtype: np.dtype,
        shape: tuple[int, ...],
        offset: tuple[int, ...],
        full: tuple[int, ...],
        jit: bool | None = None,
        backend: str | None = None,
    ) -> np.ndarray:
        """The kernel over the piece of ``shape`` at ``offset`` of an array of shape ``full``,
        as an array of ``dtype``; ``values``: input name -> items there or scalar."""
        dtype = np.dtype(dtype)
        if dtype.kind in "USO" or dtype.fields is not None:
            raise NotImplementedError(f"DSL kernels with output dtype {dtype} (strings, records)")
        vals = {n: widen(values[n]) for n in self.program.inputs}
        arrays = tuple(n for n in self.program.inputs if isinstance(vals[n], np.ndarray))
        sig = (
            arrays,
            len(full),
            np.dtype(dtype).str,
            tuple(vals[n].dtype.str if n in arrays else type(vals[n]).__name__ for n in vals),
        )
        if jit is None and sig in self._ran:
            jit = True  # compiled already: no cost left to avoid
        if choose(self.program, jit, backend, math.prod(full)) == "numba":
            kernel = self.compiled(arrays, len(full))
            failed = kernel if isinstance(kernel, Exception) else self._failed.get(sig)
            if failed is None:
                try:
                    out = kernel.run(np.empty(shape, dtype), vals, shape, offset, full)
                except DSLRuntimeError:
                    raise
                except Exception as exc:  # numba could not type it for these inputs
                    failed = self._failed[sig] = exc
                else:
                    self._ran.add(sig)
                    return out
            if backend is not None:
                raise NotImplementedError(
                    f"jit_backend={backend!r}: numba cannot compile DSL kernel "
                    f"{self.program.name!r} for these inputs: {failed}"
                )
        res = interp.run(self.program, vals, shape, offset, full)
        return res.astype(dtype, copy=False)


def backend_pragma(expression: str, inputs: dict[str, Any], backend: str | None) -> str:
    """``expression`` (a DSL source, or an expression string over ``inputs``) headed by
    python-blosc2's compiler pragma for ``backend`` (``tcc``/``cc``; pyblosc2 compiles with
    numba and keeps the pragma only as text python-blosc2 reads back).

    >>> backend_pragma("sin(a)", {"a": np.empty(1)}, "cc")
    '# me:compiler=cc\\ndef __me_auto(a):\\n    return sin(a)'
    """
    if backend is None or backend == "js":
        return expression
    if backend not in ("tcc", "cc"):
        raise ParamError("jit_backend must be one of: None, 'tcc', 'cc', 'js'")
    pragma = f"# me:compiler={backend}\n"
    if expression.lstrip().startswith("def "):
        return expression if "# me:compiler=" in expression else pragma + expression
    params = ", ".join(k for k, v in inputs.items() if hasattr(v, "dtype"))
    return f"{pragma}def __me_auto({params}):\n    return {expression}"
