"""python-blosc2's ``blosc2.schema_compiler`` module names for the schema document of a
CTable: ``schema_from_dict`` (a document into the compiled columns, ``.columns`` /
``.columns_by_name``) and ``schema_to_dict`` (back), over :mod:`pyblosc2.ctable.schema`.

>>> from pyblosc2.schema_compiler import schema_from_dict, schema_to_dict
>>> doc = {"version": 1, "columns": [{"name": "x", "kind": "int32", "nullable": True,
...                                   "null_value": -1}]}
>>> schema_to_dict(schema_from_dict(doc)) == doc
True
"""

from __future__ import annotations

from typing import Any

from pyblosc2.ctable.base import TableSchema
from pyblosc2.ctable.schema import schema_from_dict as _columns_from_dict
from pyblosc2.ctable.schema import schema_to_dict as _columns_to_dict

__all__ = ["schema_from_dict", "schema_to_dict"]


def schema_from_dict(doc: Any) -> TableSchema:
    """The compiled columns a schema document describes."""
    return TableSchema(tuple(_columns_from_dict(doc)))


def schema_to_dict(schema: Any) -> dict[str, Any]:
    """The schema document of compiled columns (a table's ``_schema``)."""
    return _columns_to_dict(list(schema.columns))
