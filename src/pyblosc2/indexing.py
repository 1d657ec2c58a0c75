"""python-blosc2's ``blosc2.indexing`` names (re-exports of :mod:`pyblosc2.indexes`).

>>> from pyblosc2 import indexing
>>> indexing.SELF_TARGET_NAME, indexing.INDEXES_VLMETA_KEY
('__self__', 'blosc2_indexes')
"""

from __future__ import annotations

from .indexes import (
    SELF_TARGET_NAME,
    Index,
    IndexKind,
    compact_index,
    create_index,
    drop_index,
    explain,
    get_index,
    get_indexes,
    rebuild_index,
    will_use_index,
)
from .indexes.kinds import VLMETA_KEY as INDEXES_VLMETA_KEY
from .indexes.kinds import normalize_kind as _normalize_kind

__all__ = [
    "INDEXES_VLMETA_KEY",
    "SELF_TARGET_NAME",
    "Index",
    "IndexKind",
    "compact_index",
    "create_index",
    "drop_index",
    "explain_query",
    "get_index",
    "get_indexes",
    "rebuild_index",
    "will_use_index",
]

explain_query = explain


def _normalize_index_kind(kind: object) -> str:
    """python-blosc2's private kind normalizer (its tests call it): a kind or its string.

    >>> _normalize_index_kind("full")
    'full'
    """
    return _normalize_kind(kind if isinstance(kind, IndexKind) else IndexKind(kind))
