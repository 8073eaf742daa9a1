"""`x[index]` and `x[index] = value`: basic indices make views, advanced ones copy.

>>> import pushforward as pf
>>> x = pf.zeros(3); x[1] = 2.0; x
tensor([0., 2., 0.])
"""
from __future__ import annotations

import numpy as np

from .errors import OpIndexError, OpTypeError
from ._tensor import Tensor

_BASIC = (int, slice, type(None), type(Ellipsis), np.integer)


def _normalize(index):
    """Index with Tensors turned into arrays; says whether it is basic (view-making)."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    basic = True
    for it in items:
        if isinstance(it, Tensor):
            if it._data.dtype.kind not in "iub":
                raise OpIndexError(f"index: tensors used as indices must be long, int or bool (got {it._data.dtype})")
            it = it._data
            basic = basic and it.ndim == 0 and it.dtype.kind in "iu"
            if it.ndim == 0 and it.dtype.kind in "iu":
                it = int(it)
        elif isinstance(it, (list, np.ndarray)):
            basic = False
            it = np.asarray(it)
            if it.dtype.kind not in "iub" and it.size:
                raise OpIndexError(f"index: arrays used as indices must be integer or bool (got {it.dtype})")
        elif isinstance(it, bool) or not isinstance(it, _BASIC):
            if isinstance(it, bool):
                basic = False
            else:
                raise OpTypeError(f"index: unsupported index {it!r} of type {type(it).__name__}")
        out.append(it)
    idx = tuple(out) if isinstance(index, tuple) else out[0]
    return idx, basic


def getitem(x: Tensor, index) -> Tensor:
    from ._generated.ops import getitem as view_op, index as copy_op
    idx, basic = _normalize(index)
    try:
        return view_op(x, idx) if basic else copy_op(x, idx)
    except IndexError as e:
        raise OpIndexError(f"index: {e} (tensor of shape {tuple(x.shape)})") from None


def setitem(x: Tensor, index, value) -> None:
    from ._generated.ops import INDEX_PUT, getitem as view_op
    from .dispatch import apply_inplace
    idx, basic = _normalize(index)
    if basic:
        view_op(x, idx).copy_(value)
    else:
        apply_inplace(INDEX_PUT, x, (x, value), (idx, False))
