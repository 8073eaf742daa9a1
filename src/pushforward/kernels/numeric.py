"""NumPy kernels for the numeric functions NumPy and torch share beyond the ufuncs of basic.py:
ldexp, nan_to_num, count_nonzero, searchsorted. Re-exported by kernels/basic.py (as K.ldexp, ...).

Values and dtypes are NumPy's (an integer mantissa computes in float64); arguments are torch's.

>>> import numpy as np
>>> count_nonzero(np.array([[0.0, 1.0], [2.0, 3.0]]), 1)
array([1, 2])
"""

from __future__ import annotations

from ..core.backend import xp
from ..errors import OpError, OpTypeError, OpValueError, check_dim

__all__ = ["ldexp", "nan_to_num", "count_nonzero", "searchsorted"]


def _array(v):
    # (an array's dtype is read without xp.asarray, which would compute a Dask array)
    return v if hasattr(v, "dtype") else xp.asarray(v)


def ldexp(a, b):
    """a * 2 ** b: NumPy's ldexp for an integer exponent (exact, in a's floating dtype), a * exp2(b)
    for a floating one (torch accepts it; NumPy's ldexp refuses it)."""
    b = _array(b)
    if b.dtype.kind in "biu":
        a = a if a.dtype.kind in "fc" else a.astype(xp.promote_types(a.dtype, xp.float16))  # NumPy's loops
        if a.dtype.kind == "c":
            raise OpTypeError(f"ldexp: complex mantissas are not supported (got dtype {a.dtype})")
        return xp.ldexp(a, b.astype(xp.int64) if b.dtype.kind == "b" else b)
    return xp.multiply(a, xp.exp2(b))


def nan_to_num(a, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest finite values by default); the
    parts of a complex number apart; integers and booleans copied unchanged (NumPy's values)."""
    nan = 0.0 if nan is None else nan
    if type(a) is xp.ndarray or a.dtype.kind not in "fc":
        return xp.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    # a Dask array: its nan_to_num takes no replacement values
    if a.dtype.kind == "c":
        return nan_to_num(a.real, nan, posinf, neginf) + 1j * nan_to_num(a.imag, nan, posinf, neginf)
    info = xp.finfo(a.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = xp.where(xp.isnan(a), nan, xp.where(xp.isposinf(a), hi, xp.where(xp.isneginf(a), lo, a)))
    return out.astype(a.dtype)


def count_nonzero(a, dim=None):
    """The number of nonzero elements along dim (every dim when None), as int64."""
    if dim is None:
        axes = None
    else:
        dims = (dim,) if isinstance(dim, (int, xp.integer)) else tuple(dim)
        axes = tuple(check_dim(d, a.ndim, "count_nonzero") for d in dims) if a.ndim else None
        if axes is not None and len(set(axes)) != len(axes):
            raise OpValueError(f"count_nonzero: dim {tuple(dims)} appears more than once")
    return _array(xp.count_nonzero(a, axis=axes)).astype(xp.int64)


def searchsorted(seq, values, out_int32=False, right=False, side=None, sorter=None):
    """Indices where values would be inserted into the sorted last dim of seq to keep it sorted:
    a 1-d seq serves every value; an N-d seq has one sorted row per row of values (its leading
    dims equal values', as torch). side='right' (or right=True) puts a value after its equals."""
    if side is not None and side not in ("left", "right"):
        raise OpValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if side == "left" and right:
        raise OpError("searchsorted: side='left' and right=True contradict each other")
    which = "right" if right or side == "right" else "left"
    values = _array(values)
    if seq.dtype.kind == "c" or values.dtype.kind == "c":
        raise OpTypeError("searchsorted: complex tensors are not ordered")
    if seq.ndim == 0:
        raise OpValueError("searchsorted: the sorted sequence must have at least one dimension, got a 0-d tensor")
    if sorter is not None and sorter.shape != seq.shape:
        raise OpValueError(f"searchsorted: sorter's shape {sorter.shape} differs from the sequence's {seq.shape}")
    dt = xp.int32 if out_int32 else xp.int64
    if seq.ndim == 1:
        return _array(xp.searchsorted(seq, values, side=which, sorter=sorter)).astype(dt)
    if values.shape[:-1] != seq.shape[:-1]:
        raise OpValueError(
            f"searchsorted: the leading dims of the sorted sequence {seq.shape[:-1]} and of the values "
            f"{values.shape[:-1]} must agree (for an N-d sequence)"
        )
    flat_seq = seq.reshape(-1, seq.shape[-1])
    flat_val = values.reshape(-1, values.shape[-1])
    flat_sorter = None if sorter is None else sorter.reshape(flat_seq.shape)
    rows = [
        xp.searchsorted(s, v, side=which, sorter=None if flat_sorter is None else flat_sorter[i])
        for i, (s, v) in enumerate(zip(flat_seq, flat_val))
    ]
    out = xp.stack(rows) if rows else xp.zeros(flat_val.shape, dt)
    return out.reshape(values.shape).astype(dt)
