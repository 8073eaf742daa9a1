"""`x[index]` and `x[index] = value`: basic indices make views, advanced ones copy.

>>> import pushforward as pf
>>> x = pf.zeros(3); x[1] = 2.0; x
tensor([0., 2., 0.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import generated as ops
from ..core.batched import BatchedTensor
from ..dispatch.batching import blevel_of, has_batched, loop_batched, refuse_interpreted
from ..dispatch.bare import rewritten_lazy, write_view
from ..dispatch.general import run_view
from ..dispatch.inplace import apply_inplace
from ..dispatch.promotion import promote
from ..errors import OpError, OpIndexError, OpTypeError
from ..core.tensor import Tensor

__all__ = ["getitem", "setitem"]

_BASIC = (int, slice, type(None), type(Ellipsis), np.integer)
# the index items the fast paths take as they are (no Tensor, array, bool or NumPy integer to normalise)
_PLAIN_ITEMS = frozenset((int, slice, type(None), type(Ellipsis)))
_GETITEM = ops.GETITEM
_ELLIPSIS = type(Ellipsis)
_NONE = type(None)


def _plain_index(index) -> bool:
    """Is `index` an int, slice, None or Ellipsis, or a tuple of them (basic indexing, nothing to normalise)?"""
    if type(index) is tuple:
        for it in index:
            if type(it) not in _PLAIN_ITEMS:
                return False
        return True
    return type(index) in _PLAIN_ITEMS


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
        elif isinstance(it, (list, np.ndarray)) or (isinstance(it, tuple) and isinstance(index, tuple)):
            # a tuple inside the index tuple is a sequence of indices, as NumPy reads it
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


def getitem(x: Tensor, index: Any) -> Tensor:
    """x[index]: a view for basic indices, a copy for advanced ones."""
    ti = type(index)
    key = None  # (the fast path's NumPy index: the getitem kernel's, a trailing Ellipsis keeping a 0-d result a view)
    if ti is tuple:
        whole = False  # (an Ellipsis in the index: it keeps a 0-d result a view already)
        for it in index:
            t = type(it)
            if t is int or t is slice:
                continue
            if t is _ELLIPSIS:
                whole = True
            elif t is not _NONE:
                break
        else:
            key = index if whole else index + (Ellipsis,)
    elif ti in _PLAIN_ITEMS:
        key = (Ellipsis,) if index is Ellipsis else (index, Ellipsis)
    if key is not None:  # (the fast path: no batched item, nothing to normalise)
        try:
            return run_view(_GETITEM, x, (index,), key)
        except IndexError as e:
            raise OpIndexError(f"index: {e} (tensor of shape {tuple(x.shape)})") from None
    items = index if isinstance(index, tuple) else (index,)
    if has_batched(items):  # an index that varies across a vmap batch: once per batch element
        return _getitem_each(x, *items, whole=isinstance(index, tuple))
    idx, basic = _normalize(index)
    try:
        return ops.getitem(x, idx) if basic else ops.index(x, idx)
    except IndexError as e:
        raise OpIndexError(f"index: {e} (tensor of shape {tuple(x.shape)})") from None


@loop_batched
def _getitem_each(x: Tensor, *items: Any, whole: bool) -> Tensor:
    """x[items] (x[items[0]] unless `whole`), called with one batch element's index."""
    return getitem(x, items if whole else items[0])


def setitem(x: Tensor, index: Any, value: Any) -> None:
    """x[index] = value, in place (values, tape history and tangents)."""
    if type(value) is Tensor and value._vsrc is not None and rewritten_lazy(_GETITEM, x, (index,), value):
        return  # (an augmented assignment's write-back: the region is in place already)
    plain = _plain_index(index)
    if plain:
        if write_view(ops.GETITEM, x, (index,), value, ops._COPY_FROM):
            return  # (the fast path: the region's arrays written, dispatch/bare.py)
        idx, basic = index, True  # (nothing batched, nothing to normalise)
    else:
        items = index if isinstance(index, tuple) else (index,)
        if has_batched(items):  # an index that varies across a vmap batch: once per batch element
            _setitem_each(x, items, isinstance(index, tuple), value)
            return
        idx, basic = _normalize(index)
    if type(value) is BatchedTensor and type(x) is Tensor:
        # a batch written into a tensor the vmapped function made: promoted first, so that the view
        # written through is batched too (dispatch/promotion.py)
        promote(x, value._blevel, value._phys.shape[0])
    if basic:
        run_view(ops.GETITEM, x, (idx,)).copy_(value)  # (the getitem op's call, without its two frames)
    else:
        apply_inplace(ops.INDEX_PUT, x, (x, value), (idx, False))


def _setitem_each(x: Tensor, items: tuple, whole: bool, value: Any) -> None:
    """x[items] = value with an index batched at a vmap level: each batch element's row of x's
    physical tensor (a view: the write lands in x) gets that element's index and value."""
    refuse_interpreted((x, value) + items, "index_put_")
    level, size = blevel_of((x, value) + items)
    if not (type(x) is BatchedTensor and x._blevel == level) and not promote(x, level, size):
        raise OpError(
            f"index_put_: vmap: x[index] = value with an index that varies across the batch would write into "
            f"a tensor that is not batched (shape {tuple(x.shape)}) and shares memory or carries a derivative; "
            "use the out-of-place index_put on a batched copy"
        )

    def row(v, b):
        return v._phys[b] if type(v) is BatchedTensor and v._blevel == level else v

    for b in range(size):
        rows = tuple(row(v, b) for v in items)
        setitem(x._phys[b], rows if whole else rows[0], row(value, b))
