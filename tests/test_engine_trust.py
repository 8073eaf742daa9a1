"""The reverse-mode engine and custom Functions must never give a silently wrong number.

Repeated outputs and outputs sharing a node, `.grad` in fresh writable memory, no reference
cycles (freeing follows reference counting), atomic accumulation across threads, validation of
what a custom Function's jvp and backward return, and dual_level exit after an exception.
PyTorch is the oracle where it applies.
"""

from __future__ import annotations

import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.engine.state import STATE
from helpers import close, needs_torch, tangent, torch

X0 = [0.5, -1.25, 2.0]


# -- 1. repeated outputs, outputs sharing a node -------------------------------------------------


class Two(pf.autograd.Function):
    """(x * y, x + 2y): two outputs of one node; backward differentiable (double backward works)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y, x + 2 * y

    @staticmethod
    def backward(ctx, ga, gb):
        x, y = ctx.saved_tensors
        return ga * y + gb, ga * x + 2 * gb


def _torch_two():
    class TTwo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + 2 * y

        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            return ga * y + gb, ga * x + 2 * gb

    return TTwo


@needs_torch
def test_grad_of_the_same_output_twice_sums_like_torch():
    x = pf.tensor(X0, requires_grad=True)
    y = x.sin() * x
    g1, g2 = pf.tensor([1.0, 2.0, 3.0]), pf.tensor([0.5, -1.0, 4.0])
    (gx,) = pf.autograd.grad([y, y], [x], [g1, g2])
    tx = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
    ty = tx.sin() * tx
    (tgx,) = torch.autograd.grad([ty, ty], [tx], [torch.tensor(g1.numpy()), torch.tensor(g2.numpy())])
    close(gx, tgx.numpy())


def test_backward_of_the_same_output_twice_accumulates_the_sum():
    x = pf.tensor(X0, requires_grad=True)
    y = x * 3
    pf.autograd.backward([y, y], [pf.ones(3), pf.full((3,), 2.0)])
    close(x.grad, [9.0, 9.0, 9.0])


def test_repeated_scalar_output_and_leaf_output():
    x = pf.tensor(X0, requires_grad=True)
    s = (x * x).sum()
    (g,) = pf.autograd.grad([s, s, s], [x])
    close(g, 6 * np.array(X0))
    (g,) = pf.autograd.grad([x, x], [x], [pf.ones(3), pf.ones(3)])  # the output is the leaf itself
    close(g, [2.0, 2.0, 2.0])


@needs_torch
def test_two_outputs_of_one_function_in_grad_vjp_and_functional_vjp():
    xv, yv = [1.0, 2.0], [3.0, -1.0]
    ga, gb = pf.tensor([1.0, 0.5]), pf.tensor([-2.0, 1.0])
    TTwo = _torch_two()
    tx = torch.tensor(xv, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(yv, dtype=torch.float64, requires_grad=True)
    want = torch.autograd.grad(TTwo.apply(tx, ty), [tx, ty], [torch.tensor(ga.numpy()), torch.tensor(gb.numpy())])
    want = [w.numpy() for w in want]

    x, y = pf.tensor(xv, requires_grad=True), pf.tensor(yv, requires_grad=True)
    got = pf.autograd.grad(Two.apply(x, y), [x, y], [ga, gb])
    for g, w in zip(got, want):
        close(g, w)

    _, fn = pf.func.vjp(Two.apply, pf.tensor(xv), pf.tensor(yv))
    for g, w in zip(fn((ga, gb)), want):
        close(g, w)

    _, got = pf.autograd.functional.vjp(lambda a, b: Two.apply(a, b), (pf.tensor(xv), pf.tensor(yv)), (ga, gb))
    for g, w in zip(got, want):
        close(g, w)


def test_gradgradcheck_of_a_two_output_function():
    class WrongDouble(Two):
        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors  # detached: first derivative right, second derivative wrong
            return ga * y.detach() + gb, ga * x.detach() + 2 * gb

    inputs = (pf.tensor([1.0, 2.0], requires_grad=True), pf.tensor([3.0, -1.0], requires_grad=True))
    assert pf.autograd.gradcheck(Two.apply, inputs, check_forward_ad=False)
    assert pf.autograd.gradgradcheck(Two.apply, inputs, check_fwd_over_rev=False)
    assert pf.autograd.gradcheck(WrongDouble.apply, inputs, check_forward_ad=False)
    assert not pf.autograd.gradgradcheck(WrongDouble.apply, inputs, check_fwd_over_rev=False, raise_exception=False)


@needs_torch
def test_hook_on_a_repeated_output_sees_the_sum_once():
    seen, tseen = [], []
    x = pf.tensor(X0, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    pf.autograd.backward([y, y], [pf.ones(3), pf.full((3,), 3.0)])
    tx = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
    ty = tx * 2
    ty.register_hook(lambda g: tseen.append(g.numpy().copy()))
    torch.autograd.backward([ty, ty], [torch.ones(3, dtype=torch.float64), torch.full((3,), 3.0, dtype=torch.float64)])
    assert len(seen) == len(tseen) == 1
    close(seen[0], tseen[0])
    close(x.grad, tx.grad.numpy())


def test_repeated_outputs_with_retain_graph_twice():
    x = pf.tensor(X0, requires_grad=True)
    y = x.exp()
    for _ in range(2):
        (g,) = pf.autograd.grad([y, y], [x], [pf.ones(3), pf.ones(3)], retain_graph=True)
        close(g, 2 * np.exp(X0))


def test_second_output_of_a_shared_node_is_not_a_root_twice():
    """A root that is also reached from another root runs once, after it has all its gradient."""
    x = pf.tensor(X0, requires_grad=True)
    a, b = Two.apply(x, x)
    z = a * b
    (g,) = pf.autograd.grad([z, a, z], [x], [pf.ones(3), pf.ones(3), pf.ones(3)])
    xv = np.array(X0)
    # z = x^2 * 3x = 3x^3; grad = 2 * 9x^2 + 2x
    close(g, 18 * xv**2 + 2 * xv)


# -- 2. .grad is fresh, writable memory -----------------------------------------------------------


def test_grad_never_aliases_grad_outputs_or_another_leaf():
    x = pf.tensor(X0, requires_grad=True)
    y = pf.tensor(X0, requires_grad=True)
    g = pf.tensor([1.0, 2.0, 3.0])
    (x + y).backward(g)
    assert x.grad is not g and y.grad is not g and x.grad is not y.grad
    assert not np.shares_memory(x.grad.numpy(), g.numpy())
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.mul_(10)
    close(g, [1.0, 2.0, 3.0])
    close(y.grad, [1.0, 2.0, 3.0])


def test_grad_of_a_broadcast_gradient_is_writable():
    w = pf.tensor(X0, requires_grad=True)
    (w.sum() * 3).backward()
    assert w.grad.numpy().flags.writeable
    w.grad.zero_()
    close(w.grad, [0.0, 0.0, 0.0])


def test_backward_of_a_leaf_copies_the_gradient():
    x = pf.tensor(X0, requires_grad=True)
    g = pf.ones(3)
    x.backward(g)
    assert not np.shares_memory(x.grad.numpy(), g.numpy())


def test_backward_inputs_grads_are_fresh():
    x = pf.tensor(X0, requires_grad=True)
    y = pf.tensor(X0, requires_grad=True)
    g = pf.tensor([1.0, 2.0, 3.0])
    (x + y).backward(g, inputs=[x, y])
    assert not np.shares_memory(x.grad.numpy(), g.numpy())
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.zero_()
    close(y.grad, [1.0, 2.0, 3.0])


def test_retained_grad_is_not_shared_with_the_leaf():
    x = pf.tensor(X0, requires_grad=True)
    y = x + 0.0
    y.retain_grad()
    y.sum().backward()
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.zero_()
    close(y.grad, [1.0, 1.0, 1.0])


def test_create_graph_grad_is_fresh_and_differentiable():
    x = pf.tensor(X0, requires_grad=True)
    y = pf.tensor(X0, requires_grad=True)
    g = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * y).backward(g, create_graph=True)
    assert not np.shares_memory(x.grad.detach().numpy(), g.detach().numpy())
    (gg,) = pf.autograd.grad(x.grad.sum(), [g])
    close(gg, X0)


def test_a_gradient_the_engine_made_is_stored_without_a_copy():
    made = []

    class Double(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            r = g * 2
            made.append(id(r.numpy()))
            return r

    x = pf.tensor(X0, requires_grad=True)
    Double.apply(x).sum().backward()
    assert id(x.grad.numpy()) == made[0]


# -- 3. no reference cycles ------------------------------------------------------------------------


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class SavesOutput(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


@pytest.mark.parametrize("do_backward", [False, True])
@pytest.mark.parametrize("kind", ["ops", "views", "function"])
def test_leaf_and_graph_freed_by_reference_counting(no_gc, kind, do_backward):
    x = pf.tensor(np.ones(1000), requires_grad=True)
    if kind == "ops":
        y = (x.sin() * x).sum()
    elif kind == "views":
        y = (x[1:] * x[:-1]).sum()
    else:
        y = SavesOutput.apply(x).sum()
    leaf, node, acc = weakref.ref(x), weakref.ref(y.grad_fn), weakref.ref(x._grad_acc)
    if do_backward:
        y.backward()  # frees the saved tensors
        del x
        assert leaf() is None  # the graph does not hold the leaf (its accumulator holds it weakly)
    else:
        del x
    del y
    assert leaf() is None and node() is None and acc() is None


def test_many_big_leaves_do_not_pile_up(no_gc):
    """40 leaves of 8 MB each, each dropped after its backward: at most one is alive at a time."""
    alive = []
    for _ in range(40):
        x = pf.tensor(np.ones(1 << 20), requires_grad=True)
        (x * 2).sum().backward()
        alive.append(weakref.ref(x))
        del x
        assert sum(r() is not None for r in alive) == 0


def test_leaf_freed_while_its_graph_lives(no_gc):
    x = pf.tensor(X0, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    y = (x + 1).sum()  # saves nothing: only the accumulator refers to x
    ref = weakref.ref(x)
    del x
    assert ref() is None
    y.backward()  # the gradient has nowhere to go; the hook still sees it
    assert len(seen) == 1


def test_aliases_of_a_leaf_accumulate_into_it():
    x = pf.tensor(X0, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, pf.ones(3))
        (d * 2).sum().backward()
    close(x.grad, [2.0, 2.0, 2.0])


def test_function_saved_output_still_differentiable(no_gc):
    x = pf.tensor(X0, requires_grad=True)
    y = SavesOutput.apply(x)
    (g,) = pf.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = pf.autograd.grad(g.sum(), x)
    close(gg, np.exp(X0))
    node = weakref.ref(y.grad_fn)
    del y, g, gg
    assert node() is None


# -- 4. threads ------------------------------------------------------------------------------------


def test_concurrent_backward_into_one_leaf_is_exact():
    x = pf.tensor(np.zeros(20000), requires_grad=True)
    n, workers = 50, 8
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible

    def work():
        for _ in range(n):
            (x * 2.0).sum().backward()

    try:
        threads = [threading.Thread(target=work) for _ in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    close(x.grad, np.full(20000, 2.0 * n * workers))


# -- 5. validation of a custom Function's jvp and backward -----------------------------------------


def _fn(backward=None, jvp=None, n_in=1, name="Custom"):
    def forward(ctx, *args):
        return args[0] * 2

    body = {"forward": staticmethod(forward)}
    if backward is not None:
        body["backward"] = staticmethod(backward)
    if jvp is not None:
        body["jvp"] = staticmethod(jvp)
    return type(name, (pf.autograd.Function,), body)


@pytest.mark.parametrize(
    "tangent_fn, match",
    [
        (lambda ctx, t: pf.ones(4), r"BadJvp\.jvp.*shape \(4,\).*output 0 of shape \(3,\)"),
        (lambda ctx, t: pf.ones(3, dtype=pf.float32), r"BadJvp\.jvp.*dtype float32.*dtype float64"),
        (lambda ctx, t: (t * 2, t), r"BadJvp\.jvp returned 2 tangent.*1 output"),
        (lambda ctx, t: 2.0, r"BadJvp\.jvp returned a float"),
    ],
)
def test_jvp_returning_a_wrong_tangent_is_an_error(tangent_fn, match):
    F = _fn(jvp=tangent_fn, name="BadJvp")
    with fwAD.dual_level():
        x = fwAD.make_dual(pf.tensor(X0), pf.ones(3))
        with pytest.raises(RuntimeError, match=match):
            F.apply(x)


@pytest.mark.parametrize(
    "grads, match",
    [
        ((), r"BadBackward\.backward returned an incorrect number of gradients \(expected 2, got 1\)"),
        (
            (pf.ones(3), pf.ones(3)),
            r"BadBackward\.backward returned an incorrect number of gradients \(expected 2, got 3\)",
        ),
        ((pf.ones(4),), r"BadBackwardBackward.*shape \(4,\).*input 1 shape \(3,\)"),
        ((np.ones(3),), r"BadBackward\.backward returned a ndarray at position 2"),
    ],
)
def test_backward_returning_wrong_gradients_is_an_error(grads, match):
    def backward(ctx, g):
        return (g * 2,) + grads

    F = type(
        "BadBackward",
        (pf.autograd.Function,),
        {
            "forward": staticmethod(lambda ctx, x, y: x * y),
            "backward": staticmethod(backward),
        },
    )
    x, y = pf.tensor(X0, requires_grad=True), pf.tensor(X0, requires_grad=True)
    with pytest.raises(RuntimeError, match=match):
        F.apply(x, y).sum().backward()


def test_backward_may_return_extra_trailing_nones_like_torch():
    F = _fn(backward=lambda ctx, g: (g * 2, None, None))
    x = pf.tensor(X0, requires_grad=True)
    F.apply(x).sum().backward()
    close(x.grad, [2.0, 2.0, 2.0])


def test_backward_gradient_for_a_non_tensor_argument_must_be_none():
    F = type(
        "Scale",
        (pf.autograd.Function,),
        {
            "forward": staticmethod(lambda ctx, k, x: x * k),
            "backward": staticmethod(lambda ctx, g: (pf.ones(1), g * 3)),
        },
    )
    x = pf.tensor(X0, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Scale\.backward returned a gradient different than None at position 1"):
        F.apply(3.0, x).sum().backward()


def test_non_tensor_argument_before_a_tensor_gets_the_right_gradient():
    class Scale(pf.autograd.Function):
        @staticmethod
        def forward(ctx, k, x):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return None, g * ctx.k

    x = pf.tensor(X0, requires_grad=True)
    Scale.apply(3.0, x).sum().backward()
    close(x.grad, [3.0, 3.0, 3.0])


def test_function_integer_output_gets_no_tangent():
    class WithIndex(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, pf.tensor([1, 2, 3])

        @staticmethod
        def jvp(ctx, t):
            return t * 2, pf.zeros(3, dtype=pf.int64)

    with fwAD.dual_level():
        a, i = WithIndex.apply(fwAD.make_dual(pf.tensor(X0), pf.ones(3)))
        close(tangent(a), [2.0, 2.0, 2.0])
        assert tangent(i) is None


# -- 6. dual_level exit after an exception ------------------------------------------------------------


def test_exception_with_a_stray_level_restores_the_stack_and_passes_through():
    class Mine(Exception):
        pass

    with fwAD.dual_level():
        outer = list(STATE.levels)
        with pytest.raises(Mine):
            with fwAD.dual_level():
                fwAD.enter_dual_level()
                fwAD.enter_dual_level()
                raise Mine("user error")
        assert STATE.levels == outer
    assert STATE.levels == []


def test_stray_level_tangents_are_dropped_after_an_exception():
    with pytest.raises(KeyError):
        with fwAD.dual_level():
            fwAD.enter_dual_level()
            d = fwAD.make_dual(pf.tensor(X0), pf.ones(3))
            raise KeyError("x")
    assert not STATE.levels and d._fw is None


def test_exception_after_the_level_was_exited_by_hand_passes_through():
    with pytest.raises(ValueError):
        with fwAD.dual_level() as lvl:
            fwAD.exit_dual_level(level=lvl)
            fwAD.enter_dual_level()  # a new level with the same number: not ours
            raise ValueError("x")
    # the level entered by hand is not the `with`'s: it stays for its owner to exit
    assert len(STATE.levels) == 1
    fwAD.exit_dual_level()


def test_stray_level_without_exception_is_still_an_error():
    with pytest.raises(RuntimeError, match="innermost"):
        with fwAD.dual_level():
            fwAD.enter_dual_level()
    fwAD.exit_dual_level()
    fwAD.exit_dual_level()


# -- related engine defects: inputs=, hooks, grad_outputs ---------------------------------------------


@needs_torch
def test_backward_inputs_listed_twice_accumulate_once_like_torch():
    x = pf.tensor(X0, requires_grad=True)
    (x * 3).sum().backward(inputs=[x, x])
    tx = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
    (tx * 3).sum().backward(inputs=[tx, tx])
    close(x.grad, tx.grad.numpy())


def test_backward_inputs_must_be_non_empty_and_require_grad():
    x = pf.tensor(X0, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match=r"inputs\[0\].*does not require grad"):
        (x * 2).sum().backward(inputs=[pf.tensor(X0)])
    with pytest.raises(RuntimeError, match="cannot be empty"):
        pf.autograd.grad((x * 2).sum(), [])


@pytest.mark.parametrize(
    "hook, match",
    [
        (lambda g: pf.ones(3, 3), r"hook '<lambda>' has changed the shape .*MulBackward0.*\(3,\).*\(3, 3\)"),
        (lambda g: g.to(pf.float32), r"hook '<lambda>' has changed the dtype .*float64.*float32"),
        (lambda g: 2.0, r"hook '<lambda>' .*returned a float"),
    ],
)
def test_hook_changing_the_gradient_shape_or_dtype_is_an_error(hook, match):
    x = pf.tensor(X0, requires_grad=True)
    y = x * 2
    y.register_hook(hook)
    with pytest.raises(RuntimeError, match=match):
        pf.autograd.grad((y * x).sum(), [x])


def test_complex_grad_output_for_a_real_output_is_an_error():
    x = pf.tensor(X0, requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype.*complex128.*float64"):
        pf.autograd.grad(x * 2, [x], [pf.tensor([1 + 1j, 1j, 0j])])
    z = pf.tensor([1 + 1j, 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype.*float64.*complex128"):
        (z * 2).backward(pf.ones(2))


def test_grad_does_not_run_the_nodes_below_the_last_input():
    ran = []

    class Spy(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            ran.append(1)
            return g

    x = pf.tensor(X0, requires_grad=True)
    y = Spy.apply(x)
    z = y.exp()
    (g,) = pf.autograd.grad(z.sum(), [y], retain_graph=True)  # y's own node need not run
    close(g, np.exp(X0))
    assert ran == []
    (g,) = pf.autograd.grad(z.sum(), [x])
    close(g, np.exp(X0))
    assert ran == [1]


@pytest.mark.parametrize("bad", [pf.zeros(1), pf.zeros(3, dtype=pf.float32)])
def test_accumulating_into_a_mismatched_grad_is_an_error(bad):
    x = pf.tensor(X0, requires_grad=True)
    x.grad = bad  # assigned by hand: a sum would broadcast or change the dtype without a word
    with pytest.raises(RuntimeError, match=r"cannot accumulate a gradient of shape \(3,\) and dtype float64"):
        (x * 2).sum().backward()


def test_with_block_never_exits_a_level_it_did_not_enter():
    with pytest.raises(RuntimeError, match="already exited"):
        with fwAD.dual_level() as lvl:
            fwAD.exit_dual_level(level=lvl)
            mine = fwAD.enter_dual_level()  # same level number, another level
            d = fwAD.make_dual(pf.tensor(X0), pf.ones(3))
    assert mine == lvl and len(STATE.levels) == 1
    close(tangent(d), [1.0, 1.0, 1.0])  # not exited behind the user's back
    fwAD.exit_dual_level()


def test_a_gradient_referenced_elsewhere_is_copied():
    kept = []

    class Keep(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            r = g * 2
            kept.append(r)  # one reference outside the engine
            return r

    x = pf.tensor(X0, requires_grad=True)
    Keep.apply(x).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), kept[0].numpy())


def test_a_gradient_a_leaf_hook_kept_is_copied():
    seen = []
    x = pf.tensor(X0, requires_grad=True)
    x.register_hook(lambda g: seen.append(g))
    (x * x).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), seen[0].numpy())


def test_op_node_refuses_a_gradient_for_a_second_output():
    x = pf.tensor([[1.0, 3.0], [2.0, 0.0]], requires_grad=True)
    v, _ = x.max(0)
    with pytest.raises(NotImplementedError, match="more than one output of max_dim"):
        v.grad_fn.apply([pf.ones(2), pf.ones(2)])


class ExpSavesOutput(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        ctx.save_for_forward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r

    @staticmethod
    def jvp(ctx, t):
        (r,) = ctx.saved_tensors
        return t * r


@pytest.mark.parametrize("fw_mode", [True, False])
def test_saved_output_keeps_its_tangent_and_history_for_hvp(fw_mode):
    """The saved output is stored without its grad_fn (no cycle) and rebuilt with it and its tangent."""
    xv, vv = np.array([0.5, 1.0]), np.array([1.0, 2.0])
    f = lambda x: (ExpSavesOutput.apply(x) * x).sum()  # noqa: E731
    _, h = pf.autograd.functional.hvp(f, pf.tensor(xv), pf.tensor(vv), fw_mode=fw_mode)
    close(h, (np.exp(xv) * xv + 2 * np.exp(xv)) * vv)
