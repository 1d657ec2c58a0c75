"""Zstandard: RFC 8878 frames (spec §10, §10.4, §11).

C-Blosc2 maps ``clevel`` 1-7 to zstd level ``2*clevel - 1``, 8 to 20 and 9 to 22, and uses level
1 whenever a dictionary is in use. Readers accept any sequence of valid frames (as
``ZSTD_decompressDCtx`` does) and reject trailing garbage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import zstandard

from .._threads import thread_cache
from ..constants import Codec
from .base import BaseCodec, stream_error

__all__ = ["ZstdCodec", "zstd_level"]

_LEVELS = {1: 1, 2: 3, 3: 5, 4: 7, 5: 9, 6: 11, 7: 13, 8: 20, 9: 22}
_DICT_LEVEL = 1


def zstd_level(clevel: int, with_dict: bool = False) -> int:
    """The zstd compression level C-Blosc2 uses for a Blosc ``clevel``.

    >>> zstd_level(5), zstd_level(9), zstd_level(9, with_dict=True)
    (9, 22, 1)
    """
    return _DICT_LEVEL if with_dict else _LEVELS[clevel]


_K = TypeVar("_K")
_V = TypeVar("_V")


def _cached(name: str, key: _K, make: Callable[[], _V]) -> _V:
    """The calling thread's object for ``key`` (zstandard contexts are not thread-safe)."""
    cache: dict[_K, _V] = thread_cache(name)
    obj = cache.get(key)
    if obj is None:
        if len(cache) > 16:  # dictionaries are per chunk: keep the cache small
            cache.clear()
        obj = cache[key] = make()
    return obj


_MAGIC = b"\x28\xb5\x2f\xfd"


def _single_frame_size(src: memoryview) -> int:
    """The length of the zstd frame at the start of ``src`` found by walking its block
    headers (RFC 8878 §3.1.1), or -1 if it is not a plain frame that can be walked."""
    if len(src) < 6 or bytes(src[:4]) != _MAGIC:
        return -1
    try:
        pos = zstandard.frame_header_size(src)
    except zstandard.ZstdError:
        return -1
    checksum = 4 if src[4] & 0x04 else 0
    n = len(src)
    while pos + 3 <= n:
        b = src[pos] | (src[pos + 1] << 8) | (src[pos + 2] << 16)
        last, btype, bsize = b & 1, (b >> 1) & 3, b >> 3
        if btype == 3:
            return -1
        pos += 3 + (1 if btype == 1 else bsize)
        if last:
            return pos + checksum
    return -1


def _content_size(src: memoryview) -> int:
    """The content size a frame header declares, or -1 when it declares none."""
    try:
        size = zstandard.frame_content_size(src)
    except zstandard.ZstdError as exc:
        raise stream_error("zstd", "a valid zstd frame header", f"undecodable ({exc})") from None
    return int(size)


class ZstdCodec(BaseCodec):
    """Zstandard (codec id 5, compformat 4)."""

    compcode = Codec.ZSTD
    compformat = 4
    name = "zstd"
    supports_dict = True

    def compress(
        self, src: memoryview, clevel: int, maxout: int, dict_: bytes | None = None
    ) -> bytes:
        level = zstd_level(clevel, bool(dict_))

        def make() -> zstandard.ZstdCompressor:
            zd = zstandard.ZstdCompressionDict(dict_) if dict_ else None
            return zstandard.ZstdCompressor(
                level=level,
                dict_data=zd,
                write_checksum=False,
                write_content_size=True,
                write_dict_id=True,
            )

        cctx = _cached("zstd.compressors", (level, dict_ or None), make)
        out = cctx.compress(src)
        return out if len(out) <= maxout else b""

    def train_dictionary(self, samples: Sequence[bytes], size: int) -> bytes | None:
        """A trained zstd dictionary, or ``None`` when there is too little data to train on.

        C-Blosc2 uses ``ZDICT_trainFromBuffer``; python-zstandard's trainer differs, and any
        valid dictionary is acceptable to readers (spec §11 step 3).
        """
        try:
            return zstandard.train_dictionary(size, list(samples)).as_bytes()
        except zstandard.ZstdError:
            return None

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytes:
        def make() -> zstandard.ZstdDecompressor:
            zd = zstandard.ZstdCompressionDict(dict_) if dict_ else None
            return zstandard.ZstdDecompressor(dict_data=zd)

        if _single_frame_size(src) == len(src):
            # One frame spanning the whole stream (what every Blosc writer produces):
            # decompress() releases the GIL, unlike the streaming reader below. It allocates
            # the frame's declared content size, so a hostile header must not reach it.
            declared = _content_size(src)
            if declared not in (-1, nbytes):
                raise stream_error(self.name, f"a frame content size of {nbytes}", declared)
            try:
                dctx = _cached("zstd.decompressors", dict_ or None, make)
                out = dctx.decompress(src, max_output_size=nbytes)
            except zstandard.ZstdError as exc:
                raise stream_error(
                    self.name, "a valid zstd frame", f"undecodable ({exc})"
                ) from None
            if len(out) != nbytes:
                raise stream_error(self.name, f"{nbytes} decoded bytes", f"{len(out)} bytes")
            return out
        try:
            dctx = _cached("zstd.decompressors", dict_ or None, make)
            # A reader bounds the output by nbytes (a hostile frame cannot make us allocate
            # more) and walks across frames; reading one byte more detects surplus output and
            # makes trailing garbage fail to parse.
            reader = dctx.stream_reader(src, read_across_frames=True, read_size=max(len(src), 1))
            out = reader.read(nbytes)
            extra = reader.read(1)
        except zstandard.ZstdError as exc:
            raise stream_error(self.name, "valid zstd frames", f"undecodable ({exc})") from None
        if len(out) != nbytes or extra:
            got = f"more than {nbytes}" if extra else str(len(out))
            raise stream_error(self.name, f"{nbytes} decoded bytes", f"{got} bytes")
        return out
