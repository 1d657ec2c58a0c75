"""A CTable's index catalog as python-blosc2 4.x stores it, checked, and the anchors its
indexes are built and read through.

python-blosc2 keeps a table's indexes in the ``_meta`` vlmeta entry ``index_catalog``: a map
from the indexed column's name (or an expression's token, ``__expr__<sha1[:12]>``) to an
NDArray index descriptor (:mod:`pyblosc2.indexes.descriptor`) with the table's additions
(``built_value_epoch``, ``null_aware``, ``expr_values_path``, a dictionary column's
``full.dict_rank``), its paths relative to the table's root. A column's pieces are
``.b2nd`` files in ``<root>/_indexes/<column>/`` named after an *anchor* file
``_anchor`` that does not exist (``<kind>.<piece>.b2nd``); an expression
index keeps the expression's values in ``<root>/_indexes/<token>/values.b2nd`` and its
pieces beside it (``values.__index__...``).

An :class:`Anchor` stands for the indexed values (a column, or an expression's values) as
the NDArray the index package builds and reads: its ``urlpath`` places the pieces, its
``schunk.vlmeta`` holds the one descriptor, so the package's own checks
(:func:`pyblosc2.indexes.descriptor.check_store`) bound every number of a catalog entry and
open pieces only in the anchor's directory, before anything is read or sized by it.

>>> check_catalog({"x": {"kind": "summary", "token": "x"}})["x"]["kind"]
'summary'
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..errors import FormatError
from ..indexes.kinds import LEVELS_BY_KIND, SELF_TARGET_NAME, VLMETA_KEY

__all__ = ["Anchor", "TableIndex", "check_catalog", "query_store"]

WHERE = "Malformed index metadata"
_MAX_KEY = 1024


def _fail(field: str, expected: object, got: object) -> FormatError:
    return FormatError(WHERE, field, None, expected, repr(got)[:80])


def check_catalog(raw: Any) -> dict[str, dict[str, Any]]:
    """The catalog read from a table, refused (:class:`FormatError`, a ``ValueError``)
    unless each entry is a descriptor python-blosc2 could have written: a token, a known
    kind, the payload its kind needs. The numbers of an entry are checked against the table
    when it is used (:func:`query_store`)."""
    if not isinstance(raw, dict):
        raise _fail("index_catalog", "a map", raw)
    for key, d in raw.items():
        field = f"index_catalog[{key!r}]"
        if not isinstance(key, str) or not key or len(key) > _MAX_KEY or "/" in key:
            raise _fail("index_catalog", "column names or expression tokens", key)
        if key in (".", ".."):
            raise _fail("index_catalog", "column names or expression tokens", key)
        if not isinstance(d, dict):
            raise _fail(field, "a descriptor map", d)
        token = d.get("token")
        if not isinstance(token, str) or not token or len(token) > _MAX_KEY:
            raise _fail(f"{field}.token", "a token string", token)
        kind = d.get("kind")
        if kind not in LEVELS_BY_KIND:
            raise _fail(f"{field}.kind", sorted(LEVELS_BY_KIND), kind)
        if kind in ("bucket", "partial", "full", "opsi") and not isinstance(d.get(kind), dict):
            raise _fail(f"{field}.{kind}", f"the {kind} payload map", d.get(kind))
        if not isinstance(d.get("stale", False), bool):
            raise _fail(f"{field}.stale", "a bool", d.get("stale"))
        target = d.get("target")
        if target is not None and not isinstance(target, dict):
            raise _fail(f"{field}.target", "a map", target)
    return raw


class _Meta:
    """What the index package asks of an anchor's ``schunk``: its ``vlmeta``."""

    def __init__(self) -> None:
        self.vlmeta: dict[str, Any] = {}


class Anchor:
    """The indexed values of a table as a 1-d array the index package builds and reads:
    ``read(start, stop)`` gives values, ``urlpath`` (None in memory) places the pieces.

    >>> a = Anchor(lambda i, j: np.arange(i, j), None, 5, np.dtype("i8"), 4, 2)
    >>> a[1:3].tolist(), a[()].tolist()
    ([1, 2], [0, 1, 2, 3, 4])
    """

    ndim = 1

    def __init__(
        self,
        read: Callable[[int, int], np.ndarray] | None,
        urlpath: str | None,
        n: int,
        dtype: np.dtype,
        chunk_len: int,
        block_len: int,
    ) -> None:
        self._read = read
        self.urlpath = urlpath
        self.members: dict[str, tuple[str, int]] = {}  # pieces read in place from a .b2z
        self.schunk = _Meta()
        self.shape = (int(n),)
        self.dtype = np.dtype(dtype)
        self.chunks = (max(1, min(int(chunk_len), max(1, int(n)))),)
        self.blocks = (max(1, min(int(block_len), self.chunks[0])),)

    def __getitem__(self, key: Any) -> np.ndarray:
        n = self.shape[0]
        if key == () or key == slice(None):
            a, b = 0, n
        elif isinstance(key, slice) and key.step in (None, 1):
            a, b, _ = key.indices(n)
        else:
            raise NotImplementedError(f"CTable index anchors read slices, got {key!r}")
        if self._read is None:
            raise NotImplementedError("reading the values of a CTable index opened for queries")
        return np.asarray(self._read(a, max(a, b)), dtype=self.dtype)


def query_store(anchor: Anchor, key: str, d: dict[str, Any]) -> dict[str, Any]:
    """The descriptor of catalog entry ``key`` as the one index of ``anchor``, checked by
    the index package (every count and length bounded, pieces only in the anchor's
    directory): ``anchor.schunk.vlmeta`` then holds it."""
    from ..indexes.descriptor import check_store

    local = copy.deepcopy(d)
    local["token"] = SELF_TARGET_NAME
    local["target"] = {"source": "field", "field": None}
    local.setdefault("name", key)
    store = {"version": 1, "indexes": {SELF_TARGET_NAME: local}}
    try:
        check_store(anchor, store)
    except FormatError as exc:  # say which entry of the catalog
        raise FormatError(
            WHERE, f"index_catalog[{key!r}] {exc.field}", None, exc.expected, exc.got
        ) from None
    anchor.schunk.vlmeta[VLMETA_KEY] = store
    return local


class TableIndex(Mapping[str, Any]):
    """The handle of one index of a CTable (python-blosc2's ``Index`` of a table): a live
    view of its catalog entry.

    >>> import dataclasses, numpy as np
    >>> from pyblosc2.ctable import CTable
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> t = CTable(Row, new_data=[(i,) for i in range(10)])
    >>> idx = t.create_index("x")
    >>> idx.col_name, idx.kind, idx.stale
    ('x', 'bucket', False)
    """

    def __init__(self, table: Any, key: str) -> None:
        self._table = table
        self._key = key

    @property
    def _descriptor(self) -> dict[str, Any]:
        catalog = self._table._root_table()._get_index_catalog()
        if self._key not in catalog:
            raise KeyError(f"No index found for {self._key!r}.")
        return catalog[self._key]

    @property
    def descriptor(self) -> dict[str, Any]:
        """A copy of the catalog entry."""
        return copy.deepcopy(self._descriptor)

    @property
    def col_name(self) -> str | None:
        """The indexed column (None for an expression index)."""
        target = self._descriptor.get("target") or {}
        return None if target.get("source") == "expression" else self._key

    @property
    def kind(self) -> str:
        return str(self._descriptor["kind"])

    @property
    def name(self) -> str | None:
        return self._descriptor.get("name") or None

    @property
    def target(self) -> dict[str, Any]:
        return copy.deepcopy(self._descriptor.get("target") or {})

    @property
    def field(self) -> str | None:
        return self.col_name

    @property
    def persistent(self) -> bool:
        return bool(self._descriptor.get("persistent", False))

    @property
    def stale(self) -> bool:
        return bool(self._descriptor.get("stale", False))

    def _files(self) -> Iterator[str]:
        root = self._table._root_table()._storage.working_dir()
        stack: list[Any] = [self._descriptor]
        while stack:
            obj = stack.pop()
            if isinstance(obj, dict):
                for k, v in obj.items():
                    if (k == "path" or k.endswith("_path")) and isinstance(v, str) and root:
                        yield os.path.join(root, v) if not os.path.isabs(v) else v
                    elif isinstance(v, dict | list):
                        stack.append(v)
            elif isinstance(obj, list):
                stack.extend(x for x in obj if isinstance(x, dict | list))

    @property
    def cbytes(self) -> int:
        """Bytes of the index's files (0 in memory)."""
        return sum(os.path.getsize(p) for p in self._files() if os.path.isfile(p))

    def drop(self) -> None:
        self._table.drop_index(**self._lookup())

    def rebuild(self) -> TableIndex:
        return self._table.rebuild_index(**self._lookup())

    def compact(self) -> TableIndex:
        return self._table.compact_index(**self._lookup())

    def _lookup(self) -> dict[str, Any]:
        target = self._descriptor.get("target") or {}
        if target.get("source") == "expression":
            return {"expression": target.get("expression")}
        return {"col_name": self._key}

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._descriptor[key])

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._descriptor))

    def __len__(self) -> int:
        return len(self._descriptor)

    def __repr__(self) -> str:
        return f"Index(table, {self._key!r}, kind={self.kind!r}, stale={self.stale})"
