"""torch's `out=` argument: an op's result written into given tensors.

Functions called with out= are not differentiable (torch's rule): an input or an out tensor that
requires grad (with grad mode on) or is dual raises, naming the rule. Otherwise the result is
copied into `out` (a Tensor, or a tuple of them for an op returning several), which must have
the result's shape; its dtype is `out`'s (a cast, as copy_).

>>> import pushforward as pf
>>> buf = pf.zeros(2)
>>> pf.add(pf.tensor([1.0, 2.0]), 1.0, out=buf) is buf, buf.tolist()
(True, [2.0, 3.0])
"""

from __future__ import annotations

from typing import Any, Callable

from ...core.tensor import Tensor
from ...engine.state import STATE
from ...engine.tangents import levels_of
from ...errors import OpError, OpTypeError

__all__ = ["write_out"]


def _tensors(inputs: tuple) -> list:
    found = []
    for x in inputs:
        if isinstance(x, Tensor):
            found.append(x)
        elif isinstance(x, (list, tuple)):
            found.extend(t for t in x if isinstance(t, Tensor))
    return found


def write_out(name: str, out: Any, inputs: tuple, compute: Callable) -> Any:
    """compute()'s result written into out (returned); out= refuses autodiff, as torch."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise OpTypeError(
                f"{name}(): argument 'out' must be a Tensor (or a tuple of Tensors), got {type(o).__name__}"
            )
    involved = _tensors(inputs) + list(outs)
    if STATE.levels and any(levels_of(t) for t in involved):
        raise OpError(
            f"{name}(): trying to use forward AD with {name}(..., out=...) that does not support it because it is "
            "an out= function (an input or out is dual); call it without out="
        )
    if STATE.grad_enabled and any(t._requires_grad for t in involved):
        raise OpError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, but one of the "
            "arguments requires grad; call it without out="
        )
    res = compute()
    results = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    if len(results) != len(outs):
        raise OpError(f"{name}(): out= needs {len(results)} tensor(s) for the result, got {len(outs)}")
    for k, (o, r) in enumerate(zip(outs, results)):
        if tuple(o.shape) != tuple(r.shape):
            raise OpError(
                f"{name}(): out= tensor {k} has shape {tuple(o.shape)}, but the result has shape {tuple(r.shape)}"
            )
        o.copy_(r)
    return out
