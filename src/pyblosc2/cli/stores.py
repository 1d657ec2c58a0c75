"""``info``, ``verify`` and ``convert`` for stores: a ``.b2z`` archive, a ``.b2d`` directory
(DictStore/TreeStore) or a ``.b2e`` EmbedStore.

A store is described by its leaves, one row each: the key, where its frame lies (an
external file or archive member, or embedded in ``embed.b2e``) and what it holds (the
fields ``info`` gives a frame). ``verify`` checks every leaf's frame as it checks a frame
file (every chunk decoded, fingerprint digests compared) and the embedded store's own
frame; a leaf that cannot be opened is damage. ``convert`` moves a store between its two
forms (``.b2z`` <-> ``.b2d``), members copied as they are.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from typing import Any

import pyblosc2

from . import info as info_mod
from . import verify as verify_mod
from .sources import CliError, Source, about

__all__ = ["convert", "describe", "format_text", "handles", "verify"]

STORES = (pyblosc2.DictStore, pyblosc2.EmbedStore)
EMBED_FILE = "embed.b2e"
EMBED = f"({EMBED_FILE})"


def handles(path: str) -> bool:
    """Whether ``path`` names a store: by its suffix, a directory holding ``embed.b2e``, or a
    zip archive (what it really is, ``pyblosc2.open`` finds out)."""
    if path == "-" or not os.path.exists(path):
        return False
    if path.endswith((".b2z", ".b2d", ".b2e")):
        return True
    if os.path.isdir(path):
        return os.path.isfile(os.path.join(path, EMBED_FILE))
    return zipfile.is_zipfile(path)


def _open(path: str) -> Any:
    with about(path):
        store = pyblosc2.open(path, mode="r")
        if isinstance(store, pyblosc2.CTable):  # a table's own store: its leaves are listed
            store.close()
            store = pyblosc2.TreeStore(path, mode="r")
    if not isinstance(store, STORES):
        raise CliError(path, f"not a store (a {type(store).__name__})")
    return store


@dataclass(frozen=True)
class Leaf:
    """One stored value: its key and where its frame lies."""

    key: str
    where: str  # "external" or "embedded"
    file: str | None = None  # relative path (directory) or member name (archive)


def leaves(store: Any) -> list[Leaf]:
    """Every stored value of ``store``, group vlmeta holders included, by key."""
    if isinstance(store, pyblosc2.EmbedStore):
        return [Leaf(k, "embedded") for k in sorted(store.keys())]
    external = dict(store.map_tree)
    found = [Leaf(k, "external", rel) for k, rel in external.items()]
    found += [Leaf(k, "embedded") for k in store.estore if k not in external]
    return sorted(found, key=lambda leaf: leaf.key)


def _frame(store: Any, leaf: Leaf) -> Any:
    """The NDArray or SChunk of ``leaf``'s frame, whatever container it makes."""
    if leaf.where == "embedded":
        estore = store if isinstance(store, pyblosc2.EmbedStore) else store.estore
        cframe = estore.cframe(leaf.key)
        s = pyblosc2.schunk_from_cframe(cframe)
        return pyblosc2.ndarray_from_cframe(cframe) if "b2nd" in s.meta else s
    window = store.member_window(leaf.key)
    if window is not None:
        return pyblosc2.blosc2_ext.open(store.localpath, "r", window[0])
    path = os.path.join(store.working_dir, *str(leaf.file).split("/"))
    return pyblosc2.blosc2_ext.open(path, "r", 0)


def _source(path: str, store: Any, leaf: Leaf) -> Source:
    obj = _frame(store, leaf)
    kind = "ndarray" if isinstance(obj, pyblosc2.NDArray) else "schunk"
    return Source(f"{path}:{leaf.key}", kind, obj)


def _format(store: Any) -> str:
    if isinstance(store, pyblosc2.EmbedStore):
        return "b2e"
    return "b2z" if store.is_zip_store else "b2d"


def describe(path: str, chunks: bool = False) -> dict[str, Any]:
    """What ``info`` reports about the store at ``path``, as plain JSON types."""
    store = _open(path)
    d: dict[str, Any] = {"path": path, "store": type(store).__name__, "format": _format(store)}
    d["entries"] = len(store)
    if isinstance(store, pyblosc2.TreeStore):
        with about(path):
            d["vlmeta"] = info_mod.jsonable(store.vlmeta[:])
    rows = []
    for leaf in leaves(store):
        row: dict[str, Any] = {"key": leaf.key, "where": leaf.where}
        if leaf.file is not None:
            row["file"] = leaf.file
        embedded_only = isinstance(store, pyblosc2.EmbedStore)
        window = None if embedded_only else store.member_window(leaf.key)
        if window is not None:
            row["offset"], row["frame_bytes"] = window
        try:
            with about(f"{path}:{leaf.key}"):
                source = _source(path, store, leaf)
                row.update(info_mod.describe(source, chunks=chunks))
                layers = set(source.schunk.meta)
                for layer, (name, _) in pyblosc2.stores.CONTAINER_OPENERS.items():
                    if layer in layers:
                        row["kind"] = name  # a frame of a python-blosc2 container
        except CliError as exc:
            row["error"] = exc.message
        row.pop("path", None)
        rows.append(row)
    d["leaves"] = rows
    return d


_COLUMNS = ("key", "where", "kind", "shape", "dtype", "nbytes", "cbytes", "ratio", "codec")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return str(tuple(value))
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def format_text(d: dict[str, Any]) -> str:
    """``describe``'s dict as ``key: value`` lines and a table of the leaves."""
    names = {"b2z": "zip archive", "b2d": "directory", "b2e": "embedded store file"}
    lines = [
        f"{d['path']}:",
        f"  kind    : {d['store']}",
        f"  format  : {d['format']} ({names[d['format']]})",
        f"  entries : {d['entries']}",
    ]
    if d.get("vlmeta"):
        lines.append("  vlmeta  :")
        lines.extend(f"    {k}: {v!r}" for k, v in d["vlmeta"].items())
    cells = [
        [_cell(row.get(c)) if "error" not in row or c in ("key", "where") else "" for c in _COLUMNS]
        for row in d["leaves"]
    ]
    for row, line in zip(d["leaves"], cells, strict=True):
        if "error" in row:
            line[2] = f"error: {row['error']}"
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(_COLUMNS)]
    lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)))
    lines.extend(
        "  " + "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip() for r in cells
    )
    return "\n".join(lines)


def _embedded_store_frame(store: Any) -> Any:
    """The super-chunk of the store's ``embed.b2e`` (opened as a frame)."""
    if isinstance(store, pyblosc2.EmbedStore):
        return pyblosc2.blosc2_ext.open(store.urlpath, "r", 0)
    if store.is_zip_store:
        return pyblosc2.blosc2_ext.open(store.localpath, "r", store.offsets[EMBED_FILE]["offset"])
    return pyblosc2.blosc2_ext.open(store.estore_path, "r", 0)


def verify(path: str, show_progress: bool = False) -> tuple[list[str], int]:
    """Verify every leaf (and the embedded store's frame): report lines and exit status."""
    store = _open(path)
    status, lines, count = verify_mod.INTACT, [], 0
    checks = [(EMBED, None), *((leaf.key, leaf) for leaf in leaves(store))]
    for name, leaf in checks:
        count += 1

        def source(name: str = name, leaf: Any = leaf) -> Source:
            if leaf is None:
                return Source(f"{path}:{name}", "schunk", _embedded_store_frame(store))
            return _source(path, store, leaf)

        found_status, found_lines = verify_mod.verify_member(
            name, f"{path}:{name}", source, show_progress, strip=f"{path}:"
        )
        status = max(status, found_status)
        lines += found_lines
    head = "OK" if status == verify_mod.INTACT else "DAMAGED"
    return [f"{path}: {head} ({count} frames checked)", *lines], status


def convert(args: Any) -> int:
    """``convert STORE OUT``: between a ``.b2z`` archive and a ``.b2d`` directory."""
    options = ("codec", "clevel", "filter", "chunks", "blocks", "typesize", "dtype")
    given = [o for o in options if getattr(args, o, None)]
    if given:
        raise CliError(args.output, f"a store is repacked as it is: --{given[0]} does not apply")
    out = args.output
    fmt = args.format or {".b2z": "b2z", ".b2d": "b2d"}.get(os.path.splitext(out)[1])
    if fmt not in ("b2z", "b2d"):
        raise CliError(out, "a store converts to a .b2z archive or a .b2d directory")
    store = _open(args.input)
    if isinstance(store, pyblosc2.EmbedStore):
        raise CliError(args.input, "an EmbedStore (.b2e) is one file: copy it")
    with about(out):
        if fmt == "b2z":
            store.to_b2z(filename=out, overwrite=True)
        else:
            if os.path.exists(out):
                raise CliError(out, "already exists (remove it first)")
            store.to_b2d(out)
    return 0
