"""Text group keys factorized by hashing (pyblosc2.ctable.groupkeys, python-blosc2's
blosc2.groupby names): np.unique(return_inverse=True) is the oracle, collisions fall back to
it, and group_by over text keys agrees with pandas' groupby."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
import pyblosc2.groupby as _gb
from pyblosc2.ctable import CTable, groupkeys
from pyblosc2.errors import ParamError, ParamTypeError

gb: Any = _gb  # python-blosc2's module name: ctable.groupkeys itself
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6)


@given(st.lists(TEXT, max_size=200), st.sampled_from([1, 3, 6]))
@settings(max_examples=60, deadline=None)
def test_factorize_str_is_np_unique(texts: list[str], width: int) -> None:
    keys = np.array(texts, dtype=f"U{width}")  # cut to the width, as a column stores them
    ref_u, ref_inv = np.unique(keys, return_inverse=True)
    got_u, got_inv = groupkeys.factorize_fixed_width_str(keys)
    np.testing.assert_array_equal(got_u, ref_u)
    np.testing.assert_array_equal(got_inv, ref_inv.reshape(-1))


@given(st.lists(st.binary(max_size=4), max_size=200))
@settings(max_examples=40, deadline=None)
def test_factorize_bytes_is_np_unique(items: list[bytes]) -> None:
    keys = np.array(items, dtype="S4")
    ref_u, ref_inv = np.unique(keys, return_inverse=True)
    got_u, got_inv = groupkeys.factorize_fixed_width_str(keys)
    np.testing.assert_array_equal(got_u, ref_u)
    np.testing.assert_array_equal(got_inv, ref_inv.reshape(-1))


def test_collisions_fall_back_to_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zero multiplier keeps only the last character in the hash: "ax" and "bx" collide."""
    calls = []
    real_unique = np.unique

    def counting_unique(a: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(a.dtype.kind)
        return real_unique(a, *args, **kwargs)

    monkeypatch.setattr(gb, "_HASH_MIX", np.uint64(0))
    monkeypatch.setattr(groupkeys.np, "unique", counting_unique)
    keys = np.array(["ax", "bx", "ax", "cx"])
    u, inv = groupkeys.factorize_fixed_width_str(keys)
    assert u.tolist() == ["ax", "bx", "cx"] and inv.tolist() == [0, 1, 0, 2]
    assert calls == ["u", "U"]  # the hashes, then the exact fallback


def test_groupby_name_is_the_module() -> None:
    assert gb is groupkeys
    assert gb.python_scalar(np.int8(3)) == 3 and type(gb.python_scalar(np.int8(3))) is int
    arr = np.zeros(1)
    assert gb.python_scalar(arr) is arr  # only numpy scalars are unwrapped


@pytest.mark.parametrize("bad", [np.arange(3), np.array([["a"]]), ["a", "b"]])
def test_factorize_refuses_other_input(bad: Any) -> None:
    with pytest.raises(ParamTypeError, match="keys must be"):
        groupkeys.factorize_fixed_width_str(bad)


@dataclasses.dataclass
class Sale:
    city: str = pb.field(pb.string(max_length=6), default="")
    amount: float = pb.field(pb.float64(), default=0.0)


@given(
    st.lists(
        st.tuples(st.sampled_from(["Paris", "Rome", "Oslo", "", "Zürich"]), st.floats(-100, 100)),
        min_size=1,
        max_size=60,
    )
)
@settings(max_examples=25, deadline=None)
def test_group_by_text_key_matches_pandas(rows: list[tuple[str, float]]) -> None:
    pd = pytest.importorskip("pandas")
    t = CTable(Sale, new_data=rows)
    got = t.group_by("city").agg({"amount": ["sum", "count"]})
    ref = pd.DataFrame(rows, columns=["city", "amount"]).groupby("city", sort=True)["amount"]
    assert got["city"][:].tolist() == list(ref.sum().index)
    np.testing.assert_allclose(got["amount_sum"][:], ref.sum().to_numpy())
    np.testing.assert_array_equal(got["amount_count"][:], ref.count().to_numpy())


def test_udf_results_go_through_python_scalar(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[type] = []
    real = gb._python_scalar

    def spy(value: Any) -> Any:
        seen.append(type(value))
        return real(value)

    monkeypatch.setattr(gb, "_python_scalar", spy)
    t = CTable(Sale, new_data=[("a", 1.0), ("b", 2.0)])
    t.group_by("city").agg(x=("amount", lambda a: a.sum()))
    assert seen == [np.float64, np.float64]


def test_extend_with_a_key_that_is_no_column_is_refused() -> None:
    """python-blosc2 4.14.1 drops a dict key that is no column and extends with the rest
    (its test_extend_dict_uses_known_column_lengths); pyblosc2 refuses it: the values under
    that key would be lost without a word."""
    t = CTable(Sale)
    with pytest.raises(ParamError, match="not columns of the table"):
        t.extend({"city": ["a"], "amount": [1.0], "unknown": [0]})
    assert len(t) == 0
