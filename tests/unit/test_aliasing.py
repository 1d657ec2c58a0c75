"""pyblosc2 standing in for python-blosc2's package (``pyblosc2/_aliasing.py``): submodules
named like functions keep the function, and ``import blosc2.x`` after
``sys.modules["blosc2"] = pyblosc2`` is ``pyblosc2.x`` itself (run in a child: the test
changes ``sys.modules``)."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pyblosc2
from tests.bounded import run_child

CHILD = textwrap.dedent(
    """
    import importlib, sys, types
    import pyblosc2
    sys.modules["blosc2"] = pyblosc2
    sub = importlib.import_module("blosc2.lazyexpr")
    nd = importlib.import_module("blosc2.ndarray.ndarray")
    assert sub is sys.modules["pyblosc2.lazyexpr"], sub
    assert nd is sys.modules["pyblosc2.ndarray.ndarray"], nd
    assert "blosc2.lazyexpr" in sys.modules and sys.modules["blosc2.lazyexpr"] is sub
    # the package's function survives the import of its namesake submodule
    assert callable(pyblosc2.lazyexpr) and not isinstance(pyblosc2.lazyexpr, types.ModuleType)
    assert nd.NDArray is pyblosc2.NDArray
    print("ok")
    """
)


def test_blosc2_alias_imports_pyblosc2_modules_not_copies() -> None:
    out = run_child(
        [sys.executable, "-c", CHILD],
        "import blosc2.* through the alias",
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_a_module_assigned_over_a_function_is_ignored_but_new_names_are_set() -> None:
    fn = pyblosc2.lazyexpr
    pyblosc2.lazyexpr = importlib.import_module("pyblosc2.lazyexpr")  # what an import of the submodule does
    assert pyblosc2.lazyexpr is fn
    pyblosc2._aliasing_probe = 1  # type: ignore[attr-defined]
    try:
        assert pyblosc2._aliasing_probe == 1  # type: ignore[attr-defined]
    finally:
        del pyblosc2._aliasing_probe  # type: ignore[attr-defined]
