"""Checking Taylor mode: `jet` to order K against K nested dual levels along the same line.

>>> import pushforward as pf
>>> check_jet(pf.sin, (pf.tensor([0.5, 1.0]),), (pf.tensor([1.0, 2.0]),), order=3)
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..autograd import forward_ad as fwAD
from ..core.creation import zeros_like
from ..core.pytree import tree_flatten
from ..core.tensor import Tensor
from ..func.jet import jet

__all__ = ["nested_derivatives", "check_jet"]


def nested_derivatives(f: Callable, primals: Sequence, directions: Sequence, order: int) -> list:
    """[d^k/dt^k f(x + t v) at 0 for k = 1..order] by `order` nested dual levels (each a list of
    the flattened outputs' derivatives)."""
    # each order from fresh copies of the primals: f may write its inputs in place
    return [_leaves(_derivative(f, directions, k)(*[p.clone() for p in primals])) for k in range(1, order + 1)]


def _derivative(f: Callable, directions: Sequence, k: int) -> Callable:
    if k == 0:
        return f

    inner = _derivative(f, directions, k - 1)

    def g(*xs):
        with fwAD.dual_level():
            # (a copy of each direction: make_dual keeps it as the tangent, which f may write in place)
            out = inner(*[fwAD.make_dual(x, v.clone()) for x, v in zip(xs, directions)])
            leaves, _ = tree_flatten(out)
            res = []
            for o in leaves:
                t = fwAD.unpack_dual(o).tangent if isinstance(o, Tensor) else None
                res.append(zeros_like(o) if t is None else t)
            return tuple(res)

    return g


def _leaves(out) -> list:
    leaves, _ = tree_flatten(out)
    return leaves


def check_jet(
    f: Callable, primals: Sequence, directions: Sequence, *, order: int = 4, rtol: float = 1e-7, atol: float = 1e-9
) -> None:
    """Raise AssertionError unless jet(f) along x + t v agrees with nested dual levels to `order`."""
    zero = [zeros_like(v) for v in directions]
    series = tuple([v] + [z] * (order - 1) for v, z in zip(directions, zero))
    _, terms = jet(f, tuple(p.clone() for p in primals), series)
    got = _leaves_of_terms(terms, order)
    want = nested_derivatives(f, primals, directions, order)
    for k in range(order):
        for i, (a, b) in enumerate(zip(got[k], want[k])):
            a, b = _values(a), _values(b)
            scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol * scale, equal_nan=True):
                err = np.max(np.abs(a - b)) if a.shape == b.shape else f"shapes {a.shape} vs {b.shape}"
                raise AssertionError(
                    f"jet order {k + 1}, output {i}: Taylor mode and nested dual levels disagree (max |diff| "
                    f"{err}):\njet:    {a}\nnested: {b}"
                )


def _leaves_of_terms(terms, order: int) -> list:
    """Per order k, the flattened outputs' k-th derivatives (terms: lists of K tensors per output)."""
    if isinstance(terms, list) and (not terms or isinstance(terms[0], Tensor)):
        return [[terms[k]] for k in range(order)]
    flat = []

    def walk(t):
        if isinstance(t, list) and t and isinstance(t[0], Tensor):
            flat.append(t)
        elif isinstance(t, dict):
            for v in t.values():
                walk(v)
        elif isinstance(t, (tuple, list)):
            for v in t:
                walk(v)

    walk(terms)
    return [[s[k] for s in flat] for k in range(order)]


def _values(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if isinstance(t, Tensor) else t)
