"""Long shared-frame campaign (the suite runs a 2 + 2 smoke version,
tests/trust/test_shared_edits.py).

    python tools/locking_campaign.py [--runs 3] [--pyblosc2 8] [--blosc2 8] [--nops 30]

Each run creates a frame, starts the given numbers of pyblosc2 and python-blosc2 worker
processes on it at once (tests/trust/sharer.py: an SChunk of tagged chunks, a 2-d rows array
and a 1-d vector, each contiguous and sparse, every worker editing it with ``locking=True``
and logging every call that returned), then opens the final frame in both libraries and
checks it against every logged call. Prints one line per run and the totals; any lost call
or other problem makes the exit status 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.trust import sharer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pyblosc2", type=int, default=8, help="pyblosc2 worker processes")
    ap.add_argument("--blosc2", type=int, default=8, help="python-blosc2 worker processes")
    ap.add_argument("--nops", type=int, default=30, help="calls per worker")
    ap.add_argument("--kind", choices=[*sharer.KINDS, "all"], default="all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--keep", metavar="DIR", help="copy the frame and logs of a run with problems to DIR"
    )
    ap.add_argument(
        "--bare-blosc2",
        action="store_true",
        help=(
            "python-blosc2 workers edit by position, write slices and set vlmeta without "
            "holding_lock()"
        ),
    )
    args = ap.parse_args()
    import blosc2 as cb

    import pyblosc2 as pb

    libs = ["pyblosc2"] * args.pyblosc2 + ["blosc2"] * args.blosc2
    if len(libs) > 16:
        ap.error("at most 16 workers (one vlmeta entry and one fixed row each)")
    env = {**os.environ, "PYTHONPATH": str(Path(pb.__file__).parents[1])}
    if args.bare_blosc2:
        env["SHARER_BARE_BLOSC2"] = "1"
    kinds = sharer.KINDS if args.kind == "all" else (args.kind,)
    totals = {"runs": 0, "calls": 0, "lost": 0, "problems": 0}
    t0 = time.time()
    for run in range(args.runs):
        for kind in kinds:
            for contiguous in (True, False):
                layout = "contiguous" if contiguous else "sparse"
                with tempfile.TemporaryDirectory() as tmp:
                    name = (
                        "f.b2nd" if kind != "schunk" else ("f.b2frame" if contiguous else "f.dir")
                    )
                    path = os.path.join(tmp, name)
                    sharer.create(pb, kind, path, contiguous)
                    t = time.time()
                    try:
                        logs = sharer.run(
                            kind, path, libs, args.nops, args.seed + run, tmp, env, timeout=900
                        )
                        result = sharer.check(kind, path, logs, pb, cb)
                    except Exception as exc:  # a worker failed, or a library cannot open it
                        result = {"calls": 0, "lost": 0, "verify": "-", "problems": [repr(exc)]}
                    if args.keep and (result["lost"] or result["problems"]):
                        dest = os.path.join(args.keep, f"run{run}-{kind}-{layout}")
                        shutil.copytree(tmp, dest, dirs_exist_ok=True)
                        print(f"kept in {dest}", flush=True)
                totals["runs"] += 1
                totals["calls"] += result["calls"]
                totals["lost"] += result["lost"]
                totals["problems"] += len(result["problems"])
                print(
                    f"run {run} {kind:6} {layout:10} calls {result['calls']:4} lost "
                    f"{result['lost']} verify {result['verify']:5} {time.time() - t:5.1f} s "
                    f"{'; '.join(result['problems'][:4])}",
                    flush=True,
                )
    print(
        f"{libs.count('pyblosc2')} pyblosc2 + {libs.count('blosc2')} python-blosc2 workers; "
        f"{totals}; {time.time() - t0:.0f} s"
    )
    return 1 if totals["lost"] or totals["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
