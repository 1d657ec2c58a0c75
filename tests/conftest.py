"""Shared fixtures: the reference libraries (test-only) and registry isolation; hypothesis'
settings for the whole suite.

A missing reference library is a skip on a developer machine and a failure in CI (CI=true).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from tests.bounded import load_factor, stretch_timeout

IN_CI = os.environ.get("CI", "").lower() == "true"

# No hypothesis test depends on wall time: hypothesis' default deadline (200 ms per example)
# and its too_slow health check (inputs generated per second) measure wall time, which a loaded
# machine stretches (test_index's 0.3 ms example took 459 ms once, test_frame_header made 6
# inputs in 1.08 s). The other health checks (data sizes, filtering) stay on. Loaded here, before
# any test module makes a ``settings``: those inherit it.
settings.register_profile("pyblosc2", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("pyblosc2")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """pytest-timeout's bound of the test, stretched by the machine's load when it starts
    (tests/bounded.py's ``load_factor``, as the suite's own wall-time bounds are): runs before
    pytest-timeout's own hook, which reads the closest ``timeout`` marker."""
    stretch_timeout(item, load_factor())
    yield


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
def zarr_mod() -> ModuleType:
    """zarr-python 3 (an optional extra): a skip locally when missing, a failure in CI."""
    mod = _reference("zarr")
    assert int(mod.__version__.split(".")[0]) >= 3, f"tests expect zarr 3, got {mod.__version__}"
    return mod


@pytest.fixture
def decoded_blocks(monkeypatch) -> list[int]:
    """The indices of the blocks whose streams ``ChunkReader`` decodes during the test (by the
    general or the fused path, picked per chunk, or a range of one block's planes), in order."""
    from pyblosc2.chunk import fused
    from pyblosc2.chunk.decode import ChunkReader

    seen: list[int] = []
    original = ChunkReader.decode_streams
    original_fused = fused.decode_block_fused

    def spy(self, j, target, *args):
        seen.append(j)
        return original(self, j, target, *args)

    def fused_spy(r, j, *args):
        done = original_fused(r, j, *args)
        if done:  # (declined: the general path decodes it, and is seen there)
            seen.append(j)
        return done

    original_picks = fused.pick_split_planes

    def picks_spy(r, picks, *args):
        done = original_picks(r, picks, *args)
        if done:
            seen.extend(j for j, _, _ in picks)
        return done

    original_parts = ChunkReader._plane_parts

    def parts_spy(self, j, *args):
        seen.append(j)
        return original_parts(self, j, *args)

    monkeypatch.setattr(ChunkReader, "decode_streams", spy)
    monkeypatch.setattr(ChunkReader, "_plane_parts", parts_spy)
    monkeypatch.setattr("pyblosc2.chunk.decode.decode_block_fused", fused_spy)
    monkeypatch.setattr("pyblosc2.chunk.decode.pick_split_planes", picks_spy)
    return seen


@pytest.fixture
def user_plugins(_isolated_registries) -> None:
    """tests.helpers' user codec (id 180) and XOR filter (id 170), registered in pyblosc2 for
    this test only (``_isolated_registries`` removes them afterwards)."""
    from pyblosc2.codecs.registry import register_codec
    from pyblosc2.filters.registry import register_filter
    from tests.helpers import XorFilter, ZlibPluginCodec

    register_codec(ZlibPluginCodec())
    register_filter(XorFilter())


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
