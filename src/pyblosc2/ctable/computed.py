"""Computed (virtual) columns of a CTable and ``apply`` (python-blosc2 4.x's
``add_computed_column``, ``drop_computed_column``, ``computed_columns``, ``apply``).

A computed column has no storage: it is a lazy expression over stored columns, given as a
string over their names (``"price * qty"``), a lazy expression over the table's column
arrays, or a callable taking ``{name: array}`` and returning one; it is evaluated when read,
filtered, sorted or aggregated. The schema document keeps it as python-blosc2 does, in a
``computed_columns`` list beside ``columns``: ``{"name", "kind": "expression",
"expression", "col_deps", "dtype"}``, the expression over ``o0``, ``o1``... standing for
``col_deps`` in order. A stored document is input from a file: its expression is parsed by
the compute engine's parser (no Python evaluation), its dependencies must be stored columns,
its dtype a NumPy dtype. python-blosc2's DSL-kernel computed columns and generated
(materialized) columns raise :class:`NotImplementedError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..compute.api import lazyexpr
from ..compute.lazyexpr import LazyExpr
from ..compute.udf import lazyudf
from ..errors import FormatError, ParamError, ParamTypeError
from .base import TableBase
from .colexpr import ColExpr
from .schema import check_column_name

__all__ = ["TableComputed", "computed_entries"]


def computed_entries(doc: dict[str, Any], stored: Iterable[str]) -> list[dict[str, Any]]:
    """The computed columns a schema document describes, checked (a document is input
    from a file).

    >>> computed_entries({"computed_columns": [{"name": "z", "kind": "expression",
    ...     "expression": "(o0 * 2)", "col_deps": ["x"], "dtype": "int64"}]}, ["x"])[0]["name"]
    'z'
    """
    raw = doc.get("computed_columns", [])
    where = "/_meta vlmeta 'schema' computed_columns"
    if not isinstance(raw, list):
        raise FormatError("CTable", where, 0, "a list", type(raw).__name__)
    names = set(stored)
    out = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise FormatError("CTable", f"{where}[{i}]", 0, "an object", type(entry).__name__)
        if entry.get("kind", "expression") != "expression":
            raise NotImplementedError(
                f"CTable {entry.get('kind')!r} computed columns (DSL kernels)"
            )
        name, expr, deps = entry.get("name"), entry.get("expression"), entry.get("col_deps")
        if not isinstance(name, str) or not isinstance(expr, str) or not isinstance(deps, list):
            raise FormatError("CTable", f"{where}[{i}]", 0, "name, expression, col_deps", entry)
        bad = [d for d in deps if not isinstance(d, str) or d not in names]
        if bad:
            raise FormatError("CTable", f"{where}[{i}] col_deps", 0, "stored columns", bad)
        try:
            dtype = np.dtype(entry.get("dtype"))
        except TypeError:
            raise FormatError(
                "CTable", f"{where}[{i}] dtype", 0, "a NumPy dtype", entry.get("dtype")
            ) from None
        out.append({"name": name, "expression": expr, "col_deps": list(deps), "dtype": dtype})
    return out


class TableComputed(TableBase):
    """Computed columns and ``apply`` (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    def _computed_lazy(self, name: str) -> LazyExpr:
        """Column ``name``'s expression over the stored arrays as they are now."""
        cc = self._computed_cols[name]
        cols = self._dep_cols if self._dep_cols is not None else self._cols
        ops = {f"o{i}": cols[d] for i, d in enumerate(cc["col_deps"])}
        return lazyexpr(cc["expression"], ops)

    def _install_computed(self, entries: list[dict[str, Any]]) -> None:
        computed = dict(self._computed_cols)
        for e in entries:
            computed[e["name"]] = {
                "kind": "expression",
                "expression": e["expression"],
                "col_deps": list(e["col_deps"]),
                "dtype": np.dtype(e["dtype"]),
            }
        self._computed_cols = computed
        for e in entries:  # parses now: a bad stored expression fails on open
            self._computed_cols[e["name"]]["lazy"] = self._computed_lazy(e["name"])
        self._set_columns(self._columns)

    def _computed_doc(self) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "kind": "expression",
                "expression": cc["expression"],
                "col_deps": list(cc["col_deps"]),
                "dtype": str(cc["dtype"]),
            }
            for name, cc in self._computed_cols.items()
        ]

    @property
    def computed_columns(self) -> dict[str, dict[str, Any]]:
        """The computed columns' definitions (a copy): expression, col_deps, dtype."""
        return {
            n: {k: cc[k] for k in ("expression", "col_deps", "dtype")}
            for n, cc in self._computed_cols.items()
        }

    @property
    def _stored_col_names(self) -> list[str]:
        return [n for n in self.col_names if n not in self._computed_cols]

    def add_computed_column(
        self, name: str, expr: Any, *, dtype: Any = None, inputs: list[str] | None = None
    ) -> None:
        """Add the virtual column ``name``: ``expr`` (a string over column names, a lazy
        expression over the table's arrays, or a callable of ``{name: array}``).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     price: float = 0.0
        ...     qty: int = 0
        >>> t = CTable(Row, new_data=[(2.0, 3), (1.5, 2)])
        >>> t.add_computed_column("total", lambda c: c["price"] * c["qty"])
        >>> t.total[:], t.where(t.total > 4).qty[:]
        (array([6., 3.]), array([3]))
        """
        if self.base is not None:
            raise ParamError("Cannot add a computed column to a view.")
        if self._read_only:
            raise ParamError("Table is read-only (opened with mode='r').")
        check_column_name(name)
        if name in self._cols:
            raise ParamError(f"A stored column named {name!r} already exists.")
        if name in self._computed_cols:
            raise ParamError(f"A computed column named {name!r} already exists.")
        self._install_computed([self._computed_entry(name, expr, dtype, inputs)])
        self._save_columns()

    def _computed_entry(self, name: str, expr: Any, dtype: Any, inputs: Any) -> dict[str, Any]:
        """The definition of computed column ``name`` (checked against this table)."""
        if inputs is not None or type(expr).__name__ in ("DSLKernel", "LazyUDF"):
            raise NotImplementedError("CTable computed columns of DSL kernels")
        if isinstance(expr, str):
            lazy = self._string_condition(expr)
        elif isinstance(expr, LazyExpr):
            lazy = expr
        elif callable(expr):
            lazy = expr(dict(self._cols))
        else:
            raise ParamTypeError(
                "expr must be a callable or an expression string (or LazyExpr), "
                f"got {type(expr).__name__!r}."
            )
        if type(lazy).__name__ == "LazyUDF":
            raise NotImplementedError("CTable computed columns of DSL kernels")
        if not isinstance(lazy, LazyExpr):
            raise ParamTypeError(f"expr must give a LazyExpr, got {type(lazy).__name__!r}.")
        cols = self._dep_cols if self._dep_cols is not None else self._cols
        owned = {id(arr): n for n, arr in cols.items()}
        deps = []
        for key in sorted(lazy.operands):
            found = owned.get(id(lazy.operands[key]))
            if found is None:
                raise ParamError(
                    f"Operand {key!r} in the expression does not reference a stored column "
                    "of this table."
                )
            deps.append(found)
        entry = {
            "name": name,
            "expression": lazy.expression,
            "col_deps": deps,
            "dtype": np.dtype(dtype) if dtype is not None else lazy.dtype,
        }
        return entry

    def assign(self, **named_exprs: Any) -> Any:
        """A view with more computed columns (``name=expression``: a string, a lazy
        expression, a column or a :func:`~pyblosc2.ctable.colexpr.col` expression); the
        table itself is left as it is.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable, col
        >>> @dataclasses.dataclass
        ... class Row:
        ...     revenue: float = 0.0
        ...     cost: float = 0.0
        >>> t = CTable(Row, new_data=[(100.0, 40.0), (50.0, 60.0)])
        >>> t.assign(profit=col("revenue") - col("cost")).profit[:]
        array([ 60., -10.])
        """
        entries: list[dict[str, Any]] = []
        for name, expr in named_exprs.items():
            if name in self._cols or name in self._computed_cols:
                raise ParamError(f"A column named {name!r} already exists.")
            value = expr._bind(self) if isinstance(expr, ColExpr) else expr
            if hasattr(value, "_col_name") and hasattr(value, "_raw_col"):  # a Column
                raw = value._raw_col
                value = raw if isinstance(raw, LazyExpr) else lazyexpr("o0", {"o0": raw})
            check_column_name(name)
            entries.append(self._computed_entry(name, value, None, None))
        view = self._make_view(self._valid_rows, self._cached_live_positions)
        view._n_rows, view._last_pos = self._n_rows, self._last_pos
        view._install_computed(entries)
        return view

    def drop_computed_column(self, name: str) -> None:
        """Remove the computed column ``name``.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> t = CTable(Row)
        >>> t.add_computed_column("y", "x * 2")
        >>> t.drop_computed_column("y"); t.col_names
        ['x']
        """
        if self.base is not None:
            raise ParamError("Cannot drop a computed column from a view.")
        if name not in self._computed_cols:
            raise KeyError(
                f"{name!r} is not a computed column. Computed columns: {list(self._computed_cols)}"
            )
        self._computed_cols = {n: c for n, c in self._computed_cols.items() if n != name}
        self._set_columns(self._columns)
        self._save_columns()

    def apply(
        self,
        func: Any,
        *,
        columns: list[str] | None = None,
        dtype: Any = None,
        engine: str = "auto",
    ) -> np.ndarray:
        """``func`` (a :func:`pyblosc2.lazyudf` kernel) over the stored ``columns``: its
        result for the live rows.

        >>> import dataclasses
        >>> import numpy as np
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     a: float = 0.0
        ...     b: float = 0.0
        >>> def prod(inputs, output, offset):
        ...     output[:] = inputs[0] * inputs[1]
        >>> CTable(Row, new_data=[(2.0, 3.0), (1.0, 4.0)]).apply(prod, dtype=np.float64)
        array([6., 4.])
        """
        if engine not in ("auto", "numpy", "jit"):
            raise ParamError(f"engine must be 'auto', 'numpy', or 'jit', got {engine!r}")
        names = list(columns) if columns is not None else self._stored_col_names
        missing = [n for n in names if n not in self._cols]
        if missing:
            raise ParamError(
                f"apply() only accepts stored columns, got {missing!r}. "
                f"Stored columns: {self._stored_col_names!r}."
            )
        jit = {"auto": None, "numpy": False, "jit": True}[engine]
        operands = tuple(self._cols[n] for n in names)
        result = np.asarray(lazyudf(func, operands, dtype=dtype, jit=jit).compute()[:])
        return result[self._live_positions()]
