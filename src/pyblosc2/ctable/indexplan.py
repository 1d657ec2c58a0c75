"""Answering a CTable condition through the table's indexes (python-blosc2's
``_try_index_where``, planned as :mod:`pyblosc2.indexes.query` plans an NDArray filter).

Each comparison of an indexed column (or of a subexpression an expression index covers,
matched by its canonical text over column names) with a constant becomes an interval of
stored values; its index gives the physical rows that can hold them (a superset: bounds
widened to the stored dtype, BUCKET values quantized), ``&`` intersects, ``|`` unites, a
term no index answers allows every row under ``&`` and disables the plan under ``|``. The
whole condition is then evaluated by the engine on the spans of blocks holding allowed rows
only, so the rows found are the ones a scan finds.

>>> import dataclasses
>>> from pyblosc2.ctable import CTable
>>> @dataclasses.dataclass
... class Row:
...     a: int = 0
>>> t = CTable(Row, new_data=[(i,) for i in range(20)])
>>> _ = t.create_index("a", kind="partial")
>>> np.flatnonzero(plan_mask(t, t._get_index_catalog(), "(o0 >= 17)", {"o0": t._cols["a"]}))
array([17, 18, 19])
"""

from __future__ import annotations

import ast
import os
from typing import Any

import numpy as np

from ..compute.api import ne_evaluate
from ..errors import FormatError
from ..indexes.descriptor import rows_of
from ..indexes.kinds import FLAG_ALL_NAN
from ..indexes.query import MaskPlanner, _NoPlan, _Rows, _spans
from ..ndarray.ndarray import NDArray
from .indexcat import WHERE, Anchor, query_store
from .nulls import NULL_MASK, NULL_SENTINEL, null_kind

__all__ = ["plan_mask"]

_SCALARS = (np.generic, int, float, bool, str, bytes, complex)
#: above this many blocks, an index whose rows are in most of them is not read through
MIN_GATED_BLOCKS = 8


def _is_expression(d: dict[str, Any]) -> bool:
    return (d.get("target") or {}).get("source") == "expression"


class _Planner(MaskPlanner):
    def __init__(self, root: Any, catalog: dict[str, Any], operands: dict[str, Any]) -> None:
        self.root, self.catalog, self.operands = root, catalog, operands
        self.n = root._physical_len()
        self.col_of = {id(a): n for n, a in root._cols.items() if isinstance(a, NDArray)}
        self.exprs = {
            d["target"].get("expression_key"): k for k, d in catalog.items() if _is_expression(d)
        }
        self.found: dict[str, tuple[Any, dict[str, Any]] | None] = {}
        self.keys: dict[int, str] = {}
        self.used = False

    def _open(self, key: str) -> tuple[Any, dict[str, Any]] | None:
        """The anchor of index ``key`` and its checked descriptor (None: not readable here)."""
        if key in self.found:
            return self.found[key]
        d = self.catalog[key]
        n = rows_of(d, f"index_catalog[{key!r}]")
        held = self.root._index_anchors().get(key)
        out: tuple[Any, dict[str, Any]] | None = None
        if held is not None:  # an in-memory index: its pieces belong to this object
            out = held, query_store(held, key, d)
        elif d.get("persistent"):
            index_dir = self.root._index_dir(key)
            if index_dir is not None:
                name = "values.b2nd" if _is_expression(d) else "_anchor"
                anchor = Anchor(None, os.path.join(index_dir, name), n, np.dtype("u1"), 1, 1)
                anchor.members = self.root._storage.index_members(key)
                out = anchor, query_store(anchor, key, d)
        ranked = {"dict_rank", "utf8_rank"} & set(d.get("full") or {})
        if out is not None and not _is_expression(d):  # a text column's: int32 ranks
            col = self.root._cols[key]
            want = np.dtype(np.int32) if ranked else np.dtype(col.dtype)
            if np.dtype(out[1]["dtype"]) != want:
                raise FormatError(WHERE, f"index_catalog[{key!r}].dtype", None, want, d["dtype"])
        if out is not None:
            self.keys[id(out[0])] = key
        self.found[key] = out
        return out

    def _skip_term(self, anchor: Any, d: dict[str, Any], lo: Any, hi: Any) -> bool:
        """Whether null-aware summaries (their extrema over the valid rows only) could leave
        out a null row the condition compares: a sentinel inside the interval, or a mask
        column holding nulls."""
        key = self.keys.get(id(anchor))
        if d["kind"] != "summary" or not d.get("null_aware") or key not in self.root._cols:
            return False
        spec = self.root._column_defs[key].spec
        how = null_kind(spec)
        if how == NULL_MASK:
            return getattr(self.root, "_null_mask")(key) is not None  # noqa: B009
        if how != NULL_SENTINEL:
            return False
        nv = spec.null_value
        with np.errstate(invalid="ignore"):
            return bool((lo is None or not nv < lo) and (hi is None or not nv > hi))

    def _index_for(self, node: ast.AST) -> tuple[Any, dict[str, Any]] | None:
        if isinstance(node, ast.Name):
            op = self.operands.get(node.id)
            name = self.col_of.get(id(op)) if op is not None else None
            if name is not None and name in self.catalog and not _is_expression(self.catalog[name]):
                return self._open(name)
            return None
        if not self.exprs:
            return None
        ok = [True]
        col_of, operands = self.col_of, self.operands

        class _Names(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                if n.id not in operands:
                    return n  # a function's name
                name = col_of.get(id(operands[n.id]))
                if name is None:
                    ok[0] = False
                    return n
                return ast.copy_location(ast.Name(id=name, ctx=n.ctx), n)

        text = ast.unparse(_Names().visit(ast.parse(ast.unparse(node), mode="eval").body))
        key = self.exprs.get(text)
        return self._open(key) if ok[0] and key is not None else None

    @staticmethod
    def _selective(rows: _Rows, lo: Any, hi: Any) -> bool:
        """Whether the block summaries leave out most blocks for ``lo..hi`` (else reading
        the sorted payload costs more than the scan it would spare)."""
        levels = rows.d.get("levels") or {}
        if "block" not in levels:
            return True
        s = rows.whole("summary.block")
        ok = rows._overlap(s["min"], s["max"], lo, hi) & ((s["flags"] & FLAG_ALL_NAN) == 0)
        return len(ok) <= MIN_GATED_BLOCKS or int(np.count_nonzero(ok)) <= len(ok) // 2

    def _span_mask(self, anchor: Any, d: dict[str, Any], lo: Any, hi: Any) -> np.ndarray | None:
        """The rows index ``d`` allows for ``lo..hi`` (None: it would not spare a scan)."""
        rows = _Rows(anchor, d)
        if d["kind"] != "summary" and not self._selective(rows, lo, hi):
            return None
        m = rows.mask(lo, hi)
        self.used = True
        if len(m) >= self.n:
            return m[: self.n]
        return np.concatenate([m, np.zeros(self.n - len(m), bool)])


def plan_mask(
    root: Any, catalog: dict[str, Any], expression: str, operands: dict[str, Any]
) -> np.ndarray | None:
    """A bool mask of ``root``'s physical rows where ``expression`` over ``operands`` holds,
    found through the current indexes of ``catalog``; None when none of them helps."""
    n = root._physical_len()
    arrays = []
    for v in operands.values():
        if isinstance(v, NDArray):
            if v.ndim != 1 or v.shape[0] < n:
                return None
            arrays.append(v)
        elif not isinstance(v, _SCALARS):
            return None  # a computed column, a nested expression: the scan's
    if not arrays:
        return None
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return None
    planner = _Planner(root, catalog, operands)
    try:
        mask = planner.node(tree.body)
    except _NoPlan:
        return None
    if mask is None or not planner.used:
        return None
    block, chunk = max(1, int(arrays[0].blocks[0])), max(1, int(arrays[0].chunks[0]))
    nblocks = -(-n // block)
    touched = int(np.count_nonzero(np.logical_or.reduceat(mask, np.arange(0, n, block))))
    if nblocks > MIN_GATED_BLOCKS and touched > nblocks // 2:
        return None  # the allowed rows are in most blocks: reading them all is the scan
    out = np.zeros(n, bool)
    for a, b in _spans(mask, block, chunk):
        parts = {k: (v[a:b] if isinstance(v, NDArray) else v) for k, v in operands.items()}
        out[a:b] = np.asarray(ne_evaluate(expression, parts), bool) & mask[a:b]
    return out
