"""A new table's fixed-size columns and its ``_valid_rows`` mask share one chunk/block grid
(python-blosc2 4.x's rule: sized for the median numeric itemsize; text up to 128 bytes joins,
wider text, N-d cells, variable-length kinds and pinned grids keep their own)."""

from __future__ import annotations

import dataclasses

import numpy as np

import pyblosc2 as pb


@dataclasses.dataclass
class Mixed:
    a: float = pb.field(pb.float32(), default=0.0)
    d: float = pb.field(pb.float64(), default=0.0)
    n: int = pb.field(pb.int32(), default=0)
    s32: str = pb.field(pb.string(max_length=32), default="")
    s64: str = pb.field(pb.string(max_length=64), default="")
    pinned: int = pb.field(pb.int8(), default=0, chunks=(1000,), blocks=(100,))
    v: object = pb.field(pb.ndarray((2,), np.int8), default=None)
    t: str = pb.field(pb.vlstring(), default="")


def test_one_grid_for_the_fixed_columns_and_the_mask() -> None:
    t = pb.CTable(Mixed, expected_size=4_000_000)
    grid = (t._cols["a"].chunks, t._cols["a"].blocks)
    for name in ("d", "n", "s32"):
        assert (t._cols[name].chunks, t._cols[name].blocks) == grid, name
    assert (t._valid_rows.chunks, t._valid_rows.blocks) == grid
    assert t._cols["s64"].chunks != grid[0] and t._cols["pinned"].chunks == (1000,)
    assert (t.chunks, t.blocks) == grid
    t.extend({"a": [1.0], "v": [[1, 2]], "t": ["x"]})
    assert t.a[:].tolist() == [1.0] and t.v[:].tolist() == [[1, 2]]


def test_only_text_and_nothing_to_align() -> None:
    @dataclasses.dataclass
    class Texts:
        s: str = pb.field(pb.string(max_length=8), default="")
        u: str = pb.field(pb.string(max_length=16), default="")

    @dataclasses.dataclass
    class Var:
        s: str = pb.field(pb.vlstring(), default="")

    t = pb.CTable(Texts, expected_size=1000)
    assert t._cols["s"].chunks == t._cols["u"].chunks == t.chunks
    assert pb.CTable(Var).chunks is None
