"""The ``pyblosc2`` xarray engine: ``xr.open_dataset(path, engine="pyblosc2")`` opens the
stores xarray-blosc2 writes (:mod:`.layout`) and those :func:`~.writer.to_blosc2` writes,
lazily: each variable is a :class:`PyBlosc2Array` that reads only the chunks and blocks an
indexing operation needs. CF conventions are decoded as by other engines (``decode_cf=False``
gives the stored values and attributes, as xarray-blosc2 returns them). Each variable's
``encoding`` holds its ``chunks`` (and ``preferred_chunks``, so ``chunks={}`` maps dask chunks
onto the stored ones), ``blocks``, ``codec``, ``clevel``, ``filters`` and ``dtype``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from ..constants import Codec, Filter
from ..ndarray.ndarray import NDArray
from . import layout

__all__ = ["PyBlosc2Array", "PyBlosc2BackendEntrypoint", "open_store"]


class PyBlosc2Array(BackendArray):
    """A lazily read NDArray: basic and outer indexing with one vector (xarray's
    ``OUTER_1VECTOR``), each read decoding only what it selects."""

    def __init__(self, array: NDArray, lock: threading.Lock | None = None) -> None:
        self.array = array
        self.shape = tuple(array.shape)
        self.dtype = np.dtype(array.dtype)
        self.lock = lock or threading.Lock()

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.OUTER_1VECTOR, self._raw
        )

    def _raw(self, key: tuple[Any, ...]) -> np.ndarray:
        with self.lock:
            return np.asarray(self.array[key] if self.shape else self.array[()])


def _encoding(arr: NDArray, dims: tuple[str, ...], stored: dict[str, Any]) -> dict[str, Any]:
    cp = arr.schunk.cparams
    filters = [Filter(f).name.lower() for f in cp.filters if f != Filter.NOFILTER]
    enc = dict(stored)
    enc.update(
        chunks=tuple(arr.chunks),
        preferred_chunks=dict(zip(dims, arr.chunks, strict=True)),
        blocks=tuple(arr.blocks),
        codec=Codec(cp.codec).name.lower(),
        clevel=int(cp.clevel),
        filters=filters,
        dtype=np.dtype(arr.dtype),
    )
    return enc


def open_store(
    path: str | os.PathLike[str],
    *,
    drop_variables: Iterable[str] | None = None,
    trim_to_commit: bool = True,
) -> tuple[dict[str, xr.Variable], dict[str, Any], set[str]]:
    """The variables (lazy), dataset attributes and coordinate names of a store, before CF
    decoding."""
    root = Path(path)
    drop = set(drop_variables or ())
    if root.is_dir():
        nested = [d for d in root.iterdir() if d.is_dir() and any(d.glob("*.b2nd"))]
        shards = list(root.glob("*.b2z"))
        if not any(root.glob("*.b2nd")) and (nested or shards):
            raise NotImplementedError(
                f"nested or sharded xarray-blosc2 stores (sub-stores of {root}); open each "
                "one and combine them with xarray.combine_by_coords"
            )
        items = layout.entries(root)
    elif root.suffix == ".b2nd":
        items = [layout.Entry(root.stem, partial(layout.open_file, root))]
    elif root.is_file() and layout.is_zip(root):
        items = layout.entries(root)
    else:
        raise FileNotFoundError(f"not an xarray-blosc2 store: {root}")
    manifest = layout.read_manifest(root) if root.suffix != ".b2nd" else {}
    var_attrs: dict[str, dict[str, Any]] = manifest.get("variable_attrs") or {}
    attrs: dict[str, Any] = dict(manifest.get("attrs") or {})
    lineage = manifest.get("lineage")
    if lineage:
        attrs["lineage"] = lineage if isinstance(lineage, str) else json.dumps(lineage)
    variables: dict[str, xr.Variable] = {}
    coords: set[str] = set()
    committed = None
    for entry in items:
        if entry.is_sidecar:
            if entry.stem == layout.COMMIT:
                committed = int(np.asarray(entry.opener()[()]).item())
            continue
        arr = entry.opener()
        vm = layout.vlmeta_dict(arr)
        is_coord = bool(vm.get("is_coord", False))
        name = vm.get("coord_name") or vm.get("var") or entry.stem
        if name in drop:
            continue
        dims = tuple(vm.get("dims") or [f"dim_{i}" for i in range(arr.ndim)])
        a: dict[str, Any] = {k: vm[k] for k in ("units", "long_name") if k in vm}
        a.update(layout.json_attrs(vm.get("attrs")))
        a.update(var_attrs.get(name, {}))
        stored_enc = layout.json_attrs(vm.get("encoding"))
        if is_coord and vm.get("dtype") == "string":
            labels = np.array(vm.get("labels", []))
            data: Any = labels[np.asarray(arr[...])] if labels.size else labels
            var = xr.Variable(dims, data, attrs=a)
        elif dims == (layout.SCALAR_DIM,):
            var = xr.Variable((), np.asarray(arr[...]).reshape(-1)[0], attrs=a)
        else:
            if len(dims) != arr.ndim:
                raise ValueError(f"{entry.stem}: dims {dims} for an array of {arr.ndim} dims")
            lazy = indexing.LazilyIndexedArray(PyBlosc2Array(arr))
            var = xr.Variable(dims, lazy, attrs=a, encoding=_encoding(arr, dims, stored_enc))
        variables[name] = var
        if is_coord:
            coords.add(name)
    if committed is not None:
        attrs["committed_extent"] = committed
        if trim_to_commit:
            for name, var in list(variables.items()):
                if "time" in var.dims and committed < var.sizes["time"]:
                    variables[name] = var.isel(time=slice(0, committed))
    return variables, attrs, coords


class PyBlosc2BackendEntrypoint(BackendEntrypoint):
    """xarray's entry point for ``engine="pyblosc2"`` (registered under
    ``xarray.backends``)."""

    description = "xarray-blosc2 stores (.b2 directories, .b2z zips, .b2nd), read by pyblosc2"
    open_dataset_parameters = (
        "filename_or_obj",
        "drop_variables",
        "mask_and_scale",
        "decode_times",
        "concat_characters",
        "decode_coords",
        "use_cftime",
        "decode_timedelta",
        "trim_to_commit",
    )

    def open_dataset(
        self,
        filename_or_obj: Any,
        *,
        drop_variables: Iterable[str] | None = None,
        mask_and_scale: bool = True,
        decode_times: bool = True,
        concat_characters: bool = True,
        decode_coords: bool = True,
        use_cftime: bool | None = None,
        decode_timedelta: bool | None = None,
        trim_to_commit: bool = True,
    ) -> xr.Dataset:
        variables, attrs, coords = open_store(
            filename_or_obj, drop_variables=drop_variables, trim_to_commit=trim_to_commit
        )
        decoded, ds_attrs, coord_names = xr.conventions.decode_cf_variables(
            variables,
            attrs,
            mask_and_scale=mask_and_scale,
            decode_times=decode_times,
            concat_characters=concat_characters,
            decode_coords=decode_coords,
            use_cftime=use_cftime,
            decode_timedelta=decode_timedelta,
        )
        ds = xr.Dataset(decoded, attrs=ds_attrs)
        ds = ds.set_coords([c for c in {*coords, *coord_names} if c in ds.variables])
        ds.set_close(None)
        return ds

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if not isinstance(filename_or_obj, str | os.PathLike):
            return False
        p = Path(filename_or_obj)
        if p.suffix in (".b2nd", ".b2z"):
            return True
        return p.is_dir() and ((p / layout.MANIFEST).exists() or any(p.glob("*.b2nd")))
