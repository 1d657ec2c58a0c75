"""List columns of a CTable (python-blosc2's ``blosc2.field(blosc2.list(item_spec))``): one
list of typed items per row (or ``None`` where the spec is nullable).

As python-blosc2 keeps them, a list column is a :class:`~pyblosc2.vlarrays.ListArray` (its
``listarray`` metalayer, a BatchArray of msgpack batches or an ObjectArray) at
``_cols/<name>`` (a ``.b2b`` leaf), holding the table's physical rows up to the last one
written. pyblosc2 keeps the rows in memory as :mod:`.strings`' variable-length columns are
(a :class:`ListColumn`) and writes the ListArray when the table closes or is saved; it
registers itself with :mod:`.strings`, whose functions then take list columns too.

A stored list column is read checked: its leaf must be a ListArray whose spec is the
schema's, with no more rows than the table, every row a list (or ``None`` if nullable) of
items the item spec accepts; anything else is a :class:`~pyblosc2.errors.FormatError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import FormatError, ParamError, ParamTypeError
from ..ndarray.ndarray import NDArray
from ..schema import ListSpec
from ..vlarrays.listarray import ListArray, coerce_list_cell
from .strings import VarColumn, register_memory_kind

__all__ = ["ListColumn", "coerce_lists", "load_list_column", "save_list_column"]

_OBJ = np.dtype(object)


class ListColumn(VarColumn):
    """The physical rows of one list column, in memory (a list or ``None`` per row).

    >>> from pyblosc2 import schema
    >>> c = ListColumn(schema.list(schema.int8(), nullable=True), 3)
    >>> c[0:2] = coerce_lists("t", c.spec, [[1, 2], None])
    >>> c[0:3].tolist()
    [[1, 2], None, None]
    """

    spec: ListSpec  # type: ignore[assignment]

    def __init__(self, spec: ListSpec, capacity: int, values: np.ndarray | None = None) -> None:
        super().__init__(spec, capacity, values)  # type: ignore[arg-type]

    @property
    def dtype(self) -> np.dtype[Any]:
        return _OBJ

    @property
    def nbytes(self) -> int:
        return int(sum(8 * len(v) for v in self._values if v is not None))

    def _present(self, values: np.ndarray) -> np.ndarray:
        return values

    def __setitem__(self, key: Any, values: Any) -> None:
        if isinstance(key, int | np.integer):
            self._values[int(key)] = values
            return
        arr = values if isinstance(values, np.ndarray) else _object_array(list(values))
        self._values[key] = arr


def _object_array(items: list[Any]) -> np.ndarray:
    """A 1-d object array of ``items`` (lists stay lists: no NumPy broadcasting)."""
    out = np.empty(len(items), dtype=_OBJ)
    for i, v in enumerate(items):
        out[i] = v
    return out


def coerce_lists(name: str, spec: ListSpec, values: Any) -> np.ndarray:
    """``values`` (one cell per row) as a 1-d object array of checked lists (python-blosc2's
    item conversion and bounds), ``None`` for a null row of a nullable column.

    >>> from pyblosc2 import schema
    >>> coerce_lists("t", schema.list(schema.float32()), [(1, 2.5), []]).tolist()
    [[1.0, 2.5], []]
    """
    if isinstance(values, NDArray):
        values = values[:]
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise ParamTypeError(f"column {name!r}: expected a sequence of lists, got {values!r}")
    if isinstance(values, np.ndarray) and values.dtype != _OBJ:
        if values.ndim != 2:
            raise ParamError(f"column {name!r}: expected one list per row, got {values.shape}")
        values = list(values)
    try:
        cells = [coerce_list_cell(spec, value) for value in values]
    except ParamError as exc:  # ParamTypeError too
        raise type(exc)(f"column {name!r}: {exc}") from None
    return _object_array(cells)


def save_list_column(storage: Any, key: str, column: VarColumn, n: int) -> None:
    """Write the first ``n`` physical rows of ``column`` at ``key`` as a ListArray."""
    spec: ListSpec = column.spec  # type: ignore[assignment]
    out = ListArray(spec=spec, contiguous=True)
    out.extend(column._values[:n].tolist(), validate=False)  # coerced when written
    out.flush()
    storage.install(key, out)


def _fail(key: str, field: str, expected: str, got: Any) -> FormatError:
    return FormatError("CTable", f"{key} {field}", 0, expected, got)


def load_list_column(
    storage: Any, key: str, spec: Any, capacity: int, live: Any = None
) -> ListColumn:
    """The stored list column at ``key`` of a table of ``capacity`` physical rows, checked."""
    leaves = storage.leaves
    found = leaves.get(key) if leaves is not None and leaves.has(key) else None
    if not isinstance(found, ListArray):
        raise _fail(key, "leaf", "a stored ListArray", type(found).__name__)
    if found.spec.to_metadata_dict() != spec.to_metadata_dict():
        raise _fail(key, "listarray spec", repr(spec.to_metadata_dict()), found.spec)
    n = len(found)
    if n > capacity:
        raise _fail(key, "rows", f"at most {capacity} rows (the table's)", n)
    cells: list[Any] = []
    try:
        for row in found:
            cells.append(coerce_list_cell(spec, row))  # noqa: PERF401  (the row count on failure)
    except ParamError as exc:
        raise _fail(key, f"row {len(cells)}", spec.display_label(), exc) from None
    return ListColumn(spec, capacity, _object_array(cells))


class _ListKind:
    """What :mod:`.strings` asks of a list column (the memory-kind protocol)."""

    new = ListColumn
    coerce = staticmethod(coerce_lists)
    save = staticmethod(save_list_column)
    load = staticmethod(load_list_column)


register_memory_kind(ListSpec, _ListKind)
