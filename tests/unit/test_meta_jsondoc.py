"""The bounded JSON decode (meta/jsondoc.py): the nesting counted without recursion agrees with
the document's (hypothesis: brackets and quotes inside strings, escapes), documents too deep or
too large are refused before json.loads sees them, and every other failure is a FormatError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyblosc2.errors import FormatError
from pyblosc2.meta import jsondoc
from pyblosc2.meta.jsondoc import MAX_JSON_BYTES, json_depth, loads_json


def _depth(value: Any) -> int:
    stack, deepest = [(value, 0)], 0
    while stack:
        v, d = stack.pop()
        if isinstance(v, list | dict):
            deepest = max(deepest, d + 1)
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


_TRICKY = st.text(alphabet='[]{}"\\ab\n\x00é\U0001f600', max_size=12)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TRICKY, inner, max_size=4),
    max_leaves=30,
)


@given(_VALUES, st.booleans())
def test_depth_is_the_documents(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert json_depth(text.encode()) == _depth(value)
    if _depth(value) <= 64:
        assert loads_json(text, "w", "f") == value


@pytest.mark.parametrize("depth", [65, 1000, 20_000])
def test_too_deep(depth: int) -> None:
    doc = '{"a": ' * (depth - 1) + "[]" + "}" * (depth - 1)
    with pytest.raises(
        FormatError, match=rf"^T: s JSON nesting depth is {depth}, expected at most 64$"
    ):
        loads_json(doc, "T", "s")


def test_the_deepest_accepted() -> None:
    assert _depth(loads_json("[" * 64 + "]" * 64, "T", "s")) == 64


def test_depth_counted_across_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsondoc, "PIECE", 3)
    assert json_depth(b"[[[[[]]]], [[[[[[]]]]]]]") == 7


@pytest.mark.parametrize(
    "doc",
    [
        '["' + "\\\\" * 10 + '", ' + "[" * 80 + "]" * 80 + "]",  # escaped backslashes, then deep
        '"\\"' + "[" * 80 + '"',  # an escaped quote keeps the string open
        '"' + "\\" * 3 + '"' + "[" * 80 + '"',  # three backslashes: still escaped
        '"' + "[" * 80,  # a string never closed
    ],
)
def test_brackets_in_strings_do_not_count(doc: str) -> None:
    expected = 81 if doc.startswith('["\\\\') else 0
    assert json_depth(doc.encode()) == expected


def test_escapes_that_close_the_string() -> None:
    doc = '["\\\\", ' + "[" * 80 + "]" * 80 + "]"  # \\ then " closes: the brackets count
    with pytest.raises(FormatError, match="depth is 81"):
        loads_json(doc, "T", "s")


def test_too_large_refused_before_encoding() -> None:
    with pytest.raises(FormatError, match=rf"JSON size is {MAX_JSON_BYTES + 1}, expected at most"):
        loads_json(" " * (MAX_JSON_BYTES + 1), "T", "s")
    with pytest.raises(FormatError, match=r"JSON size is 12, expected at most 10 bytes"):
        loads_json("é" * 6, "T", "s", max_bytes=10)  # 6 characters, 12 bytes of UTF-8


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        (b"\xff[]", r"JSON at offset 0 is invalid start byte, expected UTF-8"),
        ("[1, 2", r"JSON at offset 5 is Expecting"),
        ("1" * 5000, r"JSON is Exceeds the limit \(4300 digits\)"),
        ("", r"JSON at offset 0 is Expecting value"),
    ],
)
def test_other_failures(doc: str | bytes, match: str) -> None:
    with pytest.raises(FormatError, match=match):
        loads_json(doc, "T", "s")


def test_bytes_and_str_alike() -> None:
    doc = '{"é": [1, "x"]}'
    assert loads_json(doc.encode(), "T", "s") == loads_json(doc, "T", "s") == {"é": [1, "x"]}
