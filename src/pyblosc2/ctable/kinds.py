"""python-blosc2's CTable-only column kinds, declared so that row types naming them are
valid Python (``blosc2.field(blosc2.dictionary())``): ``vlstring``, ``vlbytes``, ``utf8``,
``object`` and ``dictionary``. ``utf8``, ``vlstring``, ``vlbytes`` and ``dictionary`` columns
are stored by :mod:`.strings`, ``object`` columns by :mod:`.objcol`.
"""

from __future__ import annotations

import builtins
from typing import Any, ClassVar

from ..schema import ObjectSpec, SchemaSpec
from .strings import VarSpec, var_spec

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


def vlstring(*, nullable: bool = False, **options: Any) -> VarSpec:
    """python-blosc2's variable-length text column kind (:mod:`.strings`).

    >>> vlstring().kind
    'vlstring'
    """
    return var_spec("vlstring", nullable=nullable, **options)


def vlbytes(*, nullable: bool = False, **options: Any) -> VarSpec:
    """python-blosc2's variable-length bytes column kind (:mod:`.strings`).

    >>> vlbytes().kind
    'vlbytes'
    """
    return var_spec("vlbytes", nullable=nullable, **options)


def utf8(*, nullable: bool = False, **options: Any) -> VarSpec:
    """python-blosc2's UTF-8 (offsets + bytes) column kind (:mod:`.strings`).

    >>> utf8().kind
    'utf8'
    """
    return var_spec("utf8", nullable=nullable, **options)


def object(*, nullable: bool = False, **options: Any) -> ObjectSpec:
    """python-blosc2's object (msgpack) column kind (:mod:`.objcol`).

    >>> object().kind
    'object'
    """
    return ObjectSpec(nullable=nullable, **options)


def dictionary(*, nullable: bool = True, **options: Any) -> VarSpec:
    """python-blosc2's dictionary-encoded text column kind (:mod:`.strings`).

    >>> dictionary().kind
    'dictionary'
    """
    return var_spec("dictionary", nullable=nullable, **options)
