"""Child process of the shared-frame stress tests: many processes of pyblosc2 and
python-blosc2 editing one frame with ``locking=True``, each call that returned logged (one
fsynced line each) so that the parent can check the final frame against every one of them.

    python sharer.py LIB KIND PATH WID NOPS SEED LOG

LIB is ``pyblosc2`` or ``blosc2``; WID the worker's id (0..15, unique across libraries);
KIND one of:

* ``schunk``: chunks of ``ITEMS`` int64 all equal to a tag. Bare (unbracketed) appends,
  inserts, updates, whole-chunk slice writes and deletes at positions below ``BASE`` (a
  worker deletes at most as many chunks as it added, so the frame never has fewer than
  ``BASE`` chunks and every position below it exists), a reorder inside ``holding_lock``,
  and the worker's own vlmeta entry. Log: ``A tag``, ``I tag``, ``U tag``, ``D``, ``R``,
  ``V i``.
* ``rows``: a (rows, ``NCOLS``) int64 array of 4-row chunks. Row ``fixed_row(WID)`` (of the
  first ``ROWS0``; with 8 + 8 workers every chunk holds two rows of each library's workers)
  belongs to the worker, which writes it; it grows the array inside ``holding_lock``
  (python-blosc2's pattern: read the shape, resize, write the new rows), writes rows it grew,
  shrinks the array by rows of its own at the end inside ``holding_lock``, and sets its
  vlmeta entry. Log: ``W row tag``, ``G first count tag``, ``S first count``, ``V i``.
* Slice writes are bare in pyblosc2 and inside ``holding_lock`` in python-blosc2
  (:func:`write`).
* ``vector``: a 1-d int64 array of 25-item chunks, ``VEC0`` zeros to start. pyblosc2 appends
  bare (its ``append`` is one commit), python-blosc2 inside ``holding_lock`` (its
  ``append`` is not atomic on its own); a worker rewrites ranges it appended. Log:
  ``A first count tag``, ``W first count tag``, ``V i``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

ITEMS = 256  # int64 items per SChunk chunk
BASE = 8  # SChunk chunks made before the workers start (tags 1..BASE)
ROWS0, NCOLS = 16, 8  # the rows array at the start (zeros): one fixed row per worker
VEC0 = 37  # the vector at the start (zeros), not a whole number of chunks
KINDS = ("schunk", "rows", "vector")
#: python-blosc2 workers bracket their positional edits, slice writes and vlmeta writes in
#: holding_lock (a bare slice write of theirs can zero items another writer appended to the
#: old last chunk: tests/interop/test_shared_frames.py)
#: (SHARER_BARE_BLOSC2=1: they do not, to measure what python-blosc2 does then)
BRACKET = os.environ.get("SHARER_BARE_BLOSC2") != "1"
#: workers 0..14 keep a vlmeta entry each (a fingerprinted frame holds 15 of the user's: the
#: 16 C-Blosc2 can write include pyblosc2's digest list)
VLMETA_WORKERS = 15


def tag_of(wid: int, i: int) -> int:
    return (wid + 1) * 1_000_000 + i


def fixed_row(wid: int) -> int:
    """The worker's own row among the first ``ROWS0``: spread so that workers 0..7
    (pyblosc2 in the campaigns) and 8..15 (python-blosc2) share every 4-row chunk, and their
    bare read-modify-writes of one chunk race each other."""
    return (wid * 5) % ROWS0


def chunk_data(tag: int) -> np.ndarray:
    return np.full(ITEMS, tag, np.int64)


def create(mod: Any, kind: str, path: str, contiguous: bool) -> None:
    """The frame the workers share (``mod``: pyblosc2; fingerprinted when contiguous)."""
    if kind == "schunk":
        s = mod.SChunk(
            chunksize=ITEMS * 8,
            urlpath=path,
            contiguous=contiguous,
            mode="w",
            cparams={"typesize": 8, "nthreads": 1},
            **({"fingerprint": contiguous} if mod.__name__ == "pyblosc2" else {}),
            locking=True,
        )
        for t in range(1, BASE + 1):
            s.append_data(chunk_data(t))
    elif kind == "rows":
        mod.zeros(
            (ROWS0, NCOLS),
            np.int64,
            chunks=(4, NCOLS),
            blocks=(2, NCOLS),
            urlpath=path,
            contiguous=contiguous,
            mode="w",
            locking=True,
        )
    else:
        mod.zeros(
            (VEC0,),
            np.int64,
            chunks=(25,),
            blocks=(25,),
            urlpath=path,
            contiguous=contiguous,
            mode="w",
            locking=True,
        )


class Log:
    """One line per returned call, fsynced before the next call starts."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, *fields: object) -> None:
        # the return time closes each line (for reading a campaign's kept logs; checks ignore it)
        line = " ".join(map(str, (*fields, f"@{time.time_ns()}")))
        os.write(self.fd, (line + "\n").encode())
        os.fsync(self.fd)


def run_schunk(lib: str, s: Any, wid: int, nops: int, rng: np.random.Generator, log: Log) -> None:
    added = deleted = 0
    for i in range(nops):
        op = rng.choice(["A", "A", "I", "U", "U", "S", "D", "D", "R", "V"])
        tag = tag_of(wid, i)
        pos = int(rng.integers(BASE))
        if lib == "blosc2" and op in "IUSD" and BRACKET:
            # python-blosc2 decides these from its handle's cached chunk count, read before
            # the lock (tests/interop/test_shared_frames.py): its callers bracket them
            with s.holding_lock():
                added, deleted = _schunk_edit(s, op, pos, tag, rng, added, deleted, log)
            continue
        if op in "IUSD":
            added, deleted = _schunk_edit(s, op, pos, tag, rng, added, deleted, log)
        elif op == "A":
            s.append_data(chunk_data(tag))
            added += 1
            log("A", tag)
        elif op == "R":
            with s.holding_lock():
                s.reorder_offsets(rng.permutation(s.nchunks).tolist())
            log("R")
        else:
            set_vlmeta(lib, s, wid, i, log)


def write(lib: str, a: Any, key: Any, value: np.ndarray) -> None:
    """``a[key] = value``: bare in pyblosc2; in python-blosc2 inside ``holding_lock`` (its
    bare slice write decides from a shape read before its exclusive lock,
    tests/interop/test_shared_frames.py)."""
    if lib == "blosc2" and BRACKET:
        with a.holding_lock():
            a[key] = value
    else:
        a[key] = value


def set_vlmeta(lib: str, s: Any, wid: int, i: int, log: Log) -> None:
    """The worker's vlmeta entry: bare in pyblosc2; in python-blosc2 inside ``holding_lock``
    (its bare vlmeta writes racing appends fail or tear the frame,
    tests/interop/test_shared_frames.py)."""
    if wid >= VLMETA_WORKERS:
        return
    if lib == "blosc2" and BRACKET:
        with s.holding_lock():
            s.vlmeta[f"w{wid}"] = i
    else:
        s.vlmeta[f"w{wid}"] = i
    log("V", i)


def _schunk_edit(
    s: Any, op: str, pos: int, tag: int, rng: Any, added: int, deleted: int, log: Log
) -> tuple[int, int]:
    """One positional edit (insert, update, slice write, delete); returns the counts."""
    if op == "I":
        s.insert_data(int(rng.integers(BASE + 1)), chunk_data(tag), True)
        log("I", tag)
        return added + 1, deleted
    if op == "U":
        s.update_data(pos, chunk_data(tag), True)
        log("U", tag)
    elif op == "S":  # a slice write of one whole chunk
        s[pos * ITEMS : (pos + 1) * ITEMS] = chunk_data(tag)
        log("U", tag)
    elif deleted < added:  # D: never more than this worker added
        s.delete_chunk(pos)
        log("D")
        return added, deleted + 1
    return added, deleted


def run_rows(lib: str, a: Any, wid: int, nops: int, rng: np.random.Generator, log: Log) -> None:
    mine: dict[int, int] = {}  # rows this worker grew (still there) -> their tag
    for i in range(nops):
        op = rng.choice(["W", "W", "G", "G", "O", "O", "S", "V"])
        tag = tag_of(wid, i)
        if op == "W" or (op == "O" and not mine):
            write(lib, a, fixed_row(wid), np.full(NCOLS, tag, np.int64))
            log("W", fixed_row(wid), tag)
        elif op == "O":
            row = int(rng.choice(sorted(mine)))
            write(lib, a, row, np.full(NCOLS, tag, np.int64))
            mine[row] = tag
            log("W", row, tag)
        elif op == "G":
            k = int(rng.integers(1, 6))
            with a.holding_lock():
                n = a.shape[0]
                a.resize((n + k, NCOLS))
                a[n : n + k] = np.full((k, NCOLS), tag, np.int64)
            mine.update(dict.fromkeys(range(n, n + k), tag))
            log("G", n, k, tag)
        elif op == "S":
            with a.holding_lock():
                n = a.shape[0]
                k = 0
                while n - k - 1 in mine:
                    k += 1
                if k == 0:
                    continue
                k = int(rng.integers(1, k + 1))
                a.resize((n - k, NCOLS))
            for r in range(n - k, n):
                del mine[r]
            log("S", n - k, k)
        else:
            set_vlmeta(lib, a.schunk, wid, i, log)


def run_vector(lib: str, a: Any, wid: int, nops: int, rng: np.random.Generator, log: Log) -> None:
    mine: list[tuple[int, int]] = []  # ranges this worker appended: (first, count)
    for i in range(nops):
        op = rng.choice(["A", "A", "A", "W", "W", "V"])
        tag = tag_of(wid, i)
        if op == "A" or (op == "W" and not mine):
            k = int(rng.integers(1, 31))
            values = np.full(k, tag, np.int64)
            if lib == "pyblosc2":
                end = a.append(values)  # one commit under one lock
            else:
                with a.holding_lock():  # python-blosc2's append: refresh, resize, write
                    end = a.append(values)
            mine.append((end - k, k))
            log("A", end - k, k, tag)
        elif op == "W":
            first, k = mine[int(rng.integers(len(mine)))]
            write(lib, a, slice(first, first + k), np.full(k, tag, np.int64))
            log("W", first, k, tag)
        else:
            set_vlmeta(lib, a.schunk, wid, i, log)


# -- the parent's side: run the workers, check the final frame against their logs ------------
def run(
    kind: str,
    path: str,
    libs: list[str],
    nops: int,
    seed: int,
    logdir: str,
    env: dict[str, str],
    timeout: float | None = None,
) -> dict[int, list[list[str]]]:
    """Start one worker per entry of ``libs`` on the frame at ``path``, wait for all (each at
    most ``timeout`` seconds, default tests.bounded.CHILD_S; a worker still running then is
    killed, and so are the others whenever this returns or fails), and return each worker's
    log (its returned calls, split into fields)."""
    from contextlib import ExitStack

    from tests.bounded import CHILD_S, started, wait_child

    logs = {}
    with ExitStack() as stack:
        procs = []
        for wid, lib in enumerate(libs):
            log = os.path.join(logdir, f"{kind}-{wid}.log")
            logs[wid] = log
            args = [lib, kind, path, str(wid), str(nops), str(seed), log]
            what = f"worker {wid} ({lib}): {nops} {kind} calls"
            child = stack.enter_context(started([sys.executable, __file__, *args], what, env=env))
            procs.append((child, what))
        codes = [wait_child(p, what, timeout or CHILD_S) for p, what in procs]
    if any(codes):
        raise AssertionError(f"workers failed: exit codes {codes}")
    out = {}
    for wid, log in logs.items():
        with open(log) as f:
            out[wid] = [line.split() for line in f.read().splitlines()]
    return out


def check(kind: str, path: str, logs: dict[int, list[list[str]]], pb: Any, cb: Any) -> dict:
    """Check the frame at ``path`` against the workers' logs, opened by pyblosc2 (``pb``) and
    python-blosc2 (``cb``): returns figures, ``lost`` counting returned calls whose effect is
    missing (0 when all is well), ``problems`` naming anything else found."""
    ours, theirs = pb.open(path), cb.open(path)
    problems: list[str] = []
    calls = sum(len(v) for v in logs.values())
    schunk = ours if kind == "schunk" else ours.schunk
    for wid, lines in logs.items():  # each worker's vlmeta entry holds its last value
        last = [int(f[1]) for f in lines if f[0] == "V"]
        if last:
            cschunk = theirs if kind == "schunk" else theirs.schunk
            got = (schunk.vlmeta.get(f"w{wid}"), cschunk.vlmeta.get(f"w{wid}"))
            if got != (last[-1], last[-1]):
                problems.append(f"vlmeta w{wid}: {got}, expected {last[-1]}")
    lost = len(problems)
    if kind == "schunk":
        lost += _check_schunk(ours, theirs, logs, problems)
    else:
        lost += _check_array(kind, ours, theirs, logs, problems)
    verify = "n/a"
    if kind == "schunk" and ours.contiguous:
        try:
            verify = "clean" if ours.verify() == [] else "damaged"
        except pb.FormatError as exc:
            verify = "stale" if "stale" in str(exc) or "digests" in str(exc) else f"error {exc}"
    if verify not in ("clean", "stale", "n/a"):
        problems.append(f"verify(): {verify}")
    return {"calls": calls, "lost": lost, "verify": verify, "problems": problems}


def _check_schunk(ours: Any, theirs: Any, logs: dict, problems: list[str]) -> int:
    tags = []
    for n in range(ours.nchunks):
        c = np.frombuffer(ours.decompress_chunk(n), np.int64)
        if not (c == c[0]).all():
            problems.append(f"chunk {n} is torn")
        tags.append(int(c[0]))
    ctags = [
        int(np.frombuffer(theirs.decompress_chunk(n), np.int64)[0]) for n in range(theirs.nchunks)
    ]
    if ctags != tags:
        problems.append("python-blosc2 reads other chunks than pyblosc2")
    ops = [f for lines in logs.values() for f in lines]
    count = {k: sum(1 for f in ops if f[0] == k) for k in "AID"}
    expected = BASE + count["A"] + count["I"] - count["D"]
    legit = set(range(1, BASE + 1)) | {int(f[1]) for f in ops if f[0] in "AIU"}
    strange = [t for t in tags if t not in legit]
    if strange or len(set(tags)) != len(tags):
        problems.append(f"chunks that no returned call wrote, or twice: {strange[:5]}")
    if len(tags) != expected:
        problems.append(f"{len(tags)} chunks, the returned calls leave {expected}")
    return abs(len(tags) - expected) + len(strange)


def _expected_array(kind: str, logs: dict) -> tuple[np.ndarray, list[str]]:
    """The array the workers' returned calls leave (and what in the logs does not add up)."""
    issues: list[str] = []
    if kind == "rows":
        fixed: dict[int, int] = {}
        owned: dict[int, dict[int, int]] = {}
        nrows = ROWS0
        for wid, lines in logs.items():
            mine = owned.setdefault(wid, {})
            for f in lines:
                if f[0] == "W":
                    row, tag = int(f[1]), int(f[2])
                    (fixed if row < ROWS0 else mine)[row] = tag
                elif f[0] == "G":
                    first, k, tag = int(f[1]), int(f[2]), int(f[3])
                    mine.update(dict.fromkeys(range(first, first + k), tag))
                    nrows += k
                elif f[0] == "S":
                    first, k = int(f[1]), int(f[2])
                    for r in range(first, first + k):
                        mine.pop(r, None)
                    nrows -= k
        out = np.zeros((nrows, NCOLS), np.int64)
        seen: set[int] = set()
        for row, tag in fixed.items():
            out[row] = tag
        for mine in owned.values():
            if seen & set(mine):
                issues.append("two workers own one row")
            seen |= set(mine)
            for row, tag in mine.items():
                if row < nrows:
                    out[row] = tag
        if seen != set(range(ROWS0, nrows)):
            issues.append("the rows the workers grew do not tile the array")
        return out, issues
    ranges: dict[tuple[int, int], int] = {}
    for lines in logs.values():
        for f in lines:
            if f[0] in "AW":
                ranges[(int(f[1]), int(f[2]))] = int(f[3])
    n = VEC0 + sum(int(f[2]) for lines in logs.values() for f in lines if f[0] == "A")
    out = np.zeros(n, np.int64)
    cover = np.zeros(n, np.int64)
    for (first, k), tag in ranges.items():
        out[first : first + k] = tag
        cover[first : first + k] += 1
    if (cover[VEC0:] != 1).any():
        issues.append("the appended ranges do not tile the array")
    return out, issues


def _check_array(kind: str, ours: Any, theirs: Any, logs: dict, problems: list[str]) -> int:
    expected, issues = _expected_array(kind, logs)
    problems.extend(issues)
    got, cgot = ours[...], theirs[...]
    if not np.array_equal(got, cgot):
        problems.append("python-blosc2 reads another array than pyblosc2")
    if got.shape != expected.shape:
        problems.append(f"shape {got.shape}, the returned calls leave {expected.shape}")
        return abs(got.shape[0] - expected.shape[0]) + len(issues)
    bad = got != expected
    rows = bad.reshape(bad.shape[0], -1).any(axis=1) if bad.ndim else bad
    if rows.any():
        problems.append(f"{int(rows.sum())} rows/items differ from the returned calls'")
        for r in np.flatnonzero(rows)[:3]:  # who wrote what is there, whose call is missing
            have, want = (
                int(got.reshape(rows.size, -1)[r, 0]),
                int(expected.reshape(rows.size, -1)[r, 0]),
            )
            problems.append(
                f"{'row' if kind == 'rows' else 'item'} {r}: holds {have} (worker "
                f"{have // 1_000_000 - 1}), the calls leave {want} (worker {want // 1_000_000 - 1})"
            )
    # each differing row (rows) or run of items (vector) is a returned write that is missing
    runs = np.count_nonzero(np.diff(np.r_[0, rows.astype(np.int8)]) == 1)
    lost = int(rows.sum()) if kind == "rows" else int(runs)
    return lost + len(issues)


def main(argv: list[str]) -> None:
    lib, kind, path, wid, nops, seed, logpath = argv
    if lib == "pyblosc2":
        import pyblosc2 as mod
    else:
        import blosc2 as mod  # type: ignore[no-redef]
    handle = mod.open(path, mode="a", locking=True)
    rng = np.random.default_rng([int(seed), int(wid)])
    run = {"schunk": run_schunk, "rows": run_rows, "vector": run_vector}[kind]
    run(lib, handle, int(wid), int(nops), rng, Log(logpath))


if __name__ == "__main__":
    main(sys.argv[1:])
