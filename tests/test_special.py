"""Special functions: values against torch.special on the op-database samples,
the points where formulas have removable singularities, zeta's first argument."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import pushforward as pf
from helpers import close, needs_torch, torch
from pushforward.errors import OpError
from pushforward.testing.opdb import OPS  # noqa: F401 - builds the op database

TORCH = {
    "special_i0": "i0",
    "special_i0e": "i0e",
    "special_i1": "i1",
    "special_i1e": "i1e",
    "special_ndtr": "ndtr",
    "special_ndtri": "ndtri",
    "special_log_ndtr": "log_ndtr",
    "special_erfcx": "erfcx",
    "special_xlog1py": "xlog1py",
    "sinc": "sinc",
    "special_entr": "entr",
    "special_bessel_j0": "bessel_j0",
    "special_bessel_j1": "bessel_j1",
    "special_bessel_y0": "bessel_y0",
    "special_bessel_y1": "bessel_y1",
    "special_modified_bessel_k0": "modified_bessel_k0",
    "special_modified_bessel_k1": "modified_bessel_k1",
    "special_scaled_modified_bessel_k0": "scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1": "scaled_modified_bessel_k1",
    "special_spherical_bessel_j0": "spherical_bessel_j0",
    "special_airy_ai": "airy_ai",
}


@needs_torch
@pytest.mark.parametrize(
    "name", sorted(TORCH) + ["special_zeta", "_special_zeta", "mvlgamma", "special_gammainc", "special_gammaincc"]
)
def test_values_match_torch(name):
    from torch_oracle import check_against_torch

    if name in TORCH:
        fn = getattr(torch.special, TORCH[name])
    elif name in ("special_gammainc", "special_gammaincc"):
        f = getattr(torch.special, name[len("special_") :])
        fn = lambda x, a: f(torch.full_like(x, a), x)  # noqa: E731
    elif name == "mvlgamma":
        fn = lambda a, p: torch.special.multigammaln(a, p)  # noqa: E731
    else:
        fn = lambda q, x: torch.special.zeta(torch.tensor(x, dtype=q.dtype), q)  # noqa: E731
    assert check_against_torch(name, fn, torch) > 0


def test_betaln_matches_scipy():
    a, b = np.array([0.5, 2.0, 7.5]), np.array([1.5, 3.0, 0.25])
    close(pf.special.betaln(pf.tensor(a), pf.tensor(b)), sp.betaln(a, b))


def test_torch_special_names():
    x = pf.tensor([0.3, 1.7])
    close(pf.special.expit(x), sp.expit(x.numpy()))
    close(pf.special.gammaln(x), sp.gammaln(x.numpy()))
    close(pf.special.logit(pf.special.expit(x)), x.numpy())
    close(pf.special.xlogy(x, x), sp.xlogy(x.numpy(), x.numpy()))
    close(pf.special.softmax(x, 0), sp.softmax(x.numpy()))
    close(pf.special.log_softmax(x, 0), sp.log_softmax(x.numpy()))
    close(pf.special.multigammaln(pf.tensor([3.0]), 3), [sp.multigammaln(3.0, 3)])


@needs_torch
@pytest.mark.parametrize("name", ["i1", "i1e", "sinc"])
def test_derivative_at_zero_matches_torch(name):
    x = pf.tensor([0.0], requires_grad=True)
    getattr(pf.special, name)(x).sum().backward()
    t = torch.tensor([0.0], dtype=torch.float64, requires_grad=True)
    getattr(torch.special, name)(t).sum().backward()
    close(x.grad, t.grad.numpy())


def test_zeta_first_argument_is_not_differentiable():
    q = pf.tensor([1.5, 2.0])
    x = pf.tensor([3.0, 3.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="with respect to x"):
        pf.special.zeta(x, q)
    close(pf.special.zeta(x.detach(), q), sp.zeta(3.0, q.numpy()))


def test_mvlgamma_domain_error():
    with pytest.raises(OpError, match=r"greater than \(p-1\)/2"):
        pf.special.multigammaln(pf.tensor([0.4]), 3)


def test_gammainc_first_argument_is_not_differentiable():
    with pytest.raises(NotImplementedError, match="with respect to a"):
        pf.special.gammainc(pf.tensor([2.0], requires_grad=True), pf.tensor([1.0]))


def test_airy_second_derivative():
    """Ai'' = x Ai: the derivative of the derivative goes through _special_airy_ai_prime."""
    x = pf.tensor([0.3, -1.2], requires_grad=True)
    (g,) = pf.autograd.grad(pf.special.airy_ai(x).sum(), x, create_graph=True)
    (h,) = pf.autograd.grad(g.sum(), x)
    close(h, x.detach().numpy() * sp.airy(x.detach().numpy())[0])


@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_complex_polygamma_matches_mpmath(n):
    mpmath = pytest.importorskip("mpmath")
    z = np.array([0.5 + 0.3j, -0.7 + 0.4j, 0.2 - 0.8j, 3 + 4j, -5.5 + 0.5j, 25 - 3j, 1e-3 + 0.2j, -30.2 - 0.1j])
    exp = np.array([complex(mpmath.polygamma(n, complex(v))) for v in z])
    got = (pf.digamma(pf.tensor(z)) if n == 0 else pf.polygamma(n, pf.tensor(z))).numpy()
    np.testing.assert_allclose(got, exp, rtol=1e-12)


def test_complex_digamma_derivative_is_trigamma():
    z = pf.tensor([0.5 + 0.3j], requires_grad=True)
    (pf.digamma(z) * pf.tensor([1.0 + 0j])).real.sum().backward()
    # conjugate Wirtinger: grad = conj(psi'(z)) for the real part of a holomorphic function
    close(z.grad, np.conj(pf.polygamma(1, pf.tensor([0.5 + 0.3j])).numpy()))


@pytest.mark.parametrize(
    "name, args",
    [
        ("gamma", ()),
        ("rgamma", ()),
        ("beta", (2.5,)),
        ("poch", (1.5,)),
        ("tandg", ()),
        ("bdtr", None),
        ("expn", None),
    ],
)
def test_scipy_special_runs_under_vmap(name, args):
    """pushforward.scipy.special reads no tensor's values (gammasgn is made of ops), so vmap of its
    gradient equals the per-example gradient."""
    from pushforward.scipy import special as ps

    f = {
        "bdtr": lambda p: ps.bdtr(2.0, 5.0, p),
        "expn": lambda x: ps.expn(pf.tensor(2.0), x + 0.5),
    }.get(name) or (lambda x: getattr(ps, name)(x + 0.5, *args))
    x = pf.tensor([0.1, 0.4, 0.8])
    batched = pf.func.vmap(pf.func.grad(f))(x)
    close(batched, np.array([float(pf.func.grad(f)(pf.tensor(v))) for v in (0.1, 0.4, 0.8)]))


def test_scipy_special_gammasgn_is_scipys():
    from pushforward.scipy import special as ps

    v = np.array([np.inf, -np.inf, np.nan, -0.5, -1.5, -2.5, 0.0, -0.0, -2.0, 3.0])
    np.testing.assert_array_equal(ps.gammasgn(pf.tensor(v)).numpy(), sp.gammasgn(v))
