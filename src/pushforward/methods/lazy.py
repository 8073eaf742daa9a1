"""Computing lazy (Dask-backed) tensors: `t.compute()`, `pf.compute(*tensors)`, `t.to_dask()`.

A lazy tensor's values and its tangents (at every live dual level, vector-mode batches included)
are computed together by one `dask.compute` call, so the work they share (the primal chain a
jvp reads) runs once. The results are NumPy-backed tensors carrying the computed tangents; they
are not on the tape (computing is not an op: differentiate before computing).

>>> import pushforward as pf
>>> pf.compute(pf.tensor([1.0]))
(tensor([1.]),)
"""

from __future__ import annotations

import functools
from types import FunctionType
from typing import Any, Callable

import numpy as np

from ..core.batched import BatchedTensor
from ..core.lazy import any_lazy, guarded, is_lazy_array, unsupported
from ..dispatch.lazyops import DENIED, guarded_now
from ..core.tensor import Tensor, wrap
from ..engine.tangents import levels_of, set_tangent, tangent_of
from ..errors import OpError, OpTypeError

__all__ = ["compute", "compute_method", "to_dask", "guard_composites"]


def _parts(t: Tensor) -> list:
    """(level, tangent) of every live level at which t has a tangent, the primal's first (level None)."""
    parts = [(None, t)]
    if t._fw is not None or t._st.dual:
        for lv in levels_of(t):
            tan = tangent_of(t, lv)
            if tan is not None:
                parts.append((lv, tan))
    return parts


def _array(v) -> Any:
    """The array to compute for a primal or tangent (a batch of tangents: its physical array)."""
    return v._phys._data if type(v) is BatchedTensor else v._data


def _rebuilt(parts: list, values: list) -> Tensor:
    """A NumPy-backed tensor with the computed primal and tangents."""
    out = wrap(np.asarray(values[0]))
    for (lv, tan), val in zip(parts[1:], values[1:]):
        val = wrap(np.asarray(val))
        set_tangent(out, lv, BatchedTensor(val, tan._blevel) if type(tan) is BatchedTensor else val)
    return out


def compute(*tensors: Any, **kwargs: Any) -> Any:
    """Compute lazy tensors in one pass over one graph (`dask.compute`): always a tuple, one
    result per argument, as `dask.compute` returns (`(y,) = pf.compute(t)`). Duals keep their tangents (computed in the same pass); other
    arguments are returned as they are. Keyword arguments go to `dask.compute` (`scheduler=`, ...).

    >>> import pushforward as pf
    >>> a, b = pf.compute(pf.tensor([1.0]), pf.tensor([2.0]))
    >>> b
    tensor([2.])
    """
    plan = [_parts(t) if isinstance(t, Tensor) and _any_lazy_part(t) else None for t in tensors]
    flat = [_array(v) for parts in plan if parts is not None for _, v in parts]
    if flat:
        import dask

        flat = list(dask.compute(*flat, **kwargs))
    out = []
    for t, parts in zip(tensors, plan):
        if parts is None:
            out.append(t)
        else:
            out.append(_rebuilt(parts, flat[: len(parts)]))
            del flat[: len(parts)]
    return tuple(out)


def _any_lazy_part(t: Tensor) -> bool:
    return any(is_lazy_array(_array(v)) for _, v in _parts(t))


def compute_method(self: Tensor, **kwargs: Any) -> Tensor:
    """t.compute(): a NumPy-backed tensor with t's values (and tangents); t itself if not lazy.

    >>> import pushforward as pf
    >>> pf.tensor([3.0]).compute()
    tensor([3.])
    """
    return compute(self, **kwargs)[0]


def to_dask(self: Tensor, chunks: Any = "auto") -> Any:
    """The Dask array of a lazy tensor (a NumPy-backed one is wrapped in one, with `chunks`).
    Raises if the tensor requires grad, as numpy() does: the gradient would be lost.

    >>> import pushforward as pf
    >>> pf.tensor([1.0, 2.0]).to_dask().sum().compute()
    np.float64(3.0)
    """
    if self._requires_grad:
        raise OpError("Can't call to_dask() on Tensor that requires grad. Use tensor.detach().to_dask() instead.")
    if is_lazy_array(self._data):
        return self._data
    if type(self._data) is not np.ndarray:
        raise OpTypeError(f"to_dask(): unsupported array type {type(self._data).__name__}")
    import dask.array as da

    return da.from_array(self._data, chunks=chunks)


def _guarded_composite(name: str, fn: Callable) -> Callable:
    """fn (a composite op's body, which may read its inputs' values) refusing to compute lazy inputs."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if not guarded_now() and (any_lazy(args) or (kwargs and any_lazy(kwargs.values()))):
            why = DENIED.get(name)
            if why is not None:
                raise unsupported(name, why)
            return guarded(name, lambda: fn(*args, **kwargs))
        return fn(*args, **kwargs)

    return run


# Composites that read no values (shapes, strides and flags only, then one primitive, which dispatch
# guards itself): the guard's three calls would be pure overhead on a hot op (`a @ b` in a loop).
_READS_NO_VALUES = frozenset({"c_matmul"})


def guard_composites(namespace: dict) -> None:
    """Run the composite ops of the generated module (`c_*`, `*_composite`: Python bodies calling ops,
    not one kernel) under the compute guard when an input is lazy, as dispatch runs every op
    (dispatch/lazyops.py): a composite that reads values would otherwise compute a Dask array.
    Those of `_READS_NO_VALUES` stay as they are."""
    for key, fn in list(namespace.items()):
        if key in _READS_NO_VALUES:
            continue
        if type(fn) is FunctionType and (key.startswith("c_") or key.endswith("_composite")):
            namespace[key] = _guarded_composite(key.removeprefix("c_").removesuffix("_composite"), fn)
