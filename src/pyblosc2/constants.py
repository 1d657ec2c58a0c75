"""Enums and numeric constants of the Blosc2 format and of python-blosc2's API.

Values follow C-Blosc2 3.3.5 and python-blosc2 4.14.1 (``../shared/specs/chunk-format.md`` §16).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "BLOCKSIZE_ALIGN_L1",
    "BLOSC1_MIN_BUFFERSIZE",
    "DEFINED_CODECS_STOP",
    "EXTENDED_HEADER_LENGTH",
    "GLOBAL_REGISTERED_CODECS_STOP",
    "MAX_BLOCKSIZE",
    "MAX_BUFFERSIZE",
    "MAX_DICT_SIZE",
    "MAX_FILTERS",
    "MAX_HEADER_TYPESIZE",
    "MAX_OVERHEAD",
    "MAX_STREAMS",
    "MAX_TYPESIZE",
    "MIN_BUFFERSIZE",
    "MIN_HEADER_LENGTH",
    "MIN_USEFUL_DICT",
    "USER_REGISTERED_CODECS_STOP",
    "VERSION",
    "Codec",
    "Filter",
    "SpecialValue",
    "SplitMode",
    "Tuner",
    "header_typesize",
]

#: pyblosc2's own version (``pyblosc2.__version__``; pyproject.toml reads it from here)
VERSION = "0.1.0.dev0"
#: bytes of a Blosc1 chunk header (the Blosc2 header's first part)
MIN_HEADER_LENGTH = 16
#: bytes of a Blosc2 (extended) chunk header
EXTENDED_HEADER_LENGTH = 32
#: the most bytes a chunk adds to its data (a header; BLOSC2_MAX_OVERHEAD)
MAX_OVERHEAD = 32
#: the largest buffer one chunk holds (BLOSC2_MAX_BUFFERSIZE)
MAX_BUFFERSIZE = 2**31 - 1 - MAX_OVERHEAD  # 2_147_483_615
MIN_BUFFERSIZE = 32
#: C-Blosc 1.x's BLOSC_MIN_BUFFERSIZE: smaller buffers are memcpyed, a forced block size is at
#: least this, and a block is split only if each stream gets at least this many bytes (§8.3-4)
BLOSC1_MIN_BUFFERSIZE = 128
#: BLOSC_MAX_TYPESIZE: the largest typesize the header byte records; wider elements are
#: recorded (and shuffled) as typesize 1 (spec §2)
MAX_HEADER_TYPESIZE = 255
#: the largest typesize of a chunk (BLOSC2_MAXTYPESIZE)
MAX_TYPESIZE = 536_866_816  # largest VALUE special element (BLOSC2_MAXTYPESIZE)
#: the largest block size (BLOSC2_MAXBLOCKSIZE)
MAX_BLOCKSIZE = 536_866_816
MAX_FILTERS = 6
MAX_DICT_SIZE = 32_768
MIN_USEFUL_DICT = 256
MAX_STREAMS = 16
BLOCKSIZE_ALIGN_L1 = 32_768  # "L1" of stune.c
DEFINED_CODECS_STOP = 31
GLOBAL_REGISTERED_CODECS_STOP = 159
USER_REGISTERED_CODECS_STOP = 255


class Codec(IntEnum):
    """Codec ids (the API ``compcode``, stored in ``udcompcode``)."""

    BLOSCLZ = 0
    LZ4 = 1
    LZ4HC = 2
    #: Blosc1-only: C-Blosc 1.x builds with snappy; C-Blosc2 cannot decode it.
    SNAPPY = 3
    ZLIB = 4
    ZSTD = 5
    #: plugin codecs of python-blosc2 (C-Blosc2 plugins): named for API parity; pyblosc2 does
    #: not implement them, and compressing with one raises NotImplementedError
    NDLZ = 32
    ZFP_ACC = 33
    ZFP_PREC = 34
    ZFP_RATE = 35
    OPENHTJ2K = 36
    GROK = 37
    OPENZL = 38
    J2K = 39
    HTJ2K = 40


class Filter(IntEnum):
    """Filter ids stored in the six filter slots of the extended header."""

    NOFILTER = 0
    SHUFFLE = 1
    BITSHUFFLE = 2
    DELTA = 3
    TRUNC_PREC = 4
    NDCELL = 32
    NDMEAN = 33
    #: read-only: BYTEDELTA as SIMD builds wrote it before C-Blosc2's fix (spec §9.5)
    BYTEDELTA_BUGGY = 34
    BYTEDELTA = 35
    INT_TRUNC = 36


class SplitMode(IntEnum):
    """Whether blocks are split into ``typesize`` streams."""

    ALWAYS_SPLIT = 1
    NEVER_SPLIT = 2
    AUTO_SPLIT = 3
    FORWARD_COMPAT_SPLIT = 4


class SpecialValue(IntEnum):
    """Special-value chunk kinds (bits 4-6 of ``blosc2_flags``)."""

    NOT_SPECIAL = 0
    ZERO = 1
    NAN = 2
    VALUE = 3
    UNINIT = 4


class Tuner(IntEnum):
    """Block-size tuners (only STUNE's rules are implemented)."""

    STUNE = 0
    BTUNE = 32


def header_typesize(typesize: int) -> int:
    """The typesize a chunk header records for elements of ``typesize`` bytes (spec §2).

    >>> header_typesize(8), header_typesize(255), header_typesize(256)
    (8, 255, 1)
    """
    return typesize if typesize <= MAX_HEADER_TYPESIZE else 1
