"""The rest of NumPy's array functions over pushforward ops: selection by index (take,
take_along_axis, choose, delete, compress-free forms), broadcasting and grids, resize/unstack,
the cumulative_* names, apply_along_axis, and polynomial fitting and roots.

>>> import pushforward as pf
>>> take(pf.tensor([1.0, 2.0, 3.0]), [2, 0])
tensor([3., 1.])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core import creation
from ..core.tensor import Tensor
from ..errors import OpTypeError, OpValueError
from ..ops import generated as ops
from ._poly import convolve, vander
from ._values import along, as_t, public_functions


def _index(indices: Any) -> Tensor:
    """Integer indices as an int64 tensor; a tensor stays one (its values are not read here, so an
    index that varies across a vmap batch works, as the ops take it)."""
    if isinstance(indices, Tensor):
        return indices if indices.dtype == np.int64 else indices.to(np.int64)
    return creation.tensor(np.asarray(indices).astype(np.int64))


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Tensor:
    """NumPy's argsort over the argsort op (stable: ties keep their order, which is one of the orders
    NumPy's default sort may give), so it runs under vmap; axis None sorts the flattened tensor.

    >>> import pushforward as pf
    >>> argsort(pf.tensor([3.0, 1.0, 2.0]))
    tensor([1, 2, 0])
    """
    if order is not None:
        raise OpTypeError("np.argsort: order= (fields of a structured array) does not apply to tensors")
    x = as_t(a)
    x, axis = along(x, axis)
    return ops.argsort(x, int(axis), False, True)


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Tensor:
    """NumPy's take (flattened when axis is None)."""
    if mode != "raise" or out is not None:
        raise OpTypeError("np.take: mode and out are not supported on pushforward tensors")
    x = as_t(a)
    idx = _index(indices)
    x, axis = along(x, axis)
    axis = int(axis) % x.ndim
    r = ops.index_select(x, axis, idx.reshape(-1))
    return r.reshape(*x.shape[:axis], *idx.shape, *x.shape[axis + 1 :])


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Tensor:
    """NumPy's take_along_axis: a negative index counts from the end (the gather op refuses one, as torch's).

    >>> import pushforward as pf
    >>> take_along_axis(pf.tensor([[1.0, 2.0, 3.0]]), pf.tensor([[-1, 0]]), axis=1)
    tensor([[3., 1.]])
    """
    x, idx = as_t(arr), _index(indices)
    x, axis, idx = (x.reshape(-1), 0, idx.reshape(-1)) if axis is None else (x, int(axis), idx)
    n = x.shape[axis] if x.ndim else 1
    return ops.take_along_dim(x, ops.where(ops.lt(idx, 0), ops.add(idx, n), idx), axis)


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Tensor:
    """NumPy's choose: choices[a[i]][i] (the indices a are constants)."""
    idx = _index(a)
    cs = ops.broadcast_tensors([as_t(c) for c in choices] + [idx])
    stacked = ops.stack(cs[:-1], 0)
    return ops.take_along_dim(stacked, cs[-1].unsqueeze(0), 0).squeeze(0)


def delete(arr: Any, obj: Any, axis: Any = None) -> Tensor:
    """NumPy's delete: the entries not at obj along axis."""
    x = as_t(arr)
    x, axis = along(x, axis)
    axis = int(axis) % x.ndim
    keep = np.delete(np.arange(x.shape[axis]), obj)
    return ops.index_select(x, axis, creation.tensor(keep))


def broadcast_arrays(*args: Any, subok: bool = False) -> tuple:
    """NumPy's broadcast_arrays."""
    return tuple(ops.broadcast_tensors([as_t(a) for a in args]))


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """NumPy's meshgrid ('xy' indexing by default, as NumPy)."""
    ts = [as_t(x).reshape(-1) for x in xi]
    n = len(ts)
    shapes = []
    for i, t in enumerate(ts):
        shape = [1] * n
        shape[i] = -1
        if indexing == "xy" and n > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        shapes.append(t.reshape(*shape))
    return tuple(shapes) if sparse else tuple(ops.broadcast_tensors(shapes))


def resize(a: Any, new_shape: Any) -> Tensor:
    """NumPy's resize: the flattened input repeated to fill new_shape."""
    x = as_t(a).reshape(-1)
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    n = int(np.prod(shape, dtype=np.int64))
    if n and not x.shape[0]:
        raise OpValueError("np.resize: cannot resize an empty array to a non-empty shape")
    reps = -(-n // max(x.shape[0], 1))
    return ops.cat([x] * max(reps, 1), 0)[:n].reshape(*shape)


def unstack(x: Any, /, *, axis: int = 0) -> tuple:
    """NumPy's unstack: the slices along axis."""
    return tuple(ops.unbind(as_t(x), axis))


def _cumulative(name: str) -> Callable:
    def f(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None, include_initial: bool = False):
        if out is not None:
            raise OpTypeError(f"np.{name}: out= is not supported on pushforward tensors (assign the result instead)")
        t = as_t(x)
        if axis is None:
            if t.ndim > 1:
                raise OpValueError(f"np.{name}: axis is required for arrays of more than one dimension")
            t, axis = t.reshape(-1), 0
        r = getattr(ops, "cumsum" if name == "cumulative_sum" else "cumprod")(t, int(axis), dtype=dtype)
        if include_initial:
            shape = list(r.shape)
            shape[int(axis)] = 1
            # (in r's dtype: a Python float added would make integers float64)
            first = (ops.zeros if name == "cumulative_sum" else ops.ones)(*shape, dtype=r.dtype)
            r = ops.cat([first, r], int(axis))
        return r

    f.__name__ = name
    return f


# NumPy's result types of the unique_* functions (named tuples whose fields are unique_all's)
_UNIQUE = {n: type(getattr(np, n)(np.zeros(1))) for n in ("unique_all", "unique_counts", "unique_inverse")}


def _unique(name: str, x: Any) -> Any:
    """NumPy's unique_* of x's values, with its values gathered from x by ops (so they carry x's
    derivative: each is one of x's elements) and its indices and counts integer tensors."""
    t = as_t(x)
    r = np.unique_all(t.detach().numpy())
    first = creation.as_tensor(r.indices)
    fields = {"values": ops.index_select(t.reshape(-1), 0, first), "indices": first}
    fields |= {"inverse_indices": creation.as_tensor(r.inverse_indices), "counts": creation.as_tensor(r.counts)}
    return _UNIQUE[name](*(fields[f] for f in _UNIQUE[name]._fields))


def unique_all(x: Any) -> Any:
    """NumPy's unique_all: the sorted distinct values (each NaN distinct), differentiable, with the
    first index of each, the inverse indices and the counts.

    >>> import pushforward as pf
    >>> unique_all(pf.tensor([2.0, 1.0, 2.0])).counts
    tensor([1, 2])
    """
    return _unique("unique_all", x)


def unique_counts(x: Any) -> Any:
    """NumPy's unique_counts (unique_all's values and counts)."""
    return _unique("unique_counts", x)


def unique_inverse(x: Any) -> Any:
    """NumPy's unique_inverse (unique_all's values and inverse indices)."""
    return _unique("unique_inverse", x)


def unique_values(x: Any) -> Tensor:
    """NumPy's unique_values, differentiable: its values in NumPy's order (which NumPy leaves
    unspecified: a hash table's for integers, not unique_all's sorted one)."""
    t = as_t(x)
    data = t.detach().numpy()
    r, got = np.unique_all(data), np.unique_values(data)
    first = r.indices[np.searchsorted(r.values, got)] if got.size else r.indices
    return ops.index_select(t.reshape(-1), 0, creation.as_tensor(first))


cumulative_sum = _cumulative("cumulative_sum")
cumulative_prod = _cumulative("cumulative_prod")


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tensor:
    """NumPy's ediff1d: differences of the flattened input, with optional ends."""
    x = as_t(ary).reshape(-1)
    parts = [] if to_begin is None else [as_t(to_begin).reshape(-1).to(x.dtype)]
    parts.append(x[1:] - x[:-1])
    if to_end is not None:
        parts.append(as_t(to_end).reshape(-1).to(x.dtype))
    return ops.cat(parts, 0)


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Tensor:
    """NumPy's apply_along_axis: func1d on every 1-D slice along axis, results stacked."""
    x = ops.movedim(as_t(arr), axis, -1)
    lead = x.shape[:-1]
    rows = [as_t(func1d(r, *args, **kwargs)) for r in ops.unbind(x.reshape(-1, x.shape[-1]), 0)]
    out = ops.stack(rows, 0)
    out = out.reshape(*lead, *out.shape[1:])
    return ops.movedim(out, len(lead), axis % as_t(arr).ndim) if out.ndim > len(lead) else out


def apply_over_axes(func: Callable, a: Any, axes: Any) -> Tensor:
    """NumPy's apply_over_axes: func(a, axis) over each axis, keeping the dims."""
    x = as_t(a)
    for ax in np.atleast_1d(axes):
        r = as_t(func(x, int(ax)))
        x = r if r.ndim == x.ndim else r.unsqueeze(int(ax))
    return x


def piecewise(x: Any, condlist: Any, funclist: list, *args: Any, **kw: Any) -> Tensor:
    """NumPy's piecewise: funclist[i] where condlist[i] holds (later conditions win), an extra
    function for where none holds."""
    t = as_t(x)
    conds = [as_t(c) for c in (condlist if isinstance(condlist, (list, tuple)) else [condlist])]
    if len(funclist) == len(conds) + 1:
        none = ops.logical_not(ops.stack([c.to(np.dtype(bool)) for c in conds], 0).any(0))
        conds.append(none)
    out = ops.zeros_like(t)
    for c, f in zip(conds, funclist):
        v = f(t, *args, **kw) if callable(f) else f
        out = ops.where(c.to(np.dtype(bool)), as_t(v) + 0 * t, out)
    return out


def sort_complex(a: Any) -> Tensor:
    """NumPy's sort_complex: by real part, then imaginary part (the order is chosen on the values)."""
    x = as_t(a)
    v = x.detach().numpy()
    order = np.lexsort((v.imag, v.real), axis=-1)
    r = ops.take_along_dim(x, creation.tensor(order), -1)
    return r if r.is_complex() else r.to(np.dtype(np.complex128))


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None, cov: bool = False):
    """NumPy's least-squares polynomial fit (no weights, full or cov output)."""
    if full or w is not None or cov:
        raise OpTypeError("np.polyfit: full, w and cov are not supported on pushforward tensors")
    xs, ys = as_t(x), as_t(y)
    v = vander(xs.to(np.dtype(np.float64)), int(deg) + 1)
    vec = ys.ndim == 1
    sol = ops.linalg_lstsq(v, ys.unsqueeze(-1) if vec else ys)[0]
    return sol.squeeze(-1) if vec else sol


def poly(seq_of_zeros: Any) -> Tensor:
    """NumPy's poly: the monic polynomial with the given roots (a square matrix: its eigenvalues')."""
    z = as_t(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        z = ops.linalg_eigvals(z)
    c = ops.ones(1, dtype=z.dtype)
    for i in range(z.shape[0]):
        c = convolve(c, ops.stack([ops.ones((), dtype=z.dtype), -z[i]], 0))
    if c.is_complex() and bool(
        np.allclose(np.sort_complex(z.detach().numpy()), np.sort_complex(np.conj(z.detach().numpy())))
    ):
        return c.real
    return c


def roots(p: Any) -> Tensor:
    """NumPy's roots: the eigenvalues of the companion matrix (leading and trailing zeros dropped)."""
    c = as_t(p).to(np.dtype(np.float64)) if not as_t(p).is_complex() else as_t(p)
    v = c.detach().numpy()
    nz = np.nonzero(v)[0]
    if not len(nz):
        return ops.zeros(0, dtype=c.dtype)
    trailing = len(v) - nz[-1] - 1
    c = c[nz[0] : nz[-1] + 1]
    n = c.shape[0] - 1
    if n < 1:
        return ops.zeros(trailing, dtype=c.dtype)
    first = -c[1:] / c[0]
    comp = ops.cat(
        [first.unsqueeze(0), ops.cat([creation.eye(n - 1, dtype=c.dtype), ops.zeros(n - 1, 1, dtype=c.dtype)], 1)], 0
    )
    r = ops.linalg_eigvals(comp)
    r = ops.cat([r, ops.zeros(trailing, dtype=r.dtype)], 0) if trailing else r
    return r.real if bool(np.all(r.detach().numpy().imag == 0)) else r


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """NumPy's astype function: x in dtype."""
    t = as_t(x)
    return (t.clone() if copy else t) if t.dtype == np.dtype(dtype) else t.to(np.dtype(dtype))


__all__ = public_functions(globals())
