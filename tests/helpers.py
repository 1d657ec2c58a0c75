"""Test data and checks shared by the test modules."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from pyblosc2.codecs.base import BaseCodec, stream_error
from pyblosc2.filters.base import BaseFilter, FilterContext

DATA_KINDS = ("random", "smooth", "small_ints", "runs", "zeros", "text")


def make_data(kind: str, nbytes: int, typesize: int = 4, seed: int = 0) -> bytes:
    """Deterministic test bytes of one kind (``nbytes`` need not be a multiple of typesize)."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    if kind == "zeros":
        return bytes(nbytes)
    if kind == "smooth":
        n = nbytes // 8 + 1
        return np.linspace(0, 100, n).tobytes()[:nbytes]
    if kind == "small_ints":
        n = nbytes // max(typesize, 1) + 1
        vals = rng.integers(0, 100, n)
        width = typesize if typesize in (1, 2, 4, 8) else 1
        return vals.astype(f"<u{width}").tobytes().ljust(nbytes, b"\x07")[:nbytes]
    if kind == "runs":
        lens = rng.integers(1, 3000, nbytes // 500 + 2)
        vals = rng.integers(0, 256, len(lens), dtype=np.uint8)
        return np.repeat(vals, lens).tobytes().ljust(nbytes, b"\x05")[:nbytes]
    if kind == "text":
        words = [b"blosc", b"chunk", b"frame", b"numpy", b"array", b"the", b"of", b"and", b"zarr"]
        idx = rng.integers(0, len(words), nbytes // 4 + 1)
        return b" ".join(words[i] for i in idx)[:nbytes].ljust(nbytes, b".")
    raise ValueError(kind)


def streams_of(chunk: bytes) -> list[tuple[int, bytes]]:
    """(csize, payload) of every stream of a regular chunk, in block order (test helper)."""
    import pyblosc2 as pb

    h = pb.get_chunk_header(chunk)
    if h.special or h.memcpyed or h.nbytes == 0:
        return []
    hl = h.header_len
    out = []
    for j in range(h.nblocks):
        pos = int.from_bytes(chunk[hl + 4 * j : hl + 4 * j + 4], "little")
        for _ in range(h.nstreams(j)):
            csize = int.from_bytes(chunk[pos : pos + 4], "little", signed=True)
            pos += 4
            size = csize if csize > 0 else (1 if csize < 0 else 0)
            out.append((csize, chunk[pos : pos + size]))
            pos += size
    return out


def same_zstd_chunk(ours: bytes, theirs: bytes) -> bool:
    """Our zstd chunk equals C's, except where C stored a stream raw because libzstd ran out
    of the tight output capacity C gives it (``maxout = neblock``) although the frame would
    have fit: python's zstandard has no capacity argument, so we keep the frame."""
    if ours == theirs:
        return True
    if ours[:12] != theirs[:12] or ours[16:32] != theirs[16:32]:
        return False
    a, b = streams_of(ours), streams_of(theirs)
    if len(a) != len(b):
        return False
    for (ca, pa), (cb, pb_) in zip(a, b, strict=True):
        if (ca, pa) == (cb, pb_):
            continue
        if not (len(pb_) == cb and 0 < ca < cb and cb - ca <= 16 + cb // 64):
            return False
    return True


# -- frame-format.md §11.1: the annotated python-blosc2 dump (3 chunks of int32, zstd, one
# metalayer "m1" = [1, 2], one vlmetalayer "v" = "hi"), 467 bytes ---------------------------

SPEC_11_1_HEADER = bytes.fromhex(
    "9ea862326672616d6500d200000071cf00000000000001d3a412005502d300000000"
    "00000078d300000000000000d8d200000004d200000000d200000028d10001d10001"
    "c3d8060000000000010500000000000000000093cd000fde0001a26d31d200000069"
    "dc0001c600000003920102"
)
SPEC_11_1_INDEX = bytes.fromhex(  # memcpyed, typesize 8, nbytes 24, offsets 0, 72, 144
    "0501070818000000180000003800000000000000000100000000000000000000"
    "0000000000000000"
    "4800000000000000"
    "9000000000000000"
)
SPEC_11_1_VLMETA_V = bytes.fromhex(
    "0501070103000000030000002300000000000000000105000000000000000000a26869"
)
SPEC_11_1_TRAILER = (
    bytes.fromhex("940193cd000dde0001a176d200000013dc0001c600000023")
    + SPEC_11_1_VLMETA_V
    + bytes.fromhex("ce00000052d800")
    + bytes(16)
)


def spec_11_1_chunks() -> list[bytes]:
    """The three memcpyed zstd chunks of §11.1 (``arange(10, int32) + 10 * i``)."""
    head = bytes.fromhex("0501970428000000280000004800000000000000000105000000000000000000")
    return [head + (np.arange(10, dtype="<i4") + 10 * i).tobytes() for i in range(3)]


def spec_11_1_frame() -> bytes:
    """The whole 467-byte frame of §11.1."""
    return SPEC_11_1_HEADER + b"".join(spec_11_1_chunks()) + SPEC_11_1_INDEX + SPEC_11_1_TRAILER


# -- a user codec and a user filter (ids in C-Blosc2's user ranges) ---------------------------

USER_CODEC_ID = 180  # C-Blosc2 user codecs: 160..255
USER_FILTER_ID = 170  # C-Blosc2 user filters: 160..255


class ZlibPluginCodec(BaseCodec):
    """zlib level 6 on each stream, as a *user* codec (compformat 6, udcompcode 180)."""

    compcode = USER_CODEC_ID
    compformat = 6
    name = "zlib-plugin"

    def compress(self, src, clevel, maxout, dict_=None):
        out = zlib.compress(bytes(src), 6)
        return out if len(out) <= maxout else b""

    def decompress(self, src, nbytes, dict_=None):
        try:
            out = zlib.decompress(bytes(src))
        except zlib.error as exc:
            raise stream_error(self.name, "a zlib stream", str(exc)) from None
        if len(out) != nbytes:
            raise stream_error(self.name, f"{nbytes} bytes", len(out))
        return out


class XorFilter(BaseFilter):
    """XOR of every byte with the slot's ``filters_meta`` byte (its own inverse)."""

    id = USER_FILTER_ID
    name = "xor"

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        np.bitwise_xor(src, np.uint8(ctx.meta), out=dst)

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        np.bitwise_xor(src, np.uint8(ctx.meta), out=dst)


# -- SChunk mutations against a list-of-chunks model ------------------------------------------

MODEL_CHUNKSIZE = 400  # bytes: 100 int32 items


def apply_schunk_op(s, chunks: list[bytes], op: str, arg, counter: int) -> list[bytes]:
    """Apply one mutation to SChunk ``s`` and return the model (its chunks' bytes, in order).

    ``counter`` makes each step's data distinct. Ops that need fixed-size chunks (append,
    insert, update, zeros, setitem) are skipped once a short chunk is in; ops that need a chunk
    are skipped on an empty SChunk.
    """
    full = np.arange(counter * 100, counter * 100 + 100, dtype=np.int32).tobytes()
    regular = all(len(c) == MODEL_CHUNKSIZE for c in chunks)
    chunks = list(chunks)
    if op == "append" and regular:
        piece = full if arg >= 30 else full[: 4 * max(arg, 1)]
        s.append_data(piece)
        chunks.append(piece)
    elif op == "insert" and regular:
        k = arg % (len(chunks) + 1)
        s.insert_data(k, full, copy=True)
        chunks.insert(k, full)
    elif op == "update" and chunks and regular:
        k = arg % len(chunks)
        s.update_data(k, full, copy=True)
        chunks[k] = full
    elif op == "zeros" and chunks and regular:
        k = arg % len(chunks)
        s.update_data(k, bytes(MODEL_CHUNKSIZE), copy=True)
        chunks[k] = bytes(MODEL_CHUNKSIZE)
    elif op == "delete" and chunks:
        k = arg % len(chunks)
        s.delete_chunk(k)
        del chunks[k]
    elif op == "reorder" and chunks:
        order = list(range(len(chunks)))
        arg.shuffle(order)
        s.reorder_offsets(order)
        chunks = [chunks[i] for i in order]
    elif op == "setitem" and regular and chunks:
        flat = bytearray(b"".join(chunks))
        start = min(arg, len(flat) // 4)
        val = np.arange(30, dtype=np.int32).tobytes()
        s[start : start + 30] = val
        flat[start * 4 : start * 4 + 120] = val
        chunks = [
            bytes(flat[i : i + MODEL_CHUNKSIZE]) for i in range(0, len(flat), MODEL_CHUNKSIZE)
        ]
    return chunks


def same_value(written, read) -> bool:
    """Whether a metadata value ``read`` back is the value ``written``: same types all the
    way down (a frozenset reads back a set, python-blosc2's convention), arrays with the same
    dtype, shape and bytes (object arrays item by item)."""
    if isinstance(written, frozenset):
        return type(read) is set and written == read
    if isinstance(written, np.ndarray):
        if not isinstance(read, np.ndarray) or (written.dtype, written.shape) != (
            read.dtype,
            read.shape,
        ):
            return False
        if written.dtype == object:
            pairs = zip(written.ravel(), read.ravel(), strict=True)
            return all(same_value(x, y) for x, y in pairs)
        return written.tobytes() == read.tobytes()
    if type(written) is not type(read):
        return False
    if isinstance(written, list | tuple):
        pairs = zip(written, read, strict=True)
        return len(written) == len(read) and all(same_value(x, y) for x, y in pairs)
    if isinstance(written, dict):
        return written.keys() == read.keys() and all(
            same_value(written[k], read[k]) for k in written
        )
    return bool(written == read)


def spy_run_parallel(monkeypatch: Any, *targets: Any) -> list[tuple[int, int]]:
    """Replace ``run_parallel`` in each of ``targets`` (modules or dotted names) by a spy
    that records ``(threads, work items)`` per call and then runs the real one; returns the
    list it fills."""
    from pyblosc2 import _threads

    asked: list[tuple[int, int]] = []
    real = _threads.run_parallel

    def spy(fn: Any, items: Any, nthreads: int) -> Any:
        items = list(items)
        asked.append((nthreads, len(items)))
        return real(fn, items, nthreads)

    for target in targets:
        if isinstance(target, str):
            monkeypatch.setattr(f"{target}.run_parallel", spy)
        else:
            monkeypatch.setattr(target, "run_parallel", spy)
    return asked
