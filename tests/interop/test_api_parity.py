"""Module-level names that python-blosc2 scripts and test fixtures use, with python-blosc2's
values (issue 11)."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np
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


@pytest.mark.parametrize("as_dict", [False, True], ids=["Storage", "dict"])
def test_asarray_with_storage_keeps_the_b2nd_layer_and_meta(tmp_path, as_dict: bool, cblosc2):
    """``storage=`` (whose ``meta`` is a Storage field) used to be refused or to drop the b2nd
    layer; now the array reopens as an NDArray with the user's metalayers, in both libraries."""
    path = str(tmp_path / "a.b2nd")
    st = pb.Storage(urlpath=path, mode="w", meta={"units": "K"})
    storage = {"urlpath": path, "mode": "w", "meta": {"units": "K"}} if as_dict else st
    pb.asarray(np.arange(12).reshape(3, 4), storage=storage)
    back = pb.open(path)
    assert isinstance(back, pb.NDArray) and back.shape == (3, 4) and back.meta["units"] == "K"
    assert cblosc2.open(path)[1, 2] == 6


def test_is_wasm_flag_matches_python_blosc2_on_this_machine(cblosc2) -> None:
    assert pb.IS_WASM is cblosc2.IS_WASM is False
