"""Integer-only and piecewise-constant NumPy programs (counts, argmax, floor, sign, comparisons,
histogram counts, bincount without weights) run under the transforms and the tape, in the drop-in
and via NumPy's dispatch: their derivatives are zero where the math says so, or the error is a
clear one naming the function (never a raw NumPy error, never a wrong number)."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import pushforward as pf
import pushforward.numpy as pnp
from pushforward.errors import PushforwardError

# name -> program of (np, x); each is piecewise constant in x
PROGRAMS = {
    "count_nonzero": lambda np, x: np.count_nonzero(x > 0.5),
    "argmax": lambda np, x: np.argmax(x),
    "argmax_as_float": lambda np, x: np.argmax(x) * 1.0,
    "floor": lambda np, x: np.floor(x).sum(),
    "sign": lambda np, x: np.sign(x).sum(),
    "round": lambda np, x: np.round(x).sum(),
    "comparison_count": lambda np, x: (x > 0.5).sum(),
    "comparison_as_float": lambda np, x: np.sum(x > 0.5) * 1.0,
    "where_of_a_comparison": lambda np, x: np.where(x > 0.5, 1.0, 0.0).sum(),
    "histogram_counts": lambda np, x: np.histogram(x, bins=3)[0].sum(),
    "histogram_counts_as_float": lambda np, x: np.histogram(x, bins=3)[0][1] * 1.0,
    "bincount": lambda np, x: np.bincount(np.floor(x * 3).astype(int)).max(),
    "bincount_as_float": lambda np, x: np.bincount(np.floor(x * 3).astype(int))[0] * 1.0,
    "int_cast": lambda np, x: x.astype(np.int64).sum(),
    "digitize": lambda np, x: np.digitize(x, np.array([0.2, 0.6])).sum(),
    "searchsorted": lambda np, x: np.searchsorted(np.array([0.2, 0.6]), x).sum(),
}
X = onp.array([0.1, 0.7, 0.4, 0.9, 1.3])
MODES = {"dropin": pnp, "dispatch": onp}


def _zero(t) -> bool:
    return t is None or not onp.any(onp.asarray(t.detach().numpy() if isinstance(t, pf.Tensor) else t))


def _clear(err: BaseException) -> bool:
    """One of our errors, naming what refused (not NumPy's own)."""
    return isinstance(err, PushforwardError) and ("grad" in str(err) or "np." in str(err))


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_primal_and_jvp_are_numpys_value_and_zero(name, mode):
    f, np = PROGRAMS[name], MODES[mode]
    out, tan = pf.func.jvp(lambda x: f(np, x), (pf.tensor(X),), (pf.ones(X.shape),))
    onp.testing.assert_array_equal(onp.asarray(out.numpy() if isinstance(out, pf.Tensor) else out), f(onp, X.copy()))
    assert _zero(tan)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_gradient_is_zero_or_a_clear_error(name, mode):
    f, np = PROGRAMS[name], MODES[mode]
    try:
        g = pf.func.grad(lambda x: f(np, x))(pf.tensor(X))
    except Exception as e:  # noqa: BLE001 - which error is what is tested
        assert _clear(e), f"{type(e).__module__}.{type(e).__name__}: {e}"
        integer = onp.asarray(f(onp, X.copy())).dtype.kind in "iub"
        assert integer and "not differentiable" in str(e), str(e)  # only an integer result refuses
        return
    assert _zero(g)


@pytest.mark.parametrize("name", [n for n in PROGRAMS if onp.asarray(PROGRAMS[n](onp, X.copy())).dtype.kind == "f"])
def test_tape_gradient_is_zero(name):
    x = pf.tensor(X, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = PROGRAMS[name](pnp, x)
    if isinstance(out, pf.Tensor) and out.requires_grad:
        out.backward()
    assert _zero(x.grad)


def test_a_python_number_returned_is_refused_as_torch_func():
    """A count returned as a Python number: torch.func's rule (the transforms take Tensors only)
    names the fix; returned as a tensor it is a constant with a zero derivative."""
    with pytest.raises(RuntimeError, match="return only tensors"):
        pf.func.jvp(lambda x: len(pnp.unique(pnp.floor(x * 3))), (pf.tensor(X),), (pf.ones(X.shape),))
    out, tan = pf.func.jvp(lambda x: pnp.floor(x * 3).sum(), (pf.tensor(X),), (pf.ones(X.shape),))
    assert out.item() == onp.floor(X * 3).sum() and _zero(tan)


def test_np_int64_of_a_dual_tensor_is_its_integer_values():
    with pf.autograd.forward_ad.dual_level():
        d = pf.autograd.forward_ad.make_dual(pf.tensor([1.5, 2.0]), pf.tensor([1.0, 1.0]))
        onp.testing.assert_array_equal(onp.int64(d), [1, 2])
        with pytest.raises(PushforwardError, match="derivative would be lost"):
            onp.float64(d)  # a float copy would drop the tangent


def test_writing_into_a_leaf_that_requires_grad_is_a_runtime_and_a_type_error():
    """torch raises RuntimeError, autograd TypeError: the one error is both."""
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[0] = 3.0
    with pytest.raises(TypeError, match="leaf Variable"):
        x[0] = 3.0
