"""A CTable as text, as python-blosc2 4.x prints it (its non-``fancy`` display): a header of
column names, cells right-aligned two spaces apart, an optional pandas-like row index on the
left (left-aligned, ``...`` for hidden rows); more rows than ``max_rows`` print as the first
and last few (``min(10, max_rows)`` of them, the extra one at the head) around a ``...`` row;
columns past the ``max_width`` character budget are dropped from the middle, a ``...``
column in their place (the first and last ones kept alternately while they fit; two columns
or fewer are always shown); floats with ``precision`` digits after the point (one digit for
a column whose shown values are all whole); a ``[N rows x M columns]`` footer when asked
(``show_dimensions=True``) or when something was left out (``"truncate"``).

Only the shown rows are read, one gather per column.

>>> import numpy as np
>>> cols = {"a": np.arange(12), "b": np.arange(12) / 2}
>>> text = render(["a", "b"], 12, lambda n, r: cols[n][r], max_rows=4, max_width=-1,
...               show_dimensions="truncate", display_index=True, index_name="", precision=6)
>>> print(text)
       a         b
0      0  0.000000
1      1  0.500000
...  ...       ...
10    10  5.000000
11    11  5.500000
<BLANKLINE>
[12 rows x 2 columns]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["cell_text", "render", "shown_rows"]

GAP = 2  # spaces between columns
ELLIPSIS = "..."


def shown_rows(nrows: int, max_rows: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The logical rows shown at the head and the tail, and how many are hidden
    (``max_rows``: ``-1`` all, ``0`` none).

    >>> [x.tolist() if hasattr(x, "tolist") else x for x in shown_rows(60, 20)]
    [[0, 1, 2, 3, 4], [55, 56, 57, 58, 59], 50]
    """
    if max_rows == 0:
        return np.arange(0), np.arange(0), nrows
    if max_rows < 0 or nrows <= max_rows:
        return np.arange(nrows), np.arange(0), 0
    preview = min(10, max_rows)
    head, tail = (preview + 1) // 2, preview // 2
    return np.arange(head), np.arange(nrows - tail, nrows), max(0, nrows - head - tail)


def cell_text(value: Any, precision: int) -> str:
    """One cell as text (a float with ``precision`` digits after the point).

    >>> cell_text(np.float32(1.25), 1), cell_text(np.datetime64("2020-01-02T03:04"), 6)
    ('1.2', '2020-01-02 03:04')
    """
    if isinstance(value, np.datetime64):
        return str(value).replace("T", " ").removesuffix(".000")
    if isinstance(value, np.ndarray):
        if value.ndim == 1 and value.size <= 6:
            return np.array2string(value, separator=", ", max_line_width=10_000)
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, float | np.floating):
        return f"{float(value):.{precision}f}"
    if isinstance(value, np.generic) and not isinstance(value, np.bytes_):
        value = value.item()
    return str(value)


def _precision(values: list[Any], default: int) -> int:
    """One digit for a float column whose finite shown values are all whole."""
    floats = [float(v) for v in values if isinstance(v, float | np.floating)]
    finite = [v for v in floats if np.isfinite(v)]
    return 1 if finite and all(v.is_integer() for v in finite) else default


def _fit(names: list[str], widths: dict[str, int], used: int, budget: int) -> list[str]:
    """The columns shown within ``budget`` characters: all, or the first and last ones
    taken alternately while they fit, with ``...`` between."""
    total = used + sum(widths[n] + GAP for n in names) + GAP * max(0, len(names) - 1)
    if budget < 0 or total <= budget or len(names) <= 2:
        return names
    used += len(ELLIPSIS) + GAP
    left, right = 0, len(names) - 1
    while left <= right:
        need = widths[names[left]] + 2 * GAP  # the column, its padding and the gap before it
        if used + need > budget:
            break
        used, left = used + need, left + 1
        if left > right:
            break
        need = widths[names[right]] + 2 * GAP
        if used + need > budget:
            break
        used, right = used + need, right - 1
    return [*names[:left], ELLIPSIS, *names[right + 1 :]]


def render(
    names: list[str],
    nrows: int,
    cells: Callable[[str, np.ndarray], Any],
    *,
    max_rows: int,
    max_width: int,
    show_dimensions: bool | str,
    display_index: bool,
    index_name: str,
    precision: int,
) -> str:
    """The table of ``nrows`` rows and the columns ``names`` as text (``cells(name, rows)``:
    a column's values at logical ``rows``); see the module docstring."""
    head, tail, hidden = shown_rows(nrows, max_rows)
    rows = np.concatenate([head, tail])
    texts: dict[str, list[str]] = {}
    for name in names:
        values = list(cells(name, rows)) if rows.size else []
        digits = _precision(values, precision)
        texts[name] = [cell_text(v, digits) for v in values]
    widths = {n: max([len(n), 3 if hidden else 0, *map(len, texts[n])]) for n in names}
    index_width = 0
    if display_index:
        index_width = max(len(index_name), len(str(max(nrows - 1, 0))), 3 if hidden else 0)
    used = index_width + 2 * GAP if display_index else 0
    shown = _fit(list(names), widths, used, max_width)
    widths[ELLIPSIS] = len(ELLIPSIS)
    texts[ELLIPSIS] = [ELLIPSIS] * rows.size

    def line(index: str | None, row: dict[str, str]) -> str:
        body = (" " * GAP).join(row[n].rjust(widths[n]) for n in shown)
        return body if index is None else index.ljust(index_width) + " " * GAP + body

    def index_of(label: Any) -> str | None:
        return str(label) if display_index else None

    lines = [line(index_of(index_name), {n: n for n in shown})]
    for i, r in enumerate(head):
        lines.append(line(index_of(int(r)), {n: texts[n][i] for n in shown}))
    if hidden:
        lines.append(line(index_of(ELLIPSIS), dict.fromkeys(shown, ELLIPSIS)))
    for i, r in enumerate(tail, start=head.size):
        lines.append(line(index_of(int(r)), {n: texts[n][i] for n in shown}))
    truncated = hidden > 0 or len(shown) < len(names)
    if show_dimensions is True or (show_dimensions == "truncate" and truncated):
        lines += ["", f"[{nrows} rows x {len(names)} columns]"]
    return "\n".join(lines)
