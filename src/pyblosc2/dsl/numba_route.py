"""The numba route of a DSL kernel (``pyblosc2[fast]``): the kernel compiled by numba as a
function of one element's items, and a loop over the elements of a piece.

The checked kernel (:mod:`.syntax`) is written out again as Python source for numba: its
names prefixed (``v_x``; functions ``f_sin``, constants ``c_pi``, index symbols ``s__i0``),
``and``/``or`` as booleans, ``x op= y`` spelt out, a counter on every loop that stops the
element past the iteration cap, a check of ``range()``'s step, and a final ``return`` that
flags an element which reached the end without one. Errors are flagged in a one-item status
array (the loop stops at the first) and raised as :class:`~.syntax.DSLRuntimeError` here.
Only that generated text is compiled, in a namespace holding the DSL's functions and
nothing else (no builtins but ``range``, ``int``, ``float`` and ``bool``): the kernel's own
source never runs. numba's Python subset only (no C, no intrinsics).

Compilations are cached on disk by numba (``cache=True``): the generated text is also written
to a file named by its hash under the cache directory (:func:`cache_dir`:
``PYBLOSC2_DSL_CACHE``, else ``$XDG_CACHE_HOME/pyblosc2/dsl`` or ``~/.cache/pyblosc2/dsl``,
created private to the user; ``PYBLOSC2_DSL_CACHE=0`` turns it off), which numba needs to
place and stamp its cache entries. The file is never imported or executed: the text compiled
is the one generated in memory, and a file whose content is not that text is rewritten. A
kernel a process already compiled is then loaded by the next process instead of compiled
again (seconds saved per kernel and pattern of inputs).

numba is imported by this module alone, when the route is first used.

>>> from .syntax import parse_program
>>> src = "def k(x, n):\\n    acc = 0.0\\n    for i in range(n):\\n        acc += x * i\\n"
>>> src += "    return acc\\n"
>>> p = parse_program(src)
>>> c = compile_kernel(p, ("x",), 1)
>>> out = np.empty(3)
>>> c.run(out, {"x": np.array([1.0, 2.0, 3.0]), "n": 3}, (3,), (0,), (3,)).tolist()
[3.0, 6.0, 9.0]
"""

from __future__ import annotations

import ast
import hashlib
import math
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numba
import numpy as np

from .functions import CONSTANTS, FUNCTIONS
from .interp import loop_cap
from .syntax import DSLRuntimeError, Program, call_name, is_symbol, symbol_axis, target_name

__all__ = ["CACHE_ENV", "CompiledKernel", "cache_dir", "compile_kernel"]

#: the environment variable naming the cache directory (``0``/``off``: no cache)
CACHE_ENV = "PYBLOSC2_DSL_CACHE"

_OPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_CMPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_STATUS = {
    1: "a loop ran past the iteration cap (ME_DSL_WHILE_MAX_ITERS)",
    2: "an element reached the end without a return",
    3: "range() step must not be zero",
}
_JIT: dict[str, Any] = {"nogil": True, "error_model": "numpy", "cache": False}


class _Writer:
    """The kernel as numba source, statement by statement."""

    def __init__(self, program: Program, cap: int) -> None:
        self.p = program
        self.cap = cap
        self.lines: list[str] = []
        self.counter = 0

    def name(self, n: str) -> str:
        if is_symbol(n):
            return f"s_{n}"
        if n in self.p.inputs or n in self.p.locals:
            return f"v_{n}"
        return f"c_{n}"  # a constant (the checker allows nothing else)

    def emit(self, text: str, indent: int) -> None:
        self.lines.append("    " * indent + text)

    def fresh(self) -> int:
        self.counter += 1
        return self.counter

    def block(self, body: list[ast.stmt], indent: int) -> None:
        for stmt in body:
            self.stmt(stmt, indent)

    def stop(self, code: int, indent: int) -> None:
        self.emit(f"st[0] = {code}", indent)
        self.emit("return 0", indent)

    def stmt(self, node: ast.stmt, ind: int) -> None:
        if isinstance(node, ast.Assign):
            self.emit(f"{self.name(target_name(node.targets[0]))} = {self.ex(node.value)}", ind)
        elif isinstance(node, ast.AugAssign):
            t = self.name(target_name(node.target))
            self.emit(f"{t} = ({t} {_OPS[type(node.op)]} {self.ex(node.value)})", ind)
        elif isinstance(node, ast.Return):
            self.emit(f"return {self.ex(node.value)}", ind)  # type: ignore[arg-type]
        elif isinstance(node, ast.If):
            self.emit(f"if {self.ex(node.test)}:", ind)
            self.block(node.body, ind + 1)
            if node.orelse:
                self.emit("else:", ind)
                self.block(node.orelse, ind + 1)
        elif isinstance(node, ast.For):
            self.for_loop(node, ind)
        elif isinstance(node, ast.While):
            k = self.fresh()
            self.emit(f"n_{k} = 0", ind)
            self.emit(f"while {self.ex(node.test)}:", ind)
            self.count(k, ind + 1)
            self.block(node.body, ind + 1)
        elif isinstance(node, ast.Break):
            self.emit("break", ind)
        elif isinstance(node, ast.Continue):
            self.emit("continue", ind)
        else:  # a bare expression: no effect (print goes to the numpy route)
            self.emit("pass", ind)

    def count(self, k: int, ind: int) -> None:
        self.emit(f"n_{k} += 1", ind)
        self.emit(f"if n_{k} > {self.cap}:", ind)
        self.stop(1, ind + 1)

    def for_loop(self, node: ast.For, ind: int) -> None:
        k = self.fresh()
        # ``| 0``: an int stays itself, anything else fails numba's typing (as range() fails
        # on a non-integer in Python and in the numpy route) and the numpy route reports it
        args = [f"({self.ex(a)} | 0)" for a in node.iter.args]  # type: ignore[attr-defined]
        if len(args) == 3:
            self.emit(f"r_{k} = {args[2]}", ind)
            self.emit(f"if r_{k} == 0:", ind)
            self.stop(3, ind + 1)
            args[2] = f"r_{k}"
        self.emit(f"n_{k} = 0", ind)
        var = self.name(target_name(node.target))
        self.emit(f"for {var} in range({', '.join(args)}):", ind)
        self.count(k, ind + 1)
        self.block(node.body, ind + 1)

    def ex(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, float) and not math.isfinite(v):
                return "c_nan" if math.isnan(v) else ("c_inf" if v > 0 else "(-c_inf)")
            if isinstance(v, complex):
                return f"complex({float(v.real)!r}, {float(v.imag)!r})"
            return repr(v)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.BinOp):
            return f"({self.ex(node.left)} {_OPS[type(node.op)]} {self.ex(node.right)})"
        if isinstance(node, ast.Compare):
            op = _CMPS[type(node.ops[0])]
            return f"({self.ex(node.left)} {op} {self.ex(node.comparators[0])})"
        if isinstance(node, ast.UnaryOp):
            op = {ast.Not: "not ", ast.USub: "-", ast.UAdd: "+"}[type(node.op)]
            return f"({op}{self.ex(node.operand)})"
        if isinstance(node, ast.BoolOp):
            word = " and " if isinstance(node.op, ast.And) else " or "
            return "(" + word.join(f"bool({self.ex(v)})" for v in node.values) + ")"
        if isinstance(node, ast.Call):
            name = call_name(node)
            args = ", ".join(self.ex(a) for a in node.args)
            return f"{name}({args})" if name in ("int", "float", "bool") else f"f_{name}({args})"
        raise DSLRuntimeError(f"cannot compile {type(node).__name__}")  # checked away


def _kernel_source(p: Program, symbols: tuple[str, ...], cap: int) -> str:
    w = _Writer(p, cap)
    params = ["st", *(w.name(n) for n in p.inputs), *(f"s_{s}" for s in symbols)]
    w.emit(f"def kernel({', '.join(params)}):", 0)
    w.block(p.tree.body, 1)
    w.stop(2, 1)
    return "\n".join(w.lines) + "\n"


def _driver_source(p: Program, arrays: tuple[str, ...], symbols: tuple[str, ...], ndim: int) -> str:
    """The loop over a piece's elements (flattened, C order) keeping the index of each."""
    ins = [f"a_{n}" if n in arrays else f"p_{n}" for n in p.inputs]
    dims = [f"sh{d}" for d in range(ndim)] + [f"of{d}" for d in range(ndim)]
    dims += [f"fu{d}" for d in range(ndim)]
    lines = [f"def drive(st, out, {', '.join([*ins, *dims])}):"]
    track = any(s.startswith("_i") or s == "_flat_idx" for s in symbols)
    if track:
        lines += [f"    i{d} = 0" for d in range(ndim)]
    lines.append("    for f in range(out.shape[0]):")
    args = [f"a_{n}[f]" if n in arrays else f"p_{n}" for n in p.inputs]
    for s in symbols:
        if s == "_ndim":
            args.append(str(ndim))
        elif s == "_flat_idx":
            flat = "0"
            for d in range(ndim):
                flat = f"({flat} * fu{d} + of{d} + i{d})"
            args.append(flat)
        elif s.startswith("_n"):
            args.append(f"fu{symbol_axis(s)}")
        else:
            args.append(f"(of{symbol_axis(s)} + i{symbol_axis(s)})")
    lines.append(f"        r = kernel(st, {', '.join(args)})")
    lines.append("        if st[0] != 0:")
    lines.append("            return")
    lines.append("        out[f] = r")
    if track and ndim:
        d = ndim - 1
        lines.append(f"        i{d} += 1")
        for d in range(ndim - 1, 0, -1):
            lines.append("    " * (ndim - d + 1) + f"if i{d} == sh{d}:")
            lines.append("    " * (ndim - d + 2) + f"i{d} = 0")
            lines.append("    " * (ndim - d + 2) + f"i{d - 1} += 1")
    return "\n".join(lines) + "\n"


_HELPERS: dict[str, Any] = {}


def _namespace() -> dict[str, Any]:
    """The globals of the generated code: the DSL's functions (numba-compiled once), its
    constants, four builtins."""
    if not _HELPERS:
        for name, f in FUNCTIONS.items():
            fn = f.numba_fn or f.fn
            _HELPERS[f"f_{name}"] = fn if isinstance(fn, np.ufunc) else numba.njit(**_JIT)(fn)
        for name, v in CONSTANTS.items():
            _HELPERS[f"c_{name}"] = v
    return {
        "__builtins__": {"range": range, "int": int, "float": float, "bool": bool},
        **_HELPERS,
    }


def cache_dir() -> Path | None:
    """Where compiled kernels are cached (see the module docstring), created private to the
    user; None when caching is off or the directory cannot be made.

    >>> d = cache_dir(); d is None or d.is_dir()
    True
    """
    env = os.environ.get(CACHE_ENV, "").strip()
    if env.lower() in ("0", "off", "no", "false"):
        return None
    if env:
        path = Path(env)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = Path(base) / "pyblosc2" / "dsl"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


def _source_file(source: str) -> str | None:
    """The cache file holding ``source`` (written when missing or different), or None."""
    where = cache_dir()
    if where is None:
        return None
    digest = hashlib.sha256(f"{numba.__version__}\n{source}".encode()).hexdigest()[:32]
    path = where / f"dsl_{digest}.py"
    try:
        if not path.exists() or path.read_text() != source:
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(source)
            os.replace(tmp, path)
    except OSError:
        return None
    return str(path)


def _compile(source: str, ns: dict[str, Any]) -> tuple[Any, Any]:
    """The kernel and the driver of ``source`` (the generated text), numba-compiled lazily
    (on first call), cached on disk when a cache directory is available.

    The functions live in a module of their own, registered in ``sys.modules`` under a name
    made of the text's hash before anything runs: numba's cache finds a function's globals
    by importing its module's name, which then resolves to this module (the file is never
    imported)."""
    filename = _source_file(source)
    name = "pyblosc2_dsl_" + hashlib.sha256(source.encode()).hexdigest()[:32]
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        module.__dict__.update(ns)
        code = compile(source, filename or f"<{name}>", "exec")
        exec(code, module.__dict__)  # the generated text: names, operators, DSL functions
        jit = {**_JIT, "cache": filename is not None}
        module.__dict__["kernel"] = numba.njit(**jit)(module.__dict__["kernel"])
        module.__dict__["drive"] = numba.njit(**jit)(module.__dict__["drive"])
        sys.modules[name] = module
    return module.__dict__["kernel"], module.__dict__["drive"]


class CompiledKernel:
    """A kernel compiled for one pattern of array inputs (``arrays``) and ``ndim``."""

    def __init__(self, program: Program, arrays: tuple[str, ...], ndim: int) -> None:
        for s in program.symbols:
            if s not in ("_ndim", "_flat_idx") and symbol_axis(s) >= ndim:
                raise DSLRuntimeError(f"the kernel reads {s}, the array has {ndim} dimensions")
        self.program = program
        self.arrays = arrays
        self.ndim = ndim
        self.symbols = tuple(sorted(program.symbols))
        self.kernel_source = _kernel_source(program, self.symbols, loop_cap())
        self.driver_source = _driver_source(program, arrays, self.symbols, ndim)
        source = f"{self.kernel_source}\n\n{self.driver_source}"
        self.kernel, self.driver = _compile(source, _namespace())

    def _args(
        self,
        values: dict[str, Any],
        shape: tuple[int, ...],
        offset: tuple[int, ...],
        full: tuple[int, ...],
    ) -> Iterator[Any]:
        n = math.prod(shape)
        for name in self.program.inputs:
            v = values[name]
            if name in self.arrays:
                yield np.ascontiguousarray(np.broadcast_to(v, shape)).reshape(n)
            else:
                yield v
        yield from shape
        yield from offset
        yield from full

    def run(
        self,
        out: np.ndarray,
        values: dict[str, Any],
        shape: tuple[int, ...],
        offset: tuple[int, ...],
        full: tuple[int, ...],
    ) -> np.ndarray:
        """Fill ``out`` (a contiguous array of ``shape``) with the kernel's result."""
        st = np.zeros(1, np.int64)
        flat = out.reshape(-1)
        self.driver(st, flat, *self._args(values, shape, offset, full))
        if st[0]:
            raise DSLRuntimeError(f"DSL kernel {self.program.name!r}: {_STATUS[int(st[0])]}")
        return out

    def compile_for(self, dtypes: dict[str, Any], out_dtype: Any) -> None:
        """Compile for these input types (a dtype per array input, a scalar per scalar input)
        and ``out_dtype`` without running the kernel (``validate_dsl_jit``)."""
        probe = {
            n: np.zeros(1, dtypes[n]) if n in self.arrays else dtypes[n]
            for n in self.program.inputs
        }
        args = [np.zeros(1, np.int64), np.zeros(1, out_dtype)]
        args += list(self._args(probe, (1,) * self.ndim, (0,) * self.ndim, (1,) * self.ndim))
        self.driver.compile(tuple(numba.typeof(a) for a in args))


def compile_kernel(program: Program, arrays: tuple[str, ...], ndim: int) -> CompiledKernel:
    """``program`` compiled by numba for array inputs ``arrays`` (the other inputs scalars)
    over arrays of ``ndim`` dimensions; numba's errors propagate (the caller falls back)."""
    return CompiledKernel(program, arrays, ndim)
