"""Time against size on log axes, one panel per workload, one line per library (matplotlib).

matplotlib is optional (the `plot` extra): `require_matplotlib` says how to install it, and is
what `pushforward bench --plot` calls before measuring anything.

>>> from pushforward.bench.plot import plot_format
>>> plot_format("bench.svg")
'svg'
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .libraries import LIBRARIES, Unavailable
from .runner import Results

__all__ = ["FORMATS", "plot_format", "require_matplotlib", "plot_results"]

FORMATS = ("png", "svg")


def plot_format(path: str | Path) -> str:
    """The image format of `path`, from its extension (PNG or SVG), or ValueError."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise ValueError(f"cannot plot to {str(path)!r}: the file name must end in .png or .svg")
    return ext


def require_matplotlib() -> Any:
    """matplotlib's pyplot on a non-interactive backend, or `Unavailable` saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise Unavailable("plotting needs matplotlib: pip install 'pushforward[plot]'") from None
    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    return plt


def plot_results(results: Results, path: str | Path) -> None:
    """Draw every workload with measurements into one figure and save it to `path` (.png or .svg)."""
    fmt = plot_format(path)
    plt = require_matplotlib()
    names = [w.name for w in results.workloads if any(c.times for c in results.cells if c.workload == w.name)]
    if not names:
        raise ValueError("nothing to plot: no workload was measured")
    ncols = min(4, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.9 * nrows), squeeze=False)
    colors = dict(zip(LIBRARIES, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for ax, name in zip(axes.flat, names):
        cells = [c for c in results.cells if c.workload == name and c.times]
        for lib in LIBRARIES:
            pts = sorted((c.size, c.times[lib]) for c in cells if lib in c.times)
            if pts:
                ax.loglog(*zip(*pts), marker="o", markersize=3, label=lib, color=colors[lib])
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("size (elements)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.yaxis.set_minor_formatter(plt.NullFormatter())  # decades only: minor labels crowd a small panel
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes.flat[len(names) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("seconds per call", fontsize=8)
    handles = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.suptitle("pushforward bench: time per call against size (lower is faster)", fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, format=fmt, dpi=110)
    plt.close(fig)
