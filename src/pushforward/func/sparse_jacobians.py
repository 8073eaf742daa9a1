"""Sparse Jacobians and Hessians: detect the pattern, color it, then one batched pass per call.

`sparse_jacfwd(f)` returns x -> J as a scipy.sparse.csr_array. The first call for an input shape
detects the pattern (`jacobian_sparsity`, unless `pattern=` is given) and colors its columns; every
call then runs ONE vector-mode pass with one tangent per color (the sum of that color's unit
vectors) and reads each nonzero off the compressed Jacobian. `sparse_jacrev` colors the rows and
sends one cotangent per color through one backward pass; `sparse_hessian` star-colors the Hessian
pattern and runs one forward-over-reverse pass (a batch of Hessian-vector products).

f takes one tensor (any shape; its elements are the columns, in C order) and returns one tensor.
The returned functions also take NumPy arrays, so they plug into SciPy directly:
``solve_ivp(..., jac=lambda t, y: J(y))`` and ``minimize(..., method="trust-constr", hess=H)``.

>>> import pushforward as pf
>>> J = sparse_jacfwd(lambda x: x[1:] ** 2 - x[:-1])
>>> J(pf.tensor([1.0, 2.0, 3.0])).toarray().tolist()
[[-1.0, 4.0, 0.0], [0.0, -1.0, 6.0]]
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..autograd import forward_ad as fwAD
from ..autograd.jacobian_util import unbatch
from ..core.batched import BatchedTensor, new_batch_level
from ..core.tensor import Tensor, wrap
from ..engine.grad_mode import enable_grad, no_grad
from ..errors import OpError, OpTypeError, OpValueError
from .coloring import (
    PatternLike,
    as_pattern,
    check_symmetric,
    column_coloring,
    decompress_columns,
    decompress_rows,
    decompress_star,
    row_coloring,
    seed_matrix,
    star_coloring,
)
from .sparsity import check_one_tensor, hessian_sparsity, jacobian_sparsity
from .reverse_levels import transform_running
from .transforms import grad, vjp

__all__ = ["sparse_jacfwd", "sparse_jacrev", "sparse_hessian"]


class _Plan:
    """What one input shape needs: the pattern, the coloring and its seed matrix."""

    __slots__ = ("pattern", "colors", "seed")

    def __init__(self, pattern: sp.csr_array, colors: np.ndarray) -> None:
        self.pattern = pattern
        self.colors = colors
        self.seed = seed_matrix(colors) if len(colors) else np.zeros((0, 1))


def _one_input(args: tuple, kwargs: dict, who: str):
    """The one input a sparse transform differentiates with respect to (its pattern is one matrix
    over one flat vector); several give an error saying how to pack them."""
    if len(args) == 1 and not kwargs:
        return args[0]
    got = f"{len(args)} positional argument(s)" + (f" and keyword argument(s) {sorted(kwargs)}" if kwargs else "")
    raise OpTypeError(
        f"{who}: the sparse transforms take one input tensor (the Jacobian's sparsity pattern is over one flat "
        f"vector), got {got}. To differentiate with respect to one of several inputs, fix the others "
        "(the argnums of jacfwd/jacrev): sparse_jacfwd(lambda a: f(a, b))(a); with respect to several, pack them "
        "into one flat vector: sparse_jacfwd(lambda v: f(v[:n], v[n:]))(pf.cat([a.flatten(), b.flatten()]))"
    )


def _input(x, who: str) -> Tensor:
    if transform_running():
        # the result is a scipy array: a derivative an enclosing transform takes through it (of x, or
        # of a tensor f closes over) would be lost without a word
        raise OpError(
            f"{who}: called inside another transform (a dual level, grad, vjp, jacrev or vmap), which cannot "
            "differentiate the scipy.sparse result; use jacfwd, jacrev or hessian there"
        )
    x = check_one_tensor(x, who)
    if x.dtype.kind not in "f":
        raise OpValueError(f"{who}: the input must be a floating tensor, got dtype {x.dtype} (shape {tuple(x.shape)})")
    return x.detach()


def _planner(f: Callable, pattern, who: str, detect: Callable, color: Callable, square: bool) -> Callable:
    """plan(x): the cached _Plan for x's shape (detected and colored on first use)."""
    cache: dict = {}
    given = None if pattern is None else as_pattern(pattern, who)
    if given is not None and square:
        check_symmetric(given, who)

    def plan(x: Tensor) -> _Plan:
        key = (tuple(x.shape), x.dtype)
        p = cache.get(key)
        if p is None:
            n = x.numel()
            pat = detect(f, x) if given is None else given
            if pat.shape[1] != n or (square and pat.shape[0] != n):
                raise OpValueError(
                    f"{who}: pattern has shape {tuple(pat.shape)}, but the input has {n} elements "
                    f"(shape {tuple(x.shape)})"
                )
            p = cache[key] = _Plan(pat, color(pat))
        return p

    return plan


def _check_rows(who: str, p: _Plan, y: Tensor, x: Tensor) -> None:
    if p.pattern.shape[0] != y.numel():
        raise OpValueError(
            f"{who}: pattern has shape {tuple(p.pattern.shape)}, but f maps shape {tuple(x.shape)} to "
            f"shape {tuple(y.shape)}: the Jacobian has shape ({y.numel()}, {x.numel()})"
        )


def sparse_jacfwd(f: Callable, pattern: PatternLike | None = None) -> Callable:
    """x -> f's Jacobian at x as a csr_array: one vector-mode pass with one tangent per column color.

    >>> import pushforward as pf
    >>> sparse_jacfwd(lambda x: x.sin())(pf.zeros(2)).toarray().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    plan = _planner(f, pattern, "sparse_jacfwd", jacobian_sparsity, column_coloring, False)

    def jac(*args, **kwargs) -> sp.csr_array:
        x = _input(_one_input(args, kwargs, "sparse_jacfwd"), "sparse_jacfwd")
        p = plan(x)
        k = p.seed.shape[1]
        tangents = wrap(np.ascontiguousarray(p.seed.T.astype(x.dtype)).reshape((k, *x.shape)))
        with no_grad(), fwAD.dual_level(batch=k) as level:
            y = check_one_tensor(f(fwAD.make_dual(x, tangents, level=level)), "sparse_jacfwd", "an output")
            prim, tan = fwAD.unpack_dual(y, level=level)
            _check_rows("sparse_jacfwd", p, prim, x)
            b = np.zeros((prim.numel(), k)) if tan is None else tan._data.reshape(k, -1).T
        return decompress_columns(p.pattern, p.colors, b)

    jac.__name__ = f"sparse_jacfwd({getattr(f, '__name__', 'f')})"
    return jac


def sparse_jacrev(f: Callable, pattern: PatternLike | None = None) -> Callable:
    """x -> f's Jacobian at x as a csr_array: one backward pass with one cotangent per row color.

    >>> import pushforward as pf
    >>> sparse_jacrev(lambda x: x * x)(pf.tensor([1.0, 2.0])).toarray().tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    plan = _planner(f, pattern, "sparse_jacrev", jacobian_sparsity, row_coloring, False)

    def jac(*args, **kwargs) -> sp.csr_array:
        x = _input(_one_input(args, kwargs, "sparse_jacrev"), "sparse_jacrev")
        p = plan(x)
        y, pullback = vjp(f, x)
        y = check_one_tensor(y, "sparse_jacrev", "an output")
        _check_rows("sparse_jacrev", p, y, x)
        k = p.seed.shape[1]
        cts = np.ascontiguousarray(p.seed.T.astype(y.dtype)).reshape((k, *y.shape))
        if k == 1:
            g = pullback(wrap(cts[0]))[0].unsqueeze(0)
        else:
            level = new_batch_level()
            g = unbatch(pullback(BatchedTensor(wrap(cts), level))[0], level, k)
        return decompress_rows(p.pattern, p.colors, g._data.reshape(k, -1))

    jac.__name__ = f"sparse_jacrev({getattr(f, '__name__', 'f')})"
    return jac


def sparse_hessian(f: Callable, pattern: PatternLike | None = None) -> Callable:
    """x -> the Hessian of scalar f at x as a csr_array: star coloring of its pattern, then one
    forward-over-reverse pass (one Hessian-vector product per color, batched).

    >>> import pushforward as pf
    >>> sparse_hessian(lambda x: (x ** 3).sum())(pf.tensor([1.0, 2.0])).toarray().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    plan = _planner(f, pattern, "sparse_hessian", hessian_sparsity, star_coloring, True)
    df = grad(_scalar(f))

    def hess(*args, **kwargs) -> sp.csr_array:
        x = _input(_one_input(args, kwargs, "sparse_hessian"), "sparse_hessian")
        p = plan(x)
        k = p.seed.shape[1]
        tangents = wrap(np.ascontiguousarray(p.seed.T.astype(x.dtype)).reshape((k, *x.shape)))
        with fwAD.untracked_level(batch=k) as level, enable_grad():
            g = df(fwAD.make_dual(x, tangents, level=level))
            tan = fwAD.unpack_dual(g, level=level).tangent
        n = x.numel()
        b = np.zeros((n, k)) if tan is None else tan._data.reshape(k, n).T
        return decompress_star(p.pattern, p.colors, b)

    hess.__name__ = f"sparse_hessian({getattr(f, '__name__', 'f')})"
    return hess


def _scalar(f: Callable) -> Callable:
    def checked(x: Tensor) -> Tensor:
        y = check_one_tensor(f(x), "sparse_hessian", "an output")
        if y.numel() != 1:
            raise OpValueError(f"sparse_hessian: f must return a single element, got shape {tuple(y.shape)}")
        return y.reshape(())

    return checked
