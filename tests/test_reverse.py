"""Reverse-mode autograd: backward, grad, errors, long chains, higher order, hooks, grad mode."""

import gc
import math
import sys
import threading

import numpy as np
import pytest

import pushforward as pf
from helpers import INPLACE, close, needs_torch, torch


# -- basics --------------------------------------------------------------------------------------


def test_backward_accumulates_into_leaf_grad():
    x = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    close(x.grad, [2.0, 4.0, 6.0])
    (x * 3).sum().backward()
    close(x.grad, [5.0, 7.0, 9.0])


def test_backward_with_gradient_argument():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(pf.tensor([1.0, 10.0]))
    close(x.grad, [2.0, 40.0])


def test_grad_returns_without_accumulating():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (g,) = pf.autograd.grad((x**3).sum(), x)
    close(g, [3.0, 12.0])
    assert x.grad is None
    assert not g.requires_grad


def test_grad_with_grad_outputs_and_multiple_inputs():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = pf.tensor([3.0, 4.0], requires_grad=True)
    gx, gy = pf.autograd.grad(x * y, (x, y), grad_outputs=pf.tensor([1.0, -1.0]))
    close(gx, [3.0, -4.0])
    close(gy, [1.0, -2.0])


def test_broadcast_gradient_is_unbroadcast():
    x = pf.tensor([[1.0], [2.0]], requires_grad=True)  # (2, 1)
    b = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)  # (3,)
    (x * b).sum().backward()
    assert x.grad.shape == (2, 1) and b.grad.shape == (3,)
    close(x.grad, [[6.0], [6.0]])
    close(b.grad, [3.0, 3.0, 3.0])


def test_scalar_python_operand_grad():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (2.0 / x).sum().backward()
    close(x.grad, [-2.0, -0.5])


def test_diamond_graph_accumulates():
    x = pf.tensor(0.5, requires_grad=True)
    a = x.sin()
    y = a * a + a.exp()
    y.backward()
    close(x.grad, (2 * math.sin(0.5) + math.exp(math.sin(0.5))) * math.cos(0.5))


def test_non_differentiable_integer_output():
    x = pf.tensor([1.0, 3.0, 2.0], requires_grad=True)
    i = pf.argmax(x)
    assert not i.requires_grad
    assert not (x > 1).requires_grad


def test_view_grad_flows_to_base():
    x = pf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x[0] * 2).sum().backward()
    close(x.grad, [[2.0, 2.0], [0.0, 0.0]])
    x.grad = None
    (x.t()[1] ** 2).sum().backward()
    close(x.grad, [[0.0, 4.0], [0.0, 8.0]])


def test_grad_of_element_index():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (x[0] * x[1]).backward()
    close(x.grad, [2.0, 1.0])


def test_matmul_vector_vector_backward():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (x @ x).backward()
    close(x.grad, [2.0, 4.0])


def test_inplace_on_non_leaf_backward():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(3)
    y.add_(x)
    y.sum().backward()
    close(x.grad, [4.0, 4.0])


def test_inplace_on_view_of_non_leaf_backward():
    x = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y[1:].mul_(x[:2])
    y.sum().backward()
    # y = [x0, x1*x0, x2*x1] -> dy/dx = [1 + x1, x0 + x2, x1]
    close(x.grad, [3.0, 4.0, 2.0])


def test_setitem_of_requires_grad_value_into_plain():
    v = pf.tensor([7.0, 8.0], requires_grad=True)
    out = pf.zeros(4)
    out[1:3] = v * 2
    (out * pf.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    close(v.grad, [4.0, 6.0])


def test_setitem_advanced_index_grad():
    v = pf.tensor([7.0, 8.0], requires_grad=True)
    out = pf.zeros(5)
    out[[1, 3]] = v
    (out * pf.arange(5.0)).sum().backward()
    close(v.grad, [1.0, 3.0])


# -- errors --------------------------------------------------------------------------------------


def test_backward_non_scalar_without_gradient_errors():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2).backward()


def test_backward_on_tensor_not_requiring_grad_errors():
    with pytest.raises(RuntimeError, match="does not require grad"):
        pf.tensor(1.0).backward()


def test_backward_twice_without_retain_graph_errors():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = (x.sin() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time") as ei:
        y.backward()
    assert "retain_graph=True" in str(ei.value)


def test_backward_twice_with_retain_graph():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = (x.sin() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(x.grad, 2 * (np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0])))


def test_saved_input_modified_inplace_keeps_it_or_errors_under_the_switch():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a.sin()
    a.add_(1)
    b.sum().backward()  # sin's node kept a's values before the write
    close(x.grad, np.cos([1.0, 2.0]))
    with pf.autograd.forbid_mutation_on_saved_tensors():
        a = x * 1
        b = a.sin()
        a.add_(1)
    with pytest.raises(pf.errors.SavedTensorModifiedError) as ei:
        b.sum().backward()
    msg = str(ei.value)
    assert "modified by an inplace operation" in msg
    assert "saved at version 0, now at version 1" in msg
    assert "SinBackward0" in msg


def test_saved_output_modified_inplace_keeps_it_or_errors_under_the_switch():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    b = x.exp()  # exp saves its result
    b.mul_(2)
    b.sum().backward()
    close(x.grad, 2 * np.exp([1.0, 2.0]))
    b = x.exp()
    with pf.autograd.forbid_mutation_on_saved_tensors():
        b.mul_(2)
    with pytest.raises(RuntimeError) as ei:
        b.sum().backward()
    msg = str(ei.value)
    assert "modified by an inplace operation" in msg and "ExpBackward0" in msg
    assert "version 0" in msg and "version 1" in msg


def test_saved_tensor_modified_through_view_keeps_it_or_errors_under_the_switch():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a * a
    a[0:1].add_(1)
    b.sum().backward()
    close(x.grad, [2.0, 4.0])
    a = x * 1
    b = a * a
    with pf.autograd.forbid_mutation_on_saved_tensors():
        a[0:1].add_(1)
    with pytest.raises(RuntimeError, match="saved at version 0, now at version 1"):
        b.sum().backward()


def test_unsaved_input_modified_inplace_is_fine():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a + 1  # add saves nothing
    a.mul_(5)
    b.sum().backward()
    close(x.grad, [1.0, 1.0])


def test_inplace_on_leaf_requiring_grad_errors():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="leaf"):
        x[0:1] = 3.0
    with pytest.raises(RuntimeError, match="leaf"):
        x += 1
    close(x.detach(), [1.0, 2.0])


def test_inplace_on_leaf_under_no_grad_allowed():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with pf.no_grad():
        x.mul_(2)
    close(x.detach(), [2.0, 4.0])
    assert x.requires_grad and x.is_leaf


@pytest.mark.parametrize("dtype", [pf.int32, pf.int64, pf.bool])
def test_requires_grad_on_integer_errors(dtype):
    with pytest.raises(RuntimeError, match="floating point"):
        pf.tensor([1, 0], dtype=dtype, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        pf.tensor([1, 0], dtype=dtype).requires_grad_()


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError) as ei:
        pf.ones(2, 3) + pf.ones(4)
    msg = str(ei.value)
    assert "(2, 3)" in msg and "(4,)" in msg and "add" in msg


def test_shape_mismatch_matmul_names_both_shapes():
    with pytest.raises(RuntimeError) as ei:
        pf.ones(2, 3) @ pf.ones(4, 2)
    msg = str(ei.value)
    assert "(2, 3)" in msg and "(4, 2)" in msg


def test_inplace_broadcast_shape_error():
    x = pf.ones(3)
    with pytest.raises(RuntimeError, match=r"\(3,\)"):
        x.add_(pf.ones(2, 3))


def test_grad_of_input_not_requiring_grad_errors():
    x = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        pf.autograd.grad((x * 2).sum(), pf.tensor([1.0]))


def test_allow_unused():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    z = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        pf.autograd.grad((x * 2).sum(), [x, z])
    gx, gz = pf.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    close(gx, [2.0, 2.0])
    assert gz is None


def test_materialize_grads():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    z = pf.tensor([1.0], requires_grad=True)
    _, gz = pf.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
    close(gz, [0.0])


def test_requires_grad_false_on_non_leaf_errors():
    x = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2).requires_grad_(False)


def test_numpy_on_requires_grad_errors():
    x = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]


# -- long chains ---------------------------------------------------------------------------------


def test_100k_chain_no_recursion_limit():
    n = 100_000
    gc.disable()  # speed only: building 100k nodes triggers many full collections
    try:
        x = pf.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(n):
            y = y * 1.0000001
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(200, min(old, 1000)))  # far below the chain length
        try:
            y.backward()
            del y  # freeing a long graph must not recurse either
        finally:
            sys.setrecursionlimit(old)
    finally:
        gc.enable()
    close(x.grad, 1.0000001**n, tol=1e-9)


# -- higher order --------------------------------------------------------------------------------


def test_create_graph_second_derivative():
    x = pf.tensor([0.3, 1.1], requires_grad=True)
    (g,) = pf.autograd.grad((x**3 * x.sin()).sum(), x, create_graph=True)
    assert g.requires_grad
    xv = np.array([0.3, 1.1])
    close(g.detach(), 3 * xv**2 * np.sin(xv) + xv**3 * np.cos(xv))
    (h,) = pf.autograd.grad(g.sum(), x)
    close(h, 6 * xv * np.sin(xv) + 6 * xv**2 * np.cos(xv) - xv**3 * np.sin(xv))


def test_create_graph_third_derivative():
    x = pf.tensor(0.7, requires_grad=True)
    y = pf.exp(x * 2) * x
    (d1,) = pf.autograd.grad(y, x, create_graph=True)
    (d2,) = pf.autograd.grad(d1, x, create_graph=True)
    (d3,) = pf.autograd.grad(d2, x)
    e = math.exp(1.4)
    close(d1.detach(), e * (1 + 2 * 0.7))
    close(d2.detach(), e * (4 + 4 * 0.7))
    close(d3, e * (12 + 8 * 0.7))


def test_backward_create_graph_then_grad_of_grad():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (x.tanh() ** 2).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    (h,) = pf.autograd.grad(g.sum(), x)
    t = np.tanh([1.0, 2.0])
    close(h, 2 * (1 - t**2) ** 2 - 4 * t**2 * (1 - t**2))


def test_hessian_of_quadratic_by_double_backward():
    A = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = pf.tensor([0.5, -1.0], requires_grad=True)
    f = 0.5 * (x * (pf.tensor(A) @ x)).sum()
    (g,) = pf.autograd.grad(f, x, create_graph=True)
    rows = [pf.autograd.grad(g[i], x, retain_graph=True)[0].tolist() for i in range(2)]
    close(rows, A)


@needs_torch
def test_second_derivatives_match_torch():
    xv = np.array([0.3, -0.8, 1.5])
    x = pf.tensor(xv, requires_grad=True)
    (g,) = pf.autograd.grad((pf.sigmoid(x) * x.exp() / (1 + x**2)).sum(), x, create_graph=True)
    (h,) = pf.autograd.grad((g * g).sum(), x)
    xt = torch.tensor(xv, requires_grad=True)
    (gt,) = torch.autograd.grad((torch.sigmoid(xt) * xt.exp() / (1 + xt**2)).sum(), xt, create_graph=True)
    (ht,) = torch.autograd.grad((gt * gt).sum(), xt)
    close(g.detach(), gt.detach().numpy())
    close(h, ht.numpy())


# -- retain_grad, hooks --------------------------------------------------------------------------


def test_retain_grad():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    m = x * 3
    m.retain_grad()
    (m * m).sum().backward()
    close(m.grad, [6.0, 12.0])
    close(x.grad, [18.0, 36.0])


def test_non_leaf_grad_is_none_without_retain_grad():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    m = x * 3
    (m * m).sum().backward()
    assert m.grad is None


def test_retain_grad_on_leaf_is_noop():
    x = pf.tensor([1.0], requires_grad=True)
    x.retain_grad()
    (x * 2).sum().backward()
    close(x.grad, [2.0])


def test_register_hook_on_leaf_modifies_grad():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    h = x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    close(x.grad, [20.0, 40.0])
    h.remove()
    x.grad = None
    (x * x).sum().backward()
    close(x.grad, [2.0, 4.0])


def test_register_hook_on_intermediate_observes_and_replaces():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    m = x * 3
    seen = []
    m.register_hook(lambda g: seen.append(g.tolist()))
    m.register_hook(lambda g: g * 0)
    (m * m).sum().backward()
    assert seen == [[6.0, 12.0]]
    close(x.grad, [0.0, 0.0])


def test_register_hook_without_requires_grad_errors():
    with pytest.raises(RuntimeError):
        pf.tensor([1.0]).register_hook(lambda g: g)


def test_hooks_called_with_autograd_grad():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    m = x * 2
    m.register_hook(lambda g: calls.append(1))
    pf.autograd.grad(m.sum(), x)
    assert calls == [1]


# -- grad mode -----------------------------------------------------------------------------------


def test_no_grad_context():
    x = pf.tensor([1.0], requires_grad=True)
    with pf.no_grad():
        y = x * 2
        assert not pf.is_grad_enabled()
    assert pf.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_decorator():
    x = pf.tensor([1.0], requires_grad=True)

    @pf.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    assert pf.is_grad_enabled()
    assert f.__name__ == "f"


def test_enable_grad_inside_no_grad():
    x = pf.tensor([1.0], requires_grad=True)
    with pf.no_grad():
        with pf.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad

        @pf.enable_grad()
        def g(t):
            return t * 2

        assert g(x).requires_grad
        assert not pf.is_grad_enabled()


def test_set_grad_enabled_context_and_function():
    x = pf.tensor([1.0], requires_grad=True)
    with pf.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert pf.is_grad_enabled()
    with pf.set_grad_enabled(True):
        assert (x * 2).requires_grad
    pf.set_grad_enabled(False)
    try:
        assert not pf.is_grad_enabled()
    finally:
        pf.set_grad_enabled(True)
    assert pf.is_grad_enabled()


def test_set_grad_enabled_decorator():
    x = pf.tensor([1.0], requires_grad=True)

    @pf.set_grad_enabled(False)
    def f(t):
        return t * 2

    assert pf.is_grad_enabled()
    assert not f(x).requires_grad
    assert pf.is_grad_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(KeyError):
        with pf.no_grad():
            raise KeyError
    assert pf.is_grad_enabled()


def test_grad_mode_is_thread_local():
    x = pf.tensor([1.0], requires_grad=True)
    seen = {}
    started = threading.Event()
    release = threading.Event()

    def worker():
        seen["enabled"] = pf.is_grad_enabled()
        seen["rg"] = (x * 2).requires_grad
        with pf.no_grad():
            started.set()
            release.wait(5)

    with pf.no_grad():
        th = threading.Thread(target=worker)
        th.start()
    started.wait(5)
    try:
        # the worker's no_grad does not leak into this thread
        assert pf.is_grad_enabled()
        assert (x * 2).requires_grad
    finally:
        release.set()
        th.join()
    assert seen == {"enabled": True, "rg": True}


def test_no_grad_result_of_op_under_enable_grad_backward():
    x = pf.tensor([2.0], requires_grad=True)
    with pf.no_grad():
        c = x * 3  # constant
    (x * c).sum().backward()
    close(x.grad, [6.0])


def test_detach_cuts_graph():
    x = pf.tensor([2.0], requires_grad=True)
    y = x * x.detach()
    y.backward()
    close(x.grad, [2.0])
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), x.detach().numpy())


def test_grad_dtype_matches_input_dtype():
    w = pf.tensor([1.0, 2.0], dtype=pf.float32, requires_grad=True)
    (w * pf.tensor([1.0, 2.0])).sum().backward()  # float64 computation
    assert w.grad.dtype == np.float32
    r = pf.tensor([1.0, 2.0], requires_grad=True)
    (r * 1j).abs().sum().backward()  # complex intermediate, real leaf: real gradient
    assert r.grad.dtype == np.float64
    close(r.grad, [1.0, 1.0])


def test_advanced_setitem_on_saved_tensor_keeps_it_and_on_leaf_errors():
    a = pf.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * b
    b[[0]] = 5.0
    c.sum().backward()
    close(a.grad, [2.0, 4.0])
    b = a * 1
    c = b * b
    with pf.autograd.forbid_mutation_on_saved_tensors():
        b[[0]] = 5.0
    with pytest.raises(RuntimeError, match="saved at version 0, now at version 1"):
        c.sum().backward()
    with pytest.raises(RuntimeError, match="leaf"):
        a[[0]] = 1.0


def test_backward_inputs_argument():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    close(y.grad, [4.0, 8.0])
    assert x.grad is None


def test_grad_of_several_outputs_sums():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    (g,) = pf.autograd.grad([x.sum(), (x * x).sum()], x)
    close(g, [3.0, 5.0])


@pytest.mark.parametrize("name", list(INPLACE))
@pytest.mark.parametrize("view", [False, True])
@pytest.mark.parametrize("other_rg", [False, True])
def test_inplace_grad_equals_out_of_place(name, view, other_rg):
    inplace, outplace = INPLACE[name]
    xp = np.array([[0.6, 1.3, 1.9], [0.8, 1.1, 1.7]])
    op_ = np.array([1.2, 0.9, 1.4])
    w = pf.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])

    def run(fn, inplace_mode):
        x = pf.tensor(xp, requires_grad=True)
        o = pf.tensor(op_, requires_grad=other_rg)
        base = x * 1
        if view:
            tgt = base[1]
            r = fn(tgt, o)
            if inplace_mode:
                assert r is tgt
                out = base
            else:
                out = pf.stack([base[0], r])
        else:
            r = fn(base, o)
            out = r
        loss = (out * w).sum()
        ins = (x, o) if other_rg else (x,)
        return out.detach().numpy().copy(), pf.autograd.grad(loss, ins, allow_unused=True)

    v1, g1 = run(inplace, True)
    v2, g2 = run(outplace, False)
    close(v1, v2)
    for a, b in zip(g1, g2):
        # None and zeros both mean "no dependence"
        if a is None and b is None:
            continue
        ref = a if a is not None else b
        close(np.zeros(ref.shape) if a is None else a, np.zeros(ref.shape) if b is None else b)


@pytest.mark.parametrize("overwrite", ["zero_", "fill_", "copy_"])
def test_overwriting_non_leaf_keeps_it_in_graph(overwrite):
    """As torch: a tensor that required grad still does after being overwritten by a constant (zero gradient)."""
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1
    {"zero_": lambda: b.zero_(), "fill_": lambda: b.fill_(3.0), "copy_": lambda: b.copy_(pf.tensor([5.0, 6.0]))}[
        overwrite
    ]()
    assert b.requires_grad
    (b * 2 + x).sum().backward()
    close(x.grad, [1.0, 1.0])


def test_scalar_times_plain_tensor_does_not_require_grad():
    """Regression: the reverse-mode fast path once recorded a node when no input required grad."""
    y = 2.0 * pf.tensor([1.0, 2.0])
    assert not y.requires_grad and y.grad_fn is None
    z = pf.tensor([1.0]) * 3
    assert not z.requires_grad


def test_a_stale_needs_autodiff_bit_changes_nothing():
    """Tensor._ad may stay set once requires_grad is turned off, detach_() runs or a level exits
    (the general paths then check precisely): results are as from a fresh plain tensor.
    (Not in test_views_inplace.py: its tests run inside a dual level.)"""
    import pushforward.autograd.forward_ad as fwAD

    a = pf.tensor([1.0, 2.0], requires_grad=True)
    a.requires_grad_(False)
    b = (pf.tensor([1.0, 2.0], requires_grad=True) * 1.0).detach_()
    with fwAD.dual_level():
        c = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.ones(2))
    for x in (a, b, c):
        assert x._ad  # stale, by design
        for y in (x.sin(), x * x, x * 2.0, 2.0 - x, x.sum(), x[0], x.clone().mul_(x)):
            assert not y.requires_grad and y.grad_fn is None and y._fw is None
        assert np.allclose(x.sin().numpy(), np.sin([1.0, 2.0]))


# -- zero cotangents at singular points (docs/design.md) -------------------------------------------

# op, its singular point (finite value, infinite or undefined derivative), a regular point
_SINGULAR = {
    "sqrt": (pf.sqrt, 0.0, 4.0),
    "pow_half": (lambda x: x**0.5, 0.0, 4.0),
    "pow_tensor_exponent": (lambda x: x ** pf.tensor([0.25, 0.25]), 0.0, 4.0),
    "asin": (pf.asin, 1.0, 0.5),
    "acos": (pf.acos, -1.0, 0.5),
    "acosh": (pf.acosh, 1.0, 2.0),
    "hypot": (lambda x: pf.hypot(x, x), 0.0, 2.0),
}


@pytest.mark.parametrize("name", list(_SINGULAR))
def test_zero_cotangent_at_a_singular_point_contributes_zero(name):
    """The program leaves out the op's value at its singular point: the gradient there is 0, not
    torch's nan (0 * inf); finite differences give 0 too, the program not depending on it."""
    f, at, regular = _SINGULAR[name]
    mask = pf.tensor([0.0, 1.0])

    def program(x):
        return (f(x) * mask).sum()

    x = pf.tensor([at, regular], requires_grad=True)
    program(x).backward()
    ref = pf.tensor([at, regular], requires_grad=True)
    (f(ref)[1]).backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    close(x.grad, [0.0, ref.grad[1].item()])
    # forward mode: a zero tangent meeting the singular point gives a zero tangent
    _, t = pf.func.jvp(lambda x: f(x), (pf.tensor([at, regular]),), (pf.tensor([0.0, 1.0]),))
    close(t, [0.0, ref.grad[1].item()])
    # second order: the gradient's own derivative at the singular point is finite too
    h = pf.func.hessian(program)(pf.tensor([at, regular]))
    assert np.all(np.isfinite(h.numpy()))
    assert h[0].abs().sum().item() == 0.0


def test_the_backward_formula_keeps_its_derivative_in_the_cotangent():
    """sqrt's backward is linear in the cotangent with slope 1 / (2 sqrt(x)) everywhere, also at a
    zero cotangent (the double-backward trick differentiates it there): inf at x = 0, not 0."""
    x = pf.tensor([0.0, 4.0], requires_grad=True)
    y = pf.sqrt(x)
    u = pf.zeros(2, requires_grad=True)
    (g,) = pf.autograd.grad(y, x, u, create_graph=True)
    close(g, [0.0, 0.0])
    (gu,) = pf.autograd.grad(g.sum(), u)
    assert gu[0].item() == np.inf and gu[1].item() == 0.25
    _, jv = pf.autograd.functional.jvp(pf.sqrt, pf.tensor([0.0, 4.0]), pf.tensor([1.0, 1.0]), fw_mode=False)
    assert jv[0].item() == np.inf and jv[1].item() == 0.25


def test_a_nonzero_cotangent_at_a_singular_point_stays_infinite():
    x = pf.tensor([0.0], requires_grad=True)
    pf.sqrt(x).sum().backward()
    assert x.grad.item() == np.inf


def test_mul0_is_linear_in_its_first_argument():
    a = pf.tensor([0.0, 2.0, 0.0], requires_grad=True)
    b = pf.tensor([np.inf, 3.0, np.nan], requires_grad=True)
    y = pf.mul0(a, b)
    close(y, [0.0, 6.0, 0.0])
    ga, gb = pf.autograd.grad(y.sum(), (a, b))
    assert ga[1].item() == 3.0 and ga[0].item() == np.inf  # the slope in a is b everywhere
    close(gb, [0.0, 2.0, 0.0])  # constant in b where a == 0


def test_cbrt_and_log_are_left_to_ieee():
    """cbrt(x) ** 3 is x: at 0 its cotangent 3 cbrt(0)^2 is 0 and its derivative 1, so the rule
    would be wrong for cbrt (defined on both sides of 0); log's value is infinite at 0. Both give
    nan, as torch does."""
    x = pf.tensor([0.0], requires_grad=True)
    (pf.cbrt(x) ** 3).sum().backward()
    assert np.isnan(x.grad.item())
    x = pf.tensor([0.0], requires_grad=True)
    (pf.log(x) * 0.0).sum().backward()
    assert np.isnan(x.grad.item())
