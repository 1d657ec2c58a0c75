"""NumPy-style basic indexing of an N-d array: what an integer key is, which keys are basic
(ints, slices with any step, Ellipsis), such keys turned into per-axis ranges, and the box a
selection reads."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError, ParamTypeError

__all__ = ["check_key", "is_basic_key", "is_int_key", "normalize_key", "selection_box"]

_VALID = "only integers, slices, Ellipsis, None and integer or boolean arrays are valid indices"


def is_int_key(k: Any) -> bool:
    """Whether the index ``k`` is an integer as numpy's indexing takes it: a Python or numpy
    integer, not a bool (numpy reads a boolean index as a mask).

    >>> is_int_key(3), is_int_key(np.int8(-1)), is_int_key(True), is_int_key(np.bool_(1))
    (True, True, False, False)
    """
    return isinstance(k, int | np.integer) and not isinstance(k, bool)


def check_key(key: Any) -> None:
    """Refuse, with pyblosc2 errors and before anything is read or written, the keys numpy
    refuses: float indices (NaN and infinities included: ``BoundsError``, an ``IndexError``
    as numpy's), slice bounds that are not integers (``ParamTypeError``), a slice step of 0
    (``ParamError``) and more than one Ellipsis (``BoundsError``).

    >>> check_key((1, slice(None, None, 2), ...))
    >>> check_key((..., ...))
    Traceback (most recent call last):
    ...
    pyblosc2.errors.BoundsError: an index can only have a single ellipsis ('...')
    """
    items = key if isinstance(key, tuple) else (key,)
    ellipses = 0
    for k in items:
        if k is Ellipsis:
            ellipses += 1
        elif isinstance(k, slice):
            for name in ("start", "stop", "step"):
                v = getattr(k, name)
                if v is not None and not is_int_key(v):
                    raise ParamTypeError(f"slice {name} must be an integer or None, got {v!r}")
            if k.step == 0:
                raise ParamError(f"slice step cannot be zero (in {k!r})")
        elif isinstance(k, float | complex | np.floating | np.complexfloating):
            raise BoundsError(f"index {k!r}: {_VALID}")
        elif isinstance(k, np.ndarray) or (isinstance(k, list) and k):
            kind = k.dtype.kind if isinstance(k, np.ndarray) else np.asarray(k).dtype.kind
            if kind in "fc":
                raise BoundsError(
                    f"index array of {'floats' if kind == 'f' else 'complex numbers'}: {_VALID}"
                )
    if ellipses > 1:
        raise BoundsError("an index can only have a single ellipsis ('...')")


def is_basic_key(key: Any) -> bool:
    """Whether ``key`` holds only ints, slices and Ellipsis (numpy's basic indexing
    without ``None``).

    >>> is_basic_key((1, ..., slice(2))), is_basic_key((True, 1)), is_basic_key([1, 2])
    (True, False, False)
    """
    items = key if isinstance(key, tuple) else (key,)
    return all(k is Ellipsis or isinstance(k, slice) or is_int_key(k) for k in items)


def normalize_key(key: Any, shape: tuple[int, ...]) -> tuple[list[range], list[int]]:
    """Per-axis ranges of ``key`` (ints, slices, Ellipsis) over ``shape``, and the axes an int
    index removes.

    >>> normalize_key((1, slice(None, None, -2)), (3, 5))
    ([range(1, 2), range(4, -1, -2)], [0])
    """
    ndim = len(shape)
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        fill = (slice(None),) * (ndim - len(key) + 1)
        key = key[:i] + fill + key[i + 1 :]
    if len(key) > ndim:
        raise BoundsError(f"too many indices: array is {ndim}-dimensional")
    key = key + (slice(None),) * (ndim - len(key))
    ranges, squeeze = [], []
    for d, (k, n) in enumerate(zip(key, shape, strict=True)):
        if isinstance(k, slice):
            ranges.append(range(*k.indices(n)))
        elif isinstance(k, int | np.integer):
            i = int(k)
            if not -n <= i < n:
                raise BoundsError(f"index {i} is out of bounds for axis {d} with size {n}")
            ranges.append(range(i % n, i % n + 1))
            squeeze.append(d)
        else:
            raise NotImplementedError(
                f"indexing with {type(k).__name__} (use ints, slices and Ellipsis)"
            )
    return ranges, squeeze


def selection_box(
    ranges: list[range],
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[slice, ...]]:
    """The bounding box ``[lo, hi)`` of per-axis ranges, and the slices that pick the ranges
    (steps and negative steps included) out of that box.

    >>> selection_box([range(4, -1, -2)])
    ((0,), (5,), (slice(4, None, -2),))
    """
    lo, hi, local = [], [], []
    for r in ranges:
        if len(r) == 0:
            lo.append(0)
            hi.append(0)
            local.append(slice(0, 0))
            continue
        a, b = min(r[0], r[-1]), max(r[0], r[-1]) + 1
        lo.append(a)
        hi.append(b)
        stop = r[-1] - a + (1 if r.step > 0 else -1)
        local.append(slice(r[0] - a, None if stop < 0 else stop, r.step))
    return tuple(lo), tuple(hi), tuple(local)
