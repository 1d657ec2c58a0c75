"""A bounded decode of a JSON document read from a file: a CTable's schema (vlmeta
``schema`` of ``/_meta``), xarray-blosc2's ``dataset.json`` and its JSON vlmeta attributes.

Python's ``json`` decoder recurses once per nested array or object, so a document nested
20,000 deep raises ``RecursionError`` (with a raised recursion limit it overflows the C
stack). A document from a file MUST NOT be trusted to be shallow or small, so
:func:`loads_json` checks it first, without recursion, and only then decodes it:

* its size: at most ``max_bytes`` of UTF-8 (:data:`MAX_JSON_BYTES`; a str is measured by its
  length before it is encoded, so a huge one is refused without a copy), and bytes must be
  UTF-8 (RFC 8259 §8.1);
* its nesting: the escapes are dropped (``\\\\`` pairs first, then ``\\"``: left to right, as
  the decoder pairs them), the strings are cut out by one regular-expression pass (a string
  runs from a quote to the next one, or to the end of an unclosed text, so the pass is
  linear), the rest is reduced to its brackets (``bytes.translate``), and the depth of
  ``[``/``{`` is a running sum taken with numpy in pieces of :data:`PIECE` brackets; at most
  ``max_depth`` (:data:`MAX_DEPTH`, as for msgpack values, :mod:`.scan`);
* then ``json.loads``; a syntax error, an integer past Python's digit limit and the like are
  a :class:`FormatError` too.

UTF-8 keeps the quote, the backslash and the brackets out of multi-byte sequences, so the
bytes seen by the pre-scan are the characters the decoder sees. Cost: the regex pass, one
``translate`` and a numpy cumsum: a few ms per MiB.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from ..errors import FormatError
from .scan import MAX_DEPTH

__all__ = ["MAX_JSON_BYTES", "json_depth", "loads_json"]

#: Largest JSON document decoded (UTF-8 bytes). python-blosc2's schema documents and
#: xarray-blosc2's manifests take kilobytes; decoding takes up to ~20 bytes of Python objects
#: per byte of text (``[[],[],...``), so 16 MiB keeps a hostile document's objects in the
#: hundreds of MiB.
MAX_JSON_BYTES = 16 << 20
#: brackets summed per numpy call (the running depth is carried between pieces)
PIECE = 1 << 20

# a JSON string once its escapes are dropped: from a quote to the next one, or to the end
_STRING = re.compile(rb'"[^"]*(?:"|\Z)')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def json_depth(text: bytes) -> int:
    """The deepest nesting of arrays and objects in the UTF-8 JSON ``text`` (brackets inside
    strings do not count), without recursion.

    >>> json_depth(b'{"a": [1, [2, "]]]"], {}]}'), json_depth(b"3")
    (3, 0)
    """
    unescaped = text.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = _STRING.sub(b"", unescaped).translate(None, _NOT_BRACKETS)
    steps = _OPEN[np.frombuffer(brackets, dtype=np.uint8)]
    depth, deepest = 0, 0
    for start in range(0, len(steps), PIECE):
        running = np.cumsum(steps[start : start + PIECE], dtype=np.int64)
        deepest = max(deepest, depth + int(running.max()))
        depth += int(running[-1])
    return deepest


def loads_json(
    doc: str | bytes,
    where: str,
    field: str,
    *,
    max_depth: int = MAX_DEPTH,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """The value of the JSON document ``doc`` (a str or UTF-8 bytes), checked first (see the
    module docstring); ``where`` and ``field`` name it in a :class:`FormatError`.

    >>> loads_json('{"columns": [{"name": "x"}]}', "CTable", "schema")
    {'columns': [{'name': 'x'}]}
    >>> try:
    ...     loads_json("[" * 100 + "]" * 100, "CTable", "/_meta vlmeta 'schema'")
    ... except FormatError as exc:
    ...     print(exc)
    CTable: /_meta vlmeta 'schema' JSON nesting depth is 100, expected at most 64
    """
    if len(doc) > max_bytes:  # a str takes at least as many UTF-8 bytes as characters
        raise FormatError(where, f"{field} JSON size", None, f"at most {max_bytes} bytes", len(doc))
    if isinstance(doc, str):
        text, raw = doc, doc.encode("utf-8", "surrogatepass")
        if len(raw) > max_bytes:
            raise FormatError(
                where, f"{field} JSON size", None, f"at most {max_bytes} bytes", len(raw)
            )
    else:
        raw = bytes(doc)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(where, f"{field} JSON", exc.start, "UTF-8", exc.reason) from None
    depth = json_depth(raw)
    if depth > max_depth:
        raise FormatError(where, f"{field} JSON nesting depth", None, f"at most {max_depth}", depth)
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, an int of more than 4300 digits
        raise FormatError(where, f"{field} JSON", getattr(exc, "pos", None), "JSON", exc) from None
