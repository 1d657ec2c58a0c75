"""A CTable's indexes (python-blosc2 4.x's ``create_index`` & co. of a table), stored as
python-blosc2 stores them (:mod:`.indexcat`), built and read by :mod:`pyblosc2.indexes`.

An index covers a stored column or an expression of stored columns (``"value * category"``)
over the table's physical rows. ``where`` asks the indexes of the columns (and expressions)
its condition compares with constants which rows can match: a superset of the matches
(:mod:`pyblosc2.indexes.query`'s intervals, ``&`` intersecting, ``|`` uniting); the whole
condition is then evaluated on the spans holding those rows only, and intersected with the
live rows, so the result is the scan's. An index is used only while current: a change of
values marks every index of the table stale (``rebuild_index`` builds it again), a delete
does not (its rows are checked against ``_valid_rows``), and an index whose
``built_value_epoch`` is not the table's ``value_epoch``, or that does not cover the rows
written, is never read.

>>> import dataclasses, numpy as np
>>> from pyblosc2.ctable import CTable
>>> @dataclasses.dataclass
... class Row:
...     x: int = 0
>>> t = CTable(Row, new_data=[(i,) for i in range(100)])
>>> _ = t.create_index("x", kind="full")
>>> t.where((t.x > 95) | (t.x < 2)).x[:].tolist()
[0, 1, 96, 97, 98, 99]
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
from typing import Any

import numpy as np

from ..compute.api import ne_evaluate
from ..errors import ParamError, ParamTypeError
from ..indexes import manage as _manage
from ..indexes.descriptor import rows_of
from ..indexes.kinds import IndexKind, normalize_kind
from ..indexes.target import token_of
from ..ndarray.constructors import asarray
from ..ndarray.ndarray import NDArray
from .base import TableBase
from .indexcat import Anchor, TableIndex, check_catalog
from .indexplan import plan_mask
from .nulls import NULL_MASK, NULL_SENTINEL, null_kind, sentinel_mask
from .strings import DictionarySpec, is_var

__all__ = ["TableIndexes"]

_GRANULARITIES = ("block", "chunk")
#: rows an index may cover past the table's physical rows (python-blosc2's default capacity)
MAX_SPARE_ROWS = 1 << 20


def _relative(d: Any, root: str) -> Any:
    """A descriptor with the paths under ``root`` relative to it (python-blosc2 stores them
    so, a table being movable)."""
    if isinstance(d, dict):
        out = {}
        for k, v in d.items():
            if (k == "path" or k.endswith("_path")) and isinstance(v, str) and os.path.isabs(v):
                rel = os.path.relpath(v, root)
                out[k] = rel.replace(os.sep, "/") if not rel.startswith("..") else v
            else:
                out[k] = _relative(v, root)
        return out
    if isinstance(d, list | tuple):
        return [_relative(x, root) for x in d]
    return d


class TableIndexes(TableBase):
    """Indexes of a table (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    # -- the catalog ------------------------------------------------------------------------
    def _get_index_catalog(self) -> dict[str, dict[str, Any]]:
        """The checked catalog (cached until the table changes it)."""
        root = self._root_table()
        rev = root._storage.index_catalog_revision()
        cache = root.__dict__.get("_cached_index_catalog")
        if cache is None or cache[0] != rev:
            cache = (rev, check_catalog(root._storage.load_index_catalog()))
            root._cached_index_catalog = cache
        return cache[1]

    def _save_index_catalog(self, catalog: dict[str, Any]) -> None:
        self._storage.save_index_catalog(catalog)
        self.__dict__.pop("_cached_index_catalog", None)

    def _index_anchors(self) -> dict[str, Any]:
        """In memory: the objects an in-memory index's pieces belong to, while it lives."""
        return self.__dict__.setdefault("_mem_index_anchors", {})

    def _resolve_index(
        self, col_name: str | None, expression: str | None, name: str | None
    ) -> tuple[str, dict[str, Any]]:
        catalog = self._get_index_catalog()
        if col_name is not None and expression is not None:
            raise ParamError("col_name and expression are mutually exclusive")
        if col_name is not None:
            if col_name not in catalog:
                raise KeyError(f"No index found for column {col_name!r}.")
            return col_name, catalog[col_name]
        if expression is not None:
            token = token_of(self._expression_target(expression, None)[0])
            if token not in catalog:
                raise KeyError(f"No index found for expression {expression!r}.")
            return token, catalog[token]
        if name is not None:
            found = [(k, d) for k, d in catalog.items() if d.get("name") == name]
            if not found:
                raise KeyError(f"No index found with name {name!r}.")
            if len(found) > 1:
                raise ParamError(f"Multiple indexes found with name {name!r}; give the target")
            return found[0]
        raise ParamTypeError("must specify col_name, expression, or name")

    # -- building ---------------------------------------------------------------------------
    def _expression_target(
        self, expression: str, operands: dict[str, Any] | None
    ) -> tuple[dict[str, Any], list[str]]:
        """python-blosc2's expression target: operand names replaced by the stored columns
        they stand for, unparsed (``expression_key``)."""
        root = self._root_table()
        ops = root._cols if operands is None else operands
        owned = {id(a): n for n, a in root._cols.items() if isinstance(a, NDArray)}
        try:
            tree = ast.parse(expression, mode="eval")
        except SyntaxError as exc:
            raise ParamError("expression is not valid Python syntax") from exc
        deps: list[str] = []
        ok = [True]

        class _Names(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.AST:
                op = ops.get(node.id)
                if op is None:
                    return node
                name = owned.get(id(op))
                if name is None:
                    ok[0] = False
                    return node
                deps.append(name)
                return ast.copy_location(ast.Name(id=name, ctx=node.ctx), node)

        key = ast.unparse(_Names().visit(tree.body))
        if not ok[0] or not deps:
            raise ParamError(
                "expression indexes require operands from stored columns of the same table"
            )
        deps = list(dict.fromkeys(deps))
        target = {
            "source": "expression",
            "expression": expression,
            "expression_key": key,
            "dependencies": deps,
        }
        return target, deps

    def _index_dir(self, key: str) -> str | None:
        anchor = self._storage.index_anchor_path(key)
        return None if anchor is None else os.path.dirname(anchor)

    def _build(
        self, key: str, array: Any, kind: str, optlevel: int, name: str | None, **kw: Any
    ) -> dict[str, Any]:
        d = _manage.create_index(array, kind=IndexKind(kind), optlevel=optlevel, name=name, **kw)
        d["name"] = name or key
        d["token"] = key
        d["built_value_epoch"] = self._storage.get_epoch_counters()[0]
        root = self._storage.working_dir()
        return _relative(d, root) if root is not None and d.get("persistent") else d

    def create_index(
        self,
        col_name: str | None = None,
        *,
        field: str | None = None,
        expression: str | None = None,
        operands: dict[str, Any] | None = None,
        kind: Any = None,
        optlevel: int = 5,
        name: str | None = None,
        build: str = "auto",
        tmpdir: str | None = None,
        granularity: str | None = None,
        **kwargs: Any,
    ) -> TableIndex:
        """Build an index of a stored column (or an expression of stored columns) and
        record it in the table's catalog; ``kind`` is BUCKET by default (FULL, the only
        kind, for a dictionary or utf8 column, indexed by the alphabetical rank of its
        values).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     a: int = 0
        ...     b: float = 0.0
        >>> t = CTable(Row, new_data=[(i, i / 2) for i in range(50)])
        >>> t.create_index(expression="a * b", kind="full", name="ab").name
        'ab'
        """
        if self.base is not None:
            raise ParamError("Cannot create an index on a view.")
        self._check_writable()
        if col_name is not None and field is not None:
            raise ParamError("col_name and field are mutually exclusive")
        col_name = field if field is not None else col_name
        if expression is not None and col_name is not None:
            raise ParamError("column targets and expression are mutually exclusive")
        if operands is not None and expression is None:
            raise ParamError("operands can only be provided together with expression")
        spec = self._column_defs[col_name].spec if col_name in self._column_defs else None
        explicit = kind is not None
        if not explicit:
            ranked = isinstance(spec, DictionarySpec) or getattr(spec, "kind", None) == "utf8"
            kind = IndexKind.FULL if ranked else IndexKind.BUCKET
        elif isinstance(kind, str):  # python-blosc2's tables take the kind's name too
            try:
                kind = IndexKind(kind.lower())
            except ValueError:
                raise ParamError(f"unknown index kind {kind!r}") from None
        kind_s = normalize_kind(kind)
        if granularity is not None:
            if granularity not in _GRANULARITIES:
                raise ParamError(
                    f"granularity must be one of {_GRANULARITIES}, got {granularity!r}"
                )
            if kind_s != "summary":
                raise ParamError("granularity is only supported for kind=IndexKind.SUMMARY")
            kwargs["summary_levels"] = (granularity,)
        kwargs.pop("precomputed_summaries", None)  # python-blosc2's build shortcut
        kw = {"build": build, "tmpdir": tmpdir, **kwargs}
        catalog = self._get_index_catalog()
        if expression is not None:
            return self._create_expression_index(expression, operands, kind_s, optlevel, name, kw)
        if col_name is None:
            raise ParamTypeError("must specify col_name/field or expression")
        if col_name in self._computed_cols:
            raise ParamError(
                f"Cannot create an index on computed column {col_name!r}: "
                "computed columns have no physical storage."
            )
        if col_name not in self._cols:
            raise KeyError(f"No column named {col_name!r}. Available: {self.col_names}")
        if "/" in col_name or "\\" in col_name:  # the catalog's keys name directories
            raise NotImplementedError(f"CTable indexes of column {col_name!r} (a '/' in its name)")
        if col_name in catalog:
            raise ParamError(
                f"Index already exists for column {col_name!r}. "
                "Call rebuild_index() to replace it or drop_index() first."
            )
        arr = self._cols[col_name]
        n = self._physical_len()
        rank_meta: dict[str, Any] | None = None
        flavour = getattr(spec, "kind", None) if is_var(spec) else None
        if flavour in ("dictionary", "utf8"):
            if explicit and kind_s != "full":
                raise ParamError(
                    f"Column {col_name!r} is a {flavour} column, indexed by alphabetical rank; "
                    f"only kind='full' consults that index, kind={kind_s!r} would never be used."
                )
            ranks, rank_meta = self._text_ranks(col_name, n)
            read, dtype, chunk, block = (lambda a, b: ranks[a:b]), ranks.dtype, 1 << 16, 1 << 13
        elif is_var(spec):
            raise NotImplementedError(f"CTable indexes of {flavour} column {col_name!r}")
        elif arr.ndim != 1:
            raise ParamError(f"Cannot create an index on ndarray column {col_name!r}")
        else:
            read, dtype = (lambda a, b: arr[a:b]), arr.dtype
            chunk, block = int(arr.chunks[0]), int(arr.blocks[0])
        index_dir = self._index_dir(col_name)
        if index_dir is not None:
            shutil.rmtree(index_dir, ignore_errors=True)
            os.makedirs(index_dir, exist_ok=True)
        anchor = Anchor(
            read,
            None if index_dir is None else os.path.join(index_dir, "_anchor"),
            n,
            dtype,
            chunk,
            block,
        )
        validity, aware = (None, False) if rank_meta is not None else self._validity(col_name)
        d = self._build(col_name, anchor, kind_s, optlevel, name, validity=validity, **kw)
        d["null_aware"] = aware
        d["target"] = {"source": "field", "field": None}
        if rank_meta is not None:
            d["full"]["dict_rank" if flavour == "dictionary" else "utf8_rank"] = rank_meta
        anchor._read = None  # the column is not read again through it
        if index_dir is None:
            self._index_anchors()[col_name] = anchor
        catalog = dict(self._get_index_catalog())
        catalog[col_name] = d
        self._save_index_catalog(catalog)
        return TableIndex(self, col_name)

    def _validity(self, name: str) -> tuple[Any, bool]:
        """``(reader of which rows hold a value, null_aware)`` of column ``name``'s
        summaries: a nullable column's are taken over its values only (python-blosc2's
        null-aware indexes); a mask column with no null yet needs no reader."""
        spec = self._column_defs[name].spec
        how = null_kind(spec)
        if how == NULL_MASK:
            mask = getattr(self, "_null_mask")(name)  # noqa: B009  (nullstore's)
            if mask is None:
                return None, True
            return (lambda a, b: np.asarray(mask[a:b], dtype=bool)), True
        if how == NULL_SENTINEL:
            arr, nv = self._cols[name], getattr(spec, "null_value", None)
            return (lambda a, b: ~sentinel_mask(np.asarray(arr[a:b]), nv)), True
        return None, False

    def _text_ranks(self, name: str, n: int) -> tuple[np.ndarray, dict[str, Any]]:
        """A text column's values as their alphabetical ranks (nulls the largest rank), so
        sorted ranks are sorted values (python-blosc2's rank index of dictionary and utf8
        columns), and the entry python-blosc2 keeps beside it."""
        column: Any = self._cols[name]  # a VarColumn (strings.py)
        values = np.asarray(column._values[:n], dtype=object)
        present = np.array([v is not None for v in values], dtype=bool)
        found = values[present].astype(str)
        uniq, inverse = np.unique(found, return_inverse=True)
        out = np.full(n, len(uniq), dtype=np.int32)
        out[present] = inverse.astype(np.int32).ravel()
        meta: dict[str, Any] = {"null_rank": len(uniq)}
        if isinstance(self._column_defs[name].spec, DictionarySpec):
            digest = hashlib.sha1(usedforsecurity=False)
            dictionary = list(column.dictionary)
            for i, v in enumerate(dictionary):
                digest.update(repr((i, v)).encode("utf-8"))
            meta.update(dict_hash=digest.hexdigest(), dict_len=len(dictionary))
        else:
            meta.update(null_aware=True, vocab_len=len(uniq), n_rows=n, vocab=uniq.tolist())
        return out, meta

    def _create_expression_index(
        self,
        expression: str,
        operands: dict[str, Any] | None,
        kind: str,
        optlevel: int,
        name: str | None,
        kw: dict[str, Any],
    ) -> TableIndex:
        target, deps = self._expression_target(expression, operands)
        token = token_of(target)
        if token in self._get_index_catalog():
            raise ParamError(
                f"Index already exists for expression {expression!r}. "
                "Call rebuild_index() to replace it or drop_index() first."
            )
        n = self._physical_len()
        cols = {d: self._cols[d] for d in deps}
        first = cols[deps[0]]
        chunk = max(1, int(first.chunks[0]))
        parts = []
        for a in range(0, n, chunk):
            b = min(n, a + chunk)
            parts.append(
                np.asarray(
                    ne_evaluate(target["expression_key"], {k: v[a:b] for k, v in cols.items()})
                )
            )
        values = np.concatenate(parts) if parts else np.empty(0)
        if values.ndim != 1:
            raise ParamError("expression indexes require expressions returning a 1-D scalar stream")
        index_dir = self._index_dir(token)
        root = self._storage.working_dir() or ""
        geo = {"chunks": first.chunks, "blocks": first.blocks}
        if index_dir is not None:
            shutil.rmtree(index_dir, ignore_errors=True)
            os.makedirs(index_dir, exist_ok=True)
            vpath = os.path.join(index_dir, "values.b2nd")
            arr = asarray(values, urlpath=vpath, mode="w", **geo)
        else:
            arr = asarray(values, **geo)
        d = self._build(token, arr, kind, optlevel, name or expression, **kw)
        d["target"] = target
        d["expr_values_path"] = None
        if index_dir is not None:
            d["expr_values_path"] = os.path.relpath(str(arr.urlpath), root).replace(os.sep, "/")
        else:
            self._index_anchors()[token] = arr
        catalog = dict(self._get_index_catalog())
        catalog[token] = d
        self._save_index_catalog(catalog)
        return TableIndex(self, token)

    # -- managing ---------------------------------------------------------------------------
    def drop_index(
        self, col_name: str | None = None, *, expression: str | None = None, name: str | None = None
    ) -> None:
        """Remove an index and its files."""
        if self.base is not None:
            raise ParamError("Cannot drop an index from a view.")
        self._check_writable()
        key, _ = self._resolve_index(col_name, expression, name)
        catalog = dict(self._get_index_catalog())
        catalog.pop(key, None)
        self._save_index_catalog(catalog)
        self._drop_index_files(key)

    def _drop_index_files(self, key: str) -> None:
        self._index_anchors().pop(key, None)
        index_dir = self._index_dir(key)
        if index_dir is not None:  # the directory python-blosc2 names after the key, whole
            shutil.rmtree(index_dir, ignore_errors=True)

    def _index_kwargs(self, d: dict[str, Any]) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "kind": d["kind"],
            "optlevel": int(d.get("optlevel", 5)),
            "build": "ooc" if d.get("ooc") else "memory",
        }
        if d.get("name"):
            kw["name"] = d["name"]
        if d.get("cparams") is not None:
            kw["cparams"] = d["cparams"]
        if d["kind"] == "summary" and list(d.get("levels") or ()) == ["chunk"]:
            kw["granularity"] = "chunk"
        return kw

    def rebuild_index(
        self, col_name: str | None = None, *, expression: str | None = None, name: str | None = None
    ) -> TableIndex:
        """Build an index again from the table as it is now (with the same parameters)."""
        if self.base is not None:
            raise ParamError("Cannot rebuild an index on a view.")
        key, d = self._resolve_index(col_name, expression, name)
        kw = self._index_kwargs(d)
        target = d.get("target") or {}
        self.drop_index(key) if target.get("source") != "expression" else self.drop_index(
            expression=target.get("expression")
        )
        if target.get("source") == "expression":
            return self.create_index(expression=target.get("expression"), **kw)
        if key == kw.get("name"):
            kw.pop("name")
        return self.create_index(key, **kw)

    def compact_index(
        self, col_name: str | None = None, *, expression: str | None = None, name: str | None = None
    ) -> TableIndex:
        """Merge a FULL index's appended runs (a table's indexes have none: a no-op)."""
        if self.base is not None:
            raise ParamError("Cannot compact an index on a view.")
        key, d = self._resolve_index(col_name, expression, name)
        if (d.get("full") or {}).get("runs"):
            return self.rebuild_index(col_name, expression=expression, name=name)
        return TableIndex(self, key)

    def index(
        self, col_name: str | None = None, *, expression: str | None = None, name: str | None = None
    ) -> TableIndex:
        """The handle of one index (``KeyError`` when there is none)."""
        return TableIndex(self, self._resolve_index(col_name, expression, name)[0])

    @property
    def indexes(self) -> list[TableIndex]:
        """The handles of the table's indexes."""
        root = self._root_table()
        return [TableIndex(root, k) for k in self._get_index_catalog()]

    # -- the hooks other parts of the table call ---------------------------------------------
    def _index_column_dropped(self, name: str) -> None:
        """A column went: its index, and the expression indexes reading it, go too."""
        catalog = dict(self._get_index_catalog())
        gone = [
            k
            for k, d in catalog.items()
            if k == name or name in ((d.get("target") or {}).get("dependencies") or ())
        ]
        for k in gone:
            catalog.pop(k)
            self._drop_index_files(k)
        if gone:
            self._save_index_catalog(catalog)

    def _index_column_renamed(self, old: str, new: str) -> None:
        """A column was renamed: its index is built again under the new name; expression
        indexes reading it (their text names it) are dropped."""
        catalog = dict(self._get_index_catalog())
        users = [
            k
            for k, d in catalog.items()
            if old in ((d.get("target") or {}).get("dependencies") or ())
        ]
        for k in users:
            catalog.pop(k)
            self._drop_index_files(k)
        if users:
            self._save_index_catalog(catalog)
        if old not in catalog:
            return
        kw = self._index_kwargs(catalog[old])
        kw.pop("name", None) if catalog[old].get("name") == old else None
        self.drop_index(old)
        self.create_index(new, **kw)

    def _index_condition(self, cond: Any) -> np.ndarray | None:
        """The physical rows where ``cond`` holds, answered through the table's indexes, or
        None (no current index helps: the caller scans)."""
        root = self._root_table()
        catalog = root._get_index_catalog()
        if not catalog or any(getattr(cond, a, None) is not None for a in ("_filter", "_order")):
            return None
        epoch = root._storage.get_epoch_counters()[0]
        # an index covers the rows written (and maybe spare capacity: python-blosc2 indexes
        # the arrays whole, trimmed on close); a row count beyond that is never sized from
        limit = max(root._physical_len(), MAX_SPARE_ROWS)
        current = {
            k: d
            for k, d in catalog.items()
            if not d.get("stale", False)
            and d.get("built_value_epoch", epoch) == epoch
            and not {"dict_rank", "utf8_rank"} & set(d.get("full") or {})
            and root._last_pos <= rows_of(d, f"index_catalog[{k!r}]") <= limit
        }
        if not current:
            return None
        return plan_mask(root, current, cond.expression, dict(cond.operands))
