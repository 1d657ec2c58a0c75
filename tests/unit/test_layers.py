"""Imports only go down the layers: bytes → header → blocks → codecs/filters → numpy;
containers and the API on top (STYLE.md habit 1). Also: src never imports a reference library."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pyblosc2

SRC = Path(pyblosc2.__file__).resolve().parent  # the package under test
# A module in layer N may import pyblosc2 modules of layers < N only (same layer: same package).
LAYERS = {
    "errors": 0,
    "constants": 0,
    "_bytes": 1,
    "_threads": 1,
    "backends": 1,
    "params": 2,
    "storage": 2,
    "codecs": 3,
    "filters": 3,
    "chunk": 4,
    "frame": 5,
    "meta": 4.5,  # below frame: the digest list is a vlmeta entry
    "schunk": 7,
    "ndarray": 8,
    "api": 8,
    "utils": 8.5,  # python-blosc2's blosc2.utils names (index keys)
    "clib": 8.5,  # python-blosc2 globals and library info, over api
    "packing": 8.5,  # pack/pack_tensor & co., over api and ndarray
    "compat": 9,
    "__init__": 11,
    "cli": 10,
    "__main__": 10.5,
}
REFERENCE_LIBS = {"blosc2", "blosc", "numcodecs", "zarr"}
# zarr is an optional dependency, imported only by the zarr codec adapter.
ALLOWED = {("compat", "zarr_codec.py"): {"zarr"}, ("compat", "zarr_blosc2.py"): {"zarr"}}


def _layer(parts: tuple[str, ...]) -> int:
    return LAYERS[parts[0].removesuffix(".py")]


def _imports(path: Path) -> list[tuple[str, bool, int]]:
    """(module, is it pyblosc2's own, line) of every import in ``path``."""
    tree = ast.parse(path.read_text())
    pkg = path.relative_to(SRC).parts[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                mod = (*base, *(node.module.split(".") if node.module else ()))
                found.append((".".join(mod), True, node.lineno))
            elif node.module:
                own = node.module.startswith("pyblosc2.")
                found.append((node.module.removeprefix("pyblosc2."), own, node.lineno))
        elif isinstance(node, ast.Import):
            for a in node.names:
                own = a.name.startswith("pyblosc2.")
                name = a.name.removeprefix("pyblosc2.") if own else a.name
                found.append((name, own, node.lineno))
    return found


MODULES = sorted(p for p in SRC.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_down_the_layers(path: Path) -> None:
    rel = path.relative_to(SRC).parts
    mine = _layer(rel)
    for mod, own, line in _imports(path):
        top = mod.split(".")[0]
        if top not in ALLOWED.get(rel, set()):
            assert top not in REFERENCE_LIBS, f"{path.name}:{line} imports {mod}"
        if own and mod:
            parts = tuple(mod.split("."))
            same_pkg = len(rel) > 1 and parts[0] == rel[0]
            assert _layer(parts) < mine or same_pkg, f"{'/'.join(rel)}:{line} imports {mod}"
