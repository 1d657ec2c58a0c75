"""Malformed frames: opening and reading either works or raises pyblosc2.FormatError (or a
NotImplementedError naming a feature); never IndexError/struct.error/msgpack errors, a hang
or a huge allocation (frame-format.md §2.9, §12)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.frame.contiguous import BufferSource, FrameReader


def _frame(vl: bool = True) -> bytes:
    s = pb.SChunk(
        chunksize=4000,
        cparams={"typesize": 4, "codec": pb.Codec.LZ4},
        meta={"m1": [1, 2], "name": "x"},
    )
    for i in range(4):
        s.append_data(np.arange(i * 1000, (i + 1) * 1000, dtype=np.int32))
    s.append_data(np.zeros(1000, np.int32))
    s.append_data(np.arange(10, dtype=np.int32))
    if vl:
        s.vlmeta["info"] = {"a": 1}
    return s.to_cframe()


FRAME = _frame()
ALLOWED = (pb.FormatError, NotImplementedError)


def outcome(buf: bytes) -> str:
    try:
        s = pb.schunk_from_cframe(buf)
        for n in range(s.nchunks):
            s.decompress_chunk(n)
        s[:]
        dict(s.meta.getall()), dict(s.vlmeta.getall())
    except ALLOWED:
        return "error"
    return "ok"


def test_base_frame_reads() -> None:
    assert outcome(FRAME) == "ok"


@pytest.mark.parametrize("cut", [0, 10, 50, 86, 87, 96, 97, 120, 200, -60, -25, -24, -23, -1])
def test_truncated(cut: int) -> None:
    with pytest.raises(pb.FormatError, match=r"^frame header: (length|header_len|frame_len) at"):
        FrameReader.open(BufferSource(FRAME[:cut]), exact=True)


@pytest.mark.parametrize(
    ("pos", "fmt", "value", "field"),
    [
        (11, ">i", 0, "header_len"),
        (11, ">i", 10**6, "header_len"),
        (16, ">Q", 5, "frame_len"),
        (16, ">Q", 2**63, "frame_len"),
        (30, ">q", -1, "nbytes"),
        (39, ">q", -1, "cbytes"),
        (39, ">q", 10**9, "cbytes"),
        (48, ">i", -4, "typesize"),
        (58, ">i", -1, "chunksize"),
        (30, ">q", 10**12, "nbytes"),
    ],
)
def test_bad_header_fields(pos, fmt, value, field) -> None:
    buf = bytearray(FRAME)
    struct.pack_into(fmt, buf, pos, value)
    with pytest.raises(pb.FormatError, match=field):
        pb.schunk_from_cframe(bytes(buf))


def test_bad_trailer_len() -> None:
    buf = bytearray(FRAME)
    struct.pack_into(">I", buf, len(buf) - 22, 10**6)
    with pytest.raises(pb.FormatError, match="trailer_len"):
        pb.schunk_from_cframe(bytes(buf))


def test_offset_outside_the_data_area() -> None:
    s = pb.schunk_from_cframe(FRAME)
    offsets = s._reader.offsets.copy()
    offsets[1] = 10**7
    from pyblosc2.frame.writer import encode_index

    h = s.header
    index = encode_index(offsets)
    tail_start = h.header_len + h.cbytes
    old_index_len = pb.get_cbuffer_sizes(FRAME[tail_start:])[1]
    buf = FRAME[:tail_start] + index + FRAME[tail_start + old_index_len :]
    buf = bytearray(buf)
    struct.pack_into(">Q", buf, 16, len(buf))
    s2 = pb.schunk_from_cframe(bytes(buf))
    with pytest.raises(pb.FormatError, match=r"offset\[1\]"):
        s2.decompress_chunk(1)


def test_bad_metalayer_content_is_a_format_error() -> None:
    s = pb.schunk_from_cframe(FRAME)
    name_pos = FRAME.index(b"\xa2m1")
    off = struct.unpack_from(">i", FRAME, name_pos + 4)[0]
    buf = bytearray(FRAME)
    buf[off + 5] = 0xC1  # msgpack "never used" byte
    with pytest.raises(pb.FormatError, match="msgpack"):
        pb.schunk_from_cframe(bytes(buf)).meta["m1"]
    assert s.meta["m1"] == [1, 2]


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_mutations_property(data: st.DataObject) -> None:
    buf = bytearray(FRAME)
    kind = data.draw(st.sampled_from(["flip", "truncate", "field", "tail"]))
    if kind == "flip":
        for _ in range(data.draw(st.integers(1, 3))):
            buf[data.draw(st.integers(0, len(buf) - 1))] ^= data.draw(st.integers(1, 255))
    elif kind == "truncate":
        buf = buf[: data.draw(st.integers(0, len(buf) - 1))]
    elif kind == "field":
        pos = data.draw(st.sampled_from([11, 16, 30, 39, 48, 53, 58, 87, 91, 96]))
        buf[pos : pos + 4] = data.draw(st.binary(min_size=4, max_size=4))
    else:
        pos = len(buf) - data.draw(st.integers(1, 60))
        buf[pos] = data.draw(st.integers(0, 255))
    assert outcome(bytes(buf)) in ("ok", "error")
