"""Hostile files, built byte by byte on disk: metadata nested to kill a recursive decoder, an
index whose entries alias one large entry, declared lengths far beyond the bytes, sparse
frames whose objects are devices, FIFOs, symlinks out of the directory or of the wrong size,
and truncations. Each case names the file builder, what a reader does with it (``action``),
and the pyblosc2 error expected (the class and a regex of its message), or None where the
file is valid and must be read.

Used by test_hostile.py (each case in a child process with time and memory limits, see
hostile_child.py) and by tools/hostile_report.py (the same cases against python-blosc2)."""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgpack
import numpy as np

import pyblosc2 as pb
from pyblosc2.chunk.encode import EncodeSpec, encode_chunk
from pyblosc2.chunk.special import special_chunk
from pyblosc2.constants import MAX_BUFFERSIZE, Codec, SpecialValue
from pyblosc2.frame.fingerprint import FP_KEY, FPT_128
from pyblosc2.frame.header import HEADER_MINLEN, POS_FRAME_LEN, POS_HEADER_LEN, FrameHeader
from pyblosc2.frame.trailer import FINGERPRINT_LEN, Trailer
from pyblosc2.frame.writer import build_cframe


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], str]
    action: str  # see hostile_child.py: open, meta:NAME, vlmeta:NAME, values, info, read, ...
    error: str | None  # the pyblosc2 error class expected (None: the file reads)
    match: str = ""  # a regex of the message (or of the CLI output)


# -- msgpack values ----------------------------------------------------------------------------


def nested_arrays(depth: int) -> bytes:
    return b"\x91" * (depth - 1) + b"\x90"


def nested_maps(depth: int) -> bytes:
    return b"\x81\xa1k" * (depth - 1) + b"\x80"


def nested_sets(depth: int) -> bytes:
    """Sets in sets (ext 45 payloads holding ext 45): decoding hook inside decoding hook."""
    inner = b"\x90"
    for _ in range(depth):
        inner = msgpack.packb(msgpack.ExtType(45, b"\x91" + inner))
    return inner


def nested_ndarrays(depth: int) -> bytes:
    """Object arrays holding object arrays (ext 46 payloads holding ext 46)."""
    inner = b"\x90"
    for _ in range(depth):
        body = b"\x82\xa6values\x91" + inner + b"\xa5shape\x91\x01"
        inner = msgpack.packb(msgpack.ExtType(46, body))
    return inner


def vl(raw: bytes) -> bytes:
    """A vlmeta entry holding the msgpack bytes ``raw`` as python-blosc2 stores it."""
    return encode_chunk(memoryview(raw), EncodeSpec(typesize=1, clevel=5, codec=Codec.ZSTD))


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def with_meta(raw: bytes) -> Callable[[Path], str]:
    return lambda d: write(d / "m.b2frame", build_cframe([], typesize=1, metalayers=[("m", raw)]))


def with_vlmeta(stored: bytes) -> Callable[[Path], str]:
    return lambda d: write(d / "v.b2frame", build_cframe([], typesize=1, vlmeta=[("v", stored)]))


# -- index sections built by hand (what no writer produces) -----------------------------------


def _index(names: list[bytes], offsets: list[int], contents: list[bytes]) -> bytes:
    head = struct.pack(">BBHBH", 0x93, 0xCD, 0, 0xDE, len(names))
    entries = b"".join(
        bytes([0xA0 | len(n)]) + n + struct.pack(">Bi", 0xD2, o)
        for n, o in zip(names, offsets, strict=True)
    )
    body = b"".join(struct.pack(">BI", 0xC6, len(c)) + c for c in contents)
    return head + entries + struct.pack(">BH", 0xDC, len(contents)) + body


def _index_len(names: list[bytes]) -> int:
    return 7 + sum(6 + len(n) for n in names) + 3


def frame_from_sections(metalayers: bytes, trailer: bytes) -> bytes:
    """An empty frame whose metalayer section and trailer are the given bytes."""
    prefix = bytearray(build_cframe([], typesize=1)[:HEADER_MINLEN])
    header_len = HEADER_MINLEN + len(metalayers)
    struct.pack_into(">i", prefix, POS_HEADER_LEN, header_len)
    struct.pack_into(">Q", prefix, POS_FRAME_LEN, header_len + len(trailer))
    return bytes(prefix) + metalayers + trailer


def trailer_from_index(index: bytes, fpt: int = 0, fingerprint: bytes = bytes(16)) -> bytes:
    total = 2 + len(index) + 7 + FINGERPRINT_LEN
    return b"\x94\x01" + index + struct.pack(">BIBB", 0xCE, total, 0xD8, fpt) + fingerprint


def aliased_vlmeta(n: int, size: int) -> Callable[[Path], str]:
    """``n`` vlmeta names whose offsets all point at one entry of ``size`` bytes: a file of
    ``size`` bytes that a reader copying each entry turns into ``n * size``."""

    def build(d: Path) -> str:
        names = [f"k{i:05d}".encode() for i in range(n)]
        content = vl(msgpack.packb(np.random.default_rng(0).bytes(size)))  # incompressible
        pos = 2 + _index_len(names)  # the C6 byte, counted from the trailer start
        index = _index(names, [pos] * n, [content])
        meta_section = _index([], [], [])
        return write(
            d / "aliased.b2frame", frame_from_sections(meta_section, trailer_from_index(index))
        )

    return build


def aliased_metalayers(n: int, size: int) -> Callable[[Path], str]:
    def build(d: Path) -> str:
        names = [f"m{i:02d}".encode() for i in range(n)]
        pos = HEADER_MINLEN + _index_len(names)
        section = _index(names, [pos] * n, [msgpack.packb(bytes(size))])
        return write(d / "aliased-meta.b2frame", frame_from_sections(section, Trailer().to_bytes()))

    return build


def vlmeta_into_names(d: Path) -> str:
    """A vlmeta offset pointing into the index's own names (the C6 there is forged)."""
    names = [b"\xc6\x00\x00\x00\x02xy"]  # a name whose bytes look like a bin32 of "xy"
    index = _index(names, [2 + 7 + 1], [b"zz"])
    return write(
        d / "into-names.b2frame", frame_from_sections(_index([], [], []), trailer_from_index(index))
    )


def repeated_vlmeta_names(d: Path) -> str:
    names = [b"same", b"same"]
    a, b_ = vl(msgpack.packb(1)), vl(msgpack.packb(2))
    pos = 2 + _index_len(names)
    index = _index(names, [pos, pos + 5 + len(a)], [a, b_])
    return write(
        d / "repeated.b2frame", frame_from_sections(_index([], [], []), trailer_from_index(index))
    )


def digests_as_int(d: Path) -> str:
    """A fingerprinted frame whose digest-list entry is the integer 2**40 (not a bin)."""
    frame = build_cframe([], typesize=1, vlmeta=[(FP_KEY, vl(msgpack.packb(2**40)))])
    h = FrameHeader.from_bytes(frame)
    tail = bytearray(frame[h.frame_len - 25 :])
    tail[-FINGERPRINT_LEN - 1] = FPT_128
    return write(d / "fp.b2frame", frame[: h.frame_len - 25] + bytes(tail))


def zero_run_vlmeta(nbytes: int) -> Callable[[Path], str]:
    """A vlmeta entry that is a 32-byte special chunk declaring ``nbytes`` zeros."""
    return lambda d: with_vlmeta(special_chunk(SpecialValue.ZERO, nbytes, 1, 0))(d)


# -- sparse frames and files that are not regular ---------------------------------------------


def sparse(d: Path) -> Path:
    """A sparse frame of two int32 chunks (objects 00000000.chunk, 00000001.chunk)."""
    path = d / "s.b2frame"
    s = pb.SChunk(chunksize=4000, urlpath=str(path), contiguous=False, cparams={"typesize": 4})
    s.append_data(np.arange(1000, dtype=np.int32))
    s.append_data(np.arange(1000, dtype=np.int32) * 3)
    return path


def sparse_with(
    change: Callable[[Path, Path], None], name: str = "00000000.chunk"
) -> Callable[[Path], str]:
    def build(d: Path) -> str:
        path = sparse(d)
        change(path / name, d)
        return str(path)

    return build


def _symlink(target: str) -> Callable[[Path, Path], None]:
    def change(obj: Path, d: Path) -> None:
        obj.unlink()
        obj.symlink_to(target)

    return change


def _fifo(obj: Path, d: Path) -> None:
    obj.unlink()
    os.mkfifo(obj)


def _escape(obj: Path, d: Path) -> None:
    """A valid chunk, but outside the directory."""
    outside = d / "outside.chunk"
    shutil.copyfile(obj, outside)
    obj.unlink()
    obj.symlink_to(outside)


def _inside(obj: Path, d: Path) -> None:
    """A symlink to a copy of the chunk inside the directory (allowed)."""
    copy = obj.parent / "copy-of-0.bin"
    shutil.copyfile(obj, copy)
    obj.unlink()
    obj.symlink_to(copy.name)


def _append(obj: Path, d: Path) -> None:
    with open(obj, "ab") as f:
        f.write(b"\x00" * 7)


def _cut(obj: Path, d: Path) -> None:
    os.truncate(obj, obj.stat().st_size - 5)


def _hole(obj: Path, d: Path) -> None:
    os.truncate(obj, 1 << 40)  # 1 TiB, a sparse file: nothing stored


def _directory(obj: Path, d: Path) -> None:
    obj.unlink()
    obj.mkdir()


def local_url(build: Callable[[Path], str]) -> Callable[[Path], str]:
    return lambda d: "local://" + build(d)


def fifo_file(d: Path) -> str:
    path = d / "fifo.b2frame"
    os.mkfifo(path)
    return str(path)


def dev_zero_file(d: Path) -> str:
    path = d / "zero.b2frame"
    path.symlink_to("/dev/zero")
    return str(path)


def truncated_vlmeta(cut: int) -> Callable[[Path], str]:
    """A frame with a vlmeta entry, cut ``cut`` bytes before its end (frame_len unchanged)."""

    def build(d: Path) -> str:
        s = pb.SChunk(chunksize=40, cparams={"typesize": 4})
        s.vlmeta["v"] = {"a": list(range(50))}
        return write(d / "cut.b2frame", s.to_cframe()[:-cut])

    return build


DEPTH_ERROR = r"msgpack nesting depth at offset \d+ is 65, expected at most 64"

CASES: dict[str, Case] = {
    # nesting: a recursive decoder dies (C stack) or raises RecursionError
    "meta-arrays-200": Case(
        with_meta(nested_arrays(200)), "meta:m", "FormatError", rf"^metalayer 'm': {DEPTH_ERROR}"
    ),
    "meta-arrays-500": Case(with_meta(nested_arrays(500)), "meta:m", "FormatError", DEPTH_ERROR),
    "meta-arrays-10000": Case(
        with_meta(nested_arrays(10_000)), "meta:m", "FormatError", DEPTH_ERROR
    ),
    "meta-maps-200": Case(with_meta(nested_maps(200)), "meta:m", "FormatError", DEPTH_ERROR),
    "meta-sets-200": Case(with_meta(nested_sets(200)), "meta:m", "FormatError", DEPTH_ERROR),
    "meta-ndarrays-200": Case(
        with_meta(nested_ndarrays(200)), "meta:m", "FormatError", DEPTH_ERROR
    ),
    "vlmeta-arrays-200": Case(
        with_vlmeta(vl(nested_arrays(200))),
        "vlmeta:v",
        "FormatError",
        rf"^vlmeta 'v': {DEPTH_ERROR}",
    ),
    "vlmeta-arrays-500": Case(
        with_vlmeta(vl(nested_arrays(500))), "vlmeta:v", "FormatError", DEPTH_ERROR
    ),
    "vlmeta-arrays-10000": Case(
        with_vlmeta(vl(nested_arrays(10_000))), "vlmeta:v", "FormatError", DEPTH_ERROR
    ),
    "vlmeta-sets-200": Case(
        with_vlmeta(vl(nested_sets(200))), "vlmeta:v", "FormatError", DEPTH_ERROR
    ),
    "vlmeta-sets-500": Case(
        with_vlmeta(vl(nested_sets(500))), "vlmeta:v", "FormatError", DEPTH_ERROR
    ),
    "vlmeta-sets-10000": Case(
        with_vlmeta(vl(nested_sets(10_000))), "vlmeta:v", "FormatError", DEPTH_ERROR
    ),
    # open() decodes no value: the file opens, the value fails when read
    "open-meta-sets-200": Case(with_meta(nested_sets(200)), "open", None, r"SChunk"),
    "open-vlmeta-sets-10000": Case(with_vlmeta(vl(nested_sets(10_000))), "open", None, r"SChunk"),
    "vlmeta-values-sets-200": Case(
        with_vlmeta(vl(nested_sets(200))), "values", "FormatError", DEPTH_ERROR
    ),
    "info-meta-sets-200": Case(
        with_meta(nested_sets(200)), "info", None, rf"<undecodable: metalayer 'm': {DEPTH_ERROR}"
    ),
    "info-vlmeta-arrays-500": Case(
        with_vlmeta(vl(nested_arrays(500))),
        "info",
        None,
        rf"<undecodable: vlmeta 'v': {DEPTH_ERROR}",
    ),
    # the deepest accepted nesting decodes with no recursion: in a thread with a 256 KiB stack
    "vlmeta-ndarrays-21-small-stack": Case(
        with_vlmeta(vl(nested_ndarrays(21))), "small-stack:v", None
    ),
    "vlmeta-ndarrays-22": Case(
        with_vlmeta(vl(nested_ndarrays(22))), "vlmeta:v", "FormatError", DEPTH_ERROR
    ),
    # declared lengths far beyond the bytes
    "meta-array32-huge": Case(
        with_meta(b"\xdd\xff\xff\xff\xff\x00"),
        "meta:m",
        "FormatError",
        r"msgpack item count at offset 0 is 4294967295, expected at most 1",
    ),
    "meta-map32-huge": Case(
        with_meta(b"\xdf\x7f\xff\xff\xff\xa1a\x00"),
        "meta:m",
        "FormatError",
        r"msgpack item count at offset 0 is 4294967294",
    ),
    "meta-str32-huge": Case(
        with_meta(b"\xdb\xff\xff\xff\xffab"),
        "meta:m",
        "FormatError",
        r"msgpack length at offset 1 is 4294967295, expected at most 2",
    ),
    "meta-bin32-huge": Case(
        with_meta(b"\xc6\x7f\xff\xff\xffab"),
        "meta:m",
        "FormatError",
        r"msgpack length at offset 1 is 2147483647",
    ),
    "meta-ext32-huge": Case(
        with_meta(b"\xc9\xff\xff\xff\xff\x2dab"),
        "meta:m",
        "FormatError",
        r"msgpack length at offset 1 is 4294967295",
    ),
    "vlmeta-zero-run-2GB": Case(
        zero_run_vlmeta(MAX_BUFFERSIZE),
        "vlmeta:v",
        "FormatError",
        r"^vlmeta 'v': chunk special is a run of 2147483615",
    ),
    "control-valid-meta": Case(with_meta(b"\x92\x01\x02"), "meta:m", None, r"^\[1, 2\]$"),
    # an index whose entries alias one large entry (python-blosc2 refuses these files too)
    "vlmeta-aliased-8192x1MiB": Case(
        aliased_vlmeta(8192, 1 << 20),
        "open",
        "FormatError",
        r"^frame trailer: vlmeta 'k\d{5}' offset at offset \d+ is \d+, "
        r"expected at least \d+ \(after vlmeta 'k\d{5}'\)",
    ),
    "meta-aliased-16x1MiB": Case(
        aliased_metalayers(16, 1 << 20),
        "open",
        "FormatError",
        r"^frame header: metalayer 'm\d\d' offset at offset \d+ is \d+, expected at least",
    ),
    "vlmeta-offset-into-names": Case(
        vlmeta_into_names,
        "open",
        "FormatError",
        r"offset at offset \d+ is 10, expected at least \d+ \(after the names\)",
    ),
    "vlmeta-repeated-name": Case(
        repeated_vlmeta_names,
        "open",
        "FormatError",
        r"vlmeta 1 name at offset \d+ is 'same', expected a name not used before",
    ),
    "digest-list-int": Case(
        digests_as_int,
        "verify",
        "FormatError",
        r"vlmeta '_pyblosc2_fp' is int, expected a bin of 8-byte digests",
    ),
    # sparse frames
    "sparse-chunk-dev-zero": Case(
        sparse_with(_symlink("/dev/zero")),
        "read",
        "FormatError",
        r"object 00000000.chunk is a symlink to /dev/zero, expected a file inside the directory",
    ),
    "sparse-chunk-fifo": Case(
        sparse_with(_fifo),
        "read",
        "FormatError",
        r"object 00000000.chunk is a FIFO, expected a regular file",
    ),
    "sparse-chunk-escaping-symlink": Case(
        sparse_with(_escape),
        "read",
        "FormatError",
        r"object 00000000.chunk is a symlink to .*outside.chunk, expected a file inside",
    ),
    "sparse-chunk-inside-symlink": Case(sparse_with(_inside), "read", None),
    "sparse-chunk-longer": Case(
        sparse_with(_append),
        "read",
        "FormatError",
        r"^chunk object 00000000.chunk: cbytes at offset 12 is \d+, expected the object size \d+",
    ),
    "sparse-chunk-shorter": Case(
        sparse_with(_cut),
        "read",
        "FormatError",
        r"^chunk object 00000000.chunk: cbytes at offset 12 is \d+, expected the object size \d+",
    ),
    "sparse-chunk-hole-1TiB": Case(
        sparse_with(_hole),
        "read",
        "FormatError",
        r"object 00000000.chunk size is 1099511627776, expected at most \d+",
    ),
    "sparse-chunk-directory": Case(
        sparse_with(_directory),
        "read",
        "FormatError",
        r"object 00000000.chunk is a directory, expected a regular file",
    ),
    "sparse-index-fifo": Case(
        sparse_with(_fifo, "chunks.b2frame"),
        "open",
        "FormatError",
        r"file is a FIFO, expected a regular file",
    ),
    "sparse-index-dev-zero": Case(
        sparse_with(_symlink("/dev/zero"), "chunks.b2frame"),
        "open",
        "FormatError",
        r"object chunks.b2frame is a symlink to /dev/zero",
    ),
    "sparse-index-escaping-symlink": Case(
        sparse_with(_escape, "chunks.b2frame"),
        "open",
        "FormatError",
        r"object chunks.b2frame is a symlink to",
    ),
    # the same through fsspec's local file system (a local:// URL)
    "fsspec-local-chunk-fifo": Case(
        local_url(sparse_with(_fifo)),
        "read",
        "FormatError",
        r"^local://.*: object 00000000.chunk is other, expected a regular file",
    ),
    "fsspec-local-chunk-dev-zero": Case(
        local_url(sparse_with(_symlink("/dev/zero"))), "read", "FormatError", r"is other"
    ),
    "fsspec-local-chunk-hole-1TiB": Case(
        local_url(sparse_with(_hole)),
        "read",
        "FormatError",
        r"object 00000000.chunk size is 1099511627776, expected at most \d+",
    ),
    # frame files that are not regular files
    "file-fifo": Case(
        fifo_file, "open", "FormatError", r"fifo.b2frame: file is a FIFO, expected a regular file"
    ),
    "file-fifo-mmap": Case(fifo_file, "open-mmap", "FormatError", r"file is a FIFO"),
    "file-fifo-copy-on-write": Case(fifo_file, "open-cow", "FormatError", r"file is a FIFO"),
    "file-dev-zero": Case(dev_zero_file, "open", "FormatError", r"file is a character device"),
    "file-dev-zero-copy-on-write": Case(
        dev_zero_file, "open-cow", "FormatError", r"file is a character device"
    ),
    # truncations
    **{
        f"vlmeta-truncated-{cut}": Case(
            truncated_vlmeta(cut), "open", "FormatError", r"^frame (header|trailer): "
        )
        for cut in (1, 24, 26, 40, 60)
    },
}
