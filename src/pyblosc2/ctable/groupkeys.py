"""Group keys of ``CTable.group_by``: fixed-width text keys factorized by hashing, and a UDF
result as a plain scalar. python-blosc2 keeps these in ``blosc2.groupby`` under the private
names ``_factorize_fixed_width_str``, ``_HASH_MIX`` and ``_python_scalar``;
``pyblosc2.groupby`` is this module under that name, so those names are the ones
:mod:`.groupby` looks up at call time.

A ``U``/``S`` key column is factorized without sorting every string (what ``np.unique``
does): each row's code points (or bytes) are folded into one ``uint64`` hash
(``h = h * _HASH_MIX + word``, word by word over the width), the hashes are factorized
(a sort of integers), and every row is then checked against its group's first string; any
collision falls back to exact ``np.unique``. Only the distinct strings are sorted, so the
result is ``np.unique(keys, return_inverse=True)``'s exactly.

>>> u, inv = factorize_fixed_width_str(np.array(["b", "a", "b"]))
>>> u.tolist(), inv.tolist()
(['a', 'b'], [1, 0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamTypeError

__all__ = ["factorize_fixed_width_str", "python_scalar"]

#: the multiplier of the row hash (odd, 64-bit: the golden ratio's)
_HASH_MIX = np.uint64(0x9E3779B97F4A7C15)


def _words(keys: np.ndarray) -> np.ndarray:
    """The keys as a 2-d array of their code units: ``uint32`` per character for ``U``,
    ``uint8`` per byte for ``S`` (the padding is zeros, so equal strings have equal rows)."""
    width = keys.dtype.itemsize // (4 if keys.dtype.kind == "U" else 1)
    unit = np.uint32 if keys.dtype.kind == "U" else np.uint8
    return np.ascontiguousarray(keys).view(unit).reshape(keys.size, width)


def _factorize_fixed_width_str(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for a 1-d ``U``/``S`` array, by hashing
    (python-blosc2's private name; :func:`factorize_fixed_width_str` is the public one)."""
    if not isinstance(keys, np.ndarray) or keys.dtype.kind not in "US" or keys.ndim != 1:
        raise ParamTypeError(f"keys must be a 1-d U or S numpy array, got {keys!r}")
    if keys.size == 0 or keys.dtype.itemsize == 0:
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.reshape(-1)
    words = _words(keys)
    mix = np.uint64(_HASH_MIX)
    h = np.zeros(keys.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):  # per character position, over all rows at once
            h *= mix
            h += words[:, j]
    _, first, group = np.unique(h, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    reps = keys[first]
    if not np.array_equal(reps[group], keys):  # two strings share a hash: be exact
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.reshape(-1)
    order = np.argsort(reps, kind="stable")  # the distinct strings only
    rank = np.empty(order.size, dtype=np.intp)
    rank[order] = np.arange(order.size)
    return reps[order], rank[group]


def factorize_fixed_width_str(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct strings of ``keys`` (sorted) and each key's index among them, as
    ``np.unique(keys, return_inverse=True)``.

    >>> factorize_fixed_width_str(np.array([b"x", b"y", b"x"]))[1].tolist()
    [0, 1, 0]
    """
    return _factorize_fixed_width_str(keys)


def _python_scalar(value: Any) -> Any:
    """A UDF's result as stored: a numpy scalar as the Python one, anything else as is."""
    return value.item() if isinstance(value, np.generic) else value


def python_scalar(value: Any) -> Any:
    """A numpy scalar as the Python scalar (anything else unchanged).

    >>> type(python_scalar(np.float32(1.5))).__name__, python_scalar([1])
    ('float', [1])
    """
    return _python_scalar(value)
