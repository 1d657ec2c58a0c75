"""CTable ``list`` columns (pyblosc2/ctable/listcol.py, arrow_types.py, arrow_root.py): rows
in memory and in ``.b2d``/``.b2z`` files, Arrow and Parquet both ways (list<struct> too),
unnamed-root ``list<struct>`` streams flattened to rows, and stored list columns that are
damaged or hostile refused with a FormatError naming the leaf and row."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.errors import FormatError, ParamError, ParamTypeError


@dataclasses.dataclass
class Product:
    code: str = pb.field(pb.string(max_length=8))
    qty: int = pb.field(pb.int32())
    tags: list[str] = pb.field(  # noqa: RUF009
        pb.list(pb.string(max_length=16), nullable=True, batch_rows=2)
    )


DATA = [("a", 1, ["x", "y"]), ("b", 2, []), ("c", 3, None), ("d", 4, ["z"])]


def test_rows_views_changes_and_compact() -> None:
    t = CTable(Product)
    t.append(DATA[0])
    t.extend(DATA[1:])
    assert t.tags[0] == ["x", "y"] and t.tags[1:4] == [[], None, ["z"]] and t[2].tags is None
    t.tags[2] = ["r", "s"]
    assert t.tags[2] == ["r", "s"]
    assert t.where(t.qty >= 2).tags[:] == [[], ["r", "s"], ["z"]]
    assert t.head(2).tags[:] == [["x", "y"], []]
    t.delete([1])
    t.compact()
    assert t.tags[:] == [["x", "y"], ["r", "s"], ["z"]]
    assert t.tags.is_list and not t.code.is_list
    assert "<list[string]>" in repr(t.tags) and "'x'" not in repr(t.tags)


def test_bad_cells_and_annotations_are_refused() -> None:
    t = CTable(Product)
    with pytest.raises(ParamTypeError, match=r"row 0.*list-like"):
        t.append(("a", 1, "not a list"))
    with pytest.raises(ParamError, match=r"row 0.*max_length"):
        t.append(("a", 1, ["x" * 17]))

    @dataclasses.dataclass
    class Bad:
        tags: str = pb.field(pb.list(pb.string()))

    with pytest.raises(TypeError, match="list spec"):
        CTable(Bad)

    @dataclasses.dataclass
    class Bare:
        tags: list = pb.field(pb.list(pb.int64()))  # noqa: RUF009

    with pytest.raises(TypeError, match=r"list\[T\]"):  # as python-blosc2
        CTable(Bare)


@pytest.mark.parametrize("form", ["b2d", "b2z"])
def test_files_reopen_change_and_save(tmp_path: Path, form: str) -> None:
    path = str(tmp_path / f"p.{form}")
    CTable(Product, new_data=DATA, urlpath=path, mode="w").close()
    assert CTable.open(path).tags[:] == [["x", "y"], [], None, ["z"]]
    loaded = CTable.load(path)
    loaded.tags[1] = ["changed"]
    loaded.save(str(tmp_path / f"s.{form}"))
    assert CTable.open(str(tmp_path / f"s.{form}")).tags[1] == ["changed"]
    assert os.path.exists(path)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5)),
        max_size=30,
    )
)
def test_round_trip_through_a_file(tmp_path_factory: Any, cells: list[Any]) -> None:
    @dataclasses.dataclass
    class R:
        v: list[int] = pb.field(pb.list(pb.int64(), nullable=True, batch_rows=4))  # noqa: RUF009

    path = str(tmp_path_factory.mktemp("l") / "t.b2d")
    CTable(R, new_data={"v": cells}, urlpath=path, mode="w").close()
    assert CTable.open(path).v[:] == cells


# -- hostile stored columns ---------------------------------------------------------------------
def _stored(tmp_path: Path) -> str:
    path = str(tmp_path / "t.b2d")
    CTable(Product, new_data=DATA, urlpath=path, mode="w").close()
    return path


def _replace_leaf(path: str, cells: list[Any], item: Any, validate: bool = True) -> None:
    leaf = os.path.join(path, "_cols", "tags.b2b")
    os.remove(leaf)
    la = pb.ListArray(item_spec=item, nullable=True, urlpath=leaf, mode="w", contiguous=True)
    la.extend(cells, validate=validate)
    la.close()


def test_more_stored_rows_than_the_table_is_refused(tmp_path: Path) -> None:
    path = _stored(tmp_path)
    _replace_leaf(path, [["a"]] * 9, pb.string(max_length=16))
    with pytest.raises(FormatError, match=r"_cols/tags rows.*at most 4"):
        CTable.open(path)


def test_another_item_spec_is_refused(tmp_path: Path) -> None:
    path = _stored(tmp_path)
    _replace_leaf(path, [[1], [2], None, [3]], pb.int64())
    with pytest.raises(FormatError, match=r"_cols/tags item spec"):
        CTable.open(path)


def test_a_stored_item_over_its_spec_is_refused_naming_the_row(tmp_path: Path) -> None:
    path = _stored(tmp_path)
    _replace_leaf(path, [["a"], ["b"], ["x" * 40]], pb.string(max_length=16), validate=False)
    with pytest.raises(FormatError, match=r"_cols/tags row 2.*max_length"):
        CTable.open(path)


def test_a_leaf_that_is_not_a_list_array_is_refused(tmp_path: Path) -> None:
    path = _stored(tmp_path)
    leaf = os.path.join(path, "_cols", "tags.b2b")
    os.remove(leaf)
    ba = pb.BatchArray(urlpath=leaf, mode="w", contiguous=True)
    ba.append(["a", "b"])
    del ba
    with pytest.raises(FormatError, match=r"_cols/tags leaf.*ListArray"):
        CTable.open(path)


# -- Arrow and Parquet ----------------------------------------------------------------------------
def test_arrow_and_parquet_lists_both_ways(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    t = CTable(Product, new_data=DATA)
    arrow = t.to_arrow()
    assert arrow.column("tags").to_pylist() == [["x", "y"], [], None, ["z"]]
    back = CTable.from_arrow(arrow.schema, arrow.to_batches(), blosc2_batch_size=3)
    assert back.tags[:] == [["x", "y"], [], None, ["z"]]
    assert back._column_defs["tags"].spec.batch_rows == 3

    item = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
    at = pa.table({"items": pa.array([[{"a": 1, "b": "x"}], None, []], type=pa.list_(item))})
    pq.write_table(at, tmp_path / "in.parquet")
    t2 = CTable.from_parquet(tmp_path / "in.parquet")
    assert t2["items"][:] == [[{"a": 1, "b": "x"}], None, []]
    t2.to_parquet(tmp_path / "out.parquet")
    rt = pq.read_table(tmp_path / "out.parquet")
    assert rt.schema == at.schema and rt["items"].to_pylist() == at["items"].to_pylist()


def test_an_unnamed_root_list_of_structs_imports_its_elements_as_rows(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    item = pa.struct([pa.field("fare", pa.float64()), pa.field("company", pa.string())])
    root = pa.array([[{"fare": 1.5, "company": "A"}, {"fare": 2.5, "company": "B"}], None, []])
    path = tmp_path / "root.parquet"
    pq.write_table(pa.table({"": root.cast(pa.list_(item))}), path)
    assert CTable._detect_unnamed_root_list_struct(pa, pq.read_schema(path))
    t = CTable.from_parquet(path)
    assert t.col_names == ["fare", "company"] and t.fare[:].tolist() == [1.5, 2.5]
    assert len(CTable.from_parquet(path, max_rows=1)) == 1
    kept = CTable.from_parquet(path, separate_nested_cols=False)  # the column renamed "root"
    assert kept.col_names == ["root"] and len(kept) == 3
    assert kept.root[0] == [{"fare": 1.5, "company": "A"}, {"fare": 2.5, "company": "B"}]
    flat = CTable.from_arrow(pq.read_table(path), separate_nested_cols=True)
    assert flat.company[:].tolist() == ["A", "B"]
    assert not CTable._detect_unnamed_root_list_struct(pa, pa.schema([("x", pa.list_(item))]))


# -- a writer killed before close ------------------------------------------------------------------
_KILLED = """
import os, signal, sys
import pyblosc2 as pb
t = pb.CTable.open(sys.argv[1], mode="a")
t.extend([("k", 9, ["killed"])])
if sys.argv[2] == "flush":
    t._flush_varlen_columns()
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("flush", ["no", "flush"])
def test_a_list_table_killed_before_close_keeps_its_lists(tmp_path: Path, flush: str) -> None:
    """List columns are written in their layout at close or a flush, as text columns are;
    until then every write goes to the table's change log (varlog.py), so a writer killed
    before either loses nothing (once: open refused the table whole)."""
    import signal
    import sys

    from tests.bounded import run_child

    path = _stored(tmp_path)
    script = tmp_path / "child.py"
    script.write_text(_KILLED)
    env = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
    done = run_child([sys.executable, str(script), path, flush], "a CTable writer", env=env)
    assert done.returncode == -signal.SIGKILL
    want = [["x", "y"], [], None, ["z"], ["killed"]]
    assert CTable.open(path).tags[:] == want
    CTable.open(path, mode="a").close()  # the log's rows go into the layout
    assert not os.path.exists(os.path.join(path, "_varlog.b2f"))
    assert CTable.open(path).tags[:] == want


def test_flat_nested_metadata_is_read_and_real_nesting_named(tmp_path: Path) -> None:
    """python-blosc2 records the names of every Arrow import as 'nested' metadata; a flat
    record (each name its own, no dots) is read, a real nesting is NotImplementedError."""
    path = _stored(tmp_path)
    t = CTable.open(path, mode="a")
    doc = t._storage.load_schema()
    names = {n: n for n in ("code", "qty", "tags")}
    t._storage.replace_schema(
        {**doc, "metadata": {"nested": {"version": 1, "logical_to_physical": names}}}
    )
    t._storage.close()
    assert CTable.open(path).tags[:] == [["x", "y"], [], None, ["z"]]
    t = CTable.open(path, mode="a")
    nested = {
        "version": 1,
        "logical_to_physical": {**names, "p.a": "p.a"},
        "reconstruct_rows": True,
    }
    t._storage.replace_schema({**doc, "metadata": {"nested": nested}})
    t._storage.close()
    with pytest.raises(NotImplementedError, match="nested"):
        CTable.open(path)
