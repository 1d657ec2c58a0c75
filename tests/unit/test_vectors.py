"""The 20 chunks of chunk-format.md §17, written by C-Blosc2 / C-Blosc 1.x (golden file
``tests/golden/spec_vectors.json``, extracted from the spec; each entry keeps the call that
made it). Each must decode to the input of that call; the ones python-blosc2 makes through
``compress``/``compress2`` must be reproduced byte for byte by our writer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pyblosc2 as pb

VECTORS = json.loads((Path(__file__).parent.parent / "golden" / "spec_vectors.json").read_text())

# The input of each vector's call (see the "call" field of the JSON file).
INPUTS = {
    "V1": np.arange(16, dtype=np.int32).tobytes(),
    "V2": np.arange(16, dtype=np.int32).tobytes(),
    "V3": np.arange(16, dtype=np.int32).tobytes(),
    "V4": np.arange(16, dtype=np.int32).tobytes(),
    "V5": np.arange(16, dtype=np.int32).tobytes(),
    "V6": (np.arange(25, dtype=np.int32) % 4).tobytes(),
    "V7": b"abcd" * 20 + b"xyz",
    "V8": np.full(128, 0x05050505, dtype=np.uint32).tobytes(),
    "V9": np.arange(32, dtype=np.int32).tobytes(),
    "V10": np.arange(1000, 1016, dtype=np.int32).tobytes(),
    "V11": np.linspace(0, 1, 16, dtype=np.float32).view(np.uint32) & np.uint32(0xFFF80000),
    "V12": np.arange(1000, 1064, dtype=np.int32).tobytes(),
    "V13": bytes(8000),
    "V14": np.arange(8, dtype=np.int32).tobytes(),
    "V15": np.full(16, 1.5, dtype=np.float32).tobytes(),
    "V16": np.full(16, np.nan, dtype=np.float32).tobytes(),
    "V17": bytes(256),
    "V18": (np.arange(128, dtype=np.int32) % 8).tobytes(),
    "V19": np.arange(16, dtype=np.int32).tobytes(),
    "V20": b"hello world" * 3 + b"\x00" * 50 + bytes(range(40)) + b"abc",
}
INPUTS["V11"] = INPUTS["V11"].tobytes()

# Our call that must reproduce the vector byte for byte (serial C output).
L = pb.Codec
REPRODUCE = {
    "V1": lambda d: pb.compress(d, typesize=4, clevel=5, codec=L.LZ4),
    "V2": lambda d: pb.compress(d, typesize=4, clevel=5, codec=L.BLOSCLZ),
    "V3": lambda d: pb.compress(d, typesize=4, clevel=5, codec=L.LZ4HC),
    "V5": lambda d: pb.compress(d, typesize=4, clevel=5, codec=L.ZSTD),
    "V6": lambda d: pb.compress2(
        d,
        typesize=4,
        clevel=5,
        codec=L.LZ4,
        blocksize=64,
        splitmode=pb.SplitMode.ALWAYS_SPLIT,
        nthreads=1,
    ),
    "V7": lambda d: pb.compress2(
        d, typesize=4, clevel=5, codec=L.BLOSCLZ, splitmode=pb.SplitMode.NEVER_SPLIT, nthreads=1
    ),
    "V8": lambda d: pb.compress2(
        d, typesize=4, clevel=5, codec=L.LZ4, splitmode=pb.SplitMode.ALWAYS_SPLIT, nthreads=1
    ),
    "V9": lambda d: pb.compress2(
        d, typesize=4, clevel=5, codec=L.BLOSCLZ, filters=[pb.Filter.BITSHUFFLE], nthreads=1
    ),
    "V10": lambda d: pb.compress2(
        d, typesize=4, clevel=5, codec=L.LZ4, filters=[pb.Filter.DELTA], nthreads=1
    ),
    "V12": lambda d: pb.compress2(
        d,
        typesize=4,
        clevel=5,
        codec=L.LZ4,
        filters=[pb.Filter.SHUFFLE, pb.Filter.BYTEDELTA],
        filters_meta=[0, 4],
        nthreads=1,
    ),
    "V13": lambda d: pb.compress2(d, typesize=8, clevel=5, codec=L.LZ4, nthreads=1),
    "V14": lambda d: pb.compress2(d, typesize=4, clevel=0, codec=L.LZ4, nthreads=1),
    "V15": lambda d: pb.make_special_chunk(pb.SpecialValue.VALUE, 64, 4, np.float32(1.5)),
    "V16": lambda d: pb.make_special_chunk(pb.SpecialValue.NAN, 64, 4),
}


@pytest.mark.parametrize("vid", sorted(VECTORS, key=lambda v: int(v[1:])))
def test_vector_decodes(vid: str) -> None:
    chunk = bytes.fromhex(VECTORS[vid]["hex"])
    assert pb.decompress2(chunk) == INPUTS[vid]


@pytest.mark.parametrize("vid", sorted(REPRODUCE, key=lambda v: int(v[1:])))
def test_vector_reproduced_byte_for_byte(vid: str) -> None:
    assert REPRODUCE[vid](INPUTS[vid]).hex() == VECTORS[vid]["hex"]


@pytest.mark.parametrize("vid", sorted(VECTORS, key=lambda v: int(v[1:])))
def test_vector_sizes(vid: str) -> None:
    chunk = bytes.fromhex(VECTORS[vid]["hex"])
    nbytes, cbytes, _ = pb.get_cbuffer_sizes(chunk)
    assert (nbytes, cbytes) == (len(INPUTS[vid]), len(chunk))
