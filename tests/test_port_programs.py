"""Torch programs ported by a mechanical rewrite.

Each program is written ONCE, as torch source text. `port()` rewrites it the way a user would
(import lines name `pushforward` instead of `torch`; `torch.` becomes `pf.`), and the test runs
both versions and compares every value the program puts in its `out` dict. Without torch the
ported program still runs, and its own asserts (closed forms) must hold.
"""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest

import pushforward as pf
from helpers import torch


def port(src: str) -> str:
    """torch source -> pushforward source: only import lines and the `torch.` prefix change."""
    out = []
    for line in src.splitlines():
        if re.match(r"\s*(import|from)\s+torch\b", line):
            line = re.sub(r"\btorch\b", "pushforward", line)
            line = re.sub(r"^(\s*)import pushforward$", r"\1import pushforward as pf", line)
        else:
            line = re.sub(r"\btorch\.", "pf.", line)
        out.append(line)
    ported = "\n".join(out) + "\n"
    assert not re.search(r"\btorch\b", ported), "the rewrite left a torch reference"
    return ported


PROGRAMS: dict[str, str] = {}


def program(name: str, src: str) -> None:
    PROGRAMS[name] = textwrap.dedent(src)


# -- PyTorch's forward-mode AD tutorial ----------------------------------------------------------

program(
    "tutorial_basic",
    """
    import torch
    import torch.autograd.forward_ad as fwAD

    primal = torch.linspace(-1.0, 2.0, 10, dtype=torch.float64)
    tangent = torch.cos(torch.linspace(0.0, 3.0, 10, dtype=torch.float64))

    def fn(x, y):
        return x ** 2 + y ** 2

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        assert fwAD.unpack_dual(dual_input).tangent is tangent
        plain_tensor = torch.linspace(0.5, 1.5, 10, dtype=torch.float64)
        dual_output = fn(dual_input, plain_tensor)
        jvp = fwAD.unpack_dual(dual_output).tangent
        out_primal = fwAD.unpack_dual(dual_output).primal
    assert fwAD.unpack_dual(dual_output).tangent is None
    assert torch.allclose(jvp, 2 * primal * tangent)
    out = {"jvp": jvp, "primal": out_primal}
""",
)

program(
    "tutorial_functional_params",
    """
    import torch
    import torch.autograd.forward_ad as fwAD
    from torch.func import jvp

    torch.set_default_dtype(torch.float64)
    x = torch.linspace(-1, 1, 12).reshape(4, 3)
    W1 = torch.sin(torch.arange(15.0)).reshape(3, 5) * 0.5
    b1 = torch.cos(torch.arange(5.0)) * 0.1
    W2 = torch.cos(torch.arange(5.0)).reshape(5, 1)
    params = (W1, b1, W2)

    def model(params, x):
        W1, b1, W2 = params
        h = torch.tanh(x @ W1 + b1)
        return (h @ W2).squeeze(-1)

    def loss_fn(params):
        y = torch.sin(x.sum(-1))
        return ((model(params, x) - y) ** 2).mean()

    tangents = tuple(torch.ones_like(p) * 0.1 for p in params)
    loss, dloss = jvp(loss_fn, (params,), (tangents,))
    with fwAD.dual_level():
        duals = tuple(fwAD.make_dual(p, t) for p, t in zip(params, tangents))
        dloss2 = fwAD.unpack_dual(loss_fn(duals)).tangent
    # forward-gradient training: step along the tangent scaled by the directional derivative
    losses = []
    for step in range(5):
        v = tuple(torch.cos(torch.arange(float(p.numel())) + step).reshape(p.shape) for p in params)
        l, d = jvp(loss_fn, (params,), (v,))
        params = tuple(p - 0.05 * d * t for p, t in zip(params, v))
        losses.append(f"{l:.6f}")
    out = {"loss": loss, "dloss": dloss, "dloss2": dloss2, "losses": losses, "final": loss_fn(params)}
""",
)

program(
    "tutorial_custom_function",
    """
    import torch
    import torch.autograd.forward_ad as fwAD

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    fn = Fn.apply
    primal = torch.sin(torch.arange(100.0, dtype=torch.double)).reshape(10, 10).requires_grad_()
    tangent = torch.cos(torch.arange(100.0, dtype=torch.double)).reshape(10, 10)
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent
    ok = torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                  check_undefined_grad=False, check_batched_grad=False)
    out = {"jvp": jvp, "gradcheck": ok}
""",
)

program(
    "custom_function_torch2_style",
    """
    import torch
    import torch.autograd.forward_ad as fwAD
    from torch.autograd.function import once_differentiable

    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(x, beta):
            return torch.log1p(torch.exp(beta * x)) / beta

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, beta = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            ctx.beta = beta
            ctx.set_materialize_grads(True)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.sigmoid(ctx.beta * x), None

        @staticmethod
        def jvp(ctx, x_t, beta_t):
            (x,) = ctx.saved_tensors
            return x_t * torch.sigmoid(ctx.beta * x)

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.linspace(-2.0, 2.0, 7, dtype=torch.float64, requires_grad=True)
    y = Softplus.apply(x, 1.5)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.detach(), torch.ones(7, dtype=torch.float64))
        t = fwAD.unpack_dual(Softplus.apply(d, 1.5)).tangent
    checks = [torch.autograd.gradcheck(lambda a: Softplus.apply(a, 1.5), (x,), check_forward_ad=True),
              torch.autograd.gradgradcheck(lambda a: Softplus.apply(a, 1.5), (x,)),
              torch.autograd.gradcheck(Square.apply, (x,), check_batched_grad=False)]
    z = Square.apply(x).sum()
    z.backward()
    v = torch.ones(7, dtype=torch.float64, requires_grad=True)
    (h,) = torch.autograd.grad(Square.apply(x), x, v, create_graph=True)
    try:
        h.sum().backward()
        caught = "no error"
    except RuntimeError:
        caught = "RuntimeError"
    out = {"y": y, "g": g, "gg": gg, "t": t, "checks": checks, "xgrad": x.grad, "caught": caught}
""",
)

# -- torch.func ----------------------------------------------------------------------------------

program(
    "func_transforms",
    """
    import torch
    from torch.func import grad, hessian, jacfwd, jacrev, jvp, linearize, vjp

    torch.set_default_dtype(torch.float64)

    def f(x):
        return torch.sin(x) * torch.exp(-x ** 2) + x.sum() ** 2

    x = torch.linspace(-1.0, 1.0, 5)
    v = torch.cos(torch.arange(5.0))
    y, jv = jvp(f, (x,), (v,))
    y2, vjp_fn = vjp(f, x)
    (vj,) = vjp_fn(v)
    Jf, Jr = jacfwd(f)(x), jacrev(f)(x)
    assert torch.allclose(Jf, Jr) and torch.allclose(Jf @ v, jv)
    H = hessian(lambda z: f(z).sum())(x)
    g = grad(lambda z: (f(z) ** 2).sum())(x)
    _, jvp_fn = linearize(f, x)
    out = {"y": y, "jv": jv, "vj": vj, "Jf": Jf, "Jr": Jr, "H": H, "g": g, "lin": jvp_fn(v)}
""",
)

program(
    "higher_order",
    """
    import torch
    from torch.func import grad, jacfwd, jacrev, jvp

    torch.set_default_dtype(torch.float64)

    def f(x):
        return torch.exp(torch.sin(x)) * x ** 3

    x = torch.tensor(0.7)
    one = torch.tensor(1.0)
    d1 = grad(f)(x)
    d2 = grad(grad(f))(x)
    d3 = grad(grad(grad(f)))(x)
    # forward over forward over forward
    def df(z):
        return jvp(f, (z,), (one,))[1]
    def ddf(z):
        return jvp(df, (z,), (one,))[1]
    f3 = jvp(ddf, (x,), (one,))[1]
    # mixed: forward over reverse and reverse over forward
    fr = jacfwd(jacrev(f))(x)
    rf = jacrev(jacfwd(f))(x)
    assert torch.allclose(d3, f3)
    out = {"d1": d1, "d2": d2, "d3": d3, "f3": f3, "fr": fr, "rf": rf}
""",
)

# -- scientific scripts ----------------------------------------------------------------------------

program(
    "newton_scalar_and_system",
    """
    import torch
    import torch.autograd.forward_ad as fwAD

    torch.set_default_dtype(torch.float64)
    log = []

    def g(x):
        return torch.cos(x) - x ** 3

    x = torch.tensor(1.0)
    for it in range(8):
        with fwAD.dual_level():
            y = g(fwAD.make_dual(x, torch.ones_like(x)))
            val, der = fwAD.unpack_dual(y)
        x = x - val / der
        if val.abs() > 1e-9:       # residuals at rounding level differ between math libraries
            log.append(f"it {it}: x={x:.12f} |g|={val.abs():.3e}")

    def F(z):
        return torch.stack([z[0] ** 2 + z[1] ** 2 - 4.0, torch.exp(z[0]) + z[1] - 1.0])

    z = torch.tensor([1.0, -1.0])
    for it in range(10):
        J = torch.func.jacfwd(F)(z)
        r = F(z)
        det = J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]
        dz = torch.stack([J[1, 1] * r[0] - J[0, 1] * r[1], -J[1, 0] * r[0] + J[0, 0] * r[1]]) / det
        z = z - dz
    assert torch.linalg.norm(F(z)) < 1e-12
    torch.testing.assert_close(F(z), torch.zeros(2), atol=1e-12, rtol=0.0)
    out = {"x": x, "log": log, "z": z}
""",
)

program(
    "rk4_sensitivities",
    """
    import torch
    import torch.autograd.forward_ad as fwAD

    torch.set_default_dtype(torch.float64)

    def rhs(y, p):
        # damped pendulum with parameters p = (damping, frequency^2)
        return torch.stack([y[1], -p[0] * y[1] - p[1] * torch.sin(y[0])])

    def rk4(y, p, h, n):
        for _ in range(n):
            k1 = rhs(y, p)
            k2 = rhs(y + h / 2 * k1, p)
            k3 = rhs(y + h / 2 * k2, p)
            k4 = rhs(y + h * k3, p)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y

    y0 = torch.tensor([1.0, 0.0])
    p = torch.tensor([0.3, 4.0])
    sens = []
    with fwAD.dual_level():
        for k in range(2):
            dp = torch.zeros(2)
            dp[k] = 1.0
            yT = rk4(y0, fwAD.make_dual(p, dp), 0.01, 200)
            sens.append(fwAD.unpack_dual(yT).tangent)
    S = torch.stack(sens, dim=1)
    S_rev = torch.func.jacrev(lambda q: rk4(y0, q, 0.01, 200))(p)
    assert torch.allclose(S, S_rev)
    out = {"yT": rk4(y0, p, 0.01, 200), "S": S, "S_rev": S_rev}
""",
)

program(
    "scipy_root_exact_jacobian",
    """
    import numpy as np
    from scipy.optimize import root
    import torch

    torch.set_default_dtype(torch.float64)

    def F(x):
        return torch.stack([x[0] ** 2 + x[1] ** 2 - 4.0, torch.exp(x[0]) + x[1] - 1.0, x[2] ** 3 - x[0]])

    def fun(z):
        return F(torch.from_numpy(z)).numpy()

    def jac(z):
        return torch.func.jacfwd(F)(torch.from_numpy(z)).numpy()

    sol = root(fun, np.array([1.0, -1.0, 0.5]), jac=jac, method="hybr")
    assert sol.success
    out = {"x": torch.from_numpy(sol.x), "residual": F(torch.from_numpy(sol.x))}
""",
)

program(
    "script_conveniences",
    """
    import torch
    from torch.func import jacfwd, jvp

    torch.set_default_dtype(torch.float64)
    g = torch.Generator().manual_seed(0)
    x = torch.linspace(0.1, 1.0, 4).to("cpu")
    v = torch.randn(4, generator=g)                # random direction: compare identities, not values

    def f(z):
        return torch.tanh(z) * z.sum()

    J = jacfwd(f)(x)
    _, jv = jvp(f, (x,), (v,))
    same = bool(torch.allclose(jv, J @ v))
    torch.testing.assert_close(jv, J @ v)
    loss = f(x).pow(2).mean()
    line = f"loss={loss:.6f}"
    flags = [bool((J != 0).all()), bool((J > 0).any()), x.float().dtype == torch.float, x.double().dtype == torch.double]
    y = torch.zeros(3, dtype=torch.float32)
    torch.set_default_dtype(torch.float32)
    flags.append(torch.tensor([1.0]).dtype == torch.float32)
    torch.set_default_dtype(torch.float64)
    x2 = x.clone().requires_grad_()
    torch.autograd.backward([f(x2).sum()], [torch.ones(())])
    out = {"same": same, "line": line, "flags": flags, "grad": x2.grad, "y": y}
""",
)

# -- views, in-place and complex -------------------------------------------------------------------

program(
    "views_inplace_complex",
    """
    import torch
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        base = torch.zeros(4, 3, dtype=torch.float64)
        x = fwAD.make_dual(torch.linspace(0.0, 1.0, 3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
        base[1] = x                                 # a dual written into a plain tensor
        view = base[1:3].t()
        view.mul_(2.0)                              # in place through a view
        y = (view * torch.arange(2.0, dtype=torch.float64)).sum() + base.sum()
        t_base = fwAD.unpack_dual(base).tangent
        t_y = fwAD.unpack_dual(y).tangent
        d = fwAD.make_dual(torch.ones(2, 2, dtype=torch.float64), torch.eye(2, dtype=torch.float64))
        dv = d.view(4)
        t_dv = fwAD.unpack_dual(dv).tangent
        z = fwAD.make_dual(torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128),
                           torch.tensor([1j, 1 + 0j], dtype=torch.complex128))
        w = (z * z.conj()).real + torch.exp(z).abs() + torch.sin(z).imag
        t_w = fwAD.unpack_dual(w).tangent
        u = torch.exp(z) * z ** 2
        t_u = fwAD.unpack_dual(u).tangent
    out = {"base": base, "t_base": t_base, "t_y": t_y, "t_dv": t_dv, "w": w, "t_w": t_w, "u": u, "t_u": t_u}
""",
)

# -- error handling --------------------------------------------------------------------------------

program(
    "error_handling",
    """
    import torch
    import torch.autograd.forward_ad as fwAD

    caught = []
    try:
        torch.ones(2) + torch.ones(3)
    except RuntimeError:
        caught.append("broadcast")
    with fwAD.dual_level():
        try:
            fwAD.make_dual(torch.ones(2), torch.ones(3))
        except RuntimeError:
            caught.append("make_dual shape")
        try:
            fwAD.make_dual(torch.tensor([1, 2]), torch.ones(2))
        except ValueError:
            caught.append("integer primal")
    try:
        torch.ones(2)[5]
    except IndexError:
        caught.append("index")
    try:
        torch.ones(2, 2).sum(dim=4)
    except IndexError:
        caught.append("dim")
    try:
        torch.func.jvp(lambda a: a * 2, (torch.tensor([1, 2]),), (torch.tensor([1.0, 1.0]),))
    except ValueError:
        caught.append("jvp integer primal")
    try:
        torch.ones(2, requires_grad=True).numpy()
    except RuntimeError:
        caught.append("numpy")
    try:
        x = torch.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    except RuntimeError:
        caught.append("backward twice")
    try:
        torch.autograd.grad(torch.ones(2).sum(), torch.ones(2, requires_grad=True))
    except RuntimeError:
        caught.append("grad of constant")
    try:
        len(torch.tensor(1.0))
    except TypeError:
        caught.append("len 0-d")
    out = {"caught": caught}
""",
)


# -- running and comparing ---------------------------------------------------------------------------


def _values(v):
    if isinstance(v, (list, tuple)):
        return [_values(e) for e in v]
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        return v.detach().numpy() if type(v).__module__.startswith("pushforward") else v.detach().cpu().numpy()
    return v


def _run(src: str, lib) -> dict:
    ns: dict = {"__name__": "ported_program"}
    try:
        exec(compile(src, "<program>", "exec"), ns)
    finally:
        lib.set_default_dtype(lib.float64 if lib is pf else lib.float32)
    return {k: _values(v) for k, v in ns["out"].items()}


def _compare(got, want, path: str) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{path}[{i}]")
    elif isinstance(want, np.ndarray):
        got = np.asarray(got)
        assert got.shape == want.shape, (path, got.shape, want.shape)
        assert got.dtype == want.dtype, (path, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=path)
    else:
        assert got == want, (path, got, want)


def test_port_rewrites_only_imports_and_prefix():
    src = "import torch\nimport torch.autograd.forward_ad as fwAD\nfrom torch.func import jvp\ny = torch.sin(x)  # torchlike\n"
    assert port(src) == (
        "import pushforward as pf\nimport pushforward.autograd.forward_ad as fwAD\n"
        "from pushforward.func import jvp\ny = pf.sin(x)  # torchlike\n"
    )


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_ported_program_runs(name):
    out = _run(port(PROGRAMS[name]), pf)
    assert out


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_ported_program_matches_torch(name):
    want = _run(PROGRAMS[name], torch)
    got = _run(port(PROGRAMS[name]), pf)
    assert sorted(got) == sorted(want)
    for k in want:
        _compare(got[k], want[k], k)
