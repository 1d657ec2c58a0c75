"""Sparse frames (frame-format.md §6): a directory holding ``chunks.b2frame`` (a frame whose
data area is empty, ``frame_type`` 1) and one ``%08X.chunk`` object per stored chunk, whose
index entries are chunk ids instead of offsets.

A mutation writes its new chunk objects first, then replaces ``chunks.b2frame`` atomically
(the commit point), and removes objects no longer referenced last: a failure at any point
leaves the previous frame readable.
"""

from __future__ import annotations

import numpy as np

from ..backends.base import ObjectStore
from ..chunk.header import OFF_CBYTES, ChunkHeader
from ..errors import FormatError

__all__ = [
    "MAX_CHUNK_ID",
    "SPARSE_INDEX",
    "chunk_name",
    "commit_sparse",
    "live_cbytes",
    "next_chunk_id",
    "read_chunk_object",
]

SPARSE_INDEX = "chunks.b2frame"
MAX_CHUNK_ID = 0xFFFFFFFF


def chunk_name(chunk_id: int) -> str:
    """The object name of chunk ``chunk_id`` (8 upper-case hex digits, §6.1).

    >>> chunk_name(26)
    '0000001A.chunk'
    """
    return f"{chunk_id:08X}.chunk"


def read_chunk_object(directory: ObjectStore, chunk_id: int, n: int, limit: int) -> bytes:
    """The stored bytes of logical chunk ``n`` (object ``chunk_id``), validated: the object is
    exactly one chunk (C writes nothing else into it) of at most ``limit`` bytes (the frame
    header's ``cbytes``, the size of every chunk object together), read no further."""
    if chunk_id > MAX_CHUNK_ID:
        raise FormatError(
            "index chunk", f"offset[{n}]", None, f"a chunk id <= {MAX_CHUNK_ID}", chunk_id
        )
    name = chunk_name(chunk_id)
    try:
        data = directory.read_object(name, limit)
    except FileNotFoundError:
        raise FormatError(
            "sparse frame", f"chunk {n}", None, f"the object {name}", "missing"
        ) from None
    ch = ChunkHeader.from_bytes(data)
    if ch.cbytes != len(data):
        raise FormatError(
            f"chunk object {name}", "cbytes", OFF_CBYTES, f"the object size {len(data)}", ch.cbytes
        )
    return data


def next_chunk_id(offsets: np.ndarray) -> int:
    """The first id after every id in use (new chunks never reuse a live object)."""
    live = offsets[offsets >= 0]
    return int(live.max()) + 1 if live.size else 0


def live_cbytes(directory: ObjectStore, offsets: np.ndarray, new_objects: dict[int, bytes]) -> int:
    """The header ``cbytes`` of a sparse frame: the sizes of every object the index uses."""
    live = set(offsets[offsets >= 0].tolist())
    return sum(
        len(new_objects[cid]) if cid in new_objects else directory.object_size(chunk_name(cid))
        for cid in live
    )


def commit_sparse(
    directory: ObjectStore,
    index_frame: bytes,
    new_objects: dict[int, bytes],
    old_offsets: np.ndarray,
    new_offsets: np.ndarray,
) -> None:
    """Write the new chunk objects, replace ``chunks.b2frame`` by ``index_frame`` (the commit
    point), then remove the objects only the old index referenced."""
    for cid, data in new_objects.items():
        directory.write_object(chunk_name(cid), data)
    directory.write_object(SPARSE_INDEX, index_frame)
    stale = set(old_offsets[old_offsets >= 0].tolist()) - set(
        new_offsets[new_offsets >= 0].tolist()
    )
    for cid in sorted(stale):
        directory.remove_object(chunk_name(int(cid)))
