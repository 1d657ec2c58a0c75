"""N-d cell columns of a CTable (python-blosc2's ``blosc2.ndarray(item_shape, dtype)``): one
NDArray of shape ``(rows, *item_shape)`` per column; rows, takes, tuple indexing, reductions
over the logical array, files both ways with python-blosc2 (its side in a child process),
hostile schema entries refused with a FormatError naming the field, and a property: what is
appended reads back."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyblosc2 as pb
from pyblosc2.errors import FormatError, ParamError, ParamTypeError
from tests.bounded import run_child


@dataclasses.dataclass
class Row:
    id: int = pb.field(pb.int32())
    vec: object = pb.field(pb.ndarray((3,), dtype=pb.float32()))
    img: object = pb.field(pb.ndarray((2, 2), dtype=np.int16))


def _data(n: int) -> dict[str, np.ndarray]:
    return {
        "id": np.arange(n, dtype=np.int32),
        "vec": np.arange(3 * n, dtype=np.float32).reshape(n, 3),
        "img": (np.arange(4 * n, dtype=np.int16) - 7).reshape(n, 2, 2),
    }


def test_rows_cells_and_tuple_indexing() -> None:
    t = pb.CTable(Row, new_data=None)
    t.extend(_data(6))
    t.append((6, [1, 2, 3], np.ones((2, 2), np.int16)))
    t.delete([0, 3])
    live = [1, 2, 4, 5, 6]
    full = _data(7)
    full["vec"][6] = [1, 2, 3]
    full["img"][6] = 1
    assert t.vec.shape == (5, 3) and t.img.ndim == 3 and t.img.item_shape == (2, 2)
    assert t.vec.item_size == 3 and t.vec.size == 15 and t.id.item_shape == ()
    np.testing.assert_array_equal(t.vec[:], full["vec"][live])
    np.testing.assert_array_equal(t.img[:, 1, 0], full["img"][live][:, 1, 0])
    np.testing.assert_array_equal(t.vec[2, 1:], full["vec"][4, 1:])
    np.testing.assert_array_equal(t[1].img, full["img"][2])
    np.testing.assert_array_equal(t.take([4, 0, 4]).vec[:], full["vec"][[6, 1, 6]])
    np.testing.assert_array_equal(pb.take(t.vec, [-1])[:], full["vec"][[6]])
    assert t.vec.sum() == full["vec"][live].sum()
    np.testing.assert_array_equal(t.vec.sum(axis=1), full["vec"][live].sum(axis=1))
    np.testing.assert_allclose(t.vec.norm(axis=1), np.linalg.norm(full["vec"][live], axis=1))
    assert t.img.argmax() == np.argmax(full["img"][live])
    structured = np.asarray(t)
    assert structured.dtype["img"].shape == (2, 2)
    t.vec[0] = [9, 9, 9]
    t.vec[1:3] = np.zeros((2, 3))
    assert t.vec[:3].tolist() == [[9, 9, 9], [0, 0, 0], [0, 0, 0]]


def test_bad_cells_refused_before_writing() -> None:
    t = pb.CTable(Row, new_data=None)
    t.extend(_data(2))
    with pytest.raises(ParamError, match="expected item shape"):
        t.append((9, [1, 2], np.zeros((2, 2))))
    with pytest.raises(ParamError, match="out of the range of int16"):
        t.append((9, [1, 2, 3], np.full((2, 2), 1 << 20)))
    with pytest.raises(ParamTypeError, match="not nullable"):
        t.extend({"id": [1], "vec": [None], "img": np.zeros((1, 2, 2))})
    with pytest.raises(ParamError, match=r"must have shape \(2, 4\)"):
        t.add_column("w", pb.ndarray((4,)), values=np.zeros(2))
    with pytest.raises(TypeError, match="Cannot compare ndarray column 'vec'"):
        _ = t.vec > 0
    with pytest.raises(TypeError, match="scalar columns"):
        t.where("vec > 0")
    with pytest.raises(TypeError, match="Cannot sort by ndarray column 'vec'"):
        t.sort_by("vec")
    with pytest.raises(ValueError, match="axis"):
        pb.take(t, [0], axis=0)
    assert len(t) == 2 and t.vec[:].tolist() == _data(2)["vec"].tolist()
    for spec in (pb.ndarray((2,), nullable=True), pb.ndarray((2,), null_storage="mask")):

        @dataclasses.dataclass
        class N:
            x: object = pb.field(spec)

        with pytest.raises(NotImplementedError, match="nullable ndarray columns with mask"):
            pb.CTable(N)
    for spec, says in (
        (pb.ndarray((2,), np.int8, null_value=300), "outside int8"),
        (pb.ndarray((2,), np.int8, null_value=1.5), "outside int8"),
        (pb.ndarray((2,), np.bool_, null_value=1), "must be 255"),
        (pb.ndarray((2,), np.complex64, null_storage="sentinel"), "no null sentinel"),
    ):

        @dataclasses.dataclass
        class S:
            x: object = pb.field(spec)

        with pytest.raises(ParamError, match=says):
            pb.CTable(S)


@dataclasses.dataclass
class NullRow:
    f: object = pb.field(pb.ndarray((3,), np.float32, null_storage="sentinel"))
    i: object = pb.field(pb.ndarray((2,), np.int16, null_value=-7))
    b: object = pb.field(pb.ndarray((2,), np.bool_, null_storage="sentinel"))


def test_sentinel_cells(tmp_path: Path) -> None:
    path = str(tmp_path / "n.b2d")
    with pb.CTable(NullRow, urlpath=path, mode="w") as t:
        t.append(([1, 2, 3], [4, 5], [True, False]))
        t.append((None, None, None))
        t.extend({"f": [None, [4, 5, 6]], "i": [[6, 7], None], "b": [None, [False, False]]})
        t.i[0] = None
    back = pb.CTable.open(path)
    assert back.f.is_null().tolist() == [False, True, True, False]
    assert back.i.null_count() == 3 and back.b.dtype == np.uint8
    np.testing.assert_array_equal(back.i[1], [-7, -7])
    np.testing.assert_array_equal(back.b[1], [255, 255])
    np.testing.assert_array_equal(back.f.sum(axis=0), [5, 7, 9])  # null rows left out
    spec = back.schema_dict()["columns"]
    assert spec[1] == {
        "name": "i", "kind": "ndarray", "item_shape": [2], "dtype_str": "<i2",
        "nullable": True, "null_value": -7,
    }  # fmt: skip
    assert spec[2]["bool_widened_to_uint8"] is True and spec[2]["null_value"] == 255


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_files_and_cframes_round_trip(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"t.{form}")
    with pb.CTable(Row, urlpath=path, mode="w", expected_size=2) as t:
        t.extend(_data(5))  # grows the arrays past their capacity
        t.delete(1)
    back = pb.CTable.open(path)
    keep = [0, 2, 3, 4]
    np.testing.assert_array_equal(back.img[:], _data(5)["img"][keep])
    assert back.schema_dict()["columns"][1] == {
        "name": "vec",
        "kind": "ndarray",
        "item_shape": [3],
        "dtype_str": "<f4",
    }
    again = pb.ctable_from_cframe(back.to_cframe())
    np.testing.assert_array_equal(again.vec[:], _data(5)["vec"][keep])


_THEIRS = """
import dataclasses, json, sys
import numpy as np
import blosc2

@dataclasses.dataclass
class Row:
    id: int = blosc2.field(blosc2.int32())
    vec: object = blosc2.field(blosc2.ndarray((3,), dtype=blosc2.float32()))
    img: object = blosc2.field(blosc2.ndarray((2, 2), dtype=np.int16))

path, mode = sys.argv[1], sys.argv[2]
if mode == "write":
    n = 5
    t = blosc2.CTable(Row, urlpath=path, mode="w")
    t.extend({"id": np.arange(n, dtype=np.int32),
              "vec": np.arange(3 * n, dtype=np.float32).reshape(n, 3),
              "img": (np.arange(4 * n, dtype=np.int16) - 7).reshape(n, 2, 2)})
    t.delete(1)
    t.close()
else:
    t = blosc2.CTable.open(path)
    print(json.dumps({"vec": t.vec[:].tolist(), "img": t.img[:].tolist(),
                      "id": t.id[:].tolist()}))
"""


def _theirs(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[Any]:
    pytest.importorskip("blosc2")
    script = tmp_path / "theirs.py"
    script.write_text(textwrap.dedent(_THEIRS))
    return run_child(
        [sys.executable, str(script), *args],
        f"python-blosc2 {args[1]}s an N-d cell table",
        capture_output=True,
        check=True,
    )


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_python_blosc2_reads_ours_and_we_read_theirs(tmp_path: Path, form: str) -> None:
    ours, theirs = str(tmp_path / f"ours.{form}"), str(tmp_path / f"theirs.{form}")
    with pb.CTable(Row, urlpath=ours, mode="w") as t:
        t.extend(_data(5))
        t.delete(1)
    keep = [0, 2, 3, 4]
    got = json.loads(_theirs(tmp_path, ours, "read").stdout)
    assert got["vec"] == _data(5)["vec"][keep].tolist()
    assert got["img"] == _data(5)["img"][keep].tolist() and got["id"] == keep
    _theirs(tmp_path, theirs, "write")
    back = pb.CTable.open(theirs)
    np.testing.assert_array_equal(back.img[:], _data(5)["img"][keep])
    np.testing.assert_array_equal(back.vec[:], _data(5)["vec"][keep])


def _damage(tmp_path: Path, **entry: Any) -> str:
    path = tmp_path / "t.b2d"
    with pb.CTable(Row, urlpath=str(path), mode="w") as t:
        t.extend(_data(2))
    doc = pb.CTable.open(str(path)).schema_dict()
    doc["columns"][1].update(entry)
    meta = pb.open(str(path / "_meta.b2f"), mode="a")
    meta.vlmeta["schema"] = json.dumps(doc)
    return str(path)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"item_shape": [1 << 40]}, "item_shape"),
        ({"item_shape": [1 << 16, 1 << 16]}, "item_shape"),
        ({"item_shape": [0]}, "positive"),
        ({"item_shape": [2] * 40}, "dimensions"),
        ({"item_shape": "3"}, "item_shape"),
        ({"item_shape": [True]}, "item_shape"),
        ({"dtype_str": "<U9"}, "dtype"),
        ({"dtype_str": "x" * 100}, "dtype_str"),
        ({"dtype_str": "<f8"}, "_cols/vec"),
        ({"item_shape": [4]}, "_cols/vec"),
        ({"item_shape": [3, 1]}, "_cols/vec"),
        ({"null_value": "x"}, "null_value"),
        ({"surprise": 1}, "unknown entries"),
        ({"chunks": [4]}, "chunks"),
    ],
)
def test_hostile_schema_entries_refused(tmp_path: Path, entry: dict[str, Any], says: str) -> None:
    path = _damage(tmp_path, **entry)
    with pytest.raises(FormatError, match=says):
        pb.CTable.open(path)


@settings(max_examples=25, deadline=None)
@given(
    item=hnp.array_shapes(min_dims=1, max_dims=3, max_side=3),
    dtype=st.sampled_from([np.int8, np.uint16, np.float32, np.complex64, np.bool_]),
    n=st.integers(0, 6),
    gone=st.sets(st.integers(0, 5)),
    data=st.data(),
)
def test_cells_read_back_property(item, dtype, n, gone, data) -> None:
    cells = data.draw(hnp.arrays(dtype, (n, *item), elements={"allow_nan": False}))

    @dataclasses.dataclass
    class R:
        x: object = pb.field(pb.ndarray(item, dtype))

    t = pb.CTable(R, expected_size=1)
    for cell in cells[: n // 2]:
        t.append((cell,))
    t.extend({"x": cells[n // 2 :]})
    drop = sorted(i for i in gone if i < n)
    t.delete(drop)
    keep = [i for i in range(n) if i not in drop]
    np.testing.assert_array_equal(t.x[:], cells[keep])
    back = pb.ctable_from_cframe(t.to_cframe())
    np.testing.assert_array_equal(back.x[:], cells[keep])
    assert back.x.shape == (len(keep), *item)
