"""python-blosc2's ``blosc2.schema_compiler`` module names (``from blosc2.schema_compiler
import compile_schema``): a CTable row type compiled into columns and its schema document,
from :mod:`pyblosc2.ctable.schema`; absolute imports keep one class when pyblosc2 is
imported as ``blosc2``."""

from __future__ import annotations

from typing import Any

from pyblosc2.ctable.base import TableSchema
from pyblosc2.ctable.schema import TableColumn, check_column_name, compile_row_type
from pyblosc2.ctable.schema import schema_from_dict as _columns_from_dict
from pyblosc2.ctable.schema import schema_to_dict as _dict_from_columns
from pyblosc2.ctable.strings import VAR_KINDS, var_spec
from pyblosc2.errors import ParamTypeError
from pyblosc2.schema import spec_from_metadata_dict as _fixed_spec_from_dict

__all__ = [
    "CompiledColumn",
    "CompiledSchema",
    "compile_schema",
    "compute_display_width",
    "schema_from_dict",
    "schema_to_dict",
    "spec_from_metadata_dict",
    "validate_annotation_matches_spec",
]


#: python-blosc2's names of a compiled schema and of one of its columns
CompiledSchema = TableSchema
CompiledColumn = TableColumn


def _validate_column_name(name: Any) -> None:
    """Refuse a name python-blosc2 refuses (empty, or starting with ``_``); ``/`` is allowed.

    >>> _validate_column_name("a/b")
    """
    check_column_name(name)


def compile_schema(row_type: Any) -> TableSchema:
    """The columns of a dataclass row type.

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Row:
    ...     x: int = 0
    >>> list(compile_schema(Row).columns_by_name)
    ['x']
    """
    return TableSchema(tuple(compile_row_type(row_type)), row_type)


def schema_to_dict(schema: TableSchema) -> dict[str, Any]:
    """The schema document of compiled columns."""
    return _dict_from_columns(list(schema.columns))


def schema_from_dict(doc: Any) -> TableSchema:
    """The columns a schema document describes."""
    return TableSchema(tuple(_columns_from_dict(doc)))


def spec_from_metadata_dict(data: Any) -> Any:
    """The spec a column's metadata dict describes (the variable-length kinds too).

    >>> type(spec_from_metadata_dict({"kind": "vlstring"})).__name__
    'VLStringSpec'
    """
    if isinstance(data, dict) and data.get("kind") in VAR_KINDS:
        return var_spec(**data)
    return _fixed_spec_from_dict(data)


def validate_annotation_matches_spec(name: str, annotation: Any, spec: Any) -> None:
    """Refuse an annotation that is not the spec's Python type (``str`` for text).

    >>> from pyblosc2.ctable.kinds import dictionary
    >>> validate_annotation_matches_spec("x", str, dictionary())
    """
    expected = getattr(spec, "python_type", None)
    if expected not in (None, object) and annotation is not expected:
        raise ParamTypeError(
            f"column {name!r}: annotation {annotation!r} is incompatible with its "
            f"{spec.kind} spec (expected {expected.__name__})"
        )


def compute_display_width(spec: Any) -> int:
    """The width python-blosc2 gives a column of ``spec`` when it prints a table: 40 for
    the variable-length kinds.

    >>> from pyblosc2.ctable.kinds import vlstring
    >>> compute_display_width(vlstring())
    40
    """
    if spec.kind in VAR_KINDS or spec.kind == "list":
        return 40
    raise NotImplementedError(f"compute_display_width of a {spec.kind} spec")
