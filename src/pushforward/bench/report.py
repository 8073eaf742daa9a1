"""The report of a run as tables of paired ratios: one table per workload, one row per size.

The baseline library's column gives its time per call; every other column gives that library's
time divided by the baseline's, measured in the same rounds (lower is faster). A library with no
figure in a cell shows `-`, and why is noted under the table.

>>> from pushforward.bench.report import fmt_ratio, fmt_time
>>> fmt_time(0.0000123), fmt_time(0.25), fmt_ratio(1.234), fmt_ratio(42.1), fmt_ratio(531.0)
('12.3 us', '250 ms', '1.23x', '42.1x', '531x')
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .runner import Results

__all__ = ["Table", "tables", "fmt_time", "fmt_ratio", "summary"]

# the variables that set the thread count of NumPy's BLAS (read when NumPy is first imported)
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass
class Table:
    """One workload's figures: a title, the column headings, rows of cells and the notes under it."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str]


def fmt_time(seconds: float) -> str:
    """A duration with 3 significant digits and a unit (ns, us, ms, s)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_ratio(r: float) -> str:
    """A ratio with 3 significant digits, at most two decimals, and an `x`."""
    return f"{r:.2f}x" if r < 10 else f"{r:.1f}x" if r < 100 else f"{r:.0f}x"


def tables(results: Results) -> list[Table]:
    """One table per workload that has at least one cell."""
    out = []
    libs = [lib for lib in results.libraries if lib not in results.notes]
    for w in results.workloads:
        cells = [c for c in results.cells if c.workload == w.name]
        if not cells:
            continue
        base = next((c.baseline for c in cells if c.baseline), None)
        others = [lib for lib in libs if lib != base]
        headers = ["size", f"{base} time" if base else "time"] + [f"{lib} / {base}" if base else lib for lib in others]
        rows = []
        for c in cells:
            row = [str(c.size), fmt_time(c.times[base]) if base in c.times else "-"]
            row += [fmt_ratio(c.ratios[lib]) if lib in c.ratios and c.baseline == base else "-" for lib in others]
            rows.append(row)
        notes = sorted({f"{lib}: {note}" for c in cells for lib, note in c.notes.items()})
        if all(not c.ratios for c in cells):
            # nothing measured: the notes say why, a table of dashes would not
            notes.insert(0, "not measured: fewer than two libraries can run it here")
            headers, rows = [], []
        out.append(Table(f"{w.name}: {w.title} (size: {w.size_means})", headers, rows, notes))
    return out


def summary(results: Results) -> list[str]:
    """The lines under the tables: what the ratios are, libraries not run, an interruption."""
    timer = "CPU time of the process" if results.settings.timer == "cpu" else "wall-clock time"
    lines = [
        f"Ratios: the median over {results.settings.rounds} alternating rounds of (time / the baseline's time), "
        f"{timer}; lower is faster."
    ]
    if not any(os.environ.get(v) == "1" for v in _BLAS_THREADS):
        lines.append(
            "NumPy's BLAS may run several threads (PyTorch here runs one; on a busy machine waiting threads "
            "cost CPU time): for per-core figures, run with OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1."
        )
    lines += [f"{lib}: not run: {why}" for lib, why in results.notes.items()]
    if results.interrupted:
        lines.append(f"interrupted: {len(results.cells)} of {results.planned} measurements done")
    return lines
