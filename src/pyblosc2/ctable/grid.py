"""One chunk/block grid shared by a table's fixed-size columns, as python-blosc2 4.x lays out
a new table: lazy expressions over columns of one grid (and the ``_valid_rows`` mask) take
the blockwise path.

The grid is sized for the median itemsize of the numeric columns, snapped to 1, 2, 4, 8 or
16 bytes (ties down); a numeric column joins it when the shared chunk is at most 4 times the
one it would pick alone, a fixed-width text column when its items are at most 128 bytes.
Columns with their own ``chunks``/``blocks``, N-d cells and the variable-length kinds keep
their own. The grid chosen is pyblosc2's partition of that itemsize (python-blosc2's chunk
sizes differ; either reads the other's).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..ndarray.numpylike import compute_chunks_blocks
from .ndcells import is_cells
from .strings import is_var

__all__ = ["TableGrid", "aligned_grid"]

COMMON_ITEMSIZES = (1, 2, 4, 8, 16)
MAX_ALIGNED_STR_ITEMSIZE = 128


def _snap(median: float) -> int:
    return min(COMMON_ITEMSIZES, key=lambda v: (abs(median - v), v))


def aligned_grid(columns: Any, capacity: int) -> tuple[Any, Any, set[str]]:
    """``(chunks, blocks, names)``: the shared grid of ``columns`` for ``capacity`` rows and
    the names of the columns on it (``(None, None, set())`` when none is).

    >>> from pyblosc2.ctable.schema import TableColumn
    >>> from pyblosc2 import schema
    >>> cols = [TableColumn("a", schema.float32(), 0), TableColumn("b", schema.float64(), 0)]
    >>> chunks, blocks, names = aligned_grid(cols, 1000)
    >>> sorted(names), len(chunks)
    (['a', 'b'], 1)
    """
    numeric: list[Any] = []
    texts: list[Any] = []
    for col in columns:
        if is_var(col.spec) or is_cells(col.spec) or col.spec.dtype is None:
            continue
        if col.chunks is not None or col.blocks is not None:
            continue
        (texts if col.dtype.kind in "US" else numeric).append(col)
    basis = numeric or texts
    if not basis:
        return None, None, set()
    size = _snap(float(np.median([c.dtype.itemsize for c in basis])))
    chunks, blocks = compute_chunks_blocks((capacity,), dtype=np.dtype(f"V{size}"))
    names = {
        c.name
        for c in numeric
        if chunks[0] <= 4 * compute_chunks_blocks((capacity,), dtype=c.dtype)[0][0]
    }
    names |= {c.name for c in texts if c.dtype.itemsize <= MAX_ALIGNED_STR_ITEMSIZE}
    return (chunks, blocks, names) if names else (None, None, set())


class TableGrid:
    """``CTable.chunks`` / ``CTable.blocks``: the grid most of the stored 1-d columns share."""

    _cols: dict[str, Any]

    def _shared_grid(self) -> tuple[Any, Any] | None:
        grids: Counter[tuple[Any, Any]] = Counter()
        for col in self._cols.values():
            chunks, blocks = getattr(col, "chunks", None), getattr(col, "blocks", None)
            if (
                chunks is None
                or blocks is None
                or len(chunks) != 1
                or is_var(getattr(col, "spec", None))
            ):
                continue
            grids[(tuple(chunks), tuple(blocks))] += 1
        return grids.most_common(1)[0][0] if grids else None

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The chunk shape the table's fixed-size columns share (None without any)."""
        grid = self._shared_grid()
        return None if grid is None else grid[0]

    @property
    def blocks(self) -> tuple[int, ...] | None:
        """The block shape the table's fixed-size columns share (None without any)."""
        grid = self._shared_grid()
        return None if grid is None else grid[1]
