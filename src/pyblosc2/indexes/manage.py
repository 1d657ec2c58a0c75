"""Creating, dropping, rebuilding and compacting an NDArray's indexes, and keeping them
honest when the array changes (python-blosc2 4.x's ``create_index`` & co.).

A write to an indexed array marks its indexes stale (a stale index is never used, and
python-blosc2 reads the same flag); ``append`` keeps them current: a FULL index gets a
sorted run of the new rows (as python-blosc2 adds one; :func:`compact_index` merges the
runs), the other kinds are rebuilt.

>>> import numpy as np; from pyblosc2 import asarray
>>> a = asarray(np.arange(10), chunks=(5,), blocks=(5,))
>>> create_index(a, kind=IndexKind.FULL)["kind"], len(list_indexes(a))
('full', 1)
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import asdict
from enum import Enum
from typing import Any

import numpy as np

from ..errors import FormatError, ParamError, ParamTypeError
from . import target as _target
from .build import BuildContext, build_bucket, build_full, build_levels, build_opsi, build_partial
from .cache import clear_for
from .descriptor import components
from .fullsort import build_full_ooc
from .kinds import (
    FORMAT_VERSION,
    VLMETA_KEY,
    IndexKind,
    check_optlevel,
    normalize_kind,
    opsi_max_cycles,
)
from .store import is_persistent, load_store, remove_sidecar, save_store
from .target import target_of, token_of, values_of

__all__ = [
    "append_rows",
    "compact_index",
    "create_index",
    "drop_index",
    "list_indexes",
    "mark_stale",
    "rebuild_index",
    "resolve_token",
]


def create_index(
    array: Any,
    field: str | None = None,
    *,
    expression: str | None = None,
    operands: dict[str, Any] | None = None,
    kind: IndexKind = IndexKind.BUCKET,
    optlevel: int = 5,
    persistent: bool | None = None,
    build: str = "auto",
    name: str | None = None,
    tmpdir: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Build an index of a 1-d array, a field or an expression of fields; returns a copy of
    its descriptor (python-blosc2's ``create_index``; ``build`` and ``tmpdir`` are accepted,
    the values are sorted in memory)."""
    cparams = kwargs.pop("cparams", None)
    method = kwargs.pop("method", None)
    cycles = kwargs.pop("opsi_max_cycles", None)
    validity = kwargs.pop("validity", None)  # (start, stop) -> which rows hold a value
    levels = kwargs.pop("summary_levels", None)  # python-blosc2's granularity of SUMMARY
    if kwargs:
        raise ParamTypeError(f"unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
    kind_s = normalize_kind(kind)
    if levels is not None and (kind_s != "summary" or set(levels) - {"chunk", "block"}):
        raise ParamError("summary_levels are 'chunk' or 'block' levels of a SUMMARY index")
    optlevel = check_optlevel(optlevel)
    if build not in ("auto", "memory", "ooc"):
        raise ParamError("build must be one of 'auto', 'memory', or 'ooc'")
    if method is not None and kind_s != "full":
        raise ParamError("method is only supported for kind=IndexKind.FULL")
    if method not in (None, "global-sort"):
        raise ParamError("full index method must be 'global-sort'")
    if cparams is not None:
        cparams = _plain(asdict(cparams) if not isinstance(cparams, dict) else cparams)
    target, dtype = target_of(array, field, expression, operands)
    token = token_of(target)
    persistent = is_persistent(array) if persistent is None else bool(persistent)
    if persistent and not is_persistent(array):
        raise ParamError("a persistent index needs an array stored in a file")
    store = load_store(array)
    old = store["indexes"].get(token)
    if old is not None:
        _drop_pieces(array, old)
    n = int(array.shape[0])
    # chunk-local kinds stream the values chunk by chunk, FULL sorts runs and merges them
    # (python-blosc2's "ooc" build); OPSI sorts them in memory, as does build="memory"
    ooc = build != "memory" and kind_s in ("summary", "bucket", "partial", "full")
    whole: np.ndarray | None = None

    def read(a: int, b: int) -> np.ndarray:
        if whole is not None:
            return whole[a:b]
        return np.ascontiguousarray(values_of(array[a:b], target).astype(dtype, copy=False))

    if not ooc:  # all the values at once, through the one function that reads them so
        whole = np.ascontiguousarray(_target.values_for_target(array, target).astype(dtype))
    ctx = BuildContext(array, token, kind_s, persistent, cparams)
    sections: dict[str, Any] = {"bucket": None, "partial": None, "full": None, "opsi": None}
    if kind_s == "bucket":
        sections["bucket"] = build_bucket(ctx, read, n, dtype, optlevel)
    elif kind_s == "partial":
        sections["partial"] = build_partial(ctx, read, n, dtype, optlevel)
    elif kind_s == "full" and ooc:
        sections["full"] = build_full_ooc(ctx, read, n, dtype, optlevel, tmpdir)
    elif kind_s == "full":
        sections["full"] = build_full(ctx, read(0, n), optlevel)
    elif kind_s == "opsi":
        ncycles = opsi_max_cycles(optlevel) if cycles is None else max(1, int(cycles))
        sections["opsi"] = build_opsi(ctx, read(0, n), optlevel, ncycles)
    descriptor = {
        "name": name or (target["expression"] if target["source"] == "expression" else token),
        "token": token,
        "target": target,
        "field": target.get("field"),
        "kind": kind_s,
        "version": FORMAT_VERSION,
        "optlevel": optlevel,
        "persistent": persistent,
        "ooc": ooc,
        "stale": False,
        "dtype": dtype.str,
        "shape": tuple(array.shape),
        "chunks": tuple(array.chunks),
        "blocks": tuple(array.blocks),
        "levels": build_levels(ctx, read, n, kind_s, validity, levels),
        **sections,
        "cparams": cparams,
        "null_aware": validity is not None,
    }
    store["indexes"][token] = descriptor
    save_store(array, store)
    clear_for(array)
    return copy.deepcopy(descriptor)


def _plain(value: Any) -> Any:
    """``cparams`` as msgpack-able data (enums as their values), as python-blosc2 stores it."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    return value


def resolve_token(store: dict[str, Any], field: str | None, name: str | None) -> str:
    """The token of the index named by ``field`` or ``name`` (the only one when neither)."""
    indexes = store["indexes"]
    token = None
    if field is not None:
        token = field
    elif name is None and len(indexes) == 1:
        token = next(iter(indexes))
    if token is None:
        token = next((k for k, d in indexes.items() if d.get("name") == name), None)
    if token is None and name is None and field is None:
        token = "__self__"
    if token is None or token not in indexes:
        raise KeyError("index not found")
    return token


def _drop_pieces(array: Any, descriptor: dict[str, Any]) -> None:
    if descriptor.get("stale", False):
        paths = _paths(descriptor)
    else:
        try:
            paths = [(c.label, c.path) for c in components(array, descriptor)]
        except ValueError:  # built for another length: the stored paths still name them
            paths = _paths(descriptor)
    for label, path in paths:
        remove_sidecar(array, descriptor, label, path)


def _paths(descriptor: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for level, info in (descriptor.get("levels") or {}).items():
        if isinstance(info, dict):
            out.append((f"summary.{level}", info.get("path")))
    for sec in ("bucket", "partial", "full", "opsi"):
        part = descriptor.get(sec)
        if isinstance(part, dict):
            runs = part.get("runs") if sec == "full" else None
            for key, v in part.items():
                if key.endswith("_path") and isinstance(v, str):
                    out.append((f"{sec}.{key[:-5]}", v))
            for run in runs if isinstance(runs, list) else ():
                if isinstance(run, dict):
                    out += [
                        ("full_run", run.get("values_path")),
                        ("full_run", run.get("positions_path")),
                    ]
    return [(label, p) for label, p in out if isinstance(p, str)] or out


def drop_index(array: Any, field: str | None = None, name: str | None = None) -> None:
    """Remove an index and its pieces."""
    store = load_store(array)
    token = resolve_token(store, field, name)
    descriptor = store["indexes"].pop(token)
    save_store(array, store)
    clear_for(array)
    _drop_pieces(array, descriptor)


def _recreate(array: Any, d: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "kind": IndexKind(d["kind"]),
        "optlevel": d.get("optlevel", 5),
        "persistent": d.get("persistent"),
        "build": "ooc" if d.get("ooc", False) else "memory",
        "name": d.get("name"),
    }
    if d["kind"] == "opsi" and isinstance(d.get("opsi"), dict):
        kwargs["opsi_max_cycles"] = d["opsi"].get("max_cycles")
    if d.get("cparams") is not None:
        kwargs["cparams"] = d["cparams"]
    target = d["target"]
    if target["source"] == "expression":
        ops = dict(array.fields) if array.dtype.fields is not None else {"__self__": array}
        return create_index(array, expression=target["expression_key"], operands=ops, **kwargs)
    return create_index(array, field=target.get("field"), **kwargs)


def rebuild_index(array: Any, field: str | None = None, name: str | None = None) -> dict[str, Any]:
    """Build an index again from the array as it is now (after writes marked it stale)."""
    store = load_store(array)
    d = store["indexes"][resolve_token(store, field, name)]
    return _recreate(array, d)


def compact_index(array: Any, field: str | None = None, name: str | None = None) -> dict[str, Any]:
    """Merge a FULL index's runs into its sorted payload (other kinds: unchanged)."""
    store = load_store(array)
    d = store["indexes"][resolve_token(store, field, name)]
    clear_for(array)
    if d["kind"] == "full" and (d.get("full") or {}).get("runs"):
        return _recreate(array, d)
    return copy.deepcopy(d)


def list_indexes(array: Any) -> list[str]:
    """The tokens of the array's indexes, sorted."""
    return sorted(load_store(array)["indexes"])


def mark_stale(array: Any) -> None:
    """After a write: the array's indexes no longer describe it (nor its cached results)."""
    clear_for(array)
    try:
        store = load_store(array)
    except FormatError:  # a damaged store: the write stands, what can be marked is marked
        _mark_raw_stale(array)
        return
    changed = False
    for d in store["indexes"].values():
        if not d.get("stale", False):
            d["stale"] = True
            changed = True
    if changed:
        save_store(array, store)


def _mark_raw_stale(array: Any) -> None:
    """Mark stale the descriptors of a store that does not pass the checks (so neither
    library uses them after this write); nothing else of it is trusted or changed."""
    raw = array.schunk.vlmeta[VLMETA_KEY]
    indexes = raw.get("indexes") if isinstance(raw, dict) else None
    if isinstance(indexes, dict) and any(isinstance(d, dict) for d in indexes.values()):
        for d in indexes.values():
            if isinstance(d, dict):
                d["stale"] = True
        array.schunk.vlmeta[VLMETA_KEY] = raw


def _reader(array: Any, d: dict[str, Any]) -> Callable[[int, int], np.ndarray]:
    dt, target = np.dtype(d["dtype"]), d["target"]

    def read(a: int, b: int) -> np.ndarray:
        return np.ascontiguousarray(values_of(array[a:b], target).astype(dt, copy=False))

    return read


def append_rows(array: Any, old_size: int, rows: np.ndarray) -> None:
    """After ``append``: a FULL index gets a sorted run of the new rows; others are rebuilt."""
    clear_for(array)
    store = load_store(array)
    for token, d in list(store["indexes"].items()):
        if d.get("stale", False):
            continue
        full = d.get("full")
        if d["kind"] == "full" and isinstance(full, dict):
            vals = values_of(rows, d["target"]).astype(np.dtype(d["dtype"]), copy=False)
            pos = np.arange(old_size, old_size + len(vals), dtype=np.int64)
            order = np.lexsort((pos, vals))
            rid = int(full.get("next_run_id", 0))
            ctx = BuildContext(array, token, "full", bool(d["persistent"]), None)
            run = {
                "id": rid,
                "length": len(vals),
                "values_path": ctx.write("full_run", f"{rid}.values", vals[order]),
                "positions_path": ctx.write("full_run", f"{rid}.positions", pos[order]),
            }
            full["runs"] = [*full.get("runs", []), run]
            full["next_run_id"] = rid + 1
            d["levels"] = build_levels(ctx, _reader(array, d), int(array.shape[0]), "full")
            d["shape"] = tuple(array.shape)
            save_store(array, store)
        else:
            _recreate(array, d)
            store = load_store(array)
