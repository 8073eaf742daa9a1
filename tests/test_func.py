"""pushforward.func: composable transforms jvp, vjp, grad, jacfwd, jacrev, hessian, linearize."""

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.func import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    tree_flatten,
    tree_unflatten,
    vjp,
)

try:
    import torch
    import torch.func as tfunc
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")

RNG = np.random.default_rng(1)
N = 5
A = RNG.standard_normal((N, N)) / np.sqrt(N)
X = RNG.standard_normal(N)
V = RNG.standard_normal(N)
W = RNG.standard_normal(N)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def t(a, **kw):
    return pf.tensor(np.array(a, dtype=np.float64), **kw)


def tt(a):
    return torch.tensor(np.array(a, dtype=np.float64))


def f_vec(m, x):  # R^N -> R^N, the benchmark function
    A_ = pf.tensor(A) if m is pf else torch.tensor(A)
    return m.tanh(m.matmul(A_, x)) * x + m.sin(x)


def f_scalar(m, x):  # R^N -> R
    return (m.sin(x) * x * x).sum() + (m.exp(x * 0.3) * x).sum()


def hess_scalar(x):
    x = np.asarray(x)
    d = 2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x) + np.exp(0.3 * x) * (0.6 + 0.09 * x)
    return np.diag(d)


def jac_vec(x):
    x = np.asarray(x)
    u = np.tanh(A @ x)
    return (1 - u * u)[:, None] * A * x[:, None] + np.diag(u) + np.diag(np.cos(x))


P = lambda f: lambda *a: f(pf, *a)  # noqa: E731
T = lambda f: lambda *a: f(torch, *a)  # noqa: E731


# -- pytrees ----------------------------------------------------------------------------------


def test_tree_roundtrip():
    tree = {"a": (1, [2, 3]), "b": None, "c": {"d": 4}}
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, 2, 3, 4]
    assert tree_unflatten(leaves, spec) == tree
    with pytest.raises(ValueError):
        tree_unflatten([1, 2], spec)


# -- jvp / vjp --------------------------------------------------------------------------------


def test_jvp_basic_and_against_jacobian():
    out, tan = jvp(P(f_vec), (t(X),), (t(V),))
    close(out, np.tanh(A @ X) * X + np.sin(X))
    close(tan, jac_vec(X) @ V)
    assert fwAD.unpack_dual(tan).tangent is None and not tan.requires_grad


@needs_torch
def test_jvp_vjp_match_torch_func():
    o, j = jvp(P(f_vec), (t(X),), (t(V),))
    to, tj = tfunc.jvp(T(f_vec), (tt(X),), (tt(V),))
    close(j, tj.numpy())
    o, fn = vjp(P(f_vec), t(X))
    to, tfn = tfunc.vjp(T(f_vec), tt(X))
    (g,), (tg,) = fn(t(W)), tfn(tt(W))
    close(g, tg.numpy())


def test_jvp_pytree_and_aux():
    def f(d, lst):
        out = {"s": (d["x"] * lst[0]).sum(), "v": [d["x"].sin(), lst[1] * 2.0]}
        return out, {"note": d["x"] * 3.0}

    d = {"x": t(X)}
    lst = [t(V), t(W)]
    (out, tan, aux) = jvp(f, (d, lst), ({"x": t(np.ones(N))}, [t(np.zeros(N)), t(np.ones(N))]), has_aux=True)
    assert set(out) == {"s", "v"} and isinstance(out["v"], list)
    close(tan["s"], V.sum())
    close(tan["v"][0], np.cos(X))
    close(tan["v"][1], 2 * np.ones(N))
    close(aux["note"], 3 * X)
    assert fwAD.unpack_dual(aux["note"]).tangent is None


def test_jvp_structure_mismatch_and_strict():
    with pytest.raises(RuntimeError):
        jvp(P(f_vec), (t(X),), (t(V), t(V)))
    with pytest.raises(RuntimeError):
        jvp(P(f_vec), (t(X),), (t(V[:2]),))
    with pytest.raises(RuntimeError):
        jvp(lambda x: pf.ones(2), (t(X),), (t(V),), strict=True)
    _, tan = jvp(lambda x: pf.ones(2), (t(X),), (t(V),))
    close(tan, np.zeros(2))


def test_vjp_pytree_multiple_calls_and_aux():
    def f(x, d):
        return [x * d["y"], (x * x).sum()], {"note": x * 3.0}

    x, y = t(X), t(V)
    out, fn, aux = vjp(f, x, {"y": y}, has_aux=True)
    close(aux["note"], 3 * X)
    assert isinstance(out, list)
    with pytest.raises(RuntimeError, match="aux: Expected tensors, got unsupported type str"):
        vjp(lambda x: (x, "aux!"), x, has_aux=True)  # as torch.func: aux holds Tensors
    gx, gd = fn([t(W), t(2.0)])
    close(gx, W * V + 4 * X)
    close(gd["y"], W * X)
    gx2, _ = fn([t(np.zeros(N)), t(1.0)])  # vjp_fn can be called again
    close(gx2, 2 * X)
    assert not gx.requires_grad and not out[0].requires_grad
    with pytest.raises(RuntimeError):
        fn([t(W)])


# -- grad -------------------------------------------------------------------------------------


def test_grad_argnums_and_aux():
    def f(x, y):
        return (x.sin() * y).sum(), {"y2": y * 2.0}

    x, y = t(X), t(V)
    gx = grad(lambda x, y: f(x, y)[0])(x, y)
    close(gx, np.cos(X) * V)
    gx, gy = grad(lambda x, y: f(x, y)[0], argnums=(0, 1))(x, y)
    close(gy, np.sin(X))
    gy = grad(lambda x, y: f(x, y)[0], argnums=-1)(x, y)
    close(gy, np.sin(X))
    g, aux = grad(f, has_aux=True)(x, y)
    close(aux["y2"], 2 * V)
    (g, (value, aux)) = grad_and_value(f, has_aux=True)(x, y)
    close(value, (np.sin(X) * V).sum())
    g, value = grad_and_value(lambda x: (x * x).sum())(x)
    close(g, 2 * X)
    close(value, (X * X).sum())
    assert not g.requires_grad and not value.requires_grad


def test_grad_errors():
    with pytest.raises(RuntimeError, match="scalar"):
        grad(lambda x: x * 2.0)(t(X))
    with pytest.raises(RuntimeError, match="argnums"):
        grad(lambda x: x.sum(), argnums=3)(t(X))
    with pytest.raises(RuntimeError, match="pair"):
        grad(lambda x: x.sum(), has_aux=True)(t(X))


def test_grad_pytree_argument():
    def f(params, x):
        return ((params["w"] * x).sum() + params["b"][0]).tanh()

    params = {"w": t(W), "b": [t(0.3)]}
    g = grad(f)(params, t(X))
    s = np.tanh((W * X).sum() + 0.3)
    close(g["w"], (1 - s * s) * X)
    close(g["b"][0], 1 - s * s)


def test_grad_works_under_no_grad():
    with pf.no_grad():
        g = grad(lambda x: (x * x).sum())(t(X))
    close(g, 2 * X)


def test_grad_keeps_closure_differentiable():
    w = t(W, requires_grad=True)
    g = grad(lambda x: (x.sin() * w).sum())(t(X))
    assert g.requires_grad
    (gw,) = pf.autograd.grad(g.sum(), w)
    close(gw, np.cos(X))


def test_grad_input_requiring_grad_stays_differentiable():
    x = t(X, requires_grad=True)
    g = grad(lambda x: (x * x * x).sum())(x)
    (gg,) = pf.autograd.grad(g.sum(), x)
    close(gg, 6 * X)
    assert x.grad is None


# -- Jacobians ----------------------------------------------------------------------------------


def test_jacfwd_jacrev_agree_with_analytic():
    x = t(X)
    close(jacfwd(P(f_vec))(x), jac_vec(X))
    close(jacrev(P(f_vec))(x), jac_vec(X))


@needs_torch
def test_jacobians_and_hessian_match_torch_func():
    close(jacfwd(P(f_vec))(t(X)), tfunc.jacfwd(T(f_vec))(tt(X)).numpy())
    close(jacrev(P(f_vec))(t(X)), tfunc.jacrev(T(f_vec))(tt(X)).numpy())
    close(hessian(P(f_scalar))(t(X)), tfunc.hessian(T(f_scalar))(tt(X)).numpy())

    def g(m, x, y):
        return {"a": m.sin(x) * y.sum(), "b": (x * y).sum()}

    for ours, theirs in ((jacfwd, tfunc.jacfwd), (jacrev, tfunc.jacrev)):
        o = ours(P(g), argnums=(0, 1))(t(X), t(V))
        th = theirs(T(g), argnums=(0, 1))(tt(X), tt(V))
        for k in ("a", "b"):
            for i in range(2):
                assert tuple(o[k][i].shape) == tuple(th[k][i].shape)
                close(o[k][i], th[k][i].numpy())


def test_jacobian_shapes_matrix_input_and_dict_argument():
    M = t(RNG.standard_normal((2, 3)))
    for jac in (jacfwd, jacrev):
        J = jac(lambda m: m.sin().sum(1))(M)
        assert J.shape == (2, 2, 3)
        Jd = jac(lambda d: d["u"] * d["v"].sum())({"u": t(X), "v": t(V[:2])})
        assert set(Jd) == {"u", "v"}
        assert Jd["u"].shape == (N, N) and Jd["v"].shape == (N, 2)
        close(Jd["v"], np.tile(X[:, None], (1, 2)))


def test_jac_has_aux():
    for jac in (jacfwd, jacrev):
        J, aux = jac(lambda x: (x.sin(), {"c": x.cos()}), has_aux=True)(t(X))
        close(J, np.diag(np.cos(X)))
        close(aux["c"], np.cos(X))
        assert not aux["c"].requires_grad and fwAD.unpack_dual(aux["c"]).tangent is None


def test_hessian_analytic():
    close(hessian(P(f_scalar))(t(X)), hess_scalar(X), 1e-9)


def test_hessian_argnums_tuple():
    def f(x, y):
        return (x * x * y).sum()

    H = hessian(f, argnums=(0, 1))(t(X), t(V))
    close(H[0][0], np.diag(2 * V))
    close(H[0][1], np.diag(2 * X))
    close(H[1][1], np.zeros((N, N)))


# -- compositions -----------------------------------------------------------------------------


@pytest.mark.parametrize("outer", [jacfwd, jacrev])
@pytest.mark.parametrize("inner", [jacfwd, jacrev])
def test_nested_jacobians_give_hessian(outer, inner):
    H = outer(inner(P(f_scalar)))(t(X))
    close(H, hess_scalar(X), 1e-9)
    assert not H.requires_grad


def test_jvp_of_grad_is_hvp():
    _, hv = jvp(grad(P(f_scalar)), (t(X),), (t(V),))
    close(hv, hess_scalar(X) @ V, 1e-9)


def test_grad_of_jvp():
    # d/dx <grad f(x), v> = H v
    g = grad(lambda x: jvp(P(f_scalar), (x,), (t(V),))[1].sum())(t(X))
    close(g, hess_scalar(X) @ V, 1e-9)
    # and with respect to the tangent: the gradient itself
    gv = grad(lambda v: jvp(P(f_scalar), (t(X),), (v,))[1])(t(V))
    close(gv, grad(P(f_scalar))(t(X)))


def test_grad_of_grad_and_vjp_of_grad():
    f = lambda x: (x * x * x * x).sum()  # noqa: E731
    close(grad(lambda x: grad(f)(x).sum())(t(X)), 12 * X * X)
    _, fn = vjp(grad(f), t(X))
    close(fn(t(V))[0], 12 * X * X * V)


def test_third_derivatives():
    f = lambda x: x.sin().sum()  # noqa: E731
    for T3 in (jacfwd(hessian(f)), jacrev(jacrev(jacrev(f))), jacfwd(jacfwd(jacfwd(f)))):
        D = T3(t(X))
        assert D.shape == (N, N, N)
        expected = np.zeros((N, N, N))
        for i in range(N):
            expected[i, i, i] = -np.cos(X[i])
        close(D, expected, 1e-9)


def test_no_perturbation_confusion_forward():
    # d/dx [x * d/dy (x + y)](1) = 1, not 2
    def outer(x):
        inner = jvp(lambda y: x + y, (t(1.0),), (t(1.0),))[1]
        return x * inner

    close(jvp(outer, (t(1.0),), (t(1.0),))[1], 1.0)
    close(jacfwd(outer)(t(1.0)), 1.0)


def test_no_perturbation_confusion_reverse_and_mixed():
    def outer_rev(x):
        return x * grad(lambda y: (x + y).sum())(t(1.0))

    close(grad(outer_rev)(t(1.0)), 1.0)

    def outer_mixed(x):
        return x * jvp(lambda y: x * 0.0 + y, (t(1.0),), (t(1.0),))[1]

    close(grad(outer_mixed)(t(1.0)), 1.0)

    def outer_mixed2(x):
        return x * grad(lambda y: x + y)(t(1.0))

    close(jvp(outer_mixed2, (t(1.0),), (t(1.0),))[1], 1.0)


def test_same_tensor_twice():
    x = t(X)
    gx, gy = grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x)
    close(gx, X)
    close(gy, X)


# -- linearize ---------------------------------------------------------------------------------


def test_linearize_matches_jvp_without_rerunning_f():
    calls = []

    def f(x):
        calls.append(1)
        return f_vec(pf, x)

    out, jvp_fn = linearize(f, t(X))
    assert len(calls) == 1
    close(out, np.tanh(A @ X) * X + np.sin(X))
    for v in (V, W):
        close(jvp_fn(t(v)), jac_vec(X) @ v)
    assert len(calls) == 1


def test_linearize_pytree_and_multiple_primals():
    def f(x, d):
        return {"p": x * d["y"], "q": (x.exp() * d["y"]).sum()}

    out, fn = linearize(f, t(X), {"y": t(V)})
    res = fn(t(W), {"y": t(np.ones(N))})
    close(res["p"], W * V + X)
    close(res["q"], (np.exp(X) * W * V).sum() + np.exp(X).sum())
    zero = fn(t(np.zeros(N)), {"y": t(np.zeros(N))})
    close(zero["p"], np.zeros(N))
    with pytest.raises(RuntimeError):
        fn(t(W))


def test_linearize_constant_output():
    out, fn = linearize(lambda x: pf.ones(3), t(X))
    close(fn(t(V)), np.zeros(3))


@needs_torch
def test_complex_inputs_match_torch_func():
    z = np.array([1 + 2j, -0.5 + 1j])
    dz = np.array([1 + 0j, 1j])
    g = grad(lambda z: (pf.sin(z) * z.conj()).real.sum())(pf.tensor(z))
    tg = tfunc.grad(lambda z: (torch.sin(z) * z.conj()).real.sum())(torch.tensor(z))
    close(g, tg.numpy())
    _, j = jvp(pf.sin, (pf.tensor(z),), (pf.tensor(dz),))
    _, tj = tfunc.jvp(torch.sin, (torch.tensor(z),), (torch.tensor(dz),))
    close(j, tj.numpy())


def test_public_names():
    assert pf.func.jvp is jvp and pf.func.hessian is hessian


def test_reverse_over_reverse_through_pow_and_where():
    # x ** 3's backward formula uses `where`; its own backward must reach x
    H = jacrev(jacrev(lambda x: (x**3).sum()))(t(X))
    close(H, np.diag(6 * X))


def test_grad_through_integer_indexing():
    g = grad(lambda x: x[0] * x[1] + x[2].sin())(t(X))
    close(g, [X[1], X[0], np.cos(X[2]), 0.0, 0.0])


# ---- jvp(grad(f)) on an untracked level -------------------------------------------


def _routes(monkeypatch):
    """Record which levels func.jvp opens (True: untracked) for the calls that follow."""
    import pushforward.func.transforms as F

    seen = []
    orig = F._jvp_run

    def spy(*a, untracked, **k):
        r = orig(*a, untracked=untracked, **k)
        seen.append((untracked, r is not None))
        return r

    monkeypatch.setattr(F, "_jvp_run", spy)
    return seen


def _tracked(gf):
    return lambda *a: gf(*a)  # not a grad wrapper: jvp takes the ordinary route


def test_jvp_of_grad_takes_the_untracked_route_and_matches(monkeypatch):
    seen = _routes(monkeypatch)
    g, hv = jvp(grad(P(f_scalar)), (t(X),), (t(V),))
    assert seen == [(True, True)]
    close(hv, hess_scalar(X) @ V)
    g2, hv2 = jvp(_tracked(grad(P(f_scalar))), (t(X),), (t(V),))
    close(g, g2)
    close(hv, hv2)
    (g3, val), (hv3, tval) = jvp(grad_and_value(P(f_scalar)), (t(X),), (t(V),))
    close(g3, g)
    close(hv3, hv)
    close(tval, g.numpy() @ V)  # the value's tangent: <gradient, v>


def test_jvp_of_grad_closure_requiring_grad_falls_back(monkeypatch):
    # the tangent H v depends on w: it must stay differentiable with respect to w
    seen = _routes(monkeypatch)
    w = t(W, requires_grad=True)
    _, hv = jvp(grad(lambda x: (x * x * w).sum()), (t(X),), (t(V),))
    assert seen == [(True, False), (False, True)]
    close(hv.detach(), 2 * W * V)
    hv.sum().backward()
    close(w.grad, 2 * V)


def test_jvp_of_grad_user_reading_tangents_falls_back(monkeypatch):
    # reverse-over-forward inside: the loss uses a tangent of the jvp's level
    def f(x):
        return (x * fwAD.unpack_dual(x * x).tangent).sum()

    seen = _routes(monkeypatch)
    res = jvp(grad(f), (t(X),), (t(V),))
    assert seen[-1] == (False, True) and seen[0] == (True, False)
    ref = jvp(_tracked(grad(f)), (t(X),), (t(V),))
    close(res[0], ref[0])
    close(res[1], ref[1])


def test_jvp_of_grad_nested_compositions():
    x, v, u = t(X), t(V), t(W)
    # third derivative: jvp(jvp(grad)) -- the inner jvp runs inside an outer level
    d3 = jvp(lambda y: jvp(grad(P(f_scalar)), (y,), (v,))[1], (x,), (u,))[1]
    d3_ref = jvp(lambda y: jvp(_tracked(grad(P(f_scalar))), (y,), (v,))[1], (x,), (u,))[1]
    close(d3, d3_ref)
    # grad of an hvp: the primal requires grad inside grad, so the level is tracked
    gh = grad(lambda y: jvp(grad(P(f_scalar)), (y,), (v,))[1].sum())(x)
    gh_ref = grad(lambda y: jvp(_tracked(grad(P(f_scalar))), (y,), (v,))[1].sum())(x)
    close(gh, gh_ref)
    # inside a user's dual level
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, u)
        hv = jvp(grad(P(f_scalar)), (xd,), (v,))[1]
        hv_ref = jvp(_tracked(grad(P(f_scalar))), (xd,), (v,))[1]
        close(fwAD.unpack_dual(hv).tangent, fwAD.unpack_dual(hv_ref).tangent)
    close(hv, hess_scalar(X) @ V)
    # a jvp inside the gradded function, and has_aux
    inner = lambda y: (jvp(P(f_vec), (y,), (y,))[1] ** 2).sum()  # noqa: E731
    r = jvp(grad(inner, has_aux=False), (x,), (v,))
    r_ref = jvp(_tracked(grad(inner)), (x,), (v,))
    close(r[0], r_ref[0])
    close(r[1], r_ref[1])
    ga = jvp(grad(lambda y: ((y * y).sum(), y.sin()), has_aux=True), (x,), (v,), has_aux=True)
    close(ga[1], 2 * V)
    close(ga[2], np.sin(X))  # jvp's aux: the primal of grad's aux


def test_jvp_of_grad_with_tangent_requiring_grad_is_tracked(monkeypatch):
    seen = _routes(monkeypatch)
    v = t(V, requires_grad=True)
    _, hv = jvp(grad(P(f_scalar)), (t(X),), (v,))
    assert seen == [(False, True)]
    close(hv.detach(), hess_scalar(X) @ V)


def test_jvp_of_grad_with_a_tangent_that_requires_grad_keeps_its_history():
    """Regression: jvp(grad(f)) with a tangent requiring grad returned H v without a grad_fn (the
    backward pass was not recorded because only the tangent, not the primal, requires grad)."""
    import torch

    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    x = pf.tensor([0.5, 1.0], dtype=pf.float64)
    v = pf.tensor([1.0, 2.0], dtype=pf.float64).requires_grad_()
    hv = pf.func.jvp(pf.func.grad(f), (x,), (v,))[1]
    assert hv.grad_fn is not None
    hv.sum().backward()
    vt = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    torch.func.jvp(torch.func.grad(f), (torch.tensor([0.5, 1.0], dtype=torch.float64),), (vt,))[1].sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), vt.grad.numpy(), rtol=1e-12)


# -- inputs and outputs checked as torch.func checks them -------------------------------------------


def test_jvp_checks_its_primals_and_tangents():
    x, v = t(X), t(V)
    cases = [
        ((x,), (v,), None),
        (x, (v,), "Expected primals to be a tuple"),
        ((x,), [v], "same python structure"),  # a list is not a tuple
        ((x,), v, "same python structure"),
        ((x,), (v, v), "same python structure"),
        (((x, x), x), (x, x), "same python structure"),
        ((), (), "at least one Tensor"),
        (((),), ((),), "at least one Tensor"),
        ((1.0,), (v,), "primals to only contain Tensors"),
        ((x,), (1.0,), "tangents to only contain Tensors"),
    ]
    for primals, tangents, msg in cases:
        if msg is None:
            jvp(pf.sin, primals, tangents)
        else:
            with pytest.raises(RuntimeError, match=msg):
                jvp(pf.sin, primals, tangents)


@pytest.mark.parametrize("transform", ["jvp", "vjp", "jacfwd", "jacrev", "grad"])
def test_transforms_check_the_function_output_and_aux(transform):
    x = t(X)

    def run(f, has_aux=False):
        if transform == "jvp":
            return jvp(f, (x,), (x,), has_aux=has_aux)
        if transform == "vjp":
            return vjp(f, x, has_aux=has_aux)
        return getattr(pf.func, transform)(f, has_aux=has_aux)(x)

    for out in (None, ()):
        with pytest.raises(RuntimeError, match="Expected f to be a function that has non-empty output"):
            run(lambda _: out)
    if transform != "grad":  # (grad also names the rule: a scalar Tensor)
        for out in (1, True, "abc"):
            with pytest.raises(RuntimeError, match=r"expected f\(\*primals\) to return only tensors"):
                run(lambda _: out)
    for aux in (1, 1.0, "abc"):
        with pytest.raises(RuntimeError, match="Expected tensors, got unsupported type"):
            run(lambda x: (x.sum(), [x, aux]), has_aux=True)
    with pytest.raises(RuntimeError, match=r"should be a tuple: a pair \(output, aux\)"):
        run(lambda x: [x.sum(), x], has_aux=True)
    with pytest.raises(RuntimeError, match=r"should be a tuple: a pair \(output, aux\)"):
        run(lambda x: (x.sum(), x, x), has_aux=True)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "grad"])
def test_argnums_checked_as_torch(name):
    x = t(X)
    transform = getattr(pf.func, name)
    f = lambda a, b: (a * b).sum()  # noqa: E731
    for argnums, msg in [
        ((), "must be non-empty"),
        (0.0, "must be int or Tuple"),
        ((1, 0.0), "must be int"),
        (2, "only 2 positional inputs"),
        (-3, "only 2 positional inputs"),
        ((0, 0), "must be unique"),
        ((0, -2), "must be unique"),
    ]:
        with pytest.raises(RuntimeError, match=msg):
            transform(f, argnums=argnums)(x, x)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_jacobians_of_complex_functions_are_refused_as_torch(name):
    # torch refuses (the Jacobian of a function C -> C or R -> C depends on a convention); before,
    # jacrev(conj(0.5j * x)) gave 0 and jacfwd gave -0.5j
    transform = getattr(pf.func, name)
    with pytest.raises(RuntimeError, match=f"{name}: Expected all inputs to be real"):
        transform(lambda z: z.conj())(pf.tensor([1.0 + 2.0j]))
    with pytest.raises(RuntimeError, match=f"{name}: Expected all outputs to be real"):
        transform(lambda x: pf.conj(x * 0.5j))(pf.tensor([1.0]))
    assert transform(lambda x: (x * 0.5j).real)(pf.tensor([1.0])).tolist() == [[0.0]]


_CAPTURED = pf.zeros(3)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev"])
def test_mutating_a_captured_tensor_under_a_reverse_transform_is_refused_as_torch(transform):
    x = t(X[:3])
    captured = pf.randn(3)

    def run(f):
        if transform == "vjp":
            return vjp(f, x)
        return getattr(pf.func, transform)(f)(x)

    with pytest.raises(RuntimeError, match="mutated a captured Tensor"):
        run(lambda x: (x * captured.copy_(x)).sum())
    with pytest.raises(RuntimeError, match="mutated a captured Tensor"):
        run(lambda x: (x * _CAPTURED.mul_(0).add_(x)).sum())
    # a captured tensor written with values independent of the transform, or an argument: fine
    counter = pf.zeros(1)
    run(lambda x: (x * counter.add_(1)).sum())
    assert counter.item() == 1.0
    g = pf.func.jacrev(lambda a, b: b.copy_(a), argnums=0)(x, pf.zeros(3))
    close(g, np.eye(3))


def test_grad_refuses_a_complex_output_as_torch_and_autograd():
    with pytest.raises(TypeError, match="real scalar"):
        pf.func.grad(lambda z: z * (1.0 + 0.2j))(pf.tensor(1.0))
    z = pf.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        (z * (1.0 + 0.2j)).backward()
