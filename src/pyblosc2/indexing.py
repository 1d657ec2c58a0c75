"""python-blosc2's ``blosc2.indexing`` names (re-exports of :mod:`pyblosc2.indexes`),
including the private helpers and knobs of its in-process query cache that its tests use
(``_HOT_CACHE``, ``_HOT_CACHE_BYTES`` and ``QUERY_CACHE_MAX_MEM_NBYTES`` read and set the
live cache of :mod:`pyblosc2.indexes.cache`; ``FULL_OOC_RUN_ITEMS`` and
``FULL_OOC_MERGE_BUFFER_ITEMS`` the budgets of :mod:`pyblosc2.indexes.fullsort`). Query
results are never persisted, as in python-blosc2 4.x: the persistent-cache helpers answer
None/False.

>>> from pyblosc2 import indexing
>>> indexing.SELF_TARGET_NAME, indexing.INDEXES_VLMETA_KEY, indexing.QUERY_CACHE_MAX_MEM_NBYTES
('__self__', 'blosc2_indexes', 131072)
"""

from __future__ import annotations

import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np

from .compute.lazyexpr import LazyExpr
from .indexes import (
    SELF_TARGET_NAME,
    Index,
    IndexKind,
    build,
    compact_index,
    create_index,
    drop_index,
    explain,
    fullsort,
    get_index,
    get_indexes,
    rebuild_index,
    store,
    target,
    will_use_index,
)
from .indexes import ordered_query_indices as _ordered
from .indexes.build import summaries as _summaries
from .indexes.cache import HOT, scope_of
from .indexes.cache import CompressedCoords as _CompressedHotCoords
from .indexes.cache import compress_coords as _compress_hot_coords
from .indexes.cache import decode_coords as _decode_coords_payload
from .indexes.cache import digest as _query_cache_digest
from .indexes.cache import encode_coords as _encode_coords_payload
from .indexes.cache import query_descriptor as _normalize_query_descriptor
from .indexes.kinds import FLAG_ALL_NAN, FLAG_ALL_NULL, FLAG_HAS_NAN
from .indexes.kinds import VLMETA_KEY as INDEXES_VLMETA_KEY
from .indexes.kinds import normalize_kind as _normalize_kind
from .indexes.manage import mark_stale as mark_indexes_stale
from .indexes.ordered import keys_of
from .indexes.query import Plan, plan

__all__ = [
    "FLAG_ALL_NAN",
    "FLAG_ALL_NULL",
    "FLAG_HAS_NAN",
    "INDEXES_VLMETA_KEY",
    "QUERY_CACHE_VLMETA_KEY",
    "SELF_TARGET_NAME",
    "Index",
    "IndexKind",
    "compact_index",
    "create_index",
    "drop_index",
    "explain_query",
    "get_cached_coords",
    "get_index",
    "get_indexes",
    "mark_indexes_stale",
    "ordered_query_indices",
    "plan_query",
    "rebuild_index",
    "store_cached_coords",
    "will_use_index",
]

explain_query = explain


def _compute_segment_summaries(
    values: np.ndarray, dtype: Any, segment_len: int, valid: np.ndarray | None = None
) -> np.ndarray:
    """python-blosc2's name: the ``(min, max, flags)`` of each segment of ``values``, over
    the ``valid`` rows only when given.

    >>> _compute_segment_summaries(np.array([3, 1, 2]), np.int64, 2)["min"].tolist()
    [1, 2]
    """
    return _summaries(np.asarray(values, dtype=dtype), int(segment_len), valid)


QUERY_CACHE_VLMETA_KEY = "_blosc2_query_cache"
#: python-blosc2 keeps handles of stores it no longer writes; here always empty
_QUERY_CACHE_STORE_HANDLES: dict[str, Any] = {}
#: python-blosc2 caches persistent descriptor stores per path; pyblosc2 reads them each
#: time (another process may have written them): always empty
_PERSISTENT_INDEXES: dict[Any, Any] = {}
#: python-blosc2's tests reach the temporary directories of FULL's build through it
tempfile = tempfile
_ = (_CompressedHotCoords, _compress_hot_coords, _decode_coords_payload, _encode_coords_payload)


def _normalize_index_kind(kind: object) -> str:
    """python-blosc2's private kind normalizer (its tests call it): a kind or its string.

    >>> _normalize_index_kind("full")
    'full'
    """
    return _normalize_kind(kind if isinstance(kind, IndexKind) else IndexKind(kind))


def _hot_cache_get(digest: str, scope: tuple[str, Any] | None = None) -> np.ndarray | None:
    """The positions cached under ``digest`` (python-blosc2's private name).

    >>> _hot_cache_get("nothing-here") is None
    True
    """
    return HOT.get(digest, scope)


def _hot_cache_put(digest: str, coords: np.ndarray, scope: tuple[str, Any] | None = None) -> None:
    """Cache positions under ``digest`` (python-blosc2's private name)."""
    HOT.put(digest, coords, scope)


def _hot_cache_clear(scope: tuple[str, Any] | None = None) -> None:
    """Drop cached positions of ``scope`` (all when None)."""
    HOT.clear(scope)


def _query_cache_payload_path(array: Any) -> str:
    """Where python-blosc2 once kept persistent query results (never written now)."""
    path = Path(array.urlpath)
    suffix = "".join(path.suffixes)
    root = path.name[: -len(suffix)] if suffix else path.name
    return str(path.with_name(f"{root}.__query_cache__.b2frame"))


def _load_query_cache_catalog(array: Any) -> None:
    """None: query results are not persisted (as in python-blosc2 4.x)."""
    return None


def _persistent_cache_lookup(array: Any, digest: str) -> None:
    """None: query results are not persisted."""
    return None


def _persistent_cache_insert(array: Any, digest: str, coords: Any, descriptor: Any) -> bool:
    """False: query results are not persisted."""
    return False


def ordered_query_indices(
    expression: str, operands: dict[str, Any], where: Any, order: Any
) -> np.ndarray:
    """The ordered positions of a filter (python-blosc2's helper): ``where`` is its
    ``{"_where_x": x}`` or ``x``, ``order`` its keys."""

    x = where.get("_where_x") if isinstance(where, dict) else where
    expr = LazyExpr._of(expression, operands).where(x)
    return _ordered(expr, keys_of(order) or [], True)


def plan_query(
    expression: str, operands: dict[str, Any], where: Any, *, use_index: bool = True
) -> Plan:
    """The index plan of a filter (python-blosc2's helper): ``where`` is its
    ``{"_where_x": x}`` or ``x``.

    >>> import numpy as np; from pyblosc2 import asarray
    >>> a = asarray(np.arange(5)); plan_query("o0 > 2", {"o0": a}, {"_where_x": a}).usable
    False
    """
    x = where.get("_where_x") if isinstance(where, dict) else where
    return plan(expression, operands, x, use_index)


def get_cached_coords(
    array: Any, expression: str, tokens: list[str], order: list[str] | None
) -> np.ndarray | None:
    """Cached positions of a query of ``array`` (python-blosc2's helper)."""
    key = _query_cache_digest(_normalize_query_descriptor(expression, tokens, order))
    return HOT.get(key, scope_of(array))


def store_cached_coords(
    array: Any, expression: str, tokens: list[str], order: list[str] | None, coords: Any
) -> None:
    """Cache positions of a query of ``array`` (python-blosc2's helper)."""
    key = _query_cache_digest(_normalize_query_descriptor(expression, tokens, order))
    HOT.put(key, np.asarray(coords), scope_of(array))


class _IndexingModule(types.ModuleType):
    """python-blosc2's module-level cache state, read and set on the live cache."""

    @property
    def _HOT_CACHE(self) -> dict[Any, Any]:
        return HOT.entries

    @property
    def _HOT_CACHE_ORDER(self) -> list[Any]:
        return HOT.order

    @property
    def _HOT_CACHE_BYTES(self) -> int:
        return HOT.nbytes

    @property
    def FULL_OOC_RUN_ITEMS(self) -> int:
        return fullsort.RUN_ITEMS

    @FULL_OOC_RUN_ITEMS.setter
    def FULL_OOC_RUN_ITEMS(self, value: int) -> None:
        fullsort.RUN_ITEMS = int(value)

    @property
    def FULL_OOC_MERGE_BUFFER_ITEMS(self) -> int:
        return fullsort.MERGE_BUFFER_ITEMS

    @FULL_OOC_MERGE_BUFFER_ITEMS.setter
    def FULL_OOC_MERGE_BUFFER_ITEMS(self, value: int) -> None:
        fullsort.MERGE_BUFFER_ITEMS = int(value)

    @property
    def ThreadPoolExecutor(self) -> Any:
        return build.ThreadPoolExecutor

    @ThreadPoolExecutor.setter
    def ThreadPoolExecutor(self, cls: Any) -> None:
        setattr(build, "ThreadPoolExecutor", cls)  # noqa: B010 - a module attribute by name

    @property
    def _values_for_target(self) -> Any:
        return target.values_for_target

    @_values_for_target.setter
    def _values_for_target(self, fn: Any) -> None:
        target.values_for_target = fn

    @property
    def _load_array_sidecar(self) -> Any:
        return store.load_whole

    @_load_array_sidecar.setter
    def _load_array_sidecar(self, fn: Any) -> None:
        store.load_whole = fn

    @property
    def QUERY_CACHE_MAX_MEM_NBYTES(self) -> int:
        return HOT.max_nbytes

    @QUERY_CACHE_MAX_MEM_NBYTES.setter
    def QUERY_CACHE_MAX_MEM_NBYTES(self, value: int) -> None:
        HOT.max_nbytes = int(value)


sys.modules[__name__].__class__ = _IndexingModule
