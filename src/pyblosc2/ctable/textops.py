"""Operations on the values of CTable text columns (:mod:`.strings`): comparisons where a
null (``None``) or a sentinel matches nothing, sort keys in Python's order with nulls last,
what a read gives (a list for vlstring/vlbytes/dictionary), and the text methods of
:class:`~pyblosc2.ctable.column.Column` (``isin``, ``is_dictionary``, ``is_varlen_scalar``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamTypeError
from .strings import is_var, null_mask

__all__ = [
    "TextColumnMixin",
    "check_utf8_operand",
    "compare_values",
    "list_label",
    "present_values",
    "sort_key",
]


_OBJ = np.dtype(object)


def compare_values(left: np.ndarray, op: str, right: Any, nulls: Any = ()) -> np.ndarray:
    """``left op right`` elementwise for text values (an object array may hold ``None``,
    a null, which matches no comparison; so do the ``nulls`` sentinels, on either side)."""
    out = _compare(left, op, right)
    for sentinel in nulls:
        if sentinel is not None:
            out &= ~_compare(left, "==", sentinel)
            if isinstance(right, np.ndarray):
                out &= ~_compare(right, "==", sentinel)
    return out


def _compare(left: np.ndarray, op: str, right: Any) -> np.ndarray:
    if left.dtype.kind == "T":  # Python's order: numpy's StringDType mis-orders NUL-bearing text
        left = left.astype(_OBJ)
    if isinstance(right, np.ndarray) and right.dtype.kind == "T":
        right = right.astype(_OBJ)
    import operator

    fn = {
        "<": operator.lt,
        "<=": operator.le,
        ">": operator.gt,
        ">=": operator.ge,
        "==": operator.eq,
        "!=": operator.ne,
    }[op]
    if right is None and op in ("==", "!="):  # a null test
        nulls = null_mask(left) if left.dtype == _OBJ else np.zeros(len(left), np.bool_)
        return nulls if op == "==" else ~nulls
    if left.dtype != _OBJ and not (isinstance(right, np.ndarray) and right.dtype == _OBJ):
        if right is None:
            return np.zeros(len(left), dtype=np.bool_)
        return np.asarray(fn(left, right), dtype=np.bool_)
    rights = right if isinstance(right, np.ndarray) else None
    out = np.zeros(len(left), dtype=np.bool_)
    for i, v in enumerate(left.tolist()):
        r = rights[i] if rights is not None else right
        if v is None or r is None:
            continue
        try:
            out[i] = bool(fn(v, r))
        except TypeError:
            raise ParamTypeError(f"cannot compare {v!r} {op} {r!r}") from None
    return out


def sort_key(values: np.ndarray) -> np.ndarray:
    """An int64 rank of text ``values`` for sorting, nulls (``None``) after every value.

    >>> sort_key(np.array(["b", None, "a"], dtype=object)).tolist()
    [1, 9223372036854775807, 0]
    """
    if values.dtype.kind == "T":  # Python's order (numpy's StringDType mis-orders NULs)
        values = values.astype(_OBJ)
    if values.dtype != _OBJ:
        return np.unique(values, return_inverse=True)[1].astype(np.int64).ravel()
    nulls = null_mask(values)
    ranks = np.full(len(values), np.iinfo(np.int64).max, dtype=np.int64)
    present = values[~nulls].tolist()
    if present:
        distinct = sorted(set(present))  # str or bytes: Python's order (code points, bytes)
        rank_of = {v: r for r, v in enumerate(distinct)}
        ranks[~nulls] = np.fromiter((rank_of[v] for v in present), np.int64, len(present))
    return ranks


def present_values(spec: Any, values: np.ndarray) -> Any:
    """What a column read gives: a list for ``vlstring``, ``vlbytes`` and ``dictionary``
    columns (as python-blosc2's), the array otherwise."""
    return values.tolist() if is_var(spec) and spec.kind != "utf8" else values


def check_utf8_operand(name: str, spec: Any, other: Any, other_spec: Any = None) -> None:
    """ParamTypeError (a TypeError) unless a ``utf8`` column is compared with text, None or
    another ``utf8`` column (python-blosc2 refuses numbers and other text kinds)."""
    if getattr(spec, "kind", None) != "utf8":
        return
    if other_spec is not None:
        if getattr(other_spec, "kind", None) != "utf8":
            kind = getattr(other_spec, "kind", "?")
            raise ParamTypeError(f"utf8 column {name!r} compared with a {kind} column")
    elif other is not None and not isinstance(other, str | np.ndarray):
        raise ParamTypeError(
            f"utf8 column {name!r} compared with {type(other).__name__} {other!r}: "
            "compare it with text"
        )


def list_label(spec: Any) -> str | None:
    """``<list[item]>`` for a list column's spec (python-blosc2's column preview), else None."""
    return f"<{spec.display_label()}>" if getattr(spec, "kind", None) == "list" else None


class TextColumnMixin:
    """What python-blosc2's ``Column`` adds for text columns (a mixin of
    :class:`~pyblosc2.ctable.column.Column`): ``isin``, ``is_dictionary``,
    ``is_varlen_scalar``."""

    _table: Any
    _col_name: str

    def _spec(self) -> Any:
        col = self._table._column_defs.get(self._col_name)
        return None if col is None else col.spec

    @property
    def is_dictionary(self) -> bool:
        """Whether this is a ``dictionary`` column."""
        return getattr(self._spec(), "kind", None) == "dictionary"

    @property
    def is_list(self) -> bool:
        """Whether this is a ``list`` column."""
        return getattr(self._spec(), "kind", None) == "list"

    @property
    def is_utf8(self) -> bool:
        """Whether this is a ``utf8`` column."""
        return getattr(self._spec(), "kind", None) == "utf8"

    @property
    def is_varlen_scalar(self) -> bool:
        """Whether this column holds variable-length scalars: ``vlstring``, ``vlbytes``,
        ``utf8`` (python-blosc2 counts utf8 among them) or ``object``."""
        return getattr(self._spec(), "kind", None) in ("vlstring", "vlbytes", "utf8", "object")

    def isin(self, values: Any) -> np.ndarray:
        """A bool per live row: whether its value is one of ``values`` (a null is not).

        >>> import dataclasses, pyblosc2 as pb
        >>> @dataclasses.dataclass
        ... class R:
        ...     s: str = pb.field(pb.dictionary())
        >>> pb.CTable(R, new_data=[("a",), ("b",), (None,)]).s.isin(["b", "z"]).tolist()
        [False, True, False]
        """
        wanted = list(values)
        rows = self[:]  # type: ignore[index]
        if isinstance(rows, np.ndarray) and rows.dtype.kind not in "OT":
            return np.isin(rows, np.asarray(wanted))
        keys = {v for v in wanted if v is not None}
        items = rows.tolist() if isinstance(rows, np.ndarray) else list(rows)
        return np.fromiter((v is not None and v in keys for v in items), np.bool_, len(items))
