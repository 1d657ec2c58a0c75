"""Stateful models: a DictStore and a TreeStore against a plain dict, through sets (embedded
and external values, overwrites across tiers), deletes and reopenings, in both forms; at
the end python-blosc2 reads the same store."""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import tempfile
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import pyblosc2 as pb
from pyblosc2.errors import ParamError
from pyblosc2.stores import DictStore, TreeStore

KEYS = ["/a", "/b", "/d/a", "/d/e/f", "/d/e", "/z"]
SETTINGS = settings(
    max_examples=12,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _value(kind: str, n: int, seed: int) -> tuple[object, bytes]:
    """A value to store and the bytes it must read back as."""
    if kind == "schunk":
        data = bytes([seed % 256]) * n
        return pb.SChunk(data=data), data
    arr = np.arange(seed, seed + n, dtype=np.int64 if kind == "i8" else np.int8)
    return arr, arr.tobytes()


def _read(value: object) -> bytes:
    if isinstance(value, pb.SChunk):
        return bytes(value[:])
    return np.asarray(value[:]).tobytes()  # type: ignore[index]


values = st.tuples(
    st.sampled_from(["i1", "i8", "schunk"]), st.integers(1, 300), st.integers(0, 100)
)


class DictStoreModel(RuleBasedStateMachine):
    cls: type[DictStore] = DictStore

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp()
        self.model: dict[str, bytes] = {}

    @initialize(form=st.sampled_from(["b2d", "b2z"]), threshold=st.sampled_from([0, 200, None]))
    def create(self, form: str, threshold: int | None) -> None:
        self.path = f"{self.dir}/s.{form}"
        self.threshold = threshold
        self.store = self.cls(self.path, mode="w", threshold=threshold)

    def expected_keys(self) -> set[str]:
        return set(self.model)

    def refused(self, key: str) -> bool:
        return False

    @rule(key=st.sampled_from(KEYS), value=values)
    def set(self, key: str, value: tuple[str, int, int]) -> None:
        obj, data = _value(*value)
        if self.refused(key):
            try:
                self.store[key] = obj
            except ParamError:
                return
            raise AssertionError(f"{key} was stored against the tree's rules")
        self.store[key] = obj
        self.forget_below(key)
        self.model[key] = data

    def forget_below(self, key: str) -> None:
        pass

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.model)))
        del self.store[key]
        del self.model[key]

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.store = self.cls(self.path, mode="a", threshold=self.threshold)

    @invariant()
    def same_content(self) -> None:
        if not hasattr(self, "store"):
            return
        assert set(self.store.keys()) == self.expected_keys()
        for key, data in self.model.items():
            assert _read(self.store[key]) == data, key

    def teardown(self) -> None:
        if hasattr(self, "store"):
            self.store.close()
            blosc2 = _reference()
            if blosc2 is not None:  # python-blosc2 reads what pyblosc2 wrote
                with blosc2.open(self.path, mode="r") as ref:
                    assert set(ref.keys()) == self.expected_keys()
                    for key, data in self.model.items():
                        assert _read(ref[key]) == data, key
        shutil.rmtree(self.dir, ignore_errors=True)


def _reference() -> Any:
    """python-blosc2, or None where it is not installed (the floors run); in CI it must be."""
    if os.environ.get("CI", "").lower() != "true" and importlib.util.find_spec("blosc2") is None:
        return None
    return importlib.import_module("blosc2")


class TreeStoreModel(DictStoreModel):
    cls = TreeStore

    def expected_keys(self) -> set[str]:
        keys = set(self.model)
        for key in self.model:
            parts = key.split("/")[1:-1]
            keys |= {"/" + "/".join(parts[: i + 1]) for i in range(len(parts))}
        return keys

    def refused(self, key: str) -> bool:
        below = any(k.startswith(key + "/") for k in self.model)
        parts = key.split("/")[1:-1]
        above = any("/" + "/".join(parts[: i + 1]) in self.model for i in range(len(parts)))
        return below or above

    @rule(data=st.data())
    def delete_group(self, data: st.DataObject) -> None:
        groups = sorted(self.expected_keys() - set(self.model))
        if not groups:
            return
        group = data.draw(st.sampled_from(groups))
        del self.store[group]
        self.model = {k: v for k, v in self.model.items() if not k.startswith(group + "/")}


TestDictStoreModel = DictStoreModel.TestCase
TestDictStoreModel.settings = SETTINGS
TestTreeStoreModel = TreeStoreModel.TestCase
TestTreeStoreModel.settings = SETTINGS
