"""Compress a numpy array into a Blosc2 chunk and back, with a few codecs and filters.

Run: python examples/quickstart.py
"""

from __future__ import annotations

import numpy as np

import pyblosc2 as blosc2


def main() -> None:
    data = np.linspace(0, 1, 1_000_000)  # 8 MB of float64
    print(f"input: {data.nbytes:,} bytes of {data.dtype}")
    for codec in (blosc2.Codec.LZ4, blosc2.Codec.ZSTD, blosc2.Codec.BLOSCLZ):
        for filt in (blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE):
            sample = data if codec != blosc2.Codec.BLOSCLZ else data[:100_000]
            chunk = blosc2.compress2(sample, typesize=8, codec=codec, clevel=5, filters=[filt])
            back = np.frombuffer(blosc2.decompress2(chunk), dtype=sample.dtype)
            assert np.array_equal(back, sample)
            print(
                f"{codec.name:8s} {filt.name:10s} {sample.nbytes:>10,} -> {len(chunk):>9,} "
                f"bytes  ratio {sample.nbytes / len(chunk):7.1f}x"
            )
    # Read three items without decompressing the rest of the chunk.
    chunk = blosc2.compress2(data, typesize=8, codec=blosc2.Codec.LZ4)
    part = np.frombuffer(blosc2.getitem(chunk, 500_000, 500_003), dtype=data.dtype)
    print("items 500000..500002:", part)
    # A chunk in the Blosc1 format that C-Blosc 1.x, numcodecs and zarr read.
    b1 = blosc2.compress_blosc1(data, typesize=8, clevel=5, codec=blosc2.Codec.LZ4)
    print(f"Blosc1 chunk: {len(b1):,} bytes, header version {b1[0]}")


if __name__ == "__main__":
    main()
