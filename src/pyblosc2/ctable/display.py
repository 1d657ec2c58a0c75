"""A CTable as text and numbers about it: ``str``/``repr`` (the first and last rows and a
``[N rows x M columns]`` footer, as python-blosc2 prints them), ``to_string`` (every row),
``describe`` (per-column statistics, printed), ``cov`` (the covariance matrix of numeric
and bool columns), and the sizes ``cbytes``/``nbytes``/``cratio``.
"""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np

from ..errors import ParamError, ParamTypeError
from . import printopts
from .base import TableBase
from .column import Column
from .info import InfoReporter, table_info_items
from .render import render

__all__ = ["TableDisplay"]


def _cell(value: Any) -> str:
    if isinstance(value, np.floating):
        return np.format_float_positional(value, trim="-", precision=6)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bytes):
        return repr(value)
    return str(value)


class TableDisplay(TableBase):
    """Text and statistics (a mixin of :class:`~pyblosc2.ctable.table.CTable`)."""

    def to_string(
        self,
        *,
        max_rows: int | None = None,
        max_width: int | None = None,
        show_dimensions: bool | str = False,
        display_index: bool | None = None,
        index_name: str = "",
    ) -> str:
        """The table as text (python-blosc2's): every row and column unless ``max_rows``
        (``-1`` all) or ``max_width`` (a character budget; ``-1`` all) say otherwise; the
        row index as :func:`~.printopts.set_printoptions` says unless ``display_index``
        does; a ``[N rows x M columns]`` footer with ``show_dimensions=True`` (or
        ``"truncate"``: when something was left out).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> print(CTable(Row, new_data=[(1,), (22,)]).to_string(display_index=False))
         x
         1
        22
        """
        opts = printopts.current()
        if display_index is None:
            display_index = opts.display_index
        if not isinstance(display_index, bool):
            raise ParamTypeError(f"display_index must be a bool or None, got {display_index!r}")
        if not isinstance(index_name, str):
            raise ParamTypeError(f"index_name must be a str, got {index_name!r}")
        if show_dimensions not in (True, False, "truncate"):
            raise ParamError(
                f"show_dimensions must be True, False or 'truncate', got {show_dimensions!r}"
            )
        limits = {}
        for arg, value in (("max_rows", max_rows), ("max_width", max_width)):
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < -1
            ):
                raise ParamTypeError(f"{arg} must be None, -1 or a non-negative int, got {value!r}")
            limits[arg] = -1 if value is None else value
        if opts.fancy:
            raise NotImplementedError(
                "CTable display with fancy=True (python-blosc2's rules, dtype row and footer)"
            )
        return render(
            list(self.col_names),
            len(self),
            lambda name, rows: Column(self, name)[rows],
            max_rows=limits["max_rows"],
            max_width=limits["max_width"],
            show_dimensions=show_dimensions,
            display_index=display_index,
            index_name=index_name,
            precision=opts.display_precision,
        )

    def __str__(self) -> str:
        """The table truncated as :func:`~.printopts.set_printoptions` says."""
        opts = printopts.current()
        width = opts.display_width
        if width is None:  # the terminal's
            width = shutil.get_terminal_size((120, 20)).columns
        return self.to_string(
            max_rows=opts.display_rows, max_width=width, show_dimensions="truncate"
        )

    def __repr__(self) -> str:
        return str(self)

    # -- sizes ----------------------------------------------------------------------------
    @property
    def cbytes(self) -> int:
        """Compressed bytes of the columns and the ``_valid_rows`` mask."""
        return sum(int(a.cbytes) for a in self._cols.values()) + int(self._valid_rows.cbytes)

    @property
    def nbytes(self) -> int:
        """Uncompressed bytes of the columns and the ``_valid_rows`` mask."""
        return sum(int(a.nbytes) for a in self._cols.values()) + int(self._valid_rows.nbytes)

    @property
    def cratio(self) -> float:
        """``nbytes / cbytes``."""
        cbytes = self.cbytes
        return float("inf") if cbytes == 0 else self.nbytes / cbytes

    # -- statistics -----------------------------------------------------------------------
    def describe(self) -> None:
        """Print per-column statistics: count, mean, std, min, max of numbers; true/false
        counts of bools; unique values of text.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> CTable(Row, new_data=[(1,), (3,)]).describe()
        CTable: 2 rows x 1 columns
        x (int64): count=2 mean=2 std=1 min=1 max=3
        """
        n = len(self)
        print(f"CTable: {n} rows x {len(self.col_names)} columns")
        for name in self.col_names:
            col = Column(self, name)
            kind = col.dtype.kind
            nulls = col.null_count()
            count = f"count={n - nulls}" + (f" nulls={nulls}" if nulls else "")
            if n == 0:
                print(f"{name} ({col.dtype}): empty")
            elif kind == "b":
                trues = int(col.sum())
                print(f"{name} ({col.dtype}): {count} true={trues} false={n - nulls - trues}")
            elif kind in "iuf":
                stats = {
                    "mean": col.mean(), "std": col.std(), "min": col.min(), "max": col.max()
                }  # fmt: skip
                text = " ".join(f"{k}={_cell(np.float64(v))}" for k, v in stats.items())
                print(f"{name} ({col.dtype}): {count} {text}")
            else:
                print(f"{name} ({col.dtype}): {count} unique={len(col.unique())}")

    def cov(self) -> np.ndarray:
        """The covariance matrix (``ddof=1``) of the columns (numbers, bools as 0/1).

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        ...     y: float = 0.0
        >>> CTable(Row, new_data=[(1, 2.0), (3, 6.0)]).cov().tolist()
        [[2.0, 4.0], [4.0, 8.0]]
        """
        names = list(self.col_names)
        for name in names:
            kind = Column(self, name).dtype.kind
            if kind not in "biuf":
                raise ParamTypeError(
                    f"cov() is not supported for column {name!r} of dtype "
                    f"{Column(self, name).dtype}"
                )
        if len(self) < 2:
            raise ParamError(f"cov() needs at least 2 live rows, the table has {len(self)}")
        data = np.vstack([Column(self, n)[:].astype(np.float64) for n in names])
        nulls = np.any([Column(self, n).is_null() for n in names], axis=0)
        data = data[:, ~nulls]  # a row null in any column is left out of every one
        return np.atleast_2d(np.cov(data, ddof=1))

    # -- info -----------------------------------------------------------------------------
    @property
    def info_items(self) -> list[tuple[str, object]]:
        """What ``info`` reports, as (name, value) pairs."""
        return table_info_items(self)

    @property
    def info(self) -> InfoReporter:
        """A summary of the table (rows, columns with dtypes and sizes); call it to print.

        >>> import dataclasses
        >>> from pyblosc2.ctable import CTable
        >>> @dataclasses.dataclass
        ... class Row:
        ...     x: int = 0
        >>> dict(CTable(Row, new_data=[(1,)]).info_items)["nrows"]
        1
        """
        return InfoReporter(self)
