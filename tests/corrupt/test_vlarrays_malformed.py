"""Malformed container frames (vlarrays/): bad tags, bad stored values and damaged VL-block
chunks give pyblosc2's errors (ValueError family) naming what is wrong, never a crash or a
wrong value."""

from __future__ import annotations

import struct

import pytest

import pyblosc2 as pb
from pyblosc2.blosc2_ext import vlcompress
from pyblosc2.msgpack_utils import msgpack_packb


def _frame(meta: dict, chunks: list[bytes] = (), vlmeta: dict | None = None) -> bytes:
    s = pb.SChunk(chunksize=-1, meta=meta, cparams={"typesize": 1})
    for c in chunks:
        s.append_chunk(c)
    for k, v in (vlmeta or {}).items():
        s.vlmeta[k] = v
    return s.to_cframe()


def _batch_meta(**kw) -> dict:
    return {"batcharray": {"version": 1, "serializer": "msgpack", "items_per_block": 2,
                           "arrow_schema": None, **kw}}  # fmt: skip


@pytest.mark.parametrize(
    ("meta", "error", "match"),
    [
        (_batch_meta(items_per_block=-1), pb.ParamError, "items_per_block"),
        (_batch_meta(items_per_block="2"), pb.ParamError, "items_per_block"),
        (_batch_meta(serializer="pickle"), pb.ParamError, "serializer"),
        ({"batcharray": [1, 2]}, pb.ParamError, "map"),
        (
            {"listarray": {"version": 1, "kind": "list", "item": {"kind": "bogus"}}},
            pb.ParamError,
            "bogus",
        ),
        (
            {"listarray": {"version": 1, "kind": "list", "item": {"kind": "utf8"}}},
            NotImplementedError,
            "utf8",
        ),
        (
            {
                "listarray": {
                    "version": 1,
                    "kind": "list",
                    "item": {"kind": "int8"},
                    "backend": "vl",
                }
            },
            pb.ParamError,
            "vlarray",
        ),
    ],
    ids=[
        "negative-ipb",
        "str-ipb",
        "serializer",
        "not-a-map",
        "unknown-item",
        "ctable-item",
        "missing-backend-tag",
    ],
)
def test_bad_tags(meta: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        pb.from_cframe(_frame(meta))


def test_damaged_vl_chunk_is_a_format_error() -> None:
    chunk = bytearray(vlcompress([msgpack_packb([1, 2]), msgpack_packb([3])], typesize=1))
    struct.pack_into("<i", chunk, 36, 10**6)  # second block start beyond the chunk
    with pytest.raises(pb.FormatError, match="bstarts"):
        pb.blosc2_ext.vldecompress(bytes(chunk))
    ba = pb.BatchArray()
    with pytest.raises(pb.FormatError):  # a mutation checks the chunk before storing it
        ba.schunk.append_chunk(bytes(chunk))
    assert len(ba) == 0


def test_a_block_that_is_not_a_list() -> None:
    chunk = vlcompress([msgpack_packb({"not": "a list"})], typesize=1)
    ba = pb.from_cframe(_frame(_batch_meta(), [chunk]))
    with pytest.raises(pb.ParamError, match="list of items"):
        ba[0][:]


def test_stale_batch_lengths_are_recomputed() -> None:
    chunk = vlcompress([msgpack_packb([1, 2]), msgpack_packb([3])], typesize=1)
    stale = {"_batch_array_metadata": {"batch_lengths": [7, 7]}}
    ba = pb.from_cframe(_frame(_batch_meta(), [chunk], stale))
    assert len(ba[0]) == 3 and ba.items[:] == [1, 2, 3]


def test_undecodable_object_entry() -> None:
    s = pb.SChunk(chunksize=-1, meta={"vlarray": {"version": 1, "serializer": "msgpack"}},
                  cparams={"typesize": 1})  # fmt: skip
    s.append_chunk(pb.compress2(b"\xc1\xc1", typesize=1))
    oa = pb.from_cframe(s.to_cframe())
    with pytest.raises(pb.FormatError, match="msgpack"):
        oa[0]


def test_regular_chunks_do_not_join_vl_chunks() -> None:
    ba = pb.BatchArray()
    ba.append([1])
    with pytest.raises(pb.ParamError, match="mix"):
        ba.schunk.append_chunk(pb.compress2(b"abc", typesize=1))
    assert [b[:] for b in ba] == [[1]]
