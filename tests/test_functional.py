"""pushforward.autograd.functional: jvp, vjp, jacobian, hessian, hvp, vhp."""

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
import pushforward.autograd.functional as F

try:
    import torch
    import torch.autograd.functional as TF
except ImportError:  # pragma: no cover - torch is in the test extras
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
X = RNG.standard_normal(4)
Y = RNG.standard_normal(3)
V4 = RNG.standard_normal(4)
V3 = RNG.standard_normal(3)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(
        np.asarray(a, dtype=complex if np.iscomplexobj(np.asarray(a)) else float), np.asarray(b), rtol=tol, atol=tol
    )


def t(a, **kw):
    return pf.tensor(np.array(a, dtype=np.float64), **kw)


# Functions written once, run with either library's module `m` (pf or torch).
def f_vec(m, x):  # R^4 -> R^3
    return m.tanh(m.matmul(m_tensor(m, A), x)) * 2.0 + m.sin(x[:3]) * x[1:]


def f_scalar(m, x):  # R^4 -> R
    return (m.sin(x) * x * x).sum() + (m.exp(x[:2] * 0.5) * x[2:]).sum() + (x[0] * x[3]) * x[1]


def f_two(m, x, y):  # (R^4, R^3) -> (R^3, R)
    return m.tanh(m.matmul(m_tensor(m, A), x)) * y, (x.sum() * y * y).sum()


def m_tensor(m, a):
    return pf.tensor(a) if m is pf else torch.tensor(a)


def P(f):
    return lambda *a: f(pf, *a)


def T(f):
    return lambda *a: f(torch, *a)


def tt(a):
    return torch.tensor(np.array(a, dtype=np.float64))


# -- jvp / vjp ------------------------------------------------------------------------------------


def test_jvp_fw_mode_and_double_backward_agree():
    x, v = t(X), t(V4)
    o1, j1 = F.jvp(P(f_vec), x, v, fw_mode=True)
    o2, j2 = F.jvp(P(f_vec), x, v, fw_mode=False)
    close(o1, o2)
    close(j1, j2)
    assert not j1.requires_grad and not j2.requires_grad
    assert fwAD.unpack_dual(j1).tangent is None


def test_jvp_tuple_inputs_and_outputs_both_modes():
    x, y = t(X), t(Y)
    outs = [F.jvp(P(f_two), (x, y), (t(V4), t(V3)), fw_mode=m) for m in (True, False)]
    for o, j in outs:
        assert isinstance(o, tuple) and isinstance(j, tuple) and len(j) == 2
    close(outs[0][1][0], outs[1][1][0])
    close(outs[0][1][1], outs[1][1][1])


@needs_torch
def test_jvp_vjp_match_torch():
    o, j = F.jvp(P(f_two), (t(X), t(Y)), (t(V4), t(V3)))
    to, tj = TF.jvp(T(f_two), (tt(X), tt(Y)), (tt(V4), tt(V3)))
    for a, b in zip(j, tj):
        close(a, b.numpy())
    o, g = F.vjp(P(f_vec), t(X), t(V3))
    to, tg = TF.vjp(T(f_vec), tt(X), tt(V3))
    close(o, to.numpy())
    close(g, tg.numpy())
    o, g = F.vjp(P(f_two), (t(X), t(Y)), (t(V3), t(1.5)))
    to, tg = TF.vjp(T(f_two), (tt(X), tt(Y)), (tt(V3), tt(1.5)))
    assert isinstance(g, tuple) and len(g) == 2
    for a, b in zip(g, tg):
        close(a, b.numpy())


def test_vjp_scalar_output_default_v():
    x = t(X)
    o, g = F.vjp(P(f_scalar), x)
    o2, g2 = F.vjp(P(f_scalar), x, t(1.0))
    close(g, g2)
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(P(f_vec), x)


def test_jvp_default_v_single_element():
    o, j = F.jvp(lambda x: x.sin() * 3.0, t([0.5]))
    close(j, 3 * np.cos([0.5]))
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.jvp(lambda x: x, t(X))


def test_v_validation():
    with pytest.raises(RuntimeError, match="invalid size"):
        F.jvp(P(f_vec), t(X), t(V3))
    with pytest.raises(RuntimeError, match="invalid length"):
        F.jvp(P(f_two), (t(X), t(Y)), (t(V4),))
    with pytest.raises(TypeError):
        F.jvp(P(f_vec), [1.0, 2.0], t(V4))
    with pytest.raises(TypeError):
        F.vjp(lambda x: x.tolist(), t(X), t(V4))


# -- strict ---------------------------------------------------------------------------------------


def test_strict_raises_on_independent_output():
    def f(x, y):
        return x * 2.0  # independent of y

    x, y = t(X), t(V4)
    for fw in (True, False):
        F.jvp(f, (x, y), (x, y), fw_mode=fw)  # fine without strict
    with pytest.raises(RuntimeError, match="independent"):
        F.vjp(f, (x, y), t(V4), strict=True)
    with pytest.raises(RuntimeError, match="independent"):
        F.jacobian(f, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="independent"):
        F.jacobian(f, (x, y), strict=True, strategy="forward-mode")
    with pytest.raises(RuntimeError):
        F.jvp(lambda x: pf.ones(3), x, x, strict=True, fw_mode=True)
    with pytest.raises(RuntimeError):
        F.jvp(lambda x: pf.ones(3), x, x, strict=True, fw_mode=False)
    # non-strict: zeros
    _, g = F.vjp(f, (x, y), t(V4))
    close(g[1], np.zeros(4))
    jac = F.jacobian(f, (x, y))
    close(jac[1], np.zeros((4, 4)))


def test_strict_hessian_of_linear_function():
    with pytest.raises(RuntimeError, match="independent"):
        F.hessian(lambda x: (x * 3.0).sum(), t(X), strict=True)
    for fw in (True, False):
        with pytest.raises(RuntimeError, match="independent"):
            F.hvp(lambda x: (x * 3.0).sum(), t(X), t(V4), strict=True, fw_mode=fw)
        _, h = F.hvp(lambda x: (x * 3.0).sum(), t(X), t(V4), fw_mode=fw)
        close(h, np.zeros(4))


def test_strict_jacobian_create_graph_constant_jacobian():
    with pytest.raises(RuntimeError, match="independent"):
        F.jacobian(lambda x: x * 2.0, t(X), create_graph=True, strict=True)


# -- jacobian -------------------------------------------------------------------------------------


def test_jacobian_forward_and_reverse_agree():
    x, y = t(X), t(Y)
    for fn, inp in ((P(f_vec), x), (P(f_two), (x, y)), (P(f_scalar), x)):
        jr = F.jacobian(fn, inp)
        jf = F.jacobian(fn, inp, strategy="forward-mode")
        jv = F.jacobian(fn, inp, strategy="forward-mode", vectorize=True)
        flat_r, flat_f, flat_v = (np.concatenate([np.ravel(b) for b in _leaves(j)]) for j in (jr, jf, jv))
        close(flat_r, flat_f)
        close(flat_f, flat_v)


def _leaves(j):
    if isinstance(j, tuple):
        return [leaf for sub in j for leaf in _leaves(sub)]
    return [j]


@needs_torch
def test_jacobian_matches_torch_shapes_and_values():
    for fn, args in ((f_vec, (X,)), (f_two, (X, Y)), (f_scalar, (X,))):
        for tup in (True, False) if len(args) == 1 else (True,):
            pin = tuple(t(a) for a in args) if tup else t(args[0])
            tin = tuple(tt(a) for a in args) if tup else tt(args[0])
            for strategy in ("reverse-mode", "forward-mode"):
                ours = F.jacobian(P(fn), pin, strategy=strategy)
                theirs = TF.jacobian(T(fn), tin, vectorize=strategy == "forward-mode", strategy=strategy)
                _assert_same_nesting(ours, theirs)


def _assert_same_nesting(ours, theirs):
    if isinstance(theirs, (tuple, list)):  # torch's vectorized forward mode gives a list for a 1-tuple
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same_nesting(a, b)
    else:
        assert isinstance(ours, pf.Tensor)
        assert tuple(ours.shape) == tuple(theirs.shape)
        close(ours, theirs.detach().numpy())


def test_jacobian_bad_strategy():
    with pytest.raises(ValueError):
        F.jacobian(P(f_vec), t(X), strategy="sideways")


def test_jacobian_matrix_input_shape():
    M = t(RNG.standard_normal((2, 3)))
    jr = F.jacobian(lambda m: m.sin().sum(0), M)
    jf = F.jacobian(lambda m: m.sin().sum(0), M, strategy="forward-mode")
    assert jr.shape == (3, 2, 3) == jf.shape
    close(jr, jf)
    expected = np.zeros((3, 2, 3))
    for i in range(2):
        for j in range(3):
            expected[j, i, j] = np.cos(M.numpy()[i, j])
    close(jr, expected)


# -- hessian / hvp / vhp --------------------------------------------------------------------------


def _analytic_hessian(x):
    x = np.asarray(x)
    H = np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x))
    # (exp(x[:2]/2) * x[2:]).sum()
    for i in range(2):
        e = np.exp(x[i] / 2)
        H[i, i] += 0.25 * e * x[i + 2]
        H[i, i + 2] += 0.5 * e
        H[i + 2, i] += 0.5 * e
    # x0 * x3 * x1
    for i, j, k in ((0, 3, 1), (0, 1, 3), (1, 3, 0)):
        H[i, j] += x[k]
        H[j, i] += x[k]
    return H


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_hessian_vs_analytic(strategy):
    H = F.hessian(P(f_scalar), t(X), outer_jacobian_strategy=strategy)
    assert H.shape == (4, 4)
    close(H, _analytic_hessian(X), 1e-9)


def test_hessian_tuple_inputs():
    def f(x, y):
        return (x * x * y.sum()).sum() + (y.sin() * y).sum()

    x, y = t(X), t(Y)
    for strategy in ("reverse-mode", "forward-mode"):
        H = F.hessian(f, (x, y), outer_jacobian_strategy=strategy)
        assert isinstance(H, tuple) and len(H) == 2 and isinstance(H[0], tuple)
        assert H[0][0].shape == (4, 4) and H[0][1].shape == (4, 3) and H[1][0].shape == (3, 4)
        close(H[0][0], np.diag(2 * np.full(4, Y.sum())))
        close(H[0][1], np.tile(2 * X[:, None], (1, 3)))
        close(H[1][0], H[0][1].numpy().T)
        close(H[1][1], np.diag(2 * np.cos(Y) - Y * np.sin(Y)))


def test_hessian_requires_scalar():
    with pytest.raises(RuntimeError, match="single element"):
        F.hessian(P(f_vec), t(X))
    with pytest.raises(RuntimeError, match="single Tensor"):
        F.hvp(lambda x: (x.sum(), x.sum()), t(X), t(V4))


@pytest.mark.parametrize("fw_mode", [True, False])
@pytest.mark.parametrize("which", ["hvp", "vhp"])
def test_hvp_vhp_equal_hessian_times_v(fw_mode, which):
    fn = getattr(F, which)
    out, hv = fn(P(f_scalar), t(X), t(V4), fw_mode=fw_mode)
    close(out, f_scalar(np, X))
    close(hv, _analytic_hessian(X) @ V4, 1e-9)
    assert not hv.requires_grad and fwAD.unpack_dual(hv).tangent is None


@needs_torch
def test_hvp_tuple_inputs_match_torch():
    def g(m, x, y):
        return (m.sin(x) * x).sum() * (y * y).sum() + (m.exp(y) * x[:3]).sum()

    for fw in (True, False):
        o, hv = F.hvp(P(g), (t(X), t(Y)), (t(V4), t(V3)), fw_mode=fw)
        to, thv = TF.hvp(T(g), (tt(X), tt(Y)), (tt(V4), tt(V3)))
        close(o, to.numpy())
        for a, b in zip(hv, thv):
            close(a, b.numpy())
        o, vh = F.vhp(P(g), (t(X), t(Y)), (t(V4), t(V3)), fw_mode=fw)
        to, tvh = TF.vhp(T(g), (tt(X), tt(Y)), (tt(V4), tt(V3)))
        for a, b in zip(vh, tvh):
            close(a, b.numpy())


@needs_torch
def test_hessian_matches_torch():
    ours = F.hessian(P(f_scalar), t(X))
    theirs = TF.hessian(T(f_scalar), tt(X))
    close(ours, theirs.numpy())


# -- create_graph ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fw_mode", [True, False])
def test_jvp_create_graph_is_differentiable(fw_mode):
    x = t(X, requires_grad=True)
    v = t(V4, requires_grad=True)
    _, j = F.jvp(lambda x: (x.sin() * x).sum(), x, v, create_graph=True, fw_mode=fw_mode)
    assert j.requires_grad
    gx, gv = pf.autograd.grad(j, (x, v))
    # j = sum((cos x * x + sin x) * v); d/dv = cos x * x + sin x; d/dx = (2cos x - x sin x) v
    close(gv, np.cos(X) * X + np.sin(X))
    close(gx, (2 * np.cos(X) - X * np.sin(X)) * V4)


def test_vjp_create_graph_is_differentiable():
    x = t(X, requires_grad=True)
    _, g = F.vjp(lambda x: (x.exp() * x).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = pf.autograd.grad(g.sum(), x)
    close(gg, np.exp(X) * (X + 2))
    _, g2 = F.vjp(lambda x: (x.exp() * x).sum(), x)
    assert not g2.requires_grad


@pytest.mark.parametrize("fw_mode", [True, False])
def test_hvp_create_graph_is_differentiable(fw_mode):
    x = t(X, requires_grad=True)
    v = t(V4, requires_grad=True)
    _, hv = F.hvp(lambda x: (x.exp() * x).sum(), x, v, create_graph=True, fw_mode=fw_mode)
    assert hv.requires_grad
    gx, gv = pf.autograd.grad(hv.sum(), (x, v))
    # hv = exp(x)(x+2) * v
    close(gv, np.exp(X) * (X + 2))
    close(gx, np.exp(X) * (X + 3) * V4)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_create_graph_is_differentiable(strategy):
    x = t(X, requires_grad=True)
    J = F.jacobian(lambda x: x.sin() * x, x, create_graph=True, strategy=strategy)
    assert J.requires_grad
    (g,) = pf.autograd.grad(J.sum(), x)  # d/dx of diag(cos x * x + sin x)
    close(g, 2 * np.cos(X) - X * np.sin(X))
    J2 = F.jacobian(lambda x: x.sin() * x, x, strategy=strategy)
    assert not J2.requires_grad


def test_hessian_create_graph_third_derivative():
    x = t(X, requires_grad=True)
    H = F.hessian(lambda x: (x.sin()).sum(), x, create_graph=True, outer_jacobian_strategy="forward-mode")
    (g,) = pf.autograd.grad(H.sum(), x)
    close(g, -np.cos(X))


def test_functional_inside_forward_level_keeps_outer_tangents():
    # d/dx of (J(x) v) along u, with the outer perturbation carried by a dual level
    x, u, v = t(X), t(V4), t(V4[::-1].copy())
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, u)
        _, j = F.jvp(lambda z: z.sin(), xd, v)
        tan = fwAD.unpack_dual(j).tangent
    close(tan, -np.sin(X) * u.numpy() * v.numpy())


def test_integer_input_cannot_be_differentiated():
    with pytest.raises(RuntimeError):
        F.vjp(lambda x: x * 2, pf.tensor([1, 2]), pf.tensor([1, 1]))


def test_reachable_as_pf_autograd_functional():
    # in a fresh interpreter: the lazy attribute must work before anything imported the module
    import os
    import subprocess
    import sys

    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    code = (
        "import pushforward as pf; "
        "print(pf.autograd.functional.jvp(lambda x: x * 2.0, pf.tensor([1.0]), pf.tensor([1.0]))[1].item())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "2.0"
