"""What an index covers: the array itself, a field of a structured array, or an expression
of its fields (python-blosc2's index targets), and the token each is stored under.

An expression target is kept in a canonical form (``expression_key``): its operand names
replaced by the field names they stand for (``__self__`` for the array itself) and unparsed
by :mod:`ast`, so the same expression matches however it was spelled.

>>> import numpy as np; from pyblosc2 import asarray
>>> a = asarray(np.zeros(4, dtype=[("x", "f8")]))
>>> target_of(a, None, "abs(x)", None)[0]["expression_key"]
'abs(x)'
"""

from __future__ import annotations

import ast
import hashlib
from typing import Any

import numpy as np

from ..compute.api import ne_evaluate
from ..errors import ParamError, ParamTypeError
from ..ndarray.members import NDField
from ..ndarray.ndarray import NDArray
from .kinds import SELF_TARGET_NAME, SUPPORTED_DTYPE_KINDS

__all__ = [
    "canonical",
    "operand_target",
    "target_of",
    "token_of",
    "values_for_target",
    "values_of",
]


def token_of(target: dict[str, Any]) -> str:
    """The store key of a target (python-blosc2's token).

    >>> token_of({"source": "field", "field": None})
    '__self__'
    """
    if target["source"] == "field":
        return target["field"] or SELF_TARGET_NAME
    digest = hashlib.sha1(target["expression_key"].encode("utf-8")).hexdigest()[:12]
    return f"__expr__{digest}"


def operand_target(operand: Any) -> tuple[Any, str | None] | None:
    """``(base array, field or None)`` an operand reads, or None (not an array's)."""
    if isinstance(operand, NDField):
        return operand.ndarr, operand.name
    if isinstance(operand, NDArray):
        return operand, None
    return None


def canonical(node: ast.AST, operands: dict[str, Any]) -> tuple[Any, str, list[str]] | None:
    """The base array, canonical text and dependencies of an expression node, or None when
    its operands are not all of one array."""
    base: list[Any] = []
    deps: list[str] = []

    class _Names(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            op = operands.get(n.id)
            if op is None:
                return n
            t = operand_target(op)
            if t is None or (base and base[0] is not t[0]):
                raise LookupError(n.id)
            base[:1] = [t[0]]
            name = t[1] or SELF_TARGET_NAME
            deps.append(name)
            return ast.copy_location(ast.Name(id=name, ctx=n.ctx), n)

    try:
        tree = _Names().visit(ast.parse(ast.unparse(node), mode="eval").body)
    except LookupError:
        return None
    if not base:
        return None
    return base[0], ast.unparse(tree), list(dict.fromkeys(deps))


def values_of(rows: np.ndarray, target: dict[str, Any]) -> np.ndarray:
    """The indexed values of some rows of the array (a numpy slice of it)."""
    if target["source"] == "field":
        return rows if target["field"] is None else rows[target["field"]]
    ops = {d: rows if d == SELF_TARGET_NAME else rows[d] for d in target["dependencies"]}
    return np.asarray(ne_evaluate(target["expression_key"], ops))


def _check_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind not in SUPPORTED_DTYPE_KINDS or dtype.fields is not None:
        raise ParamTypeError(f"dtype {dtype} is not supported by the index engine")
    return dtype


def target_of(
    array: Any, field: str | None, expression: str | None, operands: dict[str, Any] | None
) -> tuple[dict[str, Any], np.dtype]:
    """The target and the indexed dtype of ``create_index(field, expression=, operands=)``."""
    if array.ndim != 1:
        raise ParamError("indexes are only supported on 1-D NDArray objects")
    if field is not None and expression is not None:
        raise ParamError("field and expression are mutually exclusive")
    if expression is None and operands is not None:
        raise ParamError("operands can only be provided together with expression")
    names = array.dtype.fields
    if expression is None and (field is None or (names is not None and field in names)):
        dtype = np.dtype(array.dtype if field is None else names[field][0])
        return {"source": "field", "field": field}, _check_dtype(dtype)
    if expression is None and names is None and field is not None:
        raise ParamTypeError("field indexes require a structured dtype")
    text = expression if expression is not None else field
    assert text is not None
    if operands is None:
        operands = dict(array.fields) if names is not None else {"value": array}
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ParamError(f"expression {text!r} is not valid Python syntax") from exc
    found = canonical(tree.body, operands)
    if found is None or found[0] is not array:
        raise ParamError(
            "expression index operands must resolve to the same array passed to create_index()"
        )
    _, key, deps = found
    target = {
        "source": "expression",
        "expression": text,
        "expression_key": key,
        "dependencies": deps,
    }
    sample = values_of(array[: max(1, min(array.shape[0], 2))], target)
    if sample.ndim != 1:
        raise ParamError("expression indexes require expressions returning a 1-D scalar stream")
    return target, _check_dtype(np.dtype(sample.dtype))


def values_for_target(array: Any, target: dict[str, Any]) -> np.ndarray:
    """All the indexed values of an array at once (the in-memory builds; python-blosc2's
    ``_values_for_target``): the streaming builds read them chunk by chunk instead.

    >>> from pyblosc2 import asarray
    >>> values_for_target(asarray(np.arange(3)), {"source": "field", "field": None}).tolist()
    [0, 1, 2]
    """
    return values_of(array[()], target)
