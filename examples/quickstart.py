"""pyblosc2 quickstart: the main job, end to end, on files.

1. An N-d array (``.b2nd``): persist it compressed with metadata, grow it, reopen it and read a
   row lazily (only the blocks holding it are read and decoded).
2. A super-chunk (``.b2frame``) with an integrity fingerprint: append chunks, attach
   metadata, reopen, read a slice lazily and verify every chunk.
3. The chunk-level core: one chunk in, one chunk out.

Both files are readable by python-blosc2 / C-Blosc2.

Run: python examples/quickstart.py [DIRECTORY]    (default: a new temporary directory)
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import pyblosc2 as blosc2


def ndarray_job(directory: str) -> None:
    path = os.path.join(directory, "temperature.b2nd")
    rng = np.random.default_rng(0)
    hours = np.arange(1000)[:, None] / 24.0
    field = 15 + 8 * np.sin(2 * np.pi * hours) + np.linspace(0, 3, 500)  # smooth in time/space
    data = (field + rng.normal(0, 0.05, field.shape)).round(1)  # 1000 x 500 float64, 4 MB

    a = blosc2.asarray(
        data,
        urlpath=path,
        mode="w",
        meta={"units": "degC"},
        cparams={"codec": blosc2.Codec.ZSTD, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]},
    )
    a.vlmeta["source"] = {"station": "x7", "step": "1h"}
    print(f"[b2nd]   {path}")
    sizes = f"{a.nbytes:,} -> {a.cbytes:,} bytes, ratio {a.cratio:.1f}x"
    print(f"         wrote {a.shape} {a.dtype}: {sizes}")

    more = data[-500:] + 0.5
    a.resize((1500, 500))  # grow: new chunks are zeros until written
    a[1000:1500] = more  # recompresses only the chunks it touches
    print(f"         grew to {a.shape}: {a.cbytes:,} bytes, file {os.path.getsize(path):,} bytes")

    b = blosc2.open(path)  # nothing is decoded yet
    assert isinstance(b, blosc2.NDArray)  # the file has a b2nd metalayer
    row = b[1234, ::10]
    assert np.array_equal(row, more[234, ::10])
    assert b.meta["units"] == "degC" and b.vlmeta["source"]["station"] == "x7"
    print(
        f"         reopened; row 1234 (every 10th item) read {b.schunk.bytes_read:,} of "
        f"{os.path.getsize(path):,} file bytes"
    )
    print(f"         meta units={b.meta['units']!r}, vlmeta source={b.vlmeta['source']}")


def schunk_job(directory: str) -> None:
    path = os.path.join(directory, "series.b2frame")
    s = blosc2.SChunk(
        chunksize=4_000_000,
        urlpath=path,
        mode="w",
        meta={"units": "m"},
        cparams={"typesize": 8, "codec": blosc2.Codec.LZ4, "clevel": 5},
        fingerprint=True,  # an XXH3 digest per chunk, checked by verify()
    )
    for i in range(10):
        s.append_data(np.linspace(i, i + 1, 500_000))  # writes the chunk, index and trailer only
    s.vlmeta["source"] = {"sensor": 7}
    print(f"[b2frame] {path}")
    print(
        f"         appended {s.nchunks} chunks: {s.nbytes:,} -> {s.cbytes:,} bytes, "
        f"ratio {s.nbytes / s.cbytes:.1f}x"
    )

    r = blosc2.open(path)
    assert isinstance(r, blosc2.SChunk)
    part = np.frombuffer(r[1_000_000:1_000_010], np.float64)  # reads only the blocks needed
    assert np.allclose(part, np.linspace(2, 3, 500_000)[:10])
    read = r.bytes_read
    damaged = r.verify()  # rehashes every chunk (reads them all)
    assert damaged == []
    print(f"         reopened; 10 items read {read:,} of {os.path.getsize(path):,} file bytes")
    print(f"         meta units={r.meta['units']!r}, vlmeta source={r.vlmeta['source']}")
    print(f"         verify(): {len(damaged)} damaged chunks of {r.nchunks}")


def chunk_job() -> None:
    data = np.linspace(0, 1, 1_000_000)
    chunk = blosc2.compress2(data, typesize=8, codec=blosc2.Codec.ZSTD, clevel=5)
    assert np.array_equal(np.frombuffer(blosc2.decompress2(chunk), data.dtype), data)
    items = np.frombuffer(blosc2.getitem(chunk, 500_000, 500_003), data.dtype)
    ratio = data.nbytes / len(chunk)
    print(f"[chunk]   {data.nbytes:,} -> {len(chunk):,} bytes, ratio {ratio:.1f}x")
    print(f"         items 500000..500002 (decoding only their block): {items}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", help="where to write (default: a temp dir)")
    args = parser.parse_args(argv)
    directory = args.directory or tempfile.mkdtemp(prefix="pyblosc2-quickstart-")
    os.makedirs(directory, exist_ok=True)
    ndarray_job(directory)
    schunk_job(directory)
    chunk_job()


if __name__ == "__main__":
    main()
