"""python-blosc2's ``CTable``: a dataclass schema, one NDArray per column and a
``_valid_rows`` mask, in memory, in a ``.b2d``/``.b2z`` store of its own, inline in a
TreeStore or in a cframe, with python-blosc2 4.x's layout (:mod:`.storage`), and the
questions asked of it.

Modules: :mod:`.schema` (dataclass → columns, the schema document), :mod:`.kinds` (column
kinds declared, not stored), :mod:`.rows` (rows and batches into checked column arrays),
:mod:`.storage` (the leaves and the manifest), :mod:`.base` (a table's state, rows by
position, views), :mod:`.column` and :mod:`.colstats` (a column by logical row, its lazy
expressions and aggregates), :mod:`.colexpr` (``col``), :mod:`.views` (``where``,
selections), :mod:`.sorting` (``sort_by``), :mod:`.display` and :mod:`.info` (text,
statistics, ``info``), :mod:`.schema_ops` (column changes), :mod:`.persist` (copies, files,
cframes, vlmeta), :mod:`.computed` (computed columns, ``assign``, ``apply``),
:mod:`.table` (``CTable``), :mod:`.groupby` (``group_by``), :mod:`.arrow_io` (Arrow, Parquet,
pandas), :mod:`.csv_io` (CSV), :mod:`.build` (new tables from columns),
:mod:`.nulls`, :mod:`.nullstore`, :mod:`.nullcol` and
:mod:`.kleene` (nullable columns: their stored forms, null API and three-valued logic),
:mod:`.indexes`, :mod:`.indexcat`, :mod:`.indexplan` and :mod:`.indexstats` (table indexes:
building, the catalog, ``where`` through them, min/max from their summaries).
"""

from typing import TYPE_CHECKING

from .._lazyattrs import lazy_getattr
from ..schema import (  # python-blosc2's ctable module has the spec names too
    ListSpec,
    NDArraySpec,
    ObjectSpec,
    SchemaSpec,
    StructSpec,
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    timestamp,
    uint8,
    uint16,
    uint32,
    uint64,
)

#: the names this package exports from its modules: ``(module, name there)``, imported on
#: first use (``import pyblosc2`` loads none of them: a process that reads arrays needs no
#: table code)
_FROM: dict[str, tuple[str, str]] = {
    "TableSchema": ("base", "TableSchema"),
    "_ChunkAlignedWriter": ("chunkwriter", "ChunkAlignedWriter"),
    "ColExpr": ("colexpr", "ColExpr"),
    "col": ("colexpr", "col"),
    "Column": ("column", "Column"),
    "ColumnViewIndexer": ("column", "ColumnViewIndexer"),
    "NullableBoolExpr": ("kleene", "NullableBoolExpr"),
    "ListColumn": ("listcol", "ListColumn"),
    "NullPolicy": ("nulls", "NullPolicy"),
    "get_null_policy": ("nulls", "get_null_policy"),
    "null_policy": ("nulls", "null_policy"),
    "ObjectColumn": ("objcol", "ObjectColumn"),
    "TableColumn": ("schema", "TableColumn"),
    "compile_row_type": ("schema", "compile_row_type"),
    "schema_from_dict": ("schema", "schema_from_dict"),
    "schema_to_dict": ("schema", "schema_to_dict"),
    "Leaves": ("storage", "Leaves"),
    "TableStorage": ("storage", "TableStorage"),
    "register_tree_opener": ("storage", "register_tree_opener"),
    "DictionarySpec": ("strings", "DictionarySpec"),
    "UTF8Spec": ("strings", "UTF8Spec"),
    "VLBytesSpec": ("strings", "VLBytesSpec"),
    "VLStringSpec": ("strings", "VLStringSpec"),
    "NOT_BUILT": ("table", "NOT_BUILT"),
    "CTable": ("table", "CTable"),
    "ctable_from_cframe": ("table", "ctable_from_cframe"),
}
#: imported with the first of those names, whichever it is: the table and the modules that
#: register their column kinds on import (list and object columns)
_LOADED_TOGETHER = ("listcol", "objcol", "table")


__getattr__ = lazy_getattr(
    {name: (f".{module}", attr) for name, (module, attr) in _FROM.items()},
    globals(),
    together=[f".{module}" for module in _LOADED_TOGETHER],
)


if TYPE_CHECKING:  # what the names above are, for type checkers
    from .base import TableSchema
    from .chunkwriter import ChunkAlignedWriter as _ChunkAlignedWriter
    from .colexpr import ColExpr, col
    from .column import Column, ColumnViewIndexer
    from .kleene import NullableBoolExpr
    from .listcol import ListColumn  # list columns: registered with strings.py on import
    from .nulls import NullPolicy, get_null_policy, null_policy
    from .objcol import ObjectColumn  # object columns: registered with strings.py on import
    from .schema import TableColumn, compile_row_type, schema_from_dict, schema_to_dict
    from .storage import Leaves, TableStorage, register_tree_opener
    from .strings import DictionarySpec, UTF8Spec, VLBytesSpec, VLStringSpec
    from .table import NOT_BUILT, CTable, ctable_from_cframe

__all__ = [
    "NOT_BUILT",
    "CTable",
    "ColExpr",
    "Column",
    "ColumnViewIndexer",
    "DictionarySpec",
    "Leaves",
    "ListColumn",
    "ListSpec",
    "NDArraySpec",
    "NullPolicy",
    "NullableBoolExpr",
    "ObjectColumn",
    "ObjectSpec",
    "SchemaSpec",
    "StructSpec",
    "TableColumn",
    "TableSchema",
    "TableStorage",
    "UTF8Spec",
    "VLBytesSpec",
    "VLStringSpec",
    "_ChunkAlignedWriter",
    "col",
    "compile_row_type",
    "complex64",
    "complex128",
    "ctable_from_cframe",
    "float32",
    "float64",
    "get_null_policy",
    "int8",
    "int16",
    "int32",
    "int64",
    "null_policy",
    "register_tree_opener",
    "schema_from_dict",
    "schema_to_dict",
    "string",
    "timestamp",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
