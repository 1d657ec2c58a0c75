"""The house rules of the import graph (STYLE.md habit 1, docs/architecture.md):

* imports only go down the layers: bytes → header → blocks → codecs/filters → numpy;
  containers and the API on top (a module may import modules of lower layers, and of its own
  package);
* no import circle anywhere in ``src/`` — every import counts, function-local and
  ``TYPE_CHECKING`` ones too: a circle broken by a local import is still a circle to a reader;
* every top-level module of ``pyblosc2/`` is a package or a layer's single file;
* filters and codecs ask the kernel protocol (:mod:`pyblosc2.kernels`) and never import an
  implementation of it;
* ``src/`` never imports a reference library.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import pytest

import pyblosc2
from tests.bounded import run_child

SRC = Path(pyblosc2.__file__).resolve().parent  # the package under test
# A module in layer N may import pyblosc2 modules of layers < N only (same layer: same package).
# A loose file is a layer of its own; packages may share one.
LAYERS = {
    "errors": 0,
    "constants": 0.5,
    "_aliasing": 0.6,  # pyblosc2 standing in for python-blosc2's package (no pyblosc2 imports)
    "_lazyattrs": 0.65,  # names a package imports on first use (no pyblosc2 imports)
    "_engine_list": 0.7,  # the engine's names, listed for the package's lazy names (no imports)
    "_bytes": 1,
    "_threads": 1.1,
    "backends": 1.2,
    "storage": 1.8,
    "context": 1.9,  # what a chunk's plug-ins know of its super-chunk
    "params": 2,
    "kernels": 2.5,  # the hot loops behind one protocol: filters and codecs ask it
    "codecs": 3,
    "filters": 3,
    "chunk": 4,
    "meta": 4.5,  # below frame: the digest list is a vlmeta entry
    "frame": 5,
    "api": 6,  # the chunk-level public API
    "plugins": 6.5,  # python-blosc2's register_codec/register_filter over the registries
    "schunk": 7,
    "packing": 7.5,  # pack/pack_tensor & co.: arrays in chunks and frames, over api and schunk
    "ndarray": 8,
    "schema_base": 8.08,  # SchemaSpec and the null handling specs share
    "schema_declared": 8.09,  # python-blosc2's object and N-d cell (ndarray) column specs
    "schema": 8.1,  # python-blosc2's schema specs (ListArray item types)
    "vlarrays": 8.2,  # ObjectArray, BatchArray, ListArray: variable-length containers
    "msgpack_utils": 8.3,  # python-blosc2's msgpack_utils names
    "c2array": 8.35,  # python-blosc2's Caterva2 client names (not implemented)
    "dsl": 8.36,  # python-blosc2's DSL kernels: the allow-list, the numpy and numba routes
    "dsl_kernel": 8.365,  # python-blosc2's blosc2.dsl_kernel names (re-exports of dsl)
    "proxies": 8.37,  # Proxy: a cache of a source filled as reads touch it (issue 34)
    "proxy_source": 8.38,  # python-blosc2's blosc2.proxy_source (names proxies.byterange)
    "compute": 8.4,  # lazy expressions, reductions, where: the engine behind NDArray's operators
    "random": 8.41,  # python-blosc2's blosc2.random: distributions drawn chunk by chunk
    "lazyexpr": 8.42,  # python-blosc2's blosc2.lazyexpr names (re-exports of compute)
    "proxy": 8.43,  # python-blosc2's blosc2.proxy names (Proxy, sources, SimpleProxy, jit)
    "exceptions": 8.44,  # python-blosc2's blosc2.exceptions names (re-exports)
    "linalg": 8.45,  # python-blosc2's blosc2.linalg: products and permutations out of core
    "indexes": 8.46,  # NDArray indexes: python-blosc2's layout, filters answered through them
    "indexing": 8.465,  # python-blosc2's blosc2.indexing names (re-exports of indexes)
    "clib": 8.5,  # python-blosc2 globals and library info, over api
    "utils": 8.6,  # python-blosc2's blosc2.utils names (index keys)
    "ctable": 8.7,  # CTable as storage: schema, columns, _valid_rows (the stores plug in)
    "ctable_storage": 8.72,  # python-blosc2's blosc2.ctable_storage names (ctable.storage)
    "groupby": 8.73,  # python-blosc2's blosc2.groupby: ctable.groupkeys under that name
    "ctable_nulls": 8.71,  # python-blosc2's blosc2.ctable_nulls names (re-exports of ctable.nulls)
    "stores": 8.8,  # DictStore/TreeStore/EmbedStore (.b2d/.b2z/.b2e) and open() over them
    "dict_store": 8.91,  # python-blosc2's module names for the stores (re-exports)
    "schema_compiler": 8.911,  # python-blosc2's blosc2.schema_compiler names (ctable.schema)
    "dictionary_column": 8.912,  # python-blosc2's blosc2.dictionary_column (ctable.strings)
    "_utf8_array": 8.913,  # python-blosc2's blosc2._utf8_array names (ctable.utf8array)
    "scalar_array": 8.914,  # python-blosc2's blosc2.scalar_array names (ctable.scalararray)
    "utf8_dispatch": 8.915,  # asarray/zeros/empty/ones/full: StringDType to a UTF8Array
    "tree_store": 8.92,
    "embed_store": 8.93,
    "core": 8.94,  # python-blosc2's blosc2.core helpers (normalize_urlpath, localize_fsspec_url)
    "blosc2_ext": 8.95,  # python-blosc2's blosc2_ext names: VL-chunk functions, open
    "compat": 9,
    "hdf5": 9.5,  # Blosc/Blosc2 in HDF5 through h5py (extra hdf5), over api and ndarray
    "xarray": 9.6,  # the xarray backend and writer (extra xarray), over ndarray
    "_engine_names": 10,  # the engine's names at the top level (re-exports of compute, dsl, linalg)
    "__init__": 11,  # the public API: re-exports
    "cli": 12,  # a user of the public API
    "__main__": 12.5,
}
REFERENCE_LIBS = {"blosc2", "blosc", "numcodecs", "zarr"}
# zarr is an optional dependency, imported only by the zarr codec adapter.
ALLOWED = {("compat", "zarr_codec.py"): {"zarr"}, ("compat", "zarr_blosc2.py"): {"zarr"}}
MODULES = sorted(SRC.rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join(("pyblosc2", *parts))


def _imports(path: Path) -> list[tuple[str, bool, int]]:
    """(module, is it pyblosc2's own, line) of every import in ``path``; own modules are
    named without the ``pyblosc2.`` prefix, ``from X import name`` as ``X.name``."""
    tree = ast.parse(path.read_text())
    pkg = path.relative_to(SRC).parts[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                mod = ".".join((*base, *(node.module.split(".") if node.module else ())))
                own = True
            elif node.module:
                own = node.module == "pyblosc2" or node.module.startswith("pyblosc2.")
                mod = node.module.removeprefix("pyblosc2").lstrip(".") if own else node.module
            else:
                continue
            found += [(f"{mod}.{a.name}".lstrip("."), own, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                own = a.name == "pyblosc2" or a.name.startswith("pyblosc2.")
                name = a.name.removeprefix("pyblosc2").lstrip(".") if own else a.name
                found.append((name, own, node.lineno))
    return found


def _graph() -> dict[str, set[str]]:
    """Module -> the pyblosc2 modules it imports (a name imported from a package counts as
    its submodule when there is one, else as the package; a submodule's import of one of its
    own ancestor packages is not an edge)."""
    known = {_name(p) for p in MODULES}
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        me = _name(path)
        out = graph.setdefault(me, set())
        for mod, own, _ in _imports(path):
            if not own:
                continue
            target = f"pyblosc2.{mod}".rstrip(".")
            while target not in known:
                target = target.rpartition(".")[0]
            if target != me and not me.startswith(target + "."):
                out.add(target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _layer(top: str) -> float:
    return LAYERS[top.removesuffix(".py")]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_down_the_layers(path: Path) -> None:
    rel = path.relative_to(SRC).parts
    mine = _layer(rel[0])
    for mod, own, line in _imports(path):
        top = mod.split(".")[0]
        if not own:
            if top not in ALLOWED.get(rel, set()):
                assert top not in REFERENCE_LIBS, f"{path.name}:{line} imports {mod}"
            continue
        if not top or top.startswith("__version__"):  # the package itself: its public API
            top = "__init__"
        same_pkg = len(rel) > 1 and top == rel[0]
        assert _layer(top) < mine or same_pkg, f"{'/'.join(rel)}:{line} imports {mod}"


def test_no_import_circle() -> None:
    circles = _circles(_graph())
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _circles(graph) == [["a", "b", "c"]]


def test_every_top_level_module_is_a_package_or_a_layers_single_file() -> None:
    tops = {p.relative_to(SRC).parts[0] for p in MODULES}
    assert {t.removesuffix(".py") for t in tops} == set(LAYERS), "LAYERS lists every top level"
    files = [t.removesuffix(".py") for t in tops if t.endswith(".py")]
    shared = Counter(LAYERS[t] for t in LAYERS if t not in files)  # packages' layers
    for f in files:
        others = [t for t in LAYERS if t != f and LAYERS[t] == LAYERS[f]]
        assert not others and not shared[LAYERS[f]], f"{f}.py shares layer {LAYERS[f]}: {others}"


@pytest.mark.parametrize(
    "path", [p for p in MODULES if p.relative_to(SRC).parts[0] != "kernels"], ids=str
)
def test_only_the_kernel_protocol_is_imported(path: Path) -> None:
    for mod, own, line in _imports(path):
        parts = mod.split(".")
        if own and parts[0] == "kernels" and len(parts) > 1:
            assert parts[1] in (
                "active",
                "KernelSet",
                "kernel_sets",
                "kernels_in_use",
                "use_kernels",
                "kernels_status",
                "wait_for_kernels",
                "ENV_VAR",
                "base",
            ), f"{path.relative_to(SRC)}:{line} imports the kernel implementation {mod}"


def test_import_pyblosc2_and_its_compat_package_import_no_zarr_nor_numcodecs() -> None:
    """The zarr codec's module imports zarr (its codec subclasses zarr's BytesBytesCodec): it
    is the ``[zarr]`` adapter, loaded by zarr's entry point or an explicit import only."""
    code = (
        "import sys, pyblosc2, pyblosc2.compat, pyblosc2.api;"
        "print(sorted({'zarr', 'numcodecs'} & set(sys.modules)))"
    )
    out = run_child(
        [sys.executable, "-c", code],
        "import pyblosc2, compat and api",
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_import_pyblosc2_loads_none_of_numpys_lazy_submodules() -> None:
    """``import pyblosc2`` takes numpy's namespace as loaded: a walk of ``getattr`` over
    ``dir(np)`` imported f2py, testing (and unittest), ma, polynomial and random, a tenth of
    the import and of a fresh process's first read (issue 35)."""
    lazy = ["numpy.f2py", "numpy.testing", "unittest", "numpy.ma", "numpy.polynomial"]
    # numpy 1.x (the floors run) imports some of them itself: only those pyblosc2 adds count
    code = (
        "import sys, numpy; before = set(sys.modules); import pyblosc2; "
        f"print(sorted(set({lazy!r}) & (set(sys.modules) - before)))"
    )
    out = run_child(
        [sys.executable, "-c", code],
        "import pyblosc2",
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"
