"""What the fuzzer feeds untrusted bytes to: chunk decoding (whole, ranges, headers), frame
opening and every read of a frame (chunks, slices, meta, vlmeta, an NDArray's b2nd layer and
slices), the msgpack metadata conventions, and metalayers/vlmeta from the index that names
them to the values (``metadata``). Each must either work or raise a pyblosc2 error (or
NotImplementedError naming a feature) — never another exception, a hang or an allocation
sized by an unchecked field. Used by tools/fuzz.py (atheris, coverage-guided) and by the
suite's smoke run (tests/trust/test_fuzz.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

import pyblosc2 as pb
from pyblosc2.chunk.decode import ChunkReader
from pyblosc2.chunk.header import ChunkHeader
from pyblosc2.frame.contiguous import BufferSource, FrameReader
from pyblosc2.frame.header import MAX_METALAYERS, POS_METALAYERS
from pyblosc2.frame.msgindex import parse_index
from pyblosc2.frame.trailer import TRAILER_MINLEN, Trailer, locate_trailer
from pyblosc2.meta import pack_vlmeta, packb, unpack_vlmeta, unpackb
from pyblosc2.meta.scan import scan
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


#: vlmeta chunks are decompressed only up to this size in the metadata target: a chunk may
#: declare up to 2 GB like any chunk (a value is decompressed whole, as python-blosc2 does)
VLMETA_DECODE_MAX = 1 << 22


def _symmetric(value: object) -> None:
    """What :func:`packb` accepts reads back, and (sets aside, whose order may change) packs
    to the same bytes again."""
    try:
        packed = packb(value)
    except pb.ParamError:
        return
    again = unpackb(packed)  # any error here is a failure: the writer accepted the value
    if any(code == 45 for code, _, _ in scan(packed, "value").spans):
        return
    if packb(again) != packed:
        raise AssertionError(f"{value!r} reads back as {again!r}")


def _vlmeta_value(stored: bytes, name: str) -> None:
    if ChunkHeader.from_bytes(stored).nbytes <= VLMETA_DECODE_MAX:
        _symmetric(unpack_vlmeta(stored, f"vlmeta {name!r}"))


def metadata_target(data: bytes) -> None:
    """The first byte picks what the rest is: a metalayer value (msgpack), a stored vlmeta
    entry (a chunk holding msgpack), a whole trailer (vlmeta index and entries), or a header's
    metalayer section; every value found is decoded, then written and read again."""
    mode, body = (data[0] % 4, data[1:]) if data else (0, b"")
    if mode == 0:
        _symmetric(unpackb(body))
    elif mode == 1:
        _vlmeta_value(body, "v")
    elif mode == 2:
        for name, stored in Trailer.from_bytes(body).vlmeta:
            _vlmeta_value(stored, name)
    else:
        buf = bytes(POS_METALAYERS) + body
        entries = parse_index(
            buf,
            POS_METALAYERS,
            len(buf),
            where="frame header",
            kind="metalayer",
            max_entries=MAX_METALAYERS,
        )
        for name, content in entries:
            _symmetric(unpackb(content, f"metalayer {name!r}"))


TARGETS: dict[str, Callable[[bytes], None]] = {
    "chunk": chunk_target,
    "frame": frame_target,
    "meta": meta_target,
    "metadata": metadata_target,
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
    return {"chunk": chunks, "frame": frames, "meta": metas, "metadata": metadata_seeds(frames)}


METADATA_VALUES = (
    {"a": 1, "b": [1.5, None, True, "x", b"y"]},
    (1, (2, 3)),
    [np.arange(3), 1],
    np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
    np.array([np.arange(2), "x", None], dtype=object),
    {1 + 2j, (1, 2), "s"},
    [[[[{"deep": [1]}]]]],
    {"shape": [3, 4], "dtype": "<f8", "attrs": {"units": "m", "scale": 0.5}},
)


def metadata_seeds(frames: list[bytes]) -> list[bytes]:
    """One seed of each mode: values, stored vlmeta entries, the trailers and metalayer
    sections of the seed frames."""
    out = [b"\x00" + packb(v) for v in METADATA_VALUES]
    out += [b"\x01" + pack_vlmeta(v) for v in METADATA_VALUES]
    for f in frames:
        with contextlib.suppress(pb.Blosc2Error, NotImplementedError):
            r = FrameReader.open(BufferSource(f), exact=True)
            h = r.header
            tlen = locate_trailer(f[h.frame_len - TRAILER_MINLEN : h.frame_len], h.frame_len, 0)
            out.append(b"\x02" + f[h.frame_len - tlen : h.frame_len])
            out.append(b"\x03" + f[POS_METALAYERS : h.header_len])
    return out


def run(target: str, data: bytes) -> None:
    """Run one input; re-raise anything that is not an expected error."""
    with contextlib.suppress(EXPECTED):
        TARGETS[target](data)
