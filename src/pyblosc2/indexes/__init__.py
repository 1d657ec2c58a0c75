"""NDArray indexes as python-blosc2 4.x has them: :class:`IndexKind`, ``create_index`` and
the handles of :class:`Index`, stored in python-blosc2's layout (the vlmeta entry
``"blosc2_indexes"`` and ``.b2nd`` sidecars next to the array), and filters answered
through them.

Modules: :mod:`.kinds` (kinds and derived geometry), :mod:`.descriptor` (the descriptor's
pieces and the checks of one read from a file), :mod:`.store` (where descriptors and
pieces live), :mod:`.target` (what is indexed), :mod:`.build` (the pieces),
:mod:`.manage` (create, drop, rebuild, compact, stale), :mod:`.handle` (:class:`Index`),
:mod:`.query` (planning and answering filters). Importing this package registers it in
:mod:`pyblosc2.ndarray.indexhook`.

>>> import numpy as np; from pyblosc2 import asarray
>>> a = asarray(np.arange(10_000), chunks=(1000,), blocks=(100,))
>>> _ = a.create_index(kind=IndexKind.PARTIAL)
>>> a[(a > 4990) & (a < 4995)].compute()[:].tolist()
[4991, 4992, 4993, 4994]
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ..ndarray import indexhook as _indexhook
from .cache import HOT, digest, scope_of
from .handle import Index
from .kinds import SELF_TARGET_NAME, VLMETA_KEY, IndexKind
from .manage import (
    append_rows,
    compact_index,
    create_index,
    drop_index,
    list_indexes,
    mark_stale,
    rebuild_index,
    resolve_token,
)
from .ordered import full_index_for, keys_of, order_positions
from .query import Plan, cache_key, evaluate, gather, plan
from .store import load_store
from .target import operand_target

__all__ = [
    "SELF_TARGET_NAME",
    "VLMETA_KEY",
    "Index",
    "IndexKind",
    "IndexProvider",
    "Plan",
    "compact_index",
    "create_index",
    "drop_index",
    "explain",
    "get_index",
    "get_indexes",
    "rebuild_index",
    "will_use_index",
]


def get_indexes(array: Any) -> list[Index]:
    """The handles of an array's indexes.

    >>> import numpy as np; from pyblosc2 import asarray
    >>> get_indexes(asarray(np.arange(3)))
    []
    """
    return [Index(array, t) for t in list_indexes(array)]


def get_index(array: Any, field: str | None = None, name: str | None = None) -> Index:
    """The handle of one index (``KeyError`` when there is none).

    >>> import numpy as np; from pyblosc2 import asarray
    >>> a = asarray(np.arange(3)); _ = create_index(a, kind=IndexKind.FULL)
    >>> get_index(a).name
    '__self__'
    """
    return Index(array, resolve_token(load_store(array), field, name))


def _plan_of(expr: Any) -> Plan:
    return plan(expr.expression, expr.operands, getattr(expr, "_filter", None))


def will_use_index(expr: Any) -> bool:
    """Whether computing the lazy filter ``expr`` reads through an index.

    >>> import numpy as np; from pyblosc2 import asarray
    >>> a = asarray(np.arange(10)); will_use_index((a > 3).where(a))
    False
    """
    return _plan_of(expr).usable


def explain(expr: Any) -> dict[str, Any]:
    """How the lazy filter ``expr`` would be answered.

    >>> import numpy as np; from pyblosc2 import asarray
    >>> a = asarray(np.arange(10)); explain((a > 3).where(a))["will_use_index"]
    False
    """
    p = _plan_of(expr)
    keys = keys_of(getattr(expr, "_order", None))
    if keys is not None:
        return _explain_ordered(expr, keys, p)
    d = p.descriptor
    return {
        "will_use_index": p.usable,
        "reason": p.reason,
        "target": None if d is None else d.get("target"),
        "field": None if d is None else d.get("field"),
        "kind": None if d is None else d["kind"],
        "level": p.level,
        "ordered_access": getattr(expr, "_order", None) is not None,
        "order": getattr(expr, "_order", None),
        "candidate_units": p.candidate_units,
        "total_units": p.total_units,
        "candidate_chunks": p.candidate_units,
        "total_chunks": p.total_units,
        "exact_rows": None,
        "full_runs": None if d is None or d["kind"] != "full" else len(d["full"]["runs"]),
        "lookup_path": _lookup_path(d) if p.usable else None,
        "candidate_nav_segments": p.candidate_units if p.usable else None,
        "descriptor": d,
    }


def _explain_ordered(expr: Any, keys: list[str], p: Plan) -> dict[str, Any]:
    x = expr._filter
    d = full_index_for(x, keys[0]) if getattr(x, "ndim", 0) == 1 else None
    return {
        "will_use_index": d is not None,
        "reason": "full index selected for ordered access"
        if d is not None
        else "no matching full index was found for ordered access",
        "target": None if d is None else d["target"],
        "field": None if d is None else d.get("field"),
        "kind": None if d is None else "full",
        "level": "full" if d is not None else None,
        "ordered_access": True,
        "order": keys,
        "secondary_refinement": d is not None and len(keys) > 1,
        "filter_reason": p.reason,
        "filter_level": p.level,
        "full_runs": None if d is None else len(d["full"].get("runs", [])),
        "lookup_path": None if d is None else "ordered-stream",
        "descriptor": d,
    }


def _lookup_path(d: dict[str, Any] | None) -> str | None:
    """How the index is read, in python-blosc2's words: chunk navigation then the spans of
    the chunks it selects (BUCKET, PARTIAL); for FULL, the runs read whole, or the spans
    the chunk boundaries select."""
    if d is None:
        return None
    if d["kind"] in ("bucket", "partial"):
        return "chunk-nav-ooc"
    if d["kind"] != "full":
        return None
    if d["full"].get("runs"):
        return "run-bounded-ooc"
    return "compact-selective-ooc" if d.get("persistent") else "sidecar-stream"


def iter_order(array: Any, keys: list[str]) -> Any:
    """The positions ``NDArray.iter_sorted`` walks: the order of ``keys`` read from a FULL
    index of the first (``__self__``: the array itself), which it needs."""
    if keys == ["__self__"]:
        d = next(
            (
                d
                for d in load_store(array)["indexes"].values()
                if d["kind"] == "full" and d["target"] == {"source": "field", "field": None}
            ),
            None,
        )
        if d is None or d.get("stale"):
            raise ValueError("iter_sorted needs a current FULL index of the array")
        return order_positions(array, [], None, full=d)
    if full_index_for(array, keys[0]) is None:
        raise ValueError(f"iter_sorted needs a current FULL index of {keys[0]!r}")
    return order_positions(array, keys, None)


def _ordered_filter(expr: Any, keys: list[str], use_index: bool) -> Any:
    """An ordered filter (``sort``/``argsort(order=...)``): its rows (through an index
    where one helps), then their order (a FULL index of the first key where there is one);
    None (the engine's own path) when every key is a field and no FULL index helps."""
    x = expr._filter
    names = set(getattr(x, "dtype", np.dtype(int)).names or ())
    if getattr(x, "ndim", 0) != 1 or not hasattr(x, "schunk"):
        return None
    if not (set(keys) - names) and not (use_index and full_index_for(x, keys[0])):
        return None
    key = cache_key(expr.expression, expr.operands, keys) if use_index else None
    scope = name = None
    if key is not None and key[0] is x:
        scope, name = scope_of(x), digest(key[1])
        hit = HOT.get(name, scope)
        if hit is not None:
            pos = hit.astype(np.int64)
            return x[()][pos], pos
    pos = ordered_query_indices(expr, keys, use_index)
    if name is not None:
        HOT.put(name, pos, scope)
    return x[()][pos], pos


def ordered_query_indices(expr: Any, keys: list[str], use_index: bool = True) -> np.ndarray:
    """The positions of a filter's rows in the order of ``keys``: the rows found (through
    an index where one helps), ordered through a FULL index of the first key where there is
    one.

    >>> from pyblosc2 import asarray, lazyexpr
    >>> a = asarray(np.array([(3, 1), (1, 2), (2, 3)], dtype=[("k", "i4"), ("v", "i4")]))
    >>> ordered_query_indices(lazyexpr("v > 1", a.fields).where(a), ["k"]).tolist()
    [1, 2]
    """
    plain = copy.copy(expr)
    plain._order, plain._indices = None, True
    rows = np.asarray(plain.compute(_use_index=use_index)[:], dtype=np.int64)
    return order_positions(expr._filter, keys, rows)


class IndexProvider:
    """The index functions an NDArray and the engine's filters reach through
    :mod:`pyblosc2.ndarray.indexhook`.

    >>> from pyblosc2.ndarray.indexhook import provider
    >>> isinstance(provider(), IndexProvider)
    True
    """

    _CALLS: ClassVar[dict[str, Callable[..., Any]]] = {
        "create_index": create_index,
        "drop_index": drop_index,
        "rebuild_index": rebuild_index,
        "compact_index": compact_index,
        "index": get_index,
        "indexes": get_indexes,
        "will_use_index": will_use_index,
        "order": lambda array, keys: order_positions(array, keys, None),
        "iter_order": lambda array, keys: iter_order(array, keys),
        "explain": explain,
    }

    def call(self, fn: str, array: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Run the index function ``fn`` on ``array``."""
        return self._CALLS[fn](array, *args, **kwargs)

    def mutated(self, array: Any) -> None:
        """Mark ``array``'s indexes stale after a write."""
        mark_stale(array)

    def appended(self, array: Any, old_size: int, rows: Any) -> None:
        """Keep ``array``'s indexes current after ``append``."""
        append_rows(array, old_size, rows)

    def filter(self, expr: Any, use_index: bool) -> Any:
        """``(values, positions)`` of a lazy filter answered through an index (or the
        result cache of an earlier one), or None."""
        keys = keys_of(getattr(expr, "_order", None))
        x = expr._filter
        if keys is not None:
            return _ordered_filter(expr, keys, use_index)
        if not use_index:
            return None
        key = cache_key(expr.expression, expr.operands, None)
        scope = name = None
        if key is not None and operand_target(x) is not None and x.shape == key[0].shape:
            scope, name = scope_of(key[0]), digest(key[1])
            hit = HOT.get(name, scope)
            if hit is not None:
                pos = hit.astype(np.int64)
                return gather(x, pos), pos
        p = _plan_of(expr)
        if not p.usable:
            return None
        values, positions = evaluate(p, expr.expression, expr.operands, x)
        if name is not None:
            HOT.put(name, positions, scope)
        return values, positions


_indexhook.register(IndexProvider())
