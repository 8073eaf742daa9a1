"""The bare-kernel path the generated ops take when no input needs autodiff (bare.run1 / run2):
the same results, errors and aliasing rules as dispatch.apply's executors."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.ops import generated as ops
from pushforward.dispatch.bare import run1, run2
from pushforward.errors import PushforwardError


def test_generated_simple_ops_name_their_kernel():
    import inspect

    assert "run1(SIN, xp.sin, self)" in inspect.getsource(ops.sin)
    assert "run2(ADD, _add__kernel, self, other, (alpha,))" in inspect.getsource(ops.add)  # laid out as torch


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
