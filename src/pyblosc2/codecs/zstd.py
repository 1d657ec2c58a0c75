"""Zstandard: RFC 8878 frames (spec §10, §10.4, §11).

C-Blosc2 maps ``clevel`` 1-7 to zstd level ``2*clevel - 1``, 8 to 20 and 9 to 22, and uses level
1 whenever a dictionary is in use. Readers accept any sequence of valid frames (as
``ZSTD_decompressDCtx`` does) and reject trailing garbage.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import zstandard

from .._threads import thread_cache
from ..constants import Codec
from .base import BaseCodec, StreamDecoder, stream_error

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
#: this thread's decompressor without a dictionary (``dctx``), for the short path
_plain = threading.local()


def _content_size(src: memoryview) -> int:
    """The content size a frame header declares, or -1 when it declares none."""
    try:
        size = zstandard.frame_content_size(src)
    except zstandard.ZstdError as exc:
        raise stream_error("zstd", "a valid zstd frame header", f"undecodable ({exc})") from None
    return int(size)


def _one_plain_frame(src: memoryview, nbytes: int) -> bytes | None:
    """The short path taken per stream of every Blosc chunk (a few µs matter): ``src`` as one
    frame without a dictionary that declares and holds exactly ``nbytes`` bytes, else None
    (the general path then decides, and names what is wrong)."""
    if src[:4] != _MAGIC:
        return None
    try:
        dctx = _plain.dctx
    except AttributeError:  # this thread's first stream
        dctx = _plain.dctx = zstandard.ZstdDecompressor()
    try:
        # checked first: decompress() allocates what the header declares
        if zstandard.frame_content_size(src) != nbytes:
            return None
        out = dctx.decompress(src, allow_extra_data=False)
    except zstandard.ZstdError:
        return None
    return out if len(out) == nbytes else None


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

    def decompress_into(self, src: memoryview, dst: memoryview, dict_: bytes | None = None) -> None:
        """:meth:`decompress` into ``dst``."""
        dst[:] = self.decompress(src, len(dst), dict_)

    def stream_decoder(self, dict_: bytes | None = None) -> StreamDecoder:
        """The short path of :func:`_one_plain_frame` bound once (this thread's decompressor):
        one frame without a dictionary declaring and holding exactly the stream's size."""
        if dict_ is not None:
            return super().stream_decoder(dict_)
        try:
            dctx = _plain.dctx
        except AttributeError:  # this thread's first stream
            dctx = _plain.dctx = zstandard.ZstdDecompressor()
        decompress, size, error = dctx.decompress, zstandard.frame_content_size, zstandard.ZstdError

        def decode(src: memoryview, buf: memoryview) -> bytes | None:
            n = len(buf)
            try:
                # checked first: decompress() allocates what the header declares
                if size(src) != n:
                    return None
                out = decompress(src, allow_extra_data=False)
            except error:
                return None
            return out if len(out) == n else None

        return decode

    def decompress(self, src: memoryview, nbytes: int, dict_: bytes | None = None) -> bytes:
        if dict_ is None:
            out = _one_plain_frame(src, nbytes)
            if out is not None:
                return out
        return self._decompress(src, nbytes, dict_)

    def _decompress(self, src: memoryview, nbytes: int, dict_: bytes | None) -> bytes:
        def make() -> zstandard.ZstdDecompressor:
            zd = zstandard.ZstdCompressionDict(dict_) if dict_ else None
            return zstandard.ZstdDecompressor(dict_data=zd)

        if len(src) >= 6 and src[:4] == _MAGIC:
            # One frame spanning the whole stream (what every Blosc writer produces):
            # decompress() releases the GIL, unlike the streaming reader below, and refuses
            # bytes after the frame (several frames, or garbage: the reader below then
            # decides). It allocates the frame's declared content size, so a hostile header
            # must not reach it.
            declared = _content_size(src)
            if declared not in (-1, nbytes):
                raise stream_error(self.name, f"a frame content size of {nbytes}", declared)
            try:
                dctx = _cached("zstd.decompressors", dict_ or None, make)
            except zstandard.ZstdError as exc:
                raise stream_error(
                    self.name, "a valid zstd dictionary", f"unusable ({exc})"
                ) from None
            try:
                out = dctx.decompress(src, max_output_size=nbytes, allow_extra_data=False)
            except zstandard.ZstdError:
                out = None
            if out is not None:
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
