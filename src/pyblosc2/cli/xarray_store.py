"""``info``, ``verify`` and ``convert`` for xarray-blosc2 stores: a ``.b2`` directory or a
``.b2z`` zip of ``.b2nd`` arrays and ``dataset.json`` (:mod:`pyblosc2.xarray.layout`; no
xarray needed). A ``.b2z`` may also be a python-blosc2 DictStore/TreeStore: those hold an
``embed.b2e`` and are left to :mod:`.stores`.

``info STORE`` lists the dims, the dataset attributes and one row per variable (data or
coordinate: dims, shape, dtype, chunks, codec, ratio, attributes); ``info STORE:NAME`` one
variable, with everything ``info`` says about its array. ``verify`` decodes every array of
the store (its ``.b2nd`` frames, as for frame files) and reads the manifest; an array that
cannot be opened is damage. ``convert STORE:NAME OUT`` converts one variable (its array, with
its vlmeta; a string coordinate's labels as a unicode array).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..xarray import layout
from . import info as info_mod
from . import verify as verify_mod
from .arrays import ArraySource, FrameArray, MappedArray
from .sources import CliError, Source, about
from .tables import cell, table

__all__ = ["describe", "format_text", "handles", "split_variable", "variable_source", "verify"]

#: the array fields ``info`` shows in a store's table (from :func:`pyblosc2.cli.info.describe`)
_ARRAY_FIELDS = ("shape", "dtype", "chunks", "blocks", "codec", "clevel", "filters")
_SIZE_FIELDS = ("nbytes", "cbytes", "ratio")


def split_variable(path: str) -> tuple[str, str] | None:
    """``(store, variable)`` when ``path`` is ``<xarray-blosc2 store>:<name>``, else None."""
    store, sep, name = path.rpartition(":")
    if not sep or not name or "/" in name or not store or not layout.is_store(store):
        return None
    return store, name


def handles(path: str) -> bool:
    """Whether ``path`` is an xarray-blosc2 store (by its content) or one of its variables."""
    return path != "-" and (layout.is_store(path) or split_variable(path) is not None)


def _read(path: str) -> layout.StoreContents:
    with about(path):
        return layout.read_store(path)


def _variable(store: layout.StoreContents, name: str, where: str) -> layout.StoredVariable:
    for v in store.variables:
        if v.name == name:
            return v
    names = ", ".join(v.name for v in store.variables)
    raise CliError(where, f"no variable {name!r} in the store (it has: {names})")


def _role(v: layout.StoredVariable) -> str:
    return "coord" if v.is_coord else "data"


def _describe_variable(path: str, v: layout.StoredVariable, full: bool) -> dict[str, Any]:
    """One variable; ``full``: with everything ``info`` says about its array (``array``),
    else with its main fields only."""
    row: dict[str, Any] = {"name": v.name, "role": _role(v), "dims": list(v.dims)}
    with about(f"{path}:{v.name}"):
        frame = info_mod.describe(Source(f"{v.stem}.b2nd", "ndarray", v.array))
    if v.labels is not None:  # the array holds positions into the labels
        row.update(shape=[len(v.labels)], dtype="str (labels)")
    elif v.scalar:
        row.update(shape=[], dtype=frame["dtype"])
    row["file"] = f"{v.stem}.b2nd"
    if full:
        row["array"] = frame
    else:
        row.update({k: frame.get(k) for k in (*_ARRAY_FIELDS, *_SIZE_FIELDS) if k not in row})
    if v.attrs:
        row["attrs"] = info_mod.jsonable(v.attrs)
    return row


def describe(path: str, chunks: bool = False) -> dict[str, Any]:
    """What ``info`` reports about a store (or ``STORE:NAME``), as plain JSON types."""
    del chunks  # no per-chunk table for stores
    split = split_variable(path)
    root = split[0] if split else path
    store = _read(root)
    if split is not None:
        v = _variable(store, split[1], path)
        return {"path": path, "kind": "xarray-blosc2 variable", **_describe_variable(root, v, True)}
    form = "directory" if os.path.isdir(root) else "zip archive"
    dims: dict[str, int] = {}
    for v in store.variables:
        shape = [len(v.labels)] if v.labels is not None else list(v.array.shape)
        for dim, n in zip(v.dims, shape, strict=False):
            dims.setdefault(dim, int(n))
    d: dict[str, Any] = {"path": path, "kind": f"xarray-blosc2 store ({form})", "dims": dims}
    d["coords"] = [v.name for v in store.variables if v.is_coord]
    d["data_vars"] = [v.name for v in store.variables if not v.is_coord]
    d["attrs"] = info_mod.jsonable(store.attrs)
    if store.committed is not None:
        d["committed_extent"] = store.committed
    d["variables"] = [_describe_variable(path, v, False) for v in store.variables]
    return d


_COLUMNS = ("name", "role", "dims", "shape", "dtype", "chunks", "codec", "ratio", "attrs")


def format_text(d: dict[str, Any]) -> str:
    """``describe``'s dict for people."""
    lines = [f"{d['path']}:"]
    if "variables" not in d:  # one variable: its fields, then its array's
        keys = [k for k in d if k not in ("path", "array")]
        width = max(len(k) for k in keys)
        lines += [f"  {k:<{width}}: {cell(d[k])}" for k in keys]
        array = info_mod.format_text(d["array"]).splitlines()
        return "\n".join(
            [*lines, f"  array ({array[0].rstrip(':')}):", *("  " + x for x in array[1:])]
        )
    lines.append(f"  kind  : {d['kind']}")
    lines.append("  dims  : " + ", ".join(f"{k}={n}" for k, n in d["dims"].items()))
    if d["attrs"]:
        lines.append("  attrs :")
        lines += [f"    {k}: {v!r}" for k, v in d["attrs"].items()]
    if "committed_extent" in d:
        lines.append(f"  committed_extent: {d['committed_extent']} (of time)")
    cells = [[cell(row.get(c)) for c in _COLUMNS] for row in d["variables"]]
    return "\n".join([*lines, *table(_COLUMNS, cells)])


def verify(path: str, show_progress: bool = False) -> tuple[list[str], int]:
    """Decode every array of the store (or ``STORE:NAME``'s): report lines and status."""
    split = split_variable(path)
    root = split[0] if split else path
    with about(root):
        found = layout.entries(Path(root), refuse=False)
    status, lines, count = verify_mod.INTACT, [], 0
    if split is None:
        try:
            layout.read_manifest(Path(root))
        except ValueError as exc:
            status = verify_mod.DAMAGED
            lines.append(f"  {layout.MANIFEST}: DAMAGED ({exc})")
    for entry in found:
        label = f"{entry.stem}.b2nd"
        if split is not None and not _names(entry, split[1]):
            continue
        count += 1

        def source(entry: Any = entry, label: str = label) -> Source:
            return Source(label, "ndarray", entry.opener())

        found_status, found_lines = verify_mod.verify_member(
            label, f"{root}:{label}", source, show_progress
        )
        status = max(status, found_status)
        lines += found_lines
    if split is not None and count == 0:
        raise CliError(path, f"no variable {split[1]!r} in the store")
    head = "OK" if status == verify_mod.INTACT else "DAMAGED"
    return [f"{path}: {head} ({count} array{'s' * (count != 1)} checked)", *lines], status


def _names(entry: layout.Entry, name: str) -> bool:
    """Whether the array ``entry`` is variable ``name`` (by its file name, or its vlmeta when
    the file is named otherwise)."""
    if entry.stem in (name, f"{layout.COORD_PREFIX}{name}"):
        return True
    with contextlib.suppress(ValueError, OSError, NotImplementedError):
        vm = layout.vlmeta_dict(entry.opener())
        return name in (vm.get("var"), vm.get("coord_name"))
    return False


def variable_source(store: str, name: str) -> tuple[ArraySource, Source | None]:
    """Variable ``name`` of ``store`` as a ``convert`` input: its array (and the frame, whose
    partition, compression and vlmeta carry over), or a string coordinate's labels."""
    v = _variable(_read(store), name, f"{store}:{name}")
    if v.labels is not None:
        return MappedArray(np.array(v.labels)), None
    return FrameArray("ndarray", v.array), Source(f"{store}:{name}", "ndarray", v.array)
