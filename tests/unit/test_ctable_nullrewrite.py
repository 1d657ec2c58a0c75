"""pyblosc2.ctable.nullrewrite: python-blosc2's string-predicate rewriter for nullable
columns (per-leaf guards, none where the stand-in cannot match, Kleene channels under a
negation), checked against a three-valued numpy oracle and against ``CTable.where``."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable.nullrewrite import rewrite_null_predicates, sentinel_guard_expr
from pyblosc2.ctable_nulls import rewrite_null_predicates as exported

SENTINEL = 5
GUARDS = {"a": (f"(a != {SENTINEL})", SENTINEL)}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("a > 3", "(a > 3) & (a != 5)"),
        ("a > 7", None),  # 5 > 7 is false: the null cannot match, no guard
        ("(a > 3) | (b == 0)", "(a > 3) & (a != 5) | (b == 0)"),
        ("a > 3 and b < 2", "(a > 3) & (a != 5) & (b < 2)"),
        ("3 < a", "(3 < a) & (a != 5)"),
        ("~(a > 7)", "~(a > 7) & (a != 5)"),  # under a negation: always guarded
        ("not (a > 3)", "(not a > 3) & (a != 5)"),
        ("b > 1", None),
        ("a >", None),  # does not parse: left to the caller's parser
    ],
)
def test_rewrite_shapes(expr: str, expected: str | None) -> None:
    assert rewrite_null_predicates(expr, GUARDS) == expected
    assert exported is rewrite_null_predicates


@pytest.mark.parametrize(
    ("value", "expected"),
    [(-1, "(x != -1)"), (np.int16(3), "(x != 3)"), ("", "(x != '')"), (b"z", "(x != b'z')"),
     (float("nan"), "(x == x)"), (object(), None)],
)  # fmt: skip
def test_sentinel_guard_expr(value: Any, expected: str | None) -> None:
    assert sentinel_guard_expr("x", value) == expected


# -- the property: the rewritten text keeps exactly SQL's rows --------------------------------
_LEAVES = ["a > {k}", "a < {k}", "a == {k}", "a != {k}", "b >= {k}", "a + b > {k}"]


@st.composite
def _conditions(draw: Any, depth: int = 3) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(_LEAVES)).format(k=draw(st.integers(2, 8)))
    kind = draw(st.sampled_from(["&", "|", "and", "or", "~"]))
    if kind == "~":
        return f"~({draw(_conditions(depth - 1))})"
    return f"({draw(_conditions(depth - 1))}) {kind} ({draw(_conditions(depth - 1))})"


def _kleene(node: ast.expr, env: dict[str, np.ndarray], null: np.ndarray) -> tuple[Any, Any]:
    """(definitely true, unknown) of a condition, a comparison unknown where ``a`` is null."""
    if isinstance(node, ast.UnaryOp):
        t, n = _kleene(node.operand, env, null)
        return ~t & ~n, n
    parts: list[ast.expr] = []
    if isinstance(node, ast.BoolOp):
        parts = list(node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        parts = [node.left, node.right]
    if parts:
        conj = isinstance(getattr(node, "op", None), ast.And | ast.BitAnd)
        t, n = _kleene(parts[0], env, null)
        for p in parts[1:]:
            t2, n2 = _kleene(p, env, null)
            if conj:
                false = (~t & ~n) | (~t2 & ~n2)
                t, n = t & t2, (n | n2) & ~false
            else:
                t, n = t | t2, (n | n2) & ~(t | t2)
        return t, n
    value = eval(compile(ast.Expression(node), "<leaf>", "eval"), {"__builtins__": {}}, env)
    reads_a = any(isinstance(x, ast.Name) and x.id == "a" for x in ast.walk(node))
    unknown = null if reads_a else np.zeros_like(null)
    return value & ~unknown, unknown


@settings(max_examples=60, deadline=None)
@given(
    cond=_conditions(),
    a=st.lists(
        st.one_of(st.none(), st.integers(0, 9).filter(lambda v: v != SENTINEL)),
        min_size=1,
        max_size=25,
    ),
)
@example(cond="~((a > 3) & (b >= 2))", a=[None, 1, None, 7])  # unknown & false is false
@example(cond="~((a > 3) | (b >= 2))", a=[None, 1, None, 7])  # unknown | true is true
def test_rewritten_text_keeps_the_rows_sql_keeps(cond: str, a: list[int | None]) -> None:
    null = np.array([v is None for v in a])
    env = {
        "a": np.array([SENTINEL if v is None else v for v in a], dtype=np.int64),
        "b": np.arange(len(a), dtype=np.int64) % 4,
    }
    want, _ = _kleene(ast.parse(cond, mode="eval").body, env, null)
    text = rewrite_null_predicates(cond, GUARDS)  # None: no null could change a row
    text = text or cond.replace(" and ", " & ").replace(" or ", " | ")  # operands in ( )
    got = eval(compile(text, "<rewritten>", "eval"), {"__builtins__": {}}, dict(env))
    assert np.asarray(got).tolist() == want.tolist(), text
    # ...and pyblosc2's own where() of the same string, evaluated leaf by leaf, agrees
    row = dataclasses.make_dataclass(
        "R", [("a", int, pb.field(pb.int64(null_value=SENTINEL))), ("b", int, pb.field(pb.int64()))]
    )
    t = pb.CTable(row, new_data={"a": env["a"], "b": env["b"]})
    kept = np.asarray(t.where(cond)["b"][:]).tolist() if want.any() else []
    assert sorted(kept) == sorted(env["b"][want].tolist())


def test_a_table_guards_mask_columns_with_their_sidecar() -> None:
    row = dataclasses.make_dataclass("R", [("a", int, pb.field(pb.int64(null_storage="mask")))])
    t = pb.CTable(row, new_data=[(1,), (None,), (20,)])
    ops = {"a": t._cols["a"]}
    assert t._rewrite_null_predicates("a > 10", ops) == ("a > 10", ops)  # the fill 0 fails
    text, extended = t._rewrite_null_predicates("a < 10", ops)
    assert text == "(a < 10) & __nv0" and set(extended) == {"a", "__nv0"}
    fresh = pb.CTable(row, new_data=[(1,), (2,)])  # no sidecar: nothing to guard
    assert fresh._rewrite_null_predicates("a < 10", {"a": fresh._cols["a"]})[0] == "a < 10"
