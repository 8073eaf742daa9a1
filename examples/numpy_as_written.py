"""A NumPy program differentiated as written: a Crank-Nicolson heat solver whose tridiagonal
systems are solved by the Thomas algorithm in row loops, into buffers allocated with np.empty
and filled element by element (the way scientific NumPy code is written). Imported through
``pushforward.numpy`` instead of ``numpy``, the same source runs on tensors: the sensitivity of
the final heat content to the initial temperature and to the diffusivity comes out of ``jvp``
and ``jacfwd``, checked here against finite differences of the NumPy run.

Run: python examples/numpy_as_written.py
"""

from __future__ import annotations

import numpy

import pushforward as pf
import pushforward.numpy as pnp


def thomas(np, lower, diag, upper, rhs):
    """Solve a tridiagonal system by forward elimination and back substitution (row loops)."""
    n = diag.shape[0]
    c = np.empty(n)
    d = np.empty(n)
    c[0] = upper / diag[0]
    d[0] = rhs[0] / diag[0]
    for i in range(1, n):
        m = diag[i] - lower * c[i - 1]
        c[i] = upper / m
        d[i] = (rhs[i] - lower * d[i - 1]) / m
    x = np.empty(n)
    x[n - 1] = d[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = d[i] - c[i] * x[i + 1]
    return x


def heat_content(np, u0, kappa, steps=20, dt=0.01):
    """Crank-Nicolson for u_t = kappa u_xx on (0, 1), u = 0 at both ends; returns sum(u^2) h."""
    n = u0.shape[0]
    h = 1.0 / (n + 1)
    r = kappa * dt / (2 * h * h)
    diag = np.full(n, 1 + 2 * r)
    u = u0
    for _ in range(steps):
        rhs = np.empty(n)
        rhs[1:-1] = r * u[:-2] + (1 - 2 * r) * u[1:-1] + r * u[2:]
        rhs[0] = (1 - 2 * r) * u[0] + r * u[1]
        rhs[-1] = r * u[-2] + (1 - 2 * r) * u[-1]
        u = thomas(np, -r, diag, -r, rhs)
    return np.sum(u * u) * h


def main(verbose: bool = True) -> dict:
    n = 30
    x = numpy.linspace(0, 1, n + 2)[1:-1]
    u0, kappa = numpy.sin(numpy.pi * x) + 0.3 * numpy.sin(3 * numpy.pi * x), 0.5
    v = numpy.cos(2 * numpy.pi * x)  # a perturbation of the initial temperature

    # forward mode: the buffers are overwritten as the loops go, which reverse mode refuses today
    # (SavedTensorModifiedError, as torch) and forward mode does not mind
    du0 = pf.func.jacfwd(lambda a: heat_content(pnp, a, kappa))(pf.tensor(u0))  # the gradient, n tangents at once
    _, jv = pf.func.jvp(lambda a: heat_content(pnp, a, kappa), (pf.tensor(u0),), (pf.tensor(v),))
    _, dkappa = pf.func.jvp(lambda k: heat_content(pnp, pf.tensor(u0), k), (pf.tensor(kappa),), (pf.tensor(1.0),))

    eps = 1e-6
    fd_u0 = (heat_content(numpy, u0 + eps * v, kappa) - heat_content(numpy, u0 - eps * v, kappa)) / (2 * eps)
    fd_kappa = (heat_content(numpy, u0, kappa + eps) - heat_content(numpy, u0, kappa - eps)) / (2 * eps)
    res = {
        "value": float(heat_content(numpy, u0, kappa)),
        "jvp": jv.item(),
        "fd_jvp": fd_u0,
        "grad_dot_v": float(numpy.dot(du0.numpy(), v)),
        "dkappa": dkappa.item(),
        "fd_dkappa": fd_kappa,
    }
    if verbose:
        print(f"heat content {res['value']:.6f}")
        print(f"d/du0 along v: jvp {res['jvp']:.8f}, grad . v {res['grad_dot_v']:.8f}, FD {fd_u0:.8f}")
        print(f"d/dkappa:      jvp {res['dkappa']:.8f}, FD {fd_kappa:.8f}")
    return res


if __name__ == "__main__":
    main()
