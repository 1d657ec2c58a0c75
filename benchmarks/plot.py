"""Draw benchmark runs (``benchmarks/results.py``'s JSON) for the docs' performance page.

Run::

    python benchmarks/plot.py --reads docs/performance/bench_reads.json \
        --append docs/performance/bench_append_*.json --out docs/performance

It writes, into ``--out``:

* ``reads_ratio.png``: per row of ``bench_reads``, python-blosc2's time / pyblosc2's, one bar
  per kernel set (numpy: a plain install; numba: ``pyblosc2[fast]``); 1.0 is parity;
* ``append_cost.png``: per ``bench_append`` run, the time of one append, of opening the file
  and of a one-item read against the number of chunks in the frame, pyblosc2 per kernel set
  beside python-blosc2;
* ``figures.md``: the same numbers as tables, each run headed by its date, command, machine,
  versions and load (included by ``docs/performance.md``).

Each PNG records the SHA-256 of every JSON it was drawn from (PNG text key
:data:`SOURCES_KEY`), so a test can tell that the pictures are those of the JSON the page
names. matplotlib is the ``[plot]`` extra.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from results import read  # benchmarks/results.py, beside this script

SOURCES_KEY = "pyblosc2-benchmark-sources"
READS_PNG = "reads_ratio.png"
APPEND_PNG = "append_cost.png"
FIGURES_MD = "figures.md"


def sha256(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sources(paths: Sequence[str | os.PathLike[str]]) -> str:
    """The PNG text recorded for ``paths``: JSON of file name -> SHA-256."""
    return json.dumps({Path(p).name: sha256(p) for p in paths}, sort_keys=True)


def _sets(run: dict[str, Any]) -> list[str]:
    return list(run["params"].get("kernels") or [])


def _timed_rows(run: dict[str, Any]) -> list[dict[str, Any]]:
    """bench_reads rows with a time per kernel set (not the RSS or first-read rows)."""
    sets = _sets(run)
    return [r for r in run["rows"] if "C_s" in r and all(f"{k}_ratio" in r for k in sets)]


def _set_label(name: str) -> str:
    return {"numpy": "numpy (plain install)", "numba": "numba (pyblosc2[fast])"}.get(name, name)


def plot_reads(run: dict[str, Any], source: str | os.PathLike[str], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _timed_rows(run)
    sets = _sets(run)
    labels = [r["operation"] for r in rows]
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(rows) + 1.6))
    height = 0.8 / max(1, len(sets))
    for i, name in enumerate(sets):
        ys = [j + (i - (len(sets) - 1) / 2) * height for j in range(len(rows))]
        ax.barh(ys, [r[f"{name}_ratio"] for r in rows], height=height, label=_set_label(name))
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")  # 0.5 and 2 are as far from parity
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10) if t <= max(2.0, ax.get_xlim()[1])]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("python-blosc2 time / pyblosc2 time (higher is better; 1 = parity)")
    p = run["params"]
    ax.set_title(
        f"bench_reads, {p.get('size_mb')} MB, median of {p.get('repeat')}, "
        f"{p.get('nthreads')} threads ({run['date'][:10]}, load {run['load']['start'][0]})",
        fontsize=10,
    )
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path = out / READS_PNG
    fig.savefig(path, dpi=100, metadata={SOURCES_KEY: sources([source])})
    plt.close(fig)
    return path


def plot_append(runs: list[dict[str, Any]], paths: Sequence[str | os.PathLike[str]],
                out: Path) -> Path:  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    codecs = sorted({r["params"]["codec"] for r in runs})
    fig, axes = plt.subplots(3, len(codecs), figsize=(5 * len(codecs), 9), squeeze=False)
    for col, codec in enumerate(codecs):
        mine = [r for r in runs if r["params"]["codec"] == codec]
        for row, (what, unit) in enumerate((("append", "one append"), ("open", "open"),
                                             ("read", "one-item read"))):  # fmt: skip
            ax = axes[row][col]
            for i, run in enumerate(mine):
                xs = [r["chunks"] for r in run["rows"]]
                ax.plot(xs, [r[f"{what}_ours_ms"] for r in run["rows"]], marker="o",
                        label=f"pyblosc2, {_set_label(run['params']['kernels'])}")  # fmt: skip
                ax.plot(xs, [r[f"{what}_C_ms"] for r in run["rows"]], color="grey",
                        linestyle="--", marker="x",
                        label="python-blosc2" if i == 0 else None)  # fmt: skip
            ax.set_xscale("log")
            ax.set_ylim(bottom=0)
            ax.set_xlabel("chunks in the frame")
            ax.set_ylabel(f"{unit}, ms")
            ax.set_title(f"{codec}: {unit}", fontsize=10)
            ax.legend(fontsize=7)
    first = runs[0]
    fig.suptitle(
        f"bench_append: 8 KiB int64 chunks, 1 thread ({first['date'][:10]}, "
        f"load {first['load']['start'][0]})",
        fontsize=11,
    )
    fig.tight_layout()
    path = out / APPEND_PNG
    fig.savefig(path, dpi=100, metadata={SOURCES_KEY: sources(paths)})
    plt.close(fig)
    return path


def _header(run: dict[str, Any], name: str) -> list[str]:
    m, v = run["machine"], run["versions"]
    vers = ", ".join(f"{k} {v[k]}" for k in sorted(v))
    load = run["load"]
    return [
        f"`{name}`: run {run['date']} ({run['seconds']:.0f} s), "
        f"`{run['command']}`{_env(run)}; {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, "
        f"{m['system']}, Python {m['python']}; {vers}; load average "
        f"{load['start'][0]} at the start, {load['end'][0]} at the end.",
        "",
    ]


def _env(run: dict[str, Any]) -> str:
    k = run["params"].get("kernels")
    if run["benchmark"] == "bench_append" and isinstance(k, str):
        return f" with `PYBLOSC2_KERNELS={k}`"
    return ""


def reads_table(run: dict[str, Any], name: str) -> list[str]:
    sets = _sets(run)
    lines = _header(run, name)
    rows = _timed_rows(run)
    # (runs since session 46 note each call's page faults, per library)
    faults = bool(rows) and all("faults" in r for r in rows)
    head = "| operation | python-blosc2 s |" + "".join(
        f" pyblosc2 {k} s (range) | ratio {k} |" for k in sets
    )
    if faults:
        head += f" page faults per call ({' / '.join(['C', *sets])}) |"
    lines += [head, "|---|---|" + "---|---|" * len(sets) + "---|" * faults]
    for r in rows:
        cells = [r["operation"], f"{r['C_s']:.4f}"]
        for k in sets:
            lo, hi = r[f"{k}_range_s"]
            cells += [f"{r[f'{k}_s']:.4f} ({lo:.4f}-{hi:.4f})", f"{r[f'{k}_ratio']:.2f}"]
        if faults:
            cells.append(" / ".join(str(f) for f in r["faults"].values()))
        lines.append("| " + " | ".join(cells) + " |")
    rss = [r for r in run["rows"] if "rss_ratio" in r]
    if rss:
        lines += ["", "| peak RSS growth | python-blosc2 MB | pyblosc2 MB | ours / theirs |"]
        lines.append("|---|---|---|---|")
        for r in rss:
            lines.append(
                f"| {r['operation']} (result {r['result_mb']:.0f} MB) | {r['C_rss_mb']:.0f} | "
                f"{r['ours_rss_mb']:.0f} | {r['rss_ratio']:.2f} |"
            )
    return [*lines, ""]


def append_table(run: dict[str, Any], name: str) -> list[str]:
    lines = _header(run, name)
    # (runs since session 46 also read one item of random chunks, a fresh open each)
    random = all("random_ratio" in r for r in run["rows"])
    whats = ("append", "open", "read", "random") if random else ("append", "open", "read")
    extra = " random chunk python-blosc2 ms | pyblosc2 ms | ratio |" if random else ""
    lines += [
        "| chunks | append python-blosc2 ms | append pyblosc2 ms | ratio | open python-blosc2 ms "
        "| open pyblosc2 ms | ratio | 1-item read python-blosc2 ms | pyblosc2 ms | ratio |" + extra,
        "|---|---|---|---|---|---|---|---|---|---|" + "---|---|---|" * random,
    ]
    for r in run["rows"]:
        cells = [f"{r['chunks']:,}"]
        for what in whats:
            cells += [
                f"{r[f'{what}_C_ms']:.3f}",
                f"{r[f'{what}_ours_ms']:.3f}",
                f"{r[f'{what}_ratio']:.2f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def figures_markdown(
    reads: str | os.PathLike[str], appends: Sequence[str | os.PathLike[str]]
) -> str:
    """The tables of ``figures.md`` (deterministic: a test compares them with the file)."""
    run = read(reads)
    lines = ["## Reads, writes and chunk codecs (`bench_reads`)", ""]
    lines += reads_table(run, Path(reads).name)
    lines += ["## Appends, opening and one-item reads against frame size (`bench_append`)", ""]
    for path in appends:
        a = read(path)
        k = a["params"]["kernels"]
        lines += [f"### {a['params']['codec']}, {_set_label(k)}", ""]
        lines += append_table(a, Path(path).name)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reads", required=True, help="a bench_reads run (JSON)")
    ap.add_argument("--append", nargs="+", required=True, help="bench_append runs (JSON)")
    ap.add_argument("--out", required=True, help="directory for the PNGs and figures.md")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    appends = sorted(args.append)
    plot_reads(read(args.reads), args.reads, out)
    plot_append([read(p) for p in appends], appends, out)
    (out / FIGURES_MD).write_text(figures_markdown(args.reads, appends))
    print(f"wrote {out / READS_PNG}, {out / APPEND_PNG}, {out / FIGURES_MD}")


if __name__ == "__main__":
    main()
