"""Views of an NDArray that drop length-1 axes (python-blosc2's ``squeeze``): the same
super-chunk described by a shape without them.

A stored axis of length 1 whose chunk (hence block) length is 1 holds no item's place in a
chunk (frame-format.md §8.4): the chunk grid, the block grid and every block's layout are the
same without it, so the view reads and writes the stored chunks as they are. An axis of
length 1 chunked longer (a chunk padded past the array) has padding inside each block, and
no shape without it describes the layout: that squeeze is refused, where python-blosc2 makes
a view that fails on its first read. Length-1 axes that ``expand_dims`` added to a view are
simply removed.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..errors import ParamError
from ..params import is_int, parse_int, refuse
from .b2nd_meta import B2NDMeta
from .core import ArrayCore

__all__ = ["squeeze_axes", "squeeze_view"]

#: the array's class: the view is made of it
A = TypeVar("A", bound=ArrayCore)


def squeeze_axes(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """The axes ``axis`` names (None: every axis of length 1), checked as numpy does:
    distinct, in bounds, each of length 1.

    >>> squeeze_axes((1, 3, 1), None), squeeze_axes((1, 3, 1), -1)
    ((0, 2), (2,))
    """
    nd = len(shape)
    if axis is None:
        return tuple(d for d, n in enumerate(shape) if n == 1)
    if not is_int(axis) and not isinstance(axis, tuple | list):
        refuse("axis", "None, an int or a sequence of ints", axis, wrong_type=True)
    given = (axis,) if is_int(axis) else tuple(axis)
    axes = tuple(parse_int(a, "axis", -nd, nd - 1) % nd for a in given) if nd else ()
    if len(axes) != len(given):
        refuse("axis", f"axes of an array of {nd} dimensions", axis)
    if len(set(axes)) != len(axes):
        refuse("axis", "distinct axes (axis values must be unique)", axis)
    for d in axes:
        if shape[d] != 1:
            raise ParamError(
                f"cannot select an axis to squeeze out which has size not equal to one: "
                f"axis {d} of shape {shape}"
            )
    return tuple(sorted(axes))


def squeeze_view(array: A, axis: Any = None) -> A:
    """A view of ``array`` without the length-1 axes ``axis`` (all of them by default).

    >>> from pyblosc2 import asarray
    >>> import numpy as np
    >>> a = asarray(np.arange(6).reshape(1, 6, 1), chunks=(1, 4, 1), blocks=(1, 2, 1))
    >>> v = squeeze_view(a)
    >>> v.shape, v[2:5]
    ((6,), array([2, 3, 4]))
    >>> v[0] = 9; int(a[0, 0, 0])
    9
    """
    geo = array._geometry
    axes = squeeze_axes(geo.shape, axis)
    added = array._axes
    stored_of = iter(d for d in range(geo.ndim + len(array._dropped)) if d not in array._dropped)
    to_stored = {v: next(stored_of) for v in range(geo.ndim) if v not in added}
    dropped = set(array._dropped)
    for d in axes:
        if d in added:
            continue
        if geo.chunks[d] != 1:
            raise NotImplementedError(
                f"squeeze of axis {d}: it is chunked {geo.chunks[d]} long (> 1), so no view "
                f"of the stored layout can drop it; copy the array with chunk length 1 there "
                f"first (e.g. a.copy(chunks=...))"
            )
        dropped.add(to_stored[d])
    kept = [v for v in range(geo.ndim) if v not in axes]
    meta = B2NDMeta(
        tuple(geo.shape[v] for v in kept),
        tuple(geo.chunks[v] for v in kept),
        tuple(geo.blocks[v] for v in kept),
        geo.dtype,
    )
    new_added = tuple(i for i, v in enumerate(kept) if v in added)
    view = type(array)(
        array.schunk, meta, _validate=False, _axes=new_added, _dropped=tuple(sorted(dropped))
    )
    base = getattr(array, "_base", None)
    view._base = array if base is None else base  # type: ignore[attr-defined]
    return view
