"""Helpers shared by the test files (imported as `from helpers import ...`)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import pushforward.autograd.forward_ad as fwAD

try:
    import torch
except ImportError:  # pragma: no cover - torch is in the test extras
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def values(a):
    """The primal values of a tensor (np.asarray raises on duals and tensors requiring grad)."""
    return a.detach().numpy() if hasattr(a, "detach") and hasattr(a, "_data") else np.asarray(a)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(values(a), values(b), rtol=tol, atol=tol)


def tangent(t, level=None):
    return fwAD.unpack_dual(t, level=level).tangent


# In-place op -> (in-place call, the out-of-place expression it must equal), shared by the
# reverse-mode and forward-mode in-place tests.
INPLACE = {
    "add_": (lambda t, o: t.add_(o), lambda t, o: t + o),
    "sub_": (lambda t, o: t.sub_(o), lambda t, o: t - o),
    "mul_": (lambda t, o: t.mul_(o), lambda t, o: t * o),
    "div_": (lambda t, o: t.div_(o), lambda t, o: t / o),
    "pow_": (lambda t, o: t.pow_(o), lambda t, o: t**o),
    "copy_": (lambda t, o: t.copy_(o), lambda t, o: o + 0 * t),
    "iadd": (lambda t, o: t.__iadd__(o), lambda t, o: t + o),
    "imul": (lambda t, o: t.__imul__(o), lambda t, o: t * o),
    "itruediv": (lambda t, o: t.__itruediv__(o), lambda t, o: t / o),
    "clamp_": (lambda t, o: t.clamp_(0.7, 1.6), lambda t, o: t.clamp(0.7, 1.6)),
}


def lu_rows(np, a):
    """Doolittle LU written with row loops, overwriting a (L below the diagonal, U above)."""
    n = a.shape[0]
    for i in range(n):
        for j in range(i):
            a[i, j] -= a[i, :j] @ a[:j, j]
            a[i, j] /= a[j, j]
        for j in range(i, n):
            a[i, j] -= a[i, :i] @ a[:i, j]
    return a


def durbin(np, r):
    """Durbin's recursion (a Toeplitz solve): flipped slices, vector products, a slice updated in place."""
    y = np.zeros_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def cholesky_in_place(np, a):
    """Cholesky by elements, overwriting the lower triangle of a (the upper one left as it is)."""
    a[0, 0] = np.sqrt(a[0, 0])
    for i in range(1, a.shape[0]):
        for j in range(i):
            a[i, j] -= np.dot(a[i, :j], a[j, :j])
            a[i, j] /= a[j, j]
        a[i, i] -= np.dot(a[i, :i], a[i, :i])
        a[i, i] = np.sqrt(a[i, i])
    return a


def _general_views(op, x, args, key=None):
    from pushforward.dispatch import general

    return general.run_general(op, (x,), args)


@contextlib.contextmanager
def fast_paths_off(monkeypatch, every: bool = True):
    """The lean in-place and write-back paths of lazy views off, and with `every` the view and
    write fast paths too (each view its own tangent, made with it: the general path)."""
    from pushforward.dispatch import classifier, inplace
    from pushforward.methods import indexing

    with monkeypatch.context() as m:
        m.setattr(inplace, "_write_lazy_view", lambda *a: False)
        m.setattr(indexing, "rewritten_lazy", lambda *a: False)
        if every:
            m.setattr(indexing, "run_view", _general_views)
            m.setattr(classifier, "run_view", _general_views)
            m.setattr(indexing, "write_view", lambda *a: False)
            m.setattr(inplace, "_write_arrays", lambda *a: False)
        yield
