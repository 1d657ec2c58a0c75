"""Index kinds and the geometry python-blosc2 4.x derives from them.

python-blosc2 keeps an NDArray's indexes in its vlmeta entry ``"blosc2_indexes"`` (a msgpack
map ``{"version": 1, "indexes": {token: descriptor}}``) and their data in sidecar ``.b2nd``
files next to the array (see :mod:`.store`). This module names the closed sets of that
format (kinds, levels, summary flags) and the sizes derived from ``optlevel`` and the
array's chunks and blocks, so a builder and a reader agree on them.

>>> IndexKind("partial") is IndexKind.PARTIAL, chunk_multiplier(5), position_dtype(255).str
(True, 2, '|u1')
"""

from __future__ import annotations

import math
from enum import Enum

import numpy as np

from ..errors import ParamError, ParamTypeError, UnsupportedError

__all__ = [
    "FLAG_ALL_NAN",
    "FLAG_ALL_NULL",
    "FLAG_HAS_NAN",
    "FORMAT_VERSION",
    "LEVELS_BY_KIND",
    "SELF_TARGET_NAME",
    "SUPPORTED_DTYPE_KINDS",
    "VLMETA_KEY",
    "IndexKind",
    "bucket_value_lossy_bits",
    "chunk_multiplier",
    "nav_segment_len",
    "normalize_kind",
    "opsi_max_cycles",
    "opsi_storage_chunk_len",
    "position_dtype",
    "segment_len",
    "segment_rows",
]

VLMETA_KEY = "blosc2_indexes"
FORMAT_VERSION = 1
SELF_TARGET_NAME = "__self__"
#: summary flags (one byte per segment)
FLAG_ALL_NAN = 1 << 0
FLAG_HAS_NAN = 1 << 1
FLAG_ALL_NULL = 1 << 2
#: the numpy kinds an index may hold (python-blosc2's list)
SUPPORTED_DTYPE_KINDS = frozenset("biufmMSU")


class IndexKind(Enum):
    """The kinds of NDArray index (python-blosc2's ``blosc2.IndexKind``).

    ``SUMMARY`` keeps min/max per block; ``BUCKET`` adds chunk-local sorted (lossy) values
    with the bucket of each; ``PARTIAL`` chunk-local sorted values with their positions;
    ``FULL`` the globally sorted values with their positions; ``OPSI`` blocks of sorted
    values with the min/max of each block.

    >>> [k.value for k in IndexKind]
    ['summary', 'bucket', 'partial', 'full', 'opsi']
    """

    SUMMARY = "summary"
    BUCKET = "bucket"
    PARTIAL = "partial"
    FULL = "full"
    OPSI = "opsi"


#: the summary levels each kind keeps (python-blosc2's ``SEGMENT_LEVELS_BY_KIND``)
LEVELS_BY_KIND: dict[str, tuple[str, ...]] = {
    "summary": ("block",),
    "bucket": ("chunk", "block"),
    "partial": ("chunk", "block", "subblock"),
    "full": ("chunk", "block", "subblock"),
    "opsi": ("chunk", "block", "subblock"),
}


def normalize_kind(kind: object) -> str:
    """The kind's string, for an :class:`IndexKind` (strings are refused, as python-blosc2
    refuses them in ``create_index``).

    >>> normalize_kind(IndexKind.FULL)
    'full'
    """
    if not isinstance(kind, IndexKind):
        raise ParamTypeError(f"kind must be a blosc2.IndexKind, got {kind!r}")
    return kind.value


def segment_len(level: str, chunk_len: int, block_len: int) -> int:
    """Rows per segment of a summary level.

    >>> segment_len("subblock", 1000, 200)
    25
    """
    if level == "chunk":
        return chunk_len
    if level == "block":
        return block_len
    if level == "subblock":
        return max(1, block_len // 8)
    raise UnsupportedError(f"index summary level {level!r}")


def segment_rows(chunk_len: int, nav_len: int) -> int:
    """Navigation segments per chunk (at least one).

    >>> segment_rows(1000, 300)
    4
    """
    return max(1, math.ceil(chunk_len / nav_len))


def chunk_multiplier(optlevel: int) -> int:
    """How many array chunks one index chunk spans, by ``optlevel``.

    >>> [chunk_multiplier(o) for o in (1, 3, 7, 9)]
    [1, 2, 3, 4]
    """
    if optlevel <= 1:
        return 1
    if optlevel <= 6:
        return 2
    return 4 if optlevel == 9 else 3


def opsi_max_cycles(optlevel: int) -> int:
    """OPSI's ordering passes by ``optlevel``.

    >>> opsi_max_cycles(5)
    2
    """
    if optlevel <= 1:
        return 1
    return 2 if optlevel <= 6 else 3


def opsi_storage_chunk_len(chunk_len: int, block_len: int, multiplier: int = 1) -> int:
    """A sidecar chunk length that is a whole number of blocks (FULL and OPSI sidecars).

    >>> opsi_storage_chunk_len(781, 160, 2)
    1280
    """
    chunk_len, block_len, multiplier = max(1, chunk_len), max(1, block_len), max(1, multiplier)
    if chunk_len % block_len == 0:
        aligned = chunk_len
    elif chunk_len >= block_len:
        aligned = (chunk_len // block_len) * block_len
    else:
        aligned = block_len
    return max(block_len, aligned * multiplier)


def nav_segment_len(block_len: int, chunk_len: int, optlevel: int) -> tuple[int, int]:
    """PARTIAL's navigation segment length and the divisor of the block it came from.

    >>> nav_segment_len(200, 2000, 5)
    (50, 4)
    """
    if optlevel <= 1:
        divisor = 1
    elif optlevel <= 3:
        divisor = 2
    elif optlevel <= 6:
        divisor = 4
    else:
        divisor = 16 if optlevel == 9 else 8
    divisor = min(block_len, divisor)
    floor = max(1, math.ceil(chunk_len / 2048))
    return max(1, block_len // divisor, floor), divisor


def position_dtype(max_value: int) -> np.dtype:
    """The narrowest unsigned dtype holding ``max_value``.

    >>> position_dtype(70000).str
    '<u4'
    """
    for t in (np.uint8, np.uint16, np.uint32):
        if max_value <= np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.uint64)


def bucket_value_lossy_bits(dtype: np.dtype, optlevel: int) -> int:
    """Low bits BUCKET drops from stored values (integers and float32/64 only).

    >>> bucket_value_lossy_bits(np.dtype(np.int64), 0), bucket_value_lossy_bits(np.dtype("U3"), 0)
    (8, 0)
    """
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" or dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        return min(max(0, 9 - int(optlevel)), dtype.itemsize)
    return 0


def check_optlevel(optlevel: object) -> int:
    """``optlevel`` as an int in 0..9.

    >>> check_optlevel(5)
    5
    """
    if isinstance(optlevel, bool) or not isinstance(optlevel, int | np.integer):
        raise ParamTypeError(f"optlevel must be an int, got {optlevel!r}")
    if not 0 <= int(optlevel) <= 9:
        raise ParamError(f"optlevel must be in 0..9, got {optlevel}")
    return int(optlevel)
