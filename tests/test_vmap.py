"""Vector mode (issue 11): batched tangents, vmap, and Jacobians in one pass.

torch.func is the oracle where it has the feature; otherwise the unbatched jvp/vjp, column by
column, is (every op's rule is also checked by tests/test_ops.py::test_batched_forward_grad).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.autograd.functional import hessian as f_hessian, jacobian as f_jacobian
from pushforward.errors import OpError
from pushforward.func import grad, hessian, jacfwd, jacrev, jvp, vmap

RNG = np.random.default_rng(11)


def arr(*shape):
    return RNG.standard_normal(shape)


def T(a):
    return pf.tensor(np.array(a))


def TT(a):
    return torch.tensor(np.array(a))


def close(a, b, tol=1e-10):
    a = a.numpy() if hasattr(a, "numpy") else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else (b.numpy() if hasattr(b, "numpy") else np.asarray(b))
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# -- batched dual levels ---------------------------------------------------------------------------

def test_batched_level_propagates_every_tangent_in_one_pass():
    x, V = arr(4), arr(3, 4)
    with fwAD.dual_level(batch=3):
        y = (fwAD.make_dual(T(x), T(V)).sin() * 2.0).exp().sum()
        t = fwAD.unpack_dual(y).tangent
    assert t.shape == (3,)
    for b in range(3):
        with fwAD.dual_level():
            one = fwAD.unpack_dual((fwAD.make_dual(T(x), T(V[b])).sin() * 2.0).exp().sum()).tangent
        close(t[b], one)


def test_batched_level_checks_the_tangent_shape():
    with fwAD.dual_level(batch=3):
        with pytest.raises(OpError, match=r"batch 3 .*\(3, 4\).*got \(4,\)"):
            fwAD.make_dual(pf.zeros(4), pf.zeros(4))
    with pytest.raises(ValueError, match="positive int"):
        with fwAD.dual_level(batch=0):
            pass


def test_matrix_times_a_batch_of_vectors_is_not_transposed():
    """The trap the issue names: B == n must not read the batch of vectors as a matrix."""
    A, x, V = arr(3, 3), arr(3), arr(3, 3)
    with fwAD.dual_level(batch=3):
        t = fwAD.unpack_dual(T(A) @ fwAD.make_dual(T(x), T(V))).tangent
    close(t, V @ A.T)


def test_views_and_inplace_with_batched_tangents():
    x, V = arr(2, 3), arr(4, 2, 3)
    with fwAD.dual_level(batch=4):
        base = pf.zeros(2, 3)
        view = base[0]                          # a view of a non-dual tensor
        view.copy_(fwAD.make_dual(T(x[1]), T(V[:, 1])))  # writing a dual gives the base a batched tangent
        base.mul_(3.0)
        bt = fwAD.unpack_dual(base).tangent
        vt = fwAD.unpack_dual(view).tangent
    expect = np.zeros((4, 2, 3))
    expect[:, 0] = 3 * V[:, 1]
    close(bt, expect)
    close(vt, expect[:, 0])


def test_batched_level_nested_in_an_ordinary_level():
    x, u, V = arr(3), arr(3), arr(2, 3)
    with fwAD.dual_level() as outer:
        xo = fwAD.make_dual(T(x), T(u), level=outer)
        with fwAD.dual_level(batch=2) as inner:
            y = (fwAD.make_dual(xo, T(V), level=inner) ** 3).sum()
            t_inner = fwAD.unpack_dual(y, level=inner).tangent          # (2,): 3 x^2 . V[b]
        second = fwAD.unpack_dual(t_inner, level=outer).tangent      # d/dx along u: 6 x u . V[b]
    close(fwAD_free(t_inner), V @ (3 * x ** 2))
    close(second, V @ (6 * x * u))


def fwAD_free(t):
    return t.detach()


def test_reverse_over_batched_forward():
    """The batched tangents' computation is on the tape: their gradient is right."""
    x = T(arr(3)).requires_grad_()
    V = pf.eye(3)
    with fwAD.dual_level(batch=3):
        J = fwAD.unpack_dual((fwAD.make_dual(x, V) ** 3).sin()).tangent   # rows: diag Jacobian
        J.sum().backward()
    xt = TT(x.detach().numpy()).requires_grad_()
    torch.func.jacfwd(lambda v: (v ** 3).sin())(xt).sum().backward()
    close(x.grad, xt.grad)


# -- Jacobians in one pass -------------------------------------------------------------------------

def _tfn(x, A):
    return (A @ x).tanh() * x + x.sin()


def test_jacfwd_matches_torch_and_runs_one_pass(monkeypatch):
    A, x = arr(6, 6), arr(6)
    calls = []
    f = lambda v: (calls.append(1), _tfn(v, T(A)))[1]  # noqa: E731
    J = jacfwd(f)(T(x))
    assert len(calls) == 1
    close(J, torch.func.jacfwd(lambda v: _tfn(v, TT(A)))(TT(x)))
    calls.clear()
    close(jacfwd(f, chunk_size=4)(T(x)), J)
    assert len(calls) == 2


def test_jacfwd_several_inputs_and_outputs():
    a, b = arr(3), arr(2, 2)
    f = lambda x, y: (x * y.sum(), (x.exp()[:2] * y).sum(0))  # noqa: E731
    J = jacfwd(f, argnums=(0, 1))(T(a), T(b))
    Jt = torch.func.jacfwd(lambda x, y: (x * y.sum(), (x.exp()[:2] * y).sum(0)), argnums=(0, 1))(TT(a), TT(b))
    for r, rt in zip(J, Jt):
        for blk, blk_t in zip(r, rt):
            close(blk, blk_t)


def test_hessians_nest_vector_mode():
    x = arr(5)

    def rosen(v):
        return (100 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2).sum()
    H = torch.func.hessian(rosen)(TT(x))
    close(hessian(rosen)(T(x)), H, 1e-8)
    close(jacfwd(jacfwd(rosen))(T(x)), H, 1e-8)
    close(jacfwd(jacrev(rosen))(T(x)), H, 1e-8)
    close(f_hessian(rosen, T(x), vectorize=True, outer_jacobian_strategy="forward-mode"), H, 1e-8)


def test_functional_jacobian_vectorized_forward_mode():
    a, b = arr(4), arr(3)
    f = lambda x, y: (x.sin().sum() * y, x.exp())  # noqa: E731
    J1 = f_jacobian(f, (T(a), T(b)), strategy="forward-mode", vectorize=True)
    J2 = f_jacobian(f, (T(a), T(b)))
    for r1, r2 in zip(J1, J2):
        for x1, x2 in zip(r1, r2):
            close(x1, x2)
    with pytest.raises(RuntimeError, match="strict=True.*vectorize=True"):
        f_jacobian(f, (T(a), T(b)), strategy="forward-mode", vectorize=True, strict=True)


# -- vmap -------------------------------------------------------------------------------------------

def test_vmap_in_dims_out_dims_and_chunks():
    x, w = arr(5, 3), arr(3)
    out = vmap(lambda a, b: a * b, in_dims=(0, None))(T(x), T(w))
    close(out, x * w)
    out = vmap(lambda a: a.sum(), in_dims=1)(T(x))
    close(out, x.sum(0))
    out = vmap(lambda a: a * 2, out_dims=1)(T(x))
    close(out, (x * 2).T)
    close(vmap(lambda a: a @ a, chunk_size=2)(T(x)), (x * x).sum(1))
    nested = vmap(vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(T(arr(4)), T(arr(2)))
    assert nested.shape == (2, 4)


def test_vmap_matmul_matches_torch_for_every_operand_rank():
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3,))]:
        a, b = arr(4, *sa), arr(4, *sb)
        close(vmap(pf.matmul)(T(a), T(b)), torch.func.vmap(torch.matmul)(TT(a), TT(b)))
        close(vmap(pf.matmul, in_dims=(None, 0))(T(a[0]), T(b)),
              torch.func.vmap(torch.matmul, in_dims=(None, 0))(TT(a[0]), TT(b)))


def test_vmap_errors_name_the_problem():
    with pytest.raises(ValueError, match="different batch sizes"):
        vmap(pf.add)(pf.zeros(3), pf.zeros(4))
    with pytest.raises(ValueError, match="in_dims"):
        vmap(pf.add, in_dims=(0,))(pf.zeros(3), pf.zeros(3))
    with pytest.raises(ValueError, match="at least one argument"):
        vmap(pf.sin, in_dims=None)(pf.zeros(3))
    with pytest.raises(OpError, match="data-dependent"):
        vmap(lambda x: x.sum().item())(pf.zeros(3, 2))
    with pytest.raises(OpError, match="not batched"):
        w = pf.zeros(2)
        vmap(lambda x: w.add_(x))(pf.zeros(3, 2))


def test_vmap_inplace_on_batched_values():
    x = arr(3, 4)
    t = T(x)
    vmap(lambda a: a.mul_(2.0))(t)   # writes through to the argument, as torch
    close(t, 2 * x)


def test_per_sample_gradients_of_an_mlp():
    W1, b1, W2 = arr(5, 8), arr(8), arr(8)
    X, Y = arr(16, 5), arr(16)

    def loss(p, x, y):
        w1, c1, w2 = p
        return ((x @ w1 + c1).tanh() @ w2 - y) ** 2

    g = vmap(grad(loss), in_dims=(None, 0, 0))((T(W1), T(b1), T(W2)), T(X), T(Y))
    gt = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))((TT(W1), TT(b1), TT(W2)), TT(X), TT(Y))
    for a, b in zip(g, gt):
        close(a, b)


def test_vmap_composes_with_jvp_both_ways():
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    xs, vs = arr(3, 4), arr(3, 4)
    _, t1 = vmap(lambda x, v: jvp(f, (x,), (v,)))(T(xs), T(vs))
    _, t2 = jvp(vmap(f), (T(xs),), (T(vs),))
    _, tt = torch.func.vmap(lambda x, v: torch.func.jvp(f, (x,), (v,)))(TT(xs), TT(vs))
    close(t1, tt)
    close(t2, tt)
    hv = vmap(lambda x, v: jvp(grad(f), (x,), (v,))[1])(T(xs), T(vs))
    close(hv, torch.func.vmap(lambda x, v: torch.func.jvp(torch.func.grad(f), (x,), (v,))[1])(TT(xs), TT(vs)))


def test_grad_of_a_vmapped_function():
    w, X = arr(3), arr(4, 3)
    g = grad(lambda v: vmap(lambda x: (x * v).sin().sum())(T(X)).sum())(T(w))
    gt = torch.func.grad(lambda v: torch.func.vmap(lambda x: (x * v).sin().sum())(TT(X)).sum())(TT(w))
    close(g, gt)
