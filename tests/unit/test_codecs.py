"""codecs/base.py, codecs/registry.py and codecs/zstd.py: the codec protocol, the dictionary
training hook the chunk encoder calls (spec §11), compformat dispatch (spec §2.3)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2 import FormatError
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.codecs.base import BaseCodec
from pyblosc2.codecs.lz4 import LZ4Codec
from pyblosc2.codecs.registry import UDCODEC_FORMAT, codec_for_format, get_codec, register_codec
from pyblosc2.constants import Codec
from pyblosc2.params import CParams

TEXT = (b"blosc chunk frame numpy array of the zarr " * 2000)[:65_536]


class DictLZ4(LZ4Codec):
    """A plugin LZ4 whose dictionary is a fixed byte string (to see the hook is used)."""

    compcode = 200
    compformat = UDCODEC_FORMAT
    name = "dictlz4"

    def __init__(self) -> None:
        self.trained: list[tuple[int, int]] = []

    def train_dictionary(self, samples, size):  # type: ignore[no-untyped-def]
        self.trained.append((len(samples), size))
        return b"blosc chunk frame numpy " * 20


@pytest.mark.parametrize(
    ("samples", "size", "expected"),
    [([b"abc", b"def"], 4, b"abcd"), ([b"abc", b"def"], 100, b"abcdef"), ([], 8, b"")],
)
def test_default_dictionary_is_the_samples(samples, size, expected) -> None:
    assert get_codec(Codec.LZ4).train_dictionary(samples, size) == expected


def test_zstd_trains_a_zdict() -> None:
    samples = [TEXT[i : i + 512] for i in range(0, 32_768, 512)]
    d = get_codec(Codec.ZSTD).train_dictionary(samples, 4096)
    assert d is not None and d[:4] == bytes.fromhex("37a430ec") and len(d) <= 4096


def test_zstd_without_enough_data_gives_no_dictionary() -> None:
    assert get_codec(Codec.ZSTD).train_dictionary([b"a", b"b"], 1024) is None


def test_the_encoder_uses_the_codec_hook() -> None:
    codec = DictLZ4()
    register_codec(codec)
    spec = EncodeSpec(typesize=1, clevel=5, codec=200, blocksize=4096, use_dict=True)
    chunk = encode_chunk(memoryview(TEXT), spec)
    nblocks = len(TEXT) // 4096
    assert codec.trained == [(nblocks, min(32_768, len(TEXT) // 20))]
    dstart = 32 + 4 * nblocks
    dsize = struct.unpack_from("<i", chunk, dstart)[0]
    assert chunk[dstart + 4 : dstart + 4 + dsize] == b"blosc chunk frame numpy " * 20
    assert ChunkReader.open(chunk).decode().tobytes() == TEXT


def test_raw_dictionary_holds_dsize_where_c_wrote_it() -> None:
    # spec §11 step 3: bytes [4·nblocks, 4·nblocks + 4) of a raw (LZ4) dictionary hold dsize
    chunk = pb.compress2(TEXT[:8192], typesize=1, codec=Codec.LZ4, use_dict=True, blocksize=1024)
    nblocks = 8
    dsize = struct.unpack_from("<i", chunk, 32 + 4 * nblocks)[0]
    d = chunk[32 + 4 * nblocks + 4 :][:dsize]
    assert d[4 * nblocks : 4 * nblocks + 4] == struct.pack("<i", dsize)
    assert d[: 4 * nblocks] == TEXT[: 4 * nblocks]


def test_from_cparams_pads_and_masks() -> None:
    cp = CParams(typesize=8, clevel=3, codec=Codec.ZLIB, filters=[3, 1], filters_meta=[0, -2])
    spec = EncodeSpec.from_cparams(cp, blosc1=True)
    assert spec.filters == (3, 1, 0, 0, 0, 0)
    assert spec.filters_meta == (0, 254, 0, 0, 0, 0)
    assert (spec.typesize, spec.clevel, spec.codec, spec.blosc1) == (8, 3, Codec.ZLIB, True)


@pytest.mark.parametrize(("compformat", "name"), [(0, "blosclz"), (1, "lz4"), (4, "zstd")])
def test_codec_for_format(compformat: int, name: str) -> None:
    codec = codec_for_format(compformat, 0)
    assert isinstance(codec, BaseCodec) and codec.name == name


def test_unknown_plugin_codec_names_udcompcode() -> None:
    chunk = bytearray(pb.compress2(TEXT, typesize=1, codec=Codec.LZ4))
    chunk[2] = (chunk[2] & 0x1F) | (UDCODEC_FORMAT << 5)
    chunk[22] = 201
    with pytest.raises(FormatError) as exc:
        ChunkReader.open(bytes(chunk))
    assert (exc.value.field, exc.value.offset, exc.value.got) == ("udcompcode", 22, 201)


def test_zstd_contexts_are_per_thread() -> None:
    from concurrent.futures import ThreadPoolExecutor

    data = np.arange(50_000, dtype=np.int32)
    chunks = [pb.compress2(data + i, typesize=4, codec=Codec.ZSTD) for i in range(8)]
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda c: pb.decompress2(c), chunks))
    assert all(o == (data + i).tobytes() for i, o in enumerate(outs))


@pytest.mark.parametrize(
    "codec", [Codec.BLOSCLZ, Codec.LZ4, Codec.LZ4HC, Codec.ZLIB, Codec.ZSTD], ids=lambda c: c.name
)
@pytest.mark.parametrize("with_dict", [False, True], ids=["plain", "dict"])
def test_a_stream_decoder_decodes_as_decompress_into_and_refuses_what_it_refuses(
    codec: Codec, with_dict: bool
) -> None:
    """codec.stream_decoder(): the stream into the buffer (or a new one of the codec's), or None
    where decompress_into raises: a damaged stream, a stream of another size, two frames."""
    c = get_codec(codec)
    if with_dict and not c.supports_dict:
        pytest.skip("no dictionary for this codec")
    dict_ = c.train_dictionary([TEXT[i : i + 4096] for i in range(0, 65_536, 4096)], 4096)
    dict_ = dict_ if with_dict else None
    data = TEXT[:20_000]
    stream = memoryview(c.compress(memoryview(data), 5, len(data), dict_))
    decode = c.stream_decoder(dict_)
    buf = memoryview(bytearray(len(data)))
    got = decode(stream, buf)
    assert got is not None and bytes(got) == data
    for bad in (
        bytes(stream)[:-3],
        b"\x00" * 12,
        bytes(stream) * 2 if codec == Codec.ZSTD else b"",
    ):
        if not bad:
            continue
        with pytest.raises(pb.CodecError):
            c.decompress_into(memoryview(bad), memoryview(bytearray(len(data))), dict_)
        assert decode(memoryview(bad), memoryview(bytearray(len(data)))) is None
    assert decode(stream, memoryview(bytearray(len(data) - 1))) is None  # another size
