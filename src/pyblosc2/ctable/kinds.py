"""python-blosc2's CTable-only column kinds, declared so that row types naming them are
valid Python (``blosc2.field(blosc2.dictionary())``): ``vlstring``, ``vlbytes``, ``utf8``,
``object`` and ``dictionary``. A CTable refuses a column of any of them with
:class:`NotImplementedError` naming the kind (:func:`~pyblosc2.ctable.schema.check_stored_spec`):
pyblosc2 does not store variable-length, UTF-8, object or dictionary columns.
"""

from __future__ import annotations

import builtins
from typing import Any, ClassVar

from ..schema import SchemaSpec

__all__ = ["DeclaredSpec", "dictionary", "object", "utf8", "vlbytes", "vlstring"]


class DeclaredSpec(SchemaSpec):
    """A column kind pyblosc2 knows by name only (its options kept as given)."""

    kind: ClassVar[str] = ""
    python_type = builtins.object

    def __init__(self, kind: str, **options: Any) -> None:
        self.kind = kind  # type: ignore[misc]
        self.options = options
        self.nullable = bool(options.get("nullable", False))

    def to_metadata_dict(self) -> dict[str, Any]:
        """The kind and the options given."""
        return {"kind": self.kind, **self.options}

    def __repr__(self) -> str:
        return f"{self.kind}({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"


def vlstring(*, nullable: bool = False, **options: Any) -> DeclaredSpec:
    """python-blosc2's variable-length text column kind (not stored by pyblosc2).

    >>> vlstring().kind
    'vlstring'
    """
    return DeclaredSpec("vlstring", nullable=nullable, **options)


def vlbytes(*, nullable: bool = False, **options: Any) -> DeclaredSpec:
    """python-blosc2's variable-length bytes column kind (not stored by pyblosc2).

    >>> vlbytes().kind
    'vlbytes'
    """
    return DeclaredSpec("vlbytes", nullable=nullable, **options)


def utf8(*, nullable: bool = False, **options: Any) -> DeclaredSpec:
    """python-blosc2's UTF-8 (offsets + bytes) column kind (not stored by pyblosc2).

    >>> utf8().kind
    'utf8'
    """
    return DeclaredSpec("utf8", nullable=nullable, **options)


def object(*, nullable: bool = False, **options: Any) -> DeclaredSpec:
    """python-blosc2's object (msgpack) column kind (not stored by pyblosc2).

    >>> object().kind
    'object'
    """
    return DeclaredSpec("object", nullable=nullable, **options)


def dictionary(*, nullable: bool = True, **options: Any) -> DeclaredSpec:
    """python-blosc2's dictionary-encoded text column kind (not stored by pyblosc2).

    >>> dictionary().kind
    'dictionary'
    """
    return DeclaredSpec("dictionary", nullable=nullable, **options)
