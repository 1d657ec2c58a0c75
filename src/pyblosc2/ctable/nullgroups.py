"""Null keys and null results of ``CTable.group_by`` (:mod:`.groupby`), as python-blosc2 4.x
has them.

With ``dropna=False`` the rows whose key is null form one group of their own, whose key is
a real null in the result (a mask key column's null; ``None`` in a text column's cells),
placed before every other group when the groups are sorted. A null is where a mask column's
sidecar says so (its NaN too for a float key: a key that sometimes forms a NaN group of its
own would make ``dropna`` unpredictable) or a ``None`` cell of a text column. A sentinel
key's sentinel stays a value: its group is keyed by the sentinel, which the result's column
reads as null. A mask value column's group with no value to reduce gets a null ``min`` /
``max``, not the fill.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .nulls import NULL_MASK, null_kind

__all__ = ["null_empty_groups", "null_group_keys", "null_key_codes", "null_keys"]

_NONE = np.array([None], dtype=object)


def null_keys(grouper: Any, cols: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The null flags (one per live row) of each key of ``grouper`` (a
    :class:`~.groupby.CTableGroupBy`) that holds a null, its values ``cols``.

    >>> import dataclasses
    >>> import pyblosc2 as blosc2
    >>> @dataclasses.dataclass
    ... class Row:
    ...     k: int = blosc2.field(blosc2.int64(nullable=True))
    >>> t = blosc2.CTable(Row, new_data=[(1,), (None,)])
    >>> g = t.group_by("k", dropna=False)
    >>> null_keys(g, [t["k"][:]])["k"].tolist()
    [False, True]
    """
    out = {}
    defs = grouper.table._column_defs
    for name, values in zip(grouper.keys, cols, strict=True):
        if null_kind(defs[name].spec) == NULL_MASK:
            flags = grouper._nulls(name, values, is_key=True)
        elif values.dtype == object:
            flags = np.equal(values, _NONE).astype(np.bool_)
        else:
            continue
        if flags.any():
            out[name] = flags
    return out


def null_key_codes(values: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """An int64 code per row of a key with nulls at ``flags``: 0 for a null, ``1 + the
    rank`` of the value for the others (so the null group sorts first).

    >>> null_key_codes(np.array([5, 0, 5, 2]), np.array([False, True, False, False])).tolist()
    [2, 0, 2, 1]
    """
    codes = np.zeros(values.shape[0], dtype=np.int64)
    present = ~flags
    if present.any():
        _, inverse = np.unique(values[present], return_inverse=True)
        codes[present] = inverse.reshape(-1) + 1
    return codes


def null_group_keys(
    keys: dict[str, np.ndarray], flags: dict[str, np.ndarray], first_rows: np.ndarray
) -> dict[str, np.ndarray]:
    """Each group's key values (``keys``, taken at the groups' ``first_rows``), masked at
    the null group of each key in ``flags`` (the result's column writes a null there)."""
    out = dict(keys)
    for name, nulls in flags.items():
        at = nulls[first_rows]
        if at.any() and keys[name].dtype != object:  # None cells are their own null
            out[name] = np.ma.MaskedArray(keys[name], mask=at)
    return out


def null_empty_groups(spec: Any, values: np.ndarray, full: np.ndarray) -> np.ndarray:
    """``values`` (one ``min``/``max`` per group) masked at the groups without a value
    (``~full``) when the result's ``spec`` keeps its nulls in a mask.

    >>> import pyblosc2 as blosc2
    >>> out = null_empty_groups(blosc2.int64(null_storage="mask"), np.array([3, 0]),
    ...                         np.array([True, False]))
    >>> out.mask.tolist()
    [False, True]
    """
    if null_kind(spec) != NULL_MASK or full.all():
        return values
    return np.ma.MaskedArray(values, mask=~full)
