"""NumPy functions that write into their first argument, on tensors: np.copyto, np.put, np.place,
np.putmask, np.fill_diagonal. A tensor destination is written by our in-place semantics (recorded,
its tangent updated); a NumPy destination takes values without a derivative only (docs/design.md,
"No silent loss of a derivative"); and the functions that compute on values when no tensor in
their arguments carries a derivative (`on_values`).

>>> import numpy as np, pushforward as pf
>>> a = pf.zeros(3); np.put(a, [0, 2], pf.tensor([1.0, 2.0])); a
tensor([1., 0., 2.])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.tensor import Tensor, has_derivative, lost_derivative
from ..errors import OpTypeError
from ..ops import generated as ops
from ._creation import keeps_derivative, to_tensors, values
from ._values import as_t, numpy_error

__all__ = ["FUNCTIONS", "on_values"]


def _into_numpy(dst: np.ndarray, who: str, *sources: Any) -> None:
    for s in sources:
        if keeps_derivative(s):
            raise lost_derivative(as_t(s), f"write with {who} into a NumPy array")


def _cycled(v: Any, n: int, dtype: Any) -> Tensor:
    """v flattened and repeated to n values (NumPy's put/place repeat a short value list)."""
    v = as_t(v).reshape(-1)
    v = v if v.dtype == dtype else v.to(dtype)
    return v if v.shape[0] == n else v[np.arange(n) % max(v.shape[0], 1)]


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """np.copyto: dst[...] = src where `where` (broadcast)."""
    if not isinstance(dst, Tensor):
        _into_numpy(dst, "np.copyto", src)
        np.copyto(dst, values(src), casting=casting, where=values(where))
        return
    src = as_t(src)
    new = src if where is True else ops.where(as_t(where), src, dst)
    dst.copy_(ops.broadcast_to(new, dst.shape) if tuple(new.shape) != tuple(dst.shape) else new)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """np.put: a.flat[ind] = v (v repeated as needed)."""
    if not isinstance(a, Tensor):
        _into_numpy(a, "np.put", v)
        np.put(a, values(ind), values(v), mode)
        return
    ind = np.asarray(values(ind)).reshape(-1)
    n = a._data.size
    if mode == "wrap":
        ind = ind % n
    elif mode == "clip":
        ind = np.clip(ind, 0, n - 1)
    elif ind.size and (ind.max() >= n or ind.min() < -n):
        raise OpTypeError(f"np.put: index {int(ind.max())} is out of bounds for a tensor of size {n}")
    a.flat[ind] = _cycled(v, ind.size, a.dtype)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """np.place: arr[mask] = vals, vals repeated to the number of True elements."""
    if not isinstance(arr, Tensor):
        _into_numpy(arr, "np.place", vals)
        np.place(arr, values(mask), values(vals))
        return
    m = np.asarray(values(mask), dtype=bool)
    arr[m] = _cycled(vals, int(m.sum()), arr.dtype)


def putmask(a: Any, mask: Any, values_: Any) -> None:
    """np.putmask: a[mask] = values, values repeated by position (a.flat[i] gets values.flat[i % n])."""
    if not isinstance(a, Tensor):
        _into_numpy(a, "np.putmask", values_)
        np.putmask(a, values(mask), values(values_))
        return
    m = np.broadcast_to(np.asarray(values(mask), dtype=bool), a.shape)
    full = _cycled(values_, a._data.size, a.dtype).reshape(*a.shape)
    a.copy_(ops.where(Tensor(m), full, a))


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """np.fill_diagonal: the main diagonal of a (its flat positions, as NumPy steps them) set to val."""
    if not isinstance(a, Tensor):
        _into_numpy(a, "np.fill_diagonal", val)
        np.fill_diagonal(a, values(val), wrap)
        return
    probe = np.zeros(a.shape, dtype=bool)
    np.fill_diagonal(probe, True, wrap)  # NumPy decides which positions (its step and wrap rules)
    positions = np.flatnonzero(probe)
    a.flat[positions] = _cycled(val, positions.size, a.dtype)


def on_values(fn: Callable, who: str, args: tuple, kwargs: dict, error: Callable[[], Exception]) -> Any:
    """fn (a NumPy function with no op) on the values of tensors that carry no derivative, its arrays
    returned as tensors; with a derivative among its arguments only where the result holds no
    floating values (integers, booleans, indices: their derivative is zero), else error()."""
    try:
        out = fn(*values(args), **{k: values(v) for k, v in kwargs.items()})
    except (ValueError, TypeError, IndexError) as e:  # NumPy's refusal, named as ours
        raise numpy_error(who, e) from e
    if _inexact(out) and (any(keeps_derivative(a) for a in args) or any(keeps_derivative(v) for v in kwargs.values())):
        raise error()
    # (a NumPy scalar, np.count_nonzero's count, is a 0-d tensor as np.sum's is: a transform takes it)
    return to_tensors(np.asarray(out) if isinstance(out, np.generic) else out)


def _inexact(out: Any) -> bool:
    if isinstance(out, (np.ndarray, np.generic)):
        return np.asarray(out).dtype.kind in "fcO"
    if isinstance(out, float | complex):
        return True
    if isinstance(out, (tuple, list)):  # (named tuples too)
        return any(_inexact(o) for o in out)
    return False


def _mutating(fn: Callable, who: str) -> Callable:
    """A writing NumPy function with no tensor form here: on tensors with a derivative, an error."""

    def f(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, Tensor) and has_derivative(a) for a in args):
            raise OpTypeError(f"{who} on a tensor with a derivative is not supported; write with indexing (t[idx] = v)")
        return fn(*values(args), **{k: values(v) for k, v in kwargs.items()})

    return f


FUNCTIONS: dict = {
    np.copyto: copyto,
    np.put: put,
    np.place: place,
    np.putmask: putmask,
    np.fill_diagonal: fill_diagonal,
    np.put_along_axis: _mutating(np.put_along_axis, "np.put_along_axis"),
}
