"""ZstdCodec.decompress_into (the short path for single frames without a dictionary) accepts
and refuses exactly what ZstdCodec.decompress does."""

from __future__ import annotations

import numpy as np
import pytest
import zstandard

from pyblosc2.codecs.zstd import ZstdCodec
from pyblosc2.errors import CodecError

DATA = np.linspace(0, 1, 4096).tobytes()
ONE = zstandard.ZstdCompressor(level=3).compress(DATA)
HALF = len(DATA) // 2
NO_SIZE = zstandard.ZstdCompressor(level=3, write_content_size=False).compress(DATA)
TWO = b"".join(zstandard.ZstdCompressor().compress(DATA[i : i + HALF]) for i in (0, HALF))

STREAMS = [
    pytest.param(ONE, len(DATA), True, id="one-frame"),
    pytest.param(NO_SIZE, len(DATA), True, id="no-content-size"),
    # (refused by decompress too: the first frame declares half the size)
    pytest.param(TWO, len(DATA), False, id="two-frames-with-sizes"),
    pytest.param(ONE + b"\x00garbage", len(DATA), False, id="trailing-garbage"),
    pytest.param(ONE, len(DATA) - 8, False, id="declared-size-too-big"),
    pytest.param(ONE, len(DATA) + 8, False, id="declared-size-too-small"),
    pytest.param(ONE[:-5], len(DATA), False, id="truncated"),
    pytest.param(ONE[:3], len(DATA), False, id="cut-magic"),
]


@pytest.mark.parametrize(("src", "nbytes", "ok"), STREAMS)
def test_decompress_into_matches_decompress(src, nbytes, ok) -> None:
    codec = ZstdCodec()
    dst = bytearray(nbytes)
    if ok:
        codec.decompress_into(memoryview(src), memoryview(dst))
        assert bytes(dst) == bytes(codec.decompress(memoryview(src), nbytes)) == DATA
    else:
        with pytest.raises(CodecError):
            codec.decompress(memoryview(src), nbytes)
        with pytest.raises(CodecError):
            codec.decompress_into(memoryview(src), memoryview(dst))
