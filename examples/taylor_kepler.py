"""A Taylor-series ODE integrator on the Kepler two-body problem, with `pf.func.jet`, against
SciPy's DOP853 at the same tolerance.

    q'' = -q / |q|^3      (q in the plane; y = (q, p), p = q')

For y' = f(y) the derivatives of the solution follow from those of f along it:
y^(k+1)(t0) = d^k/dt^k f(y(t)) at t0, which is exactly what `jet(f, (y0,), ([y', ..., y^(k)],))`
returns as its k-th term. Each step computes the order-20 Taylor polynomial at t0 that way, picks
the step from the size of its last two coefficients (Jorba and Zou's rule: the terms beyond them
are below the tolerance) and sums the polynomial. One period of an orbit with eccentricity 0.5
must bring the state back to where it started.

Run: python examples/taylor_kepler.py
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.integrate import solve_ivp

import pushforward as pf
from pushforward.func import jet

ECC = 0.5
PERIOD = 2 * math.pi  # semi-major axis 1, mu = 1
MIN_RTOL = 2.3e-14  # SciPy raises a smaller rtol to 100 eps (with a warning)


def kepler(y: pf.Tensor) -> pf.Tensor:
    """The right-hand side f(y) for y = (q1, q2, p1, p2)."""
    q, p = y[:2], y[2:]
    r3 = (q * q).sum() ** 1.5
    return pf.cat([p, -q / r3])


def kepler_np(t: float, y: np.ndarray) -> np.ndarray:
    q, p = y[:2], y[2:]
    return np.concatenate([p, -q / np.dot(q, q) ** 1.5])


def initial_state() -> np.ndarray:
    """At perihelion: q = (1 - e, 0), p = (0, sqrt((1 + e) / (1 - e)))."""
    return np.array([1 - ECC, 0.0, 0.0, math.sqrt((1 + ECC) / (1 - ECC))])


def taylor_coefficients(y0: np.ndarray, order: int) -> np.ndarray:
    """Normalised Taylor coefficients y_k = y^(k)(t0) / k!, k = 0..order, of the solution through y0."""
    x = pf.tensor(y0)
    derivs: list = []  # y', y'', ...: the input curve's terms in jet's derivative convention
    for k in range(order):
        prim, terms = jet(kepler, (x,), (derivs,))
        derivs.append(terms[-1] if terms else prim)  # y^(k+1) = (f o y)^(k)
    return np.stack([y0] + [d.numpy() / math.factorial(k + 1) for k, d in enumerate(derivs)])


def step_size(coeffs: np.ndarray, tol: float, scale: float) -> float:
    """Jorba and Zou's step: the last two coefficients' terms are at most tol * scale."""
    K = len(coeffs) - 1
    rho = min((tol * scale / max(np.max(np.abs(coeffs[m])), 1e-300)) ** (1.0 / m) for m in (K - 1, K))
    return 0.9 * rho


def integrate_taylor(y0: np.ndarray, t_end: float, order: int, tol: float) -> tuple[np.ndarray, int]:
    t, y, steps = 0.0, y0.copy(), 0
    while t < t_end:
        c = taylor_coefficients(y, order)
        h = min(step_size(c, tol, max(1.0, np.max(np.abs(y)))), t_end - t)
        y = np.polynomial.polynomial.polyval(h, c)  # Horner, per component (c: (order + 1, 4))
        t += h
        steps += 1
    return y, steps


def _error(sol, y0: np.ndarray) -> float:
    return float(np.max(np.abs(sol.y[:, -1] - y0)) / np.max(np.abs(y0)))


def main(order: int = 20, tol: float = 1e-12, verbose: bool = True) -> dict:
    y0 = initial_state()
    t0 = time.perf_counter()
    y_taylor, steps = integrate_taylor(y0, PERIOD, order, tol)
    t_taylor = time.perf_counter() - t0
    t0 = time.perf_counter()
    sol = solve_ivp(kepler_np, (0.0, PERIOD), y0, method="DOP853", rtol=tol, atol=tol)
    t_dop = time.perf_counter() - t0
    err_taylor = float(np.max(np.abs(y_taylor - y0)) / np.max(np.abs(y0)))
    # DOP853 at the accuracy the Taylor integrator reached: tighten its tolerance until it gets there
    dop_tol, same = tol, sol
    while _error(same, y0) > err_taylor and dop_tol > MIN_RTOL:
        dop_tol = max(dop_tol / 10, MIN_RTOL)
        same = solve_ivp(kepler_np, (0.0, PERIOD), y0, method="DOP853", rtol=dop_tol, atol=dop_tol)
    res = {
        "order": order,
        "tol": tol,
        "taylor_steps": steps,
        "taylor_seconds": t_taylor,
        "taylor_error": err_taylor,
        "dop853_steps": len(sol.t) - 1,
        "dop853_rhs_evaluations": int(sol.nfev),
        "dop853_seconds": t_dop,
        "dop853_error": _error(sol, y0),
        "dop853_same_accuracy": {"tol": dop_tol, "steps": len(same.t) - 1, "error": _error(same, y0)},
    }
    if verbose:
        print(f"one period of a Kepler orbit (e = {ECC}), tolerance {tol:g}")
        print(f"  Taylor order {order}: {steps} steps, {t_taylor:.2f} s, relative error {res['taylor_error']:.2e}")
        print(
            f"  DOP853:          {res['dop853_steps']} steps ({res['dop853_rhs_evaluations']} f evaluations), "
            f"{t_dop:.2f} s, relative error {res['dop853_error']:.2e}"
        )
        same = res["dop853_same_accuracy"]
        print(
            f"  DOP853 at the Taylor error (tolerance {same['tol']:g}): {same['steps']} steps, error {same['error']:.2e}"
        )
    return res


if __name__ == "__main__":
    main()
