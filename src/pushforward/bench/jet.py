"""Taylor mode: `pf.func.jet` of the 32-op chain to order 4 along a direction.

The input curve is x(t) = x + v t (JAX's convention: series = [v, 0, 0, 0] are the curve's
derivatives); the result is the chain's value and its first four derivatives along the curve.
By hand, NumPy propagates normalised Taylor coefficients through each op (the Cauchy product for
`*`, the recurrences of sin/cos and tanh).

>>> import numpy as np
>>> from pushforward.bench.jet import numpy_jet
>>> from pushforward.bench.chain import numpy_jvp
>>> x, v = np.array([0.3, 0.7]), np.array([1.0, -2.0])
>>> primal, series = numpy_jet(x, v)
>>> bool(np.allclose(series[0], numpy_jvp(x, v)))
True
"""

from __future__ import annotations

import math

import numpy as np

import pushforward as pf
from .chain import DEPTH, chain
from .libraries import pf_feature
from .workload import Workload, inputs, jax_ready, tensors

__all__ = ["ORDER", "numpy_jet", "WORKLOADS"]

ORDER = 4


def _mul(a: list, b: list) -> list:
    return [sum(a[j] * b[k - j] for j in range(k + 1)) for k in range(len(a))]


def _sin(x: list) -> list:
    s, c = [np.sin(x[0])], [np.cos(x[0])]
    for k in range(1, len(x)):  # k s_k = sum_j j x_j c_(k-j), k c_k = -sum_j j x_j s_(k-j)
        s.append(sum(j * x[j] * c[k - j] for j in range(1, k + 1)) / k)
        c.append(-sum(j * x[j] * s[k - j] for j in range(1, k + 1)) / k)
    return s


def _tanh(x: list) -> list:
    t = [np.tanh(x[0])]
    u = [1 - t[0] * t[0]]  # u = 1 - tanh^2 = tanh'
    for k in range(1, len(x)):
        t.append(sum(j * x[j] * u[k - j] for j in range(1, k + 1)) / k)
        u.append(-sum(t[j] * t[k - j] for j in range(k + 1)))
    return t


def numpy_jet(x: np.ndarray, v: np.ndarray, order: int = ORDER) -> tuple:
    """(chain(x), [the k-th derivative of chain(x + v t) at t = 0 for k = 1..order]), by hand."""
    y = [x, v] + [np.zeros_like(x)] * (order - 1)  # normalised coefficients of x + v t
    for _ in range(DEPTH):
        y = [a + b for a, b in zip(_mul(_sin(y), y), _tanh(y))]
    return y[0], [math.factorial(k) * y[k] for k in range(1, order + 1)]


def _xv(n: int) -> list:
    return inputs(4, (n,), (n,))


def _pf_chain(x):
    return chain(pf, x)


def _pf_jet(n):
    jet = pf_feature("func.jet")

    def run(x, v):
        return jet(_pf_chain, (x,), ([v] + [pf.zeros_like(v)] * (ORDER - 1),))

    return run, tensors(*_xv(n))


def _np_jet(n):
    x, v = _xv(n)
    return lambda: numpy_jet(x, v)


def _jax_jet(jax, n):
    from jax.experimental import jet

    jnp = jax.numpy
    x, v = (jnp.asarray(a) for a in _xv(n))
    fn = jax.jit(lambda x, v: jet.jet(lambda y: chain(jnp, y), (x,), ([v] + [jnp.zeros_like(v)] * (ORDER - 1),)))
    return jax_ready(fn, x, v)


WORKLOADS = [
    Workload(
        "jet",
        f"Taylor mode: jet of the 32-op chain to order {ORDER} (pf.func.jet)",
        "elements of x",
        _pf_jet,
        _np_jet,
        None,
        _jax_jet,
        not_applicable={"torch": "PyTorch has no Taylor mode"},
    ),
]
