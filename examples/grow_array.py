"""Persist and grow an array: an hourly table of sensor readings kept in one ``.b2nd`` file,
grown by each run.

Each run opens the file (creating it the first time, with a metalayer naming its columns),
grows it by ``--days`` days of 24 hourly rows, writes them (only the touched chunks are
recompressed), records the run in vlmeta, and reads back one sensor's last day lazily.

Run: python examples/grow_array.py [PATH] [--days N]   (default: a new temporary directory)
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import pyblosc2 as blosc2

SENSORS = 100


def day_rows(day: int) -> np.ndarray:
    """24 hourly rows of ``SENSORS`` readings for ``day`` (a smooth daily cycle)."""
    hours = day * 24 + np.arange(24)[:, None]
    return (15 + 8 * np.sin(2 * np.pi * hours / 24) + np.arange(SENSORS) / 10).astype("f4")


def grow(path: str, days: int) -> blosc2.NDArray:
    if os.path.exists(path):
        a = blosc2.open(path, mode="a")
    else:
        meta = {"columns": {"sensors": SENSORS, "step": "1h"}}
        a = blosc2.zeros(
            (0, SENSORS), dtype="f4", chunks=(24 * 30, SENSORS), urlpath=path, mode="w", meta=meta
        )
    assert isinstance(a, blosc2.NDArray)
    start = a.shape[0] // 24
    a.resize((a.shape[0] + 24 * days, SENSORS))  # one commit: the new rows are zeros
    for day in range(start, start + days):
        a[day * 24 : (day + 1) * 24] = day_rows(day)  # recompresses the chunks it touches
    a.vlmeta["runs"] = a.vlmeta.get("runs", 0) + 1
    return a


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="the .b2nd file (default: in a temp dir)")
    parser.add_argument("--days", type=int, default=7)
    args = parser.parse_args(argv)
    path = args.path or os.path.join(tempfile.mkdtemp(prefix="pyblosc2-grow-"), "hourly.b2nd")
    a = grow(path, args.days)
    b = blosc2.open(path)  # a fresh handle: nothing decoded yet
    last_day = b[-24:, 42]  # one column of the last 24 rows: only their blocks are read
    days = b.shape[0] // 24
    assert np.array_equal(last_day, day_rows(days - 1)[:, 42])
    print(f"{path}: {b.shape} float32 ({days} days, runs: {a.vlmeta['runs']}), "
          f"{b.schunk.cbytes:,} bytes compressed, ratio {b.schunk.cratio:.1f}x")  # fmt: skip
    print(f"sensor 42, last day: {last_day.min():.2f}..{last_day.max():.2f} "
          f"(read {b.schunk.bytes_read:,} of {os.path.getsize(path):,} file bytes)")  # fmt: skip


if __name__ == "__main__":
    main()
