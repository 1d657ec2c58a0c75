"""The base of python-blosc2's schema specs (:mod:`pyblosc2.schema`): :class:`SchemaSpec`, a
logical column or item type with its metadata dict, and the null handling that nullable specs
share (``nullable``, an in-band ``null_value`` or ``null_storage="mask"``)."""

from __future__ import annotations

import builtins
from typing import Any, ClassVar

import numpy as np

from .errors import ParamError

__all__ = ["NULL_MASK", "SchemaSpec"]

NULL_MASK = "mask"
_NULL_STORAGES = (NULL_MASK, "sentinel")


class SchemaSpec:
    """A logical column type: storage dtype, Python type, constraints and metadata."""

    dtype: Any = None
    python_type: ClassVar[type]
    kind: ClassVar[str]
    nullable: builtins.bool = False

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 stores it."""
        raise NotImplementedError

    def display_label(self) -> str:
        """The spec's name as python-blosc2 prints it (``int64``, ``list[int32]``...)."""
        return self.kind

    def to_pydantic_kwargs(self) -> dict[str, Any]:
        """The validation constraints set (python-blosc2's pydantic keyword arguments)."""
        return {}

    @property
    def _kind(self) -> str:  # python-blosc2's private name of ``kind``
        return self.kind

    @property
    def uses_mask(self) -> builtins.bool:
        """Whether nulls live in a validity sidecar (``null_storage="mask"``)."""
        return getattr(self, "null_storage", None) == NULL_MASK

    @property
    def uses_sentinel(self) -> builtins.bool:
        """Whether nulls are an in-band ``null_value`` (a resolved sentinel)."""
        return getattr(self, "null_value", None) is not None

    def __eq__(self, other: object) -> builtins.bool:
        return type(other) is type(self) and (other.to_metadata_dict() == self.to_metadata_dict())

    def __hash__(self) -> int:
        return hash(repr(self.to_metadata_dict()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_metadata_dict()!r})"


class _Nullable(SchemaSpec):
    """Specs that may hold nulls: ``nullable``, an in-band ``null_value`` or
    ``null_storage`` (``"sentinel"`` or ``"mask"``)."""

    null_value: Any = None
    null_storage: str | None = None

    def _init_nulls(self, nullable: Any, null_value: Any, null_storage: Any) -> None:
        if null_storage is not None and null_storage not in _NULL_STORAGES:
            raise ParamError(
                f"null_storage must be one of {_NULL_STORAGES} or None, got {null_storage!r}"
            )
        if null_storage == NULL_MASK and null_value is not None:
            raise ParamError(
                "null_storage='mask' keeps nullity out of band, so it cannot be combined with "
                "an explicit null_value (which is what in-band 'sentinel' storage means)"
            )
        self.nullable = builtins.bool(
            nullable or null_value is not None or null_storage is not None
        )
        self.null_value = null_value.item() if isinstance(null_value, np.generic) else null_value
        self.null_storage = null_storage

    def _null_metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.nullable:
            out["nullable"] = True
        if self.null_value is not None:
            out["null_value"] = self.null_value
        if self.null_storage == NULL_MASK:
            out["null_storage"] = NULL_MASK
        return out
