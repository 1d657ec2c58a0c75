"""The expression tree: immutable nodes an expression string parses into (:mod:`.parser`)
and the engine evaluates.

* :class:`Name` — an operand, by its name in the expression's ``operands``;
* :class:`Const` — a scalar written in the expression (Python's are "weak" in numpy's
  promotion: ``int8 + 1`` stays ``int8``; typed numpy scalars are not);
* :class:`Call` — an elementwise function (:mod:`.functions`), operators included under their
  array-API names (``a + b`` is ``Call("add", ...)``);
* :class:`Reduce` — a reduction (``sum``, ``argmax``, ``cumulative_sum``...) with its
  keywords;
* :class:`Index` — a basic selection of a sub-expression (``a[2:5]``, ``a.slice(...)``);
* :class:`Eager` — a function computed whole before the elementwise pass: constructors
  (``arange``...), ``reshape``, ``concat``, ``stack``... and the functions other packages
  register (:mod:`.registry`);
* :class:`Seq` — a list or tuple argument holding sub-expressions (``stack([a, b])``).

Nodes are frozen dataclasses: sub-trees are shared freely between expressions.

>>> Call("add", (Name("o0"), Const(1)))
Call(func='add', args=(Name(id='o0'), Const(value=1)))
>>> sorted(names_in(Call("add", (Name("o0"), Reduce("sum", Name("o1"), ())))))
['o0', 'o1']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union

__all__ = [
    "BINARY_OPS",
    "UNARY_OPS",
    "Call",
    "Const",
    "Eager",
    "Index",
    "Name",
    "Node",
    "Reduce",
    "Seq",
    "names_in",
    "walk",
]


@dataclass(frozen=True, slots=True)
class Name:
    id: str


@dataclass(frozen=True, slots=True)
class Const:
    value: Any


@dataclass(frozen=True, slots=True)
class Call:
    func: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Reduce:
    op: str
    arg: Node
    kwargs: tuple[tuple[str, Any], ...]

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.kwargs)


@dataclass(frozen=True, slots=True)
class Index:
    arg: Node
    key: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Eager:
    func: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Any, ...]
    is_list: bool = False


Node = Union[Name, Const, Call, Reduce, Index, Eager, Seq]  # noqa: UP007 (a runtime alias)

#: python-blosc2's operator symbols -> the elementwise function each is
BINARY_OPS = {
    "+": "add",
    "-": "subtract",
    "*": "multiply",
    "/": "divide",
    "//": "floor_divide",
    "%": "remainder",
    "**": "pow",
    "&": "bitwise_and",
    "|": "bitwise_or",
    "^": "bitwise_xor",
    "<<": "bitwise_left_shift",
    ">>": "bitwise_right_shift",
    "<": "less",
    "<=": "less_equal",
    ">": "greater",
    ">=": "greater_equal",
    "==": "equal",
    "!=": "not_equal",
}
#: unary operator symbols -> function
UNARY_OPS = {"-": "negative", "+": "positive", "~": "bitwise_invert", "not": "logical_not"}


def children(node: Any) -> Iterator[Any]:
    """The direct sub-nodes of ``node``."""
    if isinstance(node, Call):
        yield from node.args
    elif isinstance(node, Reduce | Index):
        yield node.arg
    elif isinstance(node, Eager):
        yield from node.args
        for _, v in node.kwargs:
            yield v
    elif isinstance(node, Seq):
        yield from node.items


def walk(node: Any) -> Iterator[Any]:
    """Every node of the tree under ``node`` (itself first), without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(children(n))


def names_in(node: Any) -> set[str]:
    """The operand names the tree uses."""
    return {n.id for n in walk(node) if isinstance(n, Name)}
