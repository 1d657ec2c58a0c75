"""Nullable CTable columns: where a column keeps its nulls, as python-blosc2 4.x does.

A nullable spec (``nullable=True``, a ``null_value`` or a ``null_storage``) resolves, when
the table is built, to one of two stored forms, and the resolved form is what the schema
document records (a stored table is never re-resolved on open):

- **sentinel**: a reserved in-band value (``"nullable": true, "null_value": v``): the
  smallest signed integer, the largest unsigned one, NaN, ``255`` for a bool (then stored as
  ``uint8``: 0, 1, 255), ``"__BLOSC2_NULL__"`` for text and bytes (``max_length`` widened to
  fit it), ``INT64_MIN`` (NaT) for a timestamp;
- **mask**: a validity sidecar (``"nullable": true, "null_storage": "mask"``), a bool
  NDArray at ``/_cols/<name>.notnull`` beside the values, ``True`` where the row is *not*
  null (Arrow's polarity), on the column's row grid. It is written on the first null only:
  an absent sidecar means every row is valid. Null slots hold the kind's zero (``0``,
  ``False``, ``""``, ``b""``); NaN there is a value, not a null.

:class:`NullPolicy` (and :func:`null_policy` for a ``with`` block) decides what a bare
``nullable=True`` becomes: mask storage unless a type-wide sentinel field or
``column_null_values`` asks for a sentinel (python-blosc2's rules since 4.11).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import dataclasses
import math
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal

import numpy as np

from .. import schema as specs
from ..errors import ParamError, ParamTypeError

TableColumn = Any  # a :class:`~pyblosc2.ctable.schema.TableColumn` (that module imports this one)

__all__ = [
    "NOTNULL_SUFFIX",
    "NULL_CODE",
    "NULL_MASK",
    "NULL_NATIVE",
    "NULL_NONE",
    "NULL_SENTINEL",
    "NullPolicy",
    "check_null_spec",
    "get_null_policy",
    "is_na",
    "kind_of_spec",
    "null_kind",
    "null_policy",
    "resolve_nullable",
    "sentinel_mask",
    "split_nulls",
    "value_nulls",
]

NULL_NONE = "none"
NULL_MASK = "mask"
NULL_SENTINEL = "sentinel"
#: key suffix of a mask column's validity sidecar (``/_cols/<name>.notnull``)
NOTNULL_SUFFIX = ".notnull"
_SIGNED = frozenset({"int8", "int16", "int32", "int64"})
_UNSIGNED = frozenset({"uint8", "uint16", "uint32", "uint64"})
_NA_TYPE_NAMES = frozenset({"NAType", "NullScalar", "NaTType"})
_RESOLVED_KINDS = _SIGNED | _UNSIGNED | {
    "float32", "float64", "complex64", "complex128", "bool", "string", "bytes", "timestamp",
    "utf8",
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class NullPolicy:
    """Where a bare ``nullable=True`` keeps its nulls, and which sentinel when in band.

    >>> NullPolicy().resolve_null_storage()
    'mask'
    >>> NullPolicy(signed_int_strategy="max").signed_int_strategy
    'max'
    """

    string_value: str = "__BLOSC2_NULL__"
    bytes_value: bytes = b"__BLOSC2_NULL__"
    float_value: float = float("nan")
    bool_value: int = 255
    signed_int_strategy: Literal["min", "max"] = "min"
    unsigned_int_strategy: Literal["min", "max"] = "max"
    timestamp_value: int = int(np.iinfo(np.int64).min)
    column_null_values: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    null_storage: Literal["mask", "sentinel"] | None = None

    DEFAULT_NULL_STORAGE: ClassVar[str] = NULL_MASK
    _SENTINEL_FIELDS: ClassVar[tuple[str, ...]] = (
        "string_value", "bytes_value", "float_value", "bool_value",
        "signed_int_strategy", "unsigned_int_strategy", "timestamp_value",
    )  # fmt: skip

    def __post_init__(self) -> None:
        if self.null_storage not in (None, NULL_MASK, NULL_SENTINEL):
            raise ParamError(
                f"null_storage must be 'mask', 'sentinel' or None, got {self.null_storage!r}"
            )
        for name in ("signed_int_strategy", "unsigned_int_strategy"):
            if getattr(self, name) not in ("min", "max"):
                raise ParamError(f"{name} must be 'min' or 'max', got {getattr(self, name)!r}")
        if self.null_storage == NULL_MASK:
            explicit = [f for f in self._SENTINEL_FIELDS if self.sentinel_field_is_set(f)]
            if explicit:
                raise ParamError(
                    f"null_storage='mask' contradicts the type-wide sentinel field(s) "
                    f"{', '.join(explicit)}: a mask column has no sentinel to choose"
                )

    def resolve_null_storage(self) -> str:
        """Where a bare ``nullable=True`` puts its nulls under this policy."""
        return self.DEFAULT_NULL_STORAGE if self.null_storage is None else self.null_storage

    def sentinel_field_is_set(self, name: str) -> bool:
        """Whether the type-wide field ``name`` differs from its default."""
        current, default = getattr(self, name), _POLICY_DEFAULTS[name]
        if _is_nan(current) and _is_nan(default):
            return False
        return bool(current != default)

    _sentinel_field_is_set = sentinel_field_is_set  # python-blosc2's name


_POLICY_DEFAULTS = {
    f.name: f.default
    for f in dataclasses.fields(NullPolicy)
    if f.default is not dataclasses.MISSING
}
_DEFAULT_POLICY = NullPolicy()
_POLICY: contextvars.ContextVar[NullPolicy | None] = contextvars.ContextVar(
    "pyblosc2_null_policy", default=None
)


def get_null_policy() -> NullPolicy:
    """The policy in force (the default one outside :func:`null_policy`).

    >>> get_null_policy().null_storage is None
    True
    """
    policy = _POLICY.get()
    return _DEFAULT_POLICY if policy is None else policy


@contextlib.contextmanager
def null_policy(policy: NullPolicy) -> Iterator[NullPolicy]:
    """Apply ``policy`` to the tables built inside the ``with`` block.

    >>> with null_policy(NullPolicy(signed_int_strategy="max")):
    ...     get_null_policy().signed_int_strategy
    'max'
    """
    if not isinstance(policy, NullPolicy):
        raise ParamTypeError(f"null_policy takes a NullPolicy, got {type(policy).__name__}")
    token = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(token)


# -- what a spec says -------------------------------------------------------------------
def _is_nan(value: Any) -> bool:
    return isinstance(value, float | np.floating) and math.isnan(value)


def null_kind(spec: Any) -> str:
    """``"mask"``, ``"sentinel"`` or ``"none"``: how a resolved spec stores its nulls.

    >>> null_kind(specs.int32(null_value=-1)), null_kind(specs.float64(null_storage="mask"))
    ('sentinel', 'mask')
    """
    if getattr(spec, "null_storage", None) == NULL_MASK:
        return NULL_MASK
    if getattr(spec, "null_value", None) is not None:
        return NULL_SENTINEL
    return NULL_NONE


NULL_CODE = "code"  # a dictionary column's reserved code
NULL_NATIVE = "native"  # vlstring, vlbytes (and python-blosc2's struct, object): a None cell
_NATIVE_KINDS = frozenset({"vlstring", "vlbytes", "struct", "object"})


def kind_of_spec(spec: Any) -> str:
    """How a column of ``spec`` represents its nulls (python-blosc2's ``Column.null_storage``):
    ``"mask"``, ``"sentinel"``, ``"code"`` (dictionary), ``"native"`` (``None`` cells of a
    variable-length kind, nullable or not) or ``"none"``.

    >>> kind_of_spec(specs.int64(null_value=-1)), kind_of_spec(None)
    ('sentinel', 'none')
    """
    if spec is None:
        return NULL_NONE
    kind = getattr(spec, "kind", "")
    if kind == "dictionary":
        return NULL_CODE
    if null_kind(spec) == NULL_MASK:
        return NULL_MASK
    if kind in _NATIVE_KINDS:
        return NULL_NATIVE
    return null_kind(spec)


def _spec_kind(spec: Any) -> str:
    return str(getattr(spec, "kind", ""))


def _policy_sentinel(spec: Any, policy: NullPolicy) -> Any:
    kind = _spec_kind(spec)
    if kind in _SIGNED or kind in _UNSIGNED:
        info = np.iinfo(spec.dtype)
        strategy = policy.signed_int_strategy if kind in _SIGNED else policy.unsigned_int_strategy
        return int(info.min if strategy == "min" else info.max)
    return {
        "float32": policy.float_value,
        "float64": policy.float_value,
        "bool": policy.bool_value,
        "string": policy.string_value,
        "utf8": policy.string_value,
        "bytes": policy.bytes_value,
        "timestamp": policy.timestamp_value,
    }.get(kind)


def _policy_implies_sentinel(spec: Any, policy: NullPolicy) -> bool:
    kind = _spec_kind(spec)
    field = {
        "string": "string_value", "utf8": "string_value", "bytes": "bytes_value",
        "bool": "bool_value", "timestamp": "timestamp_value", "float32": "float_value",
        "float64": "float_value",
    }.get(kind)  # fmt: skip
    if kind in _SIGNED:
        field = "signed_int_strategy"
    elif kind in _UNSIGNED:
        field = "unsigned_int_strategy"
    return field is not None and policy.sentinel_field_is_set(field)


def check_null_value(name: str, spec: Any, value: Any) -> None:
    """``value`` as ``spec``'s sentinel, else :class:`ParamError` /
    :class:`ParamTypeError` naming the column (a hostile schema document is refused here).

    >>> check_null_value("x", specs.int8(), 1000)
    Traceback (most recent call last):
    ...
    pyblosc2.errors.ParamError: Null sentinel for column 'x'=1000 is outside int8 range
    """
    kind = _spec_kind(spec)
    if kind in _SIGNED or kind in _UNSIGNED or kind == "timestamp":
        if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
            raise ParamTypeError(f"Null sentinel for column {name!r} must be an integer")
        info = np.iinfo(np.int64 if kind == "timestamp" else spec.dtype)
        if not info.min <= int(value) <= info.max:
            dtype = "int64" if kind == "timestamp" else spec.dtype
            raise ParamError(
                f"Null sentinel for column {name!r}={value!r} is outside {dtype} range"
            )
    elif kind in ("float32", "float64"):
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ParamTypeError(f"Null sentinel for column {name!r} must be numeric")
    elif kind == "bool":
        if isinstance(value, bool) or value != 255:
            raise ParamError(f"Null sentinel for nullable bool column {name!r} must be 255")
    elif kind in ("string", "utf8"):
        if not isinstance(value, str):
            raise ParamTypeError(f"Null sentinel for string column {name!r} must be str")
    elif kind == "bytes":
        if not isinstance(value, bytes):
            raise ParamTypeError(f"Null sentinel for bytes column {name!r} must be bytes")
    else:
        raise ParamTypeError(f"column {name!r}: {kind} columns have no null sentinel")


def check_null_spec(name: str, spec: Any) -> None:
    """A nullable spec, checked: a ``null_storage`` of the two forms, a sentinel of the
    column's type (a text sentinel longer than the column never matches, as in
    python-blosc2)."""
    storage = getattr(spec, "null_storage", None)
    if storage not in (None, NULL_MASK, NULL_SENTINEL):
        raise ParamError(f"column {name!r}: null_storage {storage!r} is not 'mask' or 'sentinel'")
    value = getattr(spec, "null_value", None)
    if value is None:
        return
    check_null_value(name, spec, value)


def resolve_nullable(
    columns: list[TableColumn], *, check_unknown: bool = True
) -> list[TableColumn]:
    """The columns with each nullable spec resolved to mask or sentinel storage under the
    policy in force (specs copied, never changed in place).

    >>> from pyblosc2.ctable.schema import TableColumn
    >>> cols = resolve_nullable([TableColumn("x", specs.int32(nullable=True), None)])
    >>> cols[0].spec.to_metadata_dict()
    {'kind': 'int32', 'nullable': True, 'null_storage': 'mask'}
    """
    policy = get_null_policy()
    names = {c.name for c in columns}
    unknown = set(policy.column_null_values) - names
    if check_unknown and unknown:
        raise KeyError(f"column_null_values contains unknown columns: {', '.join(sorted(unknown))}")
    out = []
    for col in columns:
        spec: Any = col.spec
        fixed = getattr(spec, "kind", "") in _RESOLVED_KINDS  # the text kinds keep their own
        if not fixed or not getattr(spec, "nullable", False) or not hasattr(spec, "null_storage"):
            out.append(col)
            continue
        spec = copy.copy(col.spec)
        if spec.null_value is not None:
            check_null_value(col.name, spec, spec.null_value)
            spec.null_storage = None  # an explicit sentinel *is* sentinel storage
        else:
            storage = spec.null_storage
            if storage is None:
                if col.name in policy.column_null_values:
                    storage = NULL_SENTINEL
                elif _spec_kind(spec) in ("complex64", "complex128"):
                    storage = NULL_MASK
                elif _policy_implies_sentinel(spec, policy):
                    storage = NULL_SENTINEL
                else:
                    storage = policy.resolve_null_storage()
            if storage == NULL_MASK:
                spec.null_storage = NULL_MASK
            else:
                value = policy.column_null_values.get(col.name)
                if value is None:
                    value = _policy_sentinel(spec, policy)
                if value is None:
                    raise ParamTypeError(
                        f"Column {col.name!r} is nullable, but no null policy sentinel is "
                        "available: give it a null_value, or use null_storage='mask' (a "
                        "validity sidecar, which every type supports)"
                    )
                check_null_value(col.name, spec, value)
                spec.null_value = value.item() if isinstance(value, np.generic) else value
                spec.null_storage = None
        _set_dtype(spec)
        out.append(dataclasses.replace(col, spec=spec))
    return out


def _set_dtype(spec: Any) -> None:
    """The physical dtype a resolved spec needs: a sentinel bool is ``uint8``; a text
    sentinel widens ``max_length`` to fit."""
    kind = _spec_kind(spec)
    sentinel = spec.null_value
    if kind == "bool":
        spec.dtype = np.dtype(np.bool_ if sentinel is None else np.uint8)
    elif kind in ("string", "bytes") and sentinel is not None:
        spec.max_length = max(spec.max_length, len(sentinel), 1)
        spec.dtype = np.dtype(f"{'U' if kind == 'string' else 'S'}{spec.max_length}")


# -- values -----------------------------------------------------------------------------
def is_na(value: Any) -> bool:
    """Whether ``value`` spells a null: ``None``, pandas/pyarrow NA, NaT (never NaN).

    >>> is_na(None), is_na(float("nan")), is_na(np.datetime64("NaT"))
    (True, False, True)
    """
    if value is None or type(value).__name__ in _NA_TYPE_NAMES:
        return True
    return isinstance(value, np.datetime64) and bool(np.isnat(value))


def sentinel_mask(values: np.ndarray, sentinel: Any, *, item_ndim: int = 0) -> np.ndarray:
    """True where ``values`` hold ``sentinel`` (NaN matches NaN; NaT for a timestamp).

    >>> sentinel_mask(np.array([1.0, np.nan]), float("nan")).tolist()
    [False, True]
    """
    if sentinel is None:
        return np.zeros(len(values), dtype=np.bool_)
    values = np.asarray(values)
    if item_ndim:  # one flag per row: a row is null when its whole item is the sentinel
        if values.ndim <= item_ndim:
            values = values.reshape((1, *values.shape))
        flags = sentinel_mask(values.reshape(-1), sentinel).reshape(values.shape)
        return np.asarray(flags.reshape(len(values), -1).all(axis=1))
    if values.dtype.kind == "M":
        return np.isnat(values)
    if _is_nan(sentinel):
        if values.dtype.kind not in "fc":
            return np.zeros(values.shape, dtype=np.bool_)
        return np.isnan(values)
    return np.asarray(values == sentinel, dtype=np.bool_)


def split_nulls(col: TableColumn, values: Any) -> tuple[Any, np.ndarray | None]:
    """``(values with nulls replaced, null flags)`` for a batch written into ``col``; the
    flags are None when nothing is null. A mask column takes a null as ``None`` (or pandas
    or pyarrow NA, NaT) and stores the kind's fill (:func:`~pyblosc2.schema.fill_value_for`)
    in its slot; a sentinel column's nulls are its sentinel, written as the value itself (a
    ``None`` there is refused, as python-blosc2 does). A masked item of a
    ``numpy.ma.MaskedArray`` is a null for both (another table's nulls, translated).

    >>> from pyblosc2.ctable.schema import TableColumn
    >>> c = TableColumn("x", specs.int32(null_storage="mask"), None)
    >>> split_nulls(c, [1, None])
    ([1, 0], array([False,  True]))
    """
    kind = null_kind(col.spec)
    typed = isinstance(values, np.ndarray) and values.dtype.kind not in "OM"
    if typed and (not isinstance(values, np.ma.MaskedArray) or kind == NULL_NONE):
        return values, None
    if kind == NULL_NONE:
        _refuse_none(col, values, "is not nullable: None is not one of its values")
        return values, None
    spec: Any = col.spec
    fill = spec.null_value if kind == NULL_SENTINEL else specs.fill_value_for(spec)
    if isinstance(values, np.ma.MaskedArray):
        nulls = np.ma.getmaskarray(values)
        if not nulls.any():
            return np.ma.getdata(values), None
        try:  # in the column's dtype first: a bool's 255, a text sentinel wider than the data
            data = np.array(np.ma.getdata(values), dtype=col.dtype)
        except (TypeError, ValueError):
            data = np.array(np.ma.getdata(values), dtype=object)
        data[nulls] = fill
        return data, nulls
    if kind == NULL_SENTINEL and _is_nan(fill):  # None is NaN in a float column anyway
        items = values.tolist() if isinstance(values, np.ndarray) else list(values)
        return [fill if v is None else v for v in items], None
    if kind == NULL_SENTINEL:
        _refuse_none(
            col, values, f"keeps its nulls as its null_value ({fill!r}): write that, not None"
        )
        return values, None
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    nulls = np.fromiter((is_na(v) for v in items), dtype=np.bool_, count=len(items))
    if not nulls.any():
        return values, None
    if _spec_kind(spec) == "timestamp":
        fill = np.datetime64("NaT")  # among times (strings, datetimes): their own null
    return [fill if n else v for v, n in zip(items, nulls.tolist(), strict=True)], nulls


def _refuse_none(col: TableColumn, values: Any, why: str) -> None:
    if isinstance(values, np.ndarray) and values.dtype.kind != "O":
        return
    items = values.tolist() if isinstance(values, np.ndarray) else values
    if any(v is None for v in items):
        raise ParamTypeError(f"column {col.name!r} {why}")


def value_nulls(col: TableColumn, arr: np.ndarray, nulls: np.ndarray | None) -> np.ndarray:
    """The null flags of checked values ``arr``: the split's flags, or where a sentinel
    column holds its sentinel (written literally or from ``None``)."""
    out = np.zeros(len(arr), dtype=np.bool_) if nulls is None else np.asarray(nulls)
    if null_kind(col.spec) == NULL_SENTINEL:
        out = out | sentinel_mask(arr, col.spec.null_value)
    return out
