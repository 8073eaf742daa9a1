"""NumPy's shaping, joining, splitting and padding functions over pushforward ops (NumPy semantics).

Each function takes NumPy's signature and returns tensors; the NEP-18 dispatch
(`pushforward.numpy._api`) and `pushforward.numpy` both call these, so one rule decides the values.

>>> import pushforward as pf
>>> column_stack([pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0])]).shape
(2, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..errors import OpTypeError, OpValueError, check_dim
from ..core import creation
from ..ops import generated as ops
from ._values import along, as_t, public_functions


def _atleast(op: Any, arys: tuple) -> Any:
    out = [op(as_t(a)) for a in arys]  # (the ops' rule is NumPy's: (n,) -> (1, n) -> (1, n, 1))
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: Any) -> Any:
    """NumPy's atleast_1d: scalars become shape (1,)."""
    return _atleast(ops.atleast_1d, arys)


def atleast_2d(*arys: Any) -> Any:
    """NumPy's atleast_2d: a 1-D array of n becomes (1, n)."""
    return _atleast(ops.atleast_2d, arys)


def atleast_3d(*arys: Any) -> Any:
    """NumPy's atleast_3d: (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)."""
    return _atleast(ops.atleast_3d, arys)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """NumPy's hstack: along axis 1, or axis 0 for 1-D inputs."""
    r = ops.hstack([as_t(a) for a in tup])
    return r if dtype is None else r.to(np.dtype(dtype))


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """NumPy's vstack: along axis 0 after atleast_2d."""
    r = ops.vstack([as_t(a) for a in tup])
    return r if dtype is None else r.to(np.dtype(dtype))


def dstack(tup: Any) -> Tensor:
    """NumPy's dstack: along axis 2 after atleast_3d."""
    return ops.dstack([as_t(a) for a in tup])


def column_stack(tup: Any) -> Tensor:
    """NumPy's column_stack: 1-D inputs become columns."""
    return ops.column_stack([as_t(a) for a in tup])


def block(arrays: Any) -> Tensor:
    """NumPy's block for nested lists of tensors."""

    def depth(a):
        return 1 + depth(a[0]) if isinstance(a, list) else 0

    d = depth(arrays)

    def go(a, level):
        if not isinstance(a, list):
            return as_t(a)
        parts = [go(x, level + 1) for x in a]
        nd = max(d, *(p.ndim for p in parts))
        parts = [p.reshape(*([1] * (nd - p.ndim)), *p.shape) for p in parts]
        return ops.cat(parts, -(d - level))

    return go(arrays, 0)


def append(arr: Any, values: Any, axis: int | None = None) -> Tensor:
    """NumPy's append: flattened when axis is None."""
    a, v = as_t(arr), as_t(values)
    if axis is None:
        return ops.cat([a.reshape(-1), v.reshape(-1)], 0)
    return ops.cat([a, v], axis)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's array_split: nearly equal pieces, or at the given indices."""
    x = as_t(ary)
    ios = indices_or_sections
    ios = int(ios) if isinstance(ios, (int, np.integer)) else [int(i) for i in ios]
    return list(ops.tensor_split(x, ios, axis))


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's split: equal pieces (an uneven division raises, as NumPy), or at the given indices."""
    x = as_t(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        n = x.shape[check_dim(axis, x.ndim, "np.split")]
        if n % int(indices_or_sections):
            raise OpValueError(f"np.split: array of {n} along axis {axis} does not divide into equal sections")
    return array_split(x, indices_or_sections, axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's hsplit: split along axis 1 (axis 0 for 1-D)."""
    x = as_t(ary)
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's vsplit: split along axis 0 (needs at least 2 dims)."""
    x = as_t(ary)
    if x.ndim < 2:
        raise OpValueError("np.vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """NumPy's dsplit: split along axis 2 (needs at least 3 dims)."""
    x = as_t(ary)
    if x.ndim < 3:
        raise OpValueError("np.dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Tensor:
    """NumPy's repeat: each element repeated (flattened when axis is None)."""
    x = as_t(a)
    x, axis = along(x, axis)
    if not isinstance(repeats, (int, np.integer)):
        repeats = creation.tensor(np.asarray(repeats, dtype=np.int64))
    return ops.repeat_interleave(x, repeats, axis)


def tile(A: Any, reps: Any) -> Tensor:
    """NumPy's tile (the op's rule: the shorter of reps and A's shape is padded with ones in front)."""
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    return ops.tile(as_t(A), *reps)


def rollaxis(a: Any, axis: int, start: int = 0) -> Tensor:
    """NumPy's rollaxis: move axis so it sits before position start."""
    x = as_t(a)
    n = x.ndim
    axis = check_dim(axis, n, "np.rollaxis")
    if start < 0:
        start += n
    if not 0 <= start <= n:
        raise OpValueError(f"np.rollaxis: start={start} out of range for an array of {n} dims")
    if axis < start:
        start -= 1
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return x.permute(*order)


def flipud(m: Any) -> Tensor:
    """NumPy's flipud: reverse axis 0."""
    return as_t(m).flip((0,))


def fliplr(m: Any) -> Tensor:
    """NumPy's fliplr: reverse axis 1 (needs 2 dims)."""
    x = as_t(m)
    if x.ndim < 2:
        raise OpValueError("np.fliplr: input must be at least 2-d")
    return x.flip((1,))


def rot90(m: Any, k: int = 1, axes: tuple = (0, 1)) -> Tensor:
    """NumPy's rot90."""
    return ops.rot90(as_t(m), k, tuple(axes))


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Tensor:
    """NumPy's pad: constant, edge, reflect, symmetric and wrap modes."""
    x = as_t(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if mode == "constant":
        values = np.broadcast_to(np.asarray(kwargs.pop("constant_values", 0), dtype=object), (x.ndim, 2))
        for ax, (before, after) in enumerate(widths):
            parts = []
            for w, v in ((before, values[ax][0]), (None, None), (after, values[ax][1])):
                if w is None:
                    parts.append(x)
                elif w > 0:
                    shape = list(x.shape)
                    shape[ax] = int(w)
                    parts.append(creation.zeros(*shape, dtype=x.dtype) + as_t(v).to(x.dtype))
            x = ops.cat(parts, ax)
        return x
    if mode not in ("edge", "reflect", "symmetric", "wrap") or kwargs:
        raise OpTypeError(f"np.pad: mode={mode!r} with {sorted(kwargs)} is not supported on pushforward tensors")
    for ax, (before, after) in enumerate(widths):
        # the source index of every padded position, as NumPy pads an index ramp
        idx = np.pad(np.arange(x.shape[ax]), (int(before), int(after)), mode=mode)
        x = ops.index_select(x, ax, creation.tensor(idx))
    return x


def diag(v: Any, k: int = 0) -> Tensor:
    """NumPy's diag: a 1-D input makes a matrix, a 2-D input gives its k-th diagonal."""
    x = as_t(v)
    if x.ndim not in (1, 2):
        raise OpValueError(f"np.diag: input must be 1-d or 2-d, got shape {tuple(x.shape)}")
    return ops.diag(x, k)


def diagflat(v: Any, k: int = 0) -> Tensor:
    """NumPy's diagflat: the flattened input on the k-th diagonal."""
    return ops.diag(as_t(v).reshape(-1), k)


__all__ = public_functions(globals())
