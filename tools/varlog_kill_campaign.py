"""Long kill campaign for tables with text, list and object columns (the suite runs a smoke
version, tests/trust/test_ctable_varlog_kill.py).

    python tools/varlog_kill_campaign.py --kills 200 [--seed 0] [--max-delay 2.0]

Each round kills a child changing a ``.b2d`` table (append, extend, delete, set values, a
flush every 40 operations) at a random moment, or one closing a table whose change log does
not cover its layout; then checks the table in pyblosc2 (the rows after the last returned
operation or the one in flight), repairs it with a writable open and close, and checks it in
pyblosc2 and python-blosc2. Prints the counts; any other outcome is a failure, printed with
its delay.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.trust import test_ctable_varlog_kill as vk


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-delay", type=float, default=2.0)
    ap.add_argument("--max-close-delay", type=float, default=0.3)
    args = ap.parse_args()
    import blosc2 as cblosc2

    rng = random.Random(args.seed)
    outcomes: Counter[str] = Counter()
    failures = []
    t0 = time.time()
    for i in range(args.kills):
        kind = "close" if i % 3 == 2 else "run"
        delay = rng.uniform(0.0, args.max_delay if kind == "run" else args.max_close_delay)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                if kind == "run":
                    outcomes["ops returned"] += vk.kill_run(Path(tmp), delay, cblosc2)
                else:
                    outcomes[f"close killed after {vk.kill_close(Path(tmp), delay, cblosc2)}"] += 1
                outcomes[kind] += 1
            except Exception:  # every failure is reported, the campaign goes on
                failures.append((kind, delay, traceback.format_exc(limit=3)))
    print(f"{args.kills} kills in {time.time() - t0:.0f} s: {dict(outcomes)}")
    for kind, delay, text in failures:
        print(f"FAILED {kind} delay={delay:.3f}\n{text}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
