"""np.histogram, np.histogram2d and np.bincount on tensors: differentiable in their weights.

Which bin a sample falls into is piecewise constant in the samples, so the counts are constants
(their derivative is zero) and a weighted histogram is the sum of the weights in each bin, linear
in the weights. The bin edges NumPy computes from the samples' range (`bins` a number, no
`range`) are min + (max - min) * k / bins, differentiable in the samples like np.min and np.max;
given edges or a range are constants.

>>> import numpy as np, pushforward as pf
>>> h, e = np.histogram(pf.tensor([0.0, 0.5, 1.0]), 2, weights=pf.tensor([1.0, 2.0, 3.0]))
>>> h, e
(tensor([1., 5.]), tensor([0. , 0.5, 1. ]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import creation
from ..core.tensor import Tensor
from ..ops import generated as ops
from ._creation import values
from ._values import as_t

__all__ = ["FUNCTIONS", "histogram", "histogram2d", "bincount"]


def _bin_of(x: np.ndarray, edges: np.ndarray, equal: bool = False) -> np.ndarray:
    """Each sample's bin as NumPy counts it (half-open bins, the last one closed); -1 outside.
    Equal bins (`bins` a number): np.histogram's own estimate from the samples' offsets, corrected
    by one bin against the edges, ten times faster than a search. Shapes and no branch depend on
    the samples' values (one program under pf.compile)."""
    n = edges.size - 1
    if equal:
        with np.errstate(invalid="ignore"):  # (NaN samples: any index, dropped below)
            idx = ((x - edges[0]) / (edges[-1] - edges[0]) * n).astype(np.intp)
        np.clip(idx, 0, n - 1, out=idx)
        idx -= x < edges[idx]
        idx += (x >= edges[idx + 1]) & (idx != n - 1)
    else:
        idx = np.searchsorted(edges, x, side="right") - 1
        idx = np.where(x == edges[-1], n - 1, idx)
    return np.where((x < edges[0]) | (x > edges[-1]) | np.isnan(x), -1, idx)


def _summed(index: np.ndarray, n: int, weights: Any, dtype: Any) -> Tensor:
    """The weights summed per index (index -1 dropped): a tensor of n values, linear in the weights.
    The dropped ones are summed into an extra bin n: shapes that do not depend on the samples'
    values, so that pf.compile's program is the same for all of them."""
    flat = index.reshape(-1)
    flat = np.where(flat < 0, n, flat)
    w = as_t(weights).reshape(-1)
    # (a factory's zeros: under pf.compile a recorded array, so that the sums written into it and
    # read back, as `hist.sum()` of a density, stay in the program)
    zeros = creation.zeros(n + 1, dtype=np.result_type(w.dtype, dtype))
    return ops.index_put(zeros, (flat,), w, True)[:n]


def _edges(a: Any, bins: Any, range_: Any, plain: np.ndarray) -> Any:
    """The bin edges: from the samples' min and max when NumPy takes them from the data."""
    if isinstance(a, Tensor) and isinstance(bins, (int, np.integer)) and range_ is None and plain.size > 1:
        x = a.reshape(-1)
        lo, hi = x.amin(), x.amax()
        # (a branch on arrays, not on floats: under pf.compile it is a guard, not a value read)
        if plain[0] != lo.detach().numpy() or plain[-1] != hi.detach().numpy():
            return creation.as_tensor(plain)  # (an empty or constant sample: NumPy widens the range)
        frac = creation.as_tensor(np.linspace(0.0, 1.0, int(bins) + 1))
        return ops.cat([lo.reshape(1), (lo + (hi - lo) * frac)[1:-1], hi.reshape(1)], 0)
    return creation.as_tensor(plain)


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None):
    """np.histogram: (counts or summed weights, edges), the sums differentiable in the weights."""
    x = np.asarray(values(a), dtype=float).reshape(-1)
    counts, plain_edges = np.histogram(x, values(bins), range, weights=None)
    edges = _edges(a, bins, range, plain_edges)
    if weights is None:
        hist = creation.as_tensor(counts)
    else:
        equal = isinstance(values(bins), (int, np.integer))
        hist = _summed(_bin_of(x, plain_edges, equal), counts.size, weights, np.float64)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None):
    """np.histogram2d: (counts or summed weights, x edges, y edges)."""
    xv = np.asarray(values(x), dtype=float).reshape(-1)
    yv = np.asarray(values(y), dtype=float).reshape(-1)
    counts, ex, ey = np.histogram2d(xv, yv, values(bins), range)
    if weights is None:
        hist = creation.as_tensor(counts)
    else:
        ix, iy = _bin_of(xv, ex), _bin_of(yv, ey)
        flat = np.where((ix >= 0) & (iy >= 0), ix * (ey.size - 1) + iy, -1)
        hist = _summed(flat, counts.size, weights, np.float64).reshape(*counts.shape)
    if density:
        area = creation.as_tensor(np.outer(np.diff(ex), np.diff(ey)))
        hist = hist / (hist.sum() * area)
    return hist, creation.as_tensor(ex), creation.as_tensor(ey)


def bincount(x: Any, weights: Any = None, minlength: int = 0) -> Tensor:
    """np.bincount: counts of each integer, or the weights summed per integer (differentiable)."""
    idx = np.asarray(values(x))
    counts = np.bincount(idx, minlength=minlength)
    if weights is None:
        return creation.as_tensor(counts)
    return _summed(idx, counts.size, weights, np.float64)


FUNCTIONS: dict = {np.histogram: histogram, np.histogram2d: histogram2d, np.bincount: bincount}
