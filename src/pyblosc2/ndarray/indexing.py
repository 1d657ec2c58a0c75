"""NumPy-style basic indexing of an N-d array: what an integer key is, which keys are basic
(ints, slices with any step, Ellipsis), such keys turned into per-axis ranges, and the box a
selection reads."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import BoundsError, ParamError, ParamTypeError

__all__ = [
    "BasicKey",
    "check_key",
    "is_basic_key",
    "is_int_key",
    "normalize_key",
    "parse_key",
    "selection_box",
]

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


class BasicKey(NamedTuple):
    """A basic key (ints, slices, Ellipsis) over a shape, normalised once: per axis its range,
    the axes an int removes, and for a key of one int per axis the item's coordinates (each
    in ``0..n-1``), else None."""

    ranges: list[range]
    squeeze: list[int]
    point: tuple[int, ...] | None


def parse_key(key: Any, shape: tuple[int, ...]) -> BasicKey | None:
    """``key`` over ``shape`` checked, classified and normalised in one visit: a
    :class:`BasicKey`, or None for an advanced key (arrays, lists, None, booleans, a field
    name), which :func:`check_key` has checked. Raises what :func:`check_key` and
    :func:`normalize_key` raise.

    >>> parse_key((1, -1), (3, 5))
    BasicKey(ranges=[range(1, 2), range(4, 5)], squeeze=[0, 1], point=(1, 4))
    >>> parse_key((..., slice(None, None, 2)), (3, 5)).ranges
    [range(0, 3), range(0, 5, 2)]
    >>> parse_key([0, 2], (3,)) is None
    True
    """
    items = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    if len(items) == ndim and all(map(is_int_key, items)):  # one item: the short path
        point = []
        for d, (k, n) in enumerate(zip(items, shape, strict=True)):
            i = int(k)
            if not -n <= i < n:
                raise BoundsError(f"index {i} is out of bounds for axis {d} with size {n}")
            point.append(i + n if i < 0 else i)
        return BasicKey([range(i, i + 1) for i in point], list(range(ndim)), tuple(point))
    ellipsis = -1
    for i, k in enumerate(items):
        if k is Ellipsis:
            if ellipsis >= 0:
                check_key(key)  # raises (as it would have, for this key)
            ellipsis = i
        elif isinstance(k, slice):
            a, b, c = k.start, k.stop, k.step
            if not (
                (a is None or type(a) is int or is_int_key(a))
                and (b is None or type(b) is int or is_int_key(b))
                and (c is None or type(c) is int or is_int_key(c))
            ):
                check_key(key)  # raises
            if c == 0:
                check_key(key)  # raises
        elif type(k) is not int and not is_int_key(k):
            check_key(key)  # raises for a key numpy refuses
            return None
    ranges, squeeze = _ranges(items, ellipsis, shape)
    return BasicKey(ranges, squeeze, None)


def normalize_key(key: Any, shape: tuple[int, ...]) -> tuple[list[range], list[int]]:
    """Per-axis ranges of ``key`` (ints, slices, Ellipsis) over ``shape``, and the axes an int
    index removes.

    >>> normalize_key((1, slice(None, None, -2)), (3, 5))
    ([range(1, 2), range(4, -1, -2)], [0])
    """
    items = key if isinstance(key, tuple) else (key,)
    ellipsis = next((i for i, k in enumerate(items) if k is Ellipsis), -1)
    return _ranges(items, ellipsis, shape)


def _ranges(
    items: tuple[Any, ...], ellipsis: int, shape: tuple[int, ...]
) -> tuple[list[range], list[int]]:
    """:func:`normalize_key` of the key ``items`` with its (first) Ellipsis at ``ellipsis``
    (-1: none)."""
    ndim = len(shape)
    if ellipsis >= 0:
        fill = (slice(None),) * (ndim - len(items) + 1)
        items = items[:ellipsis] + fill + items[ellipsis + 1 :]
    if len(items) > ndim:
        raise BoundsError(f"too many indices: array is {ndim}-dimensional")
    items = items + (slice(None),) * (ndim - len(items))
    ranges, squeeze = [], []
    for d, (k, n) in enumerate(zip(items, shape, strict=True)):
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
