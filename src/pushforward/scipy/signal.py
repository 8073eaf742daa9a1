"""pushforward.scipy.signal: convolve on tensors (direct method, differentiable in both inputs).

Besides SciPy's `mode` ('full', 'valid', 'same'), `axes` pairs the axes to convolve and
`dot_axes` the axes to sum over (HIPS autograd's generalisation); the remaining axes of in1, then
of in2, lead the result, the convolved axes follow.

>>> import pushforward as pf
>>> convolve(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))
tensor([1., 3., 2.])
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpValueError
from ..numpy._shapes import pad
from ..ops import generated as ops
from ._common import as_float

__all__ = ["convolve"]


def _order(x: Tensor, dot: list, conv: list) -> tuple:
    rest = [i for i in range(x.ndim) if i not in dot and i not in conv]
    return x.permute(*rest, *dot, *conv), [x.shape[i] for i in rest]


def _window(full: Tensor, na: list, nb: list, mode: str) -> Tensor:
    lead = full.ndim - len(na)
    for i, (a, b) in enumerate(zip(na, nb)):
        if mode == "full":
            continue
        if mode == "valid":
            start, size = min(a, b) - 1, max(a, b) - min(a, b) + 1
        else:  # same: centred, in1's size
            start, size = (b - 1) // 2, a
        full = ops.narrow(full, lead + i, start, size)
    return full


def convolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None, dot_axes: Any = ((), ()), method: str = "auto"):
    """The N-d convolution of in1 and in2 over `axes` (all axes by default), summing over `dot_axes`."""
    a, b = as_float(in1), as_float(in2)
    if mode not in ("full", "valid", "same"):
        raise OpValueError(f"convolve: mode must be 'full', 'valid' or 'same', got {mode!r}")
    if axes is None:
        if a.ndim != b.ndim:
            raise OpValueError(f"convolve: in1 and in2 should have the same dimensionality, got {a.ndim} and {b.ndim}")
        axes = (list(range(a.ndim)), list(range(b.ndim)))
    ca, cb = [int(i) % a.ndim for i in axes[0]], [int(i) % b.ndim for i in axes[1]]
    da, db = [int(i) % a.ndim for i in dot_axes[0]], [int(i) % b.ndim for i in dot_axes[1]]
    na, nb = [a.shape[i] for i in ca], [b.shape[i] for i in cb]
    if mode == "valid" and not (all(x >= y for x, y in zip(na, nb)) or all(y >= x for x, y in zip(na, nb))):
        raise OpValueError("convolve: for 'valid' mode, one input must be at least as large as the other in every axis")
    A, rest_a = _order(a, da, ca)
    B, rest_b = _order(b, db, cb)
    nd = int(np.prod([a.shape[i] for i in da], dtype=np.int64))
    A = A.reshape(int(np.prod(rest_a, dtype=np.int64)), nd, *na)
    B = B.reshape(int(np.prod(rest_b, dtype=np.int64)), nd, *nb)
    out = None
    for k in itertools.product(*[range(n) for n in nb]):
        term = ops.einsum("ad...,bd->ab...", A, B[(slice(None), slice(None), *k)])
        widths = [(0, 0), (0, 0)] + [(ki, n - 1 - ki) for ki, n in zip(k, nb)]
        term = pad(term, widths)
        out = term if out is None else out + term
    out = out.reshape(*rest_a, *rest_b, *[x + y - 1 for x, y in zip(na, nb)])
    return _window(out, na, nb, mode)
