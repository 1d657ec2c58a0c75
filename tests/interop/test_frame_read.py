"""Frames written by python-blosc2 are read by pyblosc2's frame reader (frame-format.md §2-§5,
§7). Groundwork for the SChunk layer: internal API, read side only."""

from __future__ import annotations

import struct

import msgpack
import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.frame.contiguous import BufferSource, FileSource, FrameReader


def _c_schunk(cblosc2, tmp_path, kind: str, codec: str, on_disk: bool = True):
    """A C-written frame and the chunks it must hold (a plain-list model)."""
    path = tmp_path / "f.b2frame"
    cp = cblosc2.CParams(typesize=4, nthreads=1, codec=cblosc2.Codec[codec])
    s = cblosc2.SChunk(
        chunksize=4000,
        urlpath=str(path) if on_disk else None,
        contiguous=True,
        cparams=cp,
        meta={"m1": [1, 2], "name": "hello"},
    )
    model = [np.arange(i * 1000, (i + 1) * 1000, dtype=np.int32) for i in range(6)]
    model += [np.zeros(1000, np.int32), np.arange(300, dtype=np.int32)]
    if kind == "empty":
        return s, path, []
    for arr in model:
        s.append_data(arr)
    s.vlmeta["info"] = {"a": 1, "b": [1, 2, 3]}
    if kind == "mutated":
        s.insert_data(2, np.full(1000, 7, np.int32), copy=True)
        model.insert(2, np.full(1000, 7, np.int32))
        del model[4]
        s.delete_chunk(4)
        s.update_data(0, np.full(1000, -1, np.int32), copy=True)
        model[0] = np.full(1000, -1, np.int32)
    return s, path, [m.tobytes() for m in model]


@pytest.mark.parametrize("codec", ["LZ4", "ZSTD", "BLOSCLZ"])
@pytest.mark.parametrize("kind", ["empty", "appended", "mutated"])
@pytest.mark.parametrize("where", ["file", "cframe"])
def test_read_c_frames(cblosc2, tmp_path, kind: str, codec: str, where: str) -> None:
    s, path, model = _c_schunk(cblosc2, tmp_path, kind, codec, on_disk=where == "file")
    if where == "file":
        r = FrameReader.open(FileSource(path))
    else:
        r = FrameReader.open(BufferSource(s.to_cframe()), exact=True)
    assert r.nchunks == s.nchunks == len(model)
    assert r.header.nbytes == s.nbytes and r.header.typesize == 4
    assert [pb.decompress2(r.get_chunk(n)) for n in range(r.nchunks)] == model
    assert {k: msgpack.unpackb(v) for k, v in r.header.metalayers} == {
        "m1": [1, 2],
        "name": "hello",
    }
    vl = {k: msgpack.unpackb(pb.decompress2(v)) for k, v in r.trailer.vlmeta}
    assert vl == ({} if kind == "empty" else {"info": {"a": 1, "b": [1, 2, 3]}})


def test_special_offsets(cblosc2) -> None:
    s = cblosc2.SChunk(chunksize=400, cparams=cblosc2.CParams(typesize=4, nthreads=1))
    s.append_data(np.zeros(100, np.float32))
    s.append_data(np.arange(100, dtype=np.float32))
    r = FrameReader.open(BufferSource(s.to_cframe()), exact=True)
    assert int(r.offsets[0]) == -0x7F00000000000000  # 0x81 << 56: zeros, nothing stored
    assert pb.decompress2(r.get_chunk(0)) == bytes(400)


def test_frame_at_offset(cblosc2, tmp_path) -> None:
    s, path, _ = _c_schunk(cblosc2, tmp_path, "appended", "LZ4")
    frame = path.read_bytes()
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 1234 + frame + b"trailing junk")
    r = FrameReader.open(FileSource(big, offset=1234))
    assert pb.decompress2(r.get_chunk(3)) == s.decompress_chunk(3)


def test_open_reads_only_header_index_trailer(cblosc2, tmp_path) -> None:
    _s, path, _ = _c_schunk(cblosc2, tmp_path, "appended", "LZ4")
    src = FileSource(path)
    r = FrameReader.open(src)
    h = r.header
    data_area = h.cbytes
    # header prefix + header + trailer tail + trailer + index: everything but the data area
    assert src.bytes_read <= path.stat().st_size - data_area + 87 + 25
    before = src.bytes_read
    r.get_chunk(2)
    assert src.bytes_read - before <= 32 + pb.get_cbuffer_sizes(r.get_chunk(2))[1]


def test_a_consistent_open_makes_four_reads(cblosc2, tmp_path, monkeypatch) -> None:
    """A follower re-opens the frame after every commit it sees: the prefix, the rest of the
    header, the index and trailer together, and the prefix again (was seven reads)."""
    _s, path, _ = _c_schunk(cblosc2, tmp_path, "appended", "LZ4")
    src = FileSource(path)
    calls = []
    read = src.read
    monkeypatch.setattr(src, "read", lambda pos, n: calls.append((pos, n)) or read(pos, n))
    r = FrameReader.open_consistent(src)
    h = r.header
    assert calls == [
        (0, 87),
        (0, h.header_len),
        (h.header_len + h.cbytes, h.frame_len - h.header_len - h.cbytes),
        (0, 87),
    ]
    assert (
        r.seen == path.read_bytes()[: h.header_len] + path.read_bytes()[h.header_len + h.cbytes :]
    )


@pytest.mark.parametrize(
    ("pos", "value", "field"),
    [
        (11, 5, "header_len"),
        (16, 10**9, "frame_len"),
        (26, 7, "frame_type"),
        (25, 0x1F, "version"),
        (48, 0, "typesize"),
    ],
)
def test_bad_header_fields(cblosc2, tmp_path, pos: int, value: int, field: str) -> None:
    s, _path, _ = _c_schunk(cblosc2, tmp_path, "appended", "LZ4")
    buf = bytearray(s.to_cframe())
    if pos in (11, 48):
        struct.pack_into(">i", buf, pos, value)
    elif pos == 16:
        struct.pack_into(">Q", buf, pos, value)
    else:
        buf[pos] = value
    with pytest.raises(pb.FormatError, match=field if field != "version" else "format version"):
        FrameReader.open(BufferSource(bytes(buf)), exact=True)


@pytest.mark.parametrize("cut", [0, 50, 87, 100, -1, -10, -30])
def test_truncated_frames(cblosc2, tmp_path, cut: int) -> None:
    s, _path, _ = _c_schunk(cblosc2, tmp_path, "appended", "LZ4")
    buf = s.to_cframe()
    with pytest.raises(pb.FormatError, match=r"^frame header: (length|header_len|frame_len) at"):
        FrameReader.open(BufferSource(buf[:cut]), exact=True)


def test_variable_frame_special_chunk_where_c_fails(cblosc2, tmp_path) -> None:
    """An insert turns the frame variable-sized while an all-zero chunk is stored as a special
    offset, which records no size: C-Blosc2 then fails to read that chunk back from the file
    (frame-format.md §2.7). The size follows from nbytes when it is the only special chunk."""
    path = tmp_path / "v.b2frame"
    s = cblosc2.SChunk(
        chunksize=4000,
        urlpath=str(path),
        contiguous=True,
        cparams=cblosc2.CParams(typesize=4, nthreads=1),
    )
    for i in range(3):
        s.append_data(np.arange(i * 1000, (i + 1) * 1000, dtype=np.int32))
    s.append_data(np.zeros(1000, np.int32))
    s.append_data(np.arange(300, dtype=np.int32))
    s.insert_data(1, np.full(1000, 7, np.int32), copy=True)
    assert s.chunksize == 0
    del s
    reopened = cblosc2.open(str(path))
    with pytest.raises(RuntimeError, match="Error while getting the chunk"):
        reopened.decompress_chunk(4)
    r = FrameReader.open(FileSource(path))
    assert pb.decompress2(r.get_chunk(4)) == bytes(4000)
    assert pb.decompress2(r.get_chunk(5)) == np.arange(300, dtype=np.int32).tobytes()


def test_an_index_and_trailer_read_cut_short_is_read_piece_by_piece(cblosc2, tmp_path) -> None:
    """A source whose read of the index and trailer together comes back short (a file cut
    while it was read) is read as before, the trailer's last bytes, the trailer and the
    index each on its own: the same frame, or the error those reads give."""
    _s, path, _ = _c_schunk(cblosc2, tmp_path, "appended", "LZ4")
    whole = FrameReader.open(FileSource(path))
    h = whole.header
    src = FileSource(path)
    read = src.read
    span = h.frame_len - h.header_len - h.cbytes

    def short(pos: int, n: int) -> bytes:
        return read(pos, n - 1) if n == span else read(pos, n)

    src.read = short  # type: ignore[method-assign]
    r = FrameReader.open(src)
    assert r.seen == whole.seen
    assert [r.offset(i) for i in range(r.nchunks)] == [whole.offset(i) for i in range(r.nchunks)]
