"""Text and file interop of CTable, round 2 (issue 34): ``blosc2.asarray``/``zeros``/
``ones``/``full``/``empty`` with numpy's StringDType (utf8_dispatch.py), the chunk-aligned
writer, utf8 columns in CSV, utf8 comparisons refused with numbers and other text kinds,
ordered Arrow dictionaries, dictionary columns compared per row, and the
``parquet_to_blosc2`` command (cli/parquet_to_blosc2.py, ctable/parquet_convert.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable, _ChunkAlignedWriter
from pyblosc2.ctable.strings import DictionaryColumn, var_spec
from pyblosc2.ctable.utf8array import UTF8Array, have_string_dtype
from pyblosc2.errors import BoundsError, ParamError, ParamTypeError

needs_string_dtype = pytest.mark.skipif(not have_string_dtype(), reason="numpy 1.x")
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)


# -- StringDType constructors ----------------------------------------------------------------------
@needs_string_dtype
def test_string_dtype_gives_a_utf8_array() -> None:
    sd = np.dtypes.StringDType()
    src = np.array(["a", "bb", "日本語"], dtype=sd)
    out = pb.asarray(src)
    assert isinstance(out, UTF8Array) and list(out[:]) == ["a", "bb", "日本語"]
    assert isinstance(pb.asarray(np.array(["a"], dtype="<U1"), dtype=sd), UTF8Array)
    fixed = pb.asarray(src, dtype="<U8")  # a fixed-width target: an NDArray
    assert isinstance(fixed, pb.NDArray) and fixed.dtype == np.dtype("<U8")
    assert pb.asarray(out) is out and pb.asarray(out, copy=True) is not out
    assert isinstance(pb.asarray(np.array(["a", "bb"])), pb.NDArray)  # unchanged paths
    assert list(pb.zeros(2, dtype=sd)[:]) == ["", ""] == list(pb.empty(2, dtype=sd)[:])
    assert list(pb.ones(2, dtype=sd)[:]) == list(np.ones(2, dtype=sd))
    with pytest.raises(ValueError, match="1-D only"):
        pb.zeros((2, 3), dtype=sd)
    with pytest.raises(ValueError, match="1-D only"):
        pb.asarray(np.array([["a"], ["b"]], dtype=sd))
    with pytest.raises(TypeError, match="utf8_array"):
        pb.zeros(3, dtype=sd, urlpath="unused.b2nd")


@needs_string_dtype
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 300), TEXT)
def test_full_matches_numpy(n: int, text: str) -> None:
    sd = np.dtypes.StringDType()
    got = pb.full(n, text, dtype=sd)
    # the text itself, not np.full's: numpy reads the fill value as "U" first, which drops
    # trailing NULs ("\x00" -> ""; hypothesis found it)
    assert len(got) == n and list(got[:]) == [text] * n
    if not text.endswith("\x00"):
        assert list(got[:]) == list(np.full(n, text, dtype=sd))


# -- the chunk-aligned writer ---------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 50), st.lists(st.integers(0, 40), max_size=20))
def test_chunk_aligned_writer_writes_what_a_plain_write_does(chunk: int, sizes: list[int]) -> None:
    n = sum(sizes)
    data = np.arange(n, dtype=np.float64)
    arr = pb.zeros((max(n, 1),), dtype=np.float64, chunks=(chunk,))
    starts: list[int] = []
    w = _ChunkAlignedWriter(arr, chunk, on_write=lambda pos, block: starts.append(pos))
    pos = 0
    for size in sizes:
        w.append(data[pos : pos + size])
        pos += size
    w.flush()
    np.testing.assert_array_equal(arr[:n], data)
    assert all(s % chunk == 0 for s in starts)  # every write starts on a chunk boundary


def test_chunk_aligned_writer_refuses_overflow_and_bad_chunks() -> None:
    arr = pb.zeros((4,), dtype=np.int64)
    with pytest.raises(BoundsError):
        _ChunkAlignedWriter(arr, 2).append(np.arange(5))
    with pytest.raises(ParamError):
        _ChunkAlignedWriter(arr, 0)


# -- CSV, comparisons, dictionaries ---------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=20))
def test_utf8_columns_round_trip_through_csv(tmp_path_factory: Any, values: list[str]) -> None:
    row = dataclasses.make_dataclass("U", [("text", str, pb.field(pb.utf8()))])
    path = tmp_path_factory.mktemp("c") / "t.csv"
    CTable(row, new_data=[(v,) for v in values]).to_csv(path)
    assert list(CTable.from_csv(path, row)["text"][:]) == values


def test_csv_refuses_kinds_python_blosc2_does_not_read(tmp_path: Path) -> None:
    row = dataclasses.make_dataclass("V", [("v", str, pb.field(pb.vlstring()))])
    (tmp_path / "v.csv").write_text("v\nq\n")
    with pytest.raises(ParamError, match="does not support vlstring"):
        CTable.from_csv(tmp_path / "v.csv", row)


def test_utf8_compared_with_numbers_or_other_text_kinds_is_a_type_error() -> None:
    @dataclasses.dataclass
    class Mixed:
        name: str = pb.field(pb.utf8())
        other: str = pb.field(pb.vlstring())

    t = CTable(Mixed, new_data={"name": ["a", "b"], "other": ["b", "c"]})
    for bad in (lambda: t.name == 42, lambda: t.name < 3.14, lambda: t.name == t.other):
        with pytest.raises(ParamTypeError, match="utf8"):
            bad()
    assert t.where(t.name == "b").other[:] == ["c"]


def test_dictionary_columns_compare_per_row_and_stay_hashable() -> None:
    c = DictionaryColumn(var_spec("dictionary", nullable=True), 4)
    c[0:4] = np.array(["x", None, "y", "x"], dtype=object)
    assert (c == "x").tolist() == [True, False, False, True]
    assert (c != "x").tolist() == [False, False, True, False]  # a null is neither
    assert (c == "absent").tolist() == [False] * 4
    assert isinstance(hash(c), int)


def test_ordered_dictionaries_whose_batches_disagree_are_refused() -> None:
    pa = pytest.importorskip("pyarrow")
    typ = pa.dictionary(pa.int32(), pa.string(), ordered=True)
    schema = pa.schema([pa.field("x", typ)])
    ab = pa.record_batch({"x": pa.array(["A", "B"], type=typ)}, schema=schema)
    ba = pa.record_batch({"x": pa.array(["B", "A"], type=typ)}, schema=schema)
    with pytest.raises(ParamError, match="ordered"):
        CTable.from_arrow(schema, [ab, ba])
    assert CTable.from_arrow(schema, [ab, ab]).x[:] == ["A", "B", "A", "B"]


# -- the parquet_to_blosc2 command --------------------------------------------------------------
def test_parquet_to_blosc2_import_export(tmp_path: Path, capsys: Any) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from pyblosc2.cli.parquet_to_blosc2 import main

    src = tmp_path / "d.parquet"
    dict_type = pa.dictionary(pa.int32(), pa.string())
    at = pa.table(
        {
            "vendor": pa.array(["Uber", "Lyft", None, "Via"], type=dict_type),
            "score": pa.array([1, 2, 3, 4], type=pa.int32()),
            "ts": pa.array(np.array([0, 2_000_000, 4_000_000, 6_000_000]), type=pa.timestamp("us")),
            "trip": pa.array([{"sec": float(i)} for i in range(4)]),
        }
    )
    pq.write_table(at, src)
    out = tmp_path / "d.b2d"
    args = ["--progress", "--parquet-batch-size", "3", "--timestamp-unit", "auto"]
    assert main([*args, "--no-separate-nested-cols", str(src), str(out)]) == 0
    assert "  batch 1: 1 rows" in capsys.readouterr().out
    t = CTable.open(str(out))
    assert t.vendor[:] == ["Uber", "Lyft", None, "Via"]
    assert getattr(t._column_defs["ts"].spec, "unit", None) == "s" and t._cols["ts"][
        :4
    ].tolist() == [0, 2, 4, 6]
    assert t.trip[:] == [[{"sec": float(i)}] for i in range(4)]  # a struct kept whole
    with pytest.raises(FileExistsError):
        main([str(src), str(out)])
    back = tmp_path / "back.parquet"
    assert main(["--export", str(out), str(back)]) == 0
    assert pq.read_table(back).column("vendor").to_pylist() == ["Uber", "Lyft", None, "Via"]
    with pytest.raises(NotImplementedError, match="--use-dict"):
        main(["--use-dict", str(src), str(tmp_path / "x.b2d")])
    with pytest.raises(NotImplementedError, match="list-serializer arrow"):
        main(["--list-serializer", "arrow", str(src), str(tmp_path / "x.b2d")])


def test_parquet_to_blosc2_decodes_dictionaries_and_limits_rows(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from pyblosc2.cli.parquet_to_blosc2 import main

    src = tmp_path / "d.parquet"
    values = ["Uber", "Lyft", "Uber"] * 5
    pq.write_table(pa.table({"v": pa.array(values).dictionary_encode()}), src)
    out = tmp_path / "d.b2z"
    assert main(["--decode-dictionaries", "--max-rows", "7", str(src), str(out)]) == 0
    t = CTable.open(str(out))
    assert t._column_defs["v"].spec.kind in ("utf8", "vlstring") and list(t.v[:]) == values[:7]


def test_blosc2_batch_size_sets_the_batches_of_imported_varlen_columns() -> None:
    pa = pytest.importorskip("pyarrow")
    at = pa.table({"b": pa.array([b"x", b"yy", b""]), "v": pa.array([[1], [], [2, 3]])})
    t = CTable.from_arrow(at, blosc2_batch_size=2)  # python-blosc2: every batched column
    assert [getattr(t._column_defs[n].spec, "batch_rows", None) for n in "bv"] == [2, 2]
    assert t.b[:] == [b"x", b"yy", b""] and t.v[:] == [[1], [], [2, 3]]
