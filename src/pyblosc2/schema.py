"""Column types of python-blosc2's table schema (``blosc2.int64(ge=0)``, ``blosc2.field``):
the numeric column descriptions a dataclass row declares, as python-blosc2 4.x names them.

Only the descriptions are here: pyblosc2 has no ``CTable`` (python-blosc2's columnar table,
which a TreeStore may hold as an object root; opening one raises ``NotImplementedError``).
A spec carries the storage dtype, the bound constraints ``ge``/``gt``/``le``/``lt`` and the
null policy, and serialises with :meth:`SchemaSpec.to_metadata_dict` as python-blosc2 does;
:func:`field` attaches a spec and per-column storage options to a dataclass field under the
metadata key ``"blosc2"``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from .errors import ParamError, ParamTypeError

__all__ = [
    "BLOSC2_FIELD_METADATA_KEY",
    "SchemaSpec",
    "field",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

BLOSC2_FIELD_METADATA_KEY = "blosc2"
NULL_STORAGES = ("mask", "sentinel")


class SchemaSpec:
    """A column's logical type: its storage ``dtype`` and Python type, with numpy's dtype
    attributes (``itemsize``, ``kind``, ``str``, ``name``) mirrored on the class."""

    dtype: ClassVar[np.dtype[Any]]
    python_type: ClassVar[type]
    _kind: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dtype = cls.__dict__.get("dtype")
        if isinstance(dtype, np.dtype):
            for name in ("itemsize", "kind", "str", "name"):
                setattr(cls, name, getattr(dtype, name))

    def to_metadata_dict(self) -> dict[str, Any]:
        """The spec as python-blosc2 serialises it in a table schema."""
        raise NotImplementedError


class _Numeric(SchemaSpec):
    """A numeric column with optional bounds and nulls.

    >>> spec = int64(ge=0, nullable=True)
    >>> spec.dtype, spec.to_metadata_dict()
    (dtype('int64'), {'kind': 'int64', 'ge': 0, 'nullable': True})
    """

    def __init__(
        self,
        *,
        ge: Any = None,
        gt: Any = None,
        le: Any = None,
        lt: Any = None,
        nullable: bool = False,
        null_value: Any = None,
        null_storage: str | None = None,
    ) -> None:
        if null_storage is not None and null_storage not in NULL_STORAGES:
            raise ParamError(
                f"null_storage must be one of {NULL_STORAGES} or None, got {null_storage!r}"
            )
        if null_storage == "mask" and null_value is not None:
            raise ParamError("null_storage='mask' cannot be combined with an explicit null_value")
        self.ge, self.gt, self.le, self.lt = ge, gt, le, lt
        self.nullable = bool(nullable or null_value is not None or null_storage is not None)
        self.null_value = null_value.item() if isinstance(null_value, np.generic) else null_value
        self.null_storage = null_storage

    def to_metadata_dict(self) -> dict[str, Any]:
        bounds = {"ge": self.ge, "gt": self.gt, "le": self.le, "lt": self.lt}
        out: dict[str, Any] = {"kind": self._kind}
        out.update({k: v for k, v in bounds.items() if v is not None})
        if self.nullable:
            out["nullable"] = True
        if self.null_value is not None:
            out["null_value"] = self.null_value
        if self.null_storage == "mask":
            out["null_storage"] = "mask"
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_metadata_dict().items() if k != "kind")
        return f"{self._kind}({args})"


def _numeric(name: str, dtype: Any, pytype: type) -> type[_Numeric]:
    doc = f"""A {np.dtype(dtype).name} column (``ge``/``gt``/``le``/``lt`` bounds, nulls).

    >>> {name}(ge=0).to_metadata_dict()
    {{'kind': '{name}', 'ge': 0}}
    """
    attrs = {"dtype": np.dtype(dtype), "python_type": pytype, "_kind": name, "__doc__": doc}
    return type(name, (_Numeric,), attrs)


int8 = _numeric("int8", np.int8, int)
int16 = _numeric("int16", np.int16, int)
int32 = _numeric("int32", np.int32, int)
int64 = _numeric("int64", np.int64, int)
uint8 = _numeric("uint8", np.uint8, int)
uint16 = _numeric("uint16", np.uint16, int)
uint32 = _numeric("uint32", np.uint32, int)
uint64 = _numeric("uint64", np.uint64, int)
float32 = _numeric("float32", np.float32, float)
float64 = _numeric("float64", np.float64, float)


def field(
    spec: SchemaSpec,
    *,
    default: Any = dataclasses.MISSING,
    cparams: dict[str, Any] | None = None,
    dparams: dict[str, Any] | None = None,
    chunks: tuple[int, ...] | None = None,
    blocks: tuple[int, ...] | None = None,
) -> Any:
    """A dataclass field carrying a column spec and its storage options (metadata key
    ``"blosc2"``), as python-blosc2's ``field``.

    >>> @dataclasses.dataclass
    ... class Row:
    ...     id: int = field(int64(ge=0), default=0)
    >>> dataclasses.fields(Row)[0].metadata["blosc2"]["spec"]
    int64(ge=0)
    """
    if not isinstance(spec, SchemaSpec):
        raise ParamTypeError(
            f"field() requires a SchemaSpec as its first argument, got {type(spec)!r}."
        )
    metadata = {
        BLOSC2_FIELD_METADATA_KEY: {
            "spec": spec,
            "cparams": cparams,
            "dparams": dparams,
            "chunks": chunks,
            "blocks": blocks,
        }
    }
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)
