"""The DSL's allow-list (pyblosc2.dsl.syntax) and the kernels built from functions and from
stored source (pyblosc2.dsl.kernel): what is accepted, what is refused and how the refusal
reads, and that a source is never executed."""

from __future__ import annotations

import numpy as np
import pytest

from pyblosc2.dsl import (
    DSLKernel,
    DSLSyntaxError,
    dsl_kernel,
    kernel_from_source,
    validate_dsl,
    validate_dsl_jit,
)
from pyblosc2.dsl.syntax import MAX_DEPTH, MAX_SOURCE, parse_program
from pyblosc2.errors import ParamError

where = np.where


def _src(body: str, params: str = "x, y") -> str:
    return f"def k({params}):\n" + "\n".join("    " + line for line in body.splitlines()) + "\n"


ACCEPTED = {
    "arith": "return (x + y) * 2 - x / y + x // 2 % 3 + x ** 2",
    "bits": "return (x & y) | (x ^ y) | (x << 1) | (y >> 1)",
    "compare_bool": "return (x < y) and not (x == y) or x >= 2",
    "casts": "return int(x) + float(y) + bool(x)",
    "functions": "return sin(x) + np.cos(y) + numpy.exp(x) + math.sqrt(y) + atan2(x, y)",
    "where_clip": "return where(x > 0, clip(x, 0, 1), y)",
    "if_elif_else": "if x > 0:\n    z = x\nelif x == 0:\n    z = 1\nelse:\n    z = -x\nreturn z",
    "for_ranges": "a = 0\nfor i in range(3):\n    a += i\nfor j in range(1, 3):\n    a -= j\n"
    "for k2 in range(5, 0, -2):\n    a *= k2\nreturn a",
    "while_break_continue": "i = 0\nwhile i < 10:\n    i += 1\n    if i == 2:\n        continue\n"
    "    if i > x:\n        break\nreturn i",
    "symbols": "return _i0 * _n1 + _i1 + _flat_idx + _ndim",
    "constants": "return x * pi + e + y * 0 + 1j * 0 + inf * 0",
    "print_docstring": '"""doc"""\nprint("x is {}", 1)\nreturn x',
    "aug_ops": "a = x\na += 1\na -= 1\na *= 2\na /= 2\na //= 1\na %= 7\na **= 1\nreturn a",
}

REFUSED = {
    "attribute": ("return x.mean()", "Unsupported call target"),
    "subscript": ("return x[0]", "Unsupported DSL expression: Subscript"),
    "keyword": ("return clip(x, a_min=0, a_max=1)", "Keyword arguments are not supported"),
    "ternary": ("return 1 if x else 0", "Ternary expressions are not supported"),
    "lambda": ("f = lambda v: v\nreturn x", "Unsupported DSL expression: Lambda"),
    "comprehension": ("return [v for v in x]", "Unsupported DSL expression: ListComp"),
    "tuple_assign": ("a, b = x, y\nreturn a", "Only simple assignments"),
    "input_assign": ("x = x - y\nreturn x", "Cannot assign to input parameter 'x'"),
    "semicolon": ("a = x; b = y\nreturn a", "one statement per line"),
    "for_else": ("for i in range(2):\n    a = i\nelse:\n    a = 0\nreturn a", "for/else"),
    "while_else": ("while x:\n    a = 1\nelse:\n    a = 0\nreturn a", "while/else"),
    "for_iter": ("for i in x:\n    a = i\nreturn a", "must iterate over range()"),
    "range_arity": ("for i in range(1, 2, 3, 4):\n    a = i\nreturn a", "1 to 3 positional"),
    "chained": ("return 0 < x < 1", "Chained comparisons"),
    "invert": ("return ~x", "Unsupported unary operator"),
    "matmul": ("return x @ y", "Unsupported binary operator"),
    "unknown_function": ("return foo(x)", "Unsupported function 'foo'"),
    "import_call": ("return __import__('os')", "Unsupported function '__import__'"),
    "open_call": ("return open('f')", "Unsupported function 'open'"),
    "eval_call": ("return eval('1')", "Unsupported function 'eval'"),
    "unknown_name": ("return x + undefined_thing", "Unknown name 'undefined_thing'"),
    "reserved_assign": ("_i0 = 1\nreturn x", "reserved DSL name"),
    "string": ("return 'a'", "Unsupported constant"),
    "import": ("import os\nreturn x", "Unsupported DSL statement: Import"),
    "nested_def": ("def g():\n    return 1\nreturn x", "Unsupported DSL statement: FunctionDef"),
    "global": ("global q\nreturn x", "Unsupported DSL statement: Global"),
    "pass": ("pass\nreturn x", "Unsupported DSL statement: Pass"),
    "try": ("try:\n    a = 1\nexcept Exception:\n    a = 2\nreturn a", "Unsupported DSL statement"),
    "with": ("with x:\n    a = 1\nreturn a", "Unsupported DSL statement: With"),
    "break_outside": ("break\nreturn x", "'break' outside a loop"),
    "bare_return": ("return", "return must have a value"),
    "range_in_expr": ("return range(3)", "range() is a statement of its own"),
    "arity": ("return sin(x, y)", "sin() takes 1 argument"),
    "walrus": ("return (a := x)", "Unsupported DSL expression: NamedExpr"),
    "star": ("return sin(*x)", "Unsupported DSL expression: Starred"),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_the_dsl_accepts(name: str) -> None:
    p = parse_program(_src(ACCEPTED[name]))
    assert p.inputs == ("x", "y")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_dsl_refuses_with_a_located_message(name: str) -> None:
    body, msg = REFUSED[name]
    with pytest.raises(DSLSyntaxError, match="DSL kernel source:") as info:
        parse_program(_src(body))
    text = str(info.value)
    assert msg in text
    assert " at line " in text and ", column " in text and "^" in text


def test_signature_rules() -> None:
    with pytest.raises(DSLSyntaxError, match=r"\*args/\*\*kwargs"):
        parse_program("def k(*xs):\n    return 1\n")
    with pytest.raises(DSLSyntaxError, match="reserved DSL name"):
        parse_program("def k(_i0):\n    return 1\n")
    with pytest.raises(DSLSyntaxError, match="function definition"):
        parse_program("x = 1\n")
    with pytest.raises(DSLSyntaxError, match="Python syntax error"):
        parse_program("def k(x):\n    return (\n")


def test_nesting_and_size_are_bounded() -> None:
    deep = "x" + " + (x" * (MAX_DEPTH + 5) + ")" * (MAX_DEPTH + 5)
    with pytest.raises(DSLSyntaxError, match=f"deeper than {MAX_DEPTH}"):
        parse_program(_src(f"return {deep}"))
    chain = " + ".join(["x"] * 5000)  # a flat but long chain nests deep in the ast
    with pytest.raises(DSLSyntaxError):
        parse_program(_src(f"return {chain}"))
    with pytest.raises(DSLSyntaxError, match="characters is over"):
        parse_program("#" * (MAX_SOURCE + 1))


def test_program_facts() -> None:
    p = parse_program(_src(ACCEPTED["while_break_continue"]))
    assert p.has_control_flow and p.has_loops and not p.has_print
    assert p.locals == {"i"}
    p = parse_program(_src(ACCEPTED["symbols"]))
    assert p.symbols == {"_i0", "_n1", "_i1", "_flat_idx", "_ndim"}
    assert not p.has_control_flow


# -- kernels from functions ------------------------------------------------------------------


@dsl_kernel
def kernel_np_calls(x, y):
    if x >= 0:
        return np.maximum(x, y) + np.absolute(y)
    return np.sin(x)


def test_a_decorated_function_keeps_its_source_and_inputs() -> None:
    k = kernel_np_calls
    assert isinstance(k, DSLKernel) and k.dsl_error is None
    assert k.input_names == ["x", "y"]
    assert k.dsl_source.startswith("def kernel_np_calls(x, y):")
    assert "@dsl_kernel" not in k.dsl_source
    # python-blosc2's rewrite of numpy calls: np.f -> f, maximum -> fmax, absolute -> abs
    assert "np." not in k.dsl_source and "fmax(" in k.dsl_source and "abs(" in k.dsl_source
    assert k.func(2.0, 1.0) == 3.0  # func is the function itself


def test_a_function_outside_the_dsl_keeps_its_error() -> None:
    def bad(x):
        return x.sum()

    k = DSLKernel(bad)
    assert isinstance(k.dsl_error, DSLSyntaxError) and k.program is None
    assert k.dsl_source is not None and k.input_names == ["x"]
    report = validate_dsl(bad)
    assert report == {
        "valid": False,
        "dsl_source": k.dsl_source,
        "input_names": ["x"],
        "error": str(k.dsl_error),
    }
    assert validate_dsl(kernel_np_calls)["valid"] is True


def test_a_function_without_source() -> None:
    k = DSLKernel(np.sin)
    assert k.program is None and "no source" in str(k.dsl_error)


# -- kernels from stored source ----------------------------------------------------------------


def test_kernel_from_source_never_executes(tmp_path) -> None:
    marker = tmp_path / "ran"
    hostile = f"open({str(marker)!r}, 'w').write('x')\ndef k(x):\n    return x\n"
    with pytest.raises(ParamError, match="function definition only"):
        kernel_from_source(hostile)
    inside = f"def k(x):\n    return open({str(marker)!r}, 'w')\n"
    k = kernel_from_source(inside)
    assert k.dsl_error is not None and "Unsupported function 'open'" in str(k.dsl_error)
    with pytest.raises(DSLSyntaxError):
        k.func(np.ones(2))
    # a default argument is evaluated by def, but the source is parsed, not run
    k = kernel_from_source(f"def k(x, y=open({str(marker)!r}, 'w')):\n    return x\n")
    assert not marker.exists()


def test_kernel_from_source_picks_and_rewrites() -> None:
    src = '"""kernels"""\nimport numpy\ndef a(x):\n    return numpy.sqrt(x)\n'
    src += "def b(x):\n    return -x\n"
    with pytest.raises(ParamError, match="no name"):
        kernel_from_source(src)
    with pytest.raises(ParamError, match="did not define"):
        kernel_from_source(src, "c")
    k = kernel_from_source(src, "a")
    assert k.dsl_source == "def a(x):\n    return sqrt(x)"
    assert k.func(np.array([4.0, 9.0])).tolist() == [2.0, 3.0]
    assert kernel_from_source(src, "b").func(3) == -3
    shadow = kernel_from_source("def k(np, y):\n    return np * y\n")
    assert shadow.input_names == ["np", "y"] and shadow.func(2.0, 3.0) == 6.0


def test_validate_dsl_jit_reports(monkeypatch) -> None:
    monkeypatch.setenv("ME_DSL_JIT", "0")  # the numba compilation: tests/unit/test_dsl_routes.py
    bad = kernel_from_source("def k(a, b):\n    a = a - b\n    return a\n")
    st = validate_dsl_jit(bad, [np.float64, np.float64], np.float64)
    assert not st["valid"] and not st["compiled"] and "input parameter 'a'" in st["error"]
    ok = kernel_from_source("def k(a, n):\n    return a * float(n)\n")
    st = validate_dsl_jit(ok, {"a": np.float32, "n": 3}, np.float64)
    assert st["valid"] and st["compiled"] and st["status"] == "ME_COMPILE_SUCCESS"
    assert not st["jit"] and st["route"] == "numpy"
    with pytest.raises(ParamError, match="at least one array"):
        validate_dsl_jit(ok, {"a": 1.0, "n": 3}, np.float64)
    with pytest.raises(ParamError, match="missing operand spec"):
        validate_dsl_jit(ok, {"a": np.float64}, np.float64)
    axis = kernel_from_source("def k(a):\n    return a + _i1\n")
    st = validate_dsl_jit(axis, [np.float64], np.float64, shape=(8,))
    assert st["valid"] and not st["compiled"] and st["status"] == "ME_COMPILE_ERROR"
    assert validate_dsl_jit(axis, [np.float64], np.float64, shape=(8, 8))["compiled"]
