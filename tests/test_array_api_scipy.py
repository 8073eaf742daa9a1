"""SciPy's array-API code on our tensors (SCIPY_ARRAY_API=1, set before SciPy is imported, so in a
subprocess): results are our tensors and their tangents and gradients agree with finite
differences; the functions SciPy still computes with NumPy refuse dual tensors with a clear error
instead of dropping derivatives (docs/array-api.md lists both)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("scipy")

SCRIPT = textwrap.dedent(
    """
    import json, os
    import numpy as np
    import pushforward as pf
    import pushforward.array_api as xp
    import scipy.special as ss, scipy.stats as st, scipy.fft as sf, scipy.signal as sg, scipy.integrate as si
    import scipy.cluster.vq as vq
    from scipy._lib._array_api import array_namespace

    rng = np.random.default_rng(0)
    x0, y0 = rng.uniform(0.2, 0.9, 6), rng.uniform(0.2, 0.9, 6)
    y = xp.asarray(y0)
    FUNCS = {
        "special.logsumexp": lambda x: ss.logsumexp(x),
        "special.softmax": lambda x: ss.softmax(x),
        "special.log_softmax": lambda x: ss.log_softmax(x),
        "special.entr": lambda x: ss.entr(x),
        "special.rel_entr": lambda x: ss.rel_entr(x, y),
        "special.erf": lambda x: ss.erf(x),
        "special.erfc": lambda x: ss.erfc(x),
        "special.expit": lambda x: ss.expit(x),
        "special.logit": lambda x: ss.logit(x),
        "special.xlogy": lambda x: ss.xlogy(x, y),
        "special.xlog1py": lambda x: ss.xlog1py(x, y),
        "special.ndtr": lambda x: ss.ndtr(x),
        "special.log_ndtr": lambda x: ss.log_ndtr(x),
        "special.gammaln": lambda x: ss.gammaln(x),
        "special.i0": lambda x: ss.i0(x),
        "stats.moment": lambda x: st.moment(x, order=3),
        "stats.skew": lambda x: st.skew(x),
        "stats.kurtosis": lambda x: st.kurtosis(x),
        "stats.zscore": lambda x: st.zscore(x),
        "stats.pmean": lambda x: st.pmean(x, 2.5),
        "stats.gmean": lambda x: st.gmean(x),
        "stats.hmean": lambda x: st.hmean(x),
        "stats.variation": lambda x: st.variation(x),
        "stats.sem": lambda x: st.sem(x),
        "stats.entropy": lambda x: st.entropy(x),
        "fft.rfft": lambda x: sf.rfft(x),
        "fft.fft": lambda x: sf.fft(x),
        "signal.convolve(method='fft')": lambda x: sg.convolve(x, y[:3], method="fft"),
        "signal.fftconvolve": lambda x: sg.fftconvolve(x, y[:3]),
        "cluster.vq.whiten": lambda x: vq.whiten(xp.reshape(x, (3, 2))),
        "integrate.trapezoid": lambda x: si.trapezoid(x),
        "integrate.cumulative_trapezoid": lambda x: si.cumulative_trapezoid(x),
        # SciPy computes these with NumPy (np.asarray of the input)
        "signal.convolve": lambda x: sg.convolve(x, y[:3]),
        "signal.correlate": lambda x: sg.correlate(x, y[:3]),
        "integrate.simpson": lambda x: si.simpson(x),
        "fft.dct": lambda x: sf.dct(x),
        "special.kl_div": lambda x: ss.kl_div(x, y),
    }

    def real(f):
        def g(x):
            out = f(x)
            if out.dtype.kind == "c":
                out = xp.concat([xp.real(out), xp.imag(out)], axis=None)
            return xp.reshape(out, (-1,))
        return g

    def central(g, x, v, h=1e-6):
        return (g(pf.tensor(x + h * v)).numpy() - g(pf.tensor(x - h * v)).numpy()) / (2 * h)

    out = {"namespace": array_namespace(xp.asarray(x0)) is xp}
    for name, f in FUNCS.items():
        g = real(f)
        try:
            value = f(xp.asarray(x0))
            v = rng.standard_normal(6)
            _, t = pf.func.jvp(g, (pf.tensor(x0),), (pf.tensor(v),))
            jvp_ok = np.allclose(t.numpy(), central(g, x0, v), rtol=1e-5, atol=1e-7)
            w = rng.standard_normal(g(xp.asarray(x0)).shape)
            grad = pf.func.grad(lambda x: xp.sum(g(x) * xp.asarray(w)))(pf.tensor(x0))
            fd = [float(np.sum(central(g, x0, e) * w)) for e in np.eye(6)]
            grad_ok = np.allclose(grad.numpy(), fd, rtol=1e-5, atol=1e-7)
            out[name] = {"tensor": isinstance(value, pf.Tensor), "jvp": bool(jvp_ok), "grad": bool(grad_ok)}
        except Exception as e:
            out[name] = {"error": type(e).__name__ + ": " + str(e)[:200]}
    print(json.dumps(out))
    """
)

WORKING = [
    "special.logsumexp",
    "special.softmax",
    "special.log_softmax",
    "special.entr",
    "special.rel_entr",
    "special.erf",
    "special.erfc",
    "special.expit",
    "special.logit",
    "special.xlogy",
    "special.xlog1py",
    "special.ndtr",
    "special.log_ndtr",
    "special.gammaln",
    "special.i0",
    "stats.moment",
    "stats.skew",
    "stats.kurtosis",
    "stats.zscore",
    "stats.pmean",
    "stats.gmean",
    "stats.hmean",
    "stats.variation",
    "stats.sem",
    "stats.entropy",
    "fft.rfft",
    "fft.fft",
    "signal.convolve(method='fft')",
    "signal.fftconvolve",
    "cluster.vq.whiten",
    "integrate.trapezoid",
    "integrate.cumulative_trapezoid",
]
NUMPY_ONLY = ["signal.convolve", "signal.correlate", "integrate.simpson", "fft.dct", "special.kl_div"]


@pytest.fixture(scope="module")
def results():
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "SCIPY_ARRAY_API": "1", "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_scipy_finds_our_namespace(results):
    assert results["namespace"]


@pytest.mark.parametrize("name", WORKING)
def test_scipy_function_differentiates(results, name):
    assert results[name] == {"tensor": True, "jvp": True, "grad": True}, results[name]


@pytest.mark.parametrize("name", NUMPY_ONLY)
def test_numpy_only_scipy_function_refuses_duals(results, name):
    # never a silently dropped derivative: converting a dual tensor to NumPy raises
    assert "derivative would be lost" in results[name].get("error", ""), results[name]
