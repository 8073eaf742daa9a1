"""The bare-kernel path the generated ops take when no input needs autodiff (bare.run1 / run2):
the same results, errors and aliasing rules as dispatch.apply's executors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.ops import generated as ops
from pushforward.dispatch.bare import run1, run2
from pushforward.errors import PushforwardError


def test_generated_simple_ops_run_their_kernel_in_their_own_frame():
    """A generated op with a bare path is made from one template (bare.bare_op): the kernel runs in
    the op's own frame (one Python call, as if written out), every other call goes to run1 / run2
    with the record's kernel (for add the one laying the result out as torch); the signature,
    defaults and docstring are the declaration's."""
    import inspect

    from pushforward.bench.timing import python_calls

    x = pf.tensor([0.5, 1.0])
    assert python_calls(lambda: ops.sin(x)) == ["<lambda>", "sin"]
    assert python_calls(lambda: ops.mul(x, x)) == ["<lambda>", "mul"]
    assert python_calls(lambda: ops.sum(x, 0))[:3] == ["<lambda>", "sum", "sum"]  # (then K.sum's own calls)
    assert "run1(_op, _run, self)" in inspect.getsource(ops.sin)
    # (its code counts as pushforward's, not the user's: compiler.recording.user_site skips it)
    assert ops.sin.__code__.co_filename.startswith(str(Path(pf.__file__).parent)) and ops.sin.__code__.co_name == "sin"
    assert "run2(_op, _run, self, other, (alpha,))" in inspect.getsource(ops.add)
    cells = dict(zip(ops.add.__code__.co_freevars, (c.cell_contents for c in ops.add.__closure__)))
    assert cells == {
        "_op": ops.ADD,
        "_kernel": ops.K.add,
        "_run": ops.ADD.kernel,
        "_write_out": ops.write_out,  # (torch's out=: the call without it, written into out)
        "bare_path": ops.add,
    }
    assert ops.ADD.kernel.__name__ == "_add__kernel"  # (laid out as torch)
    assert str(inspect.signature(ops.sum)) == "(self, dim=None, keepdim=False, *, dtype=None, axis=None, out=None)"
    assert ops.sum.__doc__.startswith("Sum over dim") and ops.sum.__module__ == ops.__name__
    np.testing.assert_array_equal(ops.sum(pf.ones(2, 3), axis=1).numpy(), [3.0, 3.0])  # (NumPy's name for dim)


def test_numpy_errors_become_ours_naming_the_op():
    with pytest.raises(PushforwardError, match=r"^add: .*shapes.*\(inputs: .*\(2,\).*\(3,\)"):
        pf.add(pf.ones(2), pf.ones(3))
    with pytest.raises(PushforwardError, match=r"^sum: "):
        pf.sum(pf.ones(2), 5)
    with pytest.raises(PushforwardError, match=r"^mul: "):
        run2(ops.MUL, np.multiply, pf.ones(2), pf.ones(3))


def test_weak_python_scalars_on_either_side():
    x = pf.tensor(np.array([1.0, 2.0], dtype=np.float32))
    for y in (x * 2.0, 2.0 * x, pf.mul(x, 2.0), pf.mul(2.0, x), pf.sub(1, x)):
        assert y.dtype == np.float32
    np.testing.assert_array_equal(pf.sub(1, x).numpy(), [0.0, -1.0])
    np.testing.assert_array_equal(pf.sub(x, 1).numpy(), [0.0, 1.0])


def test_zero_dim_results_are_arrays():
    y = pf.sin(pf.tensor(0.5))
    assert type(y._data) is np.ndarray and y.shape == ()
    z = pf.add(pf.tensor(1.0), pf.tensor(2.0))
    assert type(z._data) is np.ndarray and z.item() == 3.0


def test_a_kernel_result_viewing_an_input_is_copied():
    # a non-view op returns fresh memory (dispatch._unshared), whichever path runs it
    x = pf.arange(6.0)
    y = run1(ops.NEG, lambda d: d.reshape(2, 3), x)
    assert not np.shares_memory(y._data, x._data)
    a, b = pf.ones(3), pf.ones(3)
    z = run2(ops.ADD, lambda p, q: p[:2], a, b)
    assert not np.shares_memory(z._data, a._data)


def test_inputs_needing_autodiff_take_the_dispatch_path():
    x = pf.tensor([0.5, 1.0], requires_grad=True)
    y = pf.sin(x) * x + pf.tanh(x)
    (g,) = pf.autograd.grad(y.sum(), x)
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.numpy(), np.cos(xs) * xs + np.sin(xs) + 1 - np.tanh(xs) ** 2)
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([0.5]), pf.tensor([1.0]))
        t = fwAD.unpack_dual(pf.mul(d, 3.0)).tangent
        assert t.item() == 3.0


@pytest.mark.parametrize(
    "f, df",
    [
        (lambda e: e * 0.5, lambda p, t: 0.5 * t),
        (lambda e: 2.0 - e, lambda p, t: -t),
        (lambda e: 3.0 / e, lambda p, t: -3.0 * t / p**2),
        (lambda e: e**3, lambda p, t: 3 * p**2 * t),
        (lambda e: 2.0**e, lambda p, t: np.log(2.0) * 2.0**p * t),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_dual_tensor_with_a_python_scalar_takes_the_arrays_case(f, df, dtype):
    """A dual element with a Python scalar (`x[3, 4] * 0.5` in a loop kernel's jvp) runs the
    arrays case of one plain tangent at one level, not dispatch.apply: the same primal, tangent and
    dtype (a weak scalar keeps float32), and nothing recorded."""
    from pushforward.bench.timing import python_calls

    a = np.linspace(0.5, 2.0, 12, dtype=dtype).reshape(3, 4)
    v = np.linspace(-1.0, 1.0, 12, dtype=dtype).reshape(3, 4)
    with fwAD.dual_level():
        x = fwAD.make_dual(pf.tensor(a), pf.tensor(v))
        e = x[1, 2]
        p, t = fwAD.unpack_dual(f(e))
        assert "apply" not in python_calls(lambda: f(e))
    assert p.dtype == dtype and t.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(p.numpy(), f(a[1, 2]), rtol=tol)
    np.testing.assert_allclose(t.numpy(), df(a[1, 2].astype(np.float64), v[1, 2]), rtol=tol * 10)
