"""Fit the hyperparameters of a Gaussian process by minimising its negative log marginal
likelihood with SciPy's trust-region Newton-CG. The gradient comes from reverse mode and
the Hessian-vector products from forward-over-reverse, both straight through a Cholesky
factorisation and triangular solves (pf.linalg.cholesky, pf.cholesky_solve).

    nll(theta) = 1/2 y^T K^-1 y + sum(log diag L) + n/2 log(2 pi),   K = L L^T,
    K_ij = s^2 exp(-(x_i - x_j)^2 / (2 l^2)) + sigma^2 delta_ij,  theta = log(l, s, sigma).

Run: python examples/gp_marginal_likelihood.py
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

import pushforward as pf
from pushforward.autograd.functional import hvp
from pushforward.func import grad_and_value

N = 40
JITTER = 1e-8


def data(n: int = N, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Noisy samples of sin(2x) on [0, 5]."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 5.0, n))
    return x, np.sin(2.0 * x) + 0.1 * rng.standard_normal(n)


def nll(theta: pf.Tensor, x: pf.Tensor, y: pf.Tensor) -> pf.Tensor:
    """Negative log marginal likelihood of a squared-exponential GP with Gaussian noise."""
    p = theta.exp()
    ell, sf, sn = p[0], p[1], p[2]
    n = x.shape[0]
    d2 = (x[:, None] - x[None, :]) ** 2
    k = sf**2 * (-0.5 * d2 / ell**2).exp() + (sn**2 + JITTER) * pf.eye(n)
    chol = pf.linalg.cholesky(k)
    alpha = pf.cholesky_solve(y[:, None], chol)
    return 0.5 * (y[:, None] * alpha).sum() + chol.diagonal().log().sum() + 0.5 * n * np.log(2 * np.pi)


def nll_numpy(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """The same objective in plain NumPy (a check of the value)."""
    ell, sf, sn = np.exp(theta)
    k = sf**2 * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell**2) + (sn**2 + JITTER) * np.eye(len(x))
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(k, y)
    return float(0.5 * y @ alpha + np.log(np.diag(chol)).sum() + 0.5 * len(x) * np.log(2 * np.pi))


class Objective:
    """NumPy-facing value, gradient and Hessian-vector product, counting their calls."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y = pf.from_numpy(x), pf.from_numpy(y)
        self.calls = {"fun": 0, "jac": 0, "hessp": 0}
        self._gv = grad_and_value(self._f)

    def _f(self, theta: pf.Tensor) -> pf.Tensor:
        return nll(theta, self.x, self.y)

    def fun(self, theta: np.ndarray) -> float:
        self.calls["fun"] += 1
        return float(self._f(pf.from_numpy(theta)))

    def jac(self, theta: np.ndarray) -> np.ndarray:
        self.calls["jac"] += 1
        g, _ = self._gv(pf.from_numpy(theta))
        return g.numpy().copy()

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        """H(theta) v by forward-over-reverse through the Cholesky factorisation."""
        self.calls["hessp"] += 1
        _, hv = hvp(self._f, pf.from_numpy(theta), pf.from_numpy(v), fw_mode=True)
        return hv.numpy().copy()


def main(verbose: bool = True) -> dict:
    x, y = data()
    obj = Objective(x, y)
    theta0 = np.log(np.array([1.0, 1.0, 0.5]))
    r = minimize(obj.fun, theta0, method="trust-ncg", jac=obj.jac, hessp=obj.hessp, options={"gtol": 1e-9})
    # an independent run without second derivatives, for comparison
    ref = minimize(lambda t: nll_numpy(t, x, y), theta0, method="BFGS", options={"gtol": 1e-9})
    res = {
        "theta": r.x,
        "params": np.exp(r.x),
        "fun": float(r.fun),
        "success": bool(r.success),
        "nit": int(r.nit),
        "calls": dict(obj.calls),
        "grad_norm": float(np.linalg.norm(obj.jac(r.x))),
        "fun_numpy": nll_numpy(r.x, x, y),
        "bfgs_fun": float(ref.fun),
        "bfgs_nit": int(ref.nit),
        "max_abs_diff_theta_vs_bfgs": float(np.max(np.abs(r.x - ref.x))),
    }
    if verbose:
        ell, sf, sn = res["params"]
        print(
            f"GP marginal likelihood, {N} points, scipy.optimize.minimize(method='trust-ncg'), "
            "hessp by forward-over-reverse"
        )
        print(f"  lengthscale = {ell:.4f}  signal sd = {sf:.4f}  noise sd = {sn:.4f}")
        print(
            f"  nll = {res['fun']:.8f} (NumPy: {res['fun_numpy']:.8f})  |grad| = {res['grad_norm']:.1e}  "
            f"iterations = {res['nit']}  calls = {res['calls']}"
        )
        print(
            f"  BFGS without Hessian: nll = {res['bfgs_fun']:.8f} in {res['bfgs_nit']} iterations, "
            f"max |theta - theta_bfgs| = {res['max_abs_diff_theta_vs_bfgs']:.1e}"
        )
    return res


if __name__ == "__main__":
    main()
