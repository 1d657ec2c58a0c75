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
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..ndarray.constructors import ndarray_from_cframe, open
from ..ndarray.ndarray import NDArray

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
#: the fixed part of a zip local file header, then the name and extra lengths at 26 and 28
_LOCAL_HEADER = struct.Struct("<4s22xHH")


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
    """``dataset.json`` of a directory or zip store ({} when absent)."""
    if root.is_dir():
        p = root / MANIFEST
        return _json(p.read_bytes(), str(p)) if p.exists() else {}
    with zipfile.ZipFile(root) as zf:
        names = [n for n in zf.namelist() if n.endswith(MANIFEST)]
        return _json(zf.read(names[0]), f"{root}:{names[0]}") if names else {}


def _json(raw: bytes, where: str) -> dict[str, Any]:
    try:
        got = json.loads(raw)
    except ValueError as exc:
        raise FormatError(where, "JSON", None, "a JSON object", str(exc)) from None
    if not isinstance(got, dict):
        raise FormatError(where, "JSON", None, "a JSON object", type(got).__name__)
    return got


def entries(root: Path, refuse: bool = True) -> list[Entry]:
    """The ``.b2nd`` arrays of a directory or zip store, sorted by name (as xarray-blosc2
    reads them). Zip members stored uncompressed are opened in place (lazily, at their
    offset); compressed ones are read into memory. ``refuse``: raise NotImplementedError
    for the features of xarray-blosc2 pyblosc2 does not read (the manifest is read)."""
    if root.is_dir():
        if refuse:
            _refuse_unsupported(root, [p.name for p in root.iterdir()])
        return [Entry(p.stem, partial(open_file, p)) for p in sorted(root.glob("*.b2nd"))]
    with zipfile.ZipFile(root) as zf:
        infos = zf.infolist()
        if refuse:
            _refuse_unsupported(root, [i.filename for i in infos])
        out = []
        for info in sorted(infos, key=lambda i: i.filename):
            if not info.filename.endswith(".b2nd"):
                continue
            stem = Path(info.filename).stem
            if info.compress_type == zipfile.ZIP_STORED:
                offset = _data_offset(root, info)
                out.append(Entry(stem, partial(_open_at, root, offset)))
            else:
                out.append(Entry(stem, partial(_open_member, root, info.filename)))
        return out


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


def _open_member(path: Path, name: str) -> NDArray:
    with zipfile.ZipFile(path) as zf:
        return ndarray_from_cframe(zf.read(name), copy=True)


def _data_offset(path: Path, info: zipfile.ZipInfo) -> int:
    """Where a stored member's bytes start: after its local header (whose extra field may
    differ from the central directory's)."""
    with path.open("rb") as f:
        f.seek(info.header_offset)
        head = f.read(_LOCAL_HEADER.size)
    if len(head) < _LOCAL_HEADER.size:
        raise FormatError(str(path), "zip local header", info.header_offset, "30 bytes", len(head))
    magic, name_len, extra_len = _LOCAL_HEADER.unpack(head)
    if magic != ZIP_MAGIC:
        raise FormatError(str(path), "zip local header", info.header_offset, ZIP_MAGIC, magic)
    return info.header_offset + _LOCAL_HEADER.size + name_len + extra_len


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
    """The ``attrs`` vlmeta entry: a JSON string of a dict ({} when absent or not one)."""
    if not isinstance(raw, str):
        return {}
    try:
        got = json.loads(raw)
    except ValueError:
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
        elif root.is_file() and zipfile.is_zipfile(root):
            with zipfile.ZipFile(root) as zf:
                names = zf.namelist()
        else:
            return False
    except (OSError, zipfile.BadZipFile):
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
