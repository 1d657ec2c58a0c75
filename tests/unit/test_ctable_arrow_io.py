"""CTable to and from Arrow, Parquet and pandas (pyblosc2/ctable/arrow_io.py): files written
by pyarrow read by pyblosc2 and pyblosc2's read by pyarrow, round trips of every stored kind,
kinds not stored refused by name, hostile Parquet refused with FormatError."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as blosc2
from pyblosc2.ctable import CTable
from pyblosc2.errors import FormatError, ParamError
from tests.bounded import run_child

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@dataclasses.dataclass
class Row:
    i8: int = blosc2.field(blosc2.int8())
    u64: int = blosc2.field(blosc2.uint64())
    f32: float = blosc2.field(blosc2.float32())
    f: float = blosc2.field(blosc2.float64())
    ok: bool = blosc2.field(blosc2.bool())
    s: str = blosc2.field(blosc2.string(max_length=8))
    b: bytes = blosc2.field(blosc2.bytes(max_length=4))


def _table(n: int = 20) -> CTable:
    data = {
        "i8": np.arange(n, dtype=np.int8) - 5,
        "u64": np.arange(n, dtype=np.uint64) * (2**40),
        "f32": np.linspace(0, 1, n, dtype=np.float32),
        "f": np.linspace(-5, 5, n),
        "ok": np.arange(n) % 3 == 0,
        "s": np.array([f"é{i}" for i in range(n)]),
        "b": np.array([b"x%d" % i for i in range(n)], dtype="S4"),
    }
    t = CTable(Row)
    t.extend(data)
    return t


def test_importing_pyblosc2_imports_no_arrow_or_pandas() -> None:
    code = "import sys, pyblosc2; print('pyarrow' in sys.modules or 'pandas' in sys.modules)"
    out = run_child(
        [sys.executable, "-c", code], "import pyblosc2", capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_to_arrow_types_values_and_live_rows() -> None:
    t = _table()
    t.delete([0, 3])
    at = t.to_arrow()
    assert [str(f.type) for f in at.schema] == [
        "int8", "uint64", "float", "double", "bool", "string", "large_binary"
    ]  # fmt: skip
    for name in t.col_names:
        assert at.column(name).to_pylist() == t[name][:].tolist()
    assert at.num_rows == 18


def test_arrow_round_trip_with_fixed_width_text() -> None:
    t = _table()
    back = CTable.from_arrow(t.to_arrow(), string_max_length={"s": 8, "b": 4})
    assert [back[n].dtype for n in back.col_names] == [t[n].dtype for n in t.col_names]
    for name in t.col_names:
        np.testing.assert_array_equal(back[name][:], t[name][:])


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 50), st.integers(0, 60))
def test_batches_cover_every_live_row_once(batch_size: int, n: int) -> None:
    t = _table(n)
    batches = list(t.iter_arrow_batches(batch_size=batch_size, columns=["i8", "s"]))
    assert all(b.num_rows <= batch_size for b in batches)
    assert sum(b.num_rows for b in batches) == n
    got = [v for b in batches for v in b.column(0).to_pylist()]
    assert got == t.i8[:].tolist()


def test_parquet_written_by_pyarrow_read_by_us(tmp_path) -> None:
    path = tmp_path / "theirs.parquet"
    ref = pa.table(
        {
            "id": pa.array(np.arange(1000, dtype=np.int64)),
            "x": pa.array(np.linspace(0, 1, 1000, dtype=np.float32)),
            "flag": pa.array(np.arange(1000) % 2 == 0),
        }
    )
    pq.write_table(ref, path, row_group_size=128)
    t = CTable.from_parquet(path, batch_size=100)
    assert t.col_names == ["id", "x", "flag"]
    np.testing.assert_array_equal(t.x[:], ref.column("x").to_numpy())
    assert t.flag[:].tolist() == ref.column("flag").to_pylist()
    assert len(CTable.from_parquet(path, max_rows=250, columns=["id"])) == 250


def test_parquet_written_by_us_read_by_pyarrow(tmp_path) -> None:
    t = _table(300)
    path = tmp_path / "ours.parquet"
    t.to_parquet(path, batch_size=64, compression="snappy")
    back = pq.read_table(path)
    assert pq.ParquetFile(path).metadata.num_row_groups == 5
    for name in t.col_names:
        assert back.column(name).to_pylist() == t[name][:].tolist()


def test_view_types_import_as_text() -> None:
    at = pa.table({"s": pa.array(["a", "bb"], type=pa.string_view())})
    assert CTable.from_arrow(at, string_max_length=4).s[:].tolist() == ["a", "bb"]
    t = CTable.from_arrow(at)  # no max length: a utf8 column, as python-blosc2 makes
    assert t.schema.columns_by_name["s"].spec.kind == "utf8"
    assert list(t.s[:]) == ["a", "bb"]


def test_text_kinds_round_trip_with_python_blosc2s_arrow_types() -> None:
    schema = pa.schema(
        [
            pa.field("s", pa.string(), nullable=False),
            pa.field("b", pa.binary(), nullable=False),
            pa.field("d", pa.dictionary(pa.int32(), pa.string()), nullable=False),
        ]
    )
    at = pa.table(
        {
            "s": ["a", "", "c\x00"],
            "b": [b"a", b"", b"\x00"],
            "d": pa.array(["x", "y", "x"]).dictionary_encode(),
        }
    ).cast(schema)
    back = CTable.from_arrow(at).to_arrow()
    assert [f.type for f in back.schema] == [
        pa.large_string(),
        pa.large_binary(),
        pa.dictionary(pa.int32(), pa.string()),
    ]
    assert back.to_pylist() == at.to_pylist()


def test_persistent_import_keeps_column_cparams(tmp_path) -> None:
    at = pa.table({"x": np.arange(10.0), "y": np.arange(10)})
    path = tmp_path / "t.b2d"
    cp = {"codec": blosc2.Codec.ZSTD, "clevel": 5}
    t = CTable.from_arrow(at, urlpath=path, column_cparams={"x": cp})
    assert t._cols["x"].cparams.codec == blosc2.Codec.ZSTD
    t.close()
    np.testing.assert_array_equal(CTable.open(str(path)).x[:], np.arange(10.0))


def test_kinds_not_stored_are_named() -> None:
    fixed = pa.FixedSizeListArray.from_arrays(pa.array([1, 2, 3, 4]), 2)
    with pytest.raises(NotImplementedError, match="list"):  # lists of any length are stored
        CTable.from_arrow(pa.table({"x": fixed}))
    with pytest.raises(NotImplementedError, match="list items of Arrow type"):
        CTable.from_arrow(pa.table({"x": pa.array([[1.5]], type=pa.list_(pa.float16()))}))
    nested = pa.table({"n": pa.array([{"a": 1, "b": 2.0}])})  # flattened to n.a, n.b
    assert CTable.from_arrow(nested).col_names == ["n.a", "n.b"]  # dotted names: nested.py
    with pytest.raises(TypeError, match="No blosc2 spec"):
        CTable.from_arrow(pa.table({"x": pa.array([1.5], type=pa.float16())}))
    with pytest.raises(NotImplementedError, match="complex"):
        CTable(dataclasses.make_dataclass("C", [("c", complex, 0j)]), new_data=[(1j,)]).to_arrow()


@pytest.mark.parametrize("storage", [None, "mask", "sentinel"])
def test_arrow_nulls(storage: str | None) -> None:
    at = pa.table({"x": pa.array([1, None, 3]), "f": pa.array([None, 0.5, None])})
    try:
        t = CTable.from_arrow(at, null_storage=storage)
    except NotImplementedError as exc:  # where nullable columns are not stored yet
        assert "nullable" in str(exc)
        return
    assert t.x.is_null().tolist() == [False, True, False]
    assert t.f.is_null().tolist() == [True, False, True]
    assert t.to_arrow().to_pydict() == at.to_pydict()
    assert t.group_by("x").size().x[:].tolist() == [1, 3]  # the null key dropped


def test_bad_arguments() -> None:
    at = pa.table({"id": [1, 2], "s": ["abc", "abcdefghijk"]})
    with pytest.raises(TypeError, match="requires batches"):
        CTable.from_arrow(at.schema)
    with pytest.raises(TypeError, match="not both"):
        CTable.from_arrow(at, at.to_batches())
    with pytest.raises(ParamError, match="blosc2_batch_size"):
        CTable.from_arrow(at, blosc2_batch_size=0)
    with pytest.raises(ParamError, match="max_length"):
        CTable.from_arrow(at, string_max_length=5)
    with pytest.raises(ParamError, match="do not match the schema"):
        CTable.from_arrow(pa.schema([("id", pa.float64())]), at.to_batches())
    with pytest.raises(ParamError, match="batch_size"):
        list(_table().iter_arrow_batches(batch_size=0))
    with pytest.raises(KeyError, match="nope"):
        list(_table().iter_arrow_batches(columns=["nope"]))


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: b"not a parquet file at all",
        lambda raw: raw[: len(raw) // 2],
        lambda raw: raw[:-9] + b"\xff" * 9,
        lambda raw: raw[:4] + bytes(len(raw) - 8) + raw[-4:],
    ],
    ids=["garbage", "truncated", "footer-length", "zeroed-body"],
)
def test_hostile_parquet_is_a_format_error(tmp_path, damage) -> None:
    good = tmp_path / "good.parquet"
    _table(100).to_parquet(good)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(damage(good.read_bytes()))
    with pytest.raises((FormatError, NotImplementedError)):
        CTable.from_parquet(bad, string_max_length=8)


def test_pandas_round_trip() -> None:
    pytest.importorskip("pandas")
    t = _table()
    df = t.to_pandas()
    assert list(df.columns) == t.col_names
    assert df["s"].tolist() == t.s[:].tolist()
    back = CTable.from_pandas(df, Row)
    for name in t.col_names:
        np.testing.assert_array_equal(back[name][:], t[name][:])
    with pytest.raises(ParamError, match=r"missing columns \['i8'"):
        CTable.from_pandas(df[["u64"]], Row)
    with pytest.raises(ParamError, match=r"extra columns \['x'\]"):
        CTable.from_pandas(df.assign(x=1), Row)
