"""CTable questions (pyblosc2.ctable.column, colstats, views, sorting, display): columns by
logical row, lazy-expression conditions, string conditions, views and their rows, take and
slice, sort_by, aggregates, describe/cov; checked against NumPy models of the same rows, and
against python-blosc2 4.14.1 running the same questions on the same table."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.errors import BoundsError, ParamError, ParamTypeError


@dataclasses.dataclass
class Row:
    id: int = pb.field(pb.int64(ge=0), default=0)
    score: float = pb.field(pb.float64(), default=0.0)
    ok: bool = pb.field(pb.bool(), default=True)
    label: str = pb.field(pb.string(max_length=8), default="")


N = 40
DELETED = [0, 3, 4, 17, N - 1]


def _table(n: int = N, deleted: list[int] | None = None, capacity: int | None = None) -> CTable:
    t = CTable(Row, expected_size=capacity)
    ids = np.arange(n)
    t.extend(
        {
            "id": ids,
            "score": (ids % 7) * 1.5,
            "ok": ids % 3 != 0,
            "label": np.array([f"r{i % 5}" for i in ids]),
        }
    )
    if deleted:
        t.delete(deleted)
    return t


def _model(n: int = N, deleted: list[int] | None = None) -> dict[str, np.ndarray]:
    ids = np.arange(n)
    keep = np.setdiff1d(ids, deleted or [])
    cols = {
        "id": ids,
        "score": (ids % 7) * 1.5,
        "ok": ids % 3 != 0,
        "label": np.array([f"r{i % 5}" for i in ids]),
    }
    return {k: v[keep] for k, v in cols.items()}


# -- columns ------------------------------------------------------------------------------
@pytest.mark.parametrize("deleted", [None, DELETED], ids=["dense", "holes"])
def test_column_indexing_matches_numpy(deleted: list[int] | None) -> None:
    t, m = _table(deleted=deleted), _model(deleted=deleted)["id"]
    col = t.id
    assert col.shape == (len(m),) and col.ndim == 1 and len(col) == len(m)
    assert col[0] == m[0] and col[-1] == m[-1]
    for key in (slice(None), slice(2, 9), slice(None, None, -3), slice(9, 2), [5, 0, 5, -1]):
        np.testing.assert_array_equal(col[key], m[key])
    mask = m % 2 == 0
    np.testing.assert_array_equal(col[mask], m[mask])
    assert list(col) == m.tolist()
    assert np.concatenate(list(col.iter_chunks(size=7))).tolist() == m.tolist()
    with pytest.raises(BoundsError):
        col[len(m)]
    with pytest.raises(BoundsError, match="length"):
        col[np.ones(3, dtype=bool)]
    with pytest.raises(ParamTypeError):
        col[1.5]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 60),
    st.lists(st.integers(0, 59), max_size=20),
    st.lists(st.integers(-70, 70), max_size=8),
)
def test_views_and_writes_follow_a_numpy_model(n: int, gone: list[int], rows: list[int]) -> None:
    deleted = sorted({g for g in gone if g < n})
    t, m = _table(n, deleted, capacity=8), _model(n, deleted)["id"].copy()
    live = len(m)
    np.testing.assert_array_equal(t.id[:], m)
    sel = [r for r in rows if -live <= r < live]
    np.testing.assert_array_equal(t[sel].id[:], m[sel])  # a view, in the order given
    np.testing.assert_array_equal(t.take(sel).id[:], m[sel])
    np.testing.assert_array_equal(t[::-2].id[:], m[::-2])
    np.testing.assert_array_equal(t.head(3).id[:], m[:3])
    np.testing.assert_array_equal(t.tail(3).id[:], m[-3:] if live else m[:0])
    np.testing.assert_array_equal(t.where(t.id > 20).id[:], m[m > 20])
    np.testing.assert_array_equal(t.where(t.id % 2 == 0).id[::-1], m[m % 2 == 0][::-1])
    if sel:
        t.id[sel] = 1000
        m[sel] = 1000
    t.id.view[1:4][:] = 7
    m[1:4] = 7
    np.testing.assert_array_equal(t.id[:], m)


def test_column_view_indexer_writes_through() -> None:
    t, m = _table(deleted=DELETED), _model(deleted=DELETED)["score"]
    v = t.score.view[2:6]
    assert isinstance(v, pb.Column) and v._mask is not None and len(v) == 4
    np.testing.assert_array_equal(v[:], m[2:6])
    v[:] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(t.score[2:6], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(t.score.view[[5, 1]][:], t.score[[1, 5]])  # mask order
    with pytest.raises(ParamTypeError, match=r"view\[\]"):
        t.score.view[3]


def test_column_assign_and_table_setitem() -> None:
    t = _table(deleted=DELETED)
    n = len(t)
    t.score.assign(range(n))
    np.testing.assert_array_equal(t.score[:], np.arange(n, dtype=np.float64))
    t["id"] = np.arange(n) * 2
    np.testing.assert_array_equal(t.id[:], np.arange(n) * 2)
    t.id[0] = 2**31  # writes cast; python-blosc2 checks bounds on append and extend only
    with pytest.raises(ParamError, match="requires"):  # python-blosc2's wording
        t.score.assign([1.0])
    with pytest.raises(KeyError, match="does not exist"):
        t["nope"] = 1
    with pytest.raises(ParamTypeError, match="int64"):
        t.id[0] = "text"


# -- conditions -----------------------------------------------------------------------------
def test_conditions_as_expressions_strings_columns_and_masks() -> None:
    t, m = _table(deleted=DELETED), _model(deleted=DELETED)
    expected = m["id"][(m["id"] * m["score"] > 30) & m["ok"]]
    for cond in (
        (t.id * t.score > 30) & t.ok,
        "(id * score > 30) & ok",
        "id * score > 30 and ok",
    ):
        np.testing.assert_array_equal(t.where(cond).id[:], expected)
        np.testing.assert_array_equal(t[cond].id[:], expected)
    np.testing.assert_array_equal(t.where(~t.ok).id[:], m["id"][~m["ok"]])
    np.testing.assert_array_equal(
        t.where(pb.sin(t.score) > 0.5).id[:], m["id"][np.sin(m["score"]) > 0.5]
    )
    np.testing.assert_array_equal(t.where(t.label == "r2").id[:], m["id"][m["label"] == "r2"])
    np.testing.assert_array_equal(t.where(t.label >= t.label).id[:], m["id"])
    short = np.array([True, False, True])  # logical: the first live rows
    np.testing.assert_array_equal(t.where(short).id[:], m["id"][:3][short])
    with pytest.raises(ParamTypeError, match="boolean"):
        t.where("id * score")
    with pytest.raises(ParamTypeError):
        t.where(3)
    # a fixed-width text column in a where() string (pyblosc2.ctable.textexpr)
    np.testing.assert_array_equal(t.where("label == 'r2'").id[:], m["id"][m["label"] == "r2"])
    np.testing.assert_array_equal(
        t.where("label >= 'r2' and id > 3").id[:], m["id"][(m["label"] >= "r2") & (m["id"] > 3)]
    )


def test_views_are_read_only_and_compose() -> None:
    t = _table(deleted=DELETED)
    v = t.where(t.id > 10)
    assert v.base is t and len(v) == len(t.id[t.id[:] > 10])
    w = v.where(v.score > 3)  # a view of a view
    np.testing.assert_array_equal(w.id[:], t.id[(t.id[:] > 10) & (t.score[:] > 3)])
    for write in (
        lambda: v.append(Row()),
        lambda: v.delete(0),
        lambda: v.id.__setitem__(0, 1),
        lambda: v.__setitem__("id", 1),
        lambda: v.add_column("z", pb.int8()),
        lambda: v.sort_by("id", inplace=True),
        lambda: v.compact(),
    ):
        with pytest.raises(ParamError, match="view"):
            write()
    s = t.sort_by("score", view=True)
    assert s.base is t and s.where(s.id > 30).id[:].tolist() == sorted(
        t.id[t.id[:] > 30], key=lambda i: (i % 7, i)
    )


def test_select_take_slice_sample() -> None:
    t, m = _table(deleted=DELETED), _model(deleted=DELETED)
    p = t.select(["score", "id"])
    assert p.col_names == ["score", "id"] and p.ncols == 2 and p.id._raw_col is t._cols["id"]
    assert t[["label", "id"]].col_names == ["label", "id"]
    with pytest.raises(ParamError, match="at least one"):
        t.select([])
    with pytest.raises(KeyError):
        t.select(["nope"])
    taken = t.take([-1, 0, 0])
    assert taken.base is None and taken.id[:].tolist() == [m["id"][-1], m["id"][0], m["id"][0]]
    taken.append(Row(id=1))  # a take is a table of its own
    with pytest.raises(ParamTypeError, match="integers"):
        t.take([0.5])
    with pytest.raises(ParamError, match="1-D"):
        t.take([[0]])
    with pytest.raises(BoundsError, match="bounds"):
        t.take([len(t)])
    assert t.slice(2, 5).id[:].tolist() == m["id"][2:5].tolist()
    assert t.slice(slice(-3, None), copy=False).base is t
    with pytest.raises(ParamError, match="step"):
        t.slice(slice(0, 4, 2))
    s = t.sample(5, seed=3)
    assert len(s) == 5 and set(s.id[:]) <= set(m["id"]) and s.id[:].tolist() == sorted(s.id[:])
    assert t.sample(5, seed=3).id[:].tolist() == s.id[:].tolist()


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.floats(-5, 5), st.sampled_from(["a", "bb", "c"])),
        max_size=30,
    ),
    st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_sort_by_matches_a_stable_lexsort(
    rows: list[tuple[int, float, str]], asc: list[bool]
) -> None:
    @dataclasses.dataclass
    class R:
        a: int = 0
        b: float = 0.0
        c: str = pb.field(pb.string(max_length=2), default="")

    t = CTable(R, new_data=rows)
    a = np.array([r[0] for r in rows], dtype=np.int64)
    b = np.array([r[1] for r in rows], dtype=np.float64)
    c = np.array([r[2] for r in rows], dtype="U2")
    keys = [c, b, a]  # primary last for lexsort
    ranked = []
    for k, up in zip(keys, asc[::-1], strict=True):
        r = np.unique(k, return_inverse=True)[1]
        ranked.append(r if up else -r)
    order = np.lexsort(ranked)
    s = t.sort_by(["a", "b", "c"], ascending=asc)
    np.testing.assert_array_equal(s.a[:], a[order])
    np.testing.assert_array_equal(s.b[:], b[order])
    np.testing.assert_array_equal(s.c[:], c[order])
    t.sort_by(["a", "b", "c"], ascending=asc, inplace=True)
    np.testing.assert_array_equal(t.c[:], c[order])


def test_sort_by_errors() -> None:
    @dataclasses.dataclass
    class C:
        z: complex = 0j

    t = _table()
    with pytest.raises(KeyError):
        t.sort_by("nope")
    with pytest.raises(ParamError, match="ascending"):
        t.sort_by(["id", "score"], ascending=[True])
    with pytest.raises(ParamError, match="mutually exclusive"):
        t.sort_by("id", inplace=True, view=True)
    with pytest.raises(ParamTypeError, match="complex"):
        CTable(C, new_data=[(1j,)]).sort_by("z")
    assert t.sort_by(t.score).id[0] == 0  # a column as the key


# -- aggregates and text --------------------------------------------------------------------
@pytest.mark.parametrize("deleted", [None, DELETED], ids=["dense", "holes"])
def test_aggregates_match_numpy(deleted: list[int] | None) -> None:
    t, m = _table(deleted=deleted), _model(deleted=deleted)
    assert t.id.sum() == m["id"].sum() and t.ok.sum() == m["ok"].sum()
    assert t.score.sum(where=t.id > 10) == m["score"][m["id"] > 10].sum()
    assert t.score.sum(where="id > 10") == m["score"][m["id"] > 10].sum()
    assert isinstance(t.id.sum(dtype=np.float64), np.floating)
    assert t.id.min() == m["id"].min() and t.id.max() == m["id"].max()
    assert t.label.min() == min(m["label"]) and t.label.max() == max(m["label"])
    assert t.score.argmin() == np.argmin(m["score"]) and t.score.argmax() == np.argmax(m["score"])
    assert t.score.mean() == pytest.approx(m["score"].mean())
    assert t.score.std(ddof=1) == pytest.approx(m["score"].std(ddof=1))
    assert t.ok.any() is True and t.ok.all() is False
    np.testing.assert_array_equal(t.label.unique(), np.unique(m["label"]))
    counts = t.label.value_counts()
    assert list(counts.values()) == sorted(counts.values(), reverse=True)
    assert counts == {k: int((m["label"] == k).sum()) for k in np.unique(m["label"])}


def test_aggregates_of_empty_columns_and_wrong_kinds() -> None:
    t = CTable(Row)
    assert t.id.sum() == 0 and t.ok.any() is False and t.ok.all() is True
    for op in ("min", "max", "mean", "std", "argmin"):
        with pytest.raises(ParamError, match="empty"):
            getattr(t.id, op)()
    view = _table().where(_table().id < 0)
    assert np.isnan(view.id.mean()) and np.isnan(view.id.std())
    with pytest.raises(ParamTypeError, match="not supported"):
        _table().label.sum()
    with pytest.raises(ParamTypeError):
        _table().id.any()


def test_text_describe_cov_and_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(12, deleted=[1])
    with pb.printoptions(display_rows=10):  # 11 rows: the first and last five
        text = str(t)
        assert text == repr(t) and "[11 rows x 4 columns]" in text and "..." in text
    lines = t.to_string(display_index=True, index_name="row").splitlines()
    assert lines[0].split()[0] == "row" and len(lines) == 12
    assert "Column('id', dtype=int64, len=11, values=[0, 2, 3" in repr(t.id)
    t.describe()
    out = capsys.readouterr().out
    assert "11 rows" in out and "mean=" in out and "true=" in out and "unique=" in out
    CTable(Row).describe()
    assert "empty" in capsys.readouterr().out
    c = t.select(["id", "score", "ok"]).cov()
    ref = np.cov(np.vstack([t.id[:], t.score[:], t.ok[:].astype(float)]))
    np.testing.assert_allclose(c, ref)
    with pytest.raises(ParamTypeError, match="not supported"):
        t.cov()
    with pytest.raises(ParamError, match="2 live rows"):
        _table(1).select(["id"]).cov()
    assert t.cbytes == sum(a.cbytes for a in t._cols.values()) + t._valid_rows.cbytes
    assert t.nbytes >= t.cbytes and t.cratio == t.nbytes / t.cbytes
    assert dict(t.info_items)["nrows"] == 11 and "cratio" in repr(t.info)
    assert dict(t.id.info_items)["shape"] == (11,)


# -- python-blosc2 answers the same questions the same way ----------------------------------
QUESTIONS: list[tuple[str, Any]] = [
    ("where-expr", lambda t: t.where((t.id * t.score > 30) & t.ok).id[:]),
    ("where-str", lambda t: t.where("(id + 2) * sin(score) >= 1").id[:]),
    ("row-slice", lambda t: t[3:11:2].score[:]),
    ("row-ints", lambda t: t[[4, 0, 4]].id[:]),
    ("head-tail", lambda t: np.concatenate([t.head(4).id[:], t.tail(2).id[:]])),
    ("take", lambda t: t.take([-1, 2]).score[:]),
    ("sort", lambda t: t.sort_by(["score", "id"], ascending=[False, True]).id[:]),
    ("sort-view", lambda t: t.sort_by("label", view=True)[:6].id[:]),
    ("agg", lambda t: [t.id.sum(), t.score.mean(), t.score.std(), t.id.argmax(), t.label.min()]),
    ("sum-where", lambda t: t.score.sum(where=t.id > 12)),
    ("column-view", lambda t: t.score.view[2:9][:]),
]


@pytest.mark.parametrize(("name", "question"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_python_blosc2_agrees(cblosc2: Any, name: str, question: Any) -> None:
    def build(lib: Any) -> Any:
        @dataclasses.dataclass
        class R:
            id: int = lib.field(lib.int64(ge=0), default=0)
            score: float = lib.field(lib.float64(), default=0.0)
            ok: bool = lib.field(lib.bool(), default=True)
            label: str = lib.field(lib.string(max_length=8), default="")

        t = lib.CTable(R, expected_size=16)
        m = _model()
        t.extend([tuple(m[k][i].item() for k in m) for i in range(N)])
        t.delete(DELETED)
        return t

    ours, theirs = question(build(pb)), question(build(cblosc2))
    as_list = [v if isinstance(v, list) else np.atleast_1d(v).tolist() for v in (ours, theirs)]
    for o, th in zip(*as_list, strict=True):
        assert o == (str(th) if isinstance(th, str) else pytest.approx(th, rel=1e-12))


def test_validate_false_skips_the_bounds_only() -> None:
    t = CTable(Row)
    with pytest.raises(ParamError, match="violates constraint ge=0"):
        t.extend([(-1, 0.0, True, "")])
    t.extend([(-1, 0.0, True, "")], validate=False)  # python-blosc2's per-call override
    lax = CTable(Row, validate=False)
    lax.append((-2, 0.0, True, ""))
    with pytest.raises(ParamError, match="violates constraint"):
        lax.extend([(-3, 0.0, True, "")], validate=True)
    with pytest.raises(ParamError, match="max_length"):  # text is never cut short
        lax.extend([(1, 0.0, True, "much too long")])
    with pytest.raises(ParamError, match="No known stored columns"):
        t.extend({"nope": [1]})
    assert t.id[:].tolist() == [-1] and lax.id[:].tolist() == [-2]
