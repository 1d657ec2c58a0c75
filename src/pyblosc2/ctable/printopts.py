"""How ``str``/``repr`` of a CTable look (python-blosc2's ``set_printoptions``,
``get_printoptions``, ``printoptions``): the pandas-like row index (``display_index``), the
rows shown before the first and last five stand for the rest (``display_rows``: ``-1`` all,
``0`` none), the character budget that drops middle columns (``display_width``: ``None`` the
terminal's, ``-1`` all), the digits after a float's point (``display_precision``), and
``fancy`` (python-blosc2's decorated display: not built, ``str`` then raises
NotImplementedError). ``to_string`` ignores them, but for ``display_index``.

The options are one frozen record replaced whole by each change, for the process (as
python-blosc2's are).

>>> with printoptions(display_rows=4):
...     get_printoptions()["display_rows"]
4
>>> get_printoptions()["display_rows"]
60
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from ..errors import ParamTypeError

__all__ = ["PrintOptions", "current", "get_printoptions", "printoptions", "set_printoptions"]

_UNSET: Any = object()  # display_width=None is a value (the terminal's), not "unchanged"


@dataclasses.dataclass(frozen=True)
class PrintOptions:
    """python-blosc2's CTable display options, with its defaults."""

    display_index: bool = True
    display_rows: int = 60
    display_width: int | None = None
    display_precision: int = 6
    fancy: bool = False


_options = PrintOptions()


def current() -> PrintOptions:
    """The options in force."""
    return _options


def _int(value: Any, name: str, low: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ParamTypeError(f"{name} must be {what}, got {value!r}")
    return value


def set_printoptions(
    *,
    display_index: bool | None = None,
    display_rows: int | None = None,
    display_width: int | None = _UNSET,
    display_precision: int | None = None,
    fancy: bool | None = None,
) -> None:
    """Change the display options of CTables (``None``: unchanged; for ``display_width``,
    leaving it out keeps it and ``None`` is the terminal's width).

    >>> set_printoptions(display_precision=2); get_printoptions()["display_precision"]
    2
    >>> set_printoptions(display_precision=6)
    """
    global _options
    changes: dict[str, Any] = {}
    for name, flag in (("display_index", display_index), ("fancy", fancy)):
        if flag is not None:
            if not isinstance(flag, bool):
                raise ParamTypeError(f"{name} must be a bool or None, got {flag!r}")
            changes[name] = flag
    if display_rows is not None:
        what = "-1 (all), a non-negative int, or None"
        changes["display_rows"] = _int(display_rows, "display_rows", -1, what)
    if display_width is not _UNSET:
        what = "None (the terminal's), -1 (all), or a non-negative int"
        changes["display_width"] = (
            None if display_width is None else _int(display_width, "display_width", -1, what)
        )
    if display_precision is not None:
        what = "a non-negative int or None"
        changes["display_precision"] = _int(display_precision, "display_precision", 0, what)
    _options = dataclasses.replace(_options, **changes)


def get_printoptions() -> dict[str, Any]:
    """The display options, as a new dict.

    >>> sorted(get_printoptions())
    ['display_index', 'display_precision', 'display_rows', 'display_width', 'fancy']
    """
    return dataclasses.asdict(_options)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """The options of :func:`set_printoptions` for a ``with`` block, restored after it.

    >>> with printoptions(display_index=False, display_precision=2):
    ...     get_printoptions()["display_precision"]
    2
    >>> get_printoptions()["display_precision"]
    6
    """
    global _options
    saved = _options
    try:
        set_printoptions(**kwargs)
        yield
    finally:
        _options = saved
