"""What an expression is before it is computed: its tree bound to its operands, the eager
functions in it computed, and its shape and dtype.

Names are bound to the operands (or to the constants ``nan``, ``inf``, ``pi``, ``e``);
constructors and eager functions (:mod:`.registry`) are computed now and join the operands;
the shape follows numpy's broadcasting, reductions and selections; the dtype is what numpy
gives for the operands' dtypes, found by evaluating the tree on one-item stand-ins of them
(Python scalars stay Python scalars there, so they are "weak" exactly as in numpy).

>>> import numpy as np
>>> ops = {"x": np.ones((3, 4), "f4"), "y": np.ones((5, 4), "i2")}
>>> a = Analysis.of("x + max(y, axis=0) * 2", ops)
>>> a.shape, a.dtype
((3, 4), dtype('float32'))
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from .functions import CUMULATIVE, function
from .operands import as_operand, broadcast_shapes, dtype_of, is_scalar, shape_of
from .parser import CONSTANT_NAMES, parse
from .registry import CONSTRUCTORS, eager_function
from .selection import Selection
from .tree import Call, Const, Eager, Index, Name, Node, Reduce, Seq

__all__ = ["Analysis", "AxisError", "Meta", "normalize_axes", "reduced_shape"]


#: numpy's AxisError (``np.exceptions`` from numpy 1.25, the top level before)
_NP_AXIS_ERROR: type[Exception] = getattr(np, "exceptions", np).AxisError


class AxisError(ParamError, _NP_AXIS_ERROR):  # type: ignore[misc,valid-type]
    """An axis out of range: a :class:`ParamError` and numpy's ``AxisError`` (which
    python-blosc2 raises), so also an ``IndexError``.

    >>> issubclass(AxisError, ValueError | IndexError), str(AxisError("axis 3 is out of bounds"))
    (True, 'axis 3 is out of bounds')
    """


#: makes an operand of a sub-expression (a tree over operands): the lazy expression class
Subexpr = Callable[[Node, dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class Meta:
    """The shape and dtype of a node; ``weak`` holds a Python scalar's value (numpy treats
    those as weakly typed)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak: Any = None

    def dummy(self) -> Any:
        """A one-item stand-in with this dtype (the scalar itself for a weak scalar)."""
        if self.weak is not None:
            return self.weak
        return np.ones((1,) * len(self.shape), self.dtype)


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int, a sequence of ints) as sorted non-negative axes: numpy's
    ``AxisError`` for one out of range, :class:`ParamError` for a repeated one.

    >>> normalize_axes(None, 3), normalize_axes(-1, 3), normalize_axes((2, 0), 3)
    ((0, 1, 2), (2,), (0, 2))
    """
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else axis
    if not isinstance(axes, tuple | list) or not all(
        isinstance(a, int | np.integer) and not isinstance(a, bool) for a in axes
    ):
        raise ParamTypeError(f"axis must be None, an int or a tuple of ints, got {axis!r}")
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise AxisError(f"axis {int(a)} is out of bounds for an array of dimension {ndim}")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ParamError(f"axis {axis!r} repeats an axis")
    return tuple(sorted(out))


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """``shape`` reduced over ``axes``.

    >>> reduced_shape((2, 3, 4), (1,), False), reduced_shape((2, 3, 4), (1,), True)
    ((2, 4), (2, 1, 4))
    """
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _quiet(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def reduce_meta(op: str, arg: Meta, opts: dict[str, Any]) -> Meta:
    """The shape and dtype of reduction ``op`` of a node of ``arg`` with keywords ``opts``."""
    ndim = len(arg.shape)
    axis = opts.get("axis")
    keepdims = bool(opts.get("keepdims", False))
    dummy = np.ones((1,) * ndim, arg.dtype)
    if op in CUMULATIVE:
        if axis is None and ndim > 1:
            raise ParamError(f"axis must be given for {op} of an array of {ndim} dimensions")
        ax = normalize_axes(0 if axis is None else axis, max(ndim, 1))
        if len(ax) != 1:
            raise ParamError(f"{op} takes a single axis, got {axis!r}")
        grown = list(arg.shape) or [1]
        if opts.get("include_initial"):
            grown[ax[0]] += 1
        fn = np.cumsum if op in ("cumulative_sum", "cumsum") else np.cumprod
        dt = _quiet(
            fn, dummy.reshape(-1) if not ndim else dummy, axis=ax[0], dtype=opts.get("dtype")
        ).dtype
        return Meta(tuple(grown), dt)
    if op in ("argmin", "argmax"):
        if axis is not None and not isinstance(axis, int | np.integer):
            raise ParamTypeError(f"{op} takes an int axis or None, got {axis!r}")
        axes = normalize_axes(axis, ndim)
        shape = (
            reduced_shape(arg.shape, axes, keepdims)
            if axis is not None
            else ((1,) * ndim if keepdims else ())
        )
        return Meta(shape, np.dtype(np.int64))
    axes = normalize_axes(axis, ndim)
    shape = reduced_shape(arg.shape, axes, keepdims)
    if op == "count_nonzero":
        return Meta(shape, np.dtype(np.int64))
    kw: dict[str, Any] = {"axis": axes or None}
    if op in ("sum", "prod", "mean", "std", "var") and opts.get("dtype") is not None:
        kw["dtype"] = opts["dtype"]
    try:
        dt = _quiet(getattr(np, op), dummy, **kw).dtype
    except TypeError as exc:
        raise ParamTypeError(f"{op} of {arg.dtype}: {exc}") from None
    return Meta(shape, np.dtype(dt))


class Analysis:
    """An expression bound to its operands: ``tree`` (eager functions replaced by the names
    of their results), ``operands`` (the given ones and those results), ``shape``,
    ``dtype``."""

    def __init__(self, tree: Node, operands: dict[str, Any], subexpr: Subexpr | None) -> None:
        self.operands = {k: as_operand(v) for k, v in operands.items()}
        self._subexpr = subexpr
        self._memo: dict[int, Meta] = {}
        self.tree = self._bind(tree)
        meta = self.meta(self.tree)
        self.shape, self.dtype = meta.shape, meta.dtype

    @classmethod
    def of(
        cls, expression: str, operands: dict[str, Any], subexpr: Subexpr | None = None
    ) -> Analysis:
        """The analysis of an expression string over ``operands``."""
        return cls(parse(expression), operands, subexpr)

    # -- binding --------------------------------------------------------------------------
    def _bind(self, node: Any) -> Any:
        if isinstance(node, Name):
            if node.id in self.operands:
                return node
            if node.id in CONSTANT_NAMES:
                return Const(CONSTANT_NAMES[node.id])
            raise ParamError(f"the expression uses {node.id!r}, which is not one of its operands")
        if isinstance(node, Const):
            return node
        if isinstance(node, Call):
            return Call(node.func, tuple(self._bind(a) for a in node.args))
        if isinstance(node, Reduce):
            kw = tuple(
                (k, self._bind(v) if isinstance(v, Name | Call) else v) for k, v in node.kwargs
            )
            return Reduce(node.op, self._bind(node.arg), kw)
        if isinstance(node, Index):
            return Index(self._bind(node.arg), node.key)
        if isinstance(node, Seq):
            return Seq(tuple(self._bind(i) for i in node.items), node.is_list)
        if isinstance(node, Eager):
            return self._eager(node)
        raise ParamError(f"cannot bind {node!r}")

    def _eager(self, node: Eager) -> Name:
        """Compute the eager function ``node``; its result joins the operands."""
        args = [self._value(self._bind(a)) for a in node.args]
        kwargs = {k: self._value(self._bind(v)) for k, v in node.kwargs}
        if node.func in CONSTRUCTORS:
            for v in [*args, *kwargs.values()]:
                if hasattr(v, "shape") and np.ndim(v):
                    raise ParamError(f"{node.func}() takes literals and scalars, not arrays")
            args = [v[()] if hasattr(v, "shape") else v for v in args]
            value = CONSTRUCTORS[node.func](*args, **kwargs)
        else:
            value = eager_function(node.func).fn(*args, **kwargs)
        name = f"_e{len([k for k in self.operands if k.startswith('_e')])}"
        while name in self.operands:
            name += "_"
        self.operands[name] = as_operand(value)
        return Name(name)

    def _value(self, node: Any) -> Any:
        """An eager function's argument as an operand (or literal)."""
        if isinstance(node, Const):
            return node.value
        if isinstance(node, Name):
            return self.operands[node.id]
        if isinstance(node, Seq):
            items = [self._value(i) for i in node.items]
            return items if node.is_list else tuple(items)
        if self._subexpr is None:
            raise ParamError("a sub-expression cannot be an argument here")
        return self._subexpr(node, self.operands)

    # -- shape and dtype --------------------------------------------------------------------
    def meta(self, node: Any) -> Meta:
        """The shape and dtype of a bound node (memoized per node)."""
        key = id(node)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = self._meta(node)
        return got

    def _meta(self, node: Any) -> Meta:
        if isinstance(node, Name):
            v = self.operands[node.id]
            if isinstance(v, int | float | complex | bool) and not isinstance(v, np.generic):
                return Meta((), np.result_type(v), v)
            return Meta(shape_of(v), dtype_of(v), v if isinstance(v, str | bytes) else None)
        if isinstance(node, Const):
            v = node.value
            if isinstance(v, np.generic):
                return Meta((), v.dtype)
            return Meta((), dtype_of(v), v)
        if isinstance(node, Call):
            metas = [self.meta(a) for a in node.args]
            shape = broadcast_shapes(*[m.shape for m in metas])
            fn = function(node.func)
            if fn is None:
                raise ParamError(f"{node.func!r} is not an elementwise function")
            try:
                out = _quiet(fn, *[m.dummy() for m in metas])
            except TypeError as exc:
                dts = ", ".join(str(m.dtype) for m in metas)
                raise ParamTypeError(
                    f"{node.func} does not take operands of dtype {dts}: {exc}"
                ) from None
            except ValueError as exc:
                raise ParamError(f"{node.func}: {exc}") from None
            return Meta(shape, np.asarray(out).dtype)
        if isinstance(node, Reduce):
            return reduce_meta(node.op, self.meta(node.arg), node.options)
        if isinstance(node, Index):
            arg = self.meta(node.arg)
            return Meta(Selection.of(node.key, arg.shape).result_shape, arg.dtype)
        if isinstance(node, Seq):
            raise ParamError("a list or tuple is not an operand of an elementwise expression")
        raise ParamError(f"cannot analyse {node!r}")

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def scalar_operands(operands: dict[str, Any]) -> dict[str, Any]:
    """The operands that are scalars."""
    return {k: v for k, v in operands.items() if is_scalar(v)}
