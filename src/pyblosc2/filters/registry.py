"""Filter registry: filter id → filter object (spec §9.0 table).

Built-in filters are always present; user filters take ids 160-255 (C-Blosc2's user range).
Ids C-Blosc2 assigns but pyblosc2 does not implement (NDCELL 32, NDMEAN 33) raise
:class:`NotImplementedError`; any other unknown id is a :class:`ParamError` when compressing and
a :class:`FormatError` when decoding (raised by the chunk layer).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..constants import Filter
from ..errors import ParamError
from .base import BaseFilter
from .bytedelta import ByteDelta, ByteDeltaBuggy
from .delta import Delta
from .inttrunc import IntTrunc
from .shuffle import BitShuffle, Shuffle
from .truncprec import TruncPrec

__all__ = [
    "UNIMPLEMENTED_FILTERS",
    "get_filter",
    "lookup_filter",
    "register_filter",
    "registry_snapshot",
    "unregister_filter",
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
    )
}
#: assigned by C-Blosc2 but needing the b2nd metalayer; not implemented here
UNIMPLEMENTED_FILTERS: dict[int, str] = {
    Filter.NDCELL: "NDCELL filter (id 32)",
    Filter.NDMEAN: "NDMEAN filter (id 33)",
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
    """The filter for ``fid``, or ``None`` if unknown. NDCELL/NDMEAN raise NotImplementedError."""
    flt = _BUILTINS.get(fid) or _user.get(fid)
    if flt is None and fid in UNIMPLEMENTED_FILTERS:
        raise NotImplementedError(f"{UNIMPLEMENTED_FILTERS[fid]} is not implemented by pyblosc2")
    return flt


def get_filter(fid: int) -> BaseFilter:
    """The filter for ``fid``; :class:`ParamError` if unknown.

    >>> get_filter(Filter.SHUFFLE).name
    'shuffle'
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
