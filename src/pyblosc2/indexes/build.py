"""Building the pieces of an index from the indexed values, in python-blosc2 4.x's layout.

Each builder takes the values of the target (a 1-d numpy array, one per row) and returns
the descriptor section it fills, after writing its pieces through :func:`.store.write_sidecar`:
``levels`` (min/max/flags per chunk, block or sub-block), and for the kinds that sort,
chunk-local sorted values with their positions (``partial``) or buckets (``bucket``, values
quantized by ``value_lossy_bits``), the globally sorted values with their int64 positions
(``full``), or blocks of sorted values with the min and max of each (``opsi``, built in one
pass as the fully ordered end state: ``is_csi``).

>>> import numpy as np
>>> summaries(np.array([3.0, np.nan, 1.0, 2.0]), 2)["min"].tolist()
[3.0, 1.0]
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .descriptor import boundary_dtype, summary_dtype
from .kinds import (
    FLAG_ALL_NAN,
    FLAG_HAS_NAN,
    LEVELS_BY_KIND,
    bucket_value_lossy_bits,
    chunk_multiplier,
    nav_segment_len,
    opsi_storage_chunk_len,
    position_dtype,
    segment_len,
    segment_rows,
)
from .store import write_sidecar

__all__ = [
    "boundaries",
    "build_bucket",
    "build_full",
    "build_levels",
    "build_opsi",
    "build_partial",
    "chunk_sort",
    "quantize",
    "summaries",
]


def _rows(values: np.ndarray, seg: int) -> list[np.ndarray]:
    """The values as 2-d pieces of ``seg`` columns: the whole segments, then the tail."""
    n = values.shape[0]
    whole = n // seg * seg
    out = [values[:whole].reshape(-1, seg)] if whole else []
    if whole < n:
        out.append(values[whole:].reshape(1, -1))
    return out


def summaries(values: np.ndarray, seg: int) -> np.ndarray:
    """min, max and flags of each segment of ``seg`` rows (NaNs left out and flagged)."""
    dtype = values.dtype
    out = np.empty(math.ceil(values.shape[0] / seg), dtype=summary_dtype(dtype))
    at = 0
    for part in _rows(values, seg):
        k = part.shape[0]
        flags = np.zeros(k, np.uint8)
        if dtype.kind == "f":
            nan = np.isnan(part)
            has, allnan = nan.any(axis=1), nan.all(axis=1)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                mins, maxs = np.nanmin(part, axis=1), np.nanmax(part, axis=1)
            mins = np.where(allnan, 0, mins)
            maxs = np.where(allnan, 0, maxs)
            flags[has] |= FLAG_HAS_NAN
            flags[allnan] |= FLAG_ALL_NAN
        elif dtype.kind in "SU":
            srt = np.sort(part, axis=1)
            mins, maxs = srt[:, 0], srt[:, -1]
        else:
            mins, maxs = part.min(axis=1), part.max(axis=1)
        out["min"][at : at + k] = mins
        out["max"][at : at + k] = maxs
        out["flags"][at : at + k] = flags
        at += k
    return out


def boundaries(sorted_values: np.ndarray, seg: int) -> np.ndarray:
    """First and last non-NaN value of each ``seg``-row segment of sorted values (NaN, NaN
    for a segment of NaNs only)."""
    dtype = sorted_values.dtype
    out = np.empty(math.ceil(sorted_values.shape[0] / seg), dtype=boundary_dtype(dtype))
    at = 0
    for part in _rows(sorted_values, seg):
        k = part.shape[0]
        start, end = part[:, 0], part[:, -1]
        if dtype.kind == "f":
            good = (~np.isnan(part)).sum(axis=1)
            end = part[np.arange(k), np.maximum(good - 1, 0)]
            end = np.where(good == 0, np.nan, end)
        out["start"][at : at + k] = start
        out["end"][at : at + k] = end
        at += k
    return out


def chunk_sort(values: np.ndarray, chunk_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk of ``chunk_len`` rows sorted (stable); returns the sorted values and the
    positions of each within its chunk."""
    order = np.empty(values.shape[0], np.int64)
    at = 0
    for part in _rows(values, chunk_len):
        k, w = part.shape
        order[at : at + k * w] = np.argsort(part, axis=1, kind="stable").reshape(-1)
        at += k * w
    base = np.arange(values.shape[0], dtype=np.int64) // chunk_len * chunk_len
    return values[order + base], order


def _nav_l2(sorted_values: np.ndarray, chunk_len: int, nav_len: int) -> np.ndarray:
    """Boundaries of each navigation segment, ``segment_rows`` per chunk (a short last
    chunk repeats its last segment's)."""
    n = sorted_values.shape[0]
    per = segment_rows(chunk_len, nav_len)
    nchunks = math.ceil(n / chunk_len)
    out = np.empty(nchunks * per, dtype=boundary_dtype(sorted_values.dtype))
    for c in range(nchunks):
        seg = boundaries(sorted_values[c * chunk_len : min(n, (c + 1) * chunk_len)], nav_len)
        out[c * per : c * per + len(seg)] = seg
        out[c * per + len(seg) : (c + 1) * per] = seg[-1]
    return out


def _offsets(n: int, chunk_len: int) -> np.ndarray:
    ends = np.minimum(np.arange(1, math.ceil(n / chunk_len) + 1, dtype=np.int64) * chunk_len, n)
    return np.concatenate([np.zeros(1, np.int64), ends])


def quantize(values: np.ndarray, bits: int) -> np.ndarray:
    """BUCKET's lossy values: the low ``bits`` cleared (floats in their order-preserving
    unsigned form, non-finite values kept); monotone, never above the value."""
    if bits <= 0:
        return values
    dtype = values.dtype
    if dtype.kind in "iu":
        mask = np.array(~((1 << bits) - 1) & (np.iinfo(dtype).max if dtype.kind == "u" else -1))
        return values & mask.astype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        return values
    u = np.dtype(f"<u{dtype.itemsize}")
    sign = u.type(1 << (dtype.itemsize * 8 - 1))
    bits_ = values.astype(dtype.newbyteorder("<")).view(u).copy()
    neg = (bits_ & sign) != 0
    ordered = np.where(neg, ~bits_, bits_ ^ sign)
    ordered &= u.type(np.iinfo(u).max ^ ((1 << bits) - 1))
    pos = (ordered & sign) != 0
    back = np.where(pos, ordered ^ sign, ~ordered).view(dtype.newbyteorder("<")).astype(dtype)
    return np.where(np.isfinite(values), back, values)


def build_levels(ctx: Any, values: np.ndarray, kind: str) -> dict[str, Any]:
    """The summary levels a kind keeps."""
    levels = {}
    for level in LEVELS_BY_KIND[kind]:
        seg = segment_len(level, ctx.chunk_len, ctx.block_len)
        s = summaries(values, seg)
        path = ctx.write("summary", level, s)
        levels[level] = {
            "segment_len": seg,
            "nsegments": len(s),
            "path": path,
            "dtype": s.dtype.descr,
        }
    return levels


def _chunk_local(
    ctx: Any,
    kind: str,
    sv: np.ndarray,
    aux_name: str,
    aux: np.ndarray,
    l1: np.ndarray,
    l2: np.ndarray,
    chunk_len: int,
    nav_len: int,
) -> dict[str, Any]:
    n = sv.shape[0]
    per = segment_rows(chunk_len, nav_len)
    geo = {"chunks": (chunk_len,), "blocks": (nav_len,)}
    out = {
        "layout": "chunk-local-v1",
        "chunk_len": chunk_len,
        "nav_segment_len": nav_len,
        "nsegments_per_chunk": per,
        "values_path": ctx.write(kind, "values", sv, **geo),
        f"{aux_name}_path": ctx.write(kind, aux_name, aux, **geo),
        "offsets_path": ctx.write(kind, "offsets", _offsets(n, chunk_len)),
        "l1_path": ctx.write(f"{kind}_nav", "l1", l1),
        "l2_path": ctx.write(f"{kind}_nav", "l2", l2, chunks=(per,), blocks=(per,)),
    }
    return out


def build_partial(ctx: Any, values: np.ndarray, optlevel: int) -> dict[str, Any]:
    """PARTIAL: each index chunk sorted, with the position of each value in its chunk."""
    mult = chunk_multiplier(optlevel)
    chunk_len = ctx.chunk_len * mult
    nav_len, divisor = nav_segment_len(ctx.block_len, chunk_len, optlevel)
    sv, order = chunk_sort(values, chunk_len)
    pos = order.astype(position_dtype(chunk_len - 1))
    out = _chunk_local(
        ctx,
        "partial",
        sv,
        "positions",
        pos,
        boundaries(sv, chunk_len),
        _nav_l2(sv, chunk_len, nav_len),
        chunk_len,
        nav_len,
    )
    out.update(position_dtype=pos.dtype.str, nav_segment_divisor=divisor, chunk_multiplier=mult)
    return out


def build_bucket(ctx: Any, values: np.ndarray, optlevel: int) -> dict[str, Any]:
    """BUCKET: each index chunk sorted (values quantized), with the bucket (a 64th of a
    block) each value came from."""
    mult = chunk_multiplier(optlevel)
    chunk_len = ctx.chunk_len * mult
    nav_len = ctx.block_len
    bucket_len = max(1, math.ceil(nav_len / 64))
    bucket_count = math.ceil(chunk_len / bucket_len)
    bits = bucket_value_lossy_bits(values.dtype, optlevel)
    sv, order = chunk_sort(values, chunk_len)
    l2 = _nav_l2(sv, chunk_len, nav_len)
    qv = quantize(sv, bits)
    bdt = position_dtype(bucket_count - 1)
    buckets = (order // bucket_len).astype(bdt)
    out = _chunk_local(
        ctx,
        "bucket",
        qv,
        "bucket_positions",
        buckets,
        boundaries(qv, chunk_len),
        l2,
        chunk_len,
        nav_len,
    )
    out.update(
        bucket_count=bucket_count,
        bucket_len=bucket_len,
        chunk_multiplier=mult,
        value_lossy_bits=bits,
        bucket_dtype=bdt.str,
    )
    return out


def build_full(ctx: Any, values: np.ndarray, optlevel: int) -> dict[str, Any]:
    """FULL: all values sorted (stable), with their int64 positions."""
    mult = chunk_multiplier(optlevel)
    clen = opsi_storage_chunk_len(ctx.chunk_len, ctx.block_len, mult)
    order = np.argsort(values, kind="stable").astype(np.int64)
    sv = values[order]
    geo = {"chunks": (clen,), "blocks": (ctx.block_len,)}
    l1, l2 = boundaries(sv, clen), boundaries(sv, ctx.block_len)
    return {
        "values_path": ctx.write("full", "values", sv, **geo),
        "positions_path": ctx.write("full", "positions", order, **geo),
        "chunk_multiplier": mult,
        "sidecar_chunk_len": clen,
        "sidecar_block_len": ctx.block_len,
        "runs": [],
        "next_run_id": 0,
        "l1_path": ctx.write("full_nav", "l1", l1),
        "l2_path": ctx.write("full_nav", "l2", l2),
        "l1_dtype": l1.dtype.descr,
        "l2_dtype": l2.dtype.descr,
        "build_method": "global-sort",
    }


def build_opsi(ctx: Any, values: np.ndarray, optlevel: int, max_cycles: int) -> dict[str, Any]:
    """OPSI in its ordered end state: blocks of the globally sorted values, the min and max
    of each (one cycle, ``is_csi``)."""
    mult = chunk_multiplier(optlevel)
    blen = ctx.block_len
    clen = opsi_storage_chunk_len(ctx.chunk_len, blen, mult)
    n = values.shape[0]
    nblocks = math.ceil(n / blen)
    order = np.lexsort((np.arange(n), values)).astype(np.int64)
    sv = values[order]
    starts = np.arange(nblocks, dtype=np.int64) * blen
    mins, maxs = sv[starts], sv[np.minimum(starts + blen, n) - 1]
    nav = max(1, min(nblocks, clen // blen))
    cat = "opsi_cycle0" if ctx.persistent else "opsi"
    geo = {"chunks": (clen,), "blocks": (blen,)}
    return {
        "values_path": ctx.write(cat, "values", sv, **geo),
        "positions_path": ctx.write(cat, "positions", order, **geo),
        "mins_path": ctx.write("opsi_nav", "mins", mins, chunks=(nav,), blocks=(nav,)),
        "maxs_path": ctx.write("opsi_nav", "maxs", maxs, chunks=(nav,), blocks=(nav,)),
        "chunk_len": clen,
        "block_len": blen,
        "chunk_multiplier": mult,
        "nblocks": nblocks,
        "cycles": 1,
        "attempted_cycles": 1,
        "max_cycles": max_cycles,
        "is_csi": True,
        "block_pruning_score": 1.0,
        "block_pruning_blocks": 1.0,
        "block_pruning_runs": 1.0,
    }


class BuildContext:
    """What a builder writes through: the array, the token and kind, and where pieces go."""

    def __init__(self, array: Any, token: str, kind: str, persistent: bool, cparams: Any) -> None:
        self.array, self.token, self.kind = array, token, kind
        self.persistent, self.cparams = persistent, cparams
        self.chunk_len = max(1, int(array.chunks[0]))
        self.block_len = max(1, int(array.blocks[0]))

    def write(self, category: str, name: str, data: np.ndarray, **geo: Any) -> str | None:
        """Store one piece (geometry clipped to its length, at least 1)."""
        n = max(1, data.shape[0])
        if "chunks" in geo:
            geo["chunks"] = (max(1, min(geo["chunks"][0], n)),)
            geo["blocks"] = (max(1, min(geo["blocks"][0], geo["chunks"][0])),)
        return write_sidecar(
            self.array,
            self.token,
            self.kind,
            category,
            name,
            data,
            self.persistent,
            cparams=self.cparams,
            **geo,
        )
