"""A stiff chemical network solved with SciPy's BDF method, its right-hand side and exact Jacobian
(`jacfwd`) run through `pf.compile`: traced once, then replayed as straight-line NumPy.

The Brusselator on a 1-D grid of N cells (reaction A -> U, B + U -> V + D, 2U + V -> 3U, U -> E,
with diffusion of U and V; stiff for a large diffusion coefficient):

    u' = A + u^2 v - (B + 1) u + alpha (u[i-1] - 2 u[i] + u[i+1]) N^2
    v' = B u - u^2 v           + alpha (v[i-1] - 2 v[i] + v[i+1]) N^2     (u = A, v = B at the ends)

`solve_ivp` calls the right-hand side and the Jacobian hundreds of times on a few dozen numbers:
there the cost is dispatch, which compiling removes.

Run: python examples/compiled_ode.py
"""

from __future__ import annotations

import time

import numpy as np
from scipy.integrate import solve_ivp

import pushforward as pf
from pushforward.func import jacfwd

A, B, ALPHA = 1.0, 3.0, 0.02


def brusselator(y: pf.Tensor) -> pf.Tensor:
    """Right-hand side of the Brusselator on n cells; y = (u_1..u_n, v_1..v_n)."""
    n = y.shape[0] // 2
    u, v = y[:n], y[n:]
    c = ALPHA * (n + 1) ** 2
    ua = pf.cat([pf.full((1,), A), u, pf.full((1,), A)])
    va = pf.cat([pf.full((1,), B), v, pf.full((1,), B)])
    lap_u = ua[:-2] - 2 * u + ua[2:]
    lap_v = va[:-2] - 2 * v + va[2:]
    uuv = u * u * v
    return pf.cat([A + uuv - (B + 1) * u + c * lap_u, B * u - uuv + c * lap_v])


def solve(f, jac, n: int, t_end: float) -> tuple:
    def rhs(t, y):
        return f(pf.from_numpy(y)).numpy()

    def jacobian(t, y):
        return jac(pf.from_numpy(y)).numpy()

    x = np.linspace(0, 1, n + 2)[1:-1]
    y0 = np.concatenate([1 + np.sin(2 * np.pi * x), np.full(n, 3.0)])
    t0 = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, t_end), y0, method="BDF", jac=jacobian, rtol=1e-8, atol=1e-10)
    return sol, time.perf_counter() - t0


def main(n: int = 20, t_end: float = 10.0, verbose: bool = True, reps: int = 2) -> dict:
    eager_f, eager_jac = brusselator, jacfwd(brusselator)
    comp_f, comp_jac = pf.compile(brusselator), pf.compile(jacfwd(brusselator))
    t0 = time.perf_counter()
    solve(comp_f, comp_jac, n, t_end)  # the first call of each signature traces
    trace_s = time.perf_counter() - t0
    te, tc = [], []
    for _ in range(reps):  # alternating, so that neither side pays for a cold start only
        se, t = solve(eager_f, eager_jac, n, t_end)
        te.append(t)
        sc, t = solve(comp_f, comp_jac, n, t_end)
        tc.append(t)
    res = {
        "success": bool(se.success and sc.success),
        "nfev": int(sc.nfev),
        "njev": int(sc.njev),
        "max_abs_diff": float(np.max(np.abs(se.y[:, -1] - sc.y[:, -1]))),
        "same_steps": se.t.shape == sc.t.shape,
        "eager_s": min(te),
        "compiled_s": min(tc),
        "first_compiled_s": trace_s,
    }
    res["ratio"] = res["compiled_s"] / res["eager_s"]
    if verbose:
        print(f"Brusselator, {n} cells (2n = {2 * n} states), solve_ivp(method='BDF') to t = {t_end}")
        print(f"  {res['nfev']} right-hand side calls, {res['njev']} Jacobians (jacfwd)")
        print(f"  eager:    {res['eager_s'] * 1e3:8.1f} ms")
        print(f"  compiled: {res['compiled_s'] * 1e3:8.1f} ms   ({res['ratio']:.2f}x eager)")
        print(f"  first compiled solve, tracing included: {res['first_compiled_s'] * 1e3:.1f} ms")
        print(f"  max |y_eager - y_compiled| at t_end: {res['max_abs_diff']:.1e}")
    return res


if __name__ == "__main__":
    main()
