"""Ordered access: the rows of an array, or of a filter of it, in the order of one or more
keys (fields, or expressions of fields such as ``abs(x)``), read from a FULL index of the
first key where there is a current one (its positions are the stable order of that key),
else computed from the key's values. Later keys break the ties of earlier ones, and rows
still tied keep their array order (numpy's stable sort).

>>> import numpy as np; from pyblosc2 import asarray
>>> a = asarray(np.array([(3, 1.0), (-1, 2.0), (2, 3.0)], dtype=[("x", "i4"), ("y", "f4")]))
>>> order_positions(a, ["abs(x)"], None).tolist()
[1, 2, 0]
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from ..errors import ParamError
from . import store as _store
from .descriptor import components, rows_of
from .store import load_store, open_sidecar
from .target import canonical, values_of

__all__ = ["full_index_for", "keys_of", "order_positions"]

#: positions read at a time when streaming a FULL index's order
WINDOW = 65_536


def keys_of(order: Any) -> list[str] | None:
    """``order`` as a list of keys (None for none).

    >>> keys_of("a"), keys_of(["a", "b"]), keys_of(None)
    (['a'], ['a', 'b'], None)
    """
    if order is None:
        return None
    return [order] if isinstance(order, str) else [str(k) for k in order]


def _key_target(array: Any, key: str) -> dict[str, Any]:
    names = array.dtype.names or ()
    if key in names:
        return {"source": "field", "field": key}
    ops = dict(array.fields) if names else {"value": array}
    try:
        found = canonical(ast.parse(key, mode="eval").body, ops)
    except SyntaxError as exc:
        raise ParamError(f"unknown field name: {key}") from exc
    if found is None or found[0] is not array:
        raise ParamError(f"unknown field name: {key}")
    return {
        "source": "expression",
        "expression": key,
        "expression_key": found[1],
        "dependencies": found[2],
    }


def full_index_for(array: Any, key: str) -> dict[str, Any] | None:
    """A current FULL index of ``key`` (a field or an expression of fields), or None."""
    target = _key_target(array, key)
    for d in load_store(array)["indexes"].values():
        if d["kind"] != "full" or d.get("stale") or rows_of(d) != array.shape[0]:
            continue
        t = d["target"]
        if t["source"] == target["source"] == "field" and t.get("field") == target["field"]:
            return d
        if t["source"] == target["source"] == "expression" and (
            t.get("expression_key") == target["expression_key"]
        ):
            return d
    return None


def _full_positions(array: Any, d: dict[str, Any], member: np.ndarray | None) -> np.ndarray:
    """The stable order of a FULL index's key (of the rows ``member`` marks): its sorted
    positions streamed a window at a time, or, with appended runs, the base and runs read
    whole and merged."""
    parts = {c.label: c for c in components(array, d)}
    n = int(array.shape[0])

    def whole(label: str) -> np.ndarray:
        c = parts[label]
        return _store.load_whole(array, d["token"], c.category, c.name, c.path)

    runs = d["full"].get("runs", [])
    if runs:
        v = np.concatenate(
            [whole("full.values")] + [whole(f"full_run.{int(r['id'])}.values") for r in runs]
        )
        p = np.concatenate(
            [whole("full.positions")] + [whole(f"full_run.{int(r['id'])}.positions") for r in runs]
        )
        p = p[np.lexsort((p, v))]
        out = [p]
    else:
        c = parts["full.positions"]
        handle = open_sidecar(array, d, c.category, c.name, c.path, c.dtype, c.length)
        out = []
        for a in range(0, n, WINDOW):
            w = np.asarray(handle[a : a + WINDOW], dtype=np.int64)
            if w.size and (w.min() < 0 or w.max() >= n):
                raise ParamError("a FULL index whose positions do not cover its array")
            out.append(w if member is None else w[member[w]])
    p = np.concatenate(out) if out else np.empty(0, np.int64)
    if runs and len(p) != n:
        raise ParamError("a FULL index whose positions do not cover its array")
    return p if member is None or not runs else p[member[p]]


def order_positions(
    array: Any, keys: list[str], rows: np.ndarray | None, full: dict[str, Any] | None = None
) -> np.ndarray:
    """The positions of ``rows`` (sorted positions; None: all rows) in the order of
    ``keys`` (or of the FULL index ``full``)."""
    n = int(array.shape[0])
    d = full if full is not None else full_index_for(array, keys[0])
    if d is not None:
        member = None
        if rows is not None:
            member = np.zeros(n, bool)
            member[rows] = True
        pos = _full_positions(array, d, member)
        if len(keys) <= 1:
            return pos
        data = array[()][pos]
        first = values_of(data, _key_target(array, keys[0]))
        group = np.r_[0, np.cumsum(first[1:] != first[:-1])] if len(first) else first
        later = [values_of(data, _key_target(array, k)) for k in keys[1:]]
        return pos[np.lexsort((*reversed(later), group))]
    data = array[()] if rows is None else array[()][rows]
    vals = [values_of(data, _key_target(array, k)) for k in keys]
    order = np.lexsort(tuple(reversed(vals))) if vals else np.arange(len(data))
    base = np.arange(n) if rows is None else rows
    return base[order]
