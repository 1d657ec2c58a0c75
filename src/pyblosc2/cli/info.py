"""``pyblosc2 info``: what is in a frame or chunk file (``h5ls -v`` for Blosc2).

:func:`describe` gathers everything as a JSON-friendly dict, :func:`format_text` prints it for
people; ``--chunks`` adds one row per chunk (:func:`chunk_rows`).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from typing import Any

import numpy as np

import pyblosc2

from .progress import progress
from .sources import Source, frame_layout

__all__ = ["chunk_rows", "describe", "format_text", "jsonable"]

# compformat (chunk header flags >> 5) -> codec family; lz4 and lz4hc share one
COMPFORMAT_NAMES = {0: "blosclz", 1: "lz4", 2: "snappy", 3: "zlib", 4: "zstd"}
FINGERPRINT_NAMES = {0: "none", 3: "XXH3-128 of per-chunk XXH3-64 digests (pyblosc2)"}


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays, tuples and bytes made JSON-friendly.

    >>> jsonable({"a": (1, np.int64(2)), "b": b"\\x00\\xff"})
    {'a': [1, 2], 'b': '0x00ff'}
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return "0x" + bytes(value).hex()
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _name(enum: type, value: int) -> str:
    try:
        return str(enum(value).name.lower())
    except ValueError:
        return f"user({value})"


def _filters(filters: Any, metas: Any) -> list[str]:
    out = []
    for f, m in zip(filters, metas, strict=False):
        if int(f) == 0:
            continue
        name = _name(pyblosc2.Filter, int(f))
        out.append(f"{name}({int(m)})" if int(m) else name)
    return out or ["nofilter"]


def _chunk_fields(chunk: Any) -> dict[str, Any]:
    h = pyblosc2.get_chunk_header(chunk)
    codec = COMPFORMAT_NAMES.get(h.compformat, f"user({h.udcompcode})")
    return {
        "format": "Blosc1" if h.version <= 2 else "Blosc2",
        "version": h.version,
        "nbytes": h.nbytes,
        "cbytes": h.cbytes,
        "ratio": round(h.nbytes / h.cbytes, 3) if h.cbytes else None,
        "codec": codec,
        "typesize": h.typesize,
        "blocksize": h.blocksize,
        "filters": _filters(*zip(*h.pipeline, strict=True)),
        "special": _name(pyblosc2.SpecialValue, h.special) if h.special else None,
        "memcpyed": bool(h.memcpyed),
    }


def chunk_rows(source: Source, show_progress: bool) -> list[dict[str, Any]]:
    """One dict per chunk: index, offset (file offset; chunk-file number for sparse frames;
    None when stored as a special offset), nbytes, cbytes, ratio, codec, special kind."""
    if source.kind == "chunk":
        return [{"index": 0, "offset": 0, **_chunk_fields(source.obj)}]
    s = source.schunk
    offsets = frame_layout(s).offsets
    rows = []
    bar = progress(s.nchunks, "chunks", enabled=show_progress)
    for n in range(s.nchunks):
        f = _chunk_fields(s.get_chunk(n))
        rows.append({"index": n, "offset": offsets[n], **f})
        bar.update()
    bar.close()
    return rows


def _decoded(mapping: Any, key: str) -> Any:
    try:
        return jsonable(mapping[key])
    except ValueError as exc:  # undecodable content is reported, not fatal
        return f"<undecodable: {exc}>"


def _decode_all(mapping: Any) -> dict[str, Any]:
    return {key: _decoded(mapping, key) for key in mapping}


def describe(source: Source, *, chunks: bool = False, show_progress: bool = False) -> dict:
    """Everything ``info`` reports about ``source``, as plain JSON types."""
    d: dict[str, Any] = {"path": source.path}
    if source.kind == "chunk":
        f = _chunk_fields(source.obj)
        d.update(kind=f"{f['format']} chunk", storage="single chunk file", nchunks=1)
        d.update({k: f[k] for k in ("version", "typesize", "blocksize", "nbytes", "cbytes")})
        d.update(ratio=f["ratio"], codec=f["codec"], filters=f["filters"])
        d["special_chunks"] = {f["special"]: 1} if f["special"] else {}
        if chunks:
            d["chunk_table"] = chunk_rows(source, show_progress)
        return d
    s = source.schunk
    h = s.header
    sparse = s.urlpath is not None and os.path.isdir(s.urlpath)
    d["kind"] = "NDArray" if source.kind == "ndarray" else "SChunk"
    d["storage"] = "sparse frame" if sparse else "contiguous frame"
    if source.kind == "ndarray":
        a = source.obj
        d.update(shape=list(a.shape), dtype=str(a.dtype), chunks=list(a.chunks))
        d["blocks"] = list(a.blocks)
    layout = frame_layout(s)
    cp = s.cparams
    d.update(
        nchunks=s.nchunks,
        chunksize=s.chunksize,
        blocksize=s.blocksize,
        typesize=s.typesize,
        nbytes=s.nbytes,
        cbytes=h.cbytes,  # the chunks' bytes, as python-blosc2's SChunk.cbytes
        frame_bytes=s.cbytes,  # the whole frame: header, chunks, index, trailer
        ratio=round(s.nbytes / h.cbytes, 3) if h.cbytes else None,
        codec=_name(pyblosc2.Codec, int(cp.codec)),
        clevel=cp.clevel,
        filters=_filters(cp.filters, cp.filters_meta),
        splitmode=_name(pyblosc2.SplitMode, int(cp.splitmode)),
        frame_version=h.version,
    )
    specials = Counter(
        _name(pyblosc2.SpecialValue, int(i.special)) for i in s.iterchunks_info() if i.special
    )
    d["special_chunks"] = dict(sorted(specials.items()))
    fp = FINGERPRINT_NAMES.get(layout.fingerprint_type, f"type {layout.fingerprint_type}")
    if layout.has_digests and layout.fingerprint_type == 0:
        fp = "stale pyblosc2 digests (the frame was rewritten by another writer)"
    d["fingerprint"] = fp if layout.fingerprint_type != 3 or layout.has_digests else "none"
    d["metalayers"] = _decode_all(s.meta)
    d["vlmeta"] = _decode_all(s.vlmeta)
    if chunks:
        d["chunk_table"] = chunk_rows(source, show_progress)
    return d


_ORDER = [
    *("kind", "storage", "shape", "dtype", "chunks", "blocks", "nchunks", "chunksize"),
    *("blocksize", "typesize", "nbytes", "cbytes", "frame_bytes", "ratio", "codec"),
    *("clevel", "filters"),
    *("splitmode", "version", "frame_version", "special_chunks", "fingerprint"),
    *("metalayers", "vlmeta"),
]
_TABLE = ("index", "offset", "nbytes", "cbytes", "ratio", "codec", "filters", "special")


def _value(key: str, v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, list) and key in ("filters",):
        return ", ".join(v)
    if isinstance(v, list):
        return "(" + ", ".join(map(str, v)) + ")"
    if isinstance(v, dict):
        return ", ".join(f"{k}={val}" for k, val in v.items()) if v else "none"
    return str(v)


def format_text(d: dict) -> str:
    """``describe``'s dict as aligned ``key: value`` lines and, if present, a chunk table."""
    lines = [f"{d['path']}:"]
    keys = [k for k in _ORDER if k in d]
    width = max(len(k) for k in keys)
    for k in keys:
        v = d[k]
        if k in ("metalayers", "vlmeta") and v:
            lines.append(f"  {k:<{width}}:")
            lines.extend(f"    {name}: {val!r}" for name, val in v.items())
            continue
        lines.append(f"  {k:<{width}}: {_value(k, v)}")
    rows = d.get("chunk_table")
    if rows:
        cells = [[_cell(r.get(c)) for c in _TABLE] for r in rows]
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(_TABLE)]
        lines.append("  " + "  ".join(c.rjust(w) for c, w in zip(_TABLE, widths, strict=True)))
        lines.extend(
            "  " + "  ".join(x.rjust(w) for x, w in zip(row, widths, strict=True)) for row in cells
        )
    return "\n".join(lines)


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, list):
        return ",".join(v)
    return str(v)
