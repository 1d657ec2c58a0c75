"""Convert HDF5: a Blosc2-compressed HDF5 dataset to a ``.b2nd`` array and back, with h5py
alone (no HDF5 filter plugin): pyblosc2 reads and writes the compressed chunks directly.

The copy goes one HDF5 chunk at a time, so the dataset never has to fit in memory. Given no
input, the script first writes an example file. Needs the ``hdf5`` extra (h5py). The command
line does the first step too: ``pyblosc2 convert data.h5:/temperature out.b2nd``.

Run: python examples/hdf5_convert.py [IN.h5 DATASET] [--out DIRECTORY]
"""

from __future__ import annotations

import argparse
import os
import tempfile

import h5py
import numpy as np

import pyblosc2 as blosc2
from pyblosc2 import hdf5


def example_file(directory: str) -> tuple[str, str]:
    path = os.path.join(directory, "data.h5")
    t = np.linspace(0, 30, 400 * 600, dtype="f8").reshape(400, 600)
    with h5py.File(path, "w") as f:  # what hdf5plugin / PyTables would write
        hdf5.create_dataset(f, "temperature", data=t, chunks=(100, 200), codec="zstd")
    return path, "temperature"


def to_b2nd(h5path: str, name: str, out: str) -> blosc2.NDArray:
    with hdf5.open(h5path, name) as d:  # lazy: chunks are read as they are asked for
        a = blosc2.empty(d.shape, dtype=d.dtype, chunks=d.chunks, urlpath=out, mode="w")
        for region, values in d.iter_chunks():  # one HDF5 chunk at a time
            a[region] = values
    return a


def to_hdf5(a: blosc2.NDArray, h5path: str, name: str) -> None:
    with h5py.File(h5path, "w") as f:
        d = hdf5.create_dataset(f, name, shape=a.shape, dtype=a.dtype, chunks=a.chunks,
                                codec="lz4", filter="bitshuffle")  # fmt: skip
        for start in range(0, a.shape[0], a.chunks[0]):
            rows = slice(start, min(start + a.chunks[0], a.shape[0]))
            d[rows] = a[rows]  # a row of chunks at a time, compressed by pyblosc2


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="*", help="IN.h5 DATASET (default: an example file)")
    parser.add_argument("--out", help="output directory (default: a temp dir)")
    args = parser.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="pyblosc2-hdf5-")
    os.makedirs(out, exist_ok=True)
    if args.input:
        h5path, name = args.input
    else:
        h5path, name = example_file(out)

    b2nd = os.path.join(out, name.strip("/").replace("/", "_") + ".b2nd")
    a = to_b2nd(h5path, name, b2nd)
    print(f"{h5path}:/{name.strip('/')} -> {b2nd}: {a.shape} {a.dtype}, chunks {a.chunks}, "
          f"{os.path.getsize(b2nd):,} bytes")  # fmt: skip
    back = os.path.join(out, "roundtrip.h5")
    to_hdf5(a, back, name)
    with hdf5.open(h5path, name) as src, hdf5.open(back, name) as dst:
        assert np.array_equal(src[...], dst[...]) and np.array_equal(src[...], a[...])
    print(f"{b2nd} -> {back} (lz4 + bitshuffle): {os.path.getsize(back):,} bytes, equal")


if __name__ == "__main__":
    main()
