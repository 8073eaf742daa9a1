"""The engine sums view gradients in place (autograd/accumulate.py): same numbers as the
out-of-place sum (create_graph=True takes that path), tangents included, and no tensor the
user can see is ever written."""

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.autograd.functional import hvp
from helpers import close, tangent

RNG = np.random.default_rng(3)
X = RNG.standard_normal(6)
M = RNG.standard_normal((4, 4))
V = RNG.standard_normal(6)


def f_slices(x):  # overlapping basic slices, a narrow and a select of the same leaf
    return ((x[1:] - x[:-1] ** 2) ** 2).sum() + (x.narrow(0, 2, 3) * x[::2][:3]).sum() + x.select(0, 4) ** 3


def f_dense_and_view(x):  # a dense gradient meets view gradients, in both orders
    return (x * x).sum() + x[2:].sin().sum() + (x[:4] * 2.0).sum() + x.exp().sum()


def f_matrix(m):  # 2-d views: rows, columns, a diagonal
    return (m[1:, :] * m[:-1, :]).sum() + (m[:, 0] ** 2).sum() + m.diagonal().exp().sum()


CASES = [(f_slices, X), (f_dense_and_view, X), (f_matrix, M)]


def _grad(f, x0, create_graph):
    x = pf.tensor(x0.copy(), requires_grad=True)
    (g,) = pf.autograd.grad(f(x), x, create_graph=create_graph)
    return g.detach().numpy()


@pytest.mark.parametrize("f, x0", CASES)
def test_in_place_sum_matches_out_of_place(f, x0):
    close(_grad(f, x0, create_graph=False), _grad(f, x0, create_graph=True), tol=1e-12)


@pytest.mark.parametrize("f, x0", CASES)
def test_hvp_through_views_matches_reverse_over_reverse(f, x0):
    x, v = pf.tensor(x0.copy()), pf.tensor(RNG.standard_normal(x0.shape))
    close(hvp(f, x, v)[1].numpy(), hvp(f, x, v, fw_mode=False)[1].numpy(), tol=1e-10)


def test_backward_accumulates_leaf_grad_and_keeps_earlier_grad():
    x = pf.tensor(X.copy(), requires_grad=True)
    f_slices(x).backward()
    first = x.grad
    first_values = first.numpy().copy()
    f_slices(x).backward()
    close(first.numpy(), first_values)  # the earlier .grad tensor was not written
    close(x.grad.numpy(), 2 * first_values)


def test_user_grad_outputs_are_not_written():
    x = pf.tensor(X.copy(), requires_grad=True)
    a = x * 1.0
    g_a = pf.tensor(np.ones(6))
    g_view = pf.tensor(np.full(5, 2.0))
    (gx,) = pf.autograd.grad([a, a[1:]], x, grad_outputs=[g_a, g_view])
    close(gx.numpy(), [1.0, 3, 3, 3, 3, 3])
    close(g_a.numpy(), np.ones(6))
    close(g_view.numpy(), np.full(5, 2.0))


def test_hooks_see_the_summed_gradient():
    x = pf.tensor(X.copy(), requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    (x[1:].sum() + x[:-1].sum()).backward()
    close(seen[0], [1.0, 2, 2, 2, 2, 1])


def test_retain_graph_runs_the_views_twice():
    x = pf.tensor(X.copy(), requires_grad=True)
    y = (x[1:] * x[:-1]).sum()
    (g1,) = pf.autograd.grad(y, x, retain_graph=True)
    (g2,) = pf.autograd.grad(y, x)
    close(g1.numpy(), g2.numpy())
    with pytest.raises(Exception, match="second time"):
        pf.autograd.grad(y, x)


def test_float32_and_mixed_dtypes():
    x = pf.tensor(X.astype(np.float32), requires_grad=True)
    y = (x[1:] * x[:-1]).sum() + (x[2:].to(pf.float64) ** 2).sum()
    (g,) = pf.autograd.grad(y, x)
    assert g.dtype == pf.float32
    expect = np.zeros(6)
    expect[:-1] += X[1:]
    expect[1:] += X[:-1]
    expect[2:] += 2 * X[2:]
    close(g.numpy(), expect, tol=1e-5)


def test_two_levels_of_tangents_fall_back():
    """Gradients with tangents at two levels are summed out of place; the numbers agree."""
    base = pf.tensor(X.copy(), requires_grad=True)
    with fwAD.dual_level():
        x1 = fwAD.make_dual(base, pf.tensor(V.copy()))
        with fwAD.untracked_level():
            x = fwAD.make_dual(x1, pf.tensor(np.ones(6)))
            (g,) = pf.autograd.grad((x[1:] * x[:-1]).sum(), base)
            inner = tangent(g)
        outer = tangent(g, level=0)
    close(inner.numpy(), [1.0, 2, 2, 2, 2, 1])
    close(outer.numpy(), np.r_[V[1:], 0] + np.r_[0, V[:-1]])


def test_add_falls_back_without_touching_the_buffer():
    """When a gradient cannot be summed in place (another level's tangent, another dtype),
    add() sums out of place and leaves the buffer as it was."""
    from pushforward.engine import accumulate as acc_mod
    from pushforward.ops.generated import getitem

    steps = ((getitem, (slice(1, None),)),)
    with fwAD.dual_level() as l0:
        with fwAD.dual_level() as l1:
            # fresh results (not views) with one level's tangent each, as the engine's gradients are
            g0 = fwAD.make_dual(pf.tensor(np.ones(5)), pf.tensor(np.full(5, 2.0)), level=l0) * 1.0
            g1 = fwAD.make_dual(pf.tensor(np.ones(5)), pf.tensor(np.full(5, 3.0)), level=l1) * 1.0
            buf = acc_mod.add([acc_mod.Embed(g0, (6,), steps)], 0, acc_mod.Embed(g0, (6,), steps))
            assert type(buf) is acc_mod.Acc
            before = (buf.data.copy(), buf.tan.copy())
            for other in (
                acc_mod.Embed(g1, (6,), steps),
                pf.tensor(np.ones(6)) * g1.sum(),
                acc_mod.Embed(pf.tensor(np.ones(5, dtype=np.float32)), (6,), steps),
            ):
                out = acc_mod.add([buf], 0, other)
                assert isinstance(out, pf.Tensor)
                close(buf.data, before[0])
                close(buf.tan, before[1])
            out = acc_mod.add([buf], 0, acc_mod.Embed(g1, (6,), steps))
            close(out.numpy(), [0.0, 3, 3, 3, 3, 3])
            close(tangent(out, level=l0).numpy(), [0.0, 4, 4, 4, 4, 4])
            close(tangent(out, level=l1).numpy(), [0.0, 3, 3, 3, 3, 3])


# ---- dense gradients summed in place into memory the engine owns ---------------------

BIG = np.random.default_rng(7).standard_normal(20_000)  # 160 KB: over accumulate._IN_PLACE_BYTES


def f_reused(x):  # x feeds three ops; add's backward hands one tensor to two inputs
    y = x
    for _ in range(3):
        y = pf.sin(y) * y + pf.tanh(y)
    return (y * y).sum()


@pytest.mark.parametrize("x0", [X, BIG])
def test_dense_sums_in_place_match_out_of_place(x0):
    close(_grad(f_reused, x0, create_graph=False), _grad(f_reused, x0, create_graph=True), tol=1e-12)


@pytest.mark.parametrize("x0", [X, BIG])
def test_dense_hvp_in_place_matches_reverse_over_reverse(x0):
    x, v = pf.tensor(x0.copy()), pf.tensor(np.cos(np.arange(x0.size)))
    close(hvp(f_reused, x, v)[1].numpy(), hvp(f_reused, x, v, fw_mode=False)[1].numpy(), tol=1e-9)


def test_a_gradient_a_hook_kept_is_not_summed_into():
    """The gradient a hook keeps flows on unchanged (add's backward passes it to both inputs, whose
    buffers then receive more gradients): the engine must not add into it."""
    kept = []
    x = pf.tensor(BIG.copy(), requires_grad=True)
    a, b = x * 2.0, x.sin()
    z = a + b
    z.register_hook(lambda g: kept.append((g, g.numpy().copy())))
    (z * z + a * 3.0 + b.exp()).sum().backward()
    g, values = kept[0]
    close(g.numpy(), values, tol=0)
    close(x.grad.numpy(), 2 * (2 * BIG + np.sin(BIG)) * (2 + np.cos(BIG)) + 6 + np.exp(np.sin(BIG)) * np.cos(BIG))


def test_exclusive_sees_other_references():
    from pushforward.engine.accumulate import exclusive

    t = pf.tensor(BIG.copy()) * 1.0
    lst = [t]
    assert not exclusive(lst, 0)  # `t` holds it too
    del t
    assert exclusive(lst, 0)
    view = lst[0]._data[1:]  # a NumPy view of its memory
    assert not exclusive(lst, 0)
    del view
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor(BIG.copy()), pf.tensor(BIG.copy())) * 1.0
        lst = [d]
        del d
        assert not exclusive(lst, 0)  # a tangent: only with tangents=True
        assert exclusive(lst, 0, tangents=True)
        tan = fwAD.unpack_dual(lst[0]).tangent
        assert not exclusive(lst, 0, tangents=True)  # the tangent is referenced elsewhere
        del tan
