"""The numpy route of a DSL kernel: every element runs the kernel on its own items, computed
for all elements of a piece at once, with masks for the elements each statement applies to.

Values are *uniform* (a Python or numpy scalar: the scalar inputs, constants, loop counters
over scalar ranges, and anything computed from those only) or *varying* (a numpy array: the
array inputs, the index symbols and what depends on them). A condition that is uniform
steers the interpreter as Python would; a varying one splits the elements: the ``if`` body
runs for the elements where it holds and the ``else`` body for the others, an assignment
keeps the old value of the elements outside its mask (``np.where``), ``break``,
``continue`` and ``return`` retire elements until the loop, the iteration or the kernel
ends, and loops run while any element is still in them. Expressions are evaluated for the
whole piece (numpy's errors and warnings are silenced: the values of retired elements are
discarded).

Arithmetic follows numpy on the inputs as the runner gives them (:mod:`.run`: 64-bit items),
so the numba route (:mod:`.numba_route`), which does the same per item, gives the same
bytes for arithmetic, comparisons, ``where``, the casts and the exact functions.

>>> from .syntax import parse_program
>>> p = parse_program('''
... def halvings(x, lo):
...     if x < lo:
...         return -1
...     y = x
...     n = 0
...     while y > 1.0:
...         y = y / 2.0
...         n += 1
...         if n >= 5:
...             break
...     return n
... ''')
>>> run(p, {"x": np.array([0.5, 3.0, 9.0, 100.0]), "lo": 1.0}, (4,), (0,), (4,)).tolist()
[-1, 2, 4, 5]
"""

from __future__ import annotations

import ast
import operator
import os
import warnings
from typing import Any

import numpy as np

from .functions import CONSTANTS, FUNCTIONS
from .syntax import DSLRuntimeError, Program, call_name, is_symbol, symbol_axis, target_name

__all__ = ["loop_cap", "run"]

#: the most iterations one loop runs for an element (``ME_DSL_WHILE_MAX_ITERS``)
DEFAULT_LOOP_CAP = 1 << 20

_BIN = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.remainder,
    ast.Pow: np.power,
    ast.BitAnd: np.bitwise_and,
    ast.BitOr: np.bitwise_or,
    ast.BitXor: np.bitwise_xor,
    ast.LShift: np.left_shift,
    ast.RShift: np.right_shift,
}
_CMP = {
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
}

Mask = Any  # True, False or a boolean array of the piece's shape


def loop_cap() -> int:
    """The iteration cap of one loop (``ME_DSL_WHILE_MAX_ITERS``, python-blosc2's variable,
    else :data:`DEFAULT_LOOP_CAP`).

    >>> loop_cap() > 0
    True
    """
    env = os.environ.get("ME_DSL_WHILE_MAX_ITERS", "")
    try:
        return max(1, int(env)) if env else DEFAULT_LOOP_CAP
    except ValueError:
        return DEFAULT_LOOP_CAP


def _varying(v: Any) -> bool:
    return isinstance(v, np.ndarray) and v.ndim > 0


def _scalar(v: Any) -> Any:
    return v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v


def _any(m: Mask) -> bool:
    return bool(m) if not isinstance(m, np.ndarray) else bool(m.any())


def _all(m: Mask) -> bool:
    return bool(m) if not isinstance(m, np.ndarray) else bool(m.all())


def _and(a: Mask, b: Mask) -> Mask:
    if a is True:
        return b
    if b is True:
        return a
    if a is False or b is False:
        return False
    return a & b


def _or(a: Mask, b: Mask) -> Mask:
    if a is False:
        return b
    if b is False:
        return a
    if a is True or b is True:
        return True
    return a | b


def _andnot(a: Mask, b: Mask) -> Mask:
    if b is False:
        return a
    if b is True or a is False:
        return False
    return ~b if a is True else a & ~b


def _truth(v: Any) -> Mask:
    """A condition as a mask (``True``/``False`` when uniform)."""
    if _varying(v):
        return v if v.dtype == np.bool_ else v != 0
    return bool(v)


def _index(v: Any, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise DSLRuntimeError(f"range() takes integers, got {what} {v!r}") from None


class _Run:
    """One evaluation of a kernel over one piece."""

    def __init__(
        self,
        program: Program,
        values: dict[str, Any],
        shape: tuple[int, ...],
        offset: tuple[int, ...],
        full: tuple[int, ...],
    ) -> None:
        self.p = program
        self.vars: dict[str, Any] = dict(values)
        self.shape, self.offset, self.full = shape, offset, full
        self.cap = loop_cap()
        self.ret: Mask = False
        self.brk: Mask = False
        self.cont: Mask = False
        self.result: Any = None

    # -- names -------------------------------------------------------------------------------
    def symbol(self, name: str) -> Any:
        nd = len(self.full)
        if name == "_ndim":
            return nd
        if name == "_flat_idx":
            flat: Any = 0
            for d in range(nd):
                flat = flat * self.full[d] + self.symbol(f"_i{d}")
            return np.broadcast_to(np.asarray(flat, np.int64), self.shape)
        axis = symbol_axis(name)
        if axis >= nd:
            raise DSLRuntimeError(f"the kernel reads {name}, the array has {nd} dimensions")
        if name.startswith("_n"):
            return self.full[axis]
        lead = [1] * nd
        lead[axis] = self.shape[axis]
        start = self.offset[axis]
        return np.arange(start, start + self.shape[axis], dtype=np.int64).reshape(lead)

    def load(self, name: str) -> Any:
        if name in self.vars:
            return self.vars[name]
        if is_symbol(name):
            value = self.vars[name] = self.symbol(name)
            return value
        if name in CONSTANTS and name not in self.p.locals:
            return CONSTANTS[name]
        raise DSLRuntimeError(f"the kernel reads {name!r} before it is assigned")

    def store(self, name: str, value: Any, m: Mask) -> None:
        old = self.vars.get(name)
        if m is True or old is None:
            self.vars[name] = value
        else:
            self.vars[name] = np.where(m, value, old)

    # -- statements ----------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], mask: Mask) -> None:
        for stmt in body:
            m = _andnot(mask, _or(self.ret, _or(self.brk, self.cont)))
            if not _any(m):
                return
            self.stmt(stmt, m)

    def stmt(self, node: ast.stmt, m: Mask) -> None:
        if isinstance(node, ast.Assign):
            self.store(target_name(node.targets[0]), self.ev(node.value), m)
        elif isinstance(node, ast.AugAssign):
            name = target_name(node.target)
            value = _scalar(_BIN[type(node.op)](self.load(name), self.ev(node.value)))
            self.store(name, value, m)
        elif isinstance(node, ast.Return):
            value = self.ev(node.value)  # type: ignore[arg-type]
            if self.result is None or m is True:
                self.result = value
            else:
                self.result = np.where(m, value, self.result)
            self.ret = _or(self.ret, m)
        elif isinstance(node, ast.If):
            c = _truth(self.ev(node.test))
            if not isinstance(c, np.ndarray):
                self.block(node.body if c else node.orelse, m)
                return
            yes, no = _and(m, c), _andnot(m, c)
            if _any(yes):
                self.block(node.body, yes)
            if node.orelse and _any(no):
                self.block(node.orelse, no)
        elif isinstance(node, ast.For):
            self.for_loop(node, m)
        elif isinstance(node, ast.While):
            self.loop(node.body, m, lambda: self.ev(node.test), None)
        elif isinstance(node, ast.Break):
            self.brk = _or(self.brk, m)
        elif isinstance(node, ast.Continue):
            self.cont = _or(self.cont, m)
        elif isinstance(node, ast.Expr):
            v = node.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "print":
                self.print_call(v)

    def for_loop(self, node: ast.For, m: Mask) -> None:
        args = [self.ev(a) for a in node.iter.args]  # type: ignore[attr-defined]
        start, stop, step = (
            (0, args[0], 1)
            if len(args) == 1
            else (args[0], args[1], args[2] if len(args) == 3 else 1)
        )
        name = target_name(node.target)
        if not any(_varying(v) for v in (start, stop, step)):
            start, stop, step = (
                _index(v, w) for v, w in ((start, "start"), (stop, "stop"), (step, "step"))
            )
        if np.any(np.asarray(step) == 0):
            raise DSLRuntimeError("range() step must not be zero")
        counter = {"i": start}

        def cond() -> Any:
            i = counter["i"]
            return (
                np.where(np.asarray(step) > 0, i < stop, i > stop)
                if _varying(i) or _varying(step) or _varying(stop)
                else (i < stop if step > 0 else i > stop)
            )

        def advance(live: Mask) -> None:
            self.store(name, counter["i"], live)
            counter["i"] = _scalar(np.add(counter["i"], step))

        self.loop(node.body, m, cond, advance)

    def loop(self, body: list[ast.stmt], m: Mask, cond: Any, advance: Any) -> None:
        """Run ``body`` while ``cond()`` holds for an element still in the loop (``advance``:
        a for loop's step, taken before each pass)."""
        saved = self.brk, self.cont
        self.brk = False
        passes = 0
        try:
            while True:
                live = _andnot(m, _or(self.ret, self.brk))
                c = _truth(cond())
                if isinstance(c, np.ndarray):
                    self.brk = _or(self.brk, _andnot(live, c))
                    live = _and(live, c)
                elif not c:
                    break
                if not _any(live):
                    break
                passes += 1
                if passes > self.cap:
                    raise DSLRuntimeError(
                        f"a loop ran past {self.cap} iterations (ME_DSL_WHILE_MAX_ITERS)"
                    )
                self.cont = False
                if advance is not None:
                    advance(live)
                self.block(body, live)
        finally:
            self.brk, self.cont = saved

    def print_call(self, node: ast.Call) -> None:
        values = [
            a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else self.ev(a)
            for a in node.args
        ]
        if any(_varying(v) for v in values):
            raise DSLRuntimeError("print() of a value that varies from element to element")
        if isinstance(values[0], str) and "{}" in values[0]:
            print(values[0].format(*values[1:]))
        else:
            print(*values)

    # -- expressions -----------------------------------------------------------------------------
    def ev(self, node: ast.AST) -> Any:
        """The value of a checked expression (recursion bounded by the checker's depth)."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.load(node.id)
        if isinstance(node, ast.BinOp):
            return _scalar(_BIN[type(node.op)](self.ev(node.left), self.ev(node.right)))
        if isinstance(node, ast.Compare):
            cmp = _CMP[type(node.ops[0])]
            return _scalar(cmp(self.ev(node.left), self.ev(node.comparators[0])))
        if isinstance(node, ast.UnaryOp):
            v = self.ev(node.operand)
            if isinstance(node.op, ast.Not):
                return _scalar(np.logical_not(v))
            return _scalar(np.negative(v)) if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BoolOp):
            logical: Any = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = self.ev(node.values[0])
            for v in node.values[1:]:
                out = _scalar(logical(out, self.ev(v)))
            return _scalar(np.asarray(out, dtype=bool)) if not _varying(out) else out
        if isinstance(node, ast.Call):
            return self.call(node)
        raise DSLRuntimeError(f"cannot evaluate {type(node).__name__}")  # checked away

    def call(self, node: ast.Call) -> Any:
        name = call_name(node)
        args = [self.ev(a) for a in node.args]
        if name in ("int", "float", "bool"):
            (v,) = args
            if _varying(v):
                dt = {"int": np.int64, "float": np.float64, "bool": np.bool_}[name]
                return v.astype(dt)
            return {"int": int, "float": float, "bool": bool}[name](v)
        return _scalar(FUNCTIONS[name].fn(*args))


def run(
    program: Program,
    values: dict[str, Any],
    shape: tuple[int, ...],
    offset: tuple[int, ...],
    full: tuple[int, ...],
) -> np.ndarray:
    """The kernel's result over a piece of ``shape`` at ``offset`` of an array of shape
    ``full``: ``values`` maps each input to its items there (broadcastable to ``shape``) or
    its scalar; a :class:`DSLRuntimeError` when it fails."""
    r = _Run(program, values, shape, offset, full)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r.block(program.tree.body, True)
        except (TypeError, ValueError, OverflowError, ZeroDivisionError) as exc:
            if isinstance(exc, DSLRuntimeError):
                raise
            raise DSLRuntimeError(f"DSL kernel {program.name!r} failed: {exc}") from exc
    if not _all(r.ret):
        raise DSLRuntimeError(
            f"DSL kernel {program.name!r}: an element reached the end without a return"
        )
    return np.broadcast_to(np.asarray(r.result), shape)
