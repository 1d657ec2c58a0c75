"""What the fuzzer feeds untrusted bytes to: chunk decoding (whole, ranges, headers), frame
opening and every read of a frame (chunks, slices, meta, vlmeta, an NDArray's b2nd layer and
slices), the msgpack metadata conventions, metalayers/vlmeta from the index that names
them to the values (``metadata``), a ``.b2z`` archive from its zip directory to its leaves,
read in place and unpacked into a working copy (``b2z``), and a CTable's schema document
from its JSON text to the columns it opens (``schema``), and a table's index catalog over
real index pieces (``index``), and the change log of a table's text, list and object
columns (``varlog``: msgpack entries replayed over a real table). Each must either work or raise a
pyblosc2 error (or NotImplementedError naming a feature) — never another exception, a hang
or an allocation sized by an unchecked field. Used by tools/fuzz.py (atheris,
coverage-guided) and by the suite's smoke run (tests/trust/test_fuzz.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import pyblosc2 as pb
from pyblosc2.backends.memory import MemoryStore
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.ctable.storage import TableStorage
from pyblosc2.frame.contiguous import BufferSource, FrameReader
from pyblosc2.frame.header import MAX_METALAYERS, POS_METALAYERS
from pyblosc2.frame.msgindex import parse_index
from pyblosc2.frame.trailer import TRAILER_MINLEN, Trailer, locate_trailer
from pyblosc2.meta import pack_vlmeta, packb, unpack_vlmeta, unpackb
from pyblosc2.meta.jsondoc import loads_json
from pyblosc2.meta.scan import scan
from pyblosc2.ndarray.b2nd_meta import B2NDMeta
from pyblosc2.stores.zipindex import ZipIndex
from pyblosc2.stores.zipmember import member_bytes

EXPECTED = (pb.Blosc2Error, NotImplementedError)
GOLDEN = Path(__file__).parents[1] / "golden" / "c_blosc2"


#: whole decodes are skipped above this size: a header may legitimately claim up to 2 GB (as
#: in C-Blosc2), and first-touching that much memory takes seconds, not a bug worth the runs
WHOLE_DECODE_MAX = 1 << 26


def chunk_target(data: bytes) -> None:
    r = ChunkReader.open(data)
    n = r.header.nbytes
    if n <= WHOLE_DECODE_MAX:
        r.decode()
    r.decode_range(n // 3, n // 3 + 17)


def frame_target(data: bytes) -> None:
    reader = FrameReader.open(BufferSource(data), exact=True)
    s = pb.schunk_from_cframe(data)
    for n in range(min(reader.nchunks, 8)):
        s.decompress_chunk(n)
    s[len(s) // 2 : len(s) // 2 + 10]
    s.meta.getall()
    s.vlmeta.getall()
    if "b2nd" in s.meta:
        a = pb.ndarray_from_cframe(data)
        a[tuple(slice(0, 3) for _ in a.shape)]


def meta_target(data: bytes) -> None:
    unpackb(data)
    if len(data) > 4:
        B2NDMeta.from_bytes(data, 1 + data[0] % 16)
    unpack_vlmeta(data)


#: vlmeta chunks are decompressed only up to this size in the metadata target: a chunk may
#: declare up to 2 GB like any chunk (a value is decompressed whole, as python-blosc2 does)
VLMETA_DECODE_MAX = 1 << 22


def _symmetric(value: object) -> None:
    """What :func:`packb` accepts reads back, and (sets aside, whose order may change) packs
    to the same bytes again."""
    try:
        packed = packb(value)
    except pb.ParamError:
        return
    again = unpackb(packed)  # any error here is a failure: the writer accepted the value
    if any(code == 45 for code, _, _ in scan(packed, "value").spans):
        return
    if packb(again) != packed:
        raise AssertionError(f"{value!r} reads back as {again!r}")


def _vlmeta_value(stored: bytes, name: str) -> None:
    if ChunkHeader.from_bytes(stored).nbytes <= VLMETA_DECODE_MAX:
        _symmetric(unpack_vlmeta(stored, f"vlmeta {name!r}"))


def metadata_target(data: bytes) -> None:
    """The first byte picks what the rest is: a metalayer value (msgpack), a stored vlmeta
    entry (a chunk holding msgpack), a whole trailer (vlmeta index and entries), or a header's
    metalayer section; every value found is decoded, then written and read again."""
    mode, body = (data[0] % 4, data[1:]) if data else (0, b"")
    if mode == 0:
        _symmetric(unpackb(body))
    elif mode == 1:
        _vlmeta_value(body, "v")
    elif mode == 2:
        for name, stored in Trailer.from_bytes(body).vlmeta:
            _vlmeta_value(stored, name)
    else:
        buf = bytes(POS_METALAYERS) + body
        entries = parse_index(
            buf,
            POS_METALAYERS,
            len(buf),
            where="frame header",
            kind="metalayer",
            max_entries=MAX_METALAYERS,
        )
        for name, content in entries:
            _symmetric(unpackb(content, f"metalayer {name!r}"))


#: members and leaves read whole in the b2z target only up to this size (a deflated member may
#: declare up to 1032 times its bytes, a frame's chunks up to 2 GB, as any reader allows)
MEMBER_READ_MAX = 1 << 22
_SCRATCH: list[str] = []


def _scratch() -> str:
    """A directory of this process for the archives of the b2z target (one file, rewritten)."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.mkdtemp(prefix="pyblosc2-fuzz-b2z-"))
    return _SCRATCH[0]


def _read_leaves(store: Any) -> None:
    for key in sorted(store.keys())[:8]:
        value = store[key]
        if isinstance(value, pb.NDArray | pb.SChunk) and value.nbytes <= MEMBER_READ_MAX:
            value[:]


def b2z_target(data: bytes) -> None:
    """The bytes are a ``.b2z``: its directory and members read from memory, then the file
    opened as python-blosc2 users do (``open``: a store or the table at its root), as a
    DictStore read in place, and as a TreeStore unpacked into a working copy (mode ``'a'``,
    discarded: nothing is packed back)."""
    index = ZipIndex.read(MemoryStore(data))
    for name in list(index)[:8]:
        m = index[name]
        if m.size <= MEMBER_READ_MAX:
            member_bytes(MemoryStore(data), m, "zip archive")
    path = os.path.join(_scratch(), "s.b2z")
    with open(path, "wb") as f:
        f.write(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # discovery's warnings on foreign members
        for step in (_open_b2z, _read_in_place, _unpack):
            with contextlib.suppress(EXPECTED):  # each step is tried whatever the others do
                step(path)


def _open_b2z(path: str) -> None:
    opened = pb.open(path)
    if isinstance(opened, pb.CTable):
        for name in opened.col_names[:4]:
            opened[name][:8]
    else:
        _read_leaves(opened)
        opened.close()


def _read_in_place(path: str) -> None:
    with pb.DictStore(path, mode="r") as d:
        _read_leaves(d)


def _unpack(path: str) -> None:
    t = pb.TreeStore(path, mode="a")
    try:
        _read_leaves(t)
    finally:
        t.discard()


class _TableLeaves:
    """A table's leaves in memory (the Leaves protocol of ctable/storage.py), read-only."""

    mode = "r"

    def __init__(self, leaves: dict[str, Any]) -> None:
        self.leaves = leaves

    def get(self, key: str) -> Any:
        return self.leaves[key]

    def put(self, key: str, value: Any) -> Any:
        raise AssertionError("a table opened read-only wrote a leaf")

    def has(self, key: str) -> bool:
        return key in self.leaves

    def touch(self) -> None:
        raise AssertionError("a table opened read-only changed")

    def close(self) -> None:
        pass


@dataclasses.dataclass
class SchemaRow:
    x: int = 0
    y: float = 0.0
    ok: bool = False
    name: str = ""
    raw: bytes = b""


def _schema_seed_table() -> dict[str, Any]:
    """The leaves of a table of :class:`SchemaRow` (two rows, one deleted), in memory."""
    leaves: dict[str, Any] = {}

    class Collect(_TableLeaves):
        mode = "w"

        def put(self, key: str, value: Any) -> Any:
            leaves[key] = value
            return value

        def touch(self) -> None:
            pass

    table = pb.CTable(SchemaRow, new_data=[(1, 2.5, True, "a", b"b"), (3, 4.5, False, "c", b"d")])
    table._save_into(TableStorage(Collect(leaves)))
    return leaves


_SCHEMA_LEAVES: list[dict[str, Any]] = []


def schema_target(data: bytes) -> None:
    """The bytes are the JSON text of a table's schema document (stored as bin in
    ``/_meta``'s vlmeta, as a file could hold it): decoded within bounds, turned into
    columns, and the table opened over the seed table's arrays and read."""
    if not _SCHEMA_LEAVES:
        _SCHEMA_LEAVES.append(_schema_seed_table())
    leaves = dict(_SCHEMA_LEAVES[0])
    meta = pb.SChunk()
    meta.vlmeta["kind"] = "ctable"
    meta.vlmeta["version"] = 1
    meta.vlmeta["schema"] = data
    leaves["/_meta"] = meta
    table = pb.CTable._from_storage(TableStorage(_TableLeaves(leaves)))
    len(table)
    for name in table.col_names[:6]:
        table[name][:4]
    if len(table):
        table[0]


@dataclasses.dataclass
class IndexRow:
    x: int = 0
    y: float = 0.0


_INDEX_SEED: list[tuple[str, dict[str, Any]]] = []


def _index_seed() -> tuple[str, dict[str, Any]]:
    """A ``.b2d`` table with real index pieces (FULL on ``x``, SUMMARY on ``y``, BUCKET on
    ``x * y``), made once, and its catalog."""
    if not _INDEX_SEED:
        path = os.path.join(_scratch(), "indexed.b2d")
        t = pb.CTable(IndexRow, urlpath=path, mode="w", expected_size=600)
        t.extend({"x": np.arange(600) % 97, "y": np.arange(600) * 0.5})
        t.create_index("x", kind=pb.IndexKind.FULL)
        t.create_index("y", kind=pb.IndexKind.SUMMARY)
        t.create_index(expression="x * y", kind=pb.IndexKind.BUCKET)
        catalog = t._storage.load_index_catalog()
        t.close()
        _INDEX_SEED.append((path, catalog))
    return _INDEX_SEED[0]


def index_target(data: bytes) -> None:
    """The bytes are the JSON text of a table's index catalog (``_meta``'s vlmeta
    ``index_catalog``, as a file could hold it) over a table whose index pieces are real
    files: the indexes listed, queries and min/max answered through them, or refused."""
    path, _ = _index_seed()
    doc = loads_json(data, "index catalog", "fuzz input")
    with pb.DictStore(path, mode="r") as ds:
        leaves = {k: ds[k] for k in ("/_valid_rows", "/_cols/x", "/_cols/y")}
        meta = pb.SChunk()
        meta.vlmeta["kind"] = "ctable"
        meta.vlmeta["version"] = 1
        stored = ds["/_meta"].vlmeta
        meta.vlmeta["schema"] = stored["schema"]
        meta.vlmeta["value_epoch"] = stored.get("value_epoch", 0)  # the indexes' epoch
        meta.vlmeta["index_catalog"] = doc
        leaves["/_meta"] = meta
        table_leaves = _TableLeaves(leaves)
        table_leaves.store = ds  # type: ignore[attr-defined]  # where the pieces are
        table = pb.CTable._from_storage(TableStorage(table_leaves))
        [(i.col_name, i.kind, i.stale) for i in table.indexes]
        table.where((table["x"] > 90) | (table["y"] < 3))["x"][:]
        table.where((table["x"] * table["y"]) >= 20_000)["x"][:]
        table["y"]._index_summary_minmax("min")


_VARLOG_SEED: list[str] = []


def _varlog_seed() -> str:
    """A ``.b2d`` table with utf8, vlstring, dictionary, list and object columns (six rows,
    one deleted), made once."""
    if not _VARLOG_SEED:
        from tests.trust import varlog_writer as vw

        path = os.path.join(_scratch(), "varlog.b2d")
        with pb.CTable(vw.Row, urlpath=path, mode="w") as t:
            t.extend([vw.row(x) for x in range(6)])
            t.delete(2)
        _VARLOG_SEED.append(path)
    return _VARLOG_SEED[0]


def varlog_target(data: bytes) -> None:
    """The bytes are msgpack: a list of change-log entries (ctable/varlog.py) replayed over
    the seed table as its ``/_varlog`` leaf; its columns then read."""
    from pyblosc2.ctable import varlog

    entries = unpackb(data)
    if not isinstance(entries, list):
        entries = [entries]
    log = pb.ObjectArray(meta={varlog.ROLE: {"version": 1, "base_rows": 6}})
    for entry in entries[:64]:
        log.append(entry)
    with pb.DictStore(_varlog_seed(), mode="r") as ds:
        leaves = {k: ds[k] for k in ds if k.startswith(("/_meta", "/_valid", "/_cols"))}
        leaves[varlog.LOG_KEY] = log
        table = pb.CTable._from_storage(TableStorage(_TableLeaves(leaves)))
        for name in table.col_names:
            table[name][:]


TARGETS: dict[str, Callable[[bytes], None]] = {
    "b2z": b2z_target,
    "chunk": chunk_target,
    "frame": frame_target,
    "index": index_target,
    "meta": meta_target,
    "metadata": metadata_target,
    "schema": schema_target,
    "varlog": varlog_target,
}


def seeds() -> dict[str, list[bytes]]:
    """Valid inputs to mutate: C-Blosc2's golden chunks and frames, and a few of ours."""
    chunks = [p.read_bytes() for p in sorted((GOLDEN / "chunks").glob("*"))]
    frames = [p.read_bytes() for p in sorted((GOLDEN / "frames").glob("*.b2frame"))]
    frames += [p.read_bytes() for p in sorted((GOLDEN / "arrays").glob("*.b2nd"))]
    s = pb.SChunk(chunksize=4000, cparams={"typesize": 4}, meta={"m": [1, "x"]})
    s.append_data(np.arange(1000, dtype=np.int32))
    s.vlmeta["v"] = {"a": (1, 2.5)}
    frames.append(s.to_cframe())
    metas = [pb.meta.packb(v) for v in ({"a": 1}, (1, 2), np.arange(3), {1, 2}, 1 + 2j)]
    return {
        "b2z": b2z_seeds(),
        "chunk": chunks,
        "frame": frames,
        "index": index_seeds(),
        "meta": metas,
        "metadata": metadata_seeds(frames),
        "schema": schema_seeds(),
        "varlog": varlog_seeds(),
    }


def b2z_seeds() -> list[bytes]:
    """Small stores and a table as ``.b2z`` (as pyblosc2 writes them, and one repacked with
    deflated members as ``zip -r`` would)."""
    out = []
    with tempfile.TemporaryDirectory() as d:
        tree = os.path.join(d, "t.b2z")
        with pb.TreeStore(tree, mode="w") as t:
            t["/a"] = np.arange(20, dtype=np.int32)
            t["/g/b"] = np.linspace(0, 1, 7)
            t["/g/c"] = pb.SChunk(data=b"abc" * 10)
            t.vlmeta["attr"] = {"k": [1, 2]}
        flat = os.path.join(d, "d.b2z")
        with pb.DictStore(flat, mode="w", threshold=100) as s:
            s["/small"] = np.arange(3)
            s["/big"] = np.arange(200)
        table = os.path.join(d, "c.b2z")
        with pb.CTable(SchemaRow, urlpath=table, mode="w") as c:
            c.extend([(1, 2.5, True, "a", b"b"), (3, 4.5, False, "c", b"d")])
        for path in (tree, flat, table):
            with open(path, "rb") as f:
                out.append(f.read())
        buf = io.BytesIO()
        with zipfile.ZipFile(tree) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info))
        out.append(buf.getvalue())
    return out


def schema_seeds() -> list[bytes]:
    """The schema document of the seed table, and variants of its entries."""
    doc = pb.CTable(SchemaRow).schema_dict()
    docs = [doc, {**doc, "n_rows": 2}, {**doc, "version": 2}]
    cols = doc["columns"]
    docs.append({**doc, "columns": [{**cols[0], "default": 7, "chunks": [4], "blocks": [2]}]})
    docs.append({**doc, "columns": [{**cols[0], "ge": 0, "le": 9}]})
    docs.append({**doc, "summary_indexes_built": True, "create_summary_index": False})
    docs.append(
        {**doc, "columns": [{**cols[1], "default": {"__complex__": True, "real": 1, "imag": 0}}]}
    )
    docs.append({**doc, "columns": [{**cols[4], "default": {"__bytes__": True, "base64": "eA=="}}]})
    return [json.dumps(d).encode() for d in docs]


def varlog_seeds() -> list[bytes]:
    """Logs as a writer leaves them: appends, a set, scattered positions, a full column."""
    u = [b"u%d" % i for i in range(8)]
    logs = [
        [["set", "u", 6, "t", u[6:8]], ["set", "v", 6, "t", [b"a", None]]],
        [["at", "d", [0, 3], "t", [b"d9", b"d1"]], ["set", "ls", 1, "v", [[1, 2], None]]],
        [["set", "o", 0, "v", [{"k": 1}, [1, 2], "s", 3.5, None, b"b"]]],
        [["set", "u", 0, "t", u[:6]], ["set", "x", 0, "v", [1]], ["set", "u", 99, "t", [b"far"]]],
    ]
    return [packb(log) for log in logs]


def index_seeds() -> list[bytes]:
    """The seed table's catalog as stored, and variants of its entries."""
    catalog = _index_seed()[1]
    docs = [catalog, {k: {**d, "stale": True} for k, d in catalog.items()}]
    docs.append({k: {**d, "shape": [1 << 40]} for k, d in catalog.items()})
    docs.append({k: {**d, "built_value_epoch": 99} for k, d in catalog.items()})
    docs.append({"x": catalog["x"]})
    return [json.dumps(d).encode() for d in docs]


METADATA_VALUES = (
    {"a": 1, "b": [1.5, None, True, "x", b"y"]},
    (1, (2, 3)),
    [np.arange(3), 1],
    np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
    np.array([np.arange(2), "x", None], dtype=object),
    {1 + 2j, (1, 2), "s"},
    [[[[{"deep": [1]}]]]],
    {"shape": [3, 4], "dtype": "<f8", "attrs": {"units": "m", "scale": 0.5}},
)


def metadata_seeds(frames: list[bytes]) -> list[bytes]:
    """One seed of each mode: values, stored vlmeta entries, the trailers and metalayer
    sections of the seed frames."""
    out = [b"\x00" + packb(v) for v in METADATA_VALUES]
    out += [b"\x01" + pack_vlmeta(v) for v in METADATA_VALUES]
    for f in frames:
        with contextlib.suppress(pb.Blosc2Error, NotImplementedError):
            r = FrameReader.open(BufferSource(f), exact=True)
            h = r.header
            tlen = locate_trailer(f[h.frame_len - TRAILER_MINLEN : h.frame_len], h.frame_len, 0)
            out.append(b"\x02" + f[h.frame_len - tlen : h.frame_len])
            out.append(b"\x03" + f[POS_METALAYERS : h.header_len])
    return out


def run(target: str, data: bytes) -> None:
    """Run one input; re-raise anything that is not an expected error."""
    with contextlib.suppress(EXPECTED):
        TARGETS[target](data)
