"""Hostile stores and tables, built on disk as someone else could hand them over: a ``.b2z``
whose zip central directory claims 4 GB members (or overlapping ones, or a deflated member
past deflate's 1032:1), a CTable whose schema document is JSON nested 20,000 deep or larger
than the bound, and ``.b2d`` directories whose leaf, ``embed.b2e`` or table column is a
symlink to a file elsewhere on the machine. Each case is a :class:`~.hostile_files.Case`
(run by test_hostile.py in a limited child process, and by tools/hostile_report.py against
python-blosc2 too); :data:`PYTHON_BLOSC2` records what python-blosc2 4.14.1 answers."""

from __future__ import annotations

import dataclasses
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

import pyblosc2 as pb

from .hostile_files import Case

# -- .b2z archives -----------------------------------------------------------------------------


def _b2z(d: Path) -> Path:
    path = d / "s.b2z"
    with pb.TreeStore(str(path), mode="w") as t:
        t["/a"] = np.arange(100)
        t["/g/b"] = np.arange(50.0)
    return path


def b2z_claiming_4gb(d: Path) -> str:
    """Every central directory entry claims 0xFFFFFFF0 bytes, stored and uncompressed."""
    path = _b2z(d)
    raw = bytearray(path.read_bytes())
    pos = raw.find(b"PK\x01\x02")
    while pos >= 0:
        struct.pack_into("<II", raw, pos + 20, 0xFFFFFFF0, 0xFFFFFFF0)
        pos = raw.find(b"PK\x01\x02", pos + 4)
    path.write_bytes(bytes(raw))
    return str(path)


def b2z_overlapping(d: Path) -> str:
    """The second member's local header offset is the first one's: two names, one data."""
    path = _b2z(d)
    raw = bytearray(path.read_bytes())
    first = raw.find(b"PK\x01\x02")
    second = raw.find(b"PK\x01\x02", first + 4)
    struct.pack_into("<I", raw, second + 42, struct.unpack_from("<I", raw, first + 42)[0])
    path.write_bytes(bytes(raw))
    return str(path)


def b2z_deflate_bomb(d: Path) -> str:
    """A repacked (deflated) archive whose leaf claims 2**32 - 16 bytes uncompressed."""
    path = _b2z(d)
    out = d / "deflated.b2z"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    raw = bytearray(out.read_bytes())
    pos = raw.find(b"PK\x01\x02")
    struct.pack_into("<I", raw, pos + 24, 0xFFFFFFF0)  # the uncompressed size
    out.write_bytes(bytes(raw))
    return str(out)


# -- CTables -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Row:
    x: int = 0


def ctable_with_schema(doc: str, form: str = "b2d") -> Callable[[Path], str]:
    """A table of one row whose ``/_meta`` vlmeta ``schema`` is ``doc``."""

    def build(d: Path) -> str:
        path = d / "t.b2d"
        with pb.CTable(Row, urlpath=str(path), mode="w") as t:
            t.append((1,))
        meta = pb.open(str(path / "_meta.b2f"), mode="a")
        meta.vlmeta["schema"] = doc
        del meta
        if form == "b2d":
            return str(path)
        with pb.TreeStore(str(path), mode="r") as store:
            return store.to_b2z(filename=str(d / "t.b2z"))

    return build


DEEP_JSON = "[" * 20_000 + "]" * 20_000
SCHEMA_DEPTH = r"^CTable: /_meta vlmeta 'schema' JSON nesting depth is 20000, expected at most 64$"

# -- symlinks out of a .b2d --------------------------------------------------------------------


def _secret(d: Path) -> Path:
    """A file elsewhere on the machine: an array of 7s."""
    pb.asarray(np.full(10, 7), urlpath=str(d / "secret.b2nd"), mode="w")
    return d / "secret.b2nd"


def b2d_leaf_symlink_out(d: Path) -> str:
    secret = _secret(d)
    path = d / "s.b2d"
    with pb.TreeStore(str(path), mode="w") as t:
        t["/a"] = np.arange(3)
    (path / "leak.b2nd").symlink_to(secret)
    return str(path)


def b2d_embed_symlink_out(d: Path) -> str:
    path = Path(b2d_leaf_symlink_out(d))
    (path / "leak.b2nd").unlink()
    other = d / "other.b2d"
    pb.TreeStore(str(other), mode="w").close()
    (path / "embed.b2e").unlink()
    (path / "embed.b2e").symlink_to(other / "embed.b2e")
    return str(path)


def ctable_column_symlink_out(d: Path) -> str:
    path = d / "t.b2d"
    with pb.CTable(Row, urlpath=str(path), mode="w") as t:
        t.append((1,))
    col = path / "_cols" / "x.b2nd"
    col.unlink()
    col.symlink_to(_secret(d))
    return str(path)


def ctable_meta_symlink_out(d: Path) -> str:
    """The table's manifest is another table's (elsewhere on the machine)."""
    path = d / "t.b2d"
    with pb.CTable(Row, urlpath=str(path), mode="w") as t:
        t.append((1,))
    other = d / "other.b2d"
    with pb.CTable(Row, urlpath=str(other), mode="w") as t:
        t.append((2,))
    (path / "_meta.b2f").unlink()
    (path / "_meta.b2f").symlink_to(other / "_meta.b2f")
    return str(path)


LEAK = r"a symlink to .*secret.b2nd, outside the store directory, expected a regular file of"
META_LEAK = r"leaf '/_meta' is '_meta.b2f', a symlink to .*other.b2d/_meta.b2f, outside"

STORE_CASES: dict[str, Case] = {
    # 1. one zip reader for opening in place and unpacking into a working copy
    "b2z-sizes-4GB-open": Case(
        b2z_claiming_4gb, "open", "FormatError", r"^zip archive: data of '.*' at offset \d+ is 4294"
    ),
    "b2z-sizes-4GB-treestore-a": Case(
        b2z_claiming_4gb,
        "treestore:a",
        "FormatError",
        r"^zip archive: data of '.*' at offset \d+ is 4294967\d+, expected to end by \d+$",
    ),
    "b2z-overlapping-members-treestore-a": Case(
        b2z_overlapping, "treestore:a", "FormatError", r"expected to end by \d+ \(where '.*' starts"
    ),
    "b2z-deflate-bomb-treestore-a": Case(
        b2z_deflate_bomb,
        "treestore:a",
        "FormatError",
        r"uncompressed size is 4294967280, expected at most \d+ \(1032 x \d+ deflated\)",
    ),
    # 2. the schema document bounded before json decodes it
    "ctable-schema-json-20000-open": Case(
        ctable_with_schema(DEEP_JSON), "ctable-open", "FormatError", SCHEMA_DEPTH
    ),
    "ctable-schema-json-20000-pyblosc2-open": Case(
        ctable_with_schema(DEEP_JSON), "open", "FormatError", SCHEMA_DEPTH
    ),
    "ctable-schema-json-20000-b2z": Case(
        ctable_with_schema(DEEP_JSON, "b2z"), "ctable-open", "FormatError", SCHEMA_DEPTH
    ),
    "ctable-schema-json-17MiB": Case(
        ctable_with_schema("[" + " " * (17 << 20) + "]"),
        "ctable-open",
        "FormatError",
        r"'schema' JSON size is 17825794, expected at most 16777216 bytes",
    ),
    # 3. nothing read from outside a .b2d
    "b2d-leaf-symlink-out-get": Case(
        b2d_leaf_symlink_out, "get:/leak", "FormatError", rf"leaf '/leak' is 'leak.b2nd', {LEAK}"
    ),
    "b2d-leaf-symlink-out-keys": Case(b2d_leaf_symlink_out, "keys", None, r"^\['/a'\]$"),
    "b2d-leaf-symlink-out-dictstore-a": Case(
        b2d_leaf_symlink_out, "dictstore-a:/leak", "FormatError", LEAK
    ),
    "b2d-embed-symlink-out": Case(
        b2d_embed_symlink_out,
        "open",
        "FormatError",
        r"file 'embed.b2e' is a symlink to .*other.b2d/embed.b2e, outside the store directory",
    ),
    "ctable-column-symlink-out": Case(
        ctable_column_symlink_out,
        "ctable-open",
        "FormatError",
        rf"leaf '/_cols/x' is '_cols/x.b2nd', {LEAK}",
    ),
    "ctable-meta-symlink-out": Case(
        ctable_meta_symlink_out, "ctable-open", "FormatError", META_LEAK
    ),
    "ctable-meta-symlink-out-pyblosc2-open": Case(
        ctable_meta_symlink_out, "open", "FormatError", META_LEAK
    ),
}

#: what python-blosc2 4.14.1 answers (its error class, or "read: <result>")
PYTHON_BLOSC2 = {
    "b2z-sizes-4GB-treestore-a": "EOFError",
    "ctable-schema-json-20000-open": "RecursionError",
    "b2d-leaf-symlink-out-get": "read: array([7, 7, 7, 7, 7, 7, 7, 7, 7, 7])",
    "ctable-column-symlink-out": "read: 1",
}
