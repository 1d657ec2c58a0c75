"""Filter registry: filter id → filter object (spec §9.0 table).

Built-in filters are always present (NDCELL and NDMEAN among them: they read the ``b2nd``
metalayer of the super-chunk they are bound to); user filters take ids 160-255 (C-Blosc2's user
range). Any other id is a :class:`ParamError` when compressing and a :class:`FormatError` when
decoding (raised by the chunk layer).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import ParamError
from .base import BaseFilter
from .bytedelta import ByteDelta, ByteDeltaBuggy
from .delta import Delta
from .inttrunc import IntTrunc
from .ndcell import NDCell
from .ndmean import NDMean
from .shuffle import BitShuffle, Shuffle
from .truncprec import TruncPrec

__all__ = [
    "USER_FILTERS_START",
    "get_filter",
    "lookup_filter",
    "register_filter",
    "registry_snapshot",
    "unregister_filter",
    "user_filters",
]

USER_FILTERS_START = 160

_BUILTINS: dict[int, BaseFilter] = {
    f.id: f
    for f in (
        Shuffle(),
        BitShuffle(),
        Delta(),
        TruncPrec(),
        ByteDelta(),
        ByteDeltaBuggy(),
        IntTrunc(),
        NDCell(),
        NDMean(),
    )
}
_user: dict[int, BaseFilter] = {}


def register_filter(flt: BaseFilter) -> None:
    """Register a user filter under ``flt.id`` (160-255)."""
    fid = int(flt.id)
    if not USER_FILTERS_START <= fid <= 255:
        raise ParamError(f"user filter id must be in 160..255, got {fid}")
    if fid in _user:
        raise ParamError(f"filter id {fid} is already registered ({_user[fid]!r})")
    _user[fid] = flt


def unregister_filter(fid: int) -> None:
    """Remove a user filter."""
    if _user.pop(int(fid), None) is None:
        raise ParamError(f"no user filter registered with id {fid}")


def lookup_filter(fid: int) -> BaseFilter | None:
    """The filter for ``fid``, or ``None`` if unknown."""
    return _BUILTINS.get(fid) or _user.get(fid)


def user_filters() -> dict[int, BaseFilter]:
    """The registered user filters by id (a copy)."""
    return dict(_user)


def get_filter(fid: int) -> BaseFilter:
    """The filter for ``fid``; :class:`ParamError` if unknown.

    >>> get_filter(1).name, get_filter(33).name
    ('shuffle', 'ndmean')
    """
    flt = lookup_filter(int(fid))
    if flt is None:
        known = sorted({**_BUILTINS, **_user})
        raise ParamError(f"filter must be one of {known}, got {fid}")
    return flt


@contextmanager
def registry_snapshot() -> Iterator[None]:
    """Restore the user-filter registry on exit (for tests)."""
    saved = dict(_user)
    try:
        yield
    finally:
        _user.clear()
        _user.update(saved)
