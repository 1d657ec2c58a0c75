"""Child process of tests/trust/test_ctable_varlog_kill.py: changes a standalone CTable
(``.b2d``) with text, list and object columns by a fixed sequence of operations, logging
each one after it returned, until killed (``run``); or fills one and closes it, saying when
the close starts (``close``).

Usage: varlog_writer.py run PATH NOPS LOG | varlog_writer.py close PATH NROWS LOG
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np

import pyblosc2 as pb

COLS = ("x", "u", "v", "d", "ls", "o")


@dataclasses.dataclass
class Row:
    x: int = 0
    u: str = pb.field(pb.utf8(), default="")
    v: str = pb.field(pb.vlstring(), default="")
    d: str = pb.field(pb.dictionary(), default="")
    ls: list[int] = pb.field(pb.list(pb.int32(), nullable=True), default=None)  # noqa: RUF009
    o: object = pb.field(pb.object(nullable=True), default=None)


def row(x: int) -> tuple[Any, ...]:
    return (
        x,
        f"u{x}é" if x % 2 else f"u{x}",
        f"v{x}" * (x % 3),
        f"d{x % 4}",
        None if x % 5 == 0 else [x, x + 1],
        {"x": x} if x % 2 else [x],
    )


def operation(k: int) -> tuple[str, Any]:
    """Operation ``k``: append one row, extend three, delete the first live row, or set
    one text/list/object value of it (one column per operation: one log entry)."""
    if k % 7 == 6:
        return "delete", None
    if k % 7 == 5:
        return "update", (COLS[1 + k % 5], k)
    if k % 2:
        return "extend", [3 * k, 3 * k + 1, 3 * k + 2]
    return "append", [3 * k]


def updated(name: str, k: int) -> Any:
    return {"u": f"up{k}", "v": "", "d": f"d{k % 3}", "ls": [k], "o": None}[name]


def states(n: int) -> list[list[tuple[Any, ...]]]:
    """The rows after 0, 1, ..., n operations."""
    rows: list[tuple[Any, ...]] = []
    out = [list(rows)]
    for k in range(n):
        op, arg = operation(k)
        if op == "delete":
            rows = rows[1:]
        elif op == "update":
            if rows:
                name, k2 = arg
                i = COLS.index(name)
                first = list(rows[0])
                first[i] = updated(name, k2)
                rows = [tuple(first), *rows[1:]]
        else:
            rows = rows + [row(x) for x in arg]
        out.append(list(rows))
    return out


def rows_of(t: Any) -> list[tuple[Any, ...]]:
    cols = [list(t[c][:].tolist() if c == "x" else t[c][:]) for c in COLS]
    return [tuple(r) for r in zip(*cols, strict=True)]


def run(path: str, nops: int, log: str) -> None:
    t = pb.CTable.open(path, mode="a")
    with open(log, "a") as f:
        for k in range(nops):
            op, arg = operation(k)
            if op == "delete":
                if len(t):
                    t.delete(0)
            elif op == "update":
                if len(t):
                    name, k2 = arg
                    t[name][0] = updated(name, k2)
            elif op == "extend":
                rows = [row(x) for x in arg]
                t.extend({c: [r[i] for r in rows] for i, c in enumerate(COLS)})
            else:
                t.append(row(arg[0]))
            if k % 40 == 39:  # a flush now and then: the layout rewritten, the log dropped
                t._flush_varlen_columns()
            f.write(f"{k}\n")
            f.flush()
    t.close()


def close(path: str, n: int, log: str) -> None:
    t = pb.CTable(Row, urlpath=path, mode="w", expected_size=8)
    t.extend([row(x) for x in range(n)])
    t.close()
    t = pb.CTable.open(path, mode="a")  # the layout holds n rows: the log will not cover it
    t.extend(
        {
            "x": np.arange(n, n + 10),
            **{c: [row(x)[i] for x in range(n, n + 10)] for i, c in enumerate(COLS) if c != "x"},
        }
    )
    t["u"][1] = "changed"
    with open(log, "w") as f:
        f.write("closing\n")
    t.close()
    with open(log, "a") as f:
        f.write("closed\n")


if __name__ == "__main__":
    mode, path, count, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    (run if mode == "run" else close)(path, count, log)
