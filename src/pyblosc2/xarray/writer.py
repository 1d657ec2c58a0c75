"""Writing an xarray Dataset as an xarray-blosc2 store (:mod:`.layout`) with pyblosc2.

Values are stored as numpy holds them (datetimes and timedeltas as ``datetime64`` /
``timedelta64``, strings as fixed-width unicode; string coordinates as positions plus
labels, as xarray-blosc2 does). A variable's chunks come from ``encoding["chunks"]``, else
from its dask chunks (so dask blocks map onto pyblosc2 chunks and are written one by one,
never gathered), else pyblosc2's choice; ``blocks``, ``codec``, ``clevel`` and ``filters``
from its encoding too. The store is built beside ``path`` and moved into place when whole:
a failed write leaves what was at ``path`` untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..constants import Codec, Filter
from ..errors import ParamError, ParamTypeError
from ..ndarray.constructors import asarray, empty
from . import layout

__all__ = ["to_blosc2"]

#: the encoding keys the writer uses (others, such as CF ``units``, are kept as metadata)
LAYOUT_KEYS = ("chunks", "blocks", "codec", "clevel", "filters")
#: encoding keys the reader sets that say nothing to keep
_READER_KEYS = {"preferred_chunks", "dtype", "source", "original_shape"}


def _jsonable(v: Any) -> Any:
    """Attribute values as JSON: numpy scalars and arrays as Python numbers and lists."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)


def _cparams(enc: dict[str, Any], name: str) -> dict[str, Any]:
    codec = enc.get("codec", "zstd")
    filters = enc.get("filters", ["shuffle"])
    try:
        c = Codec[codec.upper()] if isinstance(codec, str) else Codec(codec)
        f = [Filter[x.upper()] if isinstance(x, str) else Filter(x) for x in filters]
    except (KeyError, ValueError) as exc:
        raise ParamError(f"variable {name!r}: bad codec or filter in encoding: {exc}") from None
    return {"codec": c, "clevel": int(enc.get("clevel", 5)), "filters": f}


def _values_dtype(var: xr.Variable, name: str) -> np.dtype:
    dt = var.dtype
    if dt.kind == "O":
        return np.asarray(var.values).astype(str).dtype
    if dt.kind not in "biufcmMSUV":
        raise NotImplementedError(f"variable {name!r}: dtype {dt} in an xarray-blosc2 store")
    return dt


def _chunks(var: xr.Variable, enc: dict[str, Any], name: str) -> tuple[int, ...] | None:
    if "chunks" in enc and enc["chunks"] is not None:
        ch = enc["chunks"]
        ch = tuple(ch[d] for d in var.dims) if isinstance(ch, dict) else tuple(ch)
        if len(ch) != var.ndim:
            raise ParamError(f"variable {name!r}: chunks {ch} for {var.ndim} dims")
        return ch
    if var.chunks:  # dask: one pyblosc2 chunk per dask block (their regular size)
        return tuple(max(c) for c in var.chunks)
    return None


def _write_array(var: xr.Variable, path: Path, enc: dict[str, Any], name: str) -> Any:
    dt = _values_dtype(var, name)
    chunks = _chunks(var, enc, name) if var.ndim else None
    blocks = tuple(enc["blocks"]) if enc.get("blocks") is not None and var.ndim else None
    kw: dict[str, Any] = {"urlpath": os.fspath(path), "mode": "w", "cparams": _cparams(enc, name)}
    if chunks:
        kw["chunks"] = chunks
    if blocks:
        kw["blocks"] = blocks
    if var.chunks is not None and var.ndim:
        import dask.array as da

        target = empty(var.shape, dtype=dt, **kw)
        da.store(var.data.astype(dt), target, lock=threading.Lock())
        return target
    return asarray(np.ascontiguousarray(np.asarray(var.values).astype(dt, copy=False)), **kw)


def _kept_encoding(var: xr.Variable) -> str | None:
    keep = {k: _jsonable(v) for k, v in var.encoding.items() if k not in _READER_KEYS}
    keep = {k: v for k, v in keep.items() if k not in LAYOUT_KEYS}
    return json.dumps(keep) if keep else None


def to_blosc2(
    ds: xr.Dataset,
    path: str | os.PathLike[str],
    *,
    mode: str = "w-",
    encoding: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """Write ``ds`` as an xarray-blosc2 store (a directory) at ``path``; ``mode`` 'w-'
    refuses an existing path, 'w' replaces it. ``encoding`` maps variable names to
    ``{"chunks", "blocks", "codec", "clevel", "filters"}`` (over each variable's own
    ``encoding``).

    >>> import tempfile, os, numpy as np, xarray as xr
    >>> from pyblosc2.xarray import to_blosc2
    >>> ds = xr.Dataset({"t": (("x", "y"), np.arange(6.0).reshape(2, 3))}, coords={"x": [10, 20]})
    >>> p = to_blosc2(ds, os.path.join(tempfile.mkdtemp(), "d.b2"))
    >>> xr.open_dataset(p, engine="pyblosc2").t.sel(x=20).values
    array([3., 4., 5.])
    """
    if not isinstance(ds, xr.Dataset):
        raise ParamTypeError(f"an xarray.Dataset is needed, got {type(ds).__name__}")
    if mode not in ("w", "w-"):
        raise ParamError(f"mode must be 'w' or 'w-', got {mode!r}")
    out = Path(path)
    if out.exists() and mode == "w-":
        raise FileExistsError(f"{out} exists (mode='w' replaces it)")
    encoding = encoding or {}
    for name in encoding:
        if name not in ds.variables:
            raise ParamError(f"encoding for {name!r}, which is not a variable of the dataset")
        bad = set(encoding[name]) - set(LAYOUT_KEYS)
        if bad:
            raise ParamError(f"encoding of {name!r}: unknown keys {sorted(bad)}")
    for key in ds.variables:
        if not isinstance(key, str) or "/" in key or key.startswith("_"):
            raise ParamError(f"variable name {key!r}: a str without '/' nor leading '_'")
    tmp = out.with_name(f".{out.name}.tmp-{uuid.uuid4().hex}")
    tmp.mkdir(parents=True)
    try:
        var_attrs = _write_variables(ds, tmp, encoding)
        manifest = {
            "data_vars": list(ds.data_vars),
            "coords": list(ds.coords),
            "dims": {str(k): int(v) for k, v in ds.sizes.items()},
            "attrs": {k: _jsonable(v) for k, v in ds.attrs.items()},
            "variable_attrs": var_attrs,
        }
        (tmp / layout.MANIFEST).write_text(json.dumps(manifest, indent=1))
        if out.exists():
            old = out.with_name(f".{out.name}.old-{uuid.uuid4().hex}")
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _write_variables(
    ds: xr.Dataset, where: Path, encoding: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    var_attrs: dict[str, dict[str, Any]] = {}
    for key, var in ds.variables.items():
        name = str(key)
        enc = {k: v for k, v in var.encoding.items() if k in LAYOUT_KEYS}
        enc.update(encoding.get(name, {}))
        attrs = {str(k): _jsonable(v) for k, v in var.attrs.items()}
        if attrs:
            var_attrs[name] = attrs
        is_coord = name in ds.coords
        kept = _kept_encoding(var)
        if is_coord and var.dtype.kind in "OUS":
            labels = [str(x) for x in np.asarray(var.values).reshape(-1)]
            if var.ndim != 1:
                raise NotImplementedError(f"string coordinate {name!r} of {var.ndim} dims")
            arr = asarray(
                np.arange(len(labels), dtype=np.int32),
                urlpath=os.fspath(where / f"{layout.COORD_PREFIX}{name}.b2nd"),
                mode="w",
                cparams=_cparams(enc, name),
            )
            arr.vlmeta["dims"] = list(var.dims)
            arr.vlmeta["is_coord"] = True
            arr.vlmeta["coord_name"] = name
            arr.vlmeta["dtype"] = "string"
            arr.vlmeta["labels"] = labels
        elif is_coord:
            v = var if var.ndim else xr.Variable(("_one",), np.asarray(var.values).reshape(1))
            arr = _write_array(v, where / f"{layout.COORD_PREFIX}{name}.b2nd", enc, name)
            arr.vlmeta["dims"] = list(var.dims) if var.ndim else [layout.SCALAR_DIM]
            arr.vlmeta["is_coord"] = True
            arr.vlmeta["coord_name"] = name
        else:
            arr = _write_array(var, where / f"{name}.b2nd", enc, name)
            arr.vlmeta["dims"] = list(var.dims)
            arr.vlmeta["var"] = name
            arr.vlmeta["nbytes"] = int(arr.nbytes)
            arr.vlmeta["cbytes"] = int(arr.schunk.cbytes)
            arr.vlmeta["cratio"] = round(arr.nbytes / max(arr.schunk.cbytes, 1), 1)
            for key in ("units", "long_name"):
                if key in attrs:
                    arr.vlmeta[key] = attrs[key]
            others = {k: v for k, v in attrs.items() if k not in ("units", "long_name")}
            if others:
                arr.vlmeta["attrs"] = json.dumps(others)
        if kept:
            arr.vlmeta["encoding"] = kept
    return var_attrs
