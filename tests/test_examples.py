"""The scripts in examples/ run and give the right answers."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
pytest.importorskip("scipy")


def load(name):
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rosenbrock_newton_cg_with_exact_hvp():
    res = load("rosenbrock_newton_cg").main(verbose=False)
    assert res["n"] == 100
    exact, fd = res["exact"], res["finite_difference"]
    assert exact["success"] and fd["success"]
    # same optimum, the known minimiser x* = 1
    assert exact["max_err"] < 1e-6 and fd["max_err"] < 1e-6
    assert res["max_abs_diff_x"] < 1e-6
    assert exact["fun"] < 1e-12
    # Hessian-vector products replace the gradient calls of SciPy's finite differences
    assert exact["calls"]["hessp"] > 0 and fd["calls"]["hessp"] == 0
    assert exact["evaluations"] < fd["evaluations"]
    assert exact["calls"]["jac"] < fd["calls"]["jac"]


def test_rosenbrock_hessp_is_exact():
    mod = load("rosenbrock_newton_cg")
    x = np.linspace(-1.0, 1.5, 6)
    p = np.arange(6.0)
    # analytic Hessian of the Rosenbrock function
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        H[i + 1, i + 1] += 200
        H[i, i + 1] -= 400 * x[i]
        H[i + 1, i] -= 400 * x[i]
    np.testing.assert_allclose(mod.Counted().hessp(x, p), H @ p, rtol=1e-12, atol=1e-10)


def test_robertson_bdf_with_jacfwd():
    res = load("robertson_ode").main(verbose=False)
    assert res["success"]
    assert res["njev"] >= 1
    assert res["jacobian_error"] < 1e-12
    assert res["mass_conservation_error"] < 1e-10
    assert res["max_rel_diff_vs_fd_run"] < 1e-5
    # reference values (Hairer & Wanner) at t = 0.4 and t = 40
    y = res["y"]
    np.testing.assert_allclose(y[:, 0], [9.851721e-01, 3.386395e-05, 1.479406e-02], rtol=1e-5)
    np.testing.assert_allclose(y[:, 2], [7.158271e-01, 9.185535e-06, 2.841637e-01], rtol=1e-4)


def test_newton_system_with_jacfwd():
    res = load("newton_system").main(verbose=False)
    norms = res["residual_norms"]
    assert norms[-1] < 1e-10
    assert res["iterations"] <= 6
    assert res["jacobian_error"] < 1e-8
    # quadratic convergence: each residual roughly the square of the previous (scaled)
    assert norms[1] < norms[0] ** 1.5
    # the continuous Bratu solution at lambda = 1: u(1/2) = -2 log(1 / cosh(theta / 4)),
    # theta = sqrt(2 lambda) cosh(theta / 4)
    theta = 1.0
    for _ in range(100):
        theta = np.sqrt(2.0) * np.cosh(theta / 4)
    u_mid = 2 * np.log(np.cosh(theta / 4))
    assert abs(res["max_u"] - u_mid) < 1e-3


@pytest.mark.parametrize(
    "name", ["rosenbrock_newton_cg", "robertson_ode", "newton_system", "gp_marginal_likelihood", "compiled_ode"]
)
def test_example_scripts_run(name):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(EXAMPLES.parent / "src"), env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()


# ---- nn, sorting, scatter, composites
def test_forward_gradient_cnn():
    res = load("forward_gradient_cnn").main(steps=60, verbose=False)
    fg, bp = res["forward_gradient"], res["backprop"]
    assert len(fg) == len(bp) == 60 and fg[0] == bp[0]  # same net, same start
    assert res["jvp_vs_grad_rel_error"] < 1e-10  # forward and reverse mode agree
    assert bp[-1] < 0.2 * bp[0]  # backpropagation learns the task
    assert np.mean(fg[-10:]) < 0.95 * np.mean(fg[:10])  # forward gradients lower the loss, no backward pass
    assert res["acc_backprop"] > 0.9 and res["acc_forward_gradient"] > res["acc_initial"]


def test_forward_gradient_cnn_script_runs():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(EXAMPLES.parent / "src"), env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "forward_gradient_cnn.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "forward gradient" in out.stdout and "backpropagation" in out.stdout


# ---- linalg: Gaussian-process marginal likelihood through cholesky
def test_gp_marginal_likelihood_newton_cg():
    res = load("gp_marginal_likelihood").main(verbose=False)
    assert res["success"] and res["grad_norm"] < 1e-7
    assert abs(res["fun"] - res["fun_numpy"]) < 1e-10
    # the same optimum as BFGS on the NumPy objective, in fewer iterations
    assert abs(res["fun"] - res["bfgs_fun"]) < 1e-9 and res["max_abs_diff_theta_vs_bfgs"] < 1e-4
    assert res["calls"]["hessp"] > 0 and res["nit"] < res["bfgs_nit"]
    ell, sf, sn = res["params"]
    assert 0.5 < ell < 1.5 and 0.05 < sn < 0.2  # data: sin(2x) + 0.1 noise


def test_gp_hessp_matches_finite_differences_of_the_gradient():
    mod = load("gp_marginal_likelihood")
    obj = mod.Objective(*mod.data(12))
    theta = np.log(np.array([0.8, 1.2, 0.3]))
    v = np.array([0.3, -1.0, 0.5])
    h = 1e-5
    fd = (obj.jac(theta + h * v) - obj.jac(theta - h * v)) / (2 * h)
    np.testing.assert_allclose(obj.hessp(theta, v), fd, rtol=1e-6, atol=1e-7)


def test_brusselator_sparse_script_runs_small(monkeypatch, capsys):
    mod = load("brusselator_sparse")
    monkeypatch.setattr(sys, "argv", ["brusselator_sparse.py", "--n", "6", "--t-end", "0.2"])
    mod.main()
    out = capsys.readouterr().out
    assert "colors" in out and "max |y_AD - y_FD|" in out


def test_compiled_ode_matches_eager():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, not a silent eager fallback
        res = load("compiled_ode").main(n=8, t_end=2.0, verbose=False)
    assert res["success"] and res["same_steps"]
    assert res["max_abs_diff"] < 1e-12


def test_taylor_kepler_integrator_beats_dop853_on_steps():
    res = load("taylor_kepler").main(order=12, tol=1e-8, verbose=False)
    assert res["taylor_error"] < 1e-7  # one period brings the orbit back to its start
    assert res["taylor_steps"] < res["dop853_same_accuracy"]["steps"]


def test_taylor_kepler_coefficients_are_the_solution_derivatives():
    mod = load("taylor_kepler")
    y0 = mod.initial_state()
    c = mod.taylor_coefficients(y0, 3)
    f = mod.kepler_np(0.0, y0)
    np.testing.assert_allclose(c[1], f, rtol=1e-14)  # y' = f(y)
    h = 1e-5  # y'' = f'(y) f(y): a central difference of f along f
    fd = (mod.kepler_np(0.0, y0 + h * f) - mod.kepler_np(0.0, y0 - h * f)) / (2 * h)
    np.testing.assert_allclose(2 * c[2], fd, rtol=1e-7, atol=1e-9)


def test_mlp_laplacian_by_jets_is_the_hessian_trace():
    res = load("mlp_laplacian").main(dim=8, width=16, repeat=1, verbose=False)
    assert res["rel_diff"] < 1e-12 and res["rel_diff_vmap"] < 1e-12


def test_dask_sensitivity_small():
    """The larger-than-memory example, run small: the lazy jvp equals <grad, v> and the NumPy path's."""
    if not os.environ.get("CI"):
        pytest.importorskip("dask.array")
    import pushforward as pf

    mod = load("dask_sensitivity")
    n, chunk = 10**5, 12345
    res = mod.main(n=n, chunk=chunk, verbose=False)
    assert res["n"] == n and res["peak_rss_gib"] > 0
    assert abs(res["jvp"] - res["grad_dot_v"]) <= 1e-10 * abs(res["jvp"])
    x = pf.tensor(mod.field(n, chunk).compute())
    v = pf.tensor(mod.field(n, chunk, phase=1.0).compute())
    want = pf.func.jvp(mod.objective, (x,), (v,))[1].item()
    assert abs(res["jvp"] - want) <= 1e-12 * abs(want)
    g = pf.func.grad(mod.objective)(x)
    assert abs(res["grad_norm"] - g.norm().item()) <= 1e-12 * g.norm().item()


def test_numpy_as_written_heat_solver_sensitivities():
    res = load("numpy_as_written").main(verbose=False)
    assert abs(res["jvp"] - res["fd_jvp"]) < 1e-7 * max(1.0, abs(res["fd_jvp"]))
    assert abs(res["grad_dot_v"] - res["jvp"]) < 1e-10
    assert abs(res["dkappa"] - res["fd_dkappa"]) < 1e-7
    assert res["value"] > 0
