"""python-blosc2's ``CTable`` as storage: a dataclass schema, one NDArray per column and a
``_valid_rows`` mask, in memory, in a ``.b2d``/``.b2z`` store of its own, or inline in a
TreeStore, with python-blosc2 4.x's layout (:mod:`.storage`).

Modules: :mod:`.schema` (dataclass → columns, the schema document), :mod:`.rows` (rows and
batches into checked column arrays), :mod:`.storage` (the leaves and the manifest),
:mod:`.column` (a column by logical row), :mod:`.table` (``CTable``).
"""

from .base import TableSchema
from .column import Column, ColumnViewIndexer
from .schema import TableColumn, compile_row_type, schema_from_dict, schema_to_dict
from .storage import Leaves, TableStorage, register_tree_opener
from .table import NOT_BUILT, CTable, ctable_from_cframe

__all__ = [
    "NOT_BUILT",
    "CTable",
    "Column",
    "ColumnViewIndexer",
    "Leaves",
    "TableColumn",
    "TableSchema",
    "TableStorage",
    "compile_row_type",
    "ctable_from_cframe",
    "register_tree_opener",
    "schema_from_dict",
    "schema_to_dict",
]
