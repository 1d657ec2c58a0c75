"""``LazyExpr``: an expression over operands, kept as python-blosc2 keeps it (an
``expression`` string over ``o0``, ``o1``... and the ``operands`` dict; see
:mod:`.exprtext`), computed only when sliced, converted, reduced or ``compute()``-d.

The string is the state: the tree is parsed from it (through the allow-list of
:mod:`.parser`) and analysed (:mod:`.analysis`) when first needed, again whenever the string
or the operands change. ``expr.where(x)`` (one argument) is a filter: the items of ``x``
where the expression is true (:mod:`.filters`).

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> a = asarray(np.arange(5.0)); b = asarray(np.ones(5))
>>> e = a * 2 + b
>>> e.expression, e.shape, e.dtype, e[1:3].tolist()
('((o0 * 2) + o1)', (5,), dtype('float64'), [3.0, 5.0])
>>> (a > 2).where(a)[:].tolist()
[3.0, 4.0]
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError
from ..ndarray import indexhook
from ..ndarray.constructors import asarray
from .analysis import Analysis
from .blockwise import Source, to_ndarray, to_numpy
from .exprtext import format_scalar, merge, rebase_user_expression
from .filters import select
from .lazyarray import LazyArray, _compute_kwargs, _is_basic
from .lower import SourceArray, lower
from .operands import BroadcastError, View, as_operand
from .parser import parse
from .plan import memory_bound
from .reductions import reduce
from .selection import Selection
from .tree import BINARY_OPS, Name, Node, Reduce

__all__ = ["SAVING", "TWO_ARG_FUNCS", "LazyExpr"]

#: the message of what saved lazy expressions need (another part of the engine)
SAVING = "saving lazy expressions (python-blosc2's b2o carrier and _LazyArray vlmeta forms)"
#: two-argument functions python-blosc2's LazyExpr(new_op=...) takes by name
TWO_ARG_FUNCS = frozenset(
    {
        "arctan2",
        "atan2",
        "contains",
        "pow",
        "power",
        "nextafter",
        "copysign",
        "hypot",
        "maximum",
        "minimum",
        "startswith",
        "endswith",
        "logaddexp",
    }
)


def _term(v: Any, ops: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``v`` as a term of a new expression over ``ops``: its text and the operands."""
    if isinstance(v, LazyExpr) and v._filter is None:
        return merge("", ops, v.expression, v.operands)
    if isinstance(v, LazyExpr):  # a filter is computed first, as python-blosc2 does
        v = v.compute()
    if isinstance(v, int | float | complex | bool | str | bytes) and not isinstance(v, np.generic):
        return format_scalar(v), ops
    v = as_operand(v)
    for k, have in ops.items():
        if have is v:
            return k, ops
    ops = dict(ops)
    i = len(ops)
    while f"o{i}" in ops:
        i += 1
    ops[f"o{i}"] = v
    return f"o{i}", ops


class LazyExpr(LazyArray):
    """A lazy expression (python-blosc2's ``LazyExpr``). ``new_op`` is
    ``(value1, op, value2)``: an operator symbol or a function name; ``value2`` None for a
    one-argument function; ``op`` None for the identity of ``value1``.

    >>> import numpy as np
    >>> from pyblosc2 import asarray
    >>> LazyExpr(new_op=(asarray(np.arange(3)), "+", 1))[:].tolist()
    [1, 2, 3]
    """

    def __init__(self, new_op: tuple[Any, Any, Any] | None = None) -> None:
        self._expression = ""
        self.operands: dict[str, Any] = {}
        self._filter: Any = None
        self._order: Any = None
        self._indices = False
        self._output: Any = None
        self._ne_args: Any = None
        self._cache: tuple[Any, Analysis] | None = None
        if new_op is None:
            return
        v1, op, v2 = new_op
        if op is None and v2 is None:
            text, ops = _term(v1, {})
            self._set(text, ops)
            return
        if v2 is None and op not in BINARY_OPS:
            text, ops = _term(v1, {})
            self._set(f"({op}{text})" if op == "~" else f"{op}({text})", ops)
            self._check()
            return
        left, ops = _term(v1, {})
        right, ops = _term(v2, ops)
        if op in BINARY_OPS:
            self._set(f"({left} {op} {right})", ops)
        elif isinstance(op, str) and op.isidentifier():
            self._set(f"{op}({left}, {right})", ops)
        else:
            raise ParamError(f"unknown operation {op!r}")
        self._check()

    def _check(self) -> None:
        """Refuse operands that do not combine (dtypes) now; shapes that do not broadcast are
        refused when the shape is first needed, as python-blosc2 does."""
        with contextlib.suppress(BroadcastError):
            self._analysis()

    def _set(self, text: str, ops: dict[str, Any]) -> None:
        self._expression = text
        self.operands = ops
        self._cache = None

    @classmethod
    def _of(cls, text: str, operands: dict[str, Any]) -> LazyExpr:
        new = cls()
        new._set(text, dict(operands))
        return new

    # -- the serializable form --------------------------------------------------------------
    @property
    def expression(self) -> str:
        """The expression string over the names of :attr:`operands`."""
        return self._expression

    @expression.setter
    def expression(self, text: str) -> None:
        self._expression = text
        self._cache = None

    def _analysis(self) -> Analysis:
        key = (self._expression, tuple((k, id(v)) for k, v in self.operands.items()))
        if self._cache is None or self._cache[0] != key:
            try:
                an = Analysis.of(self._expression, self.operands, _subexpr)
            except ParamError as exc:
                if self._expression in str(exc):
                    raise
                raise type(exc)(f"expression {self._expression!r}: {exc}") from None
            self._cache = (key, an)
        return self._cache[1]

    def _inline(self) -> tuple[Node, dict[str, Any]] | None:
        """The tree and operands to inline into an enclosing expression (None: compute this
        one first)."""
        if self._filter is not None or self._output is not None:
            return None
        an = self._analysis()
        return an.tree, an.operands

    # -- properties ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the result (numpy's broadcasting of the operands)."""
        return self._analysis().shape

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the result (numpy's promotion of the operands' dtypes)."""
        if self._indices:
            return np.dtype(np.int64)
        if self._filter is not None:
            return np.dtype(self._filter.dtype)
        return self._analysis().dtype

    def _source(self, bound: int) -> Source:
        return lower(self._analysis(), bound)

    def __str__(self) -> str:
        return self.expression

    def __repr__(self) -> str:
        return f"LazyExpr({self.expression!r}, shape={self.shape}, dtype={self.dtype})"

    @property
    def info_items(self) -> list[tuple[str, Any]]:
        """``(name, value)`` pairs describing the expression."""
        ops = {
            k: getattr(getattr(v, "schunk", None), "urlpath", None) or type(v).__name__
            for k, v in self.operands.items()
        }
        return [
            ("type", type(self).__name__),
            ("expression", self.expression),
            ("operands", ops),
            ("shape", self.shape),
            ("dtype", self.dtype),
        ]

    @property
    def info(self) -> str:
        """A readable summary (python-blosc2's ``info``)."""
        return "\n".join(f"{k:<11}: {v}" for k, v in self.info_items)

    # -- where and filters ----------------------------------------------------------------------
    def where(self, value1: Any = None, value2: Any = None) -> LazyExpr:
        """``value1`` where this boolean expression is true, else ``value2``; with
        ``value1`` only, the items of ``value1`` where it is true (a 1-d filter, in C
        order).

        >>> import numpy as np; from pyblosc2 import asarray
        >>> a = asarray(np.arange(4))
        >>> (a > 1).where(a, -1)[:].tolist(), (a > 1).where(a)[:].tolist()
        ([-1, -1, 2, 3], [2, 3])
        """
        if self._filter is not None:
            raise ParamError("where() of a filter (compute() it first)")
        if self.dtype != np.bool_:
            raise ParamError(f"where() needs a boolean expression, this one is {self.dtype}")
        if value1 is None:
            if value2 is not None:
                raise ParamError("where() requires value1 when using value2")
            return self
        if value2 is None:
            new = LazyExpr._of(self.expression, self.operands)
            new._filter = as_operand(value1)
            return new
        x, ops = _term(value1, self.operands)
        y, ops = _term(value2, ops)
        return LazyExpr._of(f"where({self.expression}, {x}, {y})", ops)

    def _filter_sources(self, bound: int) -> tuple[Source, Source]:
        cond = lower(self._analysis(), bound)
        x = self._filter
        xs = (
            x._source(bound)
            if isinstance(x, LazyArray)
            else Source(Name("x"), {"x": x}, tuple(x.shape), np.dtype(x.dtype))
        )
        return cond, xs

    def _filtered(self, item: Any, bound: int, use_index: bool = True) -> np.ndarray:
        """The filter's items (of ``item`` of the operands, as python-blosc2 reads it);
        a whole filter is answered through an index where one helps."""
        ix = indexhook.provider()
        if ix is not None and _trivial(item):
            got = ix.filter(self, use_index)
            if got is not None:
                return got[1] if self._indices else got[0]
        cond, xs = self._filter_sources(bound)
        sel = Selection.of(item, tuple(cond.shape))
        if self._order is not None or self._indices:
            values, positions = select(cond, xs, sel, bound, indices=True)
            if self._order is not None or values.dtype.names:
                order = np.argsort(values, order=self._order, kind="stable")
                values, positions = values[order], positions[order]  # type: ignore[index]
            return positions if self._indices else values  # type: ignore[return-value]
        values, _ = select(cond, xs, sel, bound)
        if not sel.shape and not sel.result_shape:
            return values
        return values

    def argsort(self, order: str | list[str] | None = None) -> LazyExpr:
        """The positions of a filter's items, sorted by ``order`` (fields of a structured
        array)."""
        if self.dtype.fields is None if self._filter is not None else True:
            raise NotImplementedError(
                "argsort() of a lazy expression other than a filter of a structured array"
            )
        new = copy.copy(self)
        new._indices = True
        new._order = order
        return new

    def sort(self, order: str | list[str] | None = None) -> LazyExpr:
        """A filter's items sorted by ``order`` (fields of a structured array)."""
        if self._filter is None or self.dtype.fields is None:
            raise NotImplementedError(
                "sort() of a lazy expression other than a filter of a structured array"
            )
        new = copy.copy(self)
        new._order = order
        return new

    def will_use_index(self) -> bool:
        """Whether computing this filter reads through an index of its array.

        >>> import numpy as np; from pyblosc2 import asarray
        >>> a = asarray(np.arange(4)); (a > 1).where(a).will_use_index()
        False
        """
        ix = indexhook.provider()
        return ix is not None and bool(ix.call("will_use_index", self))

    def explain(self) -> dict[str, Any]:
        """How this filter would be computed: ``will_use_index``, the index ``kind``, the
        candidate and total ``units`` (blocks), ``reason``...

        >>> import numpy as np; from pyblosc2 import asarray
        >>> a = asarray(np.arange(4)); (a > 1).where(a).explain()["will_use_index"]
        False
        """
        ix = indexhook.provider()
        if ix is None:
            return {"will_use_index": False, "reason": "no index provider"}
        return ix.call("explain", self)

    # -- computing ------------------------------------------------------------------------------
    def compute(self, item: Any = (), **kwargs: Any) -> Any:
        use_index = bool(kwargs.pop("_use_index", True))
        if self._filter is None:
            special = self._sliced_reduction(item)
            if special is not None:
                out = kwargs.pop("out", None) or self._output
                if out is not None:
                    out[...] = special
                    return out
                _, storage = _compute_kwargs(kwargs)
                return asarray(special, **storage)
            return super().compute(item, **kwargs)
        out = kwargs.pop("out", None)
        bound, storage = _compute_kwargs(kwargs)
        values = self._filtered(item, bound, use_index)
        if out is not None:
            out[...] = values
            return out
        return asarray(values, **storage)

    compute.__doc__ = LazyArray.compute.__doc__

    def __getitem__(self, item: Any) -> Any:
        bound = memory_bound()
        if self._filter is not None:
            return self._filtered(item, bound)
        special = self._sliced_reduction(item)
        if special is not None:
            return special
        return self._getitem(item, bound)

    def _sliced_reduction(self, item: Any) -> Any:
        """python-blosc2's reading of a slice of a full reduction (``mean(a + b)[:10]`` is
        ``mean((a + b)[:10])``: a 0-d result has nothing to slice, so the operands are), or
        None. An index without a slice is as invalid as numpy's on a 0-d array."""
        an = self._analysis()
        if an.shape != () or not isinstance(an.tree, Reduce) or _trivial(item):
            return None
        items = item if isinstance(item, tuple) else (item,)
        if not any(isinstance(k, slice) for k in items):
            raise BoundsError(f"index {item!r} of a 0-d expression (too many indices)")
        node = an.tree
        bound = memory_bound()
        inner = lower(an, bound, node.arg)
        opts = node.options
        if _is_basic(item):
            sel = Selection.of(item, tuple(inner.shape))
            view = View(SourceArray(inner, bound), sel)
            src = Source(Name("v"), {"v": view}, sel.result_shape, inner.dtype)
        else:  # arrays in the key: the selected items, in memory
            values = LazyExpr._of("o0", {"o0": SourceArray(inner, bound)})._getitem(item, bound)
            src = Source(Name("v"), {"v": values}, values.shape, values.dtype)
        return reduce(
            src,
            Selection.everything(src.shape),
            node.op,
            axis=opts.get("axis"),
            keepdims=bool(opts.get("keepdims", False)),
            dtype=opts.get("dtype"),
            ddof=int(opts.get("ddof", 0)),
            bound=bound,
        )

    def _reduce(self, name: str, **kwargs: Any) -> Any:
        if self._filter is None:
            return super()._reduce(name, **kwargs)
        bound = memory_bound(kwargs.get("max_memory"))
        if (
            name
            in ("sum", "prod", "min", "max", "any", "all", "mean", "var", "std", "count_nonzero")
            and kwargs.get("axis") is None
            and not kwargs.get("item")
        ):
            cond, xs = self._filter_sources(bound)
            kw = {k: kwargs[k] for k in ("dtype", "ddof") if k in kwargs}
            res = reduce(
                xs,
                Selection.everything(tuple(xs.shape)),
                name,
                None,
                bool(kwargs.get("keepdims")),
                bound=bound,
                where=cond,
                **kw,
            )
            return res
        values = self._filtered(kwargs.pop("item", ()), bound)
        return LazyExpr._of("o0", {"o0": values})._reduce(name, **kwargs)

    # -- python-blosc2's construction entry points ----------------------------------------------
    @classmethod
    def _new_expr(
        cls,
        expression: str,
        operands: dict[str, Any],
        guess: bool = False,
        out: Any = None,
        where: Any = None,
        ne_args: Any = None,
    ) -> LazyExpr:
        """A lazy expression of ``expression`` over ``operands`` (python-blosc2's
        constructor; ``guess`` rebases a user's string first)."""
        parse(expression)
        if guess:
            text, ops = rebase_user_expression(expression, operands)
        else:
            text, ops = expression, dict(operands)
        new = cls._of(text, ops)
        new._analysis()  # names, shapes and dtypes are checked now
        if guess:  # saved as the user wrote it (python-blosc2's expression_tosave)
            new.__dict__.update(expression_tosave=expression, operands_tosave=dict(operands))
        new._output = out
        new._ne_args = ne_args
        if where is not None:
            if len(where) != 2:
                raise ParamError("where must hold two values (x, y)")
            new = new.where(where[0], where[1])
            new._output = out
        return new


def _trivial(item: Any) -> bool:
    """Whether ``item`` selects everything (``()``, ``...``, ``:``) without comparing arrays."""
    return (
        item is Ellipsis
        or (isinstance(item, tuple) and (not item or all(k is Ellipsis for k in item)))
        or (isinstance(item, slice) and item == slice(None))
    )


def _subexpr(node: Node, operands: dict[str, Any]) -> Any:
    """An eager function's sub-expression argument, computed into an NDArray (a numpy value
    when 0-d)."""
    an = Analysis(node, operands, _subexpr)
    bound = memory_bound()
    src = lower(an, bound)
    if not an.shape:
        return to_numpy(src, Selection.everything(()), bound)
    return to_ndarray(src, Selection.everything(an.shape), bound, {})
