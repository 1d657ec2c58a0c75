"""Child process of tests/trust/test_ctable_kill.py: changes a standalone CTable (``.b2d``)
by a fixed sequence of operations, logging each one after it returned, until killed.

Usage: table_appender.py PATH NOPS LOG
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np


@dataclasses.dataclass
class Row:
    x: int = 0
    name: str = ""


def operation(k: int) -> tuple[str, list[int]]:
    """Operation ``k``: append one row, extend three, or delete the first live row."""
    if k % 5 == 4:
        return "delete", []
    if k % 2:
        return "extend", [3 * k, 3 * k + 1, 3 * k + 2]
    return "append", [3 * k]


def states(n: int) -> list[list[int]]:
    """The ``x`` column after 0, 1, ..., n operations."""
    rows: list[int] = []
    out = [list(rows)]
    for k in range(n):
        op, values = operation(k)
        rows = rows[1:] if op == "delete" else rows + values
        out.append(list(rows))
    return out


def main() -> None:
    import pyblosc2 as pb

    path, nops, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    t = pb.CTable.open(path, mode="a")
    with open(log, "a") as f:
        for k in range(nops):
            op, values = operation(k)
            if op == "delete":
                if len(t):
                    t.delete(0)
            elif op == "extend":
                t.extend({"x": np.array(values), "name": [str(v) for v in values]})
            else:
                t.append(Row(x=values[0], name=str(values[0])))
            f.write(f"{k}\n")
            f.flush()
    t.close()


if __name__ == "__main__":
    main()
