"""torch as the fuzzer's programs see it: torch itself, but for functions whose torch values are
known to be less accurate than float64 allows, computed by SciPy (the derivatives stay torch's).

torch's trigamma, `polygamma(1, x)`, is off by up to 5e-10 relative on (0.05, 3) (mpmath as the
reference; SciPy's is within 1e-15, pushforward's is SciPy's): a program that amplifies it (the cos
of a large multiple of a function of it) then differs from pushforward's exact value by more than
the tolerance, and the primal arbiter, which trusts torch's values, blamed pushforward.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sps
import torch

__all__ = ["TORCH"]


class _Trigamma(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.from_numpy(np.asarray(sps.polygamma(1, x.detach().numpy()))).to(x.dtype)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.polygamma(2, x)

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * torch.polygamma(2, x)


def _polygamma(n, x):
    return _Trigamma.apply(x) if n == 1 and not x.is_complex() else torch.polygamma(n, x)


class _Module:
    """A module's attributes, some replaced."""

    def __init__(self, module, **replaced) -> None:
        self._module = module
        self.__dict__.update(replaced)

    def __getattr__(self, name):
        return getattr(self._module, name)


TORCH = _Module(torch, polygamma=_polygamma, special=_Module(torch.special, polygamma=_polygamma))
