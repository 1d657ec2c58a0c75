"""Plain-text tables and cells for ``info`` (HDF5 files and xarray-blosc2 stores)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["cell", "table"]


def cell(v: Any) -> str:
    """A value as a table cell: None as ``-``, lists as tuples without quotes, floats with
    two decimals, dicts as ``k=v`` pairs.

    >>> cell([3]), cell(["time", "x"]), cell(2.0 / 3), cell({"units": "K"}), cell(None)
    ('(3,)', '(time, x)', '0.67', "units='K'", '-')
    """
    if v is None:
        return "-"
    if isinstance(v, list):
        return "(" + ", ".join(map(str, v)) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, dict):
        return ", ".join(f"{k}={val!r}" for k, val in v.items())
    return str(v)


def table(heads: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Left-aligned columns under their heads, one line per row.

    >>> table(["a", "bb"], [["xyz", "1"]])
    ['  a    bb', '  xyz  1']
    """
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    return [
        indent + "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in [list(heads), *rows]
    ]
