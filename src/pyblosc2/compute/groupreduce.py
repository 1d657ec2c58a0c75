"""``group_reduce``: python-blosc2's grouped reduction of one-dimensional arrays — the
distinct keys and, per key, the number of rows (``size``), of non-NaN values (``count``),
or their ``sum``, ``mean``, ``min`` or ``max`` (NaN values skipped; a group without any
gives NaN, or 0 for integer sums).

The keys and values (numpy arrays, NDArrays, anything with ``shape`` and ``__getitem__``)
are read in pieces of :data:`PIECE_ITEMS`: each piece is grouped with numpy
(``np.unique``, ``bincount``, ``ufunc.at``) and merged into the running groups, so the
working set is a piece plus the groups found so far (counted against the memory bound:
:class:`~pyblosc2.errors.MemoryBudgetError` when they outgrow it). Keys of Python objects
(``None``, strings, NaN...) are grouped by a dict, in order of appearance unless sorted
(``None`` first, NaN last). Results: group keys in the keys' dtype; ``size``/``count`` as
int64, ``mean`` float64, ``sum``/``min``/``max`` int64 for integers and booleans, float64
for floats, complex128 for complex values.

>>> import numpy as np
>>> keys = np.array([2, 1, 2, 1, 2])
>>> groups, sums = group_reduce(keys, np.array([10, 1, 30, 3, 50]), op="sum", sort=True)
>>> groups.tolist(), sums.tolist()
([1, 2], [4, 90])
>>> group_reduce(np.array([0.5, np.nan, 0.5]), op="size", dropna=False)[1].tolist()
[2, 1]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import MemoryBudgetError, ParamError
from .plan import memory_bound

__all__ = ["OPS", "PIECE_ITEMS", "group_reduce"]

#: the reductions
OPS = ("size", "count", "sum", "mean", "min", "max")
#: items grouped at a time
PIECE_ITEMS = 1 << 20


def _one_d(x: Any, what: str) -> Any:
    arr = x if hasattr(x, "shape") and hasattr(x, "__getitem__") else np.asarray(x)
    if len(arr.shape) != 1:
        raise ParamError(f"{what} must be a 1-D array, got shape {tuple(arr.shape)}")
    return arr


def _acc_dtype(values: Any, op: str) -> np.dtype:
    if op in ("size", "count"):
        return np.dtype(np.int64)
    kind = np.dtype(values.dtype).kind
    if op == "mean":
        return np.dtype(np.complex128 if kind == "c" else np.float64)
    if kind in "biu":
        return np.dtype(np.int64)
    if kind == "c":
        return np.dtype(np.complex128)
    if kind != "f":
        raise ParamError(f"group_reduce {op!r} of values of dtype {values.dtype}")
    return np.dtype(np.float64)


class _Groups:
    """The running groups: keys, rows, valid values, and the op's accumulator."""

    def __init__(self, op: str, acc: np.dtype) -> None:
        self.op, self.acc = op, acc
        self.keys: np.ndarray | None = None
        self.rows = np.zeros(0, np.int64)
        self.valid = np.zeros(0, np.int64)
        self.state = np.zeros(0, acc)

    def _init(self, n: int) -> np.ndarray:
        if self.op == "min":
            return np.full(n, np.inf if self.acc.kind == "f" else np.iinfo(np.int64).max, self.acc)
        if self.op == "max":
            return np.full(n, -np.inf if self.acc.kind == "f" else np.iinfo(np.int64).min, self.acc)
        return np.zeros(n, self.acc)

    def _combine(self, into: np.ndarray, where: np.ndarray, what: np.ndarray) -> None:
        if self.op == "min":
            np.minimum.at(into, where, what)
        elif self.op == "max":
            np.maximum.at(into, where, what)
        else:
            np.add.at(into, where, what)

    def add(self, keys: np.ndarray, values: np.ndarray | None, dropna: bool) -> None:
        """Group one piece and merge it in."""
        if keys.dtype.kind == "f" and dropna:
            keep = ~np.isnan(keys)
            keys = keys[keep]
            values = None if values is None else values[keep]
        merged = keys if self.keys is None else np.concatenate([self.keys, keys])
        uniq, inv = np.unique(merged, return_inverse=True, equal_nan=True)
        inv = inv.reshape(-1)
        old, new = inv[: len(merged) - len(keys)], inv[len(merged) - len(keys) :]
        rows = np.zeros(len(uniq), np.int64)
        valid = np.zeros(len(uniq), np.int64)
        state = self._init(len(uniq))
        rows[old], valid[old], state[old] = self.rows, self.valid, self.state
        rows += np.bincount(new, minlength=len(uniq))
        if values is not None:
            ok = ~np.isnan(values) if values.dtype.kind in "fc" else np.ones(len(values), bool)
            valid += np.bincount(new[ok], minlength=len(uniq))
            if self.op not in ("size", "count"):
                self._combine(state, new[ok], values[ok].astype(self.acc, copy=False))
        self.keys, self.rows, self.valid, self.state = uniq, rows, valid, state

    def result(self) -> np.ndarray:
        op = self.op
        if op == "size":
            return self.rows
        if op == "count":
            return self.valid
        empty = self.valid == 0
        with np.errstate(invalid="ignore", divide="ignore"):
            if op == "mean":
                out = self.state / np.maximum(self.valid, 1)
                out[empty] = np.nan
                return out
        out = self.state.copy()
        out[empty] = np.nan if self.acc.kind in "fc" else 0
        return out


def _object_groups(keys: np.ndarray, values: Any, op: str, sort: bool, dropna: bool) -> Any:
    """Keys of Python objects: grouped by a dict (NaN keys as one group)."""
    nan = object()
    rows: dict[Any, list[int]] = {}
    shown: dict[Any, Any] = {}
    for i, k in enumerate(keys.tolist()):
        is_nan = isinstance(k, float) and math.isnan(k)
        if is_nan and dropna:
            continue
        key = nan if is_nan else k
        shown.setdefault(key, k)
        rows.setdefault(key, []).append(i)
    order = list(rows)
    if sort:
        order.sort(key=lambda k: (0, "") if k is None else ((2, "") if k is nan else (1, k)))
    groups = np.empty(len(order), dtype=keys.dtype)
    groups[:] = [shown[k] for k in order]
    if op == "size":
        return groups, np.array([len(rows[k]) for k in order], np.int64)
    g = _Groups(op, _acc_dtype(values, op))
    codes = np.empty(len(keys), np.int64)
    taken = np.zeros(len(keys), bool)
    for code, k in enumerate(order):
        codes[rows[k]] = code
        taken[rows[k]] = True
    g.add(codes[taken], np.asarray(values[: len(keys)])[taken], dropna=False)
    return groups, g.result()


def group_reduce(
    keys: Any,
    values: Any = None,
    op: str = "size",
    *,
    sort: bool | None = None,
    dropna: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """The groups of ``keys`` (1-D) and ``op`` (one of :data:`OPS`) of ``values`` (1-D, as
    long; not needed for ``size``) per group. ``sort``: groups in key order (None: numeric
    keys sorted, object keys in order of appearance); ``dropna``: leave NaN keys out (else
    they are one group).

    >>> import numpy as np
    >>> group_reduce(np.array([3, 1, 3]), np.array([1.0, np.nan, 2.0]), op="mean")[1].tolist()
    [nan, 1.5]
    """
    if op not in OPS:
        raise ParamError(f"unsupported group_reduce operation {op!r}; one of {OPS}")
    keys = _one_d(keys, "keys")
    n = int(keys.shape[0])
    if op != "size":
        if values is None:
            raise ParamError(f"values are required for group_reduce op {op!r}")
        values = _one_d(values, "values")
        if int(values.shape[0]) != n:
            raise ParamError(
                f"keys and values must have the same length, got {n} and {values.shape[0]}"
            )
    else:
        values = None
    kdtype = np.dtype(keys.dtype)
    if kdtype.kind == "O":
        return _object_groups(np.asarray(keys[:]), values, op, bool(sort), dropna)
    bound = memory_bound()
    g = _Groups(op, _acc_dtype(values, op) if values is not None else np.dtype(np.int64))
    for start in range(0, n, PIECE_ITEMS):
        stop = min(n, start + PIECE_ITEMS)
        k = np.asarray(keys[start:stop])
        v = None if values is None else np.asarray(values[start:stop])
        g.add(k, v, dropna)
        held = (len(g.rows) * (kdtype.itemsize + 32)) * 3
        if held > bound:
            raise MemoryBudgetError("group_reduce's groups", held, bound)
    groups = g.keys if g.keys is not None else np.empty(0, kdtype)
    return groups, g.result()  # np.unique's order: sorted, whatever ``sort`` asks
