"""CTable indexes (ctable/indexes.py, indexcat.py, indexplan.py): building, the catalog,
queries through an index equal to the scan (hypothesis against numpy), staleness, and
damaged or hostile catalogs refused before anything is sized from them."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.errors import FormatError, ParamError

KINDS = ["summary", "bucket", "partial", "full", "opsi"]


@dataclasses.dataclass
class Row:
    id: int = pb.field(pb.int32())
    value: float = pb.field(pb.float64())
    category: int = pb.field(pb.int32())


def _table(n: int = 300, path: Path | None = None) -> Any:
    t = CTable(Row, urlpath=None if path is None else str(path), mode="w")
    ids = np.arange(n, dtype=np.int32)
    t.extend({"id": ids, "value": ids * 1.5, "category": (ids % 5).astype(np.int32)})
    return t


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_a_query_through_each_kind_finds_the_scans_rows(
    tmp_path: Path, kind: str, persistent: bool
) -> None:
    t = _table(path=tmp_path / "t.b2d" if persistent else None)
    t.create_index("id", kind=kind)
    cond = (t["id"] > 250) | ((t["id"] >= 10) & (t["id"] < 13))
    assert t._index_condition(cond) is not None  # the index answers it
    assert t.where(cond)["id"][:].tolist() == [10, 11, 12, *range(251, 300)]


def test_an_expression_index_is_matched_by_its_canonical_form(tmp_path: Path) -> None:
    t = _table(path=tmp_path / "t.b2d")
    idx = t.create_index(expression="value * category", kind=pb.IndexKind.FULL, name="vc")
    assert (idx.kind, idx.name, idx.col_name) == ("full", "vc", None)
    assert t.index(expression="value * category").name == "vc"
    cond = (t["value"] * t["category"]) >= 1000
    assert t._index_condition(cond) is not None
    ids = np.arange(300)
    expected = ids[(ids * 1.5) * (ids % 5) >= 1000]
    assert t.where(cond)["id"][:].tolist() == expected.tolist()
    t.close()
    reopened = CTable.open(str(tmp_path / "t.b2d"))
    assert (
        reopened.where(cond.expression and (reopened["value"] * reopened["category"]) >= 1000)[
            "id"
        ][:].tolist()
        == expected.tolist()
    )


def test_writes_make_indexes_stale_and_a_stale_index_is_not_read() -> None:
    t = _table(50)
    t.create_index("id", kind="full")
    t["id"][3] = 1000  # in place: the index says 3 at row 3
    assert t.index("id").stale
    assert t._index_condition(t["id"] > 900) is None
    assert t.where(t["id"] > 900)["id"][:].tolist() == [1000]
    assert not t.rebuild_index("id").stale
    assert t._index_condition(t["id"] > 900) is not None
    assert t.where(t["id"] > 900)["id"][:].tolist() == [1000]


def test_an_index_not_flagged_stale_but_of_an_older_epoch_is_not_read() -> None:
    """Another writer that bumped the value epoch without flagging the entry: the epoch
    the index was built at no longer matches, so it is not trusted."""
    t = _table(50)
    t.create_index("id", kind="full")
    t._storage.bump_value_epoch()
    t._cols["id"][0] = 77  # a write behind the table's back
    assert not t.index("id").stale
    assert t._index_condition(t["id"] == 77) is None
    assert t.where(t["id"] == 77)["id"][:].tolist() == [77]


def test_deletes_keep_the_index_and_its_rows_are_checked_against_the_live_ones() -> None:
    t = _table(50)
    t.create_index("id", kind="partial")
    t.delete([45, 46])
    assert not t.index("id").stale
    assert t._storage.get_epoch_counters()[1] >= 1
    assert t.where(t["id"] > 40)["id"][:].tolist() == [41, 42, 43, 44, 47, 48, 49]


def test_appends_beyond_an_index_are_never_missed() -> None:
    t = _table(50)
    t.create_index("id", kind="bucket")
    t.append([5000, 1.0, 1])
    assert t.where(t["id"] > 4000)["id"][:].tolist() == [5000]


def test_catalog_api(tmp_path: Path) -> None:
    path = tmp_path / "t.b2d"
    t = _table(40, path)
    t.create_index("id")
    t.create_index("category", kind="summary")
    with pytest.raises(ValueError, match="Index already exists"):
        t.create_index("id")
    assert sorted(i.col_name for i in t.indexes) == ["category", "id"]
    assert any((path / "_indexes" / "id").glob("*.b2nd"))
    view = t.where(t["id"] > 5)
    for op in ("create_index", "drop_index", "rebuild_index", "compact_index"):
        with pytest.raises(ValueError, match="view"):
            getattr(view, op)("id")
    t.create_index(expression="id * 2", kind="full")
    t.rename_column("id", "newid")  # the expression index reading "id" goes
    assert sorted(i.col_name for i in t.indexes) == ["category", "newid"]
    assert not (path / "_indexes" / "id").exists()
    t.drop_column("newid")
    assert [i.col_name for i in t.indexes] == ["category"]
    t.drop_index("category")
    assert t.indexes == [] and not (path / "_indexes" / "category").exists()
    with pytest.raises(KeyError, match="No index found"):
        t.drop_index("category")


def test_bad_index_arguments() -> None:
    t = _table(10)
    with pytest.raises(ParamError, match="granularity must be one of"):
        t.create_index("id", kind="summary", granularity="bogus")
    with pytest.raises(ParamError, match=r"only supported for kind=IndexKind\.SUMMARY"):
        t.create_index("id", kind="bucket", granularity="block")


@pytest.mark.parametrize("granularity", ["chunk", "block"])
def test_summary_granularity(granularity: str) -> None:
    @dataclasses.dataclass
    class G:
        v: float = pb.field(pb.float64(), chunks=(1000,), blocks=(250,))

    t = CTable(G, new_data=[(float(x),) for x in range(5000)])
    t.create_index("v", kind="summary", granularity=granularity)
    assert list(t._get_index_catalog()["v"]["levels"]) == [granularity]
    assert t._index_condition(t.v > 4990) is not None
    assert t.where(t.v > 4990).v[:].tolist() == [float(x) for x in range(4991, 5000)]
    t.rebuild_index("v")
    assert list(t._get_index_catalog()["v"]["levels"]) == [granularity]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    data=st.lists(st.integers(-50, 50), min_size=1, max_size=400),
    kind=st.sampled_from(KINDS),
    lo=st.integers(-60, 60),
    width=st.integers(0, 40),
    other=st.integers(-60, 60),
    deleted=st.lists(st.integers(0, 399), max_size=20),
)
def test_index_queries_equal_numpy(
    data: list[int], kind: str, lo: int, width: int, other: int, deleted: list[int]
) -> None:
    @dataclasses.dataclass
    class R:
        a: int = pb.field(pb.int64(), chunks=(64,), blocks=(16,))
        b: float = pb.field(pb.float64(), chunks=(64,), blocks=(16,))

    a = np.asarray(data, dtype=np.int64)
    b = a * 0.5
    t = CTable(R, expected_size=len(a))
    t.extend({"a": a, "b": b})
    t.create_index("a", kind=kind)
    gone = sorted({i for i in deleted if i < len(a)})
    if gone:
        t.delete(gone)
    live = np.setdiff1d(np.arange(len(a)), gone)
    cond = ((t["a"] >= lo) & (t["a"] < lo + width)) | (t["a"] == other) | (t["b"] > 24.0)
    want = ((a >= lo) & (a < lo + width)) | (a == other) | (b > 24.0)
    assert t.where(cond)["a"][:].tolist() == a[live][want[live]].tolist()


# -- damaged and hostile catalogs ----------------------------------------------------------
HOSTILE = {
    "not a map": ["nope"],
    "no token": {"kind": "bucket"},
    "bad kind": {"kind": "btree", "token": "id"},
    "no payload": {"kind": "full", "token": "id"},
    "stale not bool": {"kind": "summary", "token": "id", "stale": "no"},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_malformed_catalog_entry_is_refused(case: str) -> None:
    t = _table(20)
    t._storage.save_index_catalog({"id": HOSTILE[case]})
    with pytest.raises(FormatError, match="Malformed index metadata"):
        t.where(t["id"] > 5)


def _stored_entry(tmp_path: Path, kind: str = "full") -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "t.b2d"
    t = _table(300, path)
    t.create_index("id", kind=kind)
    t.close()
    return path, CTable.open(str(path))._storage.load_index_catalog()["id"]


def _with_entry(path: Path, entry: dict[str, Any]) -> Any:
    t = CTable.open(str(path), mode="a")
    t._storage.save_index_catalog({"id": entry})
    return t


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("l1_path", "../../_cols/id.b2nd"),  # a file outside the index's directory
        ("values_path", "/etc/passwd"),
        ("sidecar_chunk_len", 0),
        ("sidecar_block_len", -1),
        ("runs", [{"id": 0, "length": 1 << 40}]),
    ],
)
def test_a_hostile_full_descriptor_is_refused(tmp_path: Path, field: str, value: Any) -> None:
    path, entry = _stored_entry(tmp_path)
    entry["full"][field] = value
    t = _with_entry(path, entry)
    with pytest.raises(FormatError):
        t.where(t["id"] > 250)


def test_a_huge_row_count_is_never_allocated(tmp_path: Path) -> None:
    path, entry = _stored_entry(tmp_path, "summary")
    entry["shape"] = [1 << 60]
    entry["levels"]["block"]["segment_len"] = 1 << 40
    entry["levels"]["block"]["nsegments"] = 1 << 20
    t = _with_entry(path, entry)
    assert t._index_condition(t["id"] > 250) is None  # beyond what an index may cover
    assert len(t.where(t["id"] > 250)) == 49


def test_a_sidecar_of_the_wrong_length_or_dtype_is_refused(tmp_path: Path) -> None:
    path, _ = _stored_entry(tmp_path)
    values = path / "_indexes" / "id" / "full.values.b2nd"
    pb.asarray(np.arange(7, dtype=np.int32), urlpath=str(values), mode="w")
    t = CTable.open(str(path))
    with pytest.raises(FormatError, match="length"):
        t.where(t["id"] > 250)
    pb.asarray(np.arange(300, dtype=np.float64), urlpath=str(values), mode="w")
    t2 = CTable.open(str(path))
    with pytest.raises(FormatError, match="dtype"):
        t2.where(t2["id"] > 250)


def test_a_descriptor_dtype_other_than_the_columns_is_refused(tmp_path: Path) -> None:
    path, entry = _stored_entry(tmp_path, "summary")
    entry["dtype"] = "<f8"
    t = _with_entry(path, entry)
    with pytest.raises(FormatError):
        t.where(t["id"] > 250)


def test_missing_sidecars_are_refused(tmp_path: Path) -> None:
    path, _ = _stored_entry(tmp_path)
    for f in (path / "_indexes" / "id").glob("full.positions.b2nd"):
        os.remove(f)
    t = CTable.open(str(path))
    with pytest.raises(ValueError, match="sidecar"):
        t.where(t["id"] > 250)


# -- summaries: null-aware, min/max --------------------------------------------------------
@pytest.mark.parametrize(
    "spec",
    [pb.int64(null_storage="mask"), pb.int64(nullable=True, null_value=-1)],
    ids=["mask", "sentinel"],
)
def test_min_max_from_null_aware_summaries(tmp_path: Path, spec: Any) -> None:
    R = dataclasses.make_dataclass("R", [("a", int, pb.field(spec))])
    vals = [None if i % 7 == 0 else (i * 3) % 977 + 5 for i in range(5000)]
    if getattr(spec, "null_value", None) is not None:
        vals = [-1 if v is None else v for v in vals]
    t = CTable(R, urlpath=str(tmp_path / "t.b2d"), mode="w", expected_size=5000)
    t.extend([(v,) for v in vals])
    t.create_index("a", kind="summary")
    assert t._get_index_catalog()["a"]["null_aware"] is True
    live = [v for v in vals if v not in (None, -1)]
    assert t["a"]._index_summary_minmax("min") == min(live) == 5
    assert t["a"]._index_summary_minmax("max") == max(live)
    t.delete(3)  # a hole: the summaries no longer describe the live rows
    assert t["a"]._index_summary_minmax("min") is NotImplemented
    # a null-aware summary is not asked for a term a null could satisfy
    assert len(t.where("a < 10")) == sum(1 for i, v in enumerate(vals) if i != 3 and v in range(10))


def test_null_aware_summaries_flag_all_null_segments() -> None:
    from pyblosc2.indexing import FLAG_ALL_NULL, _compute_segment_summaries

    s = _compute_segment_summaries(
        np.array([-1, 7, 3, -1, 9, 9]), np.int64, 3, np.array([0, 1, 1, 0, 0, 0], bool)
    )
    assert s["min"].tolist() == [3, 0] and s["max"].tolist() == [7, 0]
    assert s["flags"][1] & FLAG_ALL_NULL and not s["flags"][0] & FLAG_ALL_NULL


@pytest.mark.parametrize("kind", ["utf8", "dictionary"])
def test_text_columns_are_indexed_by_rank(tmp_path: Path, kind: str) -> None:
    spec = pb.utf8() if kind == "utf8" else pb.dictionary()
    R = dataclasses.make_dataclass("R", [("c", str, pb.field(spec))])
    t = CTable(R, urlpath=str(tmp_path / "t.b2d"), mode="w")
    t.extend({"c": [f"v{i % 50:03d}" for i in range(2000)]})
    with pytest.raises(ValueError, match=f"{kind} column.*kind='full'"):
        t.create_index("c", kind="bucket")
    d = t.create_index("c").descriptor
    assert d["kind"] == "full" and ("dict_rank" in d["full"] or "utf8_rank" in d["full"])
    assert len(t[t["c"] == "v007"]) == 40


def test_an_index_in_a_b2z_is_read_in_place(tmp_path: Path) -> None:
    path = str(tmp_path / "t.b2z")
    _table(2000).to_b2z(path)
    with CTable.open(path, mode="a") as w:
        w.create_index("id", kind="partial")
    r = CTable.open(path)
    assert r._index_condition(r["id"] > 1990) is not None
    assert r.where(r["id"] > 1990)["id"][:].tolist() == list(range(1991, 2000))


@pytest.mark.parametrize("kind", ["utf8", "dictionary"])
def test_a_rank_index_answers_equality(tmp_path: Path, kind: str) -> None:
    spec = pb.utf8() if kind == "utf8" else pb.dictionary()
    R = dataclasses.make_dataclass("R", [("c", str, pb.field(spec))])
    values = ["pear", "apple", "cherry", "apple", "banana", "apple"]
    t = CTable(R, urlpath=str(tmp_path / "t.b2d"), mode="w")
    t.extend({"c": values})
    t.delete(0)
    t.create_index("c")
    m = t["c"]._dictionary_index_mask("apple")
    assert np.flatnonzero(m).tolist() == [1, 3, 5]
    assert not t["c"]._dictionary_index_mask("absent").any()
    t.append({"c": "apple"})
    assert t["c"]._dictionary_index_mask("apple") is None  # stale


@pytest.mark.parametrize("kind", KINDS)
def test_an_index_whose_rows_are_in_most_blocks_is_not_read_through(kind: str) -> None:
    @dataclasses.dataclass
    class B:
        a: int = pb.field(pb.int64(), chunks=(1024,), blocks=(128,))

    n = 128 * 64
    scattered = np.random.default_rng(1).permutation(n)
    t = CTable(B, expected_size=n)
    t.extend({"a": scattered})
    t.create_index("a", kind=kind)
    cond = (t["a"] >= 100) & (t["a"] < 400)  # 300 rows over most of the 64 blocks
    assert t._index_condition(cond) is None
    assert sorted(t.where(cond)["a"][:].tolist()) == list(range(100, 400))
    clustered = CTable(B, expected_size=n)
    clustered.extend({"a": np.arange(n)})
    clustered.create_index("a", kind=kind)
    cond = (clustered["a"] >= 100) & (clustered["a"] < 400)
    assert clustered._index_condition(cond) is not None
    assert clustered.where(cond)["a"][:].tolist() == list(range(100, 400))
