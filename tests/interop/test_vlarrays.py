"""ObjectArray, BatchArray and ListArray against python-blosc2 4.14.1, both directions: files
written by each library read by the other (same values, metadata and vlmeta), the same
file bytes where the codec is BloscLZ (pyblosc2's exact port) and both run one thread, and
values embedding containers and references."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pyblosc2 as pb
from pyblosc2.frame.header import POS_FRAME_LEN, FrameHeader

VALUES = [
    b"bytes\x00payload",
    "plain text",
    42,
    -(2**63),
    3.5,
    True,
    None,
    [1, "two", b"three"],
    (1, 2, "three"),
    {"nested": [1, 2], "tuple": (3, 4)},
    {1, 2, 3},
    3 + 4j,
    (),
    [[], ()],
]
ARRAYS = [np.arange(6, dtype="<i4").reshape(2, 3), np.zeros(2, "i2,f8"), np.array(["a", "bc"])]
BATCHES = [
    [b"bytes\x00payload", "plain text", 42],
    [{"nested": [1, 2]}, None, {"tail": True}],
    [(1, 2, "three"), 3.5, True],
    list(range(100)),
]
LIBS = ["pyblosc2", "blosc2"]


@pytest.fixture
def libs(cblosc2):
    old = cblosc2.nthreads
    cblosc2.set_nthreads(1)
    yield {"pyblosc2": pb, "blosc2": cblosc2}
    cblosc2.set_nthreads(old)


def _same_values(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
@pytest.mark.parametrize(("writer", "reader"), [LIBS, LIBS[::-1]], ids=["ours", "theirs"])
def test_objectarray_files(libs, tmp_path, writer, reader, contiguous) -> None:
    w, r = libs[writer], libs[reader]
    path = str(tmp_path / "o.b2frame")
    oa = w.ObjectArray(urlpath=path, mode="w", contiguous=contiguous, meta={"m": [1]})
    oa.extend(VALUES + ARRAYS)
    oa.vlmeta["note"] = {"k": "v"}
    back = r.open(path, mode="r")
    assert type(back).__name__ == "ObjectArray"
    assert all(_same_values(a, b) for a, b in zip(list(back), VALUES + ARRAYS, strict=True))
    assert back.meta["vlarray"] == {"version": 1, "serializer": "msgpack"}
    assert back.meta["m"] == [1] and back.vlmeta["note"] == {"k": "v"}
    assert back.cparams.use_dict  # zstd dictionaries by default on both sides


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
@pytest.mark.parametrize(("writer", "reader"), [LIBS, LIBS[::-1]], ids=["ours", "theirs"])
def test_batcharray_files(libs, tmp_path, writer, reader, contiguous) -> None:
    w, r = libs[writer], libs[reader]
    path = str(tmp_path / "b.b2b")
    ba = w.BatchArray(urlpath=path, mode="w", contiguous=contiguous, items_per_block=2)
    ba.extend(BATCHES)
    ba.vlmeta["user"] = {"x": 1}
    back = r.open(path, mode="r")
    assert type(back).__name__ == "BatchArray"
    assert [b[:] for b in back] == BATCHES
    assert back[3][51] == 51 and list(back.iter_items())[-1] == 99
    assert back.items_per_block == 2
    assert back.vlmeta["_batch_array_metadata"] == {"batch_lengths": [3, 3, 3, 100]}
    assert back.vlmeta["user"] == {"x": 1}
    assert back.schunk.get_vlblock(3, 1) == r.msgpack_utils.msgpack_packb([2, 3])


@pytest.mark.parametrize("kind", ["object", "batch", "list"])
def test_same_file_bytes_with_blosclz(libs, tmp_path, kind: str) -> None:
    def write(lib, path):
        cp = {"codec": lib.Codec.BLOSCLZ, "nthreads": 1}
        if kind == "object":
            c = lib.ObjectArray(urlpath=path, mode="w", cparams=cp)
            c.extend(VALUES)
        elif kind == "batch":
            c = lib.BatchArray(urlpath=path, mode="w", cparams=cp)
            c.extend(BATCHES)
        else:
            c = lib.ListArray(item_spec=lib.string(max_length=8), nullable=True, batch_rows=2,
                              urlpath=path, mode="w", cparams=cp)  # fmt: skip
            c.extend([["a", "b"], [], None, ["c"], ["d", "e"]])
            c.flush()
        c.vlmeta["tag"] = "same"

    paths = [tmp_path / "ours.b2frame", tmp_path / "theirs.b2frame"]
    write(pb, str(paths[0]))
    write(libs["blosc2"], str(paths[1]))
    assert _same_but_index(paths[0], paths[1])


def _parts(path) -> tuple[bytes, bytes, list[int], bytes]:
    """A contiguous frame cut at its index chunk: header (frame_len zeroed), chunks, the
    decoded offsets, trailer."""
    raw = path.read_bytes()
    h = FrameHeader.from_bytes(raw)
    start = h.header_len + h.cbytes
    ilen = struct.unpack_from("<i", raw, start + 12)[0]
    head = bytearray(raw[: h.header_len])
    head[POS_FRAME_LEN : POS_FRAME_LEN + 8] = bytes(8)
    offsets = np.frombuffer(pb.decompress2(raw[start : start + ilen]), "<i8").tolist()
    return bytes(head), raw[h.header_len : start], offsets, raw[start + ilen :]


def _same_but_index(ours, theirs) -> bool:
    """Frames equal byte for byte except for how the offsets index is encoded: pyblosc2 stores
    an index under 2048 offsets as a memcpyed chunk (frame/writer.IndexEncoder, README
    "Appending"), C-Blosc2 compresses it; the offsets themselves must be the same."""
    a, b = _parts(ours), _parts(theirs)
    if ours.read_bytes() == theirs.read_bytes():
        return True
    return a == b


@pytest.mark.parametrize("storage", ["batch", "vl"])
@pytest.mark.parametrize(("writer", "reader"), [LIBS, LIBS[::-1]], ids=["ours", "theirs"])
def test_listarray_files(libs, tmp_path, writer, reader, storage) -> None:
    w, r = libs[writer], libs[reader]
    path = str(tmp_path / "l.b2b")
    spec = w.list(w.struct({"x": w.int32(ge=0), "s": w.string(max_length=4)}), nullable=True,
                  storage=storage, batch_rows=3)  # fmt: skip
    rows = [[{"x": 1, "s": "a"}], None, [], [{"x": 2, "s": "bc"}, {"x": 3, "s": ""}]] * 2
    la = w.ListArray(spec=spec, urlpath=path, mode="w")
    la.extend(rows)
    la.flush()
    back = r.open(path, mode="r")
    assert type(back).__name__ == "ListArray"
    assert back[:] == rows
    assert back.meta["listarray"] == spec.to_listarray_metadata()
    assert back.spec.display_label() == "list[struct]"


@pytest.mark.parametrize("kind", ["object", "batch", "list"])
@pytest.mark.parametrize(("writer", "reader"), [LIBS, LIBS[::-1]], ids=["ours", "theirs"])
def test_cframes(libs, writer, reader, kind: str) -> None:
    w, r = libs[writer], libs[reader]
    if kind == "object":
        c = w.ObjectArray()
        c.extend(VALUES)
        expect = VALUES
    elif kind == "batch":
        c = w.BatchArray()
        c.extend(BATCHES)
        expect = BATCHES
    else:
        c = w.ListArray(item_spec=w.int64(), nullable=True)
        expect = [[1, 2], None, []]
        c.extend(expect)
    back = r.from_cframe(c.to_cframe())
    got = list(back) if kind == "object" else [b[:] for b in back] if kind == "batch" else back[:]
    assert got == expect


@pytest.mark.parametrize(("writer", "reader"), [LIBS, LIBS[::-1]], ids=["ours", "theirs"])
def test_embedded_containers_and_refs(libs, tmp_path, writer, reader) -> None:
    w, r = libs[writer], libs[reader]
    arr_path = str(tmp_path / "a.b2nd")
    w.asarray(np.arange(5), urlpath=arr_path, mode="w")
    inner = w.BatchArray(items_per_block=2)
    inner.extend([[1, 2, 3]])
    nested = w.ObjectArray()
    nested.extend(["alpha", {"beta": 2}])
    schunk = w.SChunk(chunksize=16, data=np.arange(4, dtype=np.int32))
    oa = w.ObjectArray(urlpath=str(tmp_path / "o.b2frame"), mode="w")
    oa.append(
        {
            "nd": w.asarray(np.arange(6, dtype=np.int16)),
            "sc": schunk,
            "oa": nested,
            "ba": inner,
            "ref": w.Ref.urlpath_ref(arr_path),
        }
    )
    got = r.open(str(tmp_path / "o.b2frame"), mode="r", deserialize="full")[0]
    np.testing.assert_array_equal(got["nd"][:], np.arange(6, dtype=np.int16))
    assert got["sc"].decompress_chunk(0) == np.arange(4, dtype=np.int32).tobytes()
    assert list(got["oa"]) == ["alpha", {"beta": 2}]
    assert [b[:] for b in got["ba"]] == [[1, 2, 3]]
    np.testing.assert_array_equal(got["ref"].open()[:], np.arange(5))
    with pytest.raises(ValueError):  # UnsafeDeserializationError on both sides
        r.open(str(tmp_path / "o.b2frame"), mode="r")[0]


@settings(max_examples=20, deadline=None)
@given(
    batches=st.lists(
        st.lists(
            st.one_of(st.integers(-1000, 1000), st.text(max_size=30), st.binary(max_size=30)),
            min_size=1,
            max_size=20,
        ),
        min_size=1,
        max_size=6,
    ),
    ipb=st.integers(1, 8),
    clevel=st.integers(1, 9),
)
def test_property_batcharray_same_chunks(cblosc2, batches, ipb, clevel) -> None:
    kw = {"items_per_block": ipb, "cparams": {"codec": 0, "clevel": clevel, "nthreads": 1}}
    ours = pb.BatchArray(**kw)
    ours.extend(batches)
    theirs = cblosc2.BatchArray(**kw)
    theirs.extend(batches)
    assert [ours.schunk.get_chunk(i) for i in range(len(batches))] == [
        theirs.schunk.get_chunk(i) for i in range(len(batches))
    ]
    assert [b[:] for b in pb.from_cframe(theirs.to_cframe())] == batches


def test_int_map_keys_python_blosc2_writes_but_cannot_read(cblosc2) -> None:
    """python-blosc2 stores ``{1: "a"}`` but its reader refuses non-string map keys (msgpack's
    strict_map_key); pyblosc2 reads back what was stored, and writes the same bytes."""
    theirs = cblosc2.ObjectArray()
    theirs.append({1: "a"})
    with pytest.raises(ValueError, match="map key"):
        theirs[0]
    assert pb.from_cframe(theirs.to_cframe())[0] == {1: "a"}
    assert pb.msgpack_utils.msgpack_packb({1: "a"}) == cblosc2.msgpack_utils.msgpack_packb({1: "a"})
