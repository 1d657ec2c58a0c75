"""A new table from a column list and whole columns of values, in memory or at a path:
what ``group_by`` results and Arrow, Parquet, CSV and pandas imports are made of.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import MISSING
from typing import Any

from .schema import TableColumn, check_stored_spec
from .storage import TableStorage, open_tree

__all__ = ["column", "new_table", "resolve_nulls"]


def column(name: str, spec: Any) -> TableColumn:
    """A column ``name`` of ``spec`` with no declared default and default storage.

    >>> from pyblosc2 import schema
    >>> column("x", schema.int8()).dtype
    dtype('int8')
    """
    return TableColumn(name, spec, MISSING)


def new_table(
    cls: Any,
    columns: list[TableColumn],
    data: dict[str, Any] | None = None,
    *,
    urlpath: str | os.PathLike[str] | None = None,
    mode: str = "w",
    validate: bool = True,
    cparams: dict[str, Any] | None = None,
    dparams: dict[str, Any] | None = None,
) -> Any:
    """A ``cls`` (a CTable class) with ``columns``, holding ``data`` (name → values).

    With ``urlpath`` it is a ``.b2d``/``.b2z`` store, replaced when ``mode="w"``.

    >>> import numpy as np
    >>> from pyblosc2 import schema
    >>> from pyblosc2.ctable import CTable
    >>> t = new_table(CTable, [column("x", schema.int32())], {"x": np.arange(3)})
    >>> t.x[:]
    array([0, 1, 2], dtype=int32)
    """
    columns = resolve_nulls(columns)
    for c in columns:
        check_stored_spec(c.name, c.spec)
    n = len(next(iter(data.values()))) if data else 0
    storage = TableStorage(None)
    if urlpath is not None:
        path = os.fspath(urlpath)
        if mode not in ("w", "a"):
            raise ValueError(f"mode must be 'w' or 'a' for a new table, got {mode!r}")
        if os.path.exists(path):
            if mode != "w":
                raise FileExistsError(f"{path!r} exists: use mode='w' to replace it")
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        storage = TableStorage(open_tree(path, "w"), owns_leaves=True)
    out = cls.__new__(cls)
    out._row_type = None
    out._validate = bool(validate)
    out._cparams, out._dparams = cparams, dparams
    out._closed = False
    out._computed_cols = {}
    try:
        out._create(storage, list(columns), max(n, 1))
    except BaseException:
        storage.close()
        raise
    if n:
        out.extend(data, validate=validate)
    return out


def resolve_nulls(columns: list[TableColumn]) -> list[TableColumn]:
    """The columns with their nullable specs resolved to mask or sentinel storage, as a
    table made from a row type has them (``ctable.nulls.resolve_nullable`` where nullable
    columns are stored; as they are where not)."""
    import importlib

    try:
        nulls = importlib.import_module(f"{__package__}.nulls")
    except ImportError:
        return list(columns)
    resolved: list[TableColumn] = nulls.resolve_nullable(list(columns), check_unknown=False)
    return resolved
