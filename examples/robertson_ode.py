"""The stiff Robertson chemical kinetics problem, solved with SciPy's BDF method and an
exact Jacobian from pushforward's forward mode (``jacfwd``: all three columns in one
vector-mode pass).

    y1' = -0.04 y1 + 1e4 y2 y3
    y2' =  0.04 y1 - 1e4 y2 y3 - 3e7 y2^2
    y3' =                         3e7 y2^2        y(0) = (1, 0, 0)

Run: python examples/robertson_ode.py
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

import pushforward as pf
from pushforward.func import jacfwd

K1, K2, K3 = 0.04, 3e7, 1e4


def robertson(y: pf.Tensor) -> pf.Tensor:
    """Right-hand side f(y) of the (autonomous) Robertson system."""
    y1, y2, y3 = y[0:1], y[1:2], y[2:3]
    r1 = K1 * y1
    r2 = K2 * y2 * y2
    r3 = K3 * y2 * y3
    return pf.cat([-r1 + r3, r1 - r2 - r3, r2])


def analytic_jacobian(y: np.ndarray) -> np.ndarray:
    y1, y2, y3 = y
    return np.array([[-K1, K3 * y3, K3 * y2], [K1, -2 * K2 * y2 - K3 * y3, -K3 * y2], [0.0, 2 * K2 * y2, 0.0]])


_jac = jacfwd(robertson)


def rhs(t: float, y: np.ndarray) -> np.ndarray:
    return robertson(pf.from_numpy(np.asarray(y, dtype=np.float64))).numpy()


def jac(t: float, y: np.ndarray) -> np.ndarray:
    """The exact 3x3 Jacobian df/dy by forward mode (three jvps in one batched pass)."""
    return _jac(pf.from_numpy(np.asarray(y, dtype=np.float64))).numpy()


def main(t_end: float = 1e5, verbose: bool = True) -> dict:
    y0 = np.array([1.0, 0.0, 0.0])
    t_eval = np.array([0.4, 4.0, 40.0, 400.0, 4e3, 4e4, t_end])
    kw = dict(method="BDF", rtol=1e-6, atol=[1e-8, 1e-14, 1e-8], t_eval=t_eval)
    with_jac = solve_ivp(rhs, (0.0, t_end), y0, jac=jac, **kw)
    fd_jac = solve_ivp(rhs, (0.0, t_end), y0, **kw)

    probe = with_jac.y[:, 2]
    res = {
        "t": with_jac.t,
        "y": with_jac.y,
        "success": bool(with_jac.success and fd_jac.success),
        "nfev": int(with_jac.nfev),
        "njev": int(with_jac.njev),
        "nlu": int(with_jac.nlu),
        "nfev_finite_difference": int(fd_jac.nfev),
        "njev_finite_difference": int(fd_jac.njev),
        "max_rel_diff_vs_fd_run": float(np.max(np.abs(with_jac.y - fd_jac.y) / (np.abs(fd_jac.y) + 1e-12))),
        "mass_conservation_error": float(np.max(np.abs(with_jac.y.sum(0) - 1.0))),
        "jacobian_error": float(np.max(np.abs(jac(0.0, probe) - analytic_jacobian(probe)))),
    }
    if verbose:
        print("Robertson problem, solve_ivp(method='BDF', jac=jacfwd(f))")
        for ti, yi in zip(res["t"], res["y"].T):
            print(f"  t = {ti:9.1f}   y = [{yi[0]:.6e}, {yi[1]:.6e}, {yi[2]:.6e}]")
        print(f"  exact Jacobian: nfev = {res['nfev']}, njev = {res['njev']}, nlu = {res['nlu']}")
        print(
            f"  SciPy's finite-difference Jacobian: nfev = {res['nfev_finite_difference']}, "
            f"njev = {res['njev_finite_difference']}"
        )
        print(f"  max relative difference between the runs: {res['max_rel_diff_vs_fd_run']:.2e}")
        print(
            f"  |sum(y) - 1|: {res['mass_conservation_error']:.2e};  Jacobian vs analytic: {res['jacobian_error']:.2e}"
        )
    return res


if __name__ == "__main__":
    main()
