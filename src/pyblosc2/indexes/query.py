"""Answering a filter through an index: which rows can match, then the expression on those.

A filter ``cond.where(x)`` (or ``x[cond]``) over one 1-d array is planned from the text of
``cond``: each comparison of an indexed target (the array, a field, or an indexed expression
of fields) with a constant becomes an interval, ``&`` intersects the rows the intervals
allow and ``|`` unites them (a term no index answers allows every row under ``&`` and
disables the plan under ``|``). The rows an index allows are a superset of the matches: the
bounds are widened to the stored dtype, BUCKET values are quantized. The filter then reads,
chunk by chunk, only the spans holding allowed rows and evaluates the whole condition there
with the engine, so the result is the one a scan gives.

>>> import numpy as np; from pyblosc2 import asarray, IndexKind
>>> a = asarray(np.arange(1000), chunks=(100,), blocks=(20,))
>>> _ = a.create_index(kind=IndexKind.FULL)
>>> e = ((a >= 120) & (a < 125)).where(a)
>>> e.will_use_index(), e.compute()[:].tolist()
(True, [120, 121, 122, 123, 124])
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compute.api import ne_evaluate
from ..errors import FormatError
from . import store as _store
from .build import quantize
from .cache import query_descriptor
from .descriptor import components, rows_of
from .kinds import FLAG_ALL_NAN, SELF_TARGET_NAME
from .store import load_store, open_sidecar
from .target import canonical, operand_target

__all__ = ["Plan", "cache_key", "evaluate", "gather", "plan"]

_EXACT = ("full", "partial", "opsi")
#: items of a sorted run read at a time
WINDOW = 65_536
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "=="}


@dataclass
class Plan:
    """What the planner found: usable or not (and why), the index chosen, the rows allowed."""

    usable: bool
    reason: str
    descriptor: dict[str, Any] | None = None
    base: Any = None
    mask: np.ndarray | None = None
    level: str | None = None
    candidate_units: int | None = None
    total_units: int | None = None


class _NoPlan(Exception):
    pass


def _literal(node: ast.AST, operands: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bytes):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = _literal(node.operand, operands)
        if isinstance(v, int | float | np.number) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Name) and node.id in operands:
        v = operands[node.id]
        if isinstance(v, np.generic | int | float | str | bytes):
            return v.item() if isinstance(v, np.generic) and v.dtype.kind != "M" else v
    raise _NoPlan


def _widen(dtype: np.dtype, v: Any, up: bool) -> Any:
    """A value of ``dtype`` at or beyond ``v`` (above when ``up``): candidates stay a
    superset however the engine compares ``v`` with the stored values."""
    if dtype.kind in "iu":
        if isinstance(v, float) and math.isnan(v):
            raise _NoPlan
        info = np.iinfo(dtype)
        if isinstance(v, float) and math.isinf(v):
            return info.max if v > 0 else info.min
        w = math.ceil(v) if up else math.floor(v)
        return min(max(int(w), int(info.min)), int(info.max))
    if dtype.kind == "f":
        x = np.asarray(v, dtype=np.float64)
        if np.isnan(x):
            raise _NoPlan
        with np.errstate(over="ignore"):
            c = x.astype(dtype)
        return np.nextafter(c, dtype.type(np.inf if up else -np.inf))
    try:
        return np.asarray(v).astype(dtype)[()]
    except (TypeError, ValueError, OverflowError) as exc:
        raise _NoPlan from exc


class _Rows:
    """The rows one index allows for ``lo <= value <= hi`` (None: unbounded)."""

    def __init__(self, array: Any, d: dict[str, Any]) -> None:
        self.array, self.d, self.n = array, d, int(array.shape[0])
        self.parts = {c.label: c for c in components(array, d)}
        self.dtype = np.dtype(d["dtype"])

    def piece(self, label: str) -> Any:
        """A piece, opened (read by spans)."""
        c = self.parts[label]
        return open_sidecar(self.array, self.d, c.category, c.name, c.path, c.dtype, c.length)

    def whole(self, label: str) -> np.ndarray:
        """A navigation piece (boundaries, summaries: a few items per chunk) read whole."""
        c = self.parts[label]
        return _store.load_whole(self.array, self.d["token"], c.category, c.name, c.path)

    def _windows(self, label: str, lo: Any, hi: Any) -> np.ndarray:
        """The positions a sorted run holds for ``lo..hi``, read a window at a time."""
        values, positions = self.piece(f"{label}.values"), self.piece(f"{label}.positions")
        out = []
        for a in range(0, values.shape[0], WINDOW):
            i, j = self._search(values[a : a + WINDOW], lo, hi)
            if i < j:
                out.append(positions[a + i : a + j])
        return np.concatenate(out) if out else np.empty(0, np.int64)

    def _positions(self, pos: np.ndarray, limit: int, where: str) -> np.ndarray:
        if pos.size and (int(pos.min()) < 0 or int(pos.max()) >= limit):
            raise FormatError(
                "index sidecar",
                where,
                None,
                f"positions in 0..{limit - 1}",
                f"{int(pos.min())}..{int(pos.max())}",
            )
        return pos

    def _search(self, vals: np.ndarray, lo: Any, hi: Any) -> tuple[int, int]:
        i = 0 if lo is None else int(np.searchsorted(vals, lo, "left"))
        if hi is not None:
            j = int(np.searchsorted(vals, hi, "right"))
        elif vals.dtype.kind == "f":
            j = int(np.searchsorted(vals, np.nan, "left"))
        else:
            j = len(vals)
        return i, max(i, j)

    @staticmethod
    def _overlap(start: np.ndarray, end: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
        ok = np.ones(len(start), bool)
        with np.errstate(invalid="ignore"):
            if lo is not None:
                ok &= end >= lo
            if hi is not None:
                ok &= start <= hi
            if start.dtype.kind == "f":
                ok &= ~np.isnan(start)
        return ok

    def mask(self, lo: Any, hi: Any) -> np.ndarray:
        kind = self.d["kind"]
        out = np.zeros(self.n, bool)
        if kind == "full":
            self._full(out, lo, hi)
        elif kind in ("partial", "bucket"):
            self._chunk_local(out, kind, lo, hi)
        elif kind == "opsi":
            self._opsi(out, lo, hi)
        else:
            self._summary(out, lo, hi)
        return out

    def _full(self, out: np.ndarray, lo: Any, hi: Any) -> None:
        full = self.d["full"]
        clen = int(full["sidecar_chunk_len"])
        base = self.parts["full.values"].length
        l1 = self.whole("full_nav.l1")
        ok = np.flatnonzero(self._overlap(l1["start"], l1["end"], lo, hi))
        if len(ok):
            a, b = int(ok[0]) * clen, min(base, (int(ok[-1]) + 1) * clen)
            i, j = self._search(self.piece("full.values")[a:b], lo, hi)
            out[self._positions(self.piece("full.positions")[a + i : a + j], self.n, "full")] = True
        for run in full.get("runs", []):
            rid = int(run["id"])
            pos = self._windows(f"full_run.{rid}", lo, hi)
            out[self._positions(pos, self.n, f"full_run.{rid}")] = True

    def _chunk_local(self, out: np.ndarray, kind: str, lo: Any, hi: Any) -> None:
        p = self.d[kind]
        chunk_len = int(p["chunk_len"])
        offsets = self.piece(f"{kind}.offsets")
        if kind == "bucket":
            bits, blen = int(p["value_lossy_bits"]), int(p["bucket_len"])
            lo = None if lo is None else quantize(np.asarray([lo], self.dtype), bits)[0]
            hi = None if hi is None else quantize(np.asarray([hi], self.dtype), bits)[0]
        l1 = self.whole(f"{kind}_nav.l1")
        values = self.piece(f"{kind}.values")
        aux = self.piece(f"{kind}.bucket_positions" if kind == "bucket" else f"{kind}.positions")
        for c in np.flatnonzero(self._overlap(l1["start"], l1["end"], lo, hi)):
            a, b = int(c) * chunk_len, min(self.n, (int(c) + 1) * chunk_len)
            got = offsets[int(c) : int(c) + 2]
            if got.tolist() != [a, b]:  # the chunk's span, as the offsets piece must say
                raise FormatError("index sidecar", f"{kind}.offsets", None, [a, b], got.tolist())
            i, j = self._search(values[a:b], lo, hi)
            if i == j:
                continue
            local = aux[a + i : a + j].astype(np.int64)
            if kind == "partial":
                out[a + self._positions(local, b - a, "partial.positions")] = True
            else:
                for k in np.unique(self._positions(local, math.ceil((b - a) / blen), "bucket")):
                    out[a + int(k) * blen : min(b, a + (int(k) + 1) * blen)] = True

    def _opsi(self, out: np.ndarray, lo: Any, hi: Any) -> None:
        blen = int(self.d["opsi"]["block_len"])
        mins, maxs = self.whole("opsi_nav.mins"), self.whole("opsi_nav.maxs")
        ok = np.ones(len(mins), bool)
        with np.errstate(invalid="ignore"):
            if lo is not None:
                ok &= (maxs >= lo) | (np.isnan(maxs) if maxs.dtype.kind == "f" else False)
            if hi is not None:
                ok &= mins <= hi
        values, positions = self.piece("opsi.values"), self.piece("opsi.positions")
        for blk in np.flatnonzero(ok):
            a, b = int(blk) * blen, min(self.n, (int(blk) + 1) * blen)
            v = values[a:b]
            sel = np.ones(len(v), bool)
            with np.errstate(invalid="ignore"):
                if lo is not None:
                    sel &= v >= lo
                if hi is not None:
                    sel &= v <= hi
            if sel.any():
                out[self._positions(positions[a:b][sel], self.n, "opsi.positions")] = True

    def _summary(self, out: np.ndarray, lo: Any, hi: Any) -> None:
        levels = self.d["levels"]
        level = next(lv for lv in ("subblock", "block", "chunk") if lv in levels)
        seg = int(levels[level]["segment_len"])
        s = self.whole(f"summary.{level}")
        ok = self._overlap(s["min"], s["max"], lo, hi) & ((s["flags"] & FLAG_ALL_NAN) == 0)
        for k in np.flatnonzero(ok):
            out[int(k) * seg : (int(k) + 1) * seg] = True


class MaskPlanner:
    """The rows a condition's indexes allow, as a bool mask (the walk shared by an array's
    filters here and a table's ``where``, :mod:`pyblosc2.ctable.indexplan`): a comparison of
    an indexed target with a constant is an interval of stored values, ``&`` intersects (the
    intervals of one index first: a BUCKET or summary answers a range much more tightly than
    its two halves), ``|`` unites, a term no index answers allows every row under ``&`` and
    disables the plan under ``|``. Subclasses find indexes (``_index_for``) and read them
    (``_span_mask``)."""

    operands: dict[str, Any]

    def _index_for(self, node: ast.AST) -> tuple[Any, dict[str, Any]] | None:
        raise NotImplementedError

    def _span_mask(self, base: Any, d: dict[str, Any], lo: Any, hi: Any) -> np.ndarray | None:
        """The rows index ``d`` allows for ``lo..hi`` (None: no information)."""
        raise NotImplementedError

    def _skip_term(self, base: Any, d: dict[str, Any], lo: Any, hi: Any) -> bool:
        """Whether this comparison is taken as a term no index answers."""
        return False

    def _terms(self, node: ast.Compare) -> list[tuple[Any, dict[str, Any], Any, Any]]:
        """The comparisons of indexed targets in ``node``, as ``(base, descriptor, lo,
        hi)`` intervals of stored values (None: unbounded)."""
        lefts = [node.left, *node.comparators[:-1]]
        out = []
        for left, op, right in zip(lefts, node.ops, node.comparators, strict=True):
            sym = _OPS.get(type(op))
            if sym is None:
                raise _NoPlan
            found, other = self._index_for(left), right
            if found is None:
                found, other, sym = self._index_for(right), left, _FLIP[sym]
            if found is None:
                continue
            base, d = found
            v = _literal(other, self.operands)
            dtype = np.dtype(d["dtype"])
            lo = _widen(dtype, v, False) if sym in (">", ">=", "==") else None
            hi = _widen(dtype, v, True) if sym in ("<", "<=", "==") else None
            if not self._skip_term(base, d, lo, hi):
                out.append((base, d, lo, hi))
        return out

    def _and(self, kids: list[ast.AST]) -> np.ndarray | None:
        """A conjunction: the intervals of one index intersected before it is asked, the
        other terms' rows intersected after."""
        spans: dict[tuple[int, Any], list[Any]] = {}
        masks = []
        todo = list(kids)
        while todo:
            k = todo.pop()
            if isinstance(k, ast.Compare):
                for base, d, lo, hi in self._terms(k):
                    cur = spans.setdefault((id(base), d.get("token")), [base, d, None, None])
                    cur[2] = lo if cur[2] is None else (cur[2] if lo is None else max(cur[2], lo))
                    cur[3] = hi if cur[3] is None else (cur[3] if hi is None else min(cur[3], hi))
            elif _is_and(k):
                todo += _kids(k)
            else:
                m = self.node(k)
                if m is not None:
                    masks.append(m)
        for base, d, lo, hi in spans.values():
            m = self._span_mask(base, d, lo, hi)
            if m is not None:
                masks.append(m)
        if not masks:
            return None
        out = masks[0].copy()
        for m in masks[1:]:
            np.logical_and(out, m, out=out)
        return out

    def node(self, node: ast.AST) -> np.ndarray | None:
        """Allowed rows (None: no information)."""
        if isinstance(node, ast.Compare) or _is_and(node):
            return self._and([node] if isinstance(node, ast.Compare) else _kids(node))
        if not _is_or(node):
            return None
        out: np.ndarray | None = None
        for k in _kids(node):
            m = self.node(k)
            if m is None:
                return None  # a term no index answers could match any row
            out = m.copy() if out is None else np.logical_or(out, m, out=out)
        return out


class _Planner(MaskPlanner):
    def __init__(self, operands: dict[str, Any], bases: list[Any]) -> None:
        self.operands = operands
        self.stores = {id(b): (b, load_store(b)["indexes"]) for b in bases}
        self.used: dict[str, Any] | None = None
        self.used_base: Any = None
        self.targets: set[tuple[int, str]] = set()

    def usable_somewhere(self) -> bool:
        return any(
            not d.get("stale", False) for _, store in self.stores.values() for d in store.values()
        )

    def _index_for(self, node: ast.AST) -> tuple[Any, dict[str, Any]] | None:
        found = canonical(node, self.operands)
        if found is None or id(found[0]) not in self.stores:
            return None
        base, store = self.stores[id(found[0])]
        key = found[1]
        for d in store.values():
            if d.get("stale", False) or rows_of(d) != base.shape[0]:
                continue  # not of the array as it is now
            t = d["target"]
            if t["source"] == "field" and key == (t.get("field") or SELF_TARGET_NAME):
                return base, d
            if t["source"] == "expression" and t["expression_key"] == key:
                return base, d
        return None

    def _span_mask(self, base: Any, d: dict[str, Any], lo: Any, hi: Any) -> np.ndarray | None:
        self.targets.add((id(base), d["token"]))
        if self.used is None:
            self.used, self.used_base = d, base
        return _Rows(base, d).mask(lo, hi)


def _is_and(node: ast.AST) -> bool:
    return (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And)) or (
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd)
    )


def _is_or(node: ast.AST) -> bool:
    return (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or)) or (
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)
    )


def _kids(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    assert isinstance(node, ast.BinOp)
    return [node.left, node.right]


def _bases_of(operands: dict[str, Any]) -> list[Any] | None:
    """The distinct arrays a condition reads (1-d, of one shape), or None."""
    bases: dict[int, Any] = {}
    for op in operands.values():
        t = operand_target(op)
        if t is None:
            if isinstance(op, np.generic | int | float | str | bytes):
                continue
            return None
        bases.setdefault(id(t[0]), t[0])
    found = list(bases.values())
    if not found or found[0].ndim != 1 or any(b.shape != found[0].shape for b in found):
        return None
    return found


def _base_of(operands: dict[str, Any]) -> Any:
    bases = _bases_of(operands)
    return bases[0] if bases is not None and len(bases) == 1 else None


def plan(expression: str, operands: dict[str, Any], x: Any, use_index: bool = True) -> Plan:
    """The index plan of the filter ``expression``.where(``x``): its comparisons answered
    by the indexes of whichever of its arrays have one, the rest checked on the rows they
    allow."""
    if not use_index:
        return Plan(False, "index usage disabled for this query")
    bases = _bases_of(operands)
    if bases is None:
        return Plan(False, "the operands are not 1-D arrays of one shape")
    if x is None or getattr(x, "shape", None) != bases[0].shape:
        return Plan(False, "indexing is only available for where(x) style filtering")
    p = _Planner(operands, bases)
    if not p.usable_somewhere():
        return Plan(False, "no usable index was found for this predicate")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return Plan(False, "expression is not valid Python syntax for planning")
    try:
        mask = p.node(tree.body)
    except _NoPlan:
        mask = None
    if mask is None or p.used is None:
        return Plan(False, "no usable index was found for this predicate")
    base = p.used_base
    blen = max(1, int(base.blocks[0]))
    nblocks = math.ceil(base.shape[0] / blen)
    touched = (
        int(np.count_nonzero(np.logical_or.reduceat(mask, np.arange(0, len(mask), blen))))
        if len(mask)
        else 0
    )
    exact = p.used["kind"] in _EXACT
    level = (
        "exact"
        if exact
        else next((lv for lv in ("subblock", "block", "chunk") if lv in p.used["levels"]), None)
    )
    usable = exact or touched < nblocks
    if not usable:
        reason = "available index does not prune any units"
    elif exact:
        many = len(p.targets) > 1
        reason = "multi-field positional indexes selected" if many else "positional index selected"
    else:
        reason = f"{level} summaries selected"
    return Plan(usable, reason, p.used, base, mask, level, touched, nblocks)


def _spans(mask: np.ndarray, block: int, chunk: int) -> list[tuple[int, int]]:
    """The row spans to read: each run of consecutive blocks holding allowed rows (cut at
    chunk ends), trimmed to its first and last allowed row, so scattered candidates cost
    their blocks only and a wide range is read in whole chunks."""
    n = len(mask)
    if not n:
        return []
    has = np.logical_or.reduceat(mask, np.arange(0, n, block))
    edges = np.flatnonzero(np.diff(np.r_[0, has.astype(np.int8), 0]))
    out = []
    for r0, r1 in zip(edges[::2], edges[1::2], strict=True):
        lo, hi = int(r0) * block, min(n, int(r1) * block)
        a = lo
        while a < hi:
            b = min(hi, (a // chunk + 1) * chunk)
            rows = np.flatnonzero(mask[a:b])
            if len(rows):
                out.append((a + int(rows[0]), a + int(rows[-1]) + 1))
            a = b
    return out


def evaluate(
    plan_: Plan, expression: str, operands: dict[str, Any], x: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The filter's values and positions over the rows the plan allows."""
    assert plan_.mask is not None
    mask = plan_.mask
    vals: list[np.ndarray] = []
    poss: list[np.ndarray] = []
    for a, b in _spans(mask, max(1, int(plan_.base.blocks[0])), max(1, int(plan_.base.chunks[0]))):
        parts = {k: (v[a:b] if operand_target(v) is not None else v) for k, v in operands.items()}
        cond = np.asarray(ne_evaluate(expression, parts), bool) & mask[a:b]
        if cond.any():
            vals.append(np.asarray(x[a:b])[cond])
            poss.append(np.flatnonzero(cond).astype(np.int64) + a)
    dtype = np.dtype(x.dtype)
    return (
        np.concatenate(vals) if vals else np.empty(0, dtype),
        np.concatenate(poss) if poss else np.empty(0, np.int64),
    )


def gather(x: Any, positions: np.ndarray) -> np.ndarray:
    """``x`` at sorted ``positions``, reading one span per chunk that holds any."""
    step = max(1, int(x.chunks[0]))
    out = np.empty(len(positions), np.dtype(x.dtype))
    if not len(positions):
        return out
    cuts = np.flatnonzero(np.diff(positions // step)) + 1
    for part_at, part in zip(np.r_[0, cuts], np.split(positions, cuts), strict=True):
        a = int(part[0])
        out[part_at : part_at + len(part)] = np.asarray(x[a : int(part[-1]) + 1])[part - a]
    return out


def cache_key(expression: str, operands: dict[str, Any], order: Any) -> tuple[Any, dict] | None:
    """``(base array, query description)`` of a filter for the result cache, or None when
    its condition is not over one array (scalar operands enter the description with their
    dtype)."""
    base = _base_of(operands)
    if base is None:
        return None
    try:
        found = canonical(ast.parse(expression, mode="eval").body, operands)
    except SyntaxError:
        return None
    if found is None or found[0] is not base:
        return None
    scalars = sorted(
        (k, np.asarray(v).dtype.str, repr(np.asarray(v).item()))
        for k, v in operands.items()
        if operand_target(v) is None
    )
    text = found[1] if not scalars else f"{found[1]} | {scalars!r}"
    order_list = [order] if isinstance(order, str) else order
    return base, query_descriptor(text, [SELF_TARGET_NAME], order_list)
