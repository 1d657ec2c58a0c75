"""Long kill campaign for stores (the suite runs a smoke version, tests/trust/test_store_kill.py).

    python tools/store_kill_campaign.py --kills 300 [--form all] [--seed 0] [--every 5]

Each round creates a TreeStore (.b2z archive or .b2d directory), runs the store mutator
child (tests/trust/store_mutator.py) on it, SIGKILLs it at a random moment, reopens the store
in pyblosc2 and python-blosc2 and checks it holds the content after the last returned
operation or after the one in flight. ``--every N`` also kills the first N operations of a
seed at every one of their commit calls. Prints the counts; any other outcome is a failure,
printed with its seed and delay.
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

from tests.trust import test_store_kill


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-delay", type=float, default=3.0)
    ap.add_argument("--every", type=int, default=0, help="operations killed at every call")
    ap.add_argument("--form", choices=["b2z", "b2d", "all"], default="all")
    args = ap.parse_args()
    import blosc2 as cblosc2

    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    failures = []
    forms = ["b2z", "b2d"] if args.form == "all" else [args.form]
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.kills):
            form = forms[i % len(forms)]
            path = str(Path(tmp) / f"s{i}.{form}")
            seed, delay = rng.randrange(1 << 30), rng.uniform(0.1, args.max_delay)
            try:
                test_store_kill.create(path)
                log = Path(tmp) / f"log{i}"
                done, reached = test_store_kill.random_kill(path, log, seed, delay)
                test_store_kill.check(path, seed, done, cblosc2)
                outcomes[form] += 1
                outcomes["in-flight op committed" if reached > done else "last returned op"] += 1
                outcomes["ops returned"] += done
            except AssertionError as exc:
                failures.append((form, seed, delay, str(exc)))
        for form in forms:
            for op in range(args.every):
                nth = 1
                while True:
                    try:
                        killed, reached = test_store_kill._kill_at(Path(tmp), form, 5, op, nth)
                    except AssertionError as exc:
                        failures.append((form, op, nth, str(exc)))
                        break
                    if not killed:
                        break
                    outcomes[f"{form} commit-call kills"] += 1
                    nth += 1
    print(f"{args.kills} random kills, {time.time() - t0:.0f} s")
    for key, n in sorted(outcomes.items()):
        print(f"  {key}: {n}")
    print(f"failures: {len(failures)}")
    for failure in failures:
        print("  ", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
