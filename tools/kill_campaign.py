"""Long kill campaign (the suite runs a smoke version, tests/trust/test_kill.py and
tests/remote/test_dask.py).

    python tools/kill_campaign.py --kills 2000 [--kind all] [--create-every 5] [--check-c]
    python tools/kill_campaign.py --kills 200 --kind contiguous --ops meta,bigmeta --check-c
    python tools/kill_campaign.py --kills 200 --kind from_dask --check-c

Each round makes a frame, runs a child on it, SIGKILLs it at a random moment and checks that
the frame opens with the content after the last returned operation or after the one in
flight (and that python-blosc2 opens it alike, with --check-c):

* ``contiguous``, ``sparse``, ``b2nd``: the mutator child (tests/trust/mutator.py: appends,
  inserts, updates, deletes, vlmeta, a small and a large metalayer, reorders; NDArray
  resizes and slab writes). With ``--create-every K`` every K-th round the child creates
  the frame itself (fingerprinted), so kills land in the creation too: then the frame may
  also be absent. ``--ops`` restricts the operations (``meta,bigmeta``: metalayers only).
* ``from_dask``: the dasker child (tests/trust/dasker.py) stores dask arrays over an
  existing sparse array again and again.

Prints the counts; any other outcome is a failure and is printed with its seed and delay.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.trust import dasker, test_kill

KINDS = [*sorted(test_kill.NAMES), "from_dask"]


def dask_kill(path: str, log: Path, seed: int, delay: float, cblosc2: object) -> int:
    """Run the dasker child over a fresh array, SIGKILL it after ``delay`` s; returns which
    call's content the array holds (checked in both libraries)."""
    import pyblosc2 as pb

    dasker.create(path)
    log.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
    child = subprocess.Popen(
        [sys.executable, dasker.__file__, path, str(seed), "50", str(log)],
        env=env,
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    done = len(log.read_text().split()) if log.exists() else 0
    reached = dasker.matches(path, done, pb)
    if reached is None:
        raise AssertionError(f"content matches neither call {done - 1} nor {done}")
    if cblosc2 is not None and dasker.matches(path, done, cblosc2) != reached:
        raise AssertionError("python-blosc2 reads another array")
    return reached - done + 1  # 0: the last returned call's content, 1: the one in flight


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--nops", type=int, default=300)
    ap.add_argument("--max-delay", type=float, default=0.4)
    ap.add_argument("--check-c", action="store_true", help="also open each frame in python-blosc2")
    ap.add_argument("--kind", choices=[*KINDS, "all"], default="all")
    ap.add_argument(
        "--create-every", type=int, default=0, help="every K-th round the child creates the frame"
    )
    ap.add_argument("--ops", default="", help="the mutator's operations, e.g. meta,bigmeta")
    args = ap.parse_args()
    if args.ops:  # read by the mutator, here and in the child
        os.environ["MUTATOR_KINDS"] = test_kill.ENV["MUTATOR_KINDS"] = args.ops
    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    failures = []
    cblosc2 = None
    if args.check_c:
        import blosc2 as cblosc2
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        kinds = sorted(test_kill.NAMES) if args.kind == "all" else [args.kind]
        log = Path(tmp) / "log"
        for i in range(args.kills):
            kind = kinds[i % len(kinds)]
            create = bool(args.create_every) and (i // len(kinds)) % args.create_every == 0
            name = "d.b2nd" if kind == "from_dask" else test_kill.NAMES[kind]
            path = str(Path(tmp) / name)
            seed, delay = rng.randrange(1 << 30), rng.uniform(0, args.max_delay)
            try:
                if kind == "from_dask":
                    outcomes[kind] += 1
                    late = dask_kill(path, log, seed, delay, cblosc2)
                    outcomes["in-flight call committed" if late else "last returned call"] += 1
                    continue
                done, reached = test_kill.random_kill(path, log, seed, args.nops, delay, create)
                if reached >= 0 and cblosc2 is not None:
                    test_kill._check(path, seed, done, cblosc2)
                outcomes[kind + (" (created by the child)" if create else "")] += 1
                if reached < 0:
                    outcomes["killed while creating: no frame"] += 1
                elif reached > done:
                    outcomes["in-flight op committed"] += 1
                else:
                    outcomes["last returned op"] += 1
                outcomes["ops returned"] += done
            except Exception as exc:
                failures.append((seed, delay, f"{kind}: {exc!r}"))
                outcomes["FAILED"] += 1
            if (i + 1) % 100 == 0:
                print(f"{i + 1} kills, {dict(outcomes)}, {time.time() - t0:.0f} s", flush=True)
    print(f"kills: {args.kills}; outcomes: {dict(outcomes)}; {time.time() - t0:.0f} s")
    for seed, delay, err in failures[:20]:
        print(f"FAILED seed={seed} delay={delay:.3f} {err}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
