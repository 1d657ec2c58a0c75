"""Write the golden zarr store in ``store.zarr/`` with the reference libraries only.

zarr-python 3 with its own ``blosc`` codec (zarr v3 arrays) and numcodecs' ``Blosc`` (zarr v2
arrays) — both call C-Blosc 1.x — write every array of :data:`ARRAYS`; the tests read them
back through pyblosc2 and compare with :func:`expected`. Run from anywhere, once:

    python tests/golden/zarr/make_zarr_golden.py

Made with zarr 3.1.6, numcodecs 0.16.6 (C-Blosc 1.21.x). Importing this module has no side
effects and needs only numpy (the tests import :data:`ARRAYS` and :func:`expected`).
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np

STORE = Path(__file__).resolve().parent / "store.zarr"

#: name -> how the array is made. ``codec``: zarr.codecs.BloscCodec keyword arguments (v3);
#: ``compressor``: numcodecs.Blosc keyword arguments (v2).
ARRAYS: dict[str, dict] = {
    "v3_lz4_shuffle_f4": dict(
        zarr_format=3,
        dtype="f4",
        shape=(50, 37),
        chunks=(16, 16),
        codec=dict(cname="lz4", clevel=5, shuffle="shuffle"),
    ),
    "v3_zstd_bitshuffle_u1": dict(
        zarr_format=3,
        dtype="u1",
        shape=(700,),
        chunks=(256,),
        codec=dict(cname="zstd", clevel=3, shuffle="bitshuffle"),
    ),
    "v3_blosclz_noshuffle_i8": dict(
        zarr_format=3,
        dtype="i8",
        shape=(40, 30),
        chunks=(16, 16),
        codec=dict(cname="blosclz", clevel=9, shuffle="noshuffle"),
    ),
    "v3_zlib_shuffle_i2": dict(
        zarr_format=3,
        dtype="i2",
        shape=(1000,),
        chunks=(300,),
        codec=dict(cname="zlib", clevel=1, shuffle="shuffle"),
    ),
    "v3_lz4hc_auto_c8": dict(
        zarr_format=3,
        dtype="c8",
        shape=(20, 20),
        chunks=(8, 8),
        codec=dict(cname="lz4hc", clevel=7),
    ),
    "v3_zstd_shuffle_S3": dict(
        zarr_format=3,
        dtype="S3",
        shape=(500,),
        chunks=(128,),
        codec=dict(cname="zstd", clevel=5, shuffle="shuffle"),
    ),
    "v3_lz4_blocksize4096_f8": dict(
        zarr_format=3,
        dtype="f8",
        shape=(10_000,),
        chunks=(6_000,),
        codec=dict(cname="lz4", clevel=5, shuffle="shuffle", blocksize=4096),
    ),
    "v3_lz4_clevel0_u2": dict(
        zarr_format=3,
        dtype="u2",
        shape=(500,),
        chunks=(200,),
        codec=dict(cname="lz4", clevel=0, shuffle="shuffle"),
    ),
    "v3_sharded_zstd_i4": dict(
        zarr_format=3,
        dtype="i4",
        shape=(64, 64),
        chunks=(16, 16),
        shards=(32, 64),
        codec=dict(cname="zstd", clevel=5, shuffle="shuffle"),
    ),
    "v2_lz4_autoshuffle_f4": dict(
        zarr_format=2,
        dtype="f4",
        shape=(50, 37),
        chunks=(16, 16),
        compressor=dict(cname="lz4", clevel=5, shuffle=-1),
    ),
    "v2_zstd_bitshuffle_u1_F": dict(
        zarr_format=2,
        dtype="u1",
        shape=(60, 50),
        chunks=(32, 32),
        order="F",
        compressor=dict(cname="zstd", clevel=5, shuffle=2),
    ),
    "v2_blosclz_shuffle_i8": dict(
        zarr_format=2,
        dtype="i8",
        shape=(700,),
        chunks=(256,),
        compressor=dict(cname="blosclz", clevel=5, shuffle=1),
    ),
    "v2_zlib_noshuffle_f8": dict(
        zarr_format=2,
        dtype="f8",
        shape=(30, 30),
        chunks=(16, 16),
        compressor=dict(cname="zlib", clevel=6, shuffle=0),
    ),
}


def make_array(dtype, shape) -> np.ndarray:
    """Deterministic, compressible data of any dtype, by integer arithmetic only (identical on
    every platform); the tests use it too."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    noise = i * 7919 % 13
    if dt.kind in "ui":
        a = ((i // 3) % 120 + noise % 5).astype(dt)
    elif dt.kind == "b":
        a = (i // 7 + noise) % 3 == 0
    elif dt.kind == "f":
        a = ((i // 3) % 4000 * 0.25 + noise * 0.125).astype(dt)
    elif dt.kind == "c":
        a = ((i // 3) * 0.5 + 1j * (noise * 0.25)).astype(dt)
    elif dt.kind == "M":
        a = (1_600_000_000 + i // 4 * 60).astype(dt)
    elif dt.names:  # a structured dtype: fill each field by its kind
        a = np.zeros(n, dt)
        for k, name in enumerate(dt.names):
            a[name] = make_array(dt[name], (n,)) if k % 2 == 0 else noise
    else:  # S/V: letters in runs
        letters = (i * dt.itemsize + np.arange(dt.itemsize)[:, None]) // 11 % 26 + 97
        a = letters.T.astype(np.uint8).reshape(-1).view(dt)
    return a.reshape(shape)


def expected(name: str) -> np.ndarray:
    """The data of golden array ``name``."""
    spec = ARRAYS[name]
    return make_array(spec["dtype"], spec["shape"])


def write(name: str) -> None:
    import numcodecs
    import zarr

    spec = ARRAYS[name]
    data = expected(name)
    if spec["zarr_format"] == 3:
        compressor = zarr.codecs.BloscCodec(**spec["codec"])
    else:
        compressor = numcodecs.Blosc(**spec["compressor"])
    z = zarr.create_array(
        zarr.storage.LocalStore(STORE / name),
        shape=data.shape,
        dtype=data.dtype,
        chunks=spec["chunks"],
        shards=spec.get("shards"),
        compressors=compressor,
        zarr_format=spec["zarr_format"],
        **({"order": spec["order"]} if "order" in spec else {}),
    )
    z[...] = data


def main() -> None:
    import zarr

    assert type(zarr.codecs.BloscCodec()).__module__ == "zarr.codecs.blosc"  # stock codec
    shutil.rmtree(STORE, ignore_errors=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # S3: "no Zarr V3 specification"
        for name in ARRAYS:
            write(name)


if __name__ == "__main__":
    main()
