"""Block size and split decisions of C-Blosc2 (spec §8.1, §8.2) and C-Blosc 1.x (§8.3, §8.4).

These rules decide the bytes a writer produces, so they follow the C libraries exactly.
"""

from __future__ import annotations

from ..constants import (
    BLOCKSIZE_ALIGN_L1,
    BLOSC1_MIN_BUFFERSIZE,
    MAX_STREAMS,
    MIN_BUFFERSIZE,
    Codec,
    Filter,
    SplitMode,
)

__all__ = ["blosc1_blocksize", "blosc1_split", "compute_blocksize", "split_block"]

L1 = BLOCKSIZE_ALIGN_L1
_HCR = frozenset({Codec.LZ4HC, Codec.ZLIB, Codec.ZSTD})  # "high compression ratio" codecs
_LEVEL_FACTOR = {0: 0.25, 1: 0.5, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 8, 8: 8, 9: 8}
_SPLIT_ELEMENTS = {1: 32, 2: 32, 3: 32, 4: 64, 5: 64, 6: 64, 7: 128, 8: 256, 9: 512}  # Ki
_MAX_SPLIT_BLOCK = 4 * 1024 * 1024
_MIN_SPLIT_BLOCK = 32 * 1024


def split_block(
    codec: int, clevel: int, typesize: int, blocksize: int, filters: tuple[int, ...], splitmode: int
) -> bool:
    """C-Blosc2's decision to store each block as ``typesize`` streams (§8.2).

    >>> split_block(Codec.LZ4, 5, 4, 262144, (0, 0, 0, 0, 0, 1), SplitMode.AUTO_SPLIT)
    True
    >>> split_block(Codec.ZSTD, 6, 4, 262144, (0, 0, 0, 0, 0, 1), SplitMode.AUTO_SPLIT)
    False
    """
    if splitmode == SplitMode.ALWAYS_SPLIT:
        return True
    if splitmode == SplitMode.NEVER_SPLIT:
        return False
    codec_ok = codec in (Codec.BLOSCLZ, Codec.LZ4) or (codec == Codec.ZSTD and clevel <= 5)
    return (
        codec_ok
        and Filter.SHUFFLE in filters
        and typesize <= MAX_STREAMS
        and blocksize // typesize >= MIN_BUFFERSIZE
    )


def _final(bs: int, nbytes: int, typesize: int) -> int:
    bs = min(bs, nbytes)
    if bs > typesize:
        bs = bs // typesize * typesize
    return bs


def compute_blocksize(
    nbytes: int,
    typesize: int,
    clevel: int,
    codec: int,
    requested: int,
    filters: tuple[int, ...],
    splitmode: int,
) -> int:
    """C-Blosc2's automatic block size (stune, §8.1) or the requested one, clamped.

    ``typesize`` is the *uncapped* element size.

    >>> compute_blocksize(8 * 2**20, 4, 5, Codec.LZ4, 0, (0, 0, 0, 0, 0, 1), SplitMode.AUTO_SPLIT)
    262144
    >>> compute_blocksize(83, 4, 5, Codec.BLOSCLZ, 0, (0, 0, 0, 0, 0, 1), SplitMode.NEVER_SPLIT)
    80
    """
    if nbytes < typesize:
        return 1
    if requested > 0:
        return _final(requested, nbytes, typesize)
    bs = nbytes
    if nbytes >= L1:
        bs = L1 * (2 if codec in _HCR else 1)
        bs = int(bs * _LEVEL_FACTOR[clevel])
        if clevel == 9 and codec in _HCR:
            bs *= 2
    if clevel > 0 and split_block(codec, clevel, typesize, nbytes, filters, splitmode):
        bs = _SPLIT_ELEMENTS[clevel] * 1024 * typesize
        bs = max(min(bs, _MAX_SPLIT_BLOCK), _MIN_SPLIT_BLOCK)
    return _final(bs, nbytes, typesize)


def blosc1_split(codec: int, typesize: int, blocksize: int) -> bool:
    """C-Blosc 1.x's split decision (§8.3, observed): any shuffle mode."""
    return (
        codec != Codec.ZSTD
        and typesize <= MAX_STREAMS
        and blocksize // typesize >= BLOSC1_MIN_BUFFERSIZE
    )


def blosc1_blocksize(nbytes: int, typesize: int, clevel: int, codec: int, forced: int) -> int:
    """C-Blosc 1.x's block size (§8.4, observed).

    >>> blosc1_blocksize(512, 4, 5, Codec.LZ4, 0)
    512
    """
    if nbytes < typesize:
        return 1
    if forced > 0:
        bs = max(forced, BLOSC1_MIN_BUFFERSIZE)
    elif nbytes >= L1:
        hcr = codec in _HCR
        bs = int(L1 * (2 if hcr else 1) * _LEVEL_FACTOR[clevel])
        if clevel == 9 and hcr:
            bs *= 2
    else:
        bs = nbytes
    if clevel > 0 and blosc1_split(codec, typesize, bs):
        bs = min(max(min(bs, 262144) * typesize, 65536), 1048576)
    return _final(bs, nbytes, typesize)
