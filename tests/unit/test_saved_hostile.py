"""Hostile saved lazy expressions and UDFs (compute/saved/reader.py and its checks) are
refused with a FormatError naming the carrier and the field, before any operand is opened
and before anything runs: each carrier here is built byte for byte in python-blosc2's forms
(b2o carrier, legacy ``_LazyArray``) and would, if run, create the file ``pwned``."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.dsl import DSLSyntaxError
from pyblosc2.errors import FormatError

PWNED = "touch pwned"


@pytest.fixture
def sub(tmp_path, monkeypatch):
    """``tmp_path`` as the current directory: ``sub/`` holds the carrier and ``a.b2nd``;
    ``out.b2nd`` is a real array outside ``sub/``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    pb.asarray(np.arange(6.0), urlpath="sub/a.b2nd", mode="w")
    pb.asarray(np.arange(6.0), urlpath="out.b2nd", mode="w")
    yield tmp_path
    assert not list(tmp_path.rglob("pwned"))


def _ref(path: str) -> dict[str, Any]:
    return {"kind": "urlpath", "version": 1, "urlpath": path}


def _b2o_expr(path: str, expression: str, operands: dict[str, str]) -> None:
    marker = {"kind": "lazyexpr", "version": 1}
    c = pb.empty((6,), np.float64, urlpath=path, mode="w", meta={"b2o": marker})
    c.schunk.vlmeta["b2o"] = {
        **marker,
        "expression": expression,
        "operands": {k: _ref(v) for k, v in operands.items()},
    }


def _legacy_udf(source: str) -> None:
    c = pb.empty((6,), np.float64, urlpath="sub/e.b2nd", mode="w", meta={"LazyArray": 1})
    c.schunk.vlmeta["_LazyArray"] = {"UDF": source, "operands": {"o0": "a.b2nd"}, "name": "f"}


EXPRESSIONS = {
    "import": ("__import__('os').system('touch pwned')", "function '__import__'"),
    "attribute": ("a.__class__.__init__", "attribute"),
    "name outside operands": ("a + os", "names among its operands"),
    "constructor writing a file": ("zeros((6,), urlpath='pwned') + a", "urlpath="),
    "constructor of a computed size": ("zeros((10**15,)) + a", "literal arguments"),
    "constructor past the memory bound": ("zeros((1000000000000000,)) + a", "bytes"),
    "out= of a reduction": ("sum(a, out=a)", "reductions without out="),
}


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_hostile_expression_is_refused(sub, name) -> None:
    expression, match = EXPRESSIONS[name]
    _b2o_expr("sub/e.b2nd", expression, {"a": "a.b2nd"})
    with pytest.raises(FormatError, match=r"saved expression sub/e\.b2nd: expression") as info:
        pb.open("sub/e.b2nd", deserialize="full")
    assert match in str(info.value)


@pytest.mark.parametrize("where", ["../out.b2nd", "ABSOLUTE", "../missing.b2nd"])
def test_operand_outside_the_carriers_directory_is_refused(sub, where) -> None:
    """The path rule comes before existence: a missing path outside is refused, not
    reported missing."""
    where = os.path.abspath("out.b2nd") if where == "ABSOLUTE" else where
    _b2o_expr("sub/e.b2nd", "a + 1", {"a": where})
    with pytest.raises(FormatError, match=r"operand 'a': urlpath .* expected a path inside"):
        pb.open("sub/e.b2nd", deserialize="full")


def test_cycle_of_saved_expressions_is_refused(sub) -> None:
    _b2o_expr("sub/e.b2nd", "x + 1", {"x": "f.b2nd"})
    _b2o_expr("sub/f.b2nd", "y + 1", {"y": "e.b2nd"})
    with pytest.raises(FormatError, match="cycle"):
        pb.open("sub/e.b2nd", deserialize="full")


UDF_SOURCES = {
    "call through __import__": (
        f"def f(inputs, output, offset):\n    __import__('os').system('{PWNED}')\n",
        "attribute 'system'",
    ),
    "import at top": (
        f"import os\ndef f(inputs, output, offset):\n    os.system('{PWNED}')\n",
        "Import outside the function",
    ),
    "statement at top": (
        "open('pwned', 'w')\ndef f(inputs, output, offset):\n    output[:] = 1\n",
        "Expr outside the function",
    ),
    "decorator": (
        "@print\ndef f(inputs, output, offset):\n    output[:] = 1\n",
        "decorators",
    ),
}


@pytest.mark.parametrize("name", list(UDF_SOURCES))
def test_hostile_legacy_udf_source_is_refused(sub, name) -> None:
    source, match = UDF_SOURCES[name]
    _legacy_udf(source)
    with pytest.raises(FormatError, match="saved UDF 'f': source") as info:
        pb.open("sub/e.b2nd", deserialize="full")
    assert match in str(info.value)


def test_hostile_dsl_kernel_is_refused_unexecuted(sub) -> None:
    marker = {"kind": "lazyudf", "version": 1}
    c = pb.empty((6,), np.float64, urlpath="sub/e.b2nd", mode="w", meta={"b2o": marker})
    c.schunk.vlmeta["b2o"] = {
        **marker,
        "function_kind": "dsl",
        "dsl_version": 1,
        "name": "k",
        "udf_source": f"def k(x):\n    return __import__('os').system('{PWNED}')\n",
        "dtype": "<f8",
        "shape": [6],
        "operands": {"o0": _ref("a.b2nd")},
        "kwargs": {},
    }
    with pytest.raises(DSLSyntaxError, match="Unsupported call target"):
        pb.open("sub/e.b2nd", deserialize="full")


def test_policy_is_checked_before_the_payload(sub) -> None:
    """Under the default policy a carrier is refused by its kind, whatever its payload."""
    marker = {"kind": "lazyexpr", "version": 1}
    c = pb.empty((6,), np.float64, urlpath="sub/e.b2nd", mode="w", meta={"b2o": marker})
    c.schunk.vlmeta["b2o"] = "not a payload"
    del c
    with pytest.raises(pb.UnsafeDeserializationError, match="'lazyexpr'"):
        pb.open("sub/e.b2nd")
    with pytest.raises(FormatError, match="b2o payload"):
        pb.open("sub/e.b2nd", deserialize="full")
