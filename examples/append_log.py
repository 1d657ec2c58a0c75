"""Append a log of chunks: event records appended to one ``.b2frame`` file, run after run.

Each run opens the log (creating it the first time, with a metalayer recording the record
layout and an integrity fingerprint), appends ``--batches`` chunks of records — each append
writes the new chunk, the offsets index's last block and the trailer, whatever the log's
length — and then reads the last records and verifies every chunk's digest.

Run: python examples/append_log.py [PATH] [--batches N]   (default: a new temporary directory)
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import pyblosc2 as blosc2

RECORD = np.dtype([("t", "<f8"), ("sensor", "<u2"), ("value", "<f4")])
PER_CHUNK = 4096
#: the record layout, kept in a metalayer (fixed size, set when the log is created)
LAYOUT = [list(field) for field in RECORD.descr]


def open_log(path: str) -> blosc2.SChunk:
    if os.path.exists(path):
        s = blosc2.open(path, mode="a")
        assert isinstance(s, blosc2.SChunk) and s.meta["record"] == LAYOUT
        return s
    return blosc2.SChunk(
        chunksize=PER_CHUNK * RECORD.itemsize, urlpath=path, mode="w", fingerprint=True,
        meta={"record": LAYOUT},
        cparams={"typesize": RECORD.itemsize, "codec": blosc2.Codec.ZSTD, "clevel": 5,
                 "filters": [blosc2.Filter.SHUFFLE]},
    )  # fmt: skip


def batch(first: int) -> np.ndarray:
    rec = np.empty(PER_CHUNK, RECORD)
    rec["t"] = (first + np.arange(PER_CHUNK)) * 0.5  # a record every half second
    rec["sensor"] = np.arange(PER_CHUNK) % 16
    rec["value"] = np.sin(rec["t"] / 100)
    return rec


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="the .b2frame log (default: in a temp dir)")
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args(argv)
    path = args.path or os.path.join(tempfile.mkdtemp(prefix="pyblosc2-log-"), "events.b2frame")
    log = open_log(path)
    for _ in range(args.batches):
        log.append_data(batch(log.nchunks * PER_CHUNK))
    log.vlmeta["appended_by"] = {"pid": os.getpid(), "chunks": log.nchunks}

    r = blosc2.open(path)  # reads header, index and trailer
    assert isinstance(r, blosc2.SChunk)
    n = r.nchunks * PER_CHUNK
    last = np.frombuffer(r[n - 3 : n], RECORD)  # decodes one block of the last chunk
    assert np.array_equal(last, batch((r.nchunks - 1) * PER_CHUNK)[-3:])
    damaged = r.verify()  # rehashes every chunk against the fingerprint
    print(f"{path}: {r.nchunks} chunks, {n:,} records, {os.path.getsize(path):,} bytes")
    t, sensor, value = last[-1]
    print(f"last record: t={t} sensor={sensor} value={value:.4f}")
    print(f"verify(): {len(damaged)} damaged chunks")


if __name__ == "__main__":
    main()
