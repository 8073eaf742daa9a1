"""Nested transforms whose inner functions close over outer variables: every combination against
closed forms, and the bugs found with them (docs/design.md, "Nested transforms")."""

import math

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD

F = pf.func
AF = pf.autograd.functional
t = pf.tensor


def val(x):
    return np.asarray(x.detach().numpy() if isinstance(x, pf.Tensor) else x)


# ---- the two programs that gave wrong numbers, in every spelling


def test_grad_of_grad_closing_over_the_outer_variable():
    assert float(F.grad(lambda x: F.grad(lambda y: x * y)(t(2.0)))(t(1.0))) == 1.0
    assert float(F.grad(lambda x: x * F.grad(lambda y: x * y)(t(2.0)))(t(1.0))) == 2.0


def test_the_same_through_vjp_jacrev_and_reverse_over_forward():
    def by_vjp(x):
        return x * F.vjp(lambda y: x * y, t(2.0))[1](t(1.0))[0]

    def by_jacrev(x):
        return x * F.jacrev(lambda y: x * y)(t(2.0))

    def by_jvp(x):
        return x * F.jvp(lambda y: x * y, (t(2.0),), (t(1.0),))[1]

    for f in (by_vjp, by_jacrev, by_jvp):
        assert float(F.grad(f)(t(1.0))) == 2.0, f.__name__
        assert float(F.jacrev(f)(t(1.0))) == 2.0, f.__name__
        assert float(F.jvp(f, (t(1.0),), (t(1.0),))[1]) == 2.0, f.__name__


def test_the_same_under_vmap_and_compile():
    def f(x):
        return x * F.grad(lambda y: x * y)(t(2.0))  # x^2

    np.testing.assert_array_equal(val(F.vmap(F.grad(f))(t([1.0, 3.0]))), [2.0, 6.0])
    assert float(pf.compile(F.grad(f))(t(1.0))) == 2.0
    assert float(F.grad(lambda x: F.vmap(F.grad(lambda y: x * y * y))(t([2.0, 3.0])).sum())(t(1.0))) == 10.0


def test_hessian_of_a_function_with_an_inner_gradient():
    def f(x):  # sum(x * x): the inner gradient is x
        return (x * F.grad(lambda y: (x * y).sum())(t([2.0, 1.0]))).sum()

    np.testing.assert_allclose(val(F.hessian(f)(t([1.0, 2.0]))), 2 * np.eye(2))
    np.testing.assert_allclose(val(F.jacfwd(F.jacrev(f))(t([1.0, 2.0]))), 2 * np.eye(2))


def test_results_of_nested_transforms_keep_no_tape():
    # the inner level records its backward pass for the outer one; the outer result is tape-free
    r = F.grad(lambda x: F.grad(lambda y: x * y * y)(t(2.0)))(t(1.0))
    assert not r.requires_grad and r.grad_fn is None
    h = F.jacrev(F.jacrev(lambda x: (x**3).sum()))(t([1.0, 2.0]))
    assert not h.requires_grad


# ---- the tape API, outer dual levels, autograd.functional


def test_autograd_grad_around_func_grad():
    x = t(1.0, requires_grad=True)
    g = F.grad(lambda y: x * y * y)(t(2.0))  # 4x
    assert g.requires_grad
    assert float(pf.autograd.grad(g * x, x)[0]) == 8.0


def test_outer_dual_level_around_func_grad():
    with fwAD.dual_level():
        x = fwAD.make_dual(t(1.0), t(1.0))
        g = F.grad(lambda y: x * y * y)(t(2.0))  # 4x
        p, tan = fwAD.unpack_dual(g)
        assert (float(p), float(tan)) == (4.0, 4.0)


def test_autograd_functional_nests_with_create_graph():
    f = lambda x: x * AF.vjp(lambda y: x * y * y, t(2.0), t(1.0), create_graph=True)[1]  # 4x^2
    assert float(AF.jacobian(f, t(1.0))) == 8.0
    g = lambda x: (x * AF.hvp(lambda y: (x * y**3).sum(), t([2.0]), t([1.0]), create_graph=True)[1]).sum()  # 12x^2
    np.testing.assert_allclose(val(AF.hessian(g, t([1.0]))), [[24.0]])


# ---- linearize, jet and the sparse Jacobians inside other transforms


def test_linearize_inside_other_transforms():
    def f(s):
        out, fn = F.linearize(lambda y: s * y * y, t(2.0))
        return fn(t(1.0))  # 4s

    np.testing.assert_array_equal(val(F.vmap(f)(t([1.0, 3.0]))), [4.0, 12.0])
    assert float(F.grad(f)(t(1.0))) == 4.0
    assert float(F.jvp(f, (t(1.0),), (t(1.0),))[1]) == 4.0
    # at the top level linearize still records J^T u once and reuses it
    out, fn = F.linearize(lambda y: y.sin(), t([0.0, 1.0]))
    np.testing.assert_allclose(val(fn(t([1.0, 1.0]))), [1.0, math.cos(1.0)])


def test_jet_of_functions_with_inner_transforms():
    def g(x):  # 4 x^2
        return F.grad(lambda y: x * x * y * y)(t(2.0))

    def h(x):  # 4 x^2 again, by a jvp closing over the series
        return F.jvp(lambda y: x * x * y * y, (t(2.0),), (t(1.0),))[1]

    for f in (g, h):
        y, (d1, d2) = F.jet(f, (t(1.0),), ([t(1.0), t(0.0)],))
        assert (float(y), float(d1), float(d2)) == (4.0, 8.0, 8.0)
    # a compiled gradient whose result carries jet's tangents runs eagerly, and says so
    with pytest.warns(RuntimeWarning, match="cannot compile"):
        y, (d1, d2) = F.jet(
            lambda x: pf.compile(F.grad(lambda y: x * x * y * y))(t(2.0)), (t(1.0),), ([t(1.0), t(0.0)],)
        )
    assert (float(y), float(d1), float(d2)) == (4.0, 8.0, 8.0)


def test_sparse_jacobians_with_inner_transforms_and_inside_them():
    def f(x):  # the gradient of sum(x^3) * x: the Jacobian is diag(6x) * x + 3x^2
        return F.grad(lambda y: (y**3).sum())(x) * x

    x = t([1.0, 2.0, 3.0])
    want = np.diag(6 * val(x) * val(x) + 3 * val(x) ** 2)
    np.testing.assert_allclose(F.sparse_jacfwd(f)(x).toarray(), want)
    np.testing.assert_allclose(F.sparse_jacrev(f)(x).toarray(), want)
    np.testing.assert_allclose(F.jacobian_sparsity(f, x).toarray(), np.ones((3, 3)))  # the dense pattern
    with pytest.raises(pf.errors.OpError, match="inside another transform"):
        F.grad(lambda s: pf.tensor(F.sparse_jacfwd(lambda y: s * y)(x).toarray()).sum())(t(1.0))


# ---- found by the transforms fuzz mode


def test_gradient_of_the_tangent_of_an_in_place_op():
    # reverse-over-forward through sqrt_: the tangent formula's recorded nodes kept the old tangent,
    # which the in-place update then overwrote (a wrong gradient, or a version error in vector mode)
    for batch in (None, 2):
        x = t([1.0, 2.0, 3.0], requires_grad=True)
        with fwAD.dual_level(**({} if batch is None else {"batch": batch})):
            d = fwAD.make_dual(x, pf.ones(3) if batch is None else pf.ones(2, 3))
            v = d + 1.91
            v.sqrt_()
            tan = fwAD.unpack_dual(v).tangent
            (g,) = pf.autograd.grad(tan.sum(), x)
        want = -1 / (4 * (val(x) + 1.91) ** 1.5) * (1 if batch is None else 2)
        np.testing.assert_allclose(val(g), want)


def test_numpy_eigh_reads_one_triangle():
    a = np.array([[2.0, 1.0], [5.0, 3.0]])

    def f(m, uplo):
        w, v = np.linalg.eigh(m, uplo)
        return w[1] ** 2 + 3 * v[0, 0] ** 2 + np.linalg.eigvalsh(m, uplo)[0]

    for uplo in ("L", "U"):
        g = val(F.grad(lambda m: f(m, uplo))(t(a)))
        fd = np.zeros((2, 2))
        for i in range(2):
            for j in range(2):
                e = np.zeros((2, 2))
                e[i, j] = 1e-6
                fd[i, j] = (f(a + e, uplo) - f(a - e, uplo)) / 2e-6
        np.testing.assert_allclose(g, fd, atol=1e-7)
        ignored = (0, 1) if uplo == "L" else (1, 0)
        assert g[ignored] == 0.0
    c = np.array([[4.0, 9.0], [2.0, 3.0]])
    np.testing.assert_allclose(val(np.linalg.cholesky(t(c))), np.linalg.cholesky(c))
    np.testing.assert_allclose(val(np.linalg.cholesky(t(c.T), upper=True)), np.linalg.cholesky(c.T, upper=True))


def test_einsum_that_permutes_has_torch_layout():
    x = t(np.arange(16.0).reshape(4, 4))
    v = pf.einsum("ij->ji", x)
    assert v.stride() == (1, 4)  # torch's (a view there; fresh memory here)
    assert pf.ones_like(v.t()).view(1, 8, -1).shape == (1, 8, 2)
    v[0, 0] = 100.0
    assert float(x[0, 0]) == 0.0


def test_jet_of_a_function_with_an_inner_vmap():
    def f(x):  # vmap over s of sum(x * s^2): [sum(x), 4 sum(x)]
        return F.vmap(lambda s: (x * s * s).sum())(t([1.0, 2.0]))

    y, (d1, d2) = F.jet(f, (t([1.0, 2.0]),), ([t([1.0, 1.0]), t([0.0, 0.0])],))
    assert type(y) is pf.Tensor
    np.testing.assert_array_equal(val(y), [3.0, 12.0])
    np.testing.assert_array_equal(val(d1), [2.0, 8.0])
    np.testing.assert_array_equal(val(d2), [0.0, 0.0])


def test_jacrev_of_an_einsum_of_tensors_that_require_grad():
    # the batched cotangents reach einsum's layout test of a batched operand (it read its array)
    a = t([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    b = t([[0.3, 0.1, -0.2], [1.0, 2.0, 0.5]])

    def f(x, y):
        return F.jacrev(lambda s: pf.einsum("ij,kj->ik", x * s, y))(t(1.0))

    out, fn = F.vjp(f, a, b)
    np.testing.assert_allclose(val(out), val(a) @ val(b).T)
    ga, gb = fn(pf.ones(2, 2))
    np.testing.assert_allclose(val(ga), np.ones((2, 2)) @ val(b))
    np.testing.assert_allclose(val(gb), np.ones((2, 2)).T @ val(a))


def test_nested_vmaps_around_reverse_mode_and_composites_that_loop():
    def f(a):
        return F.vmap(lambda b: F.hessian(lambda s: (a * b * s**3).sum())(t(1.0) + a.sum()))(t([1.0, 2.0, 3.0]))

    got = val(F.vmap(f)(t([[1.0, 2.0], [0.5, 0.25]])))
    # d2/ds2 of sum(a) * b * s^3 = 6 s b sum(a), at s = 1 + sum(a)
    for i, a in enumerate([[1.0, 2.0], [0.5, 0.25]]):
        sa = sum(a)
        np.testing.assert_allclose(got[i], [6 * (1 + sa) * b * sa for b in (1.0, 2.0, 3.0)])
    x = t([[1.0, 5.0, 2.0], [3.0, 0.5, 4.0]])
    g = F.hessian(lambda a: a.median(1).values.sum() * (a**2).sum())
    want = val(g(x))
    nested = val(F.vmap(F.vmap(g))(pf.stack([pf.stack([x, x])] * 2)))
    np.testing.assert_allclose(nested[1, 0], want)


def test_linearize_of_a_function_writing_in_place_into_saved_values():
    def f(x):
        y = x.exp()
        y.sin_()  # exp's backward keeps y: the transposed map cannot be recorded, forward mode can
        return y

    x = t([0.1, 0.2])
    out, fn = F.linearize(f, x)
    np.testing.assert_allclose(val(out), np.sin(np.exp(val(x))))
    np.testing.assert_allclose(val(fn(pf.ones(2))), np.cos(np.exp(val(x))) * np.exp(val(x)))


def test_in_place_ops_reading_their_target_twice_and_series_coefficients_on_the_tape():
    x = t([3.0], requires_grad=True)
    y = x * 1
    y.mul_(y)  # both operands read the old y (torch refuses this backward)
    y.sum().backward()
    np.testing.assert_allclose(val(x.grad), [6.0])

    def f(x):  # jacrev of a jet whose series is written in place (log_ of a square)
        def g(z):
            v = z.square()
            v.log_()
            return v

        return F.jet(g, (x,), ([pf.ones_like(x)],))[1][0]  # d/dt log((x + t)^2) = 2 / x

    np.testing.assert_allclose(val(F.jacrev(f)(t([2.0, 4.0]))), np.diag([-0.5, -0.125]))


def test_sparsity_detection_through_any_inner_transform_is_dense():
    x = pf.ones(2)
    for f in (
        lambda x: F.hessian(lambda y: (y**3 * x).sum())(x).sum(0),
        lambda x: F.jacfwd(lambda y: y * x)(x).sum(0),
        lambda x: F.vmap(lambda y: (y * x).sum())(pf.stack([x, x])),
        # the variable only moves the inner transform's point (a dual of the pattern tensor's array
        # dropped its pattern: an empty one, and sparse_jacfwd gave zeros)
        lambda x: F.hessian(lambda y: (y**3).sum())(x * 2.0).sum(0),
        lambda x: F.jvp(lambda y: y * y, (x * 2.0,), (pf.ones(2),))[1],
        lambda x: F.jvp(lambda y: y * y, (pf.ones(2),), (x * 2.0,))[1],
        lambda x: F.linearize(lambda y: y * y, x * 2.0)[1](pf.ones(2)),
    ):
        np.testing.assert_array_equal(F.jacobian_sparsity(f, x).toarray(), np.ones((2, 2), dtype=bool))
    j = F.sparse_jacfwd(lambda x: F.hessian(lambda y: (y**3).sum())(x * 2.0).sum(0))(x)
    np.testing.assert_allclose(j.toarray(), np.diag([12.0, 12.0]))  # d(6 * 2x)/dx


def test_vmap_around_a_jet_of_a_jet_whose_inner_point_is_batched():
    # the inner jet's variable carries a dual tangent inside a batch: its Taylor rules must see it
    # (they took the dual as a constant: wrong values under vmap only)
    def jet3(f, x):
        y, (d1, d2) = F.jet(f, (x,), ([pf.ones_like(x), pf.zeros_like(x)],))
        return pf.stack([y, d1, d2])

    def f(s):  # d/dx at x = 0.3 of x^2 cos(0.5 + s) and its derivatives along s
        return jet3(lambda x: jet3(lambda u: pf.sin(u) * x * x, t(0.5) + s).sum(), t(0.3))

    s = t([0.4, 0.6])
    want = np.stack([val(f(s[0])), val(f(s[1]))])
    np.testing.assert_allclose(val(F.vmap(f)(s)), want, rtol=1e-12)
    c = np.cos(0.5 + val(s))
    np.testing.assert_allclose(want[:, 0], 0.09 * c, rtol=1e-12)  # (sin + cos - sin) x^2


def test_higher_derivatives_at_masked_points_are_finite():
    # a formula masking a point where its other branch divides by zero keeps that branch finite too:
    # its derivative (one order up) was 0 * inf = nan (jacrev of functional.jacobian of logit at 0)
    def f(s):
        return AF.jacobian(lambda x: pf.logit(x * x * s, 0.1), (t([0.0, 0.5]),), create_graph=True)[0].sum()

    fd = (val(f(t(1.0 + 1e-6))) - val(f(t(1.0 - 1e-6)))) / 2e-6
    np.testing.assert_allclose(val(F.jacrev(f)(t(1.0))), fd, rtol=1e-6)
    h = F.hessian(lambda x: pf.pow(x, t([0.0, 2.0])).sum())(t([0.0, 0.0]))
    np.testing.assert_array_equal(val(h), [[0.0, 0.0], [0.0, 2.0]])


def test_autograd_functional_inside_vmap_and_transforms_around_it():
    # the functional API made its leaves with requires_grad_() on batched tensors (refused inside
    # vmap), read their arrays, and took a batched input for one that needs no tape; here each
    # batch element gets its own derivatives, as func.grad's do
    s = t([0.4, 0.6])

    def fj(x):
        return AF.jacobian(lambda u: (u.sin() * x * x).sum(), (t(0.5) + x.tanh(),), create_graph=True)[0]

    def per_element(g):
        return np.stack([val(g(si)) for si in s])

    for g in (
        fj,
        F.grad(fj),
        F.jacfwd(fj),
        F.hessian(fj),
        lambda x: F.jvp(fj, (x,), (pf.ones_like(x),))[1],
        lambda x: AF.vjp(lambda u: (u**3).sum(), (x * 1.0,), t(1.0), create_graph=True)[1][0],
        lambda x: AF.jvp(lambda u: (u**3).sum(), (x * 1.0,), (t(1.0),), create_graph=True)[1],
        lambda x: AF.hessian(lambda u: (u**3 * x).sum(), (x * 1.0,), create_graph=True)[0][0],
    ):
        np.testing.assert_allclose(val(F.vmap(g)(s)), per_element(g), rtol=1e-12)
    h = 1e-6
    fd = (val(fj(s + h)) - val(fj(s - h))) / (2 * h)
    np.testing.assert_allclose(val(F.vmap(F.grad(fj))(s)), fd, rtol=1e-6)


def test_jet_of_the_functional_api_closing_over_the_series():
    # the functional API's tape cannot see through a Taylor series: it refuses, and jet runs f by
    # nested dual levels (it differentiated a constant: zero derivatives)
    def f(x):  # d/du of sum(u^2 x^3) at u = 1: 2 x^3
        return AF.jacobian(lambda u: (u * u * x**3).sum(), t(1.0), create_graph=True)

    y, (d1, d2) = F.jet(f, (t(0.5),), ([t(1.0), t(0.0)],))
    np.testing.assert_allclose([val(y), val(d1), val(d2)], [0.25, 1.5, 6.0], rtol=1e-12)
    for g in (
        lambda x: AF.vjp(lambda u: u * x**3, t(1.0), t(1.0), create_graph=True)[1],
        lambda x: AF.hvp(lambda u: (u**3 * x).sum(), t(1.0), t(1.0), create_graph=True)[1],
    ):
        _, (d1,) = F.jet(g, (t(0.5),), ([t(1.0)],))
        np.testing.assert_allclose(val(d1), (val(g(t(0.5 + 1e-6))) - val(g(t(0.5 - 1e-6)))) / 2e-6, rtol=1e-6)


def test_logit_derivative_outside_its_domain_is_nan():
    x = t([-0.5, 0.5, 1.5])
    np.testing.assert_array_equal(np.isnan(val(F.grad(lambda x: x.logit().sum())(x))), [True, False, True])
    np.testing.assert_array_equal(np.isnan(val(F.jvp(pf.logit, (x,), (pf.ones(3),))[1])), [True, False, True])


def test_an_in_place_write_into_a_tangent_the_tape_kept_is_kept():
    # grad of a jvp: tanh's recorded tangent formula keeps v's tangent; relu_ then writes into it.
    # The formula read the tangent on a storage of its own (no version check): a wrong gradient.
    # torch raises here; the tangent's old values are kept (docs/design.md, "Overwritten saved
    # values"): f(c) = sum sech^2(c^2 + x), so f'(c) = -4 c sech^2(u) tanh(u), u = c^2 + x.
    def f(c):
        def g(x):
            v = c * c
            v.add_(x)
            y = v.tanh()
            v.relu_()
            return y

        return F.jvp(g, (t([0.7, -0.9]),), (pf.ones(2),))[1].sum()

    c = np.array([-0.8, 0.7])
    u = c * c + np.array([0.7, -0.9])
    np.testing.assert_allclose(val(F.grad(f)(t(c))), -4 * c * np.tanh(u) / np.cosh(u) ** 2, rtol=1e-12)
    with pf.autograd.forbid_mutation_on_saved_tensors(), pytest.raises(pf.errors.SavedTensorModifiedError):
        F.grad(f)(t(c))


def test_a_batch_times_a_constant_matrix_is_laid_out_as_eager_mm():
    # mm(A, batch) ran as one GEMM whose result had the batch in the middle of each example's rows:
    # a view of it (eager mm's result is contiguous) failed under vmap, jacfwd and jet of jacfwd
    a, b = t([[1.0, 2.0], [3.0, 4.0]]), t([[0.5, -1.0], [2.0, 1.0]])

    def f(x):
        return pf.mm(b, x.mT).view(-1)

    np.testing.assert_array_equal(val(F.vmap(f)(pf.stack([a, 2 * a]))), np.stack([val(f(a)), val(f(2 * a))]))
    np.testing.assert_array_equal(val(F.jacfwd(f)(a)), val(F.jacrev(f)(a)))


def test_jet_of_a_vmap_of_a_gradient_closing_over_the_series():
    # the reverse pass inside vmap took a batch of Taylor series for a constant and gave the
    # primal 0: the tape cannot see series, so jet must take its nested-levels path here
    inner = {
        "grad": lambda g: F.grad(g)(t(1.0)),
        "grad_and_value": lambda g: F.grad_and_value(g)(t(1.0))[0],
        "jacrev": lambda g: F.jacrev(g)(t(1.0)),
        "vjp": lambda g: F.vjp(g, t(1.0))[1](t(1.0))[0],
    }
    for name, d in inner.items():

        def f(a):  # sum over the batch of d/dc (c^2 b) at c = 1, b = a^2: 2 sum(a^2)
            return F.vmap(lambda b: d(lambda c: c * c * b))(a * a).sum()

        y, (d1, d2) = F.jet(f, (t([0.5, 0.7]),), ([t([1.0, 1.0]), t([0.0, 0.0])],))
        np.testing.assert_allclose(val(y), 2 * (0.25 + 0.49), err_msg=name)
        np.testing.assert_allclose(val(d1), 4 * (0.5 + 0.7), err_msg=name)
        np.testing.assert_allclose(val(d2), 8.0, err_msg=name)


def test_max_pool_indices_under_vmap_and_jet():
    # the indices were read from arrays, which a batch (or a series) does not have
    x = pf.tensor(np.random.default_rng(0).standard_normal((2, 3, 7)))
    for pool in (
        lambda z: pf.nn.functional.adaptive_max_pool1d(z, 3, return_indices=True),
        lambda z: pf.nn.functional.max_pool1d(z, 3, stride=2, padding=1, dilation=2, return_indices=True),
    ):
        got = F.vmap(pool)(x)
        for b in range(2):
            want = pool(x[b])
            np.testing.assert_array_equal(val(got[0][b]), val(want[0]))
            np.testing.assert_array_equal(val(got[1][b]), val(want[1]))
        y, (d1,) = F.jet(lambda z: pool(z)[0], (x,), ([pf.ones_like(x)],))
        np.testing.assert_array_equal(val(y), val(pool(x)[0]))
        np.testing.assert_array_equal(val(d1), np.ones(tuple(y.shape)))
        ys, (d1s,) = F.vmap(lambda z: F.jet(lambda w: pool(w)[0], (z,), ([pf.ones_like(z)],)))(x)
        np.testing.assert_array_equal(val(ys), val(pool(x)[0]))
        np.testing.assert_array_equal(val(d1s), np.ones(tuple(y.shape)))


def test_an_in_place_write_of_a_gradient_input_under_vmap_into_a_fresh_tensor():
    # under vmap a reverse transform's input is batched (torch.func's is not): the fresh tensor it
    # is written into is promoted to a batch, so the write computes as in torch (it raised)
    def f(a):
        buf = pf.zeros(2)
        buf.sub_(a)
        out = pf.zeros(2)
        out[0] = buf[1] * a[0]
        return (buf * buf).sum() + out.sum()

    xs = t([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    want = np.stack([val(F.grad(f)(xs[b])) for b in range(3)])  # [2 a0 - a1, 2 a1 - a0]
    np.testing.assert_allclose(want, [[2 * a - b, 2 * b - a] for a, b in val(xs)])
    np.testing.assert_allclose(val(F.vmap(F.grad(f))(xs)), want)
    np.testing.assert_allclose(val(F.vmap(F.jacrev(f))(xs)), want)
    np.testing.assert_allclose(val(F.vmap(lambda v: F.jvp(f, (xs[0],), (v,))[1])(pf.eye(2))), want[0])
    np.testing.assert_allclose(val(F.vmap(F.hessian(f))(xs)), np.stack([val(F.hessian(f)(xs[b])) for b in range(3)]))


def test_a_promoted_tensor_a_tape_node_kept_keeps_its_value():
    def f(a):
        buf = pf.ones(2) * 3
        y = (a * buf).sin().sum()  # the product's node keeps buf for a's gradient
        buf.sub_(a)
        return y + (buf * buf).sum()

    xs = t([[1.0, 2.0], [3.0, 4.0]])
    # forward mode keeps nothing: 3 cos(3a) - 2 (3 - a); the product's node kept buf before the write
    a = val(xs)
    np.testing.assert_allclose(val(F.vmap(F.jacfwd(f))(xs)), 3 * np.cos(3 * a) - 2 * (3 - a))
    np.testing.assert_allclose(val(F.vmap(F.grad(f))(xs)), 3 * np.cos(3 * a) - 2 * (3 - a))
    with pf.autograd.forbid_mutation_on_saved_tensors():
        with pytest.raises(pf.errors.SavedTensorModifiedError, match="MulBackward0"):
            F.vmap(F.grad(f))(xs)


def test_an_in_place_write_under_vmap_into_a_tensor_made_outside_is_refused_and_undone():
    buf = pf.zeros(2)

    def f(a):
        buf.sub_(a)  # torch refuses this write too (a closed-over tensor cannot become a batch)
        return (buf * a).sum()

    for g in (F.grad(f), lambda a: f(a)):
        with pytest.raises(pf.errors.OpError, match="made outside the vmapped function"):
            F.vmap(g)(t([[1.0, 2.0], [3.0, 4.0]]))
        assert type(buf) is pf.Tensor
        np.testing.assert_array_equal(val(buf), [0.0, 0.0])


def test_vmap_of_jet_of_indexing_with_an_index_computed_from_the_data():
    # a batched index met a Taylor series whose coefficients are batched: the loop over the batch
    # took the series whole and returned a batch of series (wrong shapes and zero derivatives);
    # it now says so and jet takes its nested-levels path
    X = pf.tensor(np.random.default_rng(1).standard_normal((2, 4, 3)))

    def setitem(w):
        o = w * 1
        o[w[:, 0].argsort()[:2]] = w[:2] * 2
        return o

    for f in (
        lambda w: w[w[:, 0].argsort()],
        lambda w: w.gather(0, w.argsort(0)),
        lambda w: pf.take_along_dim(w, w.argsort(0), 0),
        lambda w: pf.take(w, w.reshape(-1).argsort()),
        setitem,
    ):
        y, (d1,) = F.vmap(lambda z: F.jet(f, (z,), ([z * 0 + 1],)))(X)
        np.testing.assert_allclose(val(y), np.stack([val(f(X[b])) for b in range(2)]))
        tangents = [val(F.jvp(f, (X[b],), (pf.ones_like(X[b]),))[1]) for b in range(2)]
        np.testing.assert_allclose(val(d1), np.stack(tangents))


def test_a_batched_zero_tangent_takes_its_primal_layout():
    # writing a dual through `.mT.view(-1)` of a tensor laid out transposed gives the tensor a zero
    # tangent first: under jacfwd a batch of them, each laid out as the tensor so that the view
    # replays (it was C-ordered per element, and the view raised; transforms fuzz seed 97016561)
    def f(x):
        base = pf.ones(2, 3).mT * 2.0  # (an element-wise result keeps its operand's layout, as in torch)
        v = base.mT.view(-1)
        v[1:3] = x * x
        return base

    x = t([0.5, -1.5])
    want = val(F.jacrev(f)(x))
    np.testing.assert_allclose(val(F.jacfwd(f)(x)), want)
    np.testing.assert_allclose(val(F.hessian(lambda x: f(x).sum())(x)), np.diag([2.0, 2.0]))


def test_a_value_copy_overwrote_pulls_nothing_back():
    # copy_'s overwritten value gets a symbolic zero: erfinv's derivative at a point outside its
    # domain (NaN) is never multiplied by it (the gradient was NaN; torch's is NaN too; transforms
    # fuzz seed 97015095, finite differences decide)
    def f(x):
        v = pf.special.erfinv(x * 2)
        v.copy_(x)
        return (v * v).sum()

    assert float(F.grad(f)(t(0.9))) == pytest.approx(1.8)
    assert float(F.grad(lambda x: F.jvp(f, (x,), (t(1.0),))[1])(t(0.9))) == pytest.approx(2.0)
    # a leaf reached only through the overwritten value gets zeros, as in torch
    x, y = t([1.0, 2.0], requires_grad=True), t([3.0, 4.0], requires_grad=True)
    v = x * 2
    v.copy_(y)
    assert val(pf.autograd.grad(v.sum(), x)[0]).tolist() == [0.0, 0.0]
    v = x * 2
    v.copy_(y)
    v.sum().backward()
    assert val(x.grad).tolist() == [0.0, 0.0] and val(y.grad).tolist() == [1.0, 1.0]


def test_vmap_of_jet_of_a_composite_reading_arrays_whose_series_holds_the_batch():
    # lstsq (loop_batched) got a Taylor series whose coefficients are batched, saw no batch, and
    # read a batched array (an OpError jet did not catch); under vmap it now says NestingError and
    # jet takes its nested-levels path (transforms fuzz seed 101012156)
    A = pf.tensor(np.random.default_rng(0).standard_normal((2, 3, 3)))

    def f(a):
        return pf.linalg.lstsq(a, a[:, :1]).solution

    y, (d1,) = F.vmap(lambda z: F.jet(f, (z,), ([pf.ones_like(z)],)))(A)
    np.testing.assert_allclose(val(y), np.stack([val(f(A[b])) for b in range(2)]))
    tangents = [val(F.jvp(f, (A[b],), (pf.ones_like(A[b]),))[1]) for b in range(2)]
    np.testing.assert_allclose(val(d1), np.stack(tangents))
