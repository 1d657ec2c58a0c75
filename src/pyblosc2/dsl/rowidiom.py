"""pandas' row idiom in a DSL kernel (python-blosc2's rewrite): ``def f(row): ... row["a"]``
becomes ``def f(a): ... a``, so a kernel written for ``df.apply(f, axis=1)`` with an ``if``
compiles as a DSL kernel over whole columns.

The rewrite applies only to a function of one parameter every mention of which is
``row[<string literal>]``; anything else (``row[0]``, ``row.a``, iterating the row) leaves
the source as it is, for the checker to judge. A label that is an identifier (and no Python
keyword, no DSL index symbol such as ``_i0``, not the row parameter) keeps its name; others
become ``_col<n>``. The map from parameter name to column label is returned with the source.

>>> src = 'def f(row):\\n    if row["a"] > 1:\\n        return row["a"]\\n    return row["b c"]'
>>> new, columns = rewrite_row_subscripts(src, ("row",))
>>> print(new)
def f(a, _col1):
    if a > 1:
        return a
    return _col1
>>> columns
{'a': 'a', '_col1': 'b c'}
>>> rewrite_row_subscripts("def g(row):\\n    return row[0]", ("row",)) is None
True
"""

from __future__ import annotations

import ast
import keyword

from .syntax import is_symbol, parse_source

__all__ = ["rewrite_row_subscripts"]


class _RowRewriter(ast.NodeTransformer):
    """``row["label"]`` -> a parameter name; any other use of ``row`` marks the rewrite
    as not applicable (``bailed``)."""

    def __init__(self, param: str) -> None:
        self.param = param
        self.columns: dict[str, str] = {}  # parameter name -> column label
        self._by_label: dict[str, str] = {}
        self.bailed = False

    def _name_for(self, label: str) -> str:
        if label in self._by_label:
            return self._by_label[label]
        name = label
        if (
            not label.isidentifier()
            or keyword.iskeyword(label)
            or is_symbol(label)
            or label == self.param
            or label in self.columns
        ):
            name = f"_col{len(self._by_label)}"
        self._by_label[label] = name
        self.columns[name] = label
        return name

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == self.param:
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                new = ast.Name(id=self._name_for(key.value), ctx=ast.Load())
                return ast.copy_location(new, node)
            self.bailed = True
            return node
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.param:
            self.bailed = True
        return node


def rewrite_row_subscripts(
    source: str, inputs: tuple[str, ...]
) -> tuple[str, dict[str, str]] | None:
    """``source`` (one function of ``inputs``) with its row parameter's subscripts turned
    into parameters, and the map parameter -> column label; None when the idiom does not
    apply (not one parameter, no ``row["..."]``, or another use of the row)."""
    if len(inputs) != 1:
        return None
    tree = parse_source(source)
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if func is None:
        return None
    rewriter = _RowRewriter(inputs[0])
    for stmt in func.body:
        rewriter.visit(stmt)
    if rewriter.bailed or not rewriter.columns:
        return None
    func.args.posonlyargs = []
    func.args.args = [ast.arg(arg=name) for name in rewriter.columns]
    func.args.defaults = []
    return ast.unparse(ast.fix_missing_locations(tree)), dict(rewriter.columns)
