"""What the fuzzer feeds untrusted bytes to: chunk decoding (whole, ranges, headers), frame
opening and every read of a frame (chunks, slices, meta, vlmeta, an NDArray's b2nd layer and
slices), and the msgpack metadata conventions. Each must either work or raise a pyblosc2
error (or NotImplementedError naming a feature) — never another exception, a hang or an
allocation sized by an unchecked field. Used by tools/fuzz.py (atheris, coverage-guided) and
by the suite's smoke run (tests/trust/test_fuzz.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

import pyblosc2 as pb
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.frame.contiguous import BufferSource, FrameReader
from pyblosc2.meta import unpack_vlmeta, unpackb
from pyblosc2.ndarray.b2nd_meta import B2NDMeta

EXPECTED = (pb.Blosc2Error, NotImplementedError)
GOLDEN = Path(__file__).parents[1] / "golden" / "c_blosc2"


#: whole decodes are skipped above this size: a header may legitimately claim up to 2 GB (as
#: in C-Blosc2), and first-touching that much memory takes seconds, not a bug worth the runs
WHOLE_DECODE_MAX = 1 << 26


def chunk_target(data: bytes) -> None:
    r = ChunkReader.open(data)
    n = r.header.nbytes
    if n <= WHOLE_DECODE_MAX:
        r.decode()
    r.decode_range(n // 3, n // 3 + 17)


def frame_target(data: bytes) -> None:
    reader = FrameReader.open(BufferSource(data), exact=True)
    s = pb.schunk_from_cframe(data)
    for n in range(min(reader.nchunks, 8)):
        s.decompress_chunk(n)
    s[len(s) // 2 : len(s) // 2 + 10]
    s.meta.getall()
    s.vlmeta.getall()
    if "b2nd" in s.meta:
        a = pb.ndarray_from_cframe(data)
        a[tuple(slice(0, 3) for _ in a.shape)]


def meta_target(data: bytes) -> None:
    unpackb(data)
    if len(data) > 4:
        B2NDMeta.from_bytes(data, 1 + data[0] % 16)
    unpack_vlmeta(data)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "chunk": chunk_target,
    "frame": frame_target,
    "meta": meta_target,
}


def seeds() -> dict[str, list[bytes]]:
    """Valid inputs to mutate: C-Blosc2's golden chunks and frames, and a few of ours."""
    chunks = [p.read_bytes() for p in sorted((GOLDEN / "chunks").glob("*"))]
    frames = [p.read_bytes() for p in sorted((GOLDEN / "frames").glob("*.b2frame"))]
    frames += [p.read_bytes() for p in sorted((GOLDEN / "arrays").glob("*.b2nd"))]
    s = pb.SChunk(chunksize=4000, cparams={"typesize": 4}, meta={"m": [1, "x"]})
    s.append_data(np.arange(1000, dtype=np.int32))
    s.vlmeta["v"] = {"a": (1, 2.5)}
    frames.append(s.to_cframe())
    metas = [pb.meta.packb(v) for v in ({"a": 1}, (1, 2), np.arange(3), {1, 2}, 1 + 2j)]
    return {"chunk": chunks, "frame": frames, "meta": metas}


def run(target: str, data: bytes) -> None:
    """Run one input; re-raise anything that is not an expected error."""
    with contextlib.suppress(EXPECTED):
        TARGETS[target](data)
