"""Reverse mode through in-place code (docs/design.md, "Overwritten saved values"): a write into
memory a tape node saved keeps the saved values first, so NumPy-style in-place kernels have the
gradient of the program as written, at any order and under every transform. Each kernel is
written once over a namespace (NumPy or pushforward) and checked against finite differences of
its NumPy run, in both modes and at second order."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
from pushforward import func as F

RTOL = 1e-6


# -- kernels written the NumPy way: in-place slice updates -----------------------------------------


def lu(xp, a):
    """LU without pivoting, row by row, in place: L below the diagonal (unit), U on and above."""
    a = a.copy() if xp is np else a.clone()
    n = a.shape[0]
    for i in range(n - 1):
        a[i + 1 :, i] /= a[i, i]
        a[i + 1 :, i + 1 :] -= xp.outer(a[i + 1 :, i], a[i, i + 1 :])
    return a


def cholesky(xp, a):
    """Cholesky, column by column, in place (the upper triangle is left as it was, then dropped)."""
    a = a.copy() if xp is np else a.clone()
    n = a.shape[0]
    for j in range(n):
        a[j, j] -= (a[j, :j] * a[j, :j]).sum()
        a[j, j] = xp.sqrt(a[j, j])
        a[j + 1 :, j] -= a[j + 1 :, :j] @ a[j, :j]
        a[j + 1 :, j] /= a[j, j]
    return xp.tril(a)


def forward_substitution(xp, m, b):
    """Solve tril(m) x = b, overwriting (a copy of) b entry by entry."""
    x = b.copy() if xp is np else b.clone()
    n = x.shape[0]
    for i in range(n):
        x[i] /= m[i, i]
        x[i + 1 :] -= m[i + 1 :, i] * x[i]
    return x


def _spd(n: int, seed: int) -> np.ndarray:
    r = np.random.default_rng(seed).standard_normal((n, n))
    return r @ r.T + n * np.eye(n)


N = 4
A = _spd(N, 0)
W = np.random.default_rng(1).standard_normal((N, N))  # weights of the scalar function
V = np.random.default_rng(2).standard_normal((N, N))  # a direction
B = np.random.default_rng(3).standard_normal(N)

KERNELS = {
    "lu": lambda xp, a: lu(xp, a),
    "cholesky": lambda xp, a: cholesky(xp, a),
    # the matrix and the right-hand side both vary: b is the first column's direction
    "trsv": lambda xp, a: forward_substitution(xp, a, a[:, 0] * 0.5 + (B if xp is np else pf.tensor(B))),
}


def _scalar(xp, name):
    w = W if xp is np else pf.tensor(W)
    k = KERNELS[name]

    def f(a):
        out = k(xp, a)
        if out.ndim == 1:
            return (out * w[0]).sum()
        return (out * w).sum() + (out * out).sum() * 0.1

    return f


def _fd(f, a, v, h=1e-5):
    """Central difference of f along v (fourth order)."""
    return (-f(a + 2 * h * v) + 8 * f(a + h * v) - 8 * f(a - h * v) + f(a - 2 * h * v)) / (12 * h)


def _fd_grad(name) -> np.ndarray:
    f = _scalar(np, name)
    g = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        e = np.zeros_like(A)
        e[idx] = 1.0
        g[idx] = _fd(f, A, e)
    return g


def _fd_hvp(name) -> np.ndarray:
    """(grad(A + hV) - grad(A - hV)) / 2h with pushforward's (checked) reverse gradient."""
    f = _scalar(pf, name)

    def g(a):
        x = pf.tensor(a, requires_grad=True)
        return pf.autograd.grad(f(x), x)[0].numpy()

    return _fd(g, A, V, h=1e-4)


def close(got, want, rtol=RTOL):
    got = got.detach().numpy() if isinstance(got, pf.Tensor) else np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


@pytest.fixture(scope="module", params=list(KERNELS))
def kernel(request):
    name = request.param
    return name, _fd_grad(name), _fd_hvp(name)


def test_the_kernels_compute_what_they_say():
    close(lu(pf, pf.tensor(A)), lu(np, A), 1e-12)
    l_ = np.tril(lu(np, A), -1) + np.eye(N)
    np.testing.assert_allclose(l_ @ np.triu(lu(np, A)), A, rtol=1e-12)
    np.testing.assert_allclose(cholesky(np, A), np.linalg.cholesky(A), rtol=1e-12)
    np.testing.assert_allclose(np.tril(A) @ forward_substitution(np, A, B), B, rtol=1e-12, atol=1e-12)


def test_gradient_matches_finite_differences(kernel):
    name, g_fd, _ = kernel
    f = _scalar(pf, name)
    x = pf.tensor(A, requires_grad=True)
    close(pf.autograd.grad(f(x), x)[0], g_fd)
    close(F.grad(f)(pf.tensor(A)), g_fd)
    y, vjp_fn = F.vjp(f, pf.tensor(A))
    close(vjp_fn(pf.tensor(1.0))[0], g_fd)
    close(F.jacrev(f)(pf.tensor(A)), g_fd)
    # (the kernel does overwrite saved values: torch's rule refuses it)
    with pf.autograd.forbid_mutation_on_saved_tensors(), pytest.raises(pf.errors.SavedTensorModifiedError):
        pf.autograd.grad(f(x), x)


def test_jvp_and_the_adjoint_identity(kernel):
    """<J v, u> == <v, J^T u> with the jvp (forward mode, which never needed a saved value) and
    the gradient through the kept values."""
    name, g_fd, _ = kernel
    f = _scalar(pf, name)
    _, t = F.jvp(f, (pf.tensor(A),), (pf.tensor(V),))
    close(t, (g_fd * V).sum())
    k = KERNELS[name]
    u = np.random.default_rng(5).standard_normal(k(np, A).shape)
    _, jv = F.jvp(lambda a: k(pf, a), (pf.tensor(A),), (pf.tensor(V),))
    _, vjp_fn = F.vjp(lambda a: k(pf, a), pf.tensor(A))
    (jtu,) = vjp_fn(pf.tensor(u))
    np.testing.assert_allclose((jv.numpy() * u).sum(), (V * jtu.numpy()).sum(), rtol=1e-10)


def test_second_order(kernel):
    name, _, hv_fd = kernel
    f = _scalar(pf, name)
    # forward-over-reverse
    close(pf.autograd.functional.hvp(f, pf.tensor(A), pf.tensor(V))[1], hv_fd)
    close(F.jvp(F.grad(f), (pf.tensor(A),), (pf.tensor(V),))[1], hv_fd)
    # reverse-over-reverse: grad of grad with create_graph
    x = pf.tensor(A, requires_grad=True)
    (g,) = pf.autograd.grad(f(x), x, create_graph=True)
    close(pf.autograd.grad((g * pf.tensor(V)).sum(), x)[0], hv_fd)
    # the Hessian
    h = F.hessian(f)(pf.tensor(A)).numpy().reshape(N * N, N * N)
    close(h @ V.reshape(-1), hv_fd.reshape(-1))


def test_vmap_of_grad_and_compile_of_grad(kernel):
    name, g_fd, _ = kernel
    f = _scalar(pf, name)
    batch = pf.tensor(np.stack([A, A]))
    got = F.vmap(F.grad(f))(batch).numpy()
    close(got[0], g_fd)
    close(got[1], g_fd)
    c = pf.compile(F.grad(f))
    close(c(pf.tensor(A)), g_fd)
    close(c(pf.tensor(A)), g_fd)  # (the compiled run, after tracing)


# -- the example, saved outputs, views, custom Functions -----------------------------------


X = np.array([0.3, -0.7, 1.1])


def test_the_example_at_every_order():
    def f(x):
        y = x * 2.0
        z = pf.sin(y)  # sin saves y
        y.mul_(3.0)  # the value sin saw is gone
        return (z + y).sum()

    x = pf.tensor(X).requires_grad_()
    (g,) = pf.autograd.grad(f(x), x, create_graph=True)
    close(g, 2 * np.cos(2 * X) + 6, 1e-12)
    close(pf.autograd.grad(g.sum(), x)[0], -4 * np.sin(2 * X), 1e-12)
    v = np.array([1.0, -2.0, 0.5])
    close(pf.autograd.functional.hvp(f, pf.tensor(X), pf.tensor(v))[1], -4 * np.sin(2 * X) * v, 1e-12)
    close(F.hessian(f)(pf.tensor(X)), np.diag(-4 * np.sin(2 * X)), 1e-12)


def test_a_saved_output_overwritten():
    x = pf.tensor(X, requires_grad=True)
    y = x.exp()  # exp saves its output
    z = y * 1.0
    y.mul_(y)  # y = exp(2x)
    (g,) = pf.autograd.grad((z + y).sum(), x, create_graph=True)
    close(g, np.exp(X) + 2 * np.exp(2 * X), 1e-12)
    close(pf.autograd.grad(g.sum(), x)[0], np.exp(X) + 4 * np.exp(2 * X), 1e-12)


def test_a_saved_output_overwritten_through_a_detached_alias():
    # the alias has no root on the tape: the node that saved the memory must be found all the same
    x = pf.tensor(X, requires_grad=True)
    y = x.exp()
    y.detach().mul_(2.0)
    (g,) = pf.autograd.grad(y.sum(), x, create_graph=True)
    close(g, np.exp(X), 1e-12)
    close(pf.autograd.grad(g.sum(), x)[0], np.exp(X), 1e-12)
    # linalg.lu's P is a detached alias of the packed result its backward reads (fuzzer: P.cos_())
    a = pf.tensor([[0.3, -1.2], [0.8, 0.5]], dtype=pf.float64, requires_grad=True)
    p, low, up = pf.linalg.lu(a)
    (want,) = pf.autograd.grad(low.sum() + up.sum(), a, retain_graph=True)
    p.cos_()
    close(pf.autograd.grad(low.sum() + up.sum(), a)[0], want.numpy(), 1e-12)


def test_a_saved_view_overwritten_through_its_base_and_writes_elsewhere_copy_nothing():
    x = pf.tensor([0.5, 1.0, 1.5, 2.0], requires_grad=True)
    a = x * 1.0
    v = a[1:3]
    y = v.sin()  # saves the view
    note = y.grad_fn.versions[0]  # (core.tensor.note_value: [version], then the copy)
    a[:1].mul_(5.0)  # does not touch the view: kept as it is, no copy
    assert len(note) == 1
    a[3:].mul_(5.0)
    assert len(note) == 1
    a.mul_(2.0)  # overwrites it: the node copies the view (two elements, not the base)
    kept = note[1]
    assert kept is not v and kept.shape == (2,) and kept._base is None
    (g,) = pf.autograd.grad((y.sum() + a.sum()), x, create_graph=True)
    close(g, [10.0, 2 + np.cos(1.0), 2 + np.cos(1.5), 10.0], 1e-12)
    (gg,) = pf.autograd.grad(g.sum(), x)
    close(gg, [0.0, -np.sin(1.0), -np.sin(1.5), 0.0], 1e-12)


def test_released_or_freed_nodes_drop_their_notes():
    x = pf.tensor(X, requires_grad=True)
    a = x * 1.0
    a.sin().sum().backward()  # released
    a.mul_(2.0)  # nothing to keep: the note goes
    assert a._st.values is None
    b = x * 1.0
    s = b.sin()
    del s  # the graph is freed
    b.mul_(2.0)
    assert b._st.values is None


def test_a_tangent_overwritten_in_forward_over_reverse():
    """hvp through an in-place write: the kept copy carries the tangent at save time (the write
    updates the tangent in place too)."""

    def f(x):
        y = x * x
        z = y.sin()  # saves y (and its tangent 2 x v)
        y.add_(y)  # y = 2 x^2
        return (z + y * y).sum()

    v = np.array([1.0, 0.5, -1.0])
    # f = sum sin(x^2) + 4 x^4; f'' = 2 cos(x^2) - 4 x^2 sin(x^2) + 48 x^2
    want = (2 * np.cos(X**2) - 4 * X**2 * np.sin(X**2) + 48 * X**2) * v
    close(pf.autograd.functional.hvp(f, pf.tensor(X), pf.tensor(v))[1], want, 1e-12)
    close(F.jvp(F.grad(f), (pf.tensor(X),), (pf.tensor(v),))[1], want, 1e-12)
    close(F.grad(lambda x: (F.grad(f)(x) * pf.tensor(v)).sum())(pf.tensor(X)), want, 1e-12)


class Cube(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * g


class Exp(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_custom_function_saved_input_and_output_overwritten():
    x = pf.tensor(X, requires_grad=True)
    a = x * 1.0
    c = Cube.apply(a[1:])  # saves a view
    a.mul_(2.0)
    (g,) = pf.autograd.grad(c.sum() + a.sum(), x, create_graph=True)
    close(g, [2.0, 2 + 3 * X[1] ** 2, 2 + 3 * X[2] ** 2], 1e-12)
    close(pf.autograd.grad(g.sum(), x)[0], [0.0, 6 * X[1], 6 * X[2]], 1e-12)
    y = Exp.apply(x)  # saves its output
    z = y * 1.0
    y.mul_(3.0)
    close(pf.autograd.grad((z + y).sum(), x)[0], 4 * np.exp(X), 1e-12)


def test_the_switch_is_read_at_the_write():
    x = pf.tensor(X, requires_grad=True)
    a = x * 1.0
    s = a.sin()
    with pf.autograd.forbid_mutation_on_saved_tensors():
        a.mul_(2.0)
    with pytest.raises(pf.errors.SavedTensorModifiedError, match="SinBackward0"):
        s.sum().backward()

    @pf.autograd.forbid_mutation_on_saved_tensors()
    def write(t):
        t.mul_(2.0)

    a = x * 1.0
    c = Cube.apply(a)
    write(a)
    assert pf.autograd.is_mutation_on_saved_tensors_allowed()
    with pytest.raises(pf.errors.SavedTensorModifiedError, match="custom Function"):
        c.sum().backward()
