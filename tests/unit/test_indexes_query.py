"""NDArray indexes (pyblosc2.indexes): every kind answers a filter as a scan does, the
planner uses an index only where it prunes, writes make indexes stale, append keeps them
current, and the handle API (index(), indexes, drop/rebuild/compact)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2 import IndexKind
from pyblosc2.indexes.query import plan

KINDS = list(IndexKind)


def e_used(expr: pb.LazyExpr) -> bool:
    return bool(expr.will_use_index())


def _both(expr: pb.LazyExpr) -> tuple[np.ndarray, np.ndarray]:
    return expr.compute()[:], expr.compute(_use_index=False)[:]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_each_kind_answers_a_range_as_the_scan(kind: IndexKind) -> None:
    data = np.arange(20_000, dtype=np.int64)
    a = pb.asarray(data, chunks=(1000,), blocks=(200,))
    d = a.create_index(kind=kind)
    assert d["kind"] == kind.value and d["target"] == {"source": "field", "field": None}
    e = ((a >= 12_000) & (a < 12_500)).where(a)
    assert e.will_use_index()
    info = e.explain()
    assert info["candidate_units"] < info["total_units"]
    got, scan = _both(e)
    np.testing.assert_array_equal(got, scan)
    np.testing.assert_array_equal(got, data[12_000:12_500])


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_shuffled_floats_with_nans_match_the_scan(kind: IndexKind) -> None:
    rng = np.random.default_rng(3)
    data = rng.normal(size=9_000)
    data[rng.integers(0, 9_000, 300)] = np.nan
    data[4000:4500] = np.nan  # whole blocks of NaN
    a = pb.asarray(data, chunks=(1000,), blocks=(250,))
    a.create_index(kind=kind)
    for text in ("(o0 > 0.5) & (o0 <= 0.75)", "o0 < -2.5", "(o0 > 2) | (o0 < -2)"):
        e = pb.lazyexpr(text, {"o0": a}).where(a)
        got, scan = _both(e)
        np.testing.assert_array_equal(got, scan)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_field_and_expression_targets(kind: IndexKind) -> None:
    dt = np.dtype([("id", np.int64), ("x", np.float64)])
    s = np.zeros(12_000, dtype=dt)
    s["id"] = np.arange(12_000)
    s["x"] = np.linspace(-6, 6, 12_000)
    a = pb.asarray(s, chunks=(2000,), blocks=(500,))
    a.create_index("id", kind=kind)
    d = a.create_index(expression="abs(x)", kind=kind)
    assert d["target"]["expression_key"] == "abs(x)" and d["token"].startswith("__expr__")
    e = pb.lazyexpr("(id >= 480) & (id < 485)", a.fields).where(a)
    assert e.will_use_index()
    got, scan = _both(e)
    np.testing.assert_array_equal(got, scan)
    assert len(got) == 5
    e2 = pb.lazyexpr("abs(x) < 0.01", a.fields).where(a)
    got, scan = _both(e2)
    np.testing.assert_array_equal(got, scan)
    assert {i.name for i in a.indexes} == {"id", "abs(x)"}


def test_strings_and_equality_through_partial() -> None:
    words = np.array([f"w{i % 997:04d}" for i in range(5000)])
    a = pb.asarray(words, chunks=(1000,), blocks=(100,))
    a.create_index(kind=IndexKind.PARTIAL)
    got, scan = _both(a[a == "w0042"])
    np.testing.assert_array_equal(got, scan)
    assert len(got) == 5 and e_used(a[a == "w0042"])


def test_a_bucket_that_prunes_nothing_is_declined() -> None:
    data = np.random.default_rng(0).permutation(60_000)
    a = pb.asarray(data, chunks=(6000,), blocks=(1000,))
    a.create_index(kind=IndexKind.BUCKET)
    wide = ((a >= 10_000) & (a < 40_000)).where(a)
    assert not wide.will_use_index()
    point = ((a >= 123) & (a < 124)).where(a)
    assert point.will_use_index()
    np.testing.assert_array_equal(point.compute()[:], [123])


def test_no_index_and_or_with_an_unindexed_term_scan() -> None:
    s = np.zeros(1000, dtype=[("a", "i4"), ("b", "i4")])
    s["a"] = np.arange(1000)
    s["b"] = np.arange(1000)[::-1]
    a = pb.asarray(s, chunks=(100,), blocks=(20,))
    assert not pb.lazyexpr("a < 5", a.fields).where(a).will_use_index()
    a.create_index("a", kind=IndexKind.FULL)
    assert not pb.lazyexpr("(a < 5) | (b < 5)", a.fields).where(a).will_use_index()
    mixed = pb.lazyexpr("(a < 50) & (b > 960)", a.fields).where(a)
    assert mixed.will_use_index()  # the unindexed term is checked on the candidates
    got, scan = _both(mixed)
    np.testing.assert_array_equal(got, scan)
    assert len(got) == 39  # a < 39


def test_writes_make_an_index_stale_and_rebuild_restores_it() -> None:
    a = pb.asarray(np.arange(5000), chunks=(500,), blocks=(100,))
    a.create_index(kind=IndexKind.FULL)
    e = ((a >= 10) & (a < 20)).where(a)
    assert e.will_use_index()
    a[15] = 10_000
    assert a.index().stale and not e.will_use_index()
    assert len(e.compute()[:]) == 9  # the scan, not the stale index
    idx = a.index().rebuild()
    assert not idx.stale and e.will_use_index() and len(e.compute()[:]) == 9
    a.resize((6000,))
    assert a.index().stale


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.value)
def test_append_keeps_the_index_current(kind: IndexKind, tmp_path: Path) -> None:
    a = pb.asarray(
        np.arange(3000), urlpath=str(tmp_path / "a.b2nd"), mode="w", chunks=(500,), blocks=(100,)
    )
    a.create_index(kind=kind)
    a.append(np.arange(3000, 3500))
    assert not a.index().stale
    e = ((a >= 3200) & (a < 3210)).where(a)
    assert e.will_use_index()
    np.testing.assert_array_equal(e.compute()[:], np.arange(3200, 3210))
    if kind is IndexKind.FULL:
        assert len(a.index()["full"]["runs"]) == 1
        assert a.compact_index()["full"]["runs"] == []
        np.testing.assert_array_equal(e.compute()[:], np.arange(3200, 3210))


def test_persistent_index_files_survive_reopen_and_drop_removes_them(tmp_path: Path) -> None:
    path = tmp_path / "p.b2nd"
    a = pb.asarray(np.arange(4000), urlpath=str(path), mode="w", chunks=(1000,), blocks=(100,))
    a.create_index(kind=IndexKind.PARTIAL)
    files = sorted(p.name for p in tmp_path.glob("p.__index__*"))
    assert "p.__index__.partial.values.b2nd" in files and len(files) == 8
    b = pb.open(str(path), mode="a")
    idx = b.index()
    assert idx.persistent and idx.kind is IndexKind.PARTIAL and idx.nbytes > 0 < idx.cbytes
    np.testing.assert_array_equal(b[(b > 10) & (b < 13)].compute()[:], [11, 12])
    idx.drop()
    assert b.indexes == [] and not list(tmp_path.glob("p.__index__*"))
    with pytest.raises(KeyError):
        _ = idx.kind


def test_create_index_refuses_bad_arguments() -> None:
    a = pb.asarray(np.arange(10))
    with pytest.raises(TypeError):
        a.create_index(kind="full")
    with pytest.raises(ValueError, match="optlevel"):
        a.create_index(kind=IndexKind.FULL, optlevel=12)
    with pytest.raises(ValueError, match="1-D"):
        pb.asarray(np.zeros((3, 3))).create_index(kind=IndexKind.FULL)
    with pytest.raises(TypeError):
        pb.asarray(np.zeros(3, np.complex128)).create_index(kind=IndexKind.FULL)
    with pytest.raises(TypeError, match="unexpected"):
        a.create_index(kind=IndexKind.FULL, colour=1)
    with pytest.raises(KeyError):
        a.index()


def test_in_memory_index_goes_with_its_array() -> None:
    from pyblosc2.indexes import store

    a = pb.asarray(np.arange(100))
    a.create_index(kind=IndexKind.FULL)
    key = id(a)
    assert key in store._MEMORY
    del a
    assert key not in store._MEMORY and not any(k[0] == key for k in store._HANDLES)


_ops = st.sampled_from(["<", "<=", ">", ">=", "=="])


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.integers(-50, 50), min_size=1, max_size=400),
    kind=st.sampled_from(KINDS),
    terms=st.lists(st.tuples(_ops, st.integers(-60, 60)), min_size=1, max_size=3),
    joiner=st.sampled_from([" & ", " | "]),
    dtype=st.sampled_from(["i2", "u1", "f4", "f8"]),
    optlevel=st.integers(0, 9),
)
def test_indexed_filter_equals_unindexed(data, kind, terms, joiner, dtype, optlevel) -> None:
    values = np.asarray(data).astype(dtype) if dtype != "u1" else np.abs(data).astype(dtype)
    a = pb.asarray(values, chunks=(37,), blocks=(8,))
    a.create_index(kind=kind, optlevel=optlevel)
    text = joiner.join(f"(o0 {op} {v})" for op, v in terms)
    e = pb.lazyexpr(text, {"o0": a}).where(a)
    got, scan = _both(e)
    np.testing.assert_array_equal(got, scan)
    p = plan(e.expression, e.operands, a)
    if p.mask is not None:  # the rows an index allows are a superset of the matches
        truth = pb.lazyexpr(text, {"o0": values})[:]
        assert not np.any(truth & ~p.mask)


def test_a_range_on_one_target_is_asked_of_its_index_whole() -> None:
    """``(id >= lo) & (id < hi)`` is one interval for a BUCKET (each half alone would allow
    nearly every bucket of shuffled data)."""
    data = np.random.default_rng(1).permutation(100_000)
    a = pb.asarray(data, chunks=(10_000,), blocks=(2_000,))
    a.create_index(kind=IndexKind.BUCKET)
    e = ((a >= 12_345) & (a < 12_346)).where(a)
    assert e.will_use_index() and e.explain()["candidate_units"] <= 16
    np.testing.assert_array_equal(e.compute()[:], [12_345])


def test_a_filter_over_several_arrays_uses_the_index_it_has() -> None:
    n = 10_000
    tips = np.zeros(n, np.float32)
    km = np.zeros(n, np.float32)
    tips[[5, 900, 7000]] = 150
    km[[5, 7000]] = 3
    t = pb.asarray(tips, chunks=(2000,), blocks=(400,))
    k = pb.asarray(km, chunks=(2000,), blocks=(400,))
    t.create_index(kind=IndexKind.FULL)
    e = pb.lazyexpr("(tips > 100) & (km > 0)", {"tips": t, "km": k}).where(t)
    assert e.will_use_index()
    got, scan = _both(e)
    np.testing.assert_array_equal(got, scan)
    np.testing.assert_array_equal(got, [150, 150])


@pytest.mark.parametrize("kind", [IndexKind.BUCKET, IndexKind.PARTIAL, IndexKind.FULL])
def test_a_lookup_reads_no_payload_piece_whole(
    kind: IndexKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyblosc2.indexes import store

    a = pb.asarray(
        np.random.default_rng(2).permutation(40_000),
        urlpath=str(tmp_path / "w.b2nd"),
        mode="w",
        chunks=(4000,),
        blocks=(1000,),
    )
    a.create_index(kind=kind)
    a.append(np.arange(40_000, 40_100))  # a FULL index gets a run: read by windows too
    real = store.load_whole

    def guarded(array: Any, token: str, category: str, name: str, path: Any) -> Any:
        assert category.endswith(("_nav", "summary")), f"{category}.{name} read whole"
        return real(array, token, category, name, path)

    monkeypatch.setattr(store, "load_whole", guarded)
    e = ((a >= 39_990) & (a < 40_010)).where(a)
    np.testing.assert_array_equal(np.sort(e.compute()[:]), np.arange(39_990, 40_010))


@pytest.mark.parametrize("kind", [IndexKind.SUMMARY, IndexKind.BUCKET, IndexKind.PARTIAL])
def test_streaming_builds_never_read_all_the_values(
    kind: IndexKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyblosc2.indexes import target

    a = pb.asarray(np.arange(30_000), chunks=(3000,), blocks=(500,))

    def boom(*args: object) -> None:
        raise AssertionError("all the values read at once")

    monkeypatch.setattr(target, "values_for_target", boom)
    assert a.create_index(kind=kind)["ooc"] is True
    with pytest.raises(AssertionError, match="at once"):
        a.create_index(kind=kind, build="memory")


def test_a_filter_of_an_expression_of_the_array() -> None:
    a = pb.asarray(np.arange(10_000), chunks=(1000,), blocks=(100,))
    a.create_index(kind=IndexKind.FULL)
    e = ((a >= 10) & (a < 15)).where(a + 1)
    assert e.will_use_index()
    for _ in range(2):  # the second time too (the result cache holds positions of arrays)
        np.testing.assert_array_equal(e.compute()[:], np.arange(11, 16))


@pytest.mark.parametrize("kind", [IndexKind.BUCKET, IndexKind.PARTIAL])
def test_chunk_local_builds_sort_chunks_on_a_thread_pool(
    kind: IndexKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyblosc2.indexes import build

    seen: list[int] = []
    real = build.ThreadPoolExecutor

    def spy(max_workers: int) -> Any:
        seen.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(build, "ThreadPoolExecutor", spy)
    data = np.random.default_rng(4).permutation(20_000)
    a = pb.asarray(data, chunks=(1000,), blocks=(250,))
    monkeypatch.setenv("BLOSC2_INDEX_BUILD_THREADS", "3")
    a.create_index(kind=kind)
    monkeypatch.delenv("BLOSC2_INDEX_BUILD_THREADS")
    a.create_index(kind=kind, cparams=pb.CParams(nthreads=2))
    assert seen == [3, 2]
    e = ((a >= 100) & (a < 110)).where(a)
    np.testing.assert_array_equal(np.sort(e.compute()[:]), np.arange(100, 110))


def test_spans_read_only_the_blocks_of_candidates_cut_at_chunk_ends() -> None:
    from pyblosc2.indexes.query import _spans

    m = np.zeros(100, bool)
    m[[3, 4, 60, 99]] = True
    m[25:36] = True
    assert _spans(m, 10, 30) == [(3, 5), (25, 30), (30, 36), (60, 61), (99, 100)]
    assert _spans(np.zeros(0, bool), 10, 30) == []
