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
>>> boundaries(np.array([1.0, 2.0, 5.0, np.nan]), 2)["end"].tolist()
[2.0, 5.0]
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..api import _state
from .descriptor import boundary_dtype, summary_dtype
from .kinds import (
    FLAG_ALL_NAN,
    FLAG_ALL_NULL,
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
from .store import create_sidecar, write_sidecar

#: the values of rows ``a:b`` of the target (a builder reads through one)
Reader = Callable[[int, int], np.ndarray]

__all__ = [
    "BuildContext",
    "Reader",
    "boundaries",
    "build_bucket",
    "build_full",
    "build_levels",
    "build_opsi",
    "build_partial",
    "build_threads",
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


def _fill(dtype: np.dtype, high: bool) -> Any:
    """A value of ``dtype`` no other compares above (``high``) or below: what a null row
    holds while a segment's extrema are taken over its valid rows."""
    if dtype.kind == "f":
        return np.inf if high else -np.inf
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if high else info.min
    if dtype.kind == "b":
        return high
    if dtype.kind == "U":
        return chr(0x10FFFF) * (dtype.itemsize // 4) if high else ""
    if dtype.kind == "S":
        return b"\xff" * dtype.itemsize if high else b""
    return np.array(np.iinfo(np.int64).max if high else np.iinfo(np.int64).min + 1).view(dtype)


def summaries(values: np.ndarray, seg: int, valid: np.ndarray | None = None) -> np.ndarray:
    """min, max and flags of each segment of ``seg`` rows (NaNs left out and flagged); with
    ``valid``, the extrema of the valid rows only, a segment without any flagged
    ``FLAG_ALL_NULL | FLAG_ALL_NAN`` with zeros (python-blosc2's null-aware summaries).

    >>> s = summaries(np.array([-1, 7, 3, -1]), 2, np.array([False, True, True, False]))
    >>> s["min"].tolist(), s["max"].tolist()
    ([7, 3], [7, 3])
    """
    if valid is None:
        return _summaries(values, seg)
    valid = np.asarray(valid, dtype=bool)
    dtype = values.dtype
    out = np.empty(math.ceil(values.shape[0] / seg), dtype=summary_dtype(dtype))
    nan = np.isnan(values) & valid if dtype.kind == "f" else np.zeros(len(values), bool)
    real = valid & ~nan
    lows = _summaries(np.where(real, values, _fill(dtype, True)).astype(dtype), seg)
    highs = _summaries(np.where(real, values, _fill(dtype, False)).astype(dtype), seg)
    at = 0
    for rv, nv, vv in zip(_rows(real, seg), _rows(nan, seg), _rows(valid, seg), strict=True):
        k = rv.shape[0]
        anyreal, anynan, anyvalid = rv.any(axis=1), nv.any(axis=1), vv.any(axis=1)
        flags = np.zeros(k, np.uint8)
        flags[anynan] |= FLAG_HAS_NAN
        flags[~anyreal] |= FLAG_ALL_NAN
        flags[~anyvalid] |= FLAG_ALL_NULL
        zero = np.zeros(1, dtype)[0]
        out["min"][at : at + k] = np.where(anyreal, lows["min"][at : at + k], zero)
        out["max"][at : at + k] = np.where(anyreal, highs["max"][at : at + k], zero)
        out["flags"][at : at + k] = flags
        at += k
    return out


def _summaries(values: np.ndarray, seg: int) -> np.ndarray:
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


def build_threads(cparams: Any) -> int:
    """Threads sorting index chunks: ``$BLOSC2_INDEX_BUILD_THREADS``, else the ``nthreads``
    of the index's ``cparams``, else the global ``nthreads`` (python-blosc2's rule).

    >>> build_threads({"nthreads": 3})
    3
    """
    forced = os.getenv("BLOSC2_INDEX_BUILD_THREADS")
    if forced is not None:
        try:
            return max(1, int(forced))
        except ValueError:
            return 1
    if cparams is not None and cparams.get("nthreads") is not None:
        return max(1, int(cparams["nthreads"]))
    return max(1, int(_state["nthreads"]))


def build_levels(
    ctx: Any,
    read: Reader,
    n: int,
    kind: str,
    valid: Reader | None = None,
    levels: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """The summary levels a kind keeps, from one pass over the values (pieces of a length
    every segment length divides); ``valid`` reads which rows hold a value (null-aware
    summaries); ``levels`` replaces the kind's (a SUMMARY index's ``granularity``)."""
    chosen = LEVELS_BY_KIND[kind] if levels is None else levels
    segs = {lv: segment_len(lv, ctx.chunk_len, ctx.block_len) for lv in chosen}
    step = math.lcm(*segs.values())
    step = step * max(1, ctx.chunk_len // step) if step <= 64 * ctx.chunk_len else max(1, n)
    parts: dict[str, list[np.ndarray]] = {lv: [] for lv in segs}
    for a in range(0, n, step):
        values = read(a, min(n, a + step))
        ok = None if valid is None else valid(a, min(n, a + step))
        for lv, seg in segs.items():
            parts[lv].append(summaries(values, seg, ok))
    out = {}
    for lv, seg in segs.items():
        s = np.concatenate(parts[lv]) if parts[lv] else summaries(read(0, 0), seg)
        out[lv] = {
            "segment_len": seg,
            "nsegments": len(s),
            "path": ctx.write("summary", lv, s),
            "dtype": s.dtype.descr,
        }
    return out


def _chunk_local(
    ctx: Any,
    read: Reader,
    n: int,
    dtype: np.dtype,
    kind: str,
    chunk_len: int,
    nav_len: int,
    aux_name: str,
    aux_dtype: np.dtype,
    chunk_aux: Callable[[np.ndarray], np.ndarray],
    stored: Callable[[np.ndarray], np.ndarray],
) -> dict[str, Any]:
    """Each index chunk read, sorted, and written to the values and ``aux_name`` pieces
    (``stored`` maps the sorted values to what is kept, ``chunk_aux`` the order to the aux
    values); the navigation pieces (small) are written at the end."""
    per = segment_rows(chunk_len, nav_len)
    nchunks = math.ceil(n / chunk_len)
    geo = {"chunks": (max(1, min(chunk_len, n)),), "blocks": (max(1, min(nav_len, n)),)}
    vals, vpath = ctx.create(kind, "values", n, dtype, **geo)
    aux, apath = ctx.create(kind, aux_name, n, aux_dtype, **geo)
    bnd = boundary_dtype(dtype)
    l1 = np.empty(nchunks, bnd)
    l2 = np.empty(nchunks * per, bnd)

    def sort(c: int) -> tuple[int, np.ndarray, np.ndarray]:
        chunk = read(c * chunk_len, min(n, (c + 1) * chunk_len))
        order = np.argsort(chunk, kind="stable")  # numpy sorts without the GIL
        return c, chunk[order], order

    threads = build_threads(ctx.cparams)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for first in range(0, nchunks, threads):  # at most ``threads`` chunks held at once
            for c, sv, order in pool.map(sort, range(first, min(nchunks, first + threads))):
                a, b = c * chunk_len, min(n, (c + 1) * chunk_len)
                kept = stored(sv)
                vals[a:b] = kept
                aux[a:b] = chunk_aux(order)
                l1[c] = boundaries(kept, len(kept))[0]
                seg = boundaries(sv, nav_len)
                l2[c * per : c * per + len(seg)] = seg
                l2[c * per + len(seg) : (c + 1) * per] = seg[-1]
    return {
        "layout": "chunk-local-v1",
        "chunk_len": chunk_len,
        "nav_segment_len": nav_len,
        "nsegments_per_chunk": per,
        "values_path": vpath,
        f"{aux_name}_path": apath,
        "offsets_path": ctx.write(kind, "offsets", _offsets(n, chunk_len)),
        "l1_path": ctx.write(f"{kind}_nav", "l1", l1),
        "l2_path": ctx.write(f"{kind}_nav", "l2", l2, chunks=(per,), blocks=(per,)),
    }


def build_partial(ctx: Any, read: Reader, n: int, dtype: np.dtype, optlevel: int) -> dict[str, Any]:
    """PARTIAL: each index chunk sorted, with the position of each value in its chunk."""
    mult = chunk_multiplier(optlevel)
    chunk_len = ctx.chunk_len * mult
    nav_len, divisor = nav_segment_len(ctx.block_len, chunk_len, optlevel)
    pdt = position_dtype(chunk_len - 1)
    out = _chunk_local(
        ctx,
        read,
        n,
        dtype,
        "partial",
        chunk_len,
        nav_len,
        "positions",
        pdt,
        lambda order: order.astype(pdt),
        lambda sv: sv,
    )
    out.update(position_dtype=pdt.str, nav_segment_divisor=divisor, chunk_multiplier=mult)
    return out


def build_bucket(ctx: Any, read: Reader, n: int, dtype: np.dtype, optlevel: int) -> dict[str, Any]:
    """BUCKET: each index chunk sorted (values quantized), with the bucket (a 64th of a
    block) each value came from."""
    mult = chunk_multiplier(optlevel)
    chunk_len = ctx.chunk_len * mult
    nav_len = ctx.block_len
    bucket_len = max(1, math.ceil(nav_len / 64))
    bucket_count = math.ceil(chunk_len / bucket_len)
    bits = bucket_value_lossy_bits(dtype, optlevel)
    bdt = position_dtype(bucket_count - 1)
    out = _chunk_local(
        ctx,
        read,
        n,
        dtype,
        "bucket",
        chunk_len,
        nav_len,
        "bucket_positions",
        bdt,
        lambda order: (order // bucket_len).astype(bdt),
        lambda sv: quantize(sv, bits),
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

    def create(
        self,
        category: str,
        name: str,
        length: int,
        dtype: np.dtype,
        chunks: tuple[int, ...],
        blocks: tuple[int, ...],
    ) -> tuple[Any, str | None]:
        """An empty piece to fill by slices, and its path."""
        return create_sidecar(
            self.array,
            self.token,
            self.kind,
            category,
            name,
            length,
            dtype,
            self.persistent,
            chunks,
            blocks,
            self.cparams,
        )
