"""Test data and checks shared by the test modules."""

from __future__ import annotations

import numpy as np

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
