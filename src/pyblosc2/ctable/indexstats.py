"""A column's ``min``/``max`` from its index's segment summaries (python-blosc2's
``_summary_minmax_source`` and ``_index_summary_minmax``): the ``(min, max, flags)`` of each
block of rows, reduced without reading the column, where that is provably the scan's answer.

It is not when the table is a view, has holes (a deleted row still sits in its block's
extrema), the index is stale or of an older value epoch, or the column is nullable and the
summaries were not taken over its values only (``null_aware``; a NaN-sentinel float's nulls
are NaN, left out anyway). Summaries cover whole blocks of physical rows, capacity included:
only the blocks below the row count are reduced, the block straddling it is read.

>>> import dataclasses
>>> from pyblosc2.ctable import CTable
>>> @dataclasses.dataclass
... class Row:
...     x: int = 0
>>> t = CTable(Row, new_data=[(i,) for i in range(10, 60)])
>>> _ = t.create_index("x", kind="summary")
>>> int(summary_minmax(t["x"], "min")), int(summary_minmax(t["x"], "max"))
(10, 59)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..indexes.kinds import FLAG_ALL_NAN, FLAG_HAS_NAN
from ..indexes.query import _Rows
from .indexplan import _Planner
from .nulls import NULL_MASK, NULL_SENTINEL, null_kind, sentinel_mask

__all__ = ["rank_index_mask", "summary_minmax", "summary_minmax_source"]


def _nan_sentinel(spec: Any) -> bool:
    nv = getattr(spec, "null_value", None)
    return isinstance(nv, float | np.floating) and bool(np.isnan(nv))


def summary_minmax_source(column: Any) -> tuple[Any, np.dtype, bool, bool, int] | None:
    """``(summary piece, dtype, nullable, nan_is_data, segment_len)`` of a column whose
    min/max the summaries answer exactly, or None."""
    table = column._table
    name = column._col_name
    if table.base is not None or name not in table._cols or name in table._computed_cols:
        return None
    dtype = np.dtype(getattr(table._cols[name], "dtype", object))
    if getattr(table._cols[name], "ndim", 0) != 1 or dtype.kind not in "biufUS":
        return None
    spec = table._column_defs[name].spec
    nullable = null_kind(spec) != "none"
    d = table._get_index_catalog().get(name)
    epoch = table._storage.get_epoch_counters()[0]
    if not d or d.get("stale", False) or d.get("built_value_epoch", epoch) != epoch:
        return None
    if (d.get("target") or {}).get("source") == "expression":
        return None
    if nullable and not (dtype.kind == "f" and _nan_sentinel(spec)) and not d.get("null_aware"):
        return None
    if table._n_rows != table._last_pos:  # holes: physical and logical rows differ
        return None
    levels = d.get("levels") or {}
    level = "block" if "block" in levels else next(iter(levels), None)
    if level is None:
        return None
    found = _Planner(table, {name: d}, {})._open(name)
    if found is None:
        return None
    piece = _Rows(found[0], found[1]).whole(f"summary.{level}")
    segment_len = int(levels[level]["segment_len"])
    nan_is_data = dtype.kind == "f" and not _nan_sentinel(spec)
    return piece, dtype, nullable, nan_is_data, segment_len


def _tail(column: Any, a: int, b: int, nan_is_data: bool, op: str) -> Any:
    """The extremum of physical rows ``a:b`` by hand, nulls skipped (None: none there;
    NotImplemented: a NaN that is data)."""
    table, name = column._table, column._col_name
    seg = np.asarray(table._cols[name][a:b])
    spec = table._column_defs[name].spec
    how = null_kind(spec)
    if how == NULL_SENTINEL:
        seg = seg[~sentinel_mask(seg, spec.null_value)]
    elif how == NULL_MASK:
        mask = getattr(table, "_null_mask")(name)  # noqa: B009  (nullstore's)
        if mask is not None:
            seg = seg[np.asarray(mask[a:b], dtype=bool)]
    if seg.dtype.kind == "f" and seg.size:
        nan = np.isnan(seg)
        if nan.any():
            if nan_is_data:
                return NotImplemented
            seg = seg[~nan]
    if not seg.size:
        return None
    if seg.dtype.kind in "US":
        return min(seg) if op == "min" else max(seg)
    return seg.min() if op == "min" else seg.max()


def summary_minmax(column: Any, op: str) -> Any:
    """The column's ``op`` (``"min"``/``"max"``) from the summaries, or NotImplemented."""
    source = summary_minmax_source(column)
    if source is None or op not in ("min", "max"):
        return NotImplemented
    piece, dtype, _, nan_is_data, seg = source
    n = int(column._table._n_rows)
    if n == 0:
        return NotImplemented
    whole = min(n // seg, len(piece))
    flags = np.asarray(piece["flags"][:whole])
    if nan_is_data and bool((flags & FLAG_HAS_NAN).any()):
        return NotImplemented
    vals = np.asarray(piece[op][:whole])[(flags & FLAG_ALL_NAN) == 0]
    if whole * seg < n:
        last = _tail(column, whole * seg, n, nan_is_data, op)
        if last is NotImplemented:
            return NotImplemented
        if last is not None:
            vals = np.concatenate([vals, np.asarray([last], dtype=dtype)])
    if not vals.size:
        return NotImplemented
    if vals.dtype.kind in "US":  # numpy has no min/max of strings
        return min(vals) if op == "min" else max(vals)
    return vals.min() if op == "min" else vals.max()


def rank_index_mask(column: Any, value: Any) -> np.ndarray | None:
    """The physical rows of a dictionary (or utf8) column equal to ``value``, read from its
    current rank index (python-blosc2's ``_dictionary_index_mask``), or None without one. A
    value the column does not hold matches no row."""
    table, name = column._table._root_table(), column._col_name
    d = table._get_index_catalog().get(name)
    epoch = table._storage.get_epoch_counters()[0]
    if not d or d.get("stale", False) or d.get("built_value_epoch", epoch) != epoch:
        return None
    full = d.get("full") or {}
    if "dict_rank" in full:
        vocab = sorted(str(v) for v in table._cols[name].dictionary)
        if full["dict_rank"].get("dict_len") != len(vocab):
            return None
    elif "utf8_rank" in full and isinstance(full["utf8_rank"].get("vocab"), list):
        vocab = [str(v) for v in full["utf8_rank"]["vocab"]]
    else:
        return None
    n = table._physical_len()
    i = int(np.searchsorted(np.asarray(vocab, dtype=object), str(value)))
    if i >= len(vocab) or vocab[i] != str(value):
        return np.zeros(n, bool)
    found = _Planner(table, {name: d}, {})._open(name)
    if found is None:
        return None
    m = _Rows(*found).mask(np.int32(i), np.int32(i))
    return m[:n] if len(m) >= n else np.concatenate([m, np.zeros(n - len(m), bool)])
