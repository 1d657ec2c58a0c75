"""The specs of python-blosc2 4.x's variable-length text columns of a CTable (``utf8``,
``vlstring``, ``vlbytes``, ``dictionary``): their options and metadata dicts. The columns
themselves and their stored layouts are :mod:`.strings`."""

from __future__ import annotations

import builtins
from typing import Any, ClassVar

from ..errors import ParamError, ParamTypeError
from ..schema import SchemaSpec

__all__ = [
    "DEFAULT_NULL",
    "VAR_KINDS",
    "DictionarySpec",
    "UTF8Spec",
    "VLBytesSpec",
    "VLStringSpec",
    "VarSpec",
    "var_spec",
]

VAR_KINDS = ("utf8", "vlstring", "vlbytes", "dictionary")
DEFAULT_NULL = "__BLOSC2_NULL__"  # a utf8 column's null sentinel unless one is given


class VarSpec(SchemaSpec):
    """The spec of a ``utf8``, ``vlstring``, ``vlbytes`` or ``dictionary`` column, with
    python-blosc2's options and metadata dict.

    >>> var_spec("vlstring", batch_rows=512).to_metadata_dict()
    {'kind': 'vlstring', 'nullable': False, 'serializer': 'msgpack', 'batch_rows': 512}
    """

    kind: ClassVar[str] = ""
    dtype = None  # no one NumPy dtype (python-blosc2's); a table holds them as objects

    def __init__(self, kind: str, **options: Any) -> None:
        if kind not in VAR_KINDS:
            raise ParamError(f"not a variable-length column kind: {kind!r}")
        self.kind = kind  # type: ignore[misc]
        self.python_type = builtins.bytes if kind == "vlbytes" else builtins.str  # type: ignore[misc]
        self.null_value: Any = None
        self.null_storage: Any = None
        init: Any = {"utf8": self._init_utf8, "dictionary": self._init_dictionary}.get(kind)
        try:
            (init or self._init_vl)(**options)
        except TypeError as exc:  # an option this kind does not have
            raise ParamTypeError(f"{kind} column options {sorted(options)}: {exc}") from None

    def _init_utf8(
        self, nullable: Any = False, null_value: Any = None, null_storage: Any = None
    ) -> None:
        if null_value is not None and not isinstance(null_value, str):
            raise ParamTypeError(f"utf8 null_value must be str, got {type(null_value).__name__}")
        if null_value == "\x00":
            raise ParamError("utf8 null_value cannot be a single NUL character")
        if null_storage not in (None, "sentinel", "mask"):
            raise ParamError(f"null_storage must be 'sentinel', 'mask' or None: {null_storage!r}")
        if null_storage == "mask" and null_value is not None:
            raise ParamError("null_storage='mask' cannot be combined with a null_value")
        self.nullable = bool(nullable or null_value is not None or null_storage is not None)
        if null_storage == "sentinel" and null_value is None:
            null_value = DEFAULT_NULL  # python-blosc2's sentinel policy
        self.null_value, self.null_storage = null_value, null_storage

    def _init_vl(
        self,
        nullable: Any = False,
        serializer: Any = "msgpack",
        batch_rows: Any = 2048,
        items_per_block: Any = None,
    ) -> None:
        if serializer != "msgpack":
            raise ParamError(f"{self.kind} currently only supports serializer='msgpack'")
        for key, value in (("batch_rows", batch_rows), ("items_per_block", items_per_block)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value <= 0
            ):
                raise ParamError(f"{key} must be positive or None, got {value!r}")
        self.nullable = bool(nullable)
        self.serializer = serializer
        self.batch_rows = batch_rows
        self.items_per_block = items_per_block

    def _init_dictionary(
        self,
        nullable: Any = True,
        index_type: Any = None,
        value_type: Any = None,
        ordered: Any = False,
        null_code: Any = -1,
    ) -> None:
        if isinstance(index_type, dict):
            index_type = index_type.get("kind")
        elif index_type is not None:
            index_type = getattr(index_type, "kind", index_type)
        if index_type not in (None, "int32"):
            raise ParamTypeError(f"dictionary index_type must be int32, got {index_type!r}")
        if isinstance(value_type, dict):
            value_type = var_spec(**value_type)
        if value_type is not None and getattr(value_type, "kind", None) != "vlstring":
            raise ParamTypeError(f"dictionary value_type must be vlstring, got {value_type!r}")
        if isinstance(null_code, bool) or not isinstance(null_code, int):
            raise ParamTypeError(f"dictionary null_code must be an int, got {null_code!r}")
        self.nullable = bool(nullable)
        self.index_type = "int32"
        self.value_type = value_type if value_type is not None else VLStringSpec()
        self.ordered = bool(ordered)
        self.null_code = int(null_code)
        if self.null_code >= 0:
            raise NotImplementedError(f"dictionary null_code {self.null_code} (only negative)")

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it in the schema document."""
        if self.kind == "utf8":
            d: dict[str, Any] = {"kind": "utf8"}
            if self.nullable:
                d["nullable"] = True
            if self.null_value is not None:
                d["null_value"] = self.null_value
            if self.null_storage == "mask":
                d["null_storage"] = "mask"
            return d
        if self.kind == "dictionary":
            return {
                "kind": "dictionary",
                "index_type": {"kind": "int32"},
                "value_type": self.value_type.to_metadata_dict(),
                "ordered": self.ordered,
                "nullable": self.nullable,
                "null_code": self.null_code,
            }
        d = {"kind": self.kind, "nullable": self.nullable, "serializer": self.serializer}
        if self.batch_rows is not None:
            d["batch_rows"] = self.batch_rows
        if self.items_per_block is not None:
            d["items_per_block"] = self.items_per_block
        return d

    def display_label(self) -> str:
        """The kind, as python-blosc2 prints it."""
        return self.kind


class UTF8Spec(VarSpec):
    """A ``utf8`` column (offsets + bytes).

    >>> UTF8Spec().to_metadata_dict()["kind"]
    'utf8'
    """

    def __init__(self, **options: Any) -> None:
        super().__init__("utf8", **options)


class VLStringSpec(VarSpec):
    """A ``vlstring`` column (batches of str).

    >>> VLStringSpec().to_metadata_dict()["kind"]
    'vlstring'
    """

    def __init__(self, **options: Any) -> None:
        super().__init__("vlstring", **options)


class VLBytesSpec(VarSpec):
    """A ``vlbytes`` column (batches of bytes).

    >>> VLBytesSpec().to_metadata_dict()["kind"]
    'vlbytes'
    """

    def __init__(self, **options: Any) -> None:
        super().__init__("vlbytes", **options)


class DictionarySpec(VarSpec):
    """A ``dictionary`` column (int32 codes + the distinct values).

    >>> DictionarySpec().to_metadata_dict()["kind"]
    'dictionary'
    """

    def __init__(self, **options: Any) -> None:
        super().__init__("dictionary", **options)


_SPEC_CLASSES: dict[str, type[VarSpec]] = {
    "utf8": UTF8Spec,
    "vlstring": VLStringSpec,
    "vlbytes": VLBytesSpec,
    "dictionary": DictionarySpec,
}


def var_spec(kind: Any = None, **options: Any) -> VarSpec:
    """The spec of a ``kind`` column with ``options`` (a schema entry's, or a call's).

    >>> type(var_spec("dictionary")).__name__
    'DictionarySpec'
    """
    cls = _SPEC_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ParamError(f"not a variable-length column kind: {kind!r}")
    return cls(**options)
