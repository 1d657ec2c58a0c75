"""Special-value chunks: zeros, NaNs, a repeated value, uninitialized (spec §4).

Implements the header C-Blosc2's ``blosc2_chunk_zeros``/``_nans``/``_repeatval``/``_uninit``
write (§4, "How C produces them"), the automatic block size they record, and the expansion of a
special chunk into (a range of) its decoded bytes. A special chunk is a 32-byte header, plus the
value for VALUE chunks; it has no blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._bytes import as_view
from ..constants import (
    EXTENDED_HEADER_LENGTH,
    MAX_BUFFERSIZE,
    MAX_TYPESIZE,
    Codec,
    Filter,
    SpecialValue,
    SplitMode,
    header_typesize,
)
from ..errors import FormatError, ParamError
from ..params import parse_int
from .blocksize import compute_blocksize
from .header import BLOSC2_VERSION, EXTENDED_MARKER, OFF_TYPESIZE, SPECIAL_SHIFT, ChunkHeader

__all__ = ["fill_special", "make_special_chunk", "special_chunk"]

# The compression parameters whose automatic block size ``blosc2_chunk_zeros`` & co. record:
# python-blosc2 passes its default CParams.
DEFAULT_CLEVEL = 5
DEFAULT_CODEC = Codec.ZSTD
DEFAULT_FILTERS = (0, 0, 0, 0, 0, Filter.SHUFFLE)
DEFAULT_SPLITMODE = SplitMode.AUTO_SPLIT

#: what a NaN chunk decodes to, per typesize (``nanf("")`` and ``nan("")``, little-endian)
NAN_PATTERNS = {
    4: np.frombuffer(b"\x00\x00\xc0\x7f", np.uint8),
    8: np.frombuffer(b"\x00\x00\x00\x00\x00\x00\xf8\x7f", np.uint8),
}


def special_chunk(
    kind: SpecialValue, nbytes: int, typesize: int, blocksize: int, value: bytes = b""
) -> bytes:
    """A special-value chunk with this header ``blocksize``, as ``blosc2_chunk_zeros``/
    ``_nans``/``_uninit``/``_repeatval`` write it (spec §4).

    >>> special_chunk(SpecialValue.ZERO, 64, 4, 64).hex()
    '0501050440000000400000002000000000000000000000000000000000000010'
    """
    kind = SpecialValue(kind)
    if not 0 < typesize <= MAX_TYPESIZE:
        raise ParamError(f"typesize must be an int in 1..{MAX_TYPESIZE}, got {typesize}")
    if kind == SpecialValue.NOT_SPECIAL:
        raise ParamError("special_value must be ZERO, NAN, VALUE or UNINIT")
    if not 0 <= nbytes <= MAX_BUFFERSIZE:
        raise ParamError(f"nbytes must be in 0..{MAX_BUFFERSIZE}, got {nbytes}")
    if kind == SpecialValue.VALUE:
        if not value or nbytes % len(value):
            raise ParamError(
                f"nbytes ({nbytes}) must be a multiple of the value size ({len(value)})"
            )
        if blocksize % len(value):
            raise ParamError("blocksize must be a multiple of the value size")
    elif typesize and nbytes % typesize and (kind != SpecialValue.ZERO or nbytes > 0):
        raise ParamError(f"nbytes ({nbytes}) must be a multiple of typesize ({typesize})")
    if kind == SpecialValue.NAN and typesize not in NAN_PATTERNS:
        raise ParamError(f"NaN chunks need typesize 4 or 8, got {typesize}")
    hdr = ChunkHeader(
        version=BLOSC2_VERSION,
        versionlz=1,
        flags=EXTENDED_MARKER,
        typesize=header_typesize(typesize),
        nbytes=nbytes,
        blocksize=max(blocksize, 1),
        cbytes=EXTENDED_HEADER_LENGTH + len(value),
        blosc2_flags=int(kind) << SPECIAL_SHIFT,
    )
    return hdr.to_bytes() + value


def make_special_chunk(
    special: SpecialValue | int,
    nbytes: int,
    typesize: int,
    value: Any = None,
    blocksize: int | None = None,
) -> bytes:
    """A special-value chunk; ``value`` (for VALUE) is anything numpy turns into an array, and
    ``blocksize`` defaults to the automatic size of the default compression parameters, cut
    to a multiple of the element size (what ``blosc2_chunk_zeros`` & co. write).

    >>> c = make_special_chunk(SpecialValue.VALUE, 64, 4, np.float32(1.5))
    >>> len(c), c[8:12].hex()
    (36, '40000000')
    """
    typesize = parse_int(typesize, "typesize", 1, MAX_TYPESIZE)
    nbytes = parse_int(nbytes, "nbytes", 0, MAX_BUFFERSIZE)
    raw = b"" if value is None else as_view(np.asarray(value)).tobytes()
    if special == SpecialValue.VALUE and len(raw) == 0:
        raise ParamError("a VALUE chunk needs a non-empty value")
    if blocksize is None:
        unit = len(raw) if raw else typesize
        blocksize = compute_blocksize(
            nbytes, typesize, DEFAULT_CLEVEL, DEFAULT_CODEC, 0, DEFAULT_FILTERS, DEFAULT_SPLITMODE
        )
        blocksize = max(blocksize // unit * unit, 1)
    return special_chunk(SpecialValue(special), nbytes, typesize, blocksize, raw)


def fill_special(
    out: np.ndarray, header: ChunkHeader, value: np.ndarray, start: int, fresh: bool
) -> None:
    """Write bytes ``[start, start + len(out))`` of a special chunk's decoded output into
    ``out``; ``value`` is the chunk's bytes after the header (VALUE chunks), ``fresh`` says
    ``out`` is already zeroed.

    >>> h = ChunkHeader.from_bytes(special_chunk(SpecialValue.NAN, 16, 4, 16))
    >>> out = np.empty(6, np.uint8); fill_special(out, h, value=out[:0], start=2, fresh=False)
    >>> out.tobytes().hex()
    'c07f0000c07f'
    """
    kind = header.special
    if kind in (SpecialValue.ZERO, SpecialValue.UNINIT):
        if not fresh:
            out[:] = 0
    elif kind == SpecialValue.NAN:
        pat = NAN_PATTERNS.get(header.typesize)
        if pat is None:
            raise FormatError(
                "chunk header", "typesize", OFF_TYPESIZE, "4 or 8 for a NaN chunk", header.typesize
            )
        fill_pattern(out, pat, start)
    else:
        fill_pattern(out, value, start)


def fill_pattern(out: np.ndarray, pattern: np.ndarray, start: int) -> None:
    """Fill ``out`` with ``pattern`` repeated, as if it had begun ``start`` bytes earlier.

    >>> out = np.empty(5, np.uint8); fill_pattern(out, np.arange(3, dtype=np.uint8), 1)
    >>> out.tolist()
    [1, 2, 0, 1, 2]
    """
    k = len(pattern)
    if k == 0 or len(out) == 0:
        return
    phase = start % k
    rolled = np.concatenate([pattern[phase:], pattern[:phase]]) if phase else pattern
    n = len(out)
    first = min(k, n)
    out[:first] = rolled[:first]
    filled = first
    while filled < n:  # doubling copies: log2(n / k) memcpys, whatever the pattern size
        step = min(filled, n - filled)
        out[filled : filled + step] = out[:step]
        filled += step
