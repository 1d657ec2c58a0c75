"""The operand references pyblosc2's saver writes (compute/saved/writer.py): a lazy
expression opened from its carrier is referenced by the carrier's path, a Proxy by its
cache's path (python-blosc2's ``Ref.from_object``: ``Proxy`` -> its ``_cache``); an
in-memory operand is refused naming its own type, before anything is written."""

from __future__ import annotations

import os

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.compute.saved.layout import B2O
from pyblosc2.errors import ParamError


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _refs(path: str) -> dict:
    return pb.open(path, deserialize="full").schunk.vlmeta[B2O]["operands"]


def test_a_saved_expression_operand_is_its_carriers_path(here) -> None:
    a = pb.asarray(np.arange(6.0), urlpath="a.b2nd", mode="w")
    pb.lazyexpr("a * 2", {"a": a}).save("e1.b2nd")
    e1 = pb.open("e1.b2nd", deserialize="full")
    pb.lazyexpr("e1 + a", {"e1": e1, "a": a}).save("e2.b2nd")
    assert _refs("e2.b2nd")["e1"] == {"kind": "urlpath", "version": 1, "urlpath": "e1.b2nd"}
    np.testing.assert_array_equal(pb.open("e2.b2nd", deserialize="full")[:], np.arange(6.0) * 3)


def test_a_proxy_operand_is_its_caches_path(here) -> None:
    src = pb.asarray(np.arange(6.0), chunks=(3,), blocks=(3,))
    proxy = pb.Proxy(src, urlpath="cache.b2nd")
    pb.lazyexpr("p + 1", {"p": proxy}).save("e.b2nd")
    assert _refs("e.b2nd")["p"] == {"kind": "urlpath", "version": 1, "urlpath": "cache.b2nd"}


def test_an_in_memory_expression_operand_is_refused_by_its_type(here) -> None:
    a = pb.asarray(np.arange(6.0), urlpath="a.b2nd", mode="w")
    inner = a * 2  # a LazyExpr of its own: no carrier
    with pytest.raises(ParamError, match="operand 'e' is a LazyExpr in memory"):
        pb.lazyexpr("e + 1", {"e": inner}).save("e.b2nd")
    assert not os.path.exists("e.b2nd")


def test_the_numpy_names_a_udf_may_use_hold_every_ufunc() -> None:
    """NUMPY_NAMES (compute/saved/udfsource.py) takes the ufuncs from numpy's namespace as
    loaded: the same ones a walk of ``getattr`` over ``dir(np)`` finds, with no lazy
    submodule imported for it."""
    from pyblosc2.compute.saved.udfsource import NUMPY_NAMES

    ufuncs = {n for n in dir(np) if isinstance(getattr(np, n, None), np.ufunc)}
    assert ufuncs <= NUMPY_NAMES
    assert {"sin", "add", "logical_and", "where", "float64"} <= NUMPY_NAMES
