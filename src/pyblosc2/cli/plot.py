"""``info --plot out.png``: compression ratio per chunk, special chunks marked (matplotlib,
the ``plot`` extra). An SChunk (or a 1-d NDArray) is a bar per chunk; an N-d NDArray is a
heat map over the chunk grid of two chosen axes (the mean over the other axes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamError
from .sources import Source

__all__ = ["plot_ratios"]


def _ratios(source: Source) -> tuple[np.ndarray, np.ndarray]:
    infos = list(source.schunk.iterchunks_info())
    ratio = np.array([i.cratio for i in infos], float)
    special = np.array([int(i.special) != 0 for i in infos], bool)
    return ratio, special


def plot_ratios(source: Source, out: str, axes: tuple[int, int] = (0, 1)) -> None:
    """Draw the per-chunk compression ratio of ``source`` into the image file ``out``."""
    try:
        import matplotlib
    except ImportError:
        raise ParamError("--plot needs matplotlib (pip install 'pyblosc2[plot]')") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if source.kind == "chunk":
        raise ParamError("--plot needs a frame: a single chunk file has one ratio (see info)")
    ratio, special = _ratios(source)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    grid: Any = None
    if source.kind == "ndarray" and source.obj.ndim >= 2 and len(ratio):
        a = source.obj
        grid = tuple(-(-s // c) for s, c in zip(a.shape, a.chunks, strict=True))
        if len(set(axes)) != 2 or not all(0 <= x < a.ndim for x in axes):
            raise ParamError(f"--axes must be two different axes of a {a.ndim}-d array, got {axes}")
    if grid is not None:
        others = tuple(i for i in range(len(grid)) if i not in axes)
        r = ratio.reshape(grid).transpose((*axes, *others))
        s = special.reshape(grid).transpose((*axes, *others))
        r2 = r.reshape(r.shape[0], r.shape[1], -1).mean(axis=2)
        s2 = s.reshape(s.shape[0], s.shape[1], -1).any(axis=2)
        im = ax.imshow(r2, origin="upper", aspect="auto", cmap="viridis")
        fig.colorbar(im, ax=ax, label="compression ratio")
        ys, xs = np.nonzero(s2)
        ax.scatter(xs, ys, marker="x", color="red", label="special chunk")
        ax.set_xlabel(f"chunk index along axis {axes[1]}")
        ax.set_ylabel(f"chunk index along axis {axes[0]}")
    else:
        idx = np.arange(len(ratio))
        colors = np.where(special, "tab:red", "tab:blue")
        ax.bar(idx, ratio, color=colors, width=1.0)
        ax.set_xlabel("chunk")
        ax.set_ylabel("compression ratio")
        ax.set_yscale("log")
        if special.any():
            ax.bar([], [], color="tab:red", label="special chunk")
    if special.any():
        ax.legend(loc="upper right")
    ax.set_title(f"{source.path}: compression ratio per chunk")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
