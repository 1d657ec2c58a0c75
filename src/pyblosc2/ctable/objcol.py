"""Object columns of a CTable (python-blosc2's ``blosc2.field(blosc2.object())``): any
msgpack value per row, ``None`` where the spec is nullable.

As python-blosc2 keeps them, an object column is a BatchArray of msgpack batches at
``_cols/<name>`` with the ``ctable_varlen_scalar`` metalayer (``py_type: "object"``), the
layout of a ``vlstring`` column. pyblosc2 keeps the rows in memory as :mod:`.strings`'
columns are and writes them when the table closes or is saved (a value msgpack cannot hold
is refused then, with :class:`~pyblosc2.errors.ParamTypeError`, as python-blosc2 refuses it
on close); it registers itself with :mod:`.strings`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import FormatError, ParamTypeError
from ..ndarray.ndarray import NDArray
from ..schema_declared import ObjectSpec
from ..vlarrays.batcharray import BatchArray
from .strings import ROLE_KEY, VarColumn, _batch_array, _open, _read_batches, register_memory_kind

__all__ = ["ObjectColumn", "coerce_objects", "load_object_column", "save_object_column"]

_OBJ = np.dtype(object)


class ObjectColumn(VarColumn):
    """The physical rows of one object column, in memory.

    >>> c = ObjectColumn(ObjectSpec(nullable=True), 2)
    >>> c[0:2] = coerce_objects("p", c.spec, [{"a": 1}, None])
    >>> c[0:2].tolist()
    [{'a': 1}, None]
    """

    spec: ObjectSpec  # type: ignore[assignment]

    def __init__(self, spec: ObjectSpec, capacity: int, values: np.ndarray | None = None) -> None:
        super().__init__(spec, capacity, values)  # type: ignore[arg-type]

    @property
    def dtype(self) -> np.dtype[Any]:
        return _OBJ

    @property
    def nbytes(self) -> int:
        return 8 * len(self._values)

    def _present(self, values: np.ndarray) -> np.ndarray:
        return values

    def _assign(self, key: Any, values: Any) -> None:
        if isinstance(key, int | np.integer):
            self._values[int(key)] = values
            return
        self._values[key] = values if isinstance(values, np.ndarray) else _objects(list(values))


def _objects(items: list[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=_OBJ)
    for i, v in enumerate(items):
        out[i] = v
    return out


def coerce_objects(name: str, spec: ObjectSpec, values: Any) -> np.ndarray:
    """``values`` (one per row) as a 1-d object array; ``None`` refused unless nullable.

    >>> coerce_objects("p", ObjectSpec(), [(1, 2), "x"]).tolist()
    [(1, 2), 'x']
    """
    if isinstance(values, NDArray):
        values = values[:]
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise ParamTypeError(f"column {name!r}: expected a sequence of values, got {values!r}")
    items = list(values) if not isinstance(values, np.ndarray) else list(values.tolist())
    if not spec.nullable and any(v is None for v in items):
        raise ParamTypeError(f"Column {name!r} is not nullable; received None.")
    return _objects(items)


def save_object_column(storage: Any, key: str, column: VarColumn, n: int) -> None:
    """Write the first ``n`` physical rows at ``key`` in python-blosc2's layout."""
    spec = column.spec
    items = column._values[:n].tolist()
    try:
        batches = _batch_array(items, spec, "object", spec.nullable)
    except (TypeError, ValueError) as exc:
        raise ParamTypeError(f"{key}: a value msgpack cannot hold: {exc}") from None
    storage.install(key, batches)


def load_object_column(
    storage: Any, key: str, spec: Any, capacity: int, live: Any = None
) -> ObjectColumn:
    """The stored object column at ``key`` of a table of ``capacity`` physical rows, checked
    (its BatchArray's role, its row count; a null only where the spec allows it)."""
    ba = _open(storage, key, BatchArray)
    role = ba.schunk.meta.get(ROLE_KEY)
    if not isinstance(role, dict) or role.get("py_type") != "object":
        raise FormatError("CTable", f"{key} {ROLE_KEY}", 0, "py_type 'object'", role)
    items = _read_batches(key, ba, capacity, "object")
    if not spec.nullable and any(v is None for v in items):
        row = next(i for i, v in enumerate(items) if v is None)
        raise FormatError("CTable", f"{key} row {row}", 0, "a value (not nullable)", None)
    return ObjectColumn(spec, capacity, _objects(items))


class _ObjectKind:
    """What :mod:`.strings` asks of an object column (the memory-kind protocol)."""

    new = ObjectColumn
    coerce = staticmethod(coerce_objects)
    save = staticmethod(save_object_column)
    load = staticmethod(load_object_column)


register_memory_kind(ObjectSpec, _ObjectKind)
