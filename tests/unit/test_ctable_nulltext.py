"""utf8 CTable columns with mask storage (a ``.notnull`` sidecar on the table's row grid,
``""`` in the null slots): every read, query, sort, isin, save and conversion against a
plain-Python oracle, and a hostile sidecar refused on open."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.ctable import CTable
from pyblosc2.errors import FormatError

pytestmark = pytest.mark.skipif(
    not hasattr(getattr(np, "dtypes", None), "StringDType"), reason="utf8 columns need numpy 2"
)

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=6)  # no lone surrogates


def _table(values: list[str | None], **kwargs: Any) -> Any:
    row = dataclasses.make_dataclass(
        "U",
        [("u", str, pb.field(pb.utf8(null_storage="mask"))), ("i", int, pb.field(pb.int64()))],
    )
    t = CTable(row, **kwargs)
    if values:
        t.extend({"u": values, "i": np.arange(len(values))})
    return t


def _logical(col: Any) -> list[Any]:
    nulls = np.asarray(col.is_null()).tolist()
    return [None if n else str(v) for v, n in zip(col[:], nulls, strict=True)]


def test_nulls_go_to_the_sidecar_on_the_tables_grid() -> None:
    t = _table(["a", None, "", "zz"], expected_size=64)
    assert t["u"].null_storage == "mask" and t["u"][:].tolist() == ["a", "", "", "zz"]
    assert t["u"].is_null().tolist() == [False, True, False, False]
    mask = t._null_mask("u")
    assert (mask.chunks, mask.blocks) == (t._valid_rows.chunks, t._valid_rows.blocks)
    t.append((None, 4))
    t["u"][0] = None
    t["u"][1] = "b"
    assert _logical(t["u"]) == [None, "b", "", "zz", None]
    assert t[0].u is None and t[2].u == ""  # a row reads None, not the fill
    assert [r.u for r in t] == [None, "b", "", "zz", None]


def test_a_bare_nullable_utf8_resolves_by_the_policy() -> None:
    row = dataclasses.make_dataclass("B", [("u", str, pb.field(pb.utf8(nullable=True)))])
    assert CTable(row)["u"].null_storage == "mask"
    with pb.null_policy(pb.NullPolicy(null_storage="sentinel")):
        t = CTable(row, new_data=[("x",), (None,)])
    assert t["u"].null_value == "__BLOSC2_NULL__" and t["u"].is_null().tolist() == [False, True]


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.one_of(st.none(), TEXT), min_size=1, max_size=20), probe=TEXT)
def test_reads_queries_sorts_and_isin_match_an_oracle(values: list[Any], probe: str) -> None:
    t = _table(values)
    assert _logical(t["u"]) == values
    assert t["u"].null_count() == sum(v is None for v in values)
    for op, fn in ((">", lambda v: v > probe), ("==", lambda v: v == probe)):
        want = [i for i, v in enumerate(values) if v is not None and fn(v)]
        got = t.where(t["u"] > probe if op == ">" else t["u"] == probe)["i"][:].tolist()
        assert sorted(got) == want
        negated = [i for i, v in enumerate(values) if v is not None and not fn(v)]
        inverse = ~(t["u"] > probe) if op == ">" else ~(t["u"] == probe)
        assert sorted(t.where(inverse)["i"][:].tolist()) == negated  # a null stays out
    present = sorted(v for v in values if v is not None)
    n_null = len(values) - len(present)
    assert _logical(t.sort_by("u")["u"]) == present + [None] * n_null
    assert _logical(t.sort_by("u", ascending=False)["u"]) == present[::-1] + [None] * n_null
    assert t["u"].isin([probe]).tolist() == [v == probe for v in values]  # "" is not a null
    assert t["u"].isin([None]).tolist() == [v is None for v in values]


@pytest.mark.parametrize("ext", ["b2d", "b2z"])
def test_saved_reopened_and_extended(tmp_path: Any, ext: str) -> None:
    path = str(tmp_path / f"t.{ext}")
    _table(["x", None, ""]).save(path)
    back = CTable.open(path, mode="a" if ext == "b2d" else "r")
    assert _logical(back["u"]) == ["x", None, ""]
    assert back._storage.load_schema()["version"] == 3  # python-blosc2's: a mask column
    if ext == "b2d":
        back.extend({"u": [None, "y"], "i": [3, 4]})
        back.close()
        assert _logical(CTable.open(path)["u"]) == ["x", None, "", None, "y"]
    else:
        back.close()


def test_convert_nulls_both_ways_keeps_the_data(tmp_path: Any) -> None:
    t = _table(["x", None, "", "__BLOSC2_NULL__"][:3])
    s = t.convert_nulls(to="sentinel")
    assert s["u"].null_storage == "sentinel" and _logical(s["u"]) == ["x", None, ""]
    m = s.convert_nulls(to="mask")
    assert m["u"].null_storage == "mask" and _logical(m["u"]) == ["x", None, ""]
    path = str(tmp_path / "c.b2d")
    t.save(path)
    on_disk = CTable.open(path, mode="a")
    on_disk.convert_nulls(to="sentinel", inplace=True)
    on_disk.close()
    reopened = CTable.open(path)
    assert reopened["u"].null_storage == "sentinel" and _logical(reopened["u"]) == ["x", None, ""]
    assert not reopened._storage.has_null_mask("u")  # the sidecar went with the conversion


@pytest.mark.parametrize("bad", [np.zeros(3, dtype=np.int8), np.ones(1, dtype=np.bool_)])
def test_a_hostile_utf8_sidecar_is_refused(tmp_path: Any, bad: np.ndarray) -> None:
    path = str(tmp_path / "h.b2d")
    t = _table(["a", None, "c"], urlpath=path, mode="w")
    t.close()
    side = os.path.join(path, "_cols", "u.notnull.b2nd")
    assert os.path.exists(side)
    os.remove(side)
    pb.asarray(bad, urlpath=side, mode="w")
    with pytest.raises(FormatError, match="notnull"):
        CTable.open(path)


def test_a_hostile_utf8_null_storage_is_refused(tmp_path: Any) -> None:
    path = str(tmp_path / "s.b2d")
    _table(["a", None], urlpath=path, mode="w").close()
    t = CTable.open(path, mode="a")
    doc = t._storage.load_schema()
    doc["columns"][0]["null_storage"] = "bitmap"
    t._storage.replace_schema(doc)
    t.close()
    with pytest.raises(ValueError, match="null_storage") as info:
        CTable.open(path)
    assert not isinstance(info.value, NotImplementedError)
