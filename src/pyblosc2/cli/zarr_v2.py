"""zarr v2 directory stores (``.zarray``), read without zarr-python: the chunks of arrays
whose compressor is ``blosc`` (numcodecs' Blosc1 chunks), ``blosc2`` (one Blosc2 chunk, see
:mod:`pyblosc2.compat.numcodecs_blosc2`) or none, in C order, without filters. Other
compressors, filters and Fortran order are refused with a message naming them.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import numpy as np

from .zarr_v3 import ZarrArray

__all__ = ["ZarrV2Array", "is_zarr_v2_store"]

META = ".zarray"
COMPRESSORS = ("blosc", "blosc2")  # both decode with pyblosc2.decompress2
_SPECIAL = {"NaN": np.nan, "Infinity": np.inf, "-Infinity": -np.inf}


def is_zarr_v2_store(path: str) -> bool:
    """Whether ``path`` is a zarr v2 array (``.zarray``) or group (``.zgroup``) directory."""
    return os.path.isdir(path) and any(
        os.path.exists(os.path.join(path, name)) for name in (META, ".zgroup")
    )


def _where(field: str, expected: str, got: Any) -> ValueError:
    return ValueError(f".zarray: {field} is {got!r}, expected {expected}")


class ZarrV2Array(ZarrArray):
    """A zarr v2 array read chunk by chunk (missing chunks are the fill value)."""

    def __init__(self, path: str) -> None:
        if not os.path.exists(os.path.join(path, META)):
            raise ValueError("a zarr v2 group (.zgroup), not an array: name one of its arrays")
        with open(os.path.join(path, META), encoding="utf-8") as f:
            meta = json.load(f)
        if meta.get("zarr_format") != 2:
            raise _where("zarr_format", "2", meta.get("zarr_format"))
        compressor = meta.get("compressor")
        cid = None if compressor is None else compressor.get("id")
        if cid is not None and cid not in COMPRESSORS:
            raise _where("compressor id", f"one of {COMPRESSORS} or null", cid)
        if meta.get("filters"):
            raise _where("filters", "null (filters are not read here)", meta["filters"])
        if meta.get("order", "C") != "C":
            raise _where("order", "'C' (Fortran order is not read here)", meta.get("order"))
        self.path = path
        self.shape = tuple(int(s) for s in meta["shape"])
        self.chunks = tuple(int(c) for c in meta["chunks"])
        if len(self.chunks) != len(self.shape) or not all(c > 0 for c in self.chunks):
            raise _where("chunks", f"{len(self.shape)} positive ints", self.chunks)
        descr = meta["dtype"]
        self.dtype = np.dtype([tuple(d) for d in descr] if isinstance(descr, list) else descr)
        if self.dtype.hasobject:
            raise _where("dtype", "a fixed-size type", descr)
        self._v2, self._sep = True, meta.get("dimension_separator", ".")
        self._compressed = cid is not None
        self.fill = self._fill(meta.get("fill_value"))

    def _fill(self, value: Any) -> np.ndarray:
        if value is None:
            return np.zeros((), self.dtype)
        if isinstance(value, str) and value in _SPECIAL:
            return np.asarray(_SPECIAL[value]).astype(self.dtype)
        if isinstance(value, str) and self.dtype.kind in "SV":  # bytes: base64
            raw = base64.standard_b64decode(value)
            return np.frombuffer(raw, self.dtype, count=1).reshape(())
        return np.asarray(value).astype(self.dtype)
