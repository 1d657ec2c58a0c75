"""From an analysed expression to a :class:`~.blockwise.Source` the blockwise pass can
compute: what cannot be computed piece by piece is computed first.

* a reduction inside the expression (``a + sum(b, axis=0)``) is computed chunk by chunk
  (:mod:`.reductions`) and its (reduced, hence small) result joins the operands;
* a selection (``a[10:20]``, ``e.slice(...)``) becomes a lazy :class:`~.operands.View`:
  nothing is read until a piece needs it;
* an operand that is itself a lazy expression is inlined: its tree replaces its name (its
  operands renamed so none collide), so one pass computes both.

>>> import numpy as np
>>> from .analysis import Analysis
>>> an = Analysis.of("a - mean(a)", {"a": np.arange(4.0)})
>>> src = lower(an, bound=1 << 26)
>>> src.tree, src.leaves["_r0"]
(Call(func='subtract', args=(Name(id='a'), Name(id='_r0'))), np.float64(1.5))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamError
from .analysis import Analysis
from .blockwise import Source, to_numpy
from .functions import CUMULATIVE
from .operands import View, is_scalar
from .reductions import cumulate, reduce
from .selection import Selection
from .tree import Call, Const, Index, Name, Node, Reduce, Seq

__all__ = ["SourceArray", "lower"]


class SourceArray:
    """A :class:`Source` seen as an array (``shape``, ``dtype``, ``__getitem__`` with basic
    keys), so a selection of a sub-expression can be a lazy operand."""

    def __init__(self, src: Source, bound: int) -> None:
        self.src, self.bound = src, bound

    @property
    def shape(self) -> tuple[int, ...]:
        return self.src.shape

    @property
    def dtype(self) -> np.dtype:
        return self.src.dtype

    @property
    def ndim(self) -> int:
        return len(self.src.shape)

    def __getitem__(self, key: Any) -> np.ndarray:
        return to_numpy(self.src, Selection.of(key, self.src.shape), self.bound)


class _Lowering:
    def __init__(self, an: Analysis, bound: int) -> None:
        self.an = an
        self.bound = bound
        self.leaves: dict[str, Any] = dict(an.operands)
        self.counter = 0

    def fresh(self, stem: str) -> str:
        while True:
            name = f"_{stem}{self.counter}"
            self.counter += 1
            if name not in self.leaves:
                return name

    def source(self, node: Node) -> Source:
        tree = self.node(node)
        meta = self.an.meta(node)
        return Source(tree, self.leaves, meta.shape, meta.dtype)

    def node(self, node: Any) -> Any:
        if isinstance(node, Name):
            return self.inline(node)
        if isinstance(node, Const):
            return node
        if isinstance(node, Call):
            return Call(node.func, tuple(self.node(a) for a in node.args))
        if isinstance(node, Reduce):
            name = self.fresh("r")
            self.leaves[name] = self.reduction(node)
            return Name(name)
        if isinstance(node, Index):
            base = self.operand(node.arg)
            name = self.fresh("v")
            meta = self.an.meta(node.arg)
            self.leaves[name] = View(base, Selection.of(node.key, meta.shape))
            return Name(name)
        if isinstance(node, Seq):
            raise ParamError("a list or tuple is not an operand of an elementwise expression")
        raise ParamError(f"cannot compute {node!r}")

    def operand(self, node: Node) -> Any:
        """An array operand for ``node`` (a name's operand, else its sub-expression)."""
        if isinstance(node, Name):
            return self.an.operands[node.id]
        return SourceArray(self.source(node), self.bound)

    def inline(self, node: Name) -> Node:
        """A lazy-expression operand's tree in place of its name."""
        value = self.leaves.get(node.id)
        inline = getattr(value, "_inline", None)
        got = inline() if callable(inline) else None
        if got is None:
            return node
        sub_tree, sub_ops = got
        prefix = self.fresh(f"{node.id}_")
        sub = _Lowering(Analysis(sub_tree, sub_ops, None), self.bound)
        lowered = sub.node(sub.an.tree)
        renamed: dict[str, str] = {}
        for k, v in sub.leaves.items():
            new = f"{prefix}_{k}"
            renamed[k] = new
            self.leaves[new] = v
        return _rename(lowered, renamed)

    def reduction(self, node: Reduce) -> Any:
        opts = node.options
        src = self.source(node.arg)
        sel = Selection.everything(src.shape)
        where = opts.get("where")
        mask = self.source(where) if isinstance(where, Name | Call) else None
        if node.op in CUMULATIVE:
            res = cumulate(
                src,
                sel,
                node.op,
                opts.get("axis"),
                bool(opts.get("include_initial")),
                opts.get("dtype"),
                self.bound,
            )
        else:
            res = reduce(
                src,
                sel,
                node.op,
                axis=opts.get("axis"),
                keepdims=bool(opts.get("keepdims", False)),
                dtype=opts.get("dtype"),
                ddof=int(opts.get("ddof", 0)),
                bound=self.bound,
                where=mask,
            )
        out = opts.get("out")
        if isinstance(out, Name):
            target = self.an.operands[out.id]
            target[...] = res
        return res if is_scalar(res) or np.ndim(res) else np.asarray(res)[()]


def _rename(node: Any, names: dict[str, str]) -> Any:
    if isinstance(node, Name):
        return Name(names.get(node.id, node.id))
    if isinstance(node, Call):
        return Call(node.func, tuple(_rename(a, names) for a in node.args))
    return node


def lower(an: Analysis, bound: int, node: Node | None = None) -> Source:
    """The source computing ``node`` (the whole expression by default) of ``an``."""
    return _Lowering(an, bound).source(an.tree if node is None else node)
