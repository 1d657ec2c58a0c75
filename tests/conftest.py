"""Shared fixtures: the reference libraries (test-only) and registry isolation.

A missing reference library is a skip on a developer machine and a failure in CI (CI=true).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"


def _reference(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if IN_CI:
            pytest.fail(f"reference library {name!r} is required in CI: {exc}")
        pytest.skip(f"reference library {name!r} not installed")


@pytest.fixture(scope="session")
def cblosc2() -> ModuleType:
    """python-blosc2 (C-Blosc2 3.3.5)."""
    mod = _reference("blosc2")
    assert mod.__version__ == "4.14.1", f"tests expect python-blosc2 4.14.1, got {mod.__version__}"
    return mod


@pytest.fixture(scope="session")
def cblosc1() -> ModuleType:
    """python-blosc (C-Blosc 1.x)."""
    return _reference("blosc")


@pytest.fixture(scope="session")
def numcodecs_mod() -> ModuleType:
    return _reference("numcodecs")


@pytest.fixture(scope="session")
def zarr_codec() -> ModuleType:
    """pyblosc2.compat.zarr_codec (needs zarr: a skip locally, a failure in CI)."""
    _reference("zarr")
    return importlib.import_module("pyblosc2.compat.zarr_codec")


@pytest.fixture(autouse=True)
def _isolated_registries():
    """Codec/filter registrations made by a test never leak into the next one."""
    from pyblosc2.codecs.registry import registry_snapshot as codecs_snapshot
    from pyblosc2.filters.registry import registry_snapshot as filters_snapshot

    with codecs_snapshot(), filters_snapshot():
        yield
