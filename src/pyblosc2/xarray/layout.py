"""The store layout of ``xarray-blosc2`` (1.7): what its files hold, read without it.

A dataset is a directory (``*.b2``) or a zip of one (``*.b2z``, members ``ZIP_STORED``):

* ``<name>.b2nd`` per data variable: an NDArray whose ``vlmeta`` holds ``dims`` (list),
  ``var`` (the name), ``units``/``long_name`` (copies of those attributes), ``attrs`` (a
  JSON string of the other attributes), and statistics (``nbytes``, ``cbytes``, ``cratio``)
  and ``lineage`` (a JSON string) that readers ignore;
* ``_coord_<name>.b2nd`` per coordinate: ``dims`` (``["_scalar"]`` for a 0-d coordinate,
  stored as one item), ``is_coord``, ``coord_name``; a string coordinate is stored as int32
  positions with ``dtype: "string"`` and its values in ``labels``;
* ``dataset.json``: ``data_vars``, ``coords``, ``dims``, the dataset ``attrs``,
  ``variable_attrs`` (every variable's attributes; they win over the vlmeta copies) and
  ``lineage`` (which the reader turns into a JSON-string ``lineage`` attribute);
* other files starting with ``_`` are sidecars: ``_commit.b2nd`` (a 0-d int64: the number of
  ``time`` steps committed; the reader trims ``time`` to it).

Values are stored as numpy gives them (datetimes as ``datetime64``), with no CF encoding.
pyblosc2 also stores each variable's xarray ``encoding`` as a JSON string in the vlmeta key
``encoding`` (ignored by xarray-blosc2) so that it round-trips.

A store is read as one from someone else: a zip through the stores' checked reader
(:class:`~pyblosc2.stores.zipindex.ZipIndex`, deflated members inflated by
:mod:`~pyblosc2.stores.zipmember`), a directory's files only when they are regular files
inside it (others are left out with a warning), JSON within bounds
(:func:`~pyblosc2.meta.jsondoc.loads_json`).
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..backends.file import FileStore
from ..errors import FormatError
from ..meta.jsondoc import MAX_JSON_BYTES, loads_json
from ..ndarray.constructors import ndarray_from_cframe, open
from ..ndarray.ndarray import NDArray
from ..stores.discovery import refusal, store_file
from ..stores.zipindex import Member, ZipIndex
from ..stores.zipmember import member_bytes

__all__ = [
    "MANIFEST",
    "Entry",
    "StoreContents",
    "StoredVariable",
    "entries",
    "is_store",
    "read_manifest",
    "read_store",
]

MANIFEST = "dataset.json"
COORD_PREFIX = "_coord_"
COMMIT = "_commit"
SCALAR_DIM = "_scalar"
ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True)
class Entry:
    """One ``.b2nd`` of a store: its stem and how to open it (lazily where possible)."""

    stem: str
    opener: Callable[[], NDArray]

    @property
    def is_sidecar(self) -> bool:
        return self.stem.startswith("_") and not self.stem.startswith(COORD_PREFIX)


def is_zip(path: Path) -> bool:
    if path.suffix == ".b2z":
        return True
    with path.open("rb") as f:
        return f.read(4) == ZIP_MAGIC


def read_manifest(root: Path) -> dict[str, Any]:
    """``dataset.json`` of a directory or zip store ({} when absent), read and decoded within
    bounds (:data:`MAX_JSON_BYTES`, :func:`~pyblosc2.meta.jsondoc.loads_json`)."""
    if root.is_dir():
        path = store_file(os.fspath(root), MANIFEST, f"xarray-blosc2 store {root}")
        if not os.path.lexists(path):
            return {}
        with contextlib.closing(FileStore(path)) as f:  # a regular file only
            if f.size > MAX_JSON_BYTES:
                raise FormatError(path, "size", None, f"at most {MAX_JSON_BYTES}", f.size)
            return _json(bytes(f.read(0, f.size)), path)
    with contextlib.closing(FileStore(os.fspath(root))) as store:
        index = ZipIndex.read(store)
        names = [n for n in index if n.endswith(MANIFEST)]
        if not names:
            return {}
        raw = member_bytes(store, index[names[0]], f"zip archive {root}", MAX_JSON_BYTES)
    return _json(raw, f"{root}:{names[0]}")


def _json(raw: bytes, where: str) -> dict[str, Any]:
    got = loads_json(raw, where, "manifest")
    if not isinstance(got, dict):
        raise FormatError(where, "manifest JSON", None, "a JSON object", type(got).__name__)
    return got


def entries(root: Path, refuse: bool = True) -> list[Entry]:
    """The ``.b2nd`` arrays of a directory or zip store, sorted by name (as xarray-blosc2
    reads them). Zip members stored uncompressed are opened in place (lazily, at their
    offset); compressed ones are read into memory. ``refuse``: raise NotImplementedError
    for the features of xarray-blosc2 pyblosc2 does not read (the manifest is read)."""
    if root.is_dir():
        if refuse:
            _refuse_unsupported(root, [p.name for p in root.iterdir()])
        return [Entry(p.stem, partial(open_file, p)) for p in _arrays_in(root)]
    with contextlib.closing(FileStore(os.fspath(root))) as store:
        index = ZipIndex.read(store)
    if refuse:
        _refuse_unsupported(root, list(index))
    out = []
    for name in sorted(index):
        if not name.endswith(".b2nd"):
            continue
        m = index[name]
        opener = partial(_open_at, root, m.offset) if m.stored else partial(_open_member, root, m)
        out.append(Entry(Path(name).stem, opener))
    return out


def _arrays_in(root: Path) -> list[Path]:
    """The ``.b2nd`` files of a directory store, sorted; one that is a symlink out of the
    directory (or not a regular file) is left out with a ``UserWarning``, as a store's leaf
    is (:func:`pyblosc2.stores.discovery.refusal`)."""
    real = os.path.realpath(root)
    found = []
    for p in sorted(root.glob("*.b2nd")):
        why = refusal(real, os.fspath(p))
        if why is not None:
            warnings.warn(f"Ignoring '{p.name}' of {root}: {why}", UserWarning, stacklevel=3)
            continue
        found.append(p)
    return found


def _refuse_unsupported(root: Path, names: list[str]) -> None:
    """xarray-blosc2 features pyblosc2 does not read: NotImplementedError naming them."""
    if any(n.endswith(".zstd") for n in names):
        raise NotImplementedError(f"xarray-blosc2 zstd-dictionary variables (.zstd) in {root}")
    if any(n.endswith(".b2enc") for n in names):
        raise NotImplementedError(f"xarray-blosc2 encrypted variables (.b2enc) in {root}")
    manifest = read_manifest(root)
    if manifest.get("geogrid"):
        raise NotImplementedError(f"xarray-blosc2 geogrid-encoded variables in {root}")


def open_file(path: Path) -> NDArray:
    arr = open(os.fspath(path), mode="r")
    if not isinstance(arr, NDArray):
        raise FormatError(str(path), "metalayers", None, "a b2nd array", "a plain super-chunk")
    return arr


def _open_at(path: Path, offset: int) -> NDArray:
    arr = open(os.fspath(path), mode="r", offset=offset)
    if not isinstance(arr, NDArray):
        raise FormatError(str(path), "metalayers", offset, "a b2nd array", "a plain super-chunk")
    return arr


def _open_member(path: Path, member: Member) -> NDArray:
    """A deflated member, inflated into memory (checked against its declared size)."""
    with contextlib.closing(FileStore(os.fspath(path))) as store:
        frame = member_bytes(store, member, f"zip archive {path}")
    return ndarray_from_cframe(frame, copy=True)


#: the vlmeta entries a reader uses (xarray-blosc2 also stores statistics and lineage)
VLMETA_KEYS = (
    *("dims", "var", "coord_name", "is_coord", "dtype", "labels"),
    *("units", "long_name", "attrs", "encoding"),
)


def vlmeta_dict(arr: NDArray) -> dict[str, Any]:
    """The vlmeta entries of an array a reader uses (only those are decoded)."""
    vm = arr.vlmeta
    names = set(vm)
    return {k: vm[k] for k in VLMETA_KEYS if k in names}


def json_attrs(raw: Any) -> dict[str, Any]:
    """The ``attrs`` vlmeta entry: a JSON string of a dict ({} when absent or not one, or
    past the bounds of :func:`~pyblosc2.meta.jsondoc.loads_json`: xarray-blosc2 ignores
    attributes it cannot decode).

    >>> json_attrs('{"units": "m"}'), json_attrs("[" * 100 + "]" * 100)
    ({'units': 'm'}, {})
    """
    if not isinstance(raw, str):
        return {}
    try:
        got = loads_json(raw, "vlmeta", "attrs")
    except FormatError:
        return {}
    return got if isinstance(got, dict) else {}


@dataclass(frozen=True)
class StoredVariable:
    """One array of a store as xarray-blosc2 records it: its name and dims, whether it is a
    coordinate, its attributes (vlmeta copies, then the manifest's, which win) and the
    encoding pyblosc2 keeps; a string coordinate's values (``labels``, the array holds their
    positions); ``scalar``: a 0-d coordinate stored as one item."""

    stem: str
    name: str
    dims: tuple[str, ...]
    is_coord: bool
    attrs: dict[str, Any]
    encoding: dict[str, Any]
    array: NDArray
    labels: list[str] | None = None
    scalar: bool = False


@dataclass(frozen=True)
class StoreContents:
    """A store's variables (in file name order), dataset attributes and manifest, and the
    committed extent of ``time`` that ``_commit.b2nd`` records (None without one)."""

    variables: list[StoredVariable]
    attrs: dict[str, Any]
    manifest: dict[str, Any]
    committed: int | None = None


def is_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an xarray-blosc2 store by its content: a directory or zip holding a
    ``dataset.json`` or ``.b2nd`` arrays with ``dims`` in their vlmeta, and no ``embed.b2e``
    (python-blosc2's DictStore/TreeStore have one)."""
    root = Path(path)
    try:
        if root.is_dir():
            names = [p.name for p in root.iterdir()]
        elif root.is_file():
            with contextlib.closing(FileStore(os.fspath(root))) as store:
                names = list(ZipIndex.read(store))
        else:
            return False
    except (OSError, FormatError):
        return False
    if any(n == "embed.b2e" or n.endswith("/embed.b2e") for n in names):
        return False
    if MANIFEST in names:
        return True
    if not any(n.endswith(".b2nd") for n in names):
        return False
    try:
        found = entries(root, refuse=False)
        return bool(found) and "dims" in set(found[0].opener().vlmeta)
    except (ValueError, OSError, NotImplementedError):
        return False


def read_store(path: str | os.PathLike[str], drop: frozenset[str] = frozenset()) -> StoreContents:
    """The variables (arrays opened lazily), attributes and committed extent of the store at
    ``path`` (a ``.b2`` directory, a ``.b2z`` zip or a single ``.b2nd``), variables named in
    ``drop`` left out."""
    root = Path(path)
    if root.is_dir():
        nested = [d for d in root.iterdir() if d.is_dir() and any(d.glob("*.b2nd"))]
        shards = list(root.glob("*.b2z"))
        if not any(root.glob("*.b2nd")) and (nested or shards):
            raise NotImplementedError(
                f"nested or sharded xarray-blosc2 stores (sub-stores of {root}); open each "
                "one and combine them with xarray.combine_by_coords"
            )
        items = entries(root)
    elif root.suffix == ".b2nd":
        items = [Entry(root.stem, partial(open_file, root))]
    elif root.is_file() and is_zip(root):
        items = entries(root)
    else:
        raise FileNotFoundError(f"not an xarray-blosc2 store: {root}")
    manifest = read_manifest(root) if root.suffix != ".b2nd" else {}
    var_attrs: dict[str, dict[str, Any]] = manifest.get("variable_attrs") or {}
    attrs: dict[str, Any] = dict(manifest.get("attrs") or {})
    lineage = manifest.get("lineage")
    if lineage:
        attrs["lineage"] = lineage if isinstance(lineage, str) else json.dumps(lineage)
    variables, committed = [], None
    for entry in items:
        if entry.is_sidecar:
            if entry.stem == COMMIT:
                committed = int(entry.opener()[()])
            continue
        arr = entry.opener()
        vm = vlmeta_dict(arr)
        is_coord = bool(vm.get("is_coord", False))
        name = str(vm.get("coord_name") or vm.get("var") or entry.stem)
        if name in drop:
            continue
        dims = tuple(str(d) for d in vm.get("dims") or [f"dim_{i}" for i in range(arr.ndim)])
        a: dict[str, Any] = {k: vm[k] for k in ("units", "long_name") if k in vm}
        a.update(json_attrs(vm.get("attrs")))
        a.update(var_attrs.get(name, {}))
        labels = None
        if is_coord and vm.get("dtype") == "string":
            labels = [str(x) for x in vm.get("labels", [])]
        scalar = dims == (SCALAR_DIM,)
        if not scalar and labels is None and len(dims) != arr.ndim:
            raise FormatError(entry.stem, "dims", None, f"{arr.ndim} names", list(dims))
        variables.append(
            StoredVariable(
                entry.stem,
                name,
                () if scalar else dims,
                is_coord,
                a,
                json_attrs(vm.get("encoding")),
                arr,
                labels,
                scalar,
            )
        )
    return StoreContents(variables, attrs, manifest, committed)
