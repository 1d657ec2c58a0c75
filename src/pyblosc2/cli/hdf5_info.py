"""``info`` and ``verify`` for HDF5 files (``data.h5``) and datasets (``data.h5:/group/var``),
read through h5py and :mod:`pyblosc2.hdf5` (no filter plugin).

``info`` lists every dataset: shape, dtype, chunks, the filter pipeline — for Blosc (32001)
and Blosc2 (32026) the codec, clevel, shuffle or filter, type size and block size decoded
from ``cd_values`` and the first stored chunk, for others "HDF5's own pipeline" or the plugin
filters it needs — the chunks stored, their bytes and the compression ratio. ``verify``
decodes every stored chunk (Blosc/Blosc2 by pyblosc2, Fletcher-32 checked; other pipelines
by HDF5) and names damaged chunks by their grid index; exit status as for frames: 0 intact,
1 damaged (also a truncated file), 2 unreadable (not an HDF5 file, or a pipeline neither
pyblosc2 nor HDF5 decodes).
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..constants import Codec, Filter
from . import verify as verify_mod
from .hdf5_source import HDF5_SIGNATURE, split_hdf5
from .info import jsonable
from .progress import progress
from .sources import CliError, about
from .tables import cell, table

__all__ = ["describe", "format_text", "handles", "verify"]

BLOSC_SHUFFLES = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}


def handles(path: str) -> bool:
    """Whether ``path`` is an HDF5 file (by its signature) or ``<HDF5 file>:<dataset>``."""
    if path == "-":
        return False
    if split_hdf5(path) is not None:
        return True
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE


def _open(path: str) -> tuple[Any, str | None, Any]:
    """``(h5py module, dataset name or None, open h5py.File)``."""
    with about(path):
        try:
            import h5py
        except ImportError:
            raise CliError(path, "an HDF5 file: reading it needs h5py (pyblosc2[hdf5])") from None
        split = split_hdf5(path)
        file, name = split if split is not None else (path, None)
        return h5py, name, h5py.File(file, "r")


def _datasets(h5py: Any, f: Any, name: str | None, where: str) -> list[Any]:
    if name is None:
        found: list[Any] = []
        f.visititems(lambda _, obj: found.append(obj) if isinstance(obj, h5py.Dataset) else None)
        return found
    with about(where):
        obj = f[name]
    if not isinstance(obj, h5py.Dataset):
        raise CliError(where, f"{name!r} is a {type(obj).__name__}, not a dataset")
    return [obj]


def _stored(ds: Any) -> list[tuple[tuple[int, ...], int]]:
    """``(chunk offset, stored size)`` of every stored chunk of a chunked dataset."""
    if ds.chunks is None:
        return []
    sid = ds.id
    got: list[tuple[tuple[int, ...], int]] = []
    try:
        sid.chunk_iter(lambda info: got.append((tuple(info.chunk_offset), int(info.size))))
    except (AttributeError, RuntimeError, TypeError):  # h5py or HDF5 without chunk_iter
        got = []
        for i in range(sid.get_num_chunks()):
            info = sid.get_chunk_info(i)
            got.append((tuple(info.chunk_offset), int(info.size)))
    return got


def _codec_name(code: int) -> str:
    try:
        return Codec(code).name.lower()
    except ValueError:
        return f"user({code})"


def _filter_fields(h5py: Any, ds: Any, hdf5: Any) -> tuple[dict[str, Any], Any]:
    """The pipeline's fields, and the dataset's chunk codec (None: HDF5 decodes it)."""
    plist = ds.id.get_create_plist()
    filters = [plist.get_filter(i) for i in range(plist.get_nfilters())]
    d: dict[str, Any] = {"pipeline": hdf5.pipeline.describe(filters) if filters else "[]"}
    codec = hdf5.pipeline.chunk_codec(
        filters, ds.dtype, ds.chunks, ds.name or "dataset", h5py.h5z.filter_avail
    )
    if codec is None:
        d["filter"] = "HDF5's own pipeline" if filters else "none"
        return d, None
    v = codec.values
    d["cd_values"] = list(v.to_cd_values())
    d["typesize"], d["clevel"], d["codec"] = v.typesize, v.clevel, _codec_name(v.codec)
    if isinstance(v, hdf5.BloscValues):
        d["filter"] = "Blosc (32001)"
        d["shuffle"] = BLOSC_SHUFFLES.get(v.shuffle, str(v.shuffle))
    else:
        d["filter"] = "Blosc2 (32026)"
        d["shuffle"] = Filter(v.filter).name.lower()
        d["blocksize"] = v.blocksize or "auto"
        d["b2nd"] = v.b2nd
    d["fletcher32"] = codec.fletcher_bit is not None
    return d, codec


def _first_chunk(ds: Any, codec: Any, offset: tuple[int, ...]) -> dict[str, Any]:
    """What the first stored chunk says: its block size and, for b2nd, block shape."""
    from ..hdf5.chunkfile import StoredChunk
    from ..hdf5.fletcher32 import strip_checksum

    mask, data = ds.id.read_direct_chunk(offset)
    body = memoryview(data)
    if codec.checksummed(mask):
        body = strip_checksum(body, f"HDF5 {ds.name} chunk {offset}")
    if mask >> codec.codec_bit & 1:
        return {"stored_as_is": True}
    plan = codec.plan(StoredChunk(mask, len(body), None, data=body).source())
    out: dict[str, Any] = {}
    if plan.reader is not None:
        out["chunk_blocksize"] = plan.reader.header.blocksize
    if plan.geometry is not None:
        out["blocks"] = list(plan.geometry.blocks)
    return out


def describe_dataset(h5py: Any, ds: Any) -> dict[str, Any]:
    """Everything ``info`` says about one dataset, as plain JSON types."""
    from .. import hdf5

    d: dict[str, Any] = {"name": ds.name, "shape": list(ds.shape), "dtype": str(ds.dtype)}
    d["chunks"] = list(ds.chunks) if ds.chunks else None
    try:
        fields, codec = _filter_fields(h5py, ds, hdf5)
    except hdf5.UnsupportedPipelineError as exc:
        fields, codec = {"filter": f"not readable without plugins: {exc}"}, None
    except ValueError as exc:  # bad cd_values
        fields, codec = {"filter": "unreadable", "error": str(exc)}, None
    d.update(fields)
    stored = _stored(ds)
    itemsize = ds.dtype.itemsize
    d["nbytes"] = int(math.prod(ds.shape)) * itemsize
    if ds.chunks is None:
        d["storage_bytes"] = int(ds.id.get_storage_size())
        d["ratio"] = round(d["nbytes"] / d["storage_bytes"], 3) if d["storage_bytes"] else None
    else:
        grid = math.prod(-(-n // c) for n, c in zip(ds.shape, ds.chunks, strict=True))
        d["stored_chunks"], d["grid_chunks"] = len(stored), grid
        d["storage_bytes"] = sum(s for _, s in stored)
        chunk_nbytes = math.prod(ds.chunks) * itemsize
        raw = len(stored) * chunk_nbytes
        d["ratio"] = round(raw / d["storage_bytes"], 3) if d["storage_bytes"] else None
    if codec is not None and stored:
        try:
            d.update(_first_chunk(ds, codec, stored[0][0]))
        except (ValueError, OSError) as exc:
            d["error"] = f"first stored chunk: {exc}"
    if ds.attrs:
        d["attrs"] = jsonable({k: _attr(ds.attrs, k) for k in ds.attrs})
    return d


def _attr(attrs: Any, key: str) -> Any:
    try:
        return attrs[key]
    except (OSError, TypeError, ValueError) as exc:  # a type h5py cannot read
        return f"<unreadable: {exc}>"


def describe(path: str, chunks: bool = False) -> dict[str, Any]:
    """What ``info`` reports about an HDF5 file or one dataset of it (``file.h5:/name``)."""
    del chunks  # no per-chunk table for HDF5
    h5py, name, f = _open(path)
    with f:
        datasets = _datasets(h5py, f, name, path)
        with about(path):
            rows = [describe_dataset(h5py, ds) for ds in datasets]
    if name is not None:
        return {"path": path, "kind": "HDF5 dataset", **rows[0]}
    return {"path": path, "kind": "HDF5 file", "datasets": rows}


_COLUMNS = ("name", "shape", "dtype", "chunks", "filter", "codec", "clevel", "shuffle")
_SIZES = ("stored", "storage_bytes", "ratio")
_ORDER = (
    *("kind", "name", "shape", "dtype", "chunks", "filter", "pipeline", "cd_values"),
    *("codec", "clevel", "shuffle", "typesize", "blocksize", "b2nd", "blocks"),
    *("chunk_blocksize", "fletcher32", "stored_as_is", "stored_chunks", "grid_chunks"),
    *("nbytes", "storage_bytes", "ratio", "error", "attrs"),
)


def format_text(d: dict[str, Any]) -> str:
    """``describe``'s dict for people: a table of datasets, or ``key: value`` lines."""
    lines = [f"{d['path']}:"]
    if "datasets" not in d:
        keys = [k for k in _ORDER if k in d]
        width = max(len(k) for k in keys)
        lines += [f"  {k:<{width}}: {cell(d[k])}" for k in keys]
        return "\n".join(lines)
    lines.append(f"  kind    : {d['kind']}, {len(d['datasets'])} datasets")
    heads = (*_COLUMNS, *_SIZES)
    cells = []
    for row in d["datasets"]:
        stored = f"{row['stored_chunks']}/{row['grid_chunks']}" if "stored_chunks" in row else None
        filt = str(row.get("filter", "-")).split(":")[0]
        values = {**row, "filter": filt, "stored": stored}
        cells.append([cell(values.get(c)) for c in heads])
    return "\n".join([*lines, *table(heads, cells)])


# -- verify ----------------------------------------------------------------------------------
def _verify_dataset(ds: Any, bar: Any) -> tuple[int, list[str], int]:
    """``(status, report lines, chunks checked)`` for one dataset."""
    from .. import hdf5

    try:
        d = hdf5.open(ds)
    except hdf5.UnsupportedPipelineError as exc:
        return verify_mod.UNREADABLE, [f"{ds.name}: NOT CHECKED ({exc})"], 0
    except ValueError as exc:  # cd_values that do not fit the dataset
        return verify_mod.DAMAGED, [f"{ds.name}: DAMAGED ({exc})"], 0
    damaged: dict[str, str] = {}
    regions = _regions(ds)
    for label, region in regions:
        try:
            np.asarray(d[region] if ds.shape else d[()])
        except (ValueError, OSError, NotImplementedError) as exc:
            damaged[label] = str(exc) or type(exc).__name__
        bar.update()
    n = len(regions)
    what = "chunk" if ds.chunks is not None else "slab"
    fletcher = d.codec is not None and d.codec.fletcher_bit is not None
    checked = "decoded, Fletcher-32 checked" if fletcher else "decoded"
    if not damaged:
        return verify_mod.INTACT, [f"{ds.name}: OK ({n} {what}{'s' * (n != 1)} {checked})"], n
    lines = [f"{ds.name}: DAMAGED ({len(damaged)} of {n} {what}s damaged; {checked})"]
    lines += [f"  {what} {k}: {why}" for k, why in damaged.items()]
    return verify_mod.DAMAGED, lines, n


def _regions(ds: Any) -> list[tuple[str, Any]]:
    """What to read to check a dataset: each stored chunk (labelled by its grid index), or
    row slabs of a dataset without chunks."""
    if not ds.shape:
        return [("()", ())]
    if ds.chunks is None:
        row = max(1, math.prod(ds.shape[1:]) * ds.dtype.itemsize)
        step = max(1, (4 << 20) // row)
        return [(f"rows {r}..", slice(r, r + step)) for r in range(0, ds.shape[0], step)]
    out = []
    for offset, _ in _stored(ds):
        index = tuple(o // c for o, c in zip(offset, ds.chunks, strict=True))
        region = tuple(
            slice(o, min(o + c, n)) for o, c, n in zip(offset, ds.chunks, ds.shape, strict=True)
        )
        if all(s.start < s.stop for s in region):
            out.append((str(index), region))
    return out


def verify(path: str, show_progress: bool = False) -> tuple[list[str], int]:
    """Verify every dataset of an HDF5 file (or the one named): report lines and status."""
    try:
        h5py, name, f = _open(path)
    except CliError as exc:
        if "truncated" in exc.message:
            return [f"{path}: DAMAGED ({exc.message})"], verify_mod.DAMAGED
        raise
    with f:
        datasets = _datasets(h5py, f, name, path)
        total = sum(len(_regions(ds)) for ds in datasets)
        bar = progress(total, "verify", enabled=show_progress)
        status, lines, count = verify_mod.INTACT, [], 0
        for ds in datasets:
            with about(f"{path}:{ds.name}"):
                got, report, n = _verify_dataset(ds, bar)
            status, count = max(status, got), count + n
            lines += ["  " + line for line in report]
        bar.close()
    head = {verify_mod.INTACT: "OK", verify_mod.DAMAGED: "DAMAGED"}.get(status, "NOT CHECKED")
    summary = f"{path}: {head} ({len(datasets)} dataset{'s' * (len(datasets) != 1)} checked)"
    return [summary, *lines], status
