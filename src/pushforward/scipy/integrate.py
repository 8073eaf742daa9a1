"""pushforward.scipy.integrate: odeint on tensors, differentiable in the initial state, the times
and the parameters (HIPS autograd's signature: odeint(func, y0, t, args=())).

The solution is a fixed-step classical Runge-Kutta integration built of our ops, so its derivatives
(both modes, any order) are the exact derivatives of the computed solution; the number of steps
per interval is chosen on the values (from Richardson's error estimate of 8 and 16 steps, scaled to
`rtol`/`atol`), and is a constant to the derivatives.

>>> import pushforward as pf
>>> y = odeint(lambda y, t: -y, pf.tensor([1.0]), pf.tensor([0.0, 1.0]))
>>> round(float(y[1, 0]), 8)
0.36787944
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.tensor import Tensor
from ..engine.grad_mode import no_grad
from ..errors import OpValueError
from ..ops import generated as ops
from ._common import as_float

__all__ = ["odeint"]

_MAX_STEPS = 1 << 14


def _rk4(func: Callable, y: Tensor, t0: Any, h: Any, n: int, args: tuple) -> Tensor:
    for j in range(n):
        t = t0 + j * h
        k1 = as_float(func(y, t, *args))
        k2 = as_float(func(y + 0.5 * h * k1, t + 0.5 * h, *args))
        k3 = as_float(func(y + 0.5 * h * k2, t + 0.5 * h, *args))
        k4 = as_float(func(y + h * k3, t + h, *args))
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def _steps(func: Callable, y: Tensor, t0: Tensor, t1: Tensor, args: tuple, rtol: float, atol: float) -> int:
    """Steps for the interval: Richardson's estimate of the error of 16 steps (RK4's error falls
    as n^-4), scaled to the tolerance, computed on the values."""
    with no_grad():
        y, t0, t1 = y.detach(), t0.detach(), t1.detach()
        args = tuple(a.detach() if isinstance(a, Tensor) else a for a in args)
        coarse = _rk4(func, y, t0, (t1 - t0) / 8, 8, args).numpy()
        fine = _rk4(func, y, t0, (t1 - t0) / 16, 16, args).numpy()
    scale = atol + rtol * np.abs(fine)
    ratio = float(np.max(np.abs(fine - coarse) / 15.0 / scale)) if fine.size else 0.0
    if not np.isfinite(ratio):
        raise OpValueError("odeint: the solution is not finite on the interval (a blow-up or a stiff problem?)")
    n = int(np.ceil(16 * max(ratio, 1e-12) ** 0.25 * 1.2))
    if n > _MAX_STEPS:
        raise OpValueError(f"odeint: more than {_MAX_STEPS} steps per interval needed (a stiff problem?)")
    return max(n, 16)


def odeint(
    func: Callable, y0: Any, t: Any, args: tuple = (), rtol: float = 1e-10, atol: float = 1e-12, **kwargs: Any
) -> Tensor:
    """y(t) for dy/dt = func(y, t, *args), y(t[0]) = y0; rows of the result follow t."""
    y = as_float(y0)
    ts = as_float(t)
    if ts.ndim != 1 or ts.shape[0] < 1:
        raise OpValueError(f"odeint: t must be a 1-D sequence of times, got shape {tuple(ts.shape)}")
    args = tuple(as_float(a) if isinstance(a, (Tensor, np.ndarray, list, float)) else a for a in args)
    ys = [y]
    for i in range(ts.shape[0] - 1):
        n = _steps(func, y, ts[i], ts[i + 1], args, rtol, atol)
        y = _rk4(func, y, ts[i], (ts[i + 1] - ts[i]) / n, n, args)
        ys.append(y)
    return ops.stack(ys, 0)
