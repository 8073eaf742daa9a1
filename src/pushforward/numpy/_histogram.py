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
    Equal bins (`bins` a number) are found as NumPy finds them: by arithmetic, then one step
    toward the bin whose edges hold the sample (a binary search per sample is ~10x slower)."""
    if equal and edges.size > 1 and edges.dtype == x.dtype:
        return _equal_bin_of(x, edges)
    idx = np.searchsorted(edges, x, side="right") - 1
    idx[x == edges[-1]] = edges.size - 2
    idx[(x < edges[0]) | (x > edges[-1]) | np.isnan(x)] = -1
    return idx


def _equal_bin_of(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """_bin_of for equal bins between edges[0] and edges[-1] (np.linspace's edges)."""
    n = edges.size - 1
    lo, hi = edges[0], edges[-1]
    inside = (x >= lo) & (x <= hi)  # (nan is outside)
    v = x[inside]
    i = ((v - lo) / (hi - lo) * n).astype(np.intp)
    i[i == n] = n - 1  # (the last edge: the closed last bin)
    i[v < edges[i]] -= 1  # (the arithmetic is within one ULP of an edge: the edges decide)
    i[(v >= edges[i + 1]) & (i != n - 1)] += 1
    idx = np.full(x.shape, -1, dtype=np.intp)
    idx[inside] = i
    return idx


def _summed(index: np.ndarray, n: int, weights: Any, dtype: Any) -> Tensor:
    """The weights summed per index (index -1 dropped): a tensor of n values, linear in the weights."""
    keep = index.reshape(-1) >= 0
    w = as_t(weights).reshape(-1)
    zeros = creation.as_tensor(np.zeros(n, dtype=np.result_type(w.dtype, dtype)))
    return ops.index_put(zeros, (index.reshape(-1)[keep],), w[keep], True)


def _edges(a: Any, bins: Any, range_: Any, plain: np.ndarray) -> Any:
    """The bin edges: from the samples' min and max when NumPy takes them from the data."""
    if isinstance(a, Tensor) and isinstance(bins, (int, np.integer)) and range_ is None and plain.size > 1:
        x = a.reshape(-1)
        lo, hi = x.amin(), x.amax()
        if float(plain[0]) != float(lo.detach().numpy()) or float(plain[-1]) != float(hi.detach().numpy()):
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
        hist = _summed(_bin_of(x, plain_edges, np.ndim(bins) == 0), counts.size, weights, np.float64)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths) if weights is not None else hist / (float(counts.sum()) * widths)
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
