"""``pyblosc2 slice PATH "[0:10, ::2, 5]"``: parse a numpy-style index with :mod:`ast`
(never ``eval``) and read only the chunks and blocks it touches.

>>> parse_index("[0:10, ::2, 5]")
(slice(0, 10, None), slice(None, None, 2), 5)
>>> parse_index("[..., -1]")
(Ellipsis, -1)
>>> parse_index("[__import__('os')]")
Traceback (most recent call last):
...
pyblosc2.errors.ParamError: index: expected integers, slices and ..., got "__import__('os')"
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..errors import ParamError

__all__ = ["parse_index", "raw_items_note", "read_slice"]


def _int(node: ast.expr | None, text: str) -> int | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    raise ParamError(
        f"index: expected integers, slices and ..., got {ast.get_source_segment(text, node)!r}"
    )


def _item(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Slice):
        return slice(_int(node.lower, text), _int(node.upper, text), _int(node.step, text))
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return Ellipsis
    value = _int(node, text)
    if value is None:
        raise ParamError("index: None is not an index here")
    return value


def parse_index(text: str) -> tuple[Any, ...]:
    """A tuple of ints, slices and Ellipsis from ``"[a:b:c, i, ...]"`` (brackets optional)."""
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    source = f"_[{body}]" if body.strip() else "_[()]"
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ParamError(f"index: cannot parse {text!r} ({exc.msg})") from None
    sub = tree.body
    if not isinstance(sub, ast.Subscript):
        raise ParamError(f"index: cannot parse {text!r}")
    key = sub.slice
    if isinstance(key, ast.Tuple):
        return tuple(_item(e, source) for e in key.elts)
    return (_item(key, source),)


def read_slice(kind: str, obj: Any, key: tuple[Any, ...], dtype: str | None) -> np.ndarray:
    """``obj[key]`` for an NDArray; for an SChunk or a chunk, of its items as a 1-d array of
    ``dtype`` (unsigned ints of the typesize by default), reading only what the slice
    covers."""
    if kind == "ndarray":
        return np.asarray(obj[key])
    from .arrays import FrameArray
    from .codec_io import parse_dtype

    flat = FrameArray(kind, obj, parse_dtype(dtype) if dtype else None)
    key = tuple(k for k in key if k is not Ellipsis)
    if len(key) > 1:
        raise ParamError(f"index: a 1-d {kind} takes one index, got {len(key)}")
    n = flat.shape[0]
    k = key[0] if key else slice(None)
    if isinstance(k, int):
        if not -n <= k < n:
            raise IndexError(f"index {k} is out of bounds for {n} items")
        k %= n
        return flat.rows(k, k + 1)[0]
    start, stop, step = k.indices(n)
    if step > 0:
        lo, hi = start, max(stop, start)
        return flat.rows(lo, hi)[::step] if hi > lo else flat.rows(0, 0)
    lo, hi = stop + 1, start + 1
    return flat.rows(lo, hi)[::-1][::-step] if hi > lo else flat.rows(0, 0)


def raw_items_note(kind: str, dtype: np.dtype) -> str:
    """What ``slice`` says when it shows an SChunk's (or chunk's) items as raw integers.

    >>> raw_items_note("schunk", np.dtype("u8"))  # doctest: +NORMALIZE_WHITESPACE
    'note: an SChunk records only its typesize (8 bytes), not a dtype: showing raw uint64
    items; pass --dtype (e.g. --dtype float64) to read them as another type'
    """
    what = "an SChunk" if kind == "schunk" else "a chunk"
    example = {8: "float64", 4: "float32", 2: "int16", 1: "int8"}.get(dtype.itemsize, "S1")
    return (
        f"note: {what} records only its typesize ({dtype.itemsize} bytes), not a dtype: "
        f"showing raw {dtype} items; pass --dtype (e.g. --dtype {example}) to read them as "
        "another type"
    )
