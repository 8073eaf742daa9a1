"""The array library pushforward computes with: the one module that imports it.

The kernels (`kernels/`) and the generated ops (`ops/generated.py`, whose `kernel:` fields
in `derivatives.yaml` read `xp.sin`, `sp.erf`, `K.name`) reach the array library only through
the names below, so a later array-API backend (CuPy, Dask, ...) changes this module, not the
YAML nor the kernels; `tests/test_backend.py` enforces it.

- `xp`: the array namespace (NumPy today). Beyond the array API standard the kernels use a few
  NumPy extensions through it, which a new backend must provide too (or the kernels using
  them need a branch): ufunc methods (`xp.add.at`, `xp.maximum.at`, `xp.logaddexp.accumulate`,
  `xp.multiply.outer`), `xp.errstate`, `xp.finfo`, `xp.fft`, `xp.linalg` (numpy's flavour:
  batched `svd`, `eigh`, `slogdet`, `LinAlgError`), scalar types (`xp.int64`, `xp.bool_`) and
  `xp.ndarray` for type checks.
- `sp`: special functions (`scipy.special`; CuPy's is `cupyx.scipy.special`).
- `sla`: the linear algebra beyond `xp.linalg` (`scipy.linalg`: `expm`, `lu`, triangular solves).
- `sliding_window_view`: a strided read-only window view (`numpy.lib.stride_tricks`).

These are plain module attributes, bound once: `xp.sin` costs one attribute lookup, the same
as `np.sin`, so the hot paths pay nothing for the indirection. Swapping the backend at run time
is not supported (modules bind these names at import): change the imports here instead.

Example:
    >>> from pushforward.core.backend import xp
    >>> float(xp.sin(xp.asarray(0.0)))
    0.0
"""

from __future__ import annotations

import functools

import numpy as xp
import scipy.linalg as sla
import scipy.special as sp
from numpy.lib.stride_tricks import sliding_window_view

__all__ = [
    "xp",
    "sp",
    "sla",
    "sliding_window_view",
    "in_dim_order",
    "empty_in_layout_of",
    "copy_in_layout_of",
    "zeros_for",
    "fresh_array",
    "opaque",
]

# Set by pf.compile's recorder while a trace is active (compiler/recording.py), else None.
TRACE_NEW_ARRAY = None
TRACE_OPAQUE_CALL = None


def opaque(kernel):
    """A kernel whose arrays leave NumPy's dispatch (a SciPy routine that converts its input with
    `np.asarray`, a loop filling an array NumPy made), recorded by pf.compile's tracer as one call
    of the kernel: the program calls it on plain arrays. Eagerly, the kernel itself.

    >>> f = opaque(lambda a: a + 1)
    >>> f(xp.zeros(2))
    array([1., 1.])
    """

    @functools.wraps(kernel)
    def call(*args, **kwargs):
        if TRACE_OPAQUE_CALL is None:
            return kernel(*args, **kwargs)
        return TRACE_OPAQUE_CALL(kernel, args, kwargs)

    return call


def fresh_array(a):
    """a (a new array a factory such as `pf.zeros` made) as pf.compile's tracer sees it while a
    trace is active: a recorded copy, so values later written into it and read back stay in the
    trace (reads of a plain array by NumPy would be computed once, at trace time); else a itself.

    >>> fresh_array(xp.zeros(2)).shape
    (2,)
    """
    return a if TRACE_NEW_ARRAY is None else TRACE_NEW_ARRAY(a)


def in_dim_order(a, order):
    """A copy of a whose memory holds its dims in `order`, outermost first (NumPy calls on a only,
    which pf.compile's tracer records).

    >>> in_dim_order(xp.ones((3, 4)), [1, 0]).strides
    (8, 24)
    """
    if a.ndim == 0:
        return a.copy()  # (ascontiguousarray would make it 1-d)
    return xp.ascontiguousarray(a.transpose(order)).transpose(xp.argsort(order))


def _layout_order(a) -> list:
    """a's dims in the order of their strides, outermost first; a dim of size 1 or stride 0
    (expanded) keeps its place (torch cannot order by it; NumPy's order="K" puts such dims
    elsewhere, fuzzer: flip of an expanded tensor, then .view)."""
    nd = a.ndim
    fixed = [d for d in range(nd) if a.shape[d] == 1 or a.strides[d] == 0]
    perm = sorted((d for d in range(nd) if d not in fixed), key=lambda d: -abs(a.strides[d]))
    for d in fixed:
        perm.insert(d, d)
    return perm


def empty_in_layout_of(a, dtype=None):
    """An empty array of a's shape laid out as torch lays out an element-wise result of a (and
    `empty_like` with its default preserve_format): a's dims in the order of their strides
    (`_layout_order`).

    >>> empty_in_layout_of(xp.ones((3, 4)).T).strides
    (8, 32)
    """
    perm = _layout_order(a)
    return xp.empty(tuple(a.shape[d] for d in perm), a.dtype if dtype is None else dtype).transpose(xp.argsort(perm))


def copy_in_layout_of(src, a):
    """A copy of src (a's shape) laid out as `empty_in_layout_of(a)`: NumPy calls on src only, which
    pf.compile's tracer records.

    >>> copy_in_layout_of(xp.ones((4, 3)), xp.ones((3, 4)).T).strides
    (8, 32)
    """
    return in_dim_order(src, _layout_order(a))


def zeros_for(like, shape, dtype=None):
    """C-ordered zeros of `shape` (as `np.zeros`) for a result computed from array `like`: through
    `np.zeros_like` when `like` is an ndarray, so that pf.compile's tracer (an ndarray subclass)
    records the zeros and the writes that fill them (`np.zeros` would make an array it cannot
    follow; the tracer records this call as `np.zeros`, reading none of like's values).

    >>> zeros_for(xp.ones((3, 2)).T, (2, 3)).strides
    (24, 8)
    """
    dt = like.dtype if dtype is None else dtype
    if isinstance(like, xp.ndarray):
        return xp.zeros_like(like, dtype=dt, shape=tuple(shape), order="C")
    return xp.zeros(tuple(shape), dtype=dt)
