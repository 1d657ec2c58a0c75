"""What ``CTable.info`` and ``Column.info`` report (python-blosc2 4.x's items and layout):
``name : value`` lines, a dict value (the columns) pretty-printed below its name; ``info()``
prints the report.
"""

from __future__ import annotations

import pprint
import re
import textwrap
from typing import Any

import numpy as np

from ..schunk.members import format_nbytes
from .nulls import null_kind

__all__ = ["InfoReporter", "column_info_items", "dtype_label", "table_info_items"]


class _Literal:
    """A value shown as its text, unquoted, inside a pretty-printed dict."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _human(nbytes: int) -> str:
    return format_nbytes(nbytes).split("(", 1)[1].rstrip(")")


def dtype_label(dtype: np.dtype[Any]) -> str:
    """A column dtype as ``info`` labels it.

    >>> dtype_label(np.dtype("U16")), dtype_label(np.dtype("S4")), dtype_label(np.dtype("f8"))
    ('U16 (Unicode)', 'S4', 'float64')
    """
    if dtype.kind == "U":
        return f"U{dtype.itemsize // 4} (Unicode)"
    if dtype.kind == "S":
        return f"S{dtype.itemsize}"
    return str(dtype)


class InfoReporter:
    """The report of an object with ``info_items``: its ``repr`` is the text, calling it
    prints it.

    >>> class T:
    ...     info_items = [("type", "T"), ("columns", {"x": 1})]
    >>> print(repr(InfoReporter(T())), end="")
    type    : T
    columns :
     {'x': 1}
    """

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __len__(self) -> int:
        return len(self.obj.info_items)

    def __repr__(self) -> str:
        items = self.obj.info_items
        width = max(len(k) for k, _ in items)
        parts = []
        for key, value in items:
            if isinstance(value, dict):
                parts.append(f"{key.ljust(width)} :")
                parts.extend(
                    f" {line}" for line in pprint.pformat(value, sort_dicts=False).splitlines()
                )
                continue
            parts.append(
                textwrap.fill(
                    str(value),
                    width=96,
                    initial_indent=key.ljust(width) + " : ",
                    subsequent_indent=" " * width + " : ",
                )
            )
        return "\n".join(parts) + "\n"

    def __call__(self) -> None:
        print(repr(self), end="")


def _readable(cc: dict[str, Any]) -> str:
    """A computed column's expression with its operands named (``o0`` → the column)."""
    deps = cc["col_deps"]
    return re.sub(r"\bo(\d+)\b", lambda m: deps[int(m.group(1))], cc["expression"])


def table_info_items(table: Any) -> list[tuple[str, object]]:
    """``CTable.info_items``."""
    columns: dict[str, Any] = {}
    for name in table.col_names:
        cc = table._computed_cols.get(name)
        if cc is not None:
            columns[name] = _Literal(f"{cc['dtype']} (computed: {_readable(cc)})")
            continue
        arr = table._cols[name]
        detail = f"cbytes: {_human(int(arr.cbytes))}"
        if arr.cbytes:
            detail += f", cratio: {arr.nbytes / arr.cbytes:.2f}x"
        kind = null_kind(table._column_defs[name].spec)
        tag = f" nullable[{kind}]" if kind != "none" else ""  # where its nulls live
        columns[name] = _Literal(f"{dtype_label(arr.dtype)}{tag} ({detail})")
    leaves = table._storage.leaves
    items: list[tuple[str, object]] = [
        ("type", "CTable"),
        ("storage", "persistent" if leaves is not None else "in-memory"),
        ("view", table.base is not None),
        ("nrows", len(table)),
        ("ncols", len(table.col_names)),
        ("nbytes", format_nbytes(table.nbytes)),
        ("cbytes", format_nbytes(table.cbytes)),
        ("cratio", f"{table.cratio:.2f}x"),
        ("columns", columns),
        ("indexes", "none"),
    ]
    if leaves is not None:
        items.insert(2, ("open_mode", leaves.mode))
    return items


def column_info_items(col: Any) -> list[tuple[str, object]]:
    """``Column.info_items``."""
    items: list[tuple[str, object]] = [
        ("type", "Column"),
        ("name", col._col_name),
        ("dtype", dtype_label(col.dtype)),
        ("backend", "LazyExpr" if col.is_computed else "NDArray"),
        ("storage", "computed" if col.is_computed else "in-memory"),
        ("nrows", len(col)),
        ("shape", col.shape),
    ]
    if not col.is_computed:
        raw = col.raw
        items += [
            ("chunks", raw.chunks),
            ("blocks", raw.blocks),
            ("nbytes", format_nbytes(int(raw.nbytes))),
            ("cbytes", format_nbytes(int(raw.cbytes))),
            ("cratio", f"{raw.nbytes / raw.cbytes:.2f}x" if raw.cbytes else "inf"),
        ]
    return items + col._null_info_items()  # nullable, null_storage, null_sidecar
