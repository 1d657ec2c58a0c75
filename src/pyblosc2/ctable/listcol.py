"""python-blosc2 4.x's ``list`` columns of a CTable (``blosc2.list(item_spec, ...)``).

A table holds such a column in memory as a :class:`ListColumn` (one Python list, or ``None``
for a null or an unused row, per physical row) and writes python-blosc2's layout when it is
closed or saved, as it does its text columns (:mod:`.strings`)::

    list        /_cols/<name>        ListArray (.b2b): a BatchArray of ``batch_rows`` rows
                                     per batch with the ``listarray`` metalayer (the spec)

Reading a stored column checks it before anything is built from it (:func:`load_list_column`):
a ListArray leaf, no more rows than the table, every row a list of the column's items (or a
null where the column is nullable), as :func:`~pyblosc2.vlarrays.listarray.coerce_list_cell`
checks a row written through the API.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import FormatError, ParamError, ParamTypeError
from ..ndarray.ndarray import NDArray
from ..schema import ListSpec
from ..vlarrays.listarray import ListArray, coerce_list_cell
from .strings import VarColumn, register_memory_kind

__all__ = [
    "ListColumn",
    "coerce_list_values",
    "is_list_spec",
    "load_list_column",
    "save_list_column",
]

_OBJ = np.dtype(object)


def is_list_spec(spec: Any) -> bool:
    """Whether ``spec`` is a list column's."""
    return isinstance(spec, ListSpec)


def coerce_list_values(name: str, spec: ListSpec, values: Any) -> np.ndarray:
    """``values`` (one per row) as a 1-d object array of checked lists (``None``: a null).

    >>> from pyblosc2 import schema as s
    >>> coerce_list_values("t", s.list(s.int32(), nullable=True), [[1, 2], None]).tolist()
    [[1, 2], None]
    """
    if isinstance(values, NDArray):
        values = values[:]
    if isinstance(values, str | bytes):
        raise ParamTypeError(f"column {name!r}: expected a sequence of lists, got {values!r}")
    if isinstance(values, np.ndarray) and values.dtype != _OBJ:
        if values.ndim != 2:
            raise ParamError(f"column {name!r}: expected one list per row, got {values.shape}")
        items = values.tolist()
    else:
        items = list(values)
    out = np.empty(len(items), dtype=_OBJ)
    i = 0
    try:
        for i, v in enumerate(items):
            out[i] = coerce_list_cell(spec, v)
    except (ParamError, ParamTypeError) as exc:
        raise type(exc)(f"column {name!r} row {i}: {exc}") from None
    return out


class ListColumn(VarColumn):
    """The physical rows of one list column, in memory (the NDArray interface a table
    uses: ``shape``, ``dtype``, slicing, ``resize``).

    >>> from pyblosc2 import schema as s
    >>> c = ListColumn(s.list(s.int32(), nullable=True), 3)
    >>> c[0:2] = np.array([[1], None], dtype=object)
    >>> c[:].tolist(), c[0]
    ([[1], None, None], [1])
    """

    def __init__(self, spec: ListSpec, capacity: int, values: np.ndarray | None = None) -> None:
        self.spec = spec  # type: ignore[assignment]
        self._values = np.full(capacity, None, dtype=_OBJ)
        if values is not None:
            self._values[: len(values)] = values

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int | np.integer):
            return self._values[int(key)]
        return self._values[key]

    def _assign(self, key: Any, values: Any) -> None:
        if isinstance(key, int | np.integer):
            self._values[int(key)] = values
            return
        if isinstance(values, np.ndarray) and values.dtype == _OBJ:
            self._values[key] = values
            return
        arr = np.empty(len(values), dtype=_OBJ)
        arr[:] = list(values)  # lists stay lists (np.asarray would make a 2-d array)
        self._values[key] = arr

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self[:]
        return out if dtype is None else out.astype(dtype)


def save_list_column(storage: Any, key: str, column: ListColumn, n: int) -> None:
    """Write the first ``n`` physical rows of ``column`` at ``key`` of ``storage`` as
    python-blosc2's ListArray leaf."""
    la = ListArray(spec=column.spec, contiguous=True)  # type: ignore[arg-type]
    la.extend(column._values[:n].tolist(), validate=False)  # checked when written
    la.flush()
    storage.install(key, la)


def _fail(key: str, field: str, expected: str, got: Any) -> FormatError:
    return FormatError("CTable", f"{key} {field}", 0, expected, got)


def load_list_column(storage: Any, key: str, spec: ListSpec, capacity: int) -> ListColumn:
    """The stored list column at ``key`` of a table of ``capacity`` physical rows, checked."""
    leaves = storage.leaves
    la = leaves.get(key) if leaves is not None and leaves.has(key) else None
    if not isinstance(la, ListArray):
        raise _fail(key, "leaf", "a stored ListArray", type(la).__name__)
    n = len(la)
    if not 0 <= n <= capacity:
        raise _fail(key, "rows", f"at most {capacity} rows (the table's)", n)
    if la.spec.item_spec.to_metadata_dict() != spec.item_spec.to_metadata_dict():
        raise _fail(key, "item spec", repr(spec.item_spec.to_metadata_dict()), la.spec.item_spec)
    values = np.empty(n, dtype=_OBJ)
    i = 0
    try:
        for i, row in enumerate(la):
            values[i] = coerce_list_cell(spec, row)
    except (ParamError, ParamTypeError, TypeError, ValueError) as exc:
        raise _fail(key, f"row {i}", f"a {spec.display_label()} row", exc) from None
    return ListColumn(spec, capacity, values)


class _ListKind:
    """What :mod:`.strings` asks of a list column (the memory-kind protocol)."""

    new = ListColumn
    coerce = staticmethod(coerce_list_values)
    save = staticmethod(save_list_column)

    @staticmethod
    def load(storage: Any, key: str, spec: ListSpec, capacity: int, live: Any = None) -> Any:
        return load_list_column(storage, key, spec, capacity)


register_memory_kind(ListSpec, _ListKind)
