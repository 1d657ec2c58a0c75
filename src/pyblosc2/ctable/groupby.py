"""``CTable.group_by``: rows grouped by the values of key columns, and the reductions of
each group (python-blosc2's ``CTableGroupBy``) — ``size``, ``count``, ``sum``, ``mean``,
``min``, ``max``, ``argmin``, ``argmax``, ``agg`` in its mapping, list-of-pairs and named
forms, and named UDF aggregations.

Semantics as python-blosc2 4.x: a key that is null (NaN in a float key, a column's
``null_value``) is dropped unless ``dropna=False``; a value that is null (a nullable
column's ``null_value``, NaN for a NaN sentinel) is left out of every reduction but
``size``; a group with no value to reduce gets the output's null (NaN for floats, 0 for
integers, -1 for ``argmin``/``argmax``). ``argmin``/``argmax`` are logical row numbers of
the grouped table or view, ties keeping the first row. Groups come out sorted by key
(``sort=False``: in order of first appearance, integer keys still ascending).

The key and value columns are read whole (one array per column, the live rows), grouped
with ``np.unique`` and reduced with ``ufunc.reduceat`` over the rows sorted by group: no
per-row Python. A UDF is called once per group with the group's live non-null values.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import schema as specs
from ..errors import ParamError
from .build import column, new_table
from .groupkeys import factorize_fixed_width_str, python_scalar
from .ndcells import refuse_cells
from .nullgroups import null_empty_groups, null_group_keys, null_key_codes, null_keys

__all__ = ["CTableGroupBy", "TableGrouping"]

OPS = ("count", "sum", "mean", "min", "max", "argmin", "argmax")
ENGINES = ("auto", "numpy")

#: None as an object array: a text column's null, compared cell by cell
_NONE = np.array(None, dtype=object)


@dataclasses.dataclass
class _Agg:
    column: str | None  # None for the row count ("*", "size")
    op: str
    out: str
    udf: Callable[[np.ndarray], Any] | None = None
    dtype: specs.SchemaSpec | None = None


def _column_name(col: Any) -> str:
    """A column given by name or as a Column object."""
    if isinstance(col, str):
        return col
    name = getattr(col, "_col_name", None)
    if isinstance(name, str):
        return name
    raise ParamError(f"a column is given by name or as a Column, got {col!r}")


def _reduction_aliases() -> dict[Any, str]:
    """pyblosc2's own reduction functions, accepted as op names (matched by identity)."""
    from ..compute import statistical

    return {
        getattr(statistical, op): op for op in ("sum", "mean", "min", "max", "argmin", "argmax")
    }


def _is_udf(op: Any) -> bool:
    return callable(op) and not isinstance(op, str) and op not in _reduction_aliases()


@dataclasses.dataclass
class _Groups:
    """Rows grouped: the group of each live row (``-1``: dropped), and each key's values."""

    inverse: np.ndarray  # int64, one per live row
    n_groups: int
    keys: dict[str, np.ndarray]

    def sizes(self) -> np.ndarray:
        kept = self.inverse[self.inverse >= 0]
        return np.bincount(kept, minlength=self.n_groups).astype(np.int64)


class CTableGroupBy:
    """A deferred grouping of ``table``'s rows by ``keys`` (python-blosc2's
    ``CTableGroupBy``); its methods return a new table, one row per group.

    >>> import dataclasses
    >>> from pyblosc2.ctable import CTable
    >>> @dataclasses.dataclass
    ... class Row:
    ...     k: int = 0
    ...     v: float = 0.0
    >>> t = CTable(Row, new_data=[(2, 1.0), (1, 2.0), (2, 3.0)])
    >>> g = t.group_by("k").agg({"v": ["sum", "max"]}, n=("*", "size"))
    >>> g.col_names, g.k[:].tolist(), g.v_sum[:].tolist(), g.n[:].tolist()
    (['k', 'v_sum', 'v_max', 'n'], [1, 2], [2.0, 4.0], [1, 2])
    """

    def __init__(
        self,
        table: Any,
        keys: Any,
        *,
        sort: bool | None = None,
        dropna: bool = True,
        engine: str = "auto",
        chunk_size: int | None = None,
    ) -> None:
        names = [keys] if isinstance(keys, str) or hasattr(keys, "_col_name") else list(keys)
        self.keys = [_column_name(k) for k in names]
        if not self.keys:
            raise ParamError("group_by() requires at least one key column")
        if engine == "jit":
            raise NotImplementedError("group_by engine='jit' (no JIT group-by engine)")
        if engine not in ENGINES:
            raise ParamError(f"group_by engine must be one of {(*ENGINES, 'jit')}, got {engine!r}")
        if chunk_size is not None and (
            isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1
        ):
            raise ParamError(f"chunk_size must be a positive int or None, got {chunk_size!r}")
        self.table, self.sort, self.dropna = table, sort, bool(dropna)
        self.engine, self.chunk_size = engine, chunk_size
        for name in self.keys:
            self._check_column(name, "group by")

    # -- the reductions ---------------------------------------------------------------------
    def size(self, *, urlpath: str | None = None) -> Any:
        """The number of rows of each group (``size``)."""
        return self._execute([_Agg(None, "size", "size")], urlpath)

    def count(self, column: Any, *, urlpath: str | None = None) -> Any:
        """The number of non-null values of ``column`` in each group."""
        name = _column_name(column)
        return self._execute([self._spec(name, "count")], urlpath)

    def sum(self, column: Any, *, urlpath: str | None = None) -> Any:
        """The sum of ``column`` in each group."""
        return self.agg({_column_name(column): "sum"}, urlpath=urlpath)

    def mean(self, column: Any, *, urlpath: str | None = None) -> Any:
        """The mean of ``column`` in each group (float64)."""
        return self.agg({_column_name(column): "mean"}, urlpath=urlpath)

    def min(self, column: Any, *, urlpath: str | None = None) -> Any:
        """The smallest value of ``column`` in each group."""
        return self.agg({_column_name(column): "min"}, urlpath=urlpath)

    def max(self, column: Any, *, urlpath: str | None = None) -> Any:
        """The largest value of ``column`` in each group."""
        return self.agg({_column_name(column): "max"}, urlpath=urlpath)

    def argmin(self, column: Any, *, urlpath: str | None = None) -> Any:
        """The logical row of each group's smallest ``column`` value (-1: none)."""
        return self.agg({_column_name(column): "argmin"}, urlpath=urlpath)

    def argmax(self, column: Any, *, urlpath: str | None = None) -> Any:
        """The logical row of each group's largest ``column`` value (-1: none)."""
        return self.agg({_column_name(column): "argmax"}, urlpath=urlpath)

    def agg(self, aggregations: Any = None, *, urlpath: str | None = None, **named: Any) -> Any:
        """Reductions per group: ``{column: op or ops}`` or ``[(column, ops), ...]`` (outputs
        named ``<column>_<op>``), and ``output=(column, op)`` or ``output=(column, udf[,
        spec])`` keywords; ``("*", "size")`` counts rows."""
        return self._execute(self._normalize(aggregations, named), urlpath)

    # -- what was asked ---------------------------------------------------------------------
    def _check_column(self, name: str, what: str) -> None:
        table = self.table
        if name in table._computed_cols:
            raise NotImplementedError(f"group_by over computed columns ({what} {name!r})")
        if name not in table._cols:
            raise KeyError(f"No column named {name!r}. Available: {table.col_names}")
        spec = table._column_defs[name].spec
        if _mask_stored(spec) and not hasattr(self._column(name), "is_null"):
            raise NotImplementedError(f"group_by over mask-stored nullable columns ({name!r})")
        if np.dtype(spec.dtype).kind not in "biufcUS":
            raise NotImplementedError(f"group_by over {spec.kind} columns ({name!r})")

    def _resolve_op(self, op: Any) -> str:
        if isinstance(op, str):
            return op
        if callable(op):
            alias = _reduction_aliases().get(op)
            if alias is not None:
                return alias
            raise ParamError(
                f"Unsupported aggregation function {getattr(op, '__name__', op)!r}: pass an op "
                "name ('sum'), a blosc2 reduction (blosc2.sum/mean/min/max/argmin/argmax), or a "
                "UDF in the named form, e.g. agg(my_range=(column, func))"
            )
        raise ParamError(f"Aggregation op must be a string or a reduction function, got {op!r}")

    def _spec(self, column: Any, op: Any, out: str | None = None) -> _Agg:
        op = self._resolve_op(op)
        if isinstance(column, str) and column == "*":
            if op != "size":
                raise ParamError("Only the 'size' aggregation is supported for '*' input")
            return _Agg(None, "size", out or "size")
        name = _column_name(column)
        self._check_column(name, "aggregate")
        if op not in OPS:
            raise ParamError(f"Unsupported aggregation {op!r}: one of {OPS} or ('*', 'size')")
        kind = self.table._cols[name].dtype.kind
        if op in ("sum", "mean") and kind not in "biuf":
            raise TypeError(f"Aggregation {op!r} is not supported for column {name!r} ({kind})")
        if op in ("min", "max", "argmin", "argmax") and kind == "c":
            raise TypeError(f"Aggregation {op!r} is not supported for complex column {name!r}")
        return _Agg(name, op, out or f"{name}_{op}")

    def _normalize(self, aggregations: Any, named: Mapping[str, Any]) -> list[_Agg]:
        if not aggregations and not named:
            raise ParamError("agg() requires a mapping/list of pairs and/or named aggregations")
        entries: list[Any] = []
        if aggregations:
            if isinstance(aggregations, Mapping):
                entries = list(aggregations.items())
            elif isinstance(aggregations, Sequence) and not isinstance(aggregations, str | bytes):
                for pair in aggregations:
                    if not (isinstance(pair, tuple | list) and len(pair) == 2):
                        raise ParamError(
                            f"agg() positional list must contain (column, ops) pairs, got {pair!r}"
                        )
                    entries.append(pair)
            else:
                raise ParamError(
                    "agg() positional argument must be a mapping or a list of (column, ops) pairs"
                )
        aggs: list[_Agg] = []
        for col_name, ops in entries:
            many = not (isinstance(ops, str) or callable(ops))
            op_list = list(ops) if many else [ops]
            if not op_list:
                raise ParamError(f"No aggregations specified for column {col_name!r}")
            aggs.extend(self._spec(col_name, op) for op in op_list)
        for out, value in named.items():
            if not (isinstance(value, tuple | list) and len(value) in (2, 3)):
                raise ParamError(
                    f"Named aggregation {out!r} must be a (column, op) or (column, op, dtype) "
                    f"tuple, got {value!r}"
                )
            column, op, *rest = value
            if isinstance(op, tuple | list | set):
                raise ParamError(
                    f"Named aggregation {out!r} takes a single op, got {op!r}: use the mapping "
                    "form for several ops, or one name each"
                )
            dtype = rest[0] if rest else None
            if _is_udf(op):
                name = _column_name(column)
                self._check_column(name, "aggregate")
                if dtype is not None and not isinstance(dtype, specs.SchemaSpec):
                    raise ParamError(f"Named aggregation {out!r}: dtype must be a schema spec")
                aggs.append(_Agg(name, "udf", out, udf=getattr(op, "func", op), dtype=dtype))
                continue
            if dtype is not None:
                raise ParamError(
                    f"Named aggregation {out!r}: an explicit dtype is only supported for UDFs"
                )
            aggs.append(self._spec(column, op, out))
        outs = [a.out for a in aggs]
        if len(outs) != len(set(outs)):
            raise ParamError("Aggregation output column names must be unique")
        if len(set(outs) | set(self.keys)) != len(outs) + len(self.keys):
            raise ParamError("Group-by result column names would not be unique")
        return aggs

    # -- the work ---------------------------------------------------------------------------
    def _column(self, name: str) -> Any:
        from .column import Column

        return Column(self.table, name)

    def _values(self, name: str) -> np.ndarray:
        return np.asarray(self._column(name)[:])

    def _nulls(self, name: str, values: np.ndarray, *, is_key: bool) -> np.ndarray:
        """True where a value of column ``name`` is null (a key's NaN too)."""
        spec = self.table._column_defs[name].spec
        if _mask_stored(spec):  # the validity sidecar says (the column's is_null)
            mask = np.array(self._column(name).is_null(), dtype=bool)
            if is_key and values.dtype.kind in "fc":
                mask |= np.isnan(values)
            return mask
        null = getattr(spec, "null_value", None)
        mask = np.zeros(len(values), dtype=bool)
        if values.dtype == object:  # a text column's cells: None is its null
            mask |= np.equal(values, _NONE).astype(bool)
        nan_null = isinstance(null, float) and math.isnan(null)
        if values.dtype.kind in "fc" and (is_key or nan_null):
            mask |= np.isnan(values)
        if values.dtype.kind == "M" and null is not None:  # a time's sentinel reads as NaT
            mask |= np.isnat(values)
        if null is not None and not nan_null:
            mask |= values == np.asarray(null).astype(values.dtype)
        return mask

    def _groups(self) -> _Groups:
        n = len(self.table)
        cols = [self._values(k) for k in self.keys]
        keep = np.ones(n, dtype=bool)
        if self.dropna:
            for name, v in zip(self.keys, cols, strict=True):
                keep &= ~self._nulls(name, v, is_key=True)
        rows = np.flatnonzero(keep)
        raw = cols
        flags = {} if self.dropna else null_keys(self, cols)  # a null group of their own
        cols = [
            null_key_codes(v, flags[k]) if k in flags else v
            for k, v in zip(self.keys, cols, strict=True)
        ]
        if len(cols) == 1 and cols[0].dtype.kind in "biu" and not flags:
            dense = _dense_groups(cols[0], rows, n)
            if dense is not None:
                return _Groups(dense[0], int(dense[1].size), {self.keys[0]: dense[1]})
        codes = np.zeros(rows.size, dtype=np.int64)
        radix = 1
        for v in cols:
            if v.dtype.kind in "US" and v.ndim == 1:  # hashed, not every string sorted
                uniq, inv = factorize_fixed_width_str(v[rows])
            else:
                uniq, inv = np.unique(v[rows], return_inverse=True)
            if radix * max(len(uniq), 1) >= 1 << 62:  # too many combinations: pack by unique
                _, codes = np.unique(codes, return_inverse=True)
                radix = int(codes.max(initial=0)) + 1
            codes = codes * len(uniq) + inv.reshape(-1)
            radix *= max(len(uniq), 1)
        _, first, group = np.unique(codes, return_index=True, return_inverse=True)
        group = group.reshape(-1).astype(np.int64)
        first_rows = rows[first]
        single_int = len(cols) == 1 and cols[0].dtype.kind in "biu" and not flags
        if self.sort is False and not single_int:  # groups in order of first appearance
            order = np.argsort(first_rows, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            group, first_rows = rank[group], first_rows[order]
        inverse = np.full(n, -1, dtype=np.int64)
        inverse[rows] = group
        keys = {k: v[first_rows] for k, v in zip(self.keys, raw, strict=True)}
        return _Groups(inverse, int(first_rows.size), null_group_keys(keys, flags, first_rows))

    def _execute(self, aggs: list[_Agg], urlpath: str | None) -> Any:
        groups = self._groups()
        defs = self.table._column_defs
        columns = [column(k, copy.deepcopy(defs[k].spec)) for k in self.keys]
        data: dict[str, Any] = dict(groups.keys)
        for a in aggs:
            if a.op == "size":
                spec: specs.SchemaSpec = specs.int64()
                data[a.out] = groups.sizes()
            else:
                assert a.column is not None
                spec, data[a.out] = self._reduce(groups, a)
            columns.append(column(a.out, spec))
        return new_table(type(self.table), columns, data, urlpath=urlpath, validate=False)

    def _reduce(self, groups: _Groups, a: _Agg) -> tuple[specs.SchemaSpec, np.ndarray]:
        assert a.column is not None
        values = self._values(a.column)
        valid = (groups.inverse >= 0) & ~self._nulls(a.column, values, is_key=False)
        if valid.all():  # every row counts: no copies of the rows (10M rows: ~0.1 s each)
            pos, gid, vals = None, groups.inverse, values  # pos None: row i is value i
        else:
            pos = np.flatnonzero(valid)
            gid, vals = groups.inverse[pos], values[pos]
        g = groups.n_groups
        counts = np.bincount(gid, minlength=g).astype(np.int64)
        full = counts > 0
        in_spec = self.table._column_defs[a.column].spec
        if a.op == "udf":
            order = np.argsort(gid, kind="stable")
            return self._udf(groups, a, vals[order], np.cumsum(counts) - counts, counts)
        if a.op == "count":
            return specs.int64(), counts
        if a.op in ("sum", "mean"):  # in row order, no sort
            if vals.dtype.kind == "f":
                acc: Any = np.float64
                total = np.bincount(gid, weights=vals, minlength=g).astype(np.float64)
            else:
                acc = np.int64
                total = np.zeros(g, dtype=np.int64)
                np.add.at(total, gid, vals.astype(np.int64))
            if a.op == "mean":
                with np.errstate(invalid="ignore", divide="ignore"):
                    mean = total / np.where(full, counts, 1)
                return specs.float64(), np.where(full, mean, np.nan)
            if acc is np.float64:
                total[~full] = np.nan
                return specs.float64(), total
            return specs.int64(), total
        largest = a.op in ("max", "argmax")
        if vals.dtype.kind in "biuf":  # numbers: ufunc.at, no sort
            ext = _extremes_at(vals, gid, g, largest=largest)
        else:
            order = np.argsort(gid, kind="stable")
            ext = _extremes(vals[order], np.cumsum(counts) - counts, full, g, largest=largest)
        if a.op in ("min", "max"):
            out = ext if full.all() else _fill_empty(ext, full)
            return copy.deepcopy(in_spec), null_empty_groups(in_spec, out, full)
        return _arg_spec(), _first_match(vals, gid, pos, ext, g, self.table)

    def _udf(
        self, groups: _Groups, a: _Agg, svals: np.ndarray, starts: np.ndarray, counts: np.ndarray
    ) -> tuple[specs.SchemaSpec, np.ndarray]:
        assert a.udf is not None
        results: list[Any] = [None] * groups.n_groups
        for i in np.flatnonzero(counts):
            part = svals[starts[i] : starts[i] + counts[i]]
            try:
                value = a.udf(part)
            except Exception as exc:
                key = tuple(v[i].item() for v in groups.keys.values())
                raise RuntimeError(
                    f"UDF aggregation {a.out!r} raised for group {key!r}: {exc!r}"
                ) from exc
            results[i] = python_scalar(value)
        spec = a.dtype if a.dtype is not None else _infer_spec(a.out, results)
        dtype = np.dtype(spec.dtype)
        null = 0 if dtype.kind in "biu" else np.nan
        filled = [null if r is None else r for r in results]
        return spec, np.asarray(filled, dtype=dtype) if filled else np.zeros(0, dtype=dtype)


def _mask_stored(spec: specs.SchemaSpec) -> bool:
    """Whether a column's nulls are in a validity sidecar (``null_storage="mask"``)."""
    return getattr(spec, "null_storage", None) == "mask"


def _dense_groups(
    key: np.ndarray, rows: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """Groups of an integer key by direct indexing (no sort) when its range is at most
    ``max(4 n, 65536)``: each row's group and the keys in ascending order; else None."""
    every = rows.size == n  # no row dropped: no gather, no scatter
    values = key if every else key[rows]
    if values.size == 0:
        return None
    lo, hi = int(values.min()), int(values.max())
    if hi - lo >= max(4 * n, 1 << 16):
        return None
    offset = np.subtract(values, lo, dtype=np.int64)
    present = np.bincount(offset, minlength=hi - lo + 1) > 0
    rank = np.cumsum(present) - 1
    if every:
        inverse = rank[offset]
    else:
        inverse = np.full(n, -1, dtype=np.int64)
        inverse[rows] = rank[offset]
    uniq = (np.flatnonzero(present) + lo).astype(key.dtype)
    return inverse, uniq


def _extremes_at(vals: np.ndarray, gid: np.ndarray, g: int, *, largest: bool) -> np.ndarray:
    """Each group's smallest (or largest) number by ``ufunc.at`` (NaN propagates)."""
    if vals.dtype.kind == "b":
        out_b = np.full(g, not largest, dtype=bool)
        (np.logical_or if largest else np.logical_and).at(out_b, gid, vals)
        return out_b
    if vals.dtype.kind == "f":
        start = -np.inf if largest else np.inf
    else:
        info = np.iinfo(vals.dtype)
        start = info.min if largest else info.max
    out = np.full(g, start, dtype=vals.dtype)
    (np.maximum if largest else np.minimum).at(out, gid, vals)
    return out


def _extremes(
    svals: np.ndarray, starts: np.ndarray, full: np.ndarray, g: int, *, largest: bool
) -> np.ndarray:
    """Each group's smallest (or largest) value, the rows sorted by group."""
    out = np.zeros(g, dtype=svals.dtype)
    if not svals.size:
        return out
    if svals.dtype.kind in "biuf":
        ufunc = np.maximum if largest else np.minimum
        out[full] = ufunc.reduceat(svals, starts[full])
        return out
    seg = np.repeat(np.arange(g), np.diff(np.append(starts, svals.size)))
    order = np.lexsort((svals, seg))
    ends = starts + np.diff(np.append(starts, svals.size))
    pick = (ends - 1) if largest else starts
    out[full] = svals[order[pick[full]]]
    return out


def _fill_empty(ext: np.ndarray, full: np.ndarray) -> np.ndarray:
    """A group without values gets NaN (floats) or the dtype's zero."""
    if ext.dtype.kind == "f":
        return np.where(full, ext, np.nan).astype(ext.dtype)
    out = ext.copy()
    out[~full] = np.zeros(1, dtype=ext.dtype)[0]
    return out


def _first_match(
    vals: np.ndarray,
    gid: np.ndarray,
    pos: np.ndarray | None,
    ext: np.ndarray,
    g: int,
    table: Any,
) -> np.ndarray:
    """The logical row of each group's first value equal to its extreme (-1: none)."""
    target = ext[gid]
    hit = vals == target
    if vals.dtype.kind == "f":
        hit |= np.isnan(vals) & np.isnan(target)
    idx = np.flatnonzero(hit)
    out = np.full(g, -1, dtype=np.int64)
    found, first = np.unique(gid[idx], return_index=True)
    out[found] = idx[first] if pos is None else pos[idx[first]]
    return out


def _arg_spec() -> specs.SchemaSpec:
    """python-blosc2's argmin/argmax column: int64 with null_value -1 (plain int64 while
    nullable columns are not stored)."""
    from .schema import check_stored_spec

    spec = specs.int64(null_value=-1)
    try:
        return check_stored_spec("argmin", spec)
    except NotImplementedError:
        return specs.int64()


def _infer_spec(out: str, results: list[Any]) -> specs.SchemaSpec:
    """The spec of a UDF's results (those not None), checked to be of one numeric kind."""
    got = [r for r in results if r is not None]
    if not got:
        raise ParamError(
            f"Cannot infer the dtype of UDF aggregation {out!r}: it was never called (no group "
            "has a non-null value) or returned None for every group; give a dtype, e.g. "
            f"{out}=(column, func, blosc2.float64())"
        )
    try:
        arr = np.asarray(got)
    except (ValueError, TypeError):
        arr = np.asarray(got, dtype=object)
    if arr.dtype == object or arr.ndim != 1:
        raise ParamError(
            f"UDF aggregation {out!r} returned inconsistent or unsupported types across groups"
        )
    if arr.dtype.kind not in "biufc":
        raise ParamError(
            f"Cannot infer a CTable dtype for UDF aggregation {out!r} from {arr.dtype}; "
            "give a dtype"
        )
    name = "bool" if arr.dtype.kind == "b" else arr.dtype.name
    factory: Any = getattr(specs, name)
    spec: specs.SchemaSpec = factory()
    return spec


class TableGrouping:
    """``CTable.group_by``."""

    def group_by(
        self,
        keys: Any,
        *,
        sort: bool | None = None,
        dropna: bool = True,
        engine: str = "auto",
        chunk_size: int | None = None,
    ) -> CTableGroupBy:
        """Rows grouped by the key column(s) ``keys``: reduce them with the methods of the
        :class:`CTableGroupBy` returned.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     k: int = 0
        ...     v: float = 0.0
        >>> t = CTable(Row, new_data=[(1, 1.0), (1, 3.0), (2, 5.0)])
        >>> t.group_by("k").mean("v").v_mean[:]
        array([2., 5.])
        """
        refuse_cells(self, keys, "group by")
        return CTableGroupBy(
            self, keys, sort=sort, dropna=dropna, engine=engine, chunk_size=chunk_size
        )
