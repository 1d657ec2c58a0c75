"""zarr v3 directory stores with the ``blosc`` codec, read and written without zarr-python
(zarr-specs v3.0 core: ``zarr.json``, regular chunk grid, ``default``/``v2`` chunk keys, the
``bytes`` codec then ``blosc``). Chunks are written by :class:`pyblosc2.compat.Blosc` (the
Blosc1 chunks zarr's own blosc codec writes) and read by :func:`pyblosc2.decompress2`; the
metadata is what zarr-python 3 writes for the same array.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from typing import Any, Literal

import numpy as np

import pyblosc2
from pyblosc2.compat import Blosc

from ..errors import ParamError
from .arrays import ArraySource

__all__ = ["ZARR_CNAMES", "ZarrArray", "is_zarr_store", "write_zarr"]

META = "zarr.json"
ZARR_CNAMES = ("blosclz", "lz4", "lz4hc", "zstd", "zlib", "snappy")
_SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
# numpy dtype kind+size <-> zarr v3 data type names (core spec)
_DTYPES = {
    "bool": "b1",
    "int8": "i1",
    "int16": "i2",
    "int32": "i4",
    "int64": "i8",
    "uint8": "u1",
    "uint16": "u2",
    "uint32": "u4",
    "uint64": "u8",
    "float16": "f2",
    "float32": "f4",
    "float64": "f8",
    "complex64": "c8",
    "complex128": "c16",
}


def is_zarr_store(path: str) -> bool:
    return os.path.isdir(path) and os.path.exists(os.path.join(path, META))


def _where(field: str, expected: str, got: Any) -> ValueError:
    return ValueError(f"zarr.json: {field} is {got!r}, expected {expected}")


class ZarrArray(ArraySource):
    """A zarr v3 array read chunk by chunk (missing chunks are the fill value)."""

    chunks: tuple[int, ...]

    def __init__(self, path: str) -> None:
        with open(os.path.join(path, META), encoding="utf-8") as f:
            meta = json.load(f)
        if meta.get("zarr_format") != 3 or meta.get("node_type") != "array":
            raise _where("zarr_format/node_type", "3 / 'array'", meta.get("zarr_format"))
        name = meta.get("data_type")
        if name not in _DTYPES:
            raise _where("data_type", f"one of {sorted(_DTYPES)}", name)
        grid = meta.get("chunk_grid", {})
        if grid.get("name") != "regular":
            raise _where("chunk_grid.name", "'regular'", grid.get("name"))
        self.path = path
        self.shape = tuple(int(s) for s in meta["shape"])
        self.chunks = tuple(int(c) for c in grid["configuration"]["chunk_shape"])
        if len(self.chunks) != len(self.shape) or not all(c > 0 for c in self.chunks):
            raise _where("chunk_shape", f"{len(self.shape)} positive ints", self.chunks)
        enc = meta.get("chunk_key_encoding", {"name": "default"})
        self._v2 = enc.get("name") == "v2"
        default_sep = "." if self._v2 else "/"
        self._sep = enc.get("configuration", {}).get("separator", default_sep)
        order: Literal["<", ">"] = "<"
        compressed = False
        for codec in meta.get("codecs", []):
            cname = codec.get("name")
            if cname == "bytes":
                endian = codec.get("configuration", {}).get("endian", "little")
                order = "<" if endian == "little" else ">"
            elif cname == "blosc" and not compressed:
                compressed = True
            else:
                raise _where("codecs", "'bytes' then 'blosc'", cname)
        self.dtype = np.dtype(_DTYPES[name]).newbyteorder(order)
        self._compressed = compressed
        fill = meta.get("fill_value", 0)
        if isinstance(fill, list) and len(fill) == 2:  # complex: [real, imag]
            fill = complex(float(fill[0]), float(fill[1]))
        self.fill = np.asarray(fill if fill is not None else 0).astype(self.dtype)

    def _key(self, coords: tuple[int, ...]) -> str:
        if self._v2:
            return self._sep.join(map(str, coords)) or "0"
        return self._sep.join(("c", *map(str, coords)))

    def _chunk(self, coords: tuple[int, ...]) -> np.ndarray:
        path = os.path.join(self.path, *self._key(coords).split("/"))
        if not os.path.exists(path):
            return np.full(self.chunks, self.fill, self.dtype)
        with open(path, "rb") as f:
            raw = f.read()
        data = pyblosc2.decompress2(raw) if self._compressed else raw
        assert data is not None
        expected = math.prod(self.chunks) * self.dtype.itemsize
        if len(data) != expected:
            raise ParamError(
                f"zarr chunk {self._key(coords)}: {len(data)} bytes, expected {expected}"
            )
        return np.frombuffer(data, self.dtype).reshape(self.chunks)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        if not self.shape:
            return self._chunk(()).reshape(())
        out = np.empty((r1 - r0, *self.shape[1:]), self.dtype)
        c = self.chunks
        rest = [range(-(-s // k)) for s, k in zip(self.shape[1:], c[1:], strict=True)]
        for i in range(r0 // c[0], -(-r1 // c[0])):
            for tail in itertools.product(*rest):
                coords = (i, *tail)
                block = self._chunk(coords)
                lo = [k * n for k, n in zip(coords, c, strict=True)]
                src = [slice(max(r0 - lo[0], 0), min(r1 - lo[0], c[0]))]
                dst = [slice(max(lo[0], r0) - r0, min(lo[0] + c[0], r1) - r0)]
                for o, k, s in zip(lo[1:], c[1:], self.shape[1:], strict=True):
                    src.append(slice(0, min(k, s - o)))
                    dst.append(slice(o, min(o + k, s)))
                out[tuple(dst)] = block[tuple(src)]
        return out


def write_zarr(
    src: ArraySource,
    path: str,
    chunks: tuple[int, ...],
    cname: str,
    clevel: int,
    shuffle: str,
) -> None:
    """Write ``src`` as a zarr v3 array at ``path`` (a new directory), row slab by slab."""
    name = next((k for k, v in _DTYPES.items() if np.dtype(v) == src.dtype.newbyteorder("<")), None)
    if name is None:
        raise ParamError(f"zarr v3 has no data type for {src.dtype}")
    if cname not in ZARR_CNAMES:
        raise ParamError(f"zarr's blosc codec has no cname {cname!r}: one of {ZARR_CNAMES}")
    if len(chunks) != len(src.shape) or not all(c > 0 for c in chunks):
        raise ParamError(f"chunks must be {len(src.shape)} positive ints, got {chunks}")
    dtype = src.dtype.newbyteorder("<")
    codec = Blosc(cname=cname, clevel=clevel, shuffle=_SHUFFLES[shuffle], typesize=dtype.itemsize)
    fill: Any = False if dtype.kind == "b" else (0.0 if dtype.kind == "f" else 0)
    if dtype.kind == "c":
        fill = [0.0, 0.0]
    meta = {
        "shape": list(src.shape),
        "data_type": name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [
            {"name": "bytes", "configuration": {"endian": "little"}},
            {
                "name": "blosc",
                "configuration": {
                    "typesize": dtype.itemsize,
                    "cname": cname,
                    "clevel": clevel,
                    "shuffle": shuffle,
                    "blocksize": 0,
                },
            },
        ],
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }
    os.makedirs(path)
    with open(os.path.join(path, META), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    if not all(src.shape):
        return
    if not src.shape:
        _put(path, (), np.asarray(src.rows(0, 1), dtype), codec)
        return
    rest = [range(-(-s // k)) for s, k in zip(src.shape[1:], chunks[1:], strict=True)]
    for i, r0 in enumerate(range(0, src.shape[0], chunks[0])):
        slab = np.asarray(src.rows(r0, min(r0 + chunks[0], src.shape[0])), dtype)
        for tail in itertools.product(*rest):
            block = np.zeros(chunks, dtype)
            region = tuple(slice(t * k, (t + 1) * k) for t, k in zip(tail, chunks[1:], strict=True))
            index = (slice(None), *region)
            part = slab[index]
            block[tuple(slice(0, n) for n in part.shape)] = part
            _put(path, (i, *tail), block, codec)


def _put(path: str, coords: tuple[int, ...], block: np.ndarray, codec: Blosc) -> None:
    where = os.path.join(path, "c", *map(str, coords)) if coords else os.path.join(path, "c")
    os.makedirs(os.path.dirname(where), exist_ok=True)
    with open(where, "wb") as f:
        f.write(codec.encode(np.ascontiguousarray(block)))
