"""The HDF5 interop matrix: which datasets hdf5plugin, PyTables and pyblosc2 write, and how a
case's data is made and checked. Imported by the tests and, as a script, run in a child
process that has no HDF5 filter plugin (``python -m tests.interop.hdf5_cases read|write DIR``).
"""

from __future__ import annotations

import json
import sys
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

CODECS = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
SHUFFLES = [0, 1, 2]  # no shuffle, shuffle, bitshuffle
#: (shape, chunks): 1-4 dims, every one with partial edge chunks
GEOMETRIES = [
    ((1000,), (300,)),
    ((37, 23), (10, 8)),
    ((9, 11, 13), (4, 5, 6)),
    ((5, 6, 7, 9), (2, 4, 3, 5)),
]
COMPOUND = [("a", "<f8"), ("b", "<i2"), ("c", "S3")]
DTYPES = {
    "u1": "u1",
    "i2": "<i2",
    "i4be": ">i4",
    "u8": "<u8",
    "f4": "<f4",
    "f8": "<f8",
    "c16": "<c16",
    "bool": "?",
    "S7": "S7",
    "compound": COMPOUND,
    "subarray": ("<f4", (3,)),
    "v300": [("x", "<f8", (37,)), ("y", "<i4")],
}
#: dtypes PyTables' Atom.from_dtype maps onto an Array atom
PYTABLES_DTYPES = {"u1", "i2", "i4be", "u8", "f4", "f8", "c16", "bool", "S7"}


@dataclass(frozen=True)
class Case:
    writer: str  # hdf5plugin, pytables, pyblosc2
    filter: str  # blosc, blosc2
    codec: str = "zstd"
    shuffle: int = 1
    dtype: str = "f8"
    geometry: int = 1
    fletcher32: bool = False
    blocksize: int = 0  # Blosc2 cd_values[1]

    @property
    def id(self) -> str:
        f = "-f32" if self.fletcher32 else ""
        b = f"-bs{self.blocksize}" if self.blocksize else ""
        return (
            f"{self.writer}-{self.filter}-{self.codec}-s{self.shuffle}-{self.dtype}"
            f"-{len(self.shape)}d{f}{b}"
        )

    @property
    def shape(self) -> tuple[int, ...]:
        return GEOMETRIES[self.geometry][0]

    @property
    def chunks(self) -> tuple[int, ...]:
        return GEOMETRIES[self.geometry][1]

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(DTYPES[self.dtype])  # type: ignore[call-overload]

    def data(self) -> np.ndarray:
        """Values with structure (compressible) and noise, of every byte of the dtype."""
        dt = self.np_dtype
        n = int(np.prod(self.shape))
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        raw = (np.arange(n * dt.itemsize) // 5 % 251).astype(np.uint8)
        noise = rng.integers(0, 256, raw.size, dtype=np.uint8)
        raw = np.where(rng.random(raw.size) < 0.3, noise, raw)
        if dt.kind == "b":
            raw = raw & 1
        arr = raw.view(dt.base if dt.subdtype else dt)
        if dt.kind in "fc":  # no NaN payloads: compare values bit for bit anyway
            arr = np.nan_to_num(arr, nan=1.5, posinf=2.5, neginf=-2.5)
        return arr.reshape(self.shape + dt.shape)


def matrix(writer: str) -> list[Case]:
    """The cases ``writer`` writes: every codec with every shuffle for both filters (dims
    cycling), every dtype for both filters, Fletcher-32, and Blosc2 chunks of several blocks."""
    cases = []
    for filt in ("blosc", "blosc2"):
        for i, (codec, shuffle) in enumerate((c, s) for c in CODECS for s in SHUFFLES):
            cases.append(Case(writer, filt, codec, shuffle, "f8" if i % 2 else "i2", i % 4))
        for i, dt in enumerate(DTYPES):
            if writer == "pytables" and dt not in PYTABLES_DTYPES:
                continue
            cases.append(Case(writer, filt, "lz4", 1, dt, 1 + i % 3))
        cases.append(Case(writer, filt, "zstd", 1, "f4", 2, fletcher32=True))
        cases.append(Case(writer, filt, "zlib", 2, "u8", 0, fletcher32=True))
    cases.append(Case(writer, "blosc2", "zstd", 1, "f8", 2, blocksize=256))
    cases.append(Case(writer, "blosc2", "lz4", 1, "i4be", 0, blocksize=512))
    if writer == "pytables":  # PyTables cannot choose the block size
        cases = [c for c in cases if not c.blocksize]
    return cases


#: selections checked against numpy on every case (per rank)
def selections(ndim: int) -> list[tuple]:
    full = (Ellipsis,)
    strided = tuple(slice(1, None, 2) for _ in range(ndim))
    point = (-1,) * ndim
    mixed = (slice(None, None, -3), *([1] * (ndim - 1)))
    small = tuple(slice(2, 4) for _ in range(ndim))
    picks = ([0, 5, 2, 2],) if ndim == 1 else ([3, 0, 3], *([slice(None)] * (ndim - 1)))
    return [full, strided, point, mixed, small, picks]


def write_pyblosc2(case: Case, path: Path) -> None:
    import h5py

    from pyblosc2 import hdf5

    with h5py.File(path, "w") as f:
        hdf5.create_dataset(
            f,
            "data",
            case.data(),
            dtype=case.np_dtype,
            chunks=case.chunks,
            compression=case.filter,
            codec=case.codec,
            filter=case.shuffle,
            fletcher32=case.fletcher32,
            blocksize=case.blocksize,
        )


def _read_all(directory: Path) -> dict[str, str]:
    """Every ``<id>.h5`` in ``directory`` read by pyblosc2 (no plugin) and compared with
    ``<id>.npy``: 'ok' or the failure."""
    import h5py

    from pyblosc2 import hdf5

    assert not h5py.h5z.filter_avail(32001) and not h5py.h5z.filter_avail(32026)
    results = {}
    for path in sorted(directory.glob("*.h5")):
        want = np.load(path.with_suffix(".npy"))
        try:
            with hdf5.open(path, "data") as d:
                assert d.codec is not None, "not read by pyblosc2"
                for key in selections(d.ndim):
                    got, exp = np.asarray(d[key]), want[key]
                    assert got.dtype == exp.dtype, (key, got.dtype, exp.dtype)
                    assert got.shape == exp.shape, (key, got.shape, exp.shape)
                    assert got.tobytes() == exp.tobytes(), f"values differ for {key}"
            results[path.stem] = "ok"
        except Exception as exc:  # reported per case by the test
            results[path.stem] = f"{type(exc).__name__}: {exc}"
    return results


def _write_all(directory: Path, writer_cases: list[dict]) -> dict[str, str]:
    import h5py

    assert not h5py.h5z.filter_avail(32001) and not h5py.h5z.filter_avail(32026)
    results = {}
    for spec in writer_cases:
        case = Case(**spec)
        try:
            write_pyblosc2(case, directory / f"{case.id}.h5")
            results[case.id] = "ok"
        except Exception as exc:
            results[case.id] = f"{type(exc).__name__}: {exc}"
    return results


if __name__ == "__main__":
    what, where = sys.argv[1], Path(sys.argv[2])
    if what == "read":
        out = _read_all(where)
    else:
        out = _write_all(where, [asdict(c) for c in matrix("pyblosc2")])
    print(json.dumps(out))
