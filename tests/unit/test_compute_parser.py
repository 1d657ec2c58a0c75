"""compute/parser.py: expression strings become trees through an allow-list (nothing is
eval-ed); hostile strings are ParamErrors before anything is looked up; python-blosc2's
``get_expr_operands`` and its rebased expression form (compute/exprtext.py)."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as blosc2
from pyblosc2.compute.exprtext import merge, rebase_user_expression, rename_names
from pyblosc2.compute.parser import MAX_DEPTH, MAX_LENGTH, get_expr_operands, parse
from pyblosc2.compute.tree import Call, Const, Eager, Index, Name, Reduce
from pyblosc2.errors import ParamError

ACCEPTED = [
    ("a + 1", Call("add", (Name("a"), Const(1)))),
    ("-1 + a", Call("add", (Const(-1), Name("a")))),
    ("not a", Call("logical_not", (Name("a"),))),
    (
        "a < b <= c",
        Call(
            "logical_and",
            (Call("less", (Name("a"), Name("b"))), Call("less_equal", (Name("b"), Name("c")))),
        ),
    ),
    ("a and b or c", Call("logical_or", (Call("logical_and", (Name("a"), Name("b"))), Name("c")))),
    ("atan2(a, 2)", Call("atan2", (Name("a"), Const(2)))),
    ("fmod(a, 2)", Call("fmod", (Name("a"), Const(2)))),  # any numpy ufunc
    ("sum(a, 1)", Reduce("sum", Name("a"), (("axis", 1),))),
    (
        "a.mean(axis=(0, 1), keepdims=True)",
        Reduce("mean", Name("a"), (("axis", (0, 1)), ("keepdims", True))),
    ),
    ("a[1:5, ::2]", Index(Name("a"), (slice(1, 5), slice(None, None, 2)))),
    ("a.slice((slice(None, 10, None),))", Index(Name("a"), (slice(None, 10),))),
    ("a[..., None, -1]", Index(Name("a"), (Ellipsis, None, -1))),
    ("a.T", Eager("T", (Name("a"),), ())),
    ("np.int8(3) + a", Call("add", (Const(np.int8(3)), Name("a")))),
    ("arange(10, dtype=i2)", Eager("arange", (Const(10),), (("dtype", Const(np.dtype("i2"))),))),
]


@pytest.mark.parametrize(("text", "tree"), ACCEPTED, ids=[t for t, _ in ACCEPTED])
def test_accepted_strings_parse_to_trees(text, tree) -> None:
    assert parse(text) == tree


HOSTILE = [
    ("__import__('os').system('x')", "function '__import__'"),
    ("a.__class__", "attribute .__class__"),
    ("a.__class__.__bases__[0]", "attribute"),
    ("open('/etc/passwd')", "function 'open'"),
    ("eval('1')", "function 'eval'"),
    ("(lambda: 1)()", "call of"),
    ("[x for x in a]", "ListComp"),
    ("a if b else c", "IfExp"),
    ("a := 1", "is not valid"),
    ("import os", "is not valid"),
    ("a; b", "is not valid"),
    ("np.load('f.npy')", "function 'load'"),
    ("np.lib.format", "attribute"),
    ("sum(a, axis=b)", "not a literal"),
    ("sum(a, bogus=1)", "no keyword 'bogus'"),
    ("a[b]", "not a literal"),
    ("a[1.5]", "subscript"),
    ("f'{a}'", "JoinedStr"),
    ("a @ b", "BinOp"),
    ("a in b", "compare"),
    ("sin(a, out=b)", "keywords in sin"),
    ("sin(*a)", r"\*args"),
    ("max(**a)", r"\*\*kwargs"),
    ("None + a", "constant None"),
]


@pytest.mark.parametrize(("text", "match"), HOSTILE, ids=[t for t, _ in HOSTILE])
def test_hostile_strings_are_refused(text, match) -> None:
    with pytest.raises(ParamError, match=match):
        parse(text)


@pytest.mark.parametrize(("text", "match"), HOSTILE[:8], ids=[t for t, _ in HOSTILE[:8]])
def test_hostile_strings_are_refused_before_names_are_looked_up(text, match) -> None:
    # no operand is needed to refuse: nothing is read from the caller's frame first
    with pytest.raises(ParamError, match=match):
        blosc2.lazyexpr(text)
    with pytest.raises(ParamError, match=match):
        blosc2.evaluate(text)


def test_deep_nesting_is_refused_without_recursion_error() -> None:
    deep = "-" * 5000 + "a"  # a unary chain: Python's parser takes it, our converter would not
    with pytest.raises(ParamError, match=f"deeper than {MAX_DEPTH}|not valid") as info:
        parse(deep)
    assert len(str(info.value)) < 400  # the message quotes a bounded part of the string
    chain = " + ".join(["a"] * 2000)  # a left-nested sum 2000 deep
    with pytest.raises(ParamError, match="deeper"):
        parse(chain)
    with pytest.raises(ParamError, match="not valid"):
        parse("(" * 300 + "a" + ")" * 300)  # Python's own limit (200 parentheses)


def test_long_strings_are_refused() -> None:
    with pytest.raises(ParamError, match=f"more than {MAX_LENGTH}"):
        parse("a" * (MAX_LENGTH + 1))


def test_non_strings_are_refused() -> None:
    with pytest.raises(ParamError, match="must be a str"):
        parse(42)
    assert parse(b"a + 1") == parse("a + 1")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [  # python-blosc2's test_get_expr_operands cases
        ("a + b * sin(c) + max(e, axis=1, keepdims=True)", {"a", "b", "c", "e"}),
        ("sum(sin(a + c)**2 + cos(b + c)**2 + b) + 1", {"a", "b", "c"}),
        ("func1(a, b) + method1(x)", {"a", "b", "x"}),
        ("data.mean(axis=0) + sum(data, axis=1)", {"data"}),
        ("k + l.method1(m, n=3) + max(o, p=q)", {"k", "l", "m", "o", "q"}),
        ("func_with_no_args() + method_with_no_args().attribute", set()),
        ("func1(arg1, kwarg1=True) + var.method2(arg2, kwarg2=False)", {"arg1", "arg2", "var"}),
        ("np.int8(1) + o1", {"o1"}),
    ],
)
def test_get_expr_operands(expression, expected) -> None:
    assert get_expr_operands(expression) == expected
    assert blosc2.get_expr_operands(expression) == expected


def test_rebased_form_is_python_blosc2s() -> None:
    ops = {k: object() for k in ("a1", "a2", "a3", "a4")}
    text, got = rebase_user_expression("a1 + a2 - (a3 * a4)", ops)
    assert text == "(o0 + o1 - o2 * o3)"
    assert [got[f"o{i}"] for i in range(4)] == [ops["a1"], ops["a2"], ops["a3"], ops["a4"]]
    assert rebase_user_expression("a1", ops)[0] == "(o0)"
    assert rebase_user_expression("a1[:10]", ops)[0] == "(o0.slice((slice(None, 10, None),)))"
    # order of appearance, not of the dict; strings and function names untouched
    text, got = rebase_user_expression("contains(a2, 'a1') + a1", ops)
    assert text == "(contains(o0, 'a1') + o1)" and got["o0"] is ops["a2"]


def test_merge_keeps_shared_operands_and_renames_the_others() -> None:
    a, b, c = object(), object(), object()
    text, ops = merge("(o0 + o1)", {"o0": a, "o1": b}, "(o0 * o1)", {"o0": c, "o1": a})
    assert text == "(o2 * o0)" and ops == {"o0": a, "o1": b, "o2": c}
    assert rename_names("o1 + o10 + 'o1'", {"o1": "x"}) == "x + o10 + 'o1'"
