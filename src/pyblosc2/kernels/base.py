"""The kernel protocol: the hot loops of the filters and codecs, one set of functions per
implementation (numpy today; a JIT set can sit beside it), picked once at run time.

A kernel set must give the same bytes as the numpy reference for every input (the filters and
codecs that call it hold the format rules and the checks; a kernel only transforms bytes). The
contract of each kernel:

``shuffle(src, dst, typesize)`` / ``unshuffle(src, dst, typesize)``
    byte transposition of one block with group size ``typesize`` (spec §9.1): ``src`` and
    ``dst`` are 1-d ``uint8`` arrays of the same length; the ``len % typesize`` tail is copied.
``shuffle_blocks(src, dst, typesize)``
    :func:`shuffle` of each row of 2-d ``uint8`` arrays of shape ``(blocks, block size)``
    whose block size is a multiple of ``typesize`` (the whole blocks of a chunk being
    written, in one long call).
``unshuffle_blocks(src, dst, typesize)``
    :func:`unshuffle` of each row of 2-d ``uint8`` arrays of shape ``(blocks, block size)``
    whose block size is a multiple of ``typesize`` (a run of whole blocks decoded as byte
    planes: one long call, where per-block calls are short).
``unshuffle_runs(src, q, dst, table, typesize)``
    items unshuffled out of byte planes straight into runs of the result: ``src`` holds
    byte planes of ``q`` bytes each (byte ``k`` of the item at plane position ``p`` is
    ``src[p + k * q]``), and row ``(s, d, m)`` of the ``(runs, 3)`` ``int64`` ``table``
    writes the ``m`` items at plane positions ``s .. s + m - 1`` to ``dst[d : d + m *
    typesize]`` (1-d ``uint8`` arrays). Returns -1, or the first row that does not lie
    within ``src`` and ``dst`` (nothing of it written: a caller's bug, never data).
``bitshuffle(src, dst, typesize, blosc1)`` / ``bitunshuffle(src, dst, typesize, blosc1)``
    bit transposition of one block (§9.2); ``blosc1``: C-Blosc 1.x's rule (chunk version 2).
``bitunshuffle_blocks(src, dst, typesize, blosc1)``
    :func:`bitunshuffle` of each row of 2-d ``uint8`` arrays of shape ``(blocks, block
    size)`` (a run of whole blocks of a BITSHUFFLE chunk: one long call).
``prefix_xor(y, x)``
    ``x[i] = y[0] ^ ... ^ y[i]`` for 1-d unsigned arrays of equal length (DELTA, §9.3).
``channel_cumsum(y, x)``
    ``x = cumsum(y, axis=1) mod 256`` for 2-d ``uint8`` arrays (BYTEDELTA, §9.5).
``blosclz_compress(src, clevel, maxout)``
    C-Blosc2's ``blosclz_compress`` byte for byte (§10.1): the stream, or ``b""`` where C
    returns 0.
``blosclz_decompress(src, nbytes)``
    exactly ``nbytes`` bytes, or a :class:`~pyblosc2.errors.CodecError` for every stream C's
    ``blosclz_decompress`` refuses.
``blosclz_decompress_into(src, dst)``
    the same, decoded into all of ``dst`` (a writable 1-d ``uint8`` array, exactly the
    decoded size; its bytes are undefined after an error).
``blosclz_decompress_streams(src, table, dst)``
    many streams in one call: row ``i`` of the ``(k, 4)`` ``int64`` ``table`` decodes
    ``src[t[i,0]:t[i,1]]`` into all of ``dst[t[i,2]:t[i,3]]`` (1-d ``uint8`` arrays; the rows
    come from checked stream headers). Returns -1, or the first row a
    ``blosclz_decompress_into`` of it would refuse (its bytes and the later rows' are
    undefined: the caller decodes that stream alone to raise the error naming it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["KernelSet"]

BytesLike = bytes | bytearray | memoryview | np.ndarray


@dataclass(frozen=True, slots=True)
class KernelSet:
    """One implementation of every kernel (see the module docstring for their contracts).

    >>> from pyblosc2.kernels import active
    >>> ks = active()
    >>> src = np.arange(8, dtype=np.uint8); dst = np.empty_like(src)
    >>> ks.shuffle(src, dst, 2); dst.tolist()
    [0, 2, 4, 6, 1, 3, 5, 7]
    """

    name: str
    shuffle: Callable[[np.ndarray, np.ndarray, int], None]
    unshuffle: Callable[[np.ndarray, np.ndarray, int], None]
    unshuffle_blocks: Callable[[np.ndarray, np.ndarray, int], None]
    shuffle_blocks: Callable[[np.ndarray, np.ndarray, int], None]
    bitshuffle: Callable[[np.ndarray, np.ndarray, int, bool], None]
    bitunshuffle: Callable[[np.ndarray, np.ndarray, int, bool], None]
    bitunshuffle_blocks: Callable[[np.ndarray, np.ndarray, int, bool], None]
    unshuffle_runs: Callable[[np.ndarray, int, np.ndarray, np.ndarray, int], int]
    prefix_xor: Callable[[np.ndarray, np.ndarray], None]
    channel_cumsum: Callable[[np.ndarray, np.ndarray], None]
    blosclz_compress: Callable[[BytesLike, int, int], bytes]
    blosclz_decompress: Callable[[BytesLike, int], bytearray]
    blosclz_decompress_into: Callable[[BytesLike, np.ndarray], None]
    blosclz_decompress_streams: Callable[[np.ndarray, np.ndarray, np.ndarray], int]
    #: whether ``unshuffle_blocks`` runs near memory speed: readers then unshuffle a whole
    #: chunk into a buffer and copy contiguous rows out of it, rather than scatter its byte
    #: planes into the result with strided copies (numpy's ~1 byte per cycle)
    fast_unshuffle: bool = False
