"""Tests of pushforward.autograd.gradcheck / gradgradcheck: correct derivatives pass, wrong ones fail."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import functools

import pushforward as pf
from pushforward.autograd.gradcheck import GradcheckError, gradcheck as _gradcheck, gradgradcheck

RNG = np.random.default_rng(1234)

# These tests check forward formulas too: ask for it (gradcheck's default is torch's, False).
gradcheck = functools.partial(_gradcheck, check_forward_ad=True)


def real(*shape, requires_grad=True, low=-2.0, high=2.0):
    return pf.tensor(RNG.uniform(low, high, shape), requires_grad=requires_grad)


def cplx(*shape, requires_grad=True):
    # Keep away from 0 so abs/angle are smooth at the sample points.
    r = RNG.uniform(0.5, 2.0, shape)
    phi = RNG.uniform(-2.5, 2.5, shape)
    return pf.tensor(r * np.exp(1j * phi), requires_grad=requires_grad)


# -- correct functions pass ----------------------------------------------------------------------


@pytest.mark.parametrize("fast_mode", [False, True])
def test_sin(fast_mode):
    assert gradcheck(pf.sin, (real(3, 2),), fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_mul_broadcast(fast_mode):
    assert gradcheck(lambda a, b: a * b, (real(3, 4), real(4)), fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_matmul(fast_mode):
    assert gradcheck(lambda a, b: a @ b, (real(3, 4), real(4, 2)), fast_mode=fast_mode)


def test_single_tensor_input_and_zero_dim():
    assert gradcheck(lambda x: (x * x).sum(), real(4))
    assert gradcheck(pf.sin, pf.tensor(0.7, requires_grad=True))


def test_tuple_output_and_passthrough_arguments():
    def fn(x, k, y):
        return x * k, (x * y).sum()

    assert gradcheck(fn, (real(3), 2.5, real(3)))


def test_inputs_not_requiring_grad_are_skipped():
    y = real(3, requires_grad=False)
    idx = pf.tensor([0, 2, 1])  # integer tensor: passed through untouched
    assert gradcheck(lambda x, y, i: x * y + i, (real(3), y, idx))


def test_no_input_requires_grad_is_an_error():
    with pytest.raises(ValueError, match="require"):
        gradcheck(pf.sin, (real(3, requires_grad=False),))


def test_output_not_depending_on_input():
    # The analytical Jacobian of an output with no tape is zero, and so is the numerical one.
    c = real(2, requires_grad=False)
    assert gradcheck(lambda x: (x.sin(), c * 2.0), (real(2),))


# -- complex: conjugate-Wirtinger convention -----------------------------------------------------


@pytest.mark.parametrize(
    "name, fn",
    [
        ("abs", lambda z: z.abs()),
        ("real", lambda z: z.real),
        ("imag", lambda z: z.imag),
        ("conj", lambda z: z.conj()),
        ("angle", lambda z: pf.angle(z)),
        ("exp", lambda z: z.exp()),  # holomorphic, complex -> complex
        ("mul", lambda z: z * z.conj() * 0.5 + z),  # non-holomorphic mixture
    ],
)
@pytest.mark.parametrize("fast_mode", [False, True])
def test_complex_functions_pass(name, fn, fast_mode):
    assert gradcheck(fn, (cplx(3),), fast_mode=fast_mode)


def test_real_to_complex():
    # Real input, complex output: the vjp keeps the real part of the complex gradient.
    assert gradcheck(lambda x: x * (1 + 2j), (real(3),))


# -- custom Functions with deliberately wrong formulas --------------------------------------------


def make_sin(jvp_scale: float = 1.0, backward_scale: float = 1.0):
    class MySin(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * backward_scale

        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return x_t * x.cos() * jvp_scale

    return MySin


def test_correct_function_passes():
    assert gradcheck(make_sin().apply, (real(4),))


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("mode", ["forward", "backward"])
def test_formula_off_by_one_percent_fails_its_check(mode, fast_mode):
    """A jvp (or backward) off by 1% fails the forward (or backward) check, and only that one."""
    F = make_sin(jvp_scale=1.01) if mode == "forward" else make_sin(backward_scale=1.01)
    x = real(4)
    with pytest.raises(GradcheckError) as info:
        gradcheck(F.apply, (x,), fast_mode=fast_mode)
    msg = str(info.value)
    assert f"{mode} mode" in msg
    assert "output 0" in msg and "input 0" in msg
    assert "numerical" in msg and "analytical" in msg
    skip_the_wrong_one = {"check_forward_ad": False} if mode == "forward" else {"check_backward_ad": False}
    assert gradcheck(F.apply, (x,), fast_mode=fast_mode, **skip_the_wrong_one)


def test_message_names_output_and_input_index():
    F = make_sin(backward_scale=0.5)

    def fn(a, b):
        return a * b, F.apply(b)

    with pytest.raises(GradcheckError) as info:
        gradcheck(fn, (real(2), real(2)), check_forward_ad=False)
    msg = str(info.value)
    assert "output 1 with respect to input 1" in msg
    # Both Jacobians are printed in full: 2 x 2 here.
    num, ana = msg.split("numerical:")[1].split("analytical:")
    assert num.count("[") == 3 and ana.count("[") == 3


def test_raise_exception_false_returns_false():
    assert gradcheck(make_sin(jvp_scale=1.01).apply, (real(3),), raise_exception=False) is False
    assert gradcheck(make_sin(backward_scale=1.01).apply, (real(3),), raise_exception=False) is False
    assert gradcheck(make_sin().apply, (real(3),), raise_exception=False) is True


def test_gradcheck_error_is_runtime_error_and_exported():
    assert issubclass(GradcheckError, RuntimeError)
    assert pf.autograd.gradcheck is _gradcheck
    assert pf.autograd.gradgradcheck is gradgradcheck


def test_wrong_complex_convention_fails():
    # abs with the conjugated (wrong) gradient: only the Wirtinger convention check catches it.
    class BadAbs(pf.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            ctx.save_for_forward(z)
            return z.abs()

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * z.conj() / z.abs()  # correct: g * z / |z|

        @staticmethod
        def jvp(ctx, z_t):
            (z,) = ctx.saved_tensors
            return (z.conj() * z_t).real / z.abs()

    z = cplx(3)
    assert gradcheck(BadAbs.apply, (z,), check_backward_ad=False)
    with pytest.raises(GradcheckError, match="backward mode"):
        gradcheck(BadAbs.apply, (z,), check_forward_ad=False)


def test_wrong_jvp_on_complex_input_fails():
    # exp whose jvp ignores the imaginary direction of the tangent.
    class BadExp(pf.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            out = z.exp()
            ctx.save_for_backward(out)
            ctx.save_for_forward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out.conj()

        @staticmethod
        def jvp(ctx, z_t):
            (out,) = ctx.saved_tensors
            return z_t.real * out

    z = cplx(2)
    assert gradcheck(BadExp.apply, (z,), check_forward_ad=False)
    with pytest.raises(GradcheckError, match="imaginary part of the complex input"):
        gradcheck(BadExp.apply, (z,), check_backward_ad=False)


# -- undefined grads ------------------------------------------------------------------------------


def test_backward_nonzero_for_zero_grad_fails_undefined_check():
    class Leaky(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if not np.any(g.detach().numpy()):
                return pf.ones_like(x)  # wrong: zero grad_outputs must give zero (or None)
            return g * 2.0

        @staticmethod
        def jvp(ctx, x_t):
            return x_t * 2.0

    x = real(3)
    with pytest.raises(GradcheckError, match="undefined"):
        gradcheck(Leaky.apply, (x,))
    assert gradcheck(Leaky.apply, (x,), check_undefined_grad=False)


def test_multiple_outputs_with_one_grad_undefined():
    assert gradcheck(lambda x, y: (x * y, x.sin(), y.exp()), (real(3), real(3)))


# -- fast mode ------------------------------------------------------------------------------------


def test_fast_mode_large_input_is_fast():
    x = real(10_000)
    gradcheck(pf.sin, (x,), fast_mode=True)  # warm up imports and caches
    t0 = time.perf_counter()
    assert gradcheck(pf.sin, (x,), fast_mode=True)
    assert gradcheck(lambda a: (a * a).sum(), (x,), fast_mode=True)
    assert time.perf_counter() - t0 < 1.0


def test_fast_mode_failure_on_large_input_reports_projection():
    x = real(2_000, low=0.1, high=1.0)  # cos > 0: the projection is not close to zero
    with pytest.raises(GradcheckError) as info:
        gradcheck(make_sin(backward_scale=1.1).apply, (x,), fast_mode=True)
    assert "fast_mode=True" in str(info.value) and "u^T J v" in str(info.value)


# -- precision ------------------------------------------------------------------------------------


def test_float32_warns():
    x = pf.tensor(RNG.uniform(-1, 1, 3).astype(np.float32), requires_grad=True)
    with pytest.warns(UserWarning, match="precision"):
        gradcheck(pf.sin, (x,), eps=1e-3, atol=1e-2, rtol=1e-2, raise_exception=False)


def test_float64_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradcheck(pf.sin, (real(3),))


# -- batched forward grad ---------------------------------------------------------------------------


def test_batched_forward_grad_is_a_real_vector_mode_check(monkeypatch):
    """check_batched_forward_grad propagates B tangents in one batched pass and compares each row
    with the jvp of that tangent alone: a wrong batching rule is caught."""
    assert gradcheck(lambda a, b: a * b.sin(), (real(3), real(3)), check_batched_forward_grad=True)
    a, v = real(3, 3), real(3)
    assert gradcheck(pf.matmul, (a, v), check_batched_forward_grad=True)
    from pushforward.dispatch.batching import _parsed

    monkeypatch.setattr(pf.ops.generated._MATMUL, "batch", "elementwise")  # reads a batch of vectors as a matrix
    _parsed.clear()
    try:
        with pytest.raises(GradcheckError, match="batched"):
            gradcheck(pf.matmul, (a, v), check_batched_forward_grad=True)
    finally:
        monkeypatch.undo()
        _parsed.clear()


def test_batched_grad_check_runs_batched_cotangents(monkeypatch):
    """check_batched_grad sends B cotangents through one backward pass and compares each row with
    the vjp of that cotangent alone: a wrong batching rule in a backward formula is caught."""
    a, v = real(3, 3), real(3)
    assert gradcheck(pf.matmul, (a, v), check_batched_grad=True)
    from pushforward.dispatch.batching import _parsed

    # transpose's backward (a transpose of the gradient) by a rule that does not shift its dims:
    # it swaps the batch dim with a logical one (silently wrong when B equals that dim's size)
    monkeypatch.setattr(pf.ops.generated.TRANSPOSE, "batch", "elementwise")
    _parsed.clear()
    try:
        with pytest.raises(GradcheckError, match="batched grad"):
            gradcheck(lambda x: x.transpose(0, 1) * 2.0, (real(3, 3),), check_batched_grad=True)
    finally:
        monkeypatch.undo()
        _parsed.clear()


def test_function_without_vmap_rule_loops_over_the_batch():
    """A custom Function's jvp runs once per batch element at a vector-mode level (it may do
    anything with its tangent), unless it declares generate_vmap_rule = True."""
    calls = []

    class NonLinearJvp(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, x_t):
            calls.append(tuple(x_t.shape))
            return x_t * x_t.abs() / (x_t.abs().max() + 1e-300)  # exact on one-hot tangents only

    x = real(3)
    assert gradcheck(NonLinearJvp.apply, (x,), check_undefined_grad=False, check_batched_forward_grad=True)
    J = pf.func.jacfwd(NonLinearJvp.apply)(x)
    assert np.allclose(J.numpy(), np.eye(3))
    assert calls[-3:] == [(3,)] * 3

    class Vmappable(NonLinearJvp):
        generate_vmap_rule = True

    calls.clear()
    pf.func.jacfwd(Vmappable.apply)(x)
    assert calls == [(3,)]  # one call, with the batched tangent (logical shape)


# -- gradgradcheck ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, n",
    [
        (pf.tanh, 1),
        (lambda a, b: a * b, 2),
        (pf.exp, 1),
        (lambda a, b: (a @ b).sin(), 2),
    ],
)
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_passes(fn, n, fast_mode):
    ins = (real(3, 3), real(3, 3))[:n]
    assert gradgradcheck(fn, ins, fast_mode=fast_mode)


def test_gradgradcheck_modes_and_explicit_grad_outputs():
    x = real(4)
    g = pf.tensor(RNG.uniform(-1, 1, 4), requires_grad=True)
    assert gradgradcheck(pf.tanh, (x,), (g,), check_rev_over_rev=False)
    assert gradgradcheck(pf.tanh, (x,), g, check_fwd_over_rev=False)
    assert gradgradcheck(pf.tanh, (x,), gen_non_contig_grad_outputs=True)


def test_gradgradcheck_complex():
    assert gradgradcheck(lambda z: z.exp() * z, (cplx(3),))


def test_gradgradcheck_catches_non_differentiable_backward():
    # First derivatives are right, but backward uses a constant (tape-free) cos(x),
    # so its own derivative is wrong: both second-order modes must notice.
    class SinConstBackward(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.detach().cos()

        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return x_t * x.cos()

    x = real(3)
    assert gradcheck(SinConstBackward.apply, (x,))
    with pytest.raises(GradcheckError, match="backward mode"):
        gradgradcheck(SinConstBackward.apply, (x,), check_fwd_over_rev=False)
    with pytest.raises(GradcheckError, match="forward mode"):
        gradgradcheck(SinConstBackward.apply, (x,), check_rev_over_rev=False)
    assert gradgradcheck(SinConstBackward.apply, (x,), raise_exception=False) is False


def test_defaults_are_torchs_forward_only_when_asked():
    """check_forward_ad defaults to False as torch's; check_batched_grad is accepted (regression)."""
    bad_jvp = make_sin(jvp_scale=1.01).apply
    assert _gradcheck(bad_jvp, (real(3),))  # forward not checked by default
    assert _gradcheck(bad_jvp, (real(3),), check_forward_ad=True, raise_exception=False) is False
    assert _gradcheck(pf.sin, (real(3),), check_batched_grad=False)
    assert _gradcheck(pf.sin, (real(3),), check_batched_grad=True)
    assert gradgradcheck(pf.tanh, (real(3),), check_batched_grad=False)
    with pytest.raises(AssertionError, match="at least one of"):  # torch's rule: never a check of nothing
        _gradcheck(bad_jvp, (real(3),), check_backward_ad=False)
