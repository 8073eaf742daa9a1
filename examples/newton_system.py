"""Newton's method on a nonlinear system with the Jacobian from ``jacfwd``:
the Bratu problem  -u'' = lam * exp(u) on (0, 1), u(0) = u(1) = 0, discretised by
central differences on n interior points (a tridiagonal plus diagonal Jacobian).
``jacfwd`` takes the whole Jacobian in one vector-mode pass (a dual level of batch n).

Run: python examples/newton_system.py
"""

from __future__ import annotations

import numpy as np

import pushforward as pf
from pushforward.func import jacfwd


def residual(u: pf.Tensor, lam: float) -> pf.Tensor:
    """F(u) = (-u[i-1] + 2u[i] - u[i+1]) / h^2 - lam * exp(u[i]), with zero boundary values."""
    n = u.shape[0]
    h = 1.0 / (n + 1)
    zero = pf.zeros(1, dtype=u.dtype)
    padded = pf.cat([zero, u, zero])
    lap = (padded[:-2] - 2.0 * padded[1:-1] + padded[2:]) / (h * h)
    return -lap - lam * u.exp()


def analytic_jacobian(u: np.ndarray, lam: float) -> np.ndarray:
    n = u.shape[0]
    h = 1.0 / (n + 1)
    J = (2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)) / (h * h)
    return J - lam * np.diag(np.exp(u))


def newton(n: int = 50, lam: float = 1.0, tol: float = 1e-12, max_iter: int = 50) -> dict:
    """Solve F(u) = 0 from u = 0 by Newton's method: J(u) du = -F(u)."""
    jac = jacfwd(residual)
    u = np.zeros(n)
    history = []
    for it in range(1, max_iter + 1):
        F = residual(pf.from_numpy(u), lam).numpy()
        J = jac(pf.from_numpy(u), lam).numpy()
        du = np.linalg.solve(J, -F)
        u = u + du
        norm = float(np.linalg.norm(residual(pf.from_numpy(u), lam).numpy()))
        history.append(norm)
        if norm < tol or np.linalg.norm(du) < tol:
            break
    return {
        "u": u,
        "iterations": it,
        "residual_norms": history,
        "jacobian_error": float(np.max(np.abs(jac(pf.from_numpy(u), lam).numpy() - analytic_jacobian(u, lam)))),
    }


def main(n: int = 50, lam: float = 1.0, verbose: bool = True) -> dict:
    res = newton(n, lam)
    res["n"] = n
    res["lam"] = lam
    res["max_u"] = float(res["u"].max())
    if verbose:
        print(f"Bratu problem, n = {n}, lambda = {lam}: Newton's method with J = jacfwd(F)")
        for k, r in enumerate(res["residual_norms"], 1):
            print(f"  iteration {k}: |F(u)| = {r:.3e}")
        print(f"  max u = {res['max_u']:.8f}   |J - J_analytic|_max = {res['jacobian_error']:.1e}")
    return res


if __name__ == "__main__":
    main()
