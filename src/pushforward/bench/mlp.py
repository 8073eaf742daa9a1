"""A small MLP, tanh(x @ W1 + b1) @ W2 + b2 (16 inputs, 32 hidden units, 1 output), and its derivatives.

The size is the number of elements of the input batch x (16 features per example). The loss is
the mean squared error against targets y; per-example gradients are those of each example's
squared error (`vmap(grad(...))`).

>>> import numpy as np
>>> from pushforward.bench.mlp import numpy_grad, numpy_per_example, setup
>>> W1, b1, W2, b2, x, y, v = setup(64)
>>> per = numpy_per_example(W1, b1, W2, b2, x, y)
>>> all(np.allclose(p.mean(axis=0), g) for p, g in zip(per, numpy_grad(W1, b1, W2, b2, x, y)))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from ..func import grad as _grad, vmap as _vmap
from .workload import Workload, inputs, jax_ready, tensors

__all__ = ["D", "H", "setup", "mlp", "losses", "numpy_jvp", "numpy_grad", "numpy_per_example", "WORKLOADS"]

D, H = 16, 32
_PARAMS = (0, 1, 2, 3)


def setup(n: int) -> list[np.ndarray]:
    """W1, b1, W2, b2, x, y, v for an input batch of n elements (n // 16 examples, at least one)."""
    b = max(1, n // D)
    W1, b1, W2, b2, x, y, v = inputs(1, (D, H), (H,), (H, 1), (1,), (b, D), (b, 1), (b, D))
    return [W1 / np.sqrt(D), b1, W2 / np.sqrt(H), b2, x, y, v]


def mlp(lib: Any, W1: Any, b1: Any, W2: Any, b2: Any, x: Any) -> Any:
    """The network in any library with `tanh` (np, pf, torch, jax.numpy)."""
    return lib.tanh(x @ W1 + b1) @ W2 + b2


def losses(lib: Any) -> tuple:
    """(mean squared error over the batch, one example's squared error) in library `lib`."""

    def loss(W1, b1, W2, b2, x, y):
        return ((mlp(lib, W1, b1, W2, b2, x) - y) ** 2).mean()

    def loss_one(W1, b1, W2, b2, x, y):  # x of shape (D,), y of shape (1,)
        return ((mlp(lib, W1, b1, W2, b2, x) - y) ** 2).sum()

    return loss, loss_one


def numpy_jvp(W1, b1, W2, b2, x, v):
    """The network's jvp with respect to its input x, along v, by hand."""
    h = np.tanh(x @ W1 + b1)
    return ((1 - h * h) * (v @ W1)) @ W2


def numpy_grad(W1, b1, W2, b2, x, y):
    """The gradient of the mean squared error with respect to (W1, b1, W2, b2), by hand."""
    h = np.tanh(x @ W1 + b1)
    r = (2.0 / len(x)) * (h @ W2 + b2 - y)
    dz = (r @ W2.T) * (1 - h * h)
    return x.T @ dz, dz.sum(axis=0), h.T @ r, r.sum(axis=0)


def numpy_per_example(W1, b1, W2, b2, x, y):
    """Each example's gradient of its squared error, stacked along a leading axis, by hand."""
    h = np.tanh(x @ W1 + b1)
    r = 2.0 * (h @ W2 + b2 - y)
    dz = (r @ W2.T) * (1 - h * h)
    return x[:, :, None] * dz[:, None, :], dz, h[:, :, None] * r[:, None, :], r


# ---- pushforward


def _pf_jvp(W1, b1, W2, b2, x, v):
    with fwAD.dual_level():
        return fwAD.unpack_dual(mlp(pf, W1, b1, W2, b2, fwAD.make_dual(x, v))).tangent


_IN_DIMS = (None, None, None, None, 0, 0)  # the parameters shared, x and y batched
_pf_grad = _grad(losses(pf)[0], argnums=_PARAMS)
_pf_per_example = _vmap(_grad(losses(pf)[1], argnums=_PARAMS), in_dims=_IN_DIMS)


def _pf(fn, last):
    # the arguments: the parameters, x, then y (gradients) or v (the jvp)
    return lambda n: (fn, tensors(*setup(n)[:5], setup(n)[last]))


def _np(fn, last):
    def build(n):
        args = setup(n)[:5] + [setup(n)[last]]
        return lambda: fn(*args)

    return build


# ---- torch


def _torch_args(torch, n, last):
    a = setup(n)
    return [torch.from_numpy(t) for t in a[:5] + [a[last]]]


def _torch_jvp(torch, n):
    import torch.autograd.forward_ad as tfwAD

    W1, b1, W2, b2, x, v = _torch_args(torch, n, 6)

    def run():
        with tfwAD.dual_level():
            return tfwAD.unpack_dual(mlp(torch, W1, b1, W2, b2, tfwAD.make_dual(x, v))).tangent

    return run


def _torch_grad(torch, n):
    W1, b1, W2, b2, x, y = _torch_args(torch, n, 5)
    params = [p.requires_grad_() for p in (W1, b1, W2, b2)]
    loss = losses(torch)[0]
    return lambda: torch.autograd.grad(loss(*params, x, y), params)


def _torch_per_example(torch, n):
    args = _torch_args(torch, n, 5)
    fn = torch.func.vmap(torch.func.grad(losses(torch)[1], argnums=_PARAMS), in_dims=_IN_DIMS)
    return lambda: fn(*args)


# ---- JAX


def _jax(kind):
    def build(jax, n):
        a, jnp = setup(n), jax.numpy
        loss, loss_one = losses(jnp)
        if kind == "jvp":
            fn = jax.jit(lambda W1, b1, W2, b2, x, v: jax.jvp(lambda z: mlp(jnp, W1, b1, W2, b2, z), (x,), (v,))[1])
            last = 6
        elif kind == "grad":
            fn, last = jax.jit(jax.grad(loss, argnums=_PARAMS)), 5
        else:
            fn, last = jax.jit(jax.vmap(jax.grad(loss_one, argnums=_PARAMS), in_axes=_IN_DIMS)), 5
        return jax_ready(fn, *(jax.numpy.asarray(t) for t in a[:5] + [a[last]]))

    return build


_NET = "an MLP 16-32-1 (tanh)"
_SIZE = "elements of the input batch (16 per example)"
WORKLOADS = [
    Workload(
        "mlp-jvp",
        f"jvp of {_NET} with respect to its input",
        _SIZE,
        _pf(_pf_jvp, 6),
        _np(numpy_jvp, 6),
        _torch_jvp,
        _jax("jvp"),
        min_size=D,
    ),
    Workload(
        "mlp-grad",
        f"gradient of the mean squared error of {_NET}",
        _SIZE,
        _pf(_pf_grad, 5),
        _np(numpy_grad, 5),
        _torch_grad,
        _jax("grad"),
        min_size=D,
    ),
    Workload(
        "mlp-per-example",
        f"per-example gradients of {_NET}, vmap(grad)",
        _SIZE,
        _pf(_pf_per_example, 5),
        _np(numpy_per_example, 5),
        _torch_per_example,
        _jax("per-example"),
        min_size=D,
        max_size=2**18,
    ),
]
