"""Module-level names that python-blosc2 scripts and test fixtures use, with python-blosc2's
values (issue 11)."""

from __future__ import annotations

import enum
from typing import Any

import pytest

import pyblosc2 as pb


def _plain(value: Any) -> Any:
    """Enums (each library has its own classes) as (name, value); lists element-wise."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return (value.name, value.value)
    return value


def test_default_dicts_match_python_blosc2(cblosc2) -> None:
    for ours, theirs in (
        (pb.cparams_dflts, cblosc2.cparams_dflts),
        (pb.dparams_dflts, cblosc2.dparams_dflts),
        ({k: v for k, v in pb.storage_dflts.items() if k != "fsync"}, cblosc2.storage_dflts),
    ):
        assert {k: _plain(v) for k, v in ours.items()} == {k: _plain(v) for k, v in theirs.items()}


def test_compressor_list_matches_without_plugins(cblosc2) -> None:
    ours = [_plain(c) for c in pb.compressor_list()]
    assert ours == [_plain(c) for c in cblosc2.compressor_list()]


@pytest.mark.parametrize("first", [True, False])
def test_set_releasegil_returns_the_previous_state(first: bool) -> None:
    old = pb.set_releasegil(first)
    try:
        assert pb.set_releasegil(not first) is first
        assert pb.set_releasegil(first) is (not first)
    finally:
        pb.set_releasegil(old)


def test_set_releasegil_refuses_non_bools() -> None:
    with pytest.raises(pb.ParamError, match="gilstate"):
        pb.set_releasegil("yes")


def test_nthreads_follows_set_nthreads() -> None:
    old = pb.set_nthreads(1)
    try:
        assert pb.nthreads == 1 and pb.ncores >= 1
    finally:
        pb.set_nthreads(old)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pb.nope  # noqa: B018
