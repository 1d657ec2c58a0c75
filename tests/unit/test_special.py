"""chunk/special.py: special-value chunks (spec §4) — the header C writes (with the block
size rule of ``blosc2_chunk_zeros`` & co.) and their expansion into any byte range."""

from __future__ import annotations

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import FormatError, ParamError
from pyblosc2.chunk import encode
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.chunk.special import fill_pattern, fill_special, make_special_chunk, special_chunk
from pyblosc2.constants import SpecialValue


def test_old_import_path_still_works() -> None:
    assert encode.special_chunk is special_chunk


def test_public_name_is_the_chunk_layer_function() -> None:
    assert pb.make_special_chunk is make_special_chunk


SIZES = [(4_000, 4), (400_000, 4), (8_000_000, 8), (1_000_000, 2)]
C_CASES = [
    (kind, n, ts)
    for kind in ("ZERO", "NAN", "VALUE", "UNINIT")
    for n, ts in SIZES
    if kind != "NAN" or ts in (4, 8)
]


@pytest.mark.parametrize(("kind", "nbytes", "typesize"), C_CASES)
def test_same_bytes_as_c(cblosc2, kind: str, nbytes: int, typesize: int) -> None:
    ckind = getattr(cblosc2.SpecialValue, kind)
    value = np.arange(1, 2, dtype=f"u{typesize}")[0] if kind == "VALUE" else None
    s = cblosc2.SChunk(chunksize=nbytes, cparams=cblosc2.CParams(typesize=typesize, nthreads=1))
    if value is None:
        s.fill_special(nbytes // typesize, ckind)
    else:
        s.fill_special(nbytes // typesize, ckind, value)
    assert make_special_chunk(ckind.value, nbytes, typesize, value) == s.get_chunk(0)


@pytest.mark.parametrize(
    ("value", "blocksize"),
    [(np.frombuffer(b"abc", np.uint8), 3 * 4096), (np.float64(1.5), 8 * 512)],
)
def test_value_blocksize_is_a_multiple_of_the_value(value: np.ndarray, blocksize: int) -> None:
    unit = np.asarray(value).nbytes
    c = make_special_chunk(SpecialValue.VALUE, blocksize * 10, 1, value)
    h = ChunkHeader.from_bytes(c)
    assert h.blocksize % unit == 0 and h.cbytes == 32 + unit


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((SpecialValue.NOT_SPECIAL, 64, 4, 64), "ZERO, NAN"),
        ((SpecialValue.ZERO, -1, 4, 64), "nbytes"),
        ((SpecialValue.NAN, 64, 2, 64), "typesize 4 or 8"),
        ((SpecialValue.UNINIT, 63, 4, 64), "multiple of typesize"),
        ((SpecialValue.VALUE, 64, 4, 64, b"abc"), "value size"),
        ((SpecialValue.VALUE, 60, 4, 64, b"abc"), "blocksize"),
    ],
)
def test_bad_parameters(args: tuple, match: str) -> None:
    with pytest.raises(ParamError, match=match):
        special_chunk(*args)


def test_value_chunk_needs_a_value() -> None:
    with pytest.raises(ParamError, match="non-empty value"):
        make_special_chunk(SpecialValue.VALUE, 64, 4)


@pytest.mark.parametrize("start", [0, 1, 3, 5, 8, 1001])
@pytest.mark.parametrize("size", [0, 1, 7, 64])
def test_fill_pattern_is_the_pattern_repeated(start: int, size: int) -> None:
    pat = np.arange(1, 6, dtype=np.uint8)
    out = np.empty(size, np.uint8)
    fill_pattern(out, pat, start)
    assert out.tolist() == np.tile(pat, 300)[start : start + size].tolist()


@pytest.mark.parametrize(
    ("kind", "typesize", "value", "element"),
    [
        (SpecialValue.ZERO, 4, None, bytes(4)),
        (SpecialValue.UNINIT, 4, None, bytes(4)),
        (SpecialValue.NAN, 4, None, b"\x00\x00\xc0\x7f"),
        (SpecialValue.NAN, 8, None, b"\x00" * 6 + b"\xf8\x7f"),
        (SpecialValue.VALUE, 1, np.frombuffer(b"xyz", np.uint8), b"xyz"),
    ],
)
@pytest.mark.parametrize(("start", "stop"), [(0, 24), (5, 6), (7, 23)])
def test_ranges_of_a_special_chunk(kind, typesize, value, element, start, stop) -> None:
    chunk = make_special_chunk(kind, 24, typesize, value)
    expected = (element * 24)[start:stop]
    assert ChunkReader.open(chunk).decode_range(start, stop).tobytes() == expected
    out = np.full(stop - start, 0xAA, np.uint8)  # not fresh: zeros must be written
    h = ChunkHeader.from_bytes(chunk)
    fill_special(out, h, np.frombuffer(chunk[32:], np.uint8), start, fresh=False)
    assert out.tobytes() == expected


def test_nan_chunk_with_another_typesize_is_a_format_error() -> None:
    chunk = bytearray(make_special_chunk(SpecialValue.NAN, 24, 4))
    chunk[3] = 2  # typesize
    with pytest.raises(FormatError) as exc:
        pb.decompress2(bytes(chunk))
    assert (exc.value.field, exc.value.offset) == ("typesize", 3)
