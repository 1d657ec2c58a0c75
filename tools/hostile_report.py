"""The hostile files of tests/trust/hostile_files.py and hostile_stores.py against pyblosc2 and
python-blosc2, side by side: what each library answers (the error class, a result, a timeout, a
signal), in how much wall time after its imports, and how much its peak RSS grew.

    python tools/hostile_report.py [--timeout 10] [CASE ...]

The suite (tests/trust/test_hostile.py) asserts pyblosc2's answers; this script only reports,
with a longer timeout so that python-blosc2's slow answers are measured rather than cut."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.trust.hostile_files import CASES as FILE_CASES
from tests.trust.hostile_stores import STORE_CASES
from tests.trust.test_hostile import run_child

CASES = {**FILE_CASES, **STORE_CASES}


def answer(report: dict) -> str:
    if report.get("timeout"):
        return "hang (killed at the timeout)"
    if "signal" in report:
        return f"crash (signal {report['signal']})"
    if "exit" in report:
        return f"exit {report['exit']}: {report['stderr'].strip().splitlines()[-1:]}"
    if report["error"] is None:
        return f"read: {report['result'][:60]}"
    return f"{report['error'][0]}: {report['message'][:90]}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="*")
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    for name in args.cases or sorted(CASES):
        case = CASES[name]
        for lib in ("pyblosc2", "blosc2"):
            if lib == "blosc2" and case.action in ("info", "verify"):
                continue  # pyblosc2's own commands
            with tempfile.TemporaryDirectory() as d:
                path = case.build(Path(d))
                r = run_child(lib, case.action, path, args.timeout)
            wall = f"{r['wall_s']:.3f} s" if "wall_s" in r else "-"
            rss = f"{r['rss_growth_mib']:.1f} MiB" if "rss_growth_mib" in r else "-"
            print(f"{name:34} {lib:9} {wall:>9} {rss:>10}  {answer(r)}", flush=True)


if __name__ == "__main__":
    main()
