"""An index descriptor: its fields, the pieces it names, and the checks of one read from a
file.

A descriptor (python-blosc2 4.x's, one per index under its token) says what is indexed
(``target``: a field, or an expression of fields), how (``kind``, ``optlevel``), the array
geometry it was built for, and where its pieces are: ``levels`` (min/max summaries per
segment), and one of ``bucket``/``partial``/``full``/``opsi`` with its sorted payload and
navigation arrays. :func:`components` lists the pieces with the dtype and length each must
have, derived from the descriptor's checked numbers and the array's length; nothing is read
or allocated from a number before :func:`check_store` has bounded it.

>>> from pyblosc2 import asarray; import numpy as np
>>> check_store(asarray(np.arange(3)), {"version": 1, "indexes": {}})
{'version': 1, 'indexes': {}}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FormatError
from .kinds import FORMAT_VERSION, LEVELS_BY_KIND, SUPPORTED_DTYPE_KINDS

__all__ = [
    "Component",
    "boundary_dtype",
    "check_store",
    "components",
    "rows_of",
    "summary_dtype",
]

_WHERE = "index descriptor"
_I8 = np.dtype("<i8")


def summary_dtype(dtype: np.dtype) -> np.dtype:
    """The record of one summary segment.

    >>> summary_dtype(np.dtype("<i4")).names
    ('min', 'max', 'flags')
    """
    return np.dtype([("min", dtype), ("max", dtype), ("flags", np.uint8)])


def boundary_dtype(dtype: np.dtype) -> np.dtype:
    """The first and last sorted value of a navigation segment.

    >>> boundary_dtype(np.dtype("<f8")).names
    ('start', 'end')
    """
    return np.dtype([("start", dtype), ("end", dtype)])


@dataclass(frozen=True, slots=True)
class Component:
    """One piece of an index: its label, where the descriptor keeps its path, the dtype and
    length it must have."""

    category: str
    name: str
    path: str | None
    dtype: np.dtype
    length: int

    @property
    def label(self) -> str:
        """``category.name`` (python-blosc2's component label)."""
        return f"{self.category}.{self.name}"


def _fail(field: str, expected: object, got: object) -> FormatError:
    return FormatError(_WHERE, field, None, expected, repr(got)[:80])


def _dict(d: Any, key: str, field: str) -> dict[str, Any]:
    v = d.get(key) if isinstance(d, dict) else None
    if not isinstance(v, dict):
        raise _fail(f"{field}.{key}", "a map", v)
    return v


def _int(d: dict[str, Any], key: str, field: str, lo: int, hi: int) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or not lo <= int(v) <= hi:
        raise _fail(f"{field}.{key}", f"an int in {lo}..{hi}", v)
    return int(v)


def _path(d: dict[str, Any], key: str, field: str) -> str | None:
    v = d.get(key)
    if v is not None and not isinstance(v, str):
        raise _fail(f"{field}.{key}", "a path or None", v)
    return v


def _dtype(text: Any, field: str) -> np.dtype:
    if not isinstance(text, str) or len(text) > 32:
        raise _fail(field, "a numpy dtype string", text)
    try:
        dtype = np.dtype(text)
    except (TypeError, ValueError) as exc:
        raise _fail(field, "a numpy dtype string", text) from exc
    if dtype.kind not in SUPPORTED_DTYPE_KINDS or dtype.fields is not None or dtype.itemsize < 1:
        raise _fail(field, "a scalar dtype of kind b, i, u, f, m, M, S or U", text)
    return dtype


def _target(array: Any, d: dict[str, Any], field: str) -> None:
    target = _dict(d, "target", field)
    source = target.get("source")
    if source == "field":
        name = target.get("field")
        if name is not None and (array.dtype.fields is None or name not in array.dtype.fields):
            raise _fail(f"{field}.target.field", "a field of the array", name)
    elif source == "expression":
        for key in ("expression", "expression_key"):
            if not isinstance(target.get(key), str) or len(target[key]) > 4096:
                raise _fail(f"{field}.target.{key}", "an expression string", target.get(key))
        deps = target.get("dependencies")
        if not isinstance(deps, list | tuple) or not all(isinstance(x, str) for x in deps):
            raise _fail(f"{field}.target.dependencies", "a list of names", deps)
    else:
        raise _fail(f"{field}.target.source", "'field' or 'expression'", source)


def _check_descriptor(array: Any, token: str, d: Any) -> None:
    field = f"indexes[{token!r}]"
    if not isinstance(d, dict):
        raise _fail(field, "a map", d)
    kind = d.get("kind")
    if kind not in LEVELS_BY_KIND:
        raise _fail(f"{field}.kind", sorted(LEVELS_BY_KIND), kind)
    if d.get("token") != token:
        raise _fail(f"{field}.token", repr(token), d.get("token"))
    if not isinstance(d.get("stale", False), bool):
        raise _fail(f"{field}.stale", "a bool", d.get("stale"))
    if not isinstance(d.get("name"), str | None):
        raise _fail(f"{field}.name", "a string", d.get("name"))
    _target(array, d, field)
    _dtype(d.get("dtype"), f"{field}.dtype")
    if d.get("stale", False):
        return  # never read before a rebuild: only what listing and dropping need
    _int(d, "optlevel", field, 0, 9)
    list(components(array, d))  # every number a piece is sized by, bounded


def check_store(array: Any, raw: Any) -> dict[str, Any]:
    """The store read from ``array``'s vlmeta, refused (:class:`FormatError`) unless it is
    well formed for this array."""
    if not isinstance(raw, dict):
        raise _fail("store", "a map", raw)
    if raw.get("version") != FORMAT_VERSION:
        raise _fail("store.version", FORMAT_VERSION, raw.get("version"))
    indexes = raw.get("indexes")
    if not isinstance(indexes, dict):
        raise _fail("store.indexes", "a map", indexes)
    for token, d in indexes.items():
        if not isinstance(token, str) or not token or len(token) > 256:
            raise _fail("store.indexes", "string tokens", token)
        _check_descriptor(array, token, d)
    return raw


def _levels(d: dict[str, Any], dtype: np.dtype, n: int, field: str) -> list[Component]:
    out = []
    levels = _dict(d, "levels", field)
    for level, info in levels.items():
        if level not in ("chunk", "block", "subblock") or not isinstance(info, dict):
            raise _fail(f"{field}.levels", "chunk, block or subblock maps", level)
        seg = _int(info, "segment_len", f"{field}.levels.{level}", 1, max(1, 1 << 40))
        nseg = math.ceil(n / seg)
        _int(info, "nsegments", f"{field}.levels.{level}", nseg, nseg)
        path = _path(info, "path", f"{field}.levels.{level}")
        out.append(Component("summary", level, path, summary_dtype(dtype), nseg))
    return out


def _chunk_local(
    d: dict[str, Any], kind: str, aux: str, aux_dtype: np.dtype, dtype: np.dtype, n: int
) -> list[Component]:
    field = f"indexes[{d['token']!r}].{kind}"
    p = _dict(d, kind, field.rsplit(".", 1)[0])
    chunk_len = _int(p, "chunk_len", field, 1, 1 << 40)
    nav_len = _int(p, "nav_segment_len", field, 1, chunk_len)
    per = _int(p, "nsegments_per_chunk", field, 1, chunk_len)
    if per != max(1, math.ceil(chunk_len / nav_len)):
        raise _fail(f"{field}.nsegments_per_chunk", math.ceil(chunk_len / nav_len), per)
    nchunks = math.ceil(n / chunk_len)
    bnd = boundary_dtype(dtype)
    return [
        Component(kind, "values", _path(p, "values_path", field), dtype, n),
        Component(kind, aux, _path(p, f"{aux}_path", field), aux_dtype, n),
        Component(kind, "offsets", _path(p, "offsets_path", field), np.dtype("<i8"), nchunks + 1),
        Component(f"{kind}_nav", "l1", _path(p, "l1_path", field), bnd, nchunks),
        Component(f"{kind}_nav", "l2", _path(p, "l2_path", field), bnd, nchunks * per),
    ]


def rows_of(d: dict[str, Any], field: str = "descriptor") -> int:
    """The rows the index was built for (its ``shape``; a planner uses an index only when
    this is the array's length).

    >>> rows_of({"shape": (7,)})
    7
    """
    shape = d.get("shape")
    if not isinstance(shape, list | tuple) or len(shape) != 1:
        raise _fail(f"{field}.shape", "a 1-d shape", shape)
    return _int({"n": shape[0]}, "n", f"{field}.shape", 0, 1 << 62)


def components(array: Any, d: dict[str, Any]) -> list[Component]:
    """The pieces of a descriptor (of ``array``), each with the dtype and length it must
    have for the rows the index was built for."""
    kind, token = d["kind"], d["token"]
    field = f"indexes[{token!r}]"
    n = rows_of(d, field)
    dtype = _dtype(d.get("dtype"), f"{field}.dtype")
    out = _levels(d, dtype, n, field)
    if kind == "bucket":
        b = _dict(d, "bucket", field)
        bdt = _dtype(b.get("bucket_dtype"), f"{field}.bucket.bucket_dtype")
        if bdt.kind != "u":
            raise _fail(f"{field}.bucket.bucket_dtype", "an unsigned dtype", bdt.str)
        _int(b, "bucket_len", f"{field}.bucket", 1, 1 << 40)
        _int(b, "value_lossy_bits", f"{field}.bucket", 0, 8)
        out += _chunk_local(d, "bucket", "bucket_positions", bdt, dtype, n)
    elif kind == "partial":
        p = _dict(d, "partial", field)
        pdt = _dtype(p.get("position_dtype"), f"{field}.partial.position_dtype")
        if pdt.kind != "u":
            raise _fail(f"{field}.partial.position_dtype", "an unsigned dtype", pdt.str)
        out += _chunk_local(d, "partial", "positions", pdt, dtype, n)
    elif kind == "full":
        f = _dict(d, "full", field)
        runs = f.get("runs", [])
        if not isinstance(runs, list | tuple) or len(runs) > 1 << 16:
            raise _fail(f"{field}.full.runs", "a list of runs", runs)
        base = n
        run_parts = []
        for i, run in enumerate(runs):
            rf = f"{field}.full.runs[{i}]"
            if not isinstance(run, dict):
                raise _fail(rf, "a map", run)
            rid = _int(run, "id", rf, 0, 1 << 40)
            length = _int(run, "length", rf, 0, base)
            base -= length
            for nm in ("values", "positions"):
                dt = dtype if nm == "values" else np.dtype("<i8")
                run_parts.append(
                    Component("full_run", f"{rid}.{nm}", _path(run, f"{nm}_path", rf), dt, length)
                )
        clen = _int(f, "sidecar_chunk_len", f"{field}.full", 1, 1 << 40)
        blen = _int(f, "sidecar_block_len", f"{field}.full", 1, clen)
        bnd = boundary_dtype(dtype)
        out += [
            Component("full", "values", _path(f, "values_path", field), dtype, base),
            Component(
                "full", "positions", _path(f, "positions_path", field), np.dtype("<i8"), base
            ),
            Component("full_nav", "l1", _path(f, "l1_path", field), bnd, math.ceil(base / clen)),
            Component("full_nav", "l2", _path(f, "l2_path", field), bnd, math.ceil(base / blen)),
            *run_parts,
        ]
    elif kind == "opsi":
        o = _dict(d, "opsi", field)
        _int(o, "chunk_len", f"{field}.opsi", 1, 1 << 40)
        blen = _int(o, "block_len", f"{field}.opsi", 1, 1 << 40)
        nblocks = _int(o, "nblocks", f"{field}.opsi", 0, 1 << 40)
        if nblocks != math.ceil(n / blen):
            raise _fail(f"{field}.opsi.nblocks", math.ceil(n / blen), nblocks)
        out += [
            Component("opsi", "values", _path(o, "values_path", field), dtype, n),
            Component("opsi", "positions", _path(o, "positions_path", field), np.dtype("<i8"), n),
            Component("opsi_nav", "mins", _path(o, "mins_path", field), dtype, nblocks),
            Component("opsi_nav", "maxs", _path(o, "maxs_path", field), dtype, nblocks),
        ]
    return out
