"""Golden chunks, frames and arrays written once by C-Blosc2 (tests/golden/c_blosc2/, made by
its make_c_golden.py through python-blosc2 4.14.1), decoded by pyblosc2 alone.

Where the README promises byte-identical output (BloscLZ and zstd at ``nthreads=1``, chunks and
the frames around them), pyblosc2 re-encodes the same input and must give the same bytes.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import pyblosc2 as pb
from pyblosc2.constants import SpecialValue
from pyblosc2.frame.header import FrameHeader
from pyblosc2.frame.index import decode_index, special_of
from pyblosc2.frame.trailer import Trailer, locate_trailer
from pyblosc2.ndarray.b2nd_meta import B2NDMeta
from tests.helpers import same_zstd_chunk

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "c_blosc2"
MANIFEST: dict[str, Any] = json.loads((GOLDEN / "manifest.json").read_text())
EXACT = {"BLOSCLZ", "ZSTD"}  # README: byte-identical to C-Blosc2 at nthreads=1


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_c_golden", GOLDEN / "make_c_golden.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GENERATOR = _generator()


def _expected(entry: dict[str, Any]) -> np.ndarray:
    return np.load(GOLDEN / entry["expected"], allow_pickle=False)


def _entries(group: str) -> list[dict[str, Any]]:
    return [MANIFEST[group][k] for k in sorted(MANIFEST[group])]


def _ids(group: str) -> list[str]:
    return sorted(MANIFEST[group])


def test_tree_is_small() -> None:
    files = [p for p in GOLDEN.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 320_000
    listed = {e["file"] for g in MANIFEST.values() if isinstance(g, dict) for e in g.values()}
    assert all((GOLDEN / f).exists() for f in listed)


# -- chunks -----------------------------------------------------------------------------------


def test_every_combination_is_there() -> None:
    names = set(MANIFEST["chunks"])
    assert names == {c["name"] for c in GENERATOR.chunk_cases()}
    assert len(names) == 5 * (4 * 3 + 2)


@pytest.mark.parametrize("entry", _entries("chunks"), ids=_ids("chunks"))
def test_c_chunk_decodes(entry: dict[str, Any]) -> None:
    chunk = (GOLDEN / entry["file"]).read_bytes()
    h = pb.get_chunk_header(chunk)
    assert (h.typesize, h.nbytes, h.blocksize) == (entry["typesize"], 4096, entry["blocksize"])
    expected = _expected(entry)
    assert pb.decompress2(chunk) == expected.tobytes()
    out = bytearray(len(expected.tobytes()))
    pb.decompress2(chunk, dst=out)
    assert bytes(out) == expected.tobytes()


def _params(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "codec": pb.Codec[entry["codec"]],
        "clevel": entry["clevel"],
        "typesize": entry["typesize"],
        "filters": [pb.Filter[f] for f in entry["filters"]],
        "filters_meta": entry["filters_meta"],
        "splitmode": pb.SplitMode[entry["splitmode"]],
        "blocksize": entry["blocksize"],
        "nthreads": 1,
    }


EXACT_CHUNKS = [e for e in _entries("chunks") if e["codec"] in EXACT]


@pytest.mark.parametrize("entry", EXACT_CHUNKS, ids=[e["name"] for e in EXACT_CHUNKS])
def test_c_chunk_reencodes_byte_identical(entry: dict[str, Any]) -> None:
    golden = (GOLDEN / entry["file"]).read_bytes()
    data = np.load(GOLDEN / "expected" / f"input-ts{entry['typesize']}.npy")
    ours = pb.compress2(data.tobytes(), **_params(entry))
    if entry["codec"] == "ZSTD":
        assert same_zstd_chunk(ours, golden)
    else:
        assert ours == golden


@pytest.mark.parametrize("entry", _entries("special_chunks"), ids=_ids("special_chunks"))
def test_c_special_chunk_decodes(entry: dict[str, Any]) -> None:
    chunk = (GOLDEN / entry["file"]).read_bytes()
    h = pb.get_chunk_header(chunk)
    assert h.special == SpecialValue[entry["special"]]
    expected = _expected(entry)
    raw = pb.decompress2(chunk)
    assert raw is not None
    got = np.frombuffer(raw, dtype=expected.dtype)
    np.testing.assert_array_equal(got, expected)  # NaN == NaN here
    assert got.tobytes() == expected.tobytes()  # and the very NaN bits


def test_compress2_zeros_reencodes_byte_identical() -> None:
    golden = (GOLDEN / "chunks" / "compress2-zeros.b2chunk").read_bytes()
    assert pb.compress2(bytes(4000), typesize=4, nthreads=1) == golden


@pytest.mark.parametrize("entry", _entries("dict_chunks"), ids=_ids("dict_chunks"))
def test_c_dict_chunk(entry: dict[str, Any]) -> None:
    golden = (GOLDEN / entry["file"]).read_bytes()
    assert pb.get_chunk_header(golden).use_dict
    data = _expected(entry)
    assert pb.decompress2(golden) == data.tobytes()
    if entry["codec"] in EXACT:
        ours = pb.compress2(
            data.tobytes(),
            codec=pb.Codec[entry["codec"]],
            clevel=5,
            typesize=4,
            use_dict=True,
            blocksize=2048,
            nthreads=1,
        )
        assert same_zstd_chunk(ours, golden)


# -- frames -----------------------------------------------------------------------------------


def _json(v: Any) -> Any:
    return json.loads(json.dumps(v, default=list))


@pytest.mark.parametrize("entry", _entries("frames"), ids=_ids("frames"))
def test_c_frame_reads(entry: dict[str, Any]) -> None:
    s = pb.open(str(GOLDEN / entry["file"]), mode="r")
    assert isinstance(s, pb.SChunk)
    assert (s.nchunks, s.chunksize, s.typesize) == (
        entry["nchunks"],
        entry["chunksize"],
        entry["typesize"],
    )
    expected = _expected(entry)
    parts = [s.decompress_chunk(n) for n in range(s.nchunks)]
    assert b"".join(p for p in parts if p is not None) == expected.tobytes()
    assert None not in parts
    assert s[:] == expected.tobytes()
    assert _json({k: s.meta[k] for k in s.meta}) == entry["meta"]
    assert _json(dict(s.vlmeta.getall())) == entry["vlmeta"]


CONTIGUOUS = [e for e in _entries("frames") if e["file"].endswith(".b2frame")]


def _layout(frame: bytes) -> tuple[FrameHeader, np.ndarray, Trailer]:
    """Take a C frame apart with the frame modules alone."""
    h = FrameHeader.from_bytes(frame, buffer_len=len(frame))
    tlen = locate_trailer(frame[-25:], h.frame_len, h.header_len)
    trailer = Trailer.from_bytes(frame[h.frame_len - tlen :], h.frame_len - tlen)
    start = h.header_len + h.cbytes
    offsets = decode_index(frame[start : h.frame_len - tlen], h.nchunks_fixed, start)
    return h, offsets, trailer


@pytest.mark.parametrize("entry", CONTIGUOUS, ids=[e["name"] for e in CONTIGUOUS])
def test_c_frame_layout(entry: dict[str, Any]) -> None:
    frame = (GOLDEN / entry["file"]).read_bytes()
    h, offsets, trailer = _layout(frame)
    assert (h.frame_len, h.typesize, h.chunksize) == (
        len(frame),
        entry["typesize"],
        entry["chunksize"],
    )
    assert len(offsets) == entry["nchunks"]
    assert h.has_vlmeta == bool(entry["vlmeta"])
    assert [n for n, _ in trailer.vlmeta] == list(entry["vlmeta"])
    assert [n for n, _ in h.metalayers] == list(entry["meta"])
    assert pb.schunk_from_cframe(frame)[:] == _expected(entry).tobytes()  # in-memory path


def test_c_special_offsets() -> None:
    """§4.2: all-zero chunks appended by C are stored as 0x81... offsets, no bytes."""
    _, offsets, _ = _layout(
        (GOLDEN / "frames" / "fixed-blosclz-special-offsets.b2frame").read_bytes()
    )
    kinds = [special_of(int(o)) for o in offsets]
    assert kinds == [SpecialValue.NOT_SPECIAL, SpecialValue.ZERO] * 2 + [SpecialValue.NOT_SPECIAL]


def test_c_fill_special_index() -> None:
    """§4.3: fill_special writes one repeated-value index chunk of NaN offsets."""
    frame = (GOLDEN / "frames" / "fill-nan-f8.b2frame").read_bytes()
    h, offsets, _ = _layout(frame)
    assert h.cbytes == 0
    assert [special_of(int(o)) for o in offsets] == [SpecialValue.NAN] * 3
    index = frame[h.header_len : h.header_len + pb.get_chunk_header(frame[h.header_len :]).cbytes]
    assert pb.get_chunk_header(index).special == SpecialValue.VALUE


EXACT_FRAMES = [
    name
    for name, recipe in GENERATOR.frame_recipes().items()
    if recipe["codec"] in EXACT and recipe.get("contiguous", True)
]


@pytest.mark.parametrize("name", EXACT_FRAMES)
def test_c_frame_rewritten_byte_identical(name: str, tmp_path) -> None:
    """The same operations through pyblosc2 write the very same file."""
    path = tmp_path / f"{name}.b2frame"
    GENERATOR.replay(pb, GENERATOR.frame_recipes()[name], path)
    assert path.read_bytes() == (GOLDEN / MANIFEST["frames"][name]["file"]).read_bytes()


# -- b2nd arrays ------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", _entries("arrays"), ids=_ids("arrays"))
def test_c_array_reads(entry: dict[str, Any]) -> None:
    path = GOLDEN / entry["file"]
    a = pb.open(str(path), mode="r")
    assert isinstance(a, pb.NDArray)
    expected = _expected(entry)
    assert (a.shape, a.chunks, a.blocks, a.dtype) == (
        tuple(entry["shape"]),
        tuple(entry["chunks"]),
        tuple(entry["blocks"]),
        np.dtype(entry["dtype"]),
    )
    np.testing.assert_array_equal(a[...], expected, strict=True)
    np.testing.assert_array_equal(a[1:-1:2, ::3], expected[1:-1:2, ::3], strict=True)
    header = FrameHeader.from_bytes(path.read_bytes(), buffer_len=path.stat().st_size)
    meta = B2NDMeta.from_bytes(dict(header.metalayers)["b2nd"], header.typesize)
    assert meta == B2NDMeta(a.shape, a.chunks, a.blocks, a.dtype)
