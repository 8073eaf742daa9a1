"""torch as the fuzzer's programs see it: torch itself, but for functions whose torch values are
known to be less accurate than float64 allows, computed by SciPy (the derivatives stay torch's).

torch's trigamma, `polygamma(1, x)`, is off by up to 5e-10 relative on (0.05, 3) (mpmath as the
reference; SciPy's is within 1e-15, pushforward's is SciPy's): a program that amplifies it (the cos
of a large multiple of a function of it) then differs from pushforward's exact value by more than
the tolerance, and the primal arbiter, which trusts torch's values, blamed pushforward.

Where torch has no derivative for a function (heaviside, floor_divide) or a wrong one (ldexp by a
negative integer exponent), a torch composition with the same values stands in, so that its
programs' derivatives have a reference.
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


def _heaviside(x, values):
    # torch 2.13 has no derivative for heaviside (forward or backward): the same step as a where,
    # whose derivative is the step's (zero in x, values' own where x == 0)
    return torch.where(x == 0, values, (x > 0).to(values.dtype))


def _floor_divide(a, b):
    # torch 2.13 has no derivative for floor_divide; div's floor rounding mode is the same values
    # with the derivative of a piecewise constant (zero)
    return torch.div(a, b, rounding_mode="floor")


def _ldexp(x, e):
    # torch 2.13's derivative of ldexp by an integer exponent multiplies by 2 ** e computed in
    # integers, 0 for e < 0 (finite differences give 2 ** e, as pushforward); x * 2.0 ** e is the
    # same values (a power of two is exact) with the right derivative
    return torch.ldexp(x, e) if e.is_floating_point() else x * torch.pow(2.0, e)


TORCH = _Module(
    torch,
    polygamma=_polygamma,
    special=_Module(torch.special, polygamma=_polygamma),
    heaviside=_heaviside,
    floor_divide=_floor_divide,
    ldexp=_ldexp,
)
