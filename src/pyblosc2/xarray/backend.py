"""The ``pyblosc2`` xarray engine: ``xr.open_dataset(path, engine="pyblosc2")`` opens the
stores xarray-blosc2 writes (:mod:`.layout`) and those :func:`~.writer.to_blosc2` writes,
lazily: each variable is a :class:`PyBlosc2Array` that reads only the chunks and blocks an
indexing operation needs. CF conventions are decoded as by other engines (``decode_cf=False``
gives the stored values and attributes, as xarray-blosc2 returns them). Each variable's
``encoding`` holds its ``chunks`` (and ``preferred_chunks``, so ``chunks={}`` maps dask chunks
onto the stored ones), ``blocks``, ``codec``, ``clevel``, ``filters`` and ``dtype``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
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
    store = layout.read_store(path, frozenset(drop_variables or ()))
    variables: dict[str, xr.Variable] = {}
    coords: set[str] = set()
    for v in store.variables:
        arr = v.array
        if v.labels is not None:
            labels = np.array(v.labels)
            data: Any = labels[np.asarray(arr[...])] if labels.size else labels
            var = xr.Variable(v.dims, data, attrs=v.attrs)
        elif v.scalar:
            var = xr.Variable((), np.asarray(arr[...]).reshape(-1)[0], attrs=v.attrs)
        else:
            lazy = indexing.LazilyIndexedArray(PyBlosc2Array(arr))
            enc = _encoding(arr, v.dims, v.encoding)
            var = xr.Variable(v.dims, lazy, attrs=v.attrs, encoding=enc)
        variables[v.name] = var
        if v.is_coord:
            coords.add(v.name)
    attrs = dict(store.attrs)
    committed = store.committed
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
