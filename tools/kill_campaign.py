"""Long kill campaign (the suite runs a smoke version, tests/trust/test_kill.py).

    python tools/kill_campaign.py --kills 2000 [--kind all] [--seed 0] [--nops 300]

Each round creates a frame, runs the mutator child (tests/trust/mutator.py) on it, SIGKILLs it
at a random moment, reopens the frame and checks it holds the content after the last returned
operation or after the one in flight (and that python-blosc2 opens it, with --check-c).
Prints the counts; any other outcome is a failure and is printed with its seed and delay.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.trust import test_kill


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--nops", type=int, default=300)
    ap.add_argument("--max-delay", type=float, default=0.4)
    ap.add_argument("--check-c", action="store_true", help="also open each frame in python-blosc2")
    ap.add_argument(
        "--kind",
        choices=[*sorted(test_kill.NAMES), "all"],
        default="all",
        help="contiguous frame, sparse frame, b2nd array, or all three in turn",
    )
    args = ap.parse_args()
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
            path = str(Path(tmp) / test_kill.NAMES[kind])
            seed, delay = rng.randrange(1 << 30), rng.uniform(0, args.max_delay)
            try:
                done, reached = test_kill.random_kill(path, log, seed, args.nops, delay)
                if cblosc2 is not None:
                    test_kill._check(path, seed, done, cblosc2)
                outcomes[kind] += 1
                outcomes["in-flight op committed" if reached > done else "last returned op"] += 1
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
