"""A nullable CTable column's nulls through pandas, as python-blosc2 4.x gives them.

Export (:func:`pandas_values`): a null becomes pandas' missing value, never what stands in
its slot (the fill of a mask column, the sentinel of a sentinel one). A column holding a
null moves to a dtype that can say so: NaN for floats, NaT for times, pandas' ``boolean``
for a bool (a sentinel bool is ``uint8`` in storage), ``Int<w>``/``UInt<w>`` for integers
(their width kept: float64 would round a large int64), and ``object`` with ``None`` for the
rest (text, bytes, complex). A column without a null keeps its NumPy dtype.

Import (:func:`pandas_cells`): a Series as values the write path takes: its NumPy values
when it has no missing cell (or goes to a float column: pandas cannot tell a missing cell
from NaN there, and NaN is a value of a mask column), else its cells with ``None`` for a missing
one (NA, NaT, NaN in a text column), and a sentinel column's sentinel for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .nulls import NULL_MASK, NULL_SENTINEL, is_na, null_kind

__all__ = ["pandas_cells", "pandas_values"]


def pandas_values(pd: Any, column: Any, values: Any) -> Any:
    """``values`` (the live values of ``column``, a :class:`~.column.Column`) with the
    nulls as pandas' missing value, in a dtype that has one; ``values`` itself when the
    column holds no null.

    >>> import dataclasses
    >>> import pandas as pd
    >>> import pyblosc2 as blosc2
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = blosc2.field(blosc2.int16(nullable=True))
    >>> t = blosc2.CTable(Row, new_data=[(1,), (None,)])
    >>> pandas_values(pd, t["x"], t["x"][:]).tolist()
    [1, <NA>]
    """
    kind = column.null_storage
    if kind not in (NULL_MASK, NULL_SENTINEL):
        return values  # no nulls, or None cells (vlstring, vlbytes, dictionary) already
    nulls = np.asarray(column.is_null(), dtype=np.bool_)
    if not nulls.any():
        return values
    arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    spec_kind = getattr(column._null_spec, "kind", "")
    if arr.dtype.kind == "f":
        out = arr.copy()
        out[nulls] = np.nan
        return out
    if arr.dtype.kind == "M":
        out = arr.copy()
        out[nulls] = np.array("NaT", dtype=arr.dtype)  # in the column's unit
        return out
    if arr.dtype.kind == "b" or spec_kind == "bool":  # a sentinel bool: uint8 0, 1, 255
        boolean = pd.array(arr.astype(np.bool_), dtype="boolean")
        boolean[nulls] = pd.NA
        return boolean
    if arr.dtype.kind in "iu":
        prefix = "Int" if arr.dtype.kind == "i" else "UInt"
        ints = pd.array(arr, dtype=f"{prefix}{arr.dtype.itemsize * 8}")
        ints[nulls] = pd.NA
        return ints
    out = np.empty(len(arr), dtype=object)  # an object array: a list of complex would
    out[:] = arr.tolist()  # come back complex128 with the None as nan+0j
    out[nulls] = None
    return out


def pandas_cells(series: Any, column: Any) -> Any:
    """The values of the pandas ``series`` for the table column ``column`` (a
    :class:`~.schema.TableColumn`): its NumPy values, or its cells with the missing ones
    as ``None`` (a sentinel column's sentinel).

    >>> import pandas as pd
    >>> import pyblosc2 as blosc2
    >>> from pyblosc2.ctable.schema import TableColumn
    >>> col = TableColumn("x", blosc2.int64(null_value=-1), None)
    >>> pandas_cells(pd.Series([1, None], dtype="Int64"), col)
    [1, -1]
    """
    missing = np.asarray(series.isna(), dtype=np.bool_)
    dtype = getattr(column, "dtype", None)
    if not missing.any():
        return series.to_numpy()
    if dtype is not None and np.dtype(dtype).kind == "f":  # NaN: a value (pandas' missing)
        return series.to_numpy(dtype=dtype, na_value=np.nan)
    cells = series.astype(object).tolist()
    for i in np.flatnonzero(missing).tolist():
        cells[i] = None
    cells = [None if is_na(v) else v for v in cells]
    if null_kind(column.spec) == NULL_SENTINEL:
        sentinel = column.spec.null_value
        cells = [sentinel if v is None else v for v in cells]
    return cells
