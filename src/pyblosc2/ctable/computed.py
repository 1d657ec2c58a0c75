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
from ..compute.udf import LazyUDF, lazyudf
from ..dsl.kernel import DSLKernel, kernel_from_source
from ..dsl.syntax import DSLSyntaxError
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
        kind = entry.get("kind", "expression")
        if kind not in ("expression", "dsl"):
            raise FormatError("CTable", f"{where}[{i}] kind", 0, "expression or dsl", kind)
        text_key = "expression" if kind == "expression" else "dsl_source"
        name, expr, deps = entry.get("name"), entry.get(text_key), entry.get("col_deps")
        if not isinstance(name, str) or not isinstance(expr, str) or not isinstance(deps, list):
            raise FormatError("CTable", f"{where}[{i}]", 0, f"name, {text_key}, col_deps", entry)
        bad = [d for d in deps if not isinstance(d, str) or d not in names]
        if bad:
            raise FormatError("CTable", f"{where}[{i}] col_deps", 0, "stored columns", bad)
        try:
            dtype = np.dtype(entry.get("dtype"))
        except TypeError:
            raise FormatError(
                "CTable", f"{where}[{i}] dtype", 0, "a NumPy dtype", entry.get("dtype")
            ) from None
        found: dict[str, Any] = {"name": name, "kind": kind, "col_deps": list(deps), "dtype": dtype}
        if kind == "dsl":
            try:  # parsed, never executed
                kernel = kernel_from_source(expr)
            except ParamError as exc:
                raise FormatError(
                    "CTable", f"{where}[{i}] dsl_source", 0, "a DSL kernel", exc
                ) from None
            if kernel.dsl_error is not None:
                raise FormatError(
                    "CTable", f"{where}[{i}] dsl_source", 0, "a DSL kernel", kernel.dsl_error
                )
            backend = entry.get("jit_backend")
            found.update(dsl_source=expr, kernel=kernel, jit_backend=backend)
        else:
            found["expression"] = expr
        out.append(found)
    return out


class TableComputed(TableBase):
    """Computed columns and ``apply`` (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    def _computed_lazy(self, name: str) -> Any:
        """Column ``name``'s expression over the stored arrays as they are now (a DSL
        column's values, computed)."""
        cc = self._computed_cols[name]
        cols = self._dep_cols if self._dep_cols is not None else self._cols
        if cc.get("kind") == "dsl":  # evaluated whole, as python-blosc2 does: an NDArray
            inputs = tuple(cols[d] for d in cc["col_deps"])
            udf = lazyudf(
                cc["kernel"], inputs, dtype=cc["dtype"], jit_backend=cc.get("jit_backend")
            )
            return udf.compute()
        ops = {f"o{i}": cols[d] for i, d in enumerate(cc["col_deps"])}
        return lazyexpr(cc["expression"], ops)

    def _install_computed(self, entries: list[dict[str, Any]]) -> None:
        computed = dict(self._computed_cols)
        for e in entries:
            cc = {k: v for k, v in e.items() if k not in ("name", "lazy")}
            cc.setdefault("kind", "expression")
            cc["col_deps"], cc["dtype"] = list(e["col_deps"]), np.dtype(e["dtype"])
            computed[e["name"]] = cc
        self._computed_cols = computed
        for e in entries:  # parses now: a bad stored expression fails on open
            if computed[e["name"]]["kind"] == "expression":
                computed[e["name"]]["lazy"] = self._computed_lazy(e["name"])
        self._set_columns(self._columns)

    def _computed_doc(self) -> list[dict[str, Any]]:
        out = []
        for name, cc in self._computed_cols.items():
            entry: dict[str, Any] = {"name": name, "kind": cc["kind"]}
            if cc["kind"] == "dsl":
                entry["dsl_source"] = cc["dsl_source"]
            else:
                entry["expression"] = cc["expression"]
            entry.update(col_deps=list(cc["col_deps"]), dtype=str(cc["dtype"]))
            if cc.get("jit_backend") is not None:
                entry["jit_backend"] = cc["jit_backend"]
            out.append(entry)
        return out

    @property
    def computed_columns(self) -> dict[str, dict[str, Any]]:
        """The computed columns' definitions (a copy): expression, col_deps, dtype."""
        keys = ("kind", "expression", "dsl_source", "col_deps", "dtype")
        return {n: {k: cc[k] for k in keys if k in cc} for n, cc in self._computed_cols.items()}

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
        cols = self._dep_cols if self._dep_cols is not None else self._cols
        if isinstance(expr, DSLKernel):
            return self._dsl_entry(name, expr, inputs, dtype, None)
        lazy = expr
        if isinstance(expr, str):
            lazy = self._string_condition(expr)
        elif callable(expr) and not isinstance(expr, LazyExpr | LazyUDF):
            lazy = expr(dict(cols))
        elif not isinstance(expr, LazyExpr | LazyUDF):
            raise ParamTypeError(
                "expr must be a callable or an expression string (or LazyExpr), "
                f"got {type(expr).__name__!r}."
            )
        owned = {id(arr): n for n, arr in cols.items()}
        if isinstance(lazy, LazyUDF):
            if not isinstance(lazy.func, DSLKernel):
                raise ParamTypeError(
                    "Only LazyUDFs backed by a @blosc2.dsl_kernel are supported as CTable columns."
                )
            found = [owned.get(id(v)) for v in lazy.inputs]
            if any(d is None for d in found):
                raise ParamError("an input of the DSL kernel is not a stored column of this table")
            backend = lazy.kwargs.get("jit_backend")
            return self._dsl_entry(name, lazy.func, [str(d) for d in found], dtype, backend)
        if not isinstance(lazy, LazyExpr):
            raise ParamTypeError(f"expr must return a LazyExpr, got {type(lazy).__name__!r}.")
        deps = []
        for key in sorted(lazy.operands):
            dep = owned.get(id(lazy.operands[key]))
            if dep is None:
                raise ParamError(
                    f"Operand {key!r} in the expression does not reference a stored column "
                    "of this table."
                )
            deps.append(dep)
        return {
            "name": name,
            "kind": "expression",
            "expression": lazy.expression,
            "col_deps": deps,
            "dtype": np.dtype(dtype) if dtype is not None else lazy.dtype,
        }

    def _dsl_entry(
        self, name: str, kernel: DSLKernel, inputs: Any, dtype: Any, backend: Any
    ) -> dict[str, Any]:
        if kernel.dsl_error is not None:
            raise DSLSyntaxError(f"Invalid DSL kernel: {kernel.dsl_error}")
        if inputs is None:
            raise ParamTypeError(
                "A DSL kernel passed directly requires inputs=[...] naming one source "
                "column per kernel parameter."
            )
        deps = list(inputs)
        expected = kernel.input_names
        if expected is not None and len(deps) != len(expected):
            raise ParamError(
                f"DSL kernel expects {len(expected)} input(s) {expected}, "
                f"but inputs={deps} provides {len(deps)}."
            )
        cols = self._dep_cols if self._dep_cols is not None else self._cols
        for d in deps:
            if d not in cols:
                raise ParamError(f"Column {d!r} is not a stored column of this table.")
        if dtype is None:
            if not deps:
                raise ParamTypeError("a DSL kernel without column inputs needs dtype=...")
            dtype = np.result_type(*[cols[d].dtype for d in deps])
        return {
            "name": name, "kind": "dsl", "dsl_source": kernel.dsl_source, "kernel": kernel,
            "col_deps": deps, "dtype": np.dtype(dtype), "jit_backend": backend,
        }  # fmt: skip

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
