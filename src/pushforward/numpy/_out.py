"""ufuncs whose result goes somewhere: `out=` and `where=` of a ufunc call, reduction or
accumulation, and `ufunc.at`, on tensors (docs/differentiating-numpy.md, "Writing results").

A tensor given as `out` receives the result by our in-place semantics: a plain tensor written with
a dual value becomes dual, the tape records the write. A NumPy array given as `out` (`buf += t`,
`np.add(a, b, out=buf)`, `np.add.at(buf, i, t)`) receives NumPy's result when no input carries a
derivative, and raises the one lost-derivative error when one does
(docs/design.md, "No silent loss of a derivative").

>>> import numpy as np, pushforward as pf
>>> out = pf.zeros(2)
>>> np.add(pf.tensor([1.0, 2.0]), 1.0, out=out) is out, out
(True, tensor([2., 3.]))
>>> buf = np.zeros(2); buf += pf.tensor([1.0, 2.0]); buf
array([1., 2.])
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.tensor import Tensor, has_derivative, lost_derivative
from ..errors import OpValueError
from ..ops import generated as ops

__all__ = ["ufunc_with_out", "ufunc_at", "into_out", "masked_operand"]

Compute = Callable[..., Any]  # array_ufunc without out/where: (ufunc, method, *inputs, **kwargs)


def _plain(v: Any) -> Any:
    return v.detach().numpy() if isinstance(v, Tensor) else v


def _refuse_derivatives(values: Any, who: str) -> None:
    for v in values:
        if isinstance(v, Tensor) and has_derivative(v):
            raise lost_derivative(v, f"write the result of {who} into a NumPy array")


def _outs(kwargs: dict) -> tuple:
    out = kwargs.pop("out", None)
    outs = out if isinstance(out, tuple) else (out,)
    return () if all(o is None for o in outs) else outs


def into_out(result: Any, out: Any, who: str) -> Any:
    """Write result into out (a tensor: differentiably; an ndarray: only a value without a
    derivative); returns out. The `out=` of functions (np.sum(t, out=o), np.dot(a, b, out=o))."""
    if isinstance(out, Tensor):
        out.copy_(result)
        return out
    _refuse_derivatives((result,), who)
    np.copyto(out, _plain(result), casting="unsafe")
    return out


def ufunc_with_out(compute: Compute, ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict, who: str) -> Any:
    """ufunc.<method>(*inputs, out=..., where=...) with tensors among inputs or outs."""
    outs = _outs(kwargs)
    where = kwargs.pop("where", True)
    if any(not isinstance(o, Tensor) for o in outs):  # a NumPy buffer receives the result
        _refuse_derivatives(inputs, who)
        extra = {} if where is True else {"where": _plain(where)}
        plain_outs = tuple(_plain(o) for o in outs)
        return getattr(ufunc, method)(*[_plain(v) for v in inputs], out=plain_outs, **extra, **kwargs)
    mask = None if where is True else (where if isinstance(where, Tensor) else Tensor(np.asarray(where)))
    if mask is not None and method == "reduce":
        inputs = (masked_operand(ufunc, inputs[0], mask, kwargs.get("initial"), who),)
        mask = None
    elif mask is not None and method != "__call__":
        raise OpValueError(f"{who}: where= is accepted by ufunc calls and reductions only")
    result = compute(ufunc, method, *inputs, **kwargs)
    if mask is not None:
        fill = outs[0] if outs else 0
        result = ops.where(mask, result, fill) if not isinstance(result, tuple) else result
    if not outs:
        return result
    results = result if isinstance(result, tuple) else (result,)
    for o, r in zip(outs, results):
        o.copy_(r)
    return outs if len(outs) > 1 else outs[0]


def masked_operand(ufunc: np.ufunc, x: Any, mask: Any, initial: Any, who: str) -> Tensor:
    """The operand of a masked reduction: its masked-out elements replaced by a value that
    changes nothing (the ufunc's identity, or `initial` where it has none: NumPy's rule)."""
    fill = ufunc.identity if initial is None else initial
    if fill is None:
        raise OpValueError(f"{who}: reduction with where= and no identity needs initial= (as NumPy)")
    x = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
    return ops.where(mask, x, fill)


def ufunc_at(compute: Compute, ufunc: np.ufunc, inputs: tuple, kwargs: dict, who: str) -> None:
    """ufunc.at(a, indices[, b]): unbuffered in place, repeated indices applied each time."""
    a, indices, *rest = inputs
    if kwargs:
        raise OpValueError(f"{who}: unexpected keyword arguments {sorted(kwargs)}")
    if not isinstance(a, Tensor):
        _refuse_derivatives(rest, who)
        getattr(ufunc, "at")(a, _index(indices), *[_plain(v) for v in rest])
        return None
    positions = np.arange(a._data.size).reshape(a.shape)[_index(indices)]
    where = np.unravel_index(positions.reshape(-1), a.shape)
    if ufunc.__name__ in ("add", "subtract") and rest:
        b = rest[0] if isinstance(rest[0], Tensor) else Tensor(np.asarray(rest[0], dtype=a.dtype))
        b = ops.broadcast_to(b, positions.shape).reshape(-1)
        a.index_put_(where, -b if ufunc.__name__ == "subtract" else b, accumulate=True)
        return None
    if np.unique(positions).size != positions.size:
        raise OpValueError(
            f"{who} with repeated indices is not supported on tensors (np.add.at and np.subtract.at are); "
            "apply the ufunc once per repetition"
        )
    current = a[where].reshape(positions.shape)
    a[where] = compute(ufunc, "__call__", current, *rest).reshape(-1)
    return None


def _index(indices: Any) -> Any:
    """An index with tensors in it as NumPy's (integer and boolean index tensors carry no derivative)."""
    if isinstance(indices, tuple):
        return tuple(_plain(i) for i in indices)
    return _plain(indices)
