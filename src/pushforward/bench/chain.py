"""The element-wise chain: y = sin(y) * y + tanh(y), eight times (32 ops), and its derivatives.

Small sizes measure the cost of each op's dispatch (Python, Tensor objects, the tape); large ones
the array passes. The hand-written NumPy versions make one array pass per op of the derivative
formulas: no autodiff on NumPy's kernels can do fewer.

>>> import numpy as np
>>> from pushforward.bench.chain import chain, numpy_jvp
>>> x, v = np.array([0.3]), np.array([1.0])
>>> eps = 1e-6
>>> bool(abs((chain(np, x + eps) - chain(np, x - eps)) / (2 * eps) - numpy_jvp(x, v)) < 1e-6)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from ..func import grad as _grad
from ..autograd.functional import hvp as _hvp
from .workload import Workload, inputs, jax_ready, tensors

__all__ = ["chain", "chain_sum", "numpy_jvp", "numpy_jvp_by_op", "numpy_grad", "numpy_hvp", "WORKLOADS", "DEPTH"]

DEPTH = 8  # 8 steps of 4 ops


def chain(lib: Any, y: Any) -> Any:
    """The chain in any library with `sin` and `tanh` (np, pf, torch, jax.numpy)."""
    for _ in range(DEPTH):
        y = lib.sin(y) * y + lib.tanh(y)
    return y


def chain_sum(y: Any) -> Any:
    """The chain summed to a scalar (what the gradient and the hvp differentiate); pushforward's."""
    return chain(pf, y).sum()


def numpy_jvp(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The chain's jvp by hand: one pass per op of the tangent formulas."""
    y, ty = a, v
    for _ in range(DEPTH):
        s, th = np.sin(y), np.tanh(y)
        ty = y * (ty * np.cos(y)) + s * ty + ty * (1 - th * th)
        y = s * y + th
    return ty


def numpy_jvp_by_op(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The same passes as numpy_jvp, one op (and its tangent formula) per statement, each result
    named, as any op-by-op library computes them: NumPy reuses no temporary of a fused expression
    here (numpy_jvp's `y * (ty * cos(y)) + s * ty + ...` writes five of its passes into temporaries
    it owns; an op-by-op result belongs to its tensor)."""
    y, ty = a, v
    for _ in range(DEPTH):
        s = np.sin(y)
        ts = ty * np.cos(y)
        p = s * y
        tp = y * ts + s * ty
        th = np.tanh(y)
        tth = ty * (1 - th * th)
        y, ty = p + th, tp + tth
    return ty


def numpy_grad(a: np.ndarray) -> np.ndarray:
    """The gradient of the chain's sum by hand: the forward pass keeps what the backward reads."""
    y, tape = a, []
    for _ in range(DEPTH):
        s, t = np.sin(y), np.tanh(y)
        tape.append((y, s, t))
        y = s * y + t
    g = np.ones_like(y)
    for y, s, t in reversed(tape):
        g = g * (1 - t * t) + g * s + (g * y) * np.cos(y)
    return g


def numpy_hvp(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """H v for the chain's sum by hand: the chain is element-wise, so H is diagonal, f''(x) v, with
    f'' carried forward with f' (y' = g'(y) y', y'' = g''(y) y'^2 + g'(y) y'')."""
    y, d1, d2 = a, np.ones_like(a), np.zeros_like(a)
    for _ in range(DEPTH):
        s, c, t = np.sin(y), np.cos(y), np.tanh(y)
        sech2 = 1 - t * t
        g1 = c * y + s + sech2
        g2 = 2 * c - s * y - 2 * t * sech2
        d2 = g2 * d1 * d1 + g1 * d2
        d1 = g1 * d1
        y = s * y + t
    return d2 * v


def _xv(n: int) -> list[np.ndarray]:
    return inputs(0, (n,), (n,))


# ---- pushforward: one function each, run eagerly and through pf.compile


def _pf_primal(x):
    return chain(pf, x)


def _pf_jvp(x, v):
    with fwAD.dual_level():
        return fwAD.unpack_dual(chain(pf, fwAD.make_dual(x, v))).tangent


def _pf_hvp(x, v):
    return _hvp(chain_sum, x, v)[1]


_pf_grad = _grad(chain_sum)


def _pf(fn, nargs):
    return lambda n: (fn, tensors(*_xv(n)[:nargs]))


# ---- torch (eager: forward_ad and autograd.grad, the fastest torch offers for each)


def _torch_primal(torch, n):
    x = torch.from_numpy(_xv(n)[0])
    return lambda: chain(torch, x)


def _torch_jvp(torch, n):
    import torch.autograd.forward_ad as tfwAD

    x, v = (torch.from_numpy(a) for a in _xv(n))

    def run():
        with tfwAD.dual_level():
            return tfwAD.unpack_dual(chain(torch, tfwAD.make_dual(x, v))).tangent

    return run


def _torch_grad(torch, n):
    x = torch.from_numpy(_xv(n)[0]).requires_grad_()
    return lambda: torch.autograd.grad(chain(torch, x).sum(), x)[0]


def _torch_hvp(torch, n):
    x, v = (torch.from_numpy(a) for a in _xv(n))
    g = torch.func.grad(lambda y: chain(torch, y).sum())
    return lambda: torch.func.jvp(g, (x,), (v,))[1]


# ---- JAX (jit-compiled)


def _jax_fns(jax):
    jnp = jax.numpy
    f = lambda y: chain(jnp, y)  # noqa: E731
    s = lambda y: chain(jnp, y).sum()  # noqa: E731
    return {
        "primal": (jax.jit(f), 1),
        "jvp": (jax.jit(lambda x, v: jax.jvp(f, (x,), (v,))[1]), 2),
        "grad": (jax.jit(jax.grad(s)), 1),
        "hvp": (jax.jit(lambda x, v: jax.jvp(jax.grad(s), (x,), (v,))[1]), 2),
    }


def _jax(kind):
    def build(jax, n):
        fn, nargs = _jax_fns(jax)[kind]
        return jax_ready(fn, *(jax.numpy.asarray(a) for a in _xv(n)[:nargs]))

    return build


def _np(fn, nargs):
    def build(n):
        args = _xv(n)[:nargs]
        return lambda: fn(*args)

    return build


_TITLE = "the 32-op chain y = sin(y) * y + tanh(y)"
WORKLOADS = [
    Workload(
        "chain-primal",
        f"{_TITLE}, no derivative",
        "elements of y",
        _pf(_pf_primal, 1),
        _np(lambda a: chain(np, a), 1),
        _torch_primal,
        _jax("primal"),
    ),
    Workload(
        "chain-jvp", f"jvp of {_TITLE}", "elements of y", _pf(_pf_jvp, 2), _np(numpy_jvp, 2), _torch_jvp, _jax("jvp")
    ),
    Workload(
        "chain-grad",
        f"gradient of the sum of {_TITLE}",
        "elements of y",
        _pf(_pf_grad, 1),
        _np(numpy_grad, 1),
        _torch_grad,
        _jax("grad"),
    ),
    Workload(
        "chain-hvp",
        f"Hessian-vector product of the sum of {_TITLE} (forward-over-reverse)",
        "elements of y",
        _pf(_pf_hvp, 2),
        _np(numpy_hvp, 2),
        _torch_hvp,
        _jax("hvp"),
    ),
]
