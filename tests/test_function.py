"""Custom autograd Functions: forward/backward/jvp, saved tensors, mark_dirty, mark_non_differentiable, needs_input_grad."""

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from helpers import close, tangent


class Cube(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * t


class ScaledMul(pf.autograd.Function):
    """a * b * k with a non-tensor argument k; records needs_input_grad."""

    log = {}

    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.save_for_forward(a, b)
        ctx.k = k
        ScaledMul.log["forward_nig"] = ctx.needs_input_grad
        return a * b * k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ScaledMul.log["backward_nig"] = ctx.needs_input_grad
        ga = g * b * ctx.k if ctx.needs_input_grad[0] else None
        gb = g * a * ctx.k if ctx.needs_input_grad[1] else None
        return ga, gb, None

    @staticmethod
    def jvp(ctx, ta, tb, tk):
        a, b = ctx.saved_tensors
        return (ta * b + a * tb) * ctx.k


def test_forward_value_and_grad_fn():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x)
    close(y.detach(), [1.0, 8.0])
    assert y.requires_grad and y.grad_fn is not None
    assert "Cube" in y.grad_fn.name()


def test_backward():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    Cube.apply(x).sum().backward()
    close(x.grad, [3.0, 12.0])


def test_forward_runs_without_tape_or_tangents():
    seen = {}

    class Probe(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["rg"] = x.requires_grad
            seen["grad_enabled"] = pf.is_grad_enabled()
            seen["tangent"] = tangent(x)
            y = x * 2
            seen["y_rg"] = y.requires_grad
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    x = pf.tensor([1.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, pf.tensor([1.0]))
        out = Probe.apply(d)
        assert tangent(out).tolist() == [2.0]
    assert seen == {"rg": False, "grad_enabled": False, "tangent": None, "y_rg": False}
    assert out.requires_grad


def test_no_input_requires_grad_gives_plain_output():
    y = Cube.apply(pf.tensor([2.0]))
    assert not y.requires_grad and y.grad_fn is None


def test_under_no_grad_no_tape():
    x = pf.tensor([2.0], requires_grad=True)
    with pf.no_grad():
        y = Cube.apply(x)
    assert not y.requires_grad


def test_jvp():
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 0.5]))
        y = Cube.apply(d)
        close(tangent(y), [3.0, 6.0])


def test_jvp_under_no_grad():
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]))
        with pf.no_grad():
            y = Cube.apply(d)
        close(tangent(y), [12.0])


def test_jvp_with_tangentless_input_and_nontensor_arg():
    with fwAD.dual_level():
        a = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 0.0]))
        b = pf.tensor([3.0, 4.0])
        y = ScaledMul.apply(a, b, 2.0)
        close(y, [6.0, 16.0])
        close(tangent(y), [6.0, 0.0])


def test_jvp_nested_levels():
    """Second derivative through a custom Function with two levels (jvp ops carry outer tangents)."""
    with fwAD.dual_level() as l0:
        with fwAD.dual_level() as l1:
            x = fwAD.make_dual(pf.tensor(2.0), pf.tensor(1.0), level=l0)
            x = fwAD.make_dual(x, pf.tensor(1.0), level=l1)
            y = Cube.apply(x)
            d1 = tangent(y, l1)
            close(d1, 12.0)
            d2 = tangent(d1, l0)
            assert d2 is not None
            close(d2, 12.0)


def test_needs_input_grad():
    a = pf.tensor([1.0, 2.0], requires_grad=True)
    b = pf.tensor([3.0, 4.0])
    ScaledMul.log.clear()
    y = ScaledMul.apply(a, b, 2.0)
    assert ScaledMul.log["forward_nig"] == (True, False, False)
    y.sum().backward()
    assert ScaledMul.log["backward_nig"] == (True, False, False)
    close(a.grad, [6.0, 8.0])
    assert b.grad is None


def test_needs_input_grad_both():
    a = pf.tensor([1.0, 2.0], requires_grad=True)
    b = pf.tensor([3.0, 4.0], requires_grad=True)
    ScaledMul.apply(a, b, 0.5).sum().backward()
    close(a.grad, [1.5, 2.0])
    close(b.grad, [0.5, 1.0])


def test_needs_input_grad_false_under_no_grad():
    a = pf.tensor([1.0], requires_grad=True)
    ScaledMul.log.clear()
    with pf.no_grad():
        ScaledMul.apply(a, pf.tensor([1.0]), 1.0)
    assert ScaledMul.log["forward_nig"] == (False, False, False)


def test_saved_tensors_modified_inplace_are_kept_or_error_under_the_switch():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = Cube.apply(a)
    a.add_(1)
    y.sum().backward()  # ctx.save_for_backward's a was kept before the write
    close(x.grad, [3.0, 12.0])
    a = x * 1
    y = Cube.apply(a)
    with pf.autograd.forbid_mutation_on_saved_tensors():
        a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_backward_twice_errors_without_retain_graph():
    x = pf.tensor([1.0], requires_grad=True)
    y = Cube.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_backward_wrong_number_of_grads_errors():
    class Bad(pf.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g  # should return two

    a = pf.tensor([1.0], requires_grad=True)
    b = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Bad"):
        Bad.apply(a, b).sum().backward()


def test_double_backward_through_function():
    """backward written with differentiable ops: create_graph gives the second derivative."""
    x = pf.tensor([2.0], requires_grad=True)
    (g,) = pf.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    close(g.detach(), [12.0])
    (h,) = pf.autograd.grad(g.sum(), x)
    close(h, [12.0])


def test_reverse_over_forward_through_function():
    x = pf.tensor([2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, pf.tensor([1.0]))
        t = tangent(Cube.apply(d))
        # jvp = 3 x^2; its derivative wrt x is 6x = 12 (through the tape of the primal saved for forward)
        (g,) = pf.autograd.grad(t.sum(), x)
    close(g.detach(), [12.0])


def test_multiple_outputs_and_mark_non_differentiable():
    class ValArg(pf.autograd.Function):
        calls = []

        @staticmethod
        def forward(ctx, x):
            idx = pf.argmax(x)
            ctx.mark_non_differentiable(idx)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, gi):
            ValArg.calls.append(gi)
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2, None

    x = pf.tensor([1.0, 3.0, 2.0], requires_grad=True)
    v, i = ValArg.apply(x)
    assert v.requires_grad and not i.requires_grad
    assert i.item() == 1
    v.sum().backward()
    close(x.grad, [2.0, 2.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 3.0]), pf.tensor([1.0, 1.0]))
        v, i = ValArg.apply(d)
        close(tangent(v), [2.0, 2.0])
        assert tangent(i) is None


def test_mark_non_differentiable_float_output():
    class Both(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a = x * 2
            b = x * 3
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2, None  # (a tangent for b is refused, as torch: see below)

    x = pf.tensor([1.0], requires_grad=True)
    a, b = Both.apply(x)
    assert a.requires_grad and not b.requires_grad
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]))
        a, b = Both.apply(d)
        close(tangent(a), [2.0])
        assert tangent(b) is None


class AddOne_(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        return t


class Double_(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def jvp(ctx, t):
        t.mul_(2)
        return t


def test_mark_dirty_returns_input_modified():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    v0 = y._version
    z = AddOne_.apply(y)
    assert z is y
    close(y.detach(), [2.0, 3.0])
    assert y._version == v0 + 1
    assert "AddOne_" in y.grad_fn.name()
    (z * z).sum().backward()
    close(x.grad, [4.0, 6.0])


def test_mark_dirty_on_leaf_requiring_grad_errors():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        AddOne_.apply(x)


def test_mark_dirty_keeps_an_earlier_saved_tensor():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    s = y.sin()  # saves y at version 0
    AddOne_.apply(y)
    s.sum().backward()
    close(x.grad, np.cos([1.0, 2.0]))
    y = x * 1
    s = y.sin()
    with pf.autograd.forbid_mutation_on_saved_tensors():
        AddOne_.apply(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


def test_mark_dirty_forward_mode_updates_tangent_in_place():
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 5.0]))
        t_before = tangent(d)
        z = Double_.apply(d)
        assert z is d
        close(d, [2.0, 4.0])
        close(tangent(d), [2.0, 10.0])
        assert tangent(d) is t_before


def test_mark_dirty_forward_mode_new_tangent_tensor_is_refused_as_torch():
    # torch's rule: jvp must update a mark_dirty input's tangent in place and return that same
    # tensor; a new tensor (the old tangent left stale) raises, naming the rule
    class Sq_(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x.clone())
            x.mul_(x)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("unused")

        @staticmethod
        def jvp(ctx, t):
            (old,) = ctx.saved_tensors
            return 2 * old * t

    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([3.0]), pf.tensor([1.0]))
        with pytest.raises(RuntimeError, match="not modifying the forward mode gradients inplace"):
            Sq_.apply(d)


def test_save_for_forward_separate_from_backward():
    class F(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x * 10)
            ctx.save_for_forward(x * 100)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            (s,) = ctx.saved_tensors
            return g * s

        @staticmethod
        def jvp(ctx, t):
            (s,) = ctx.saved_tensors
            return t * s

    x = pf.tensor([2.0], requires_grad=True)
    F.apply(x).sum().backward()
    close(x.grad, [20.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]))
        close(tangent(F.apply(d)), [200.0])


def test_function_returning_input_unchanged_is_new_tensor():
    class Ident(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5  # distinguishable

        @staticmethod
        def jvp(ctx, t):
            return t * 5

    x = pf.tensor([1.0], requires_grad=True)
    y = Ident.apply(x)
    assert y is not x and x.grad_fn is None
    y.sum().backward()
    close(x.grad, [5.0])


def test_backward_missing_error_message():
    class NoBwd(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    x = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="backward"):
        NoBwd.apply(x).sum().backward()


def test_forward_missing_error_names_the_forward_function():
    # torch's rule and wording ("must implement the forward function"), which ported tests match
    class NoFwd(pf.autograd.Function):
        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(NotImplementedError, match="must implement the forward"):
        NoFwd.apply(pf.tensor([1.0], requires_grad=True))


def test_missing_backward_or_jvp_and_both_names_use_torch_wording():
    class OnlyFwd(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

    class Both(OnlyFwd):
        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    x = pf.tensor([1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="must implement either the backward"):
        OnlyFwd.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(x).sum().backward()
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            OnlyFwd.apply(fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0])))


def test_materialized_zero_grads_for_unused_output():
    class Two(pf.autograd.Function):
        seen = []

        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            Two.seen.append((ga.tolist(), gb.tolist()))
            return ga * 2 + gb * 3

        @staticmethod
        def jvp(ctx, t):
            return t * 2, t * 3

    x = pf.tensor([1.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert Two.seen == [([1.0], [0.0])]
    close(x.grad, [2.0])


def test_gradcheck_on_custom_function():
    x = pf.tensor([0.3, -1.2], requires_grad=True)
    assert pf.autograd.gradcheck(Cube.apply, (x,), check_forward_ad=True)


def test_forward_returning_view_of_input():
    class First(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x[0:1]

        @staticmethod
        def backward(ctx, g):
            z = pf.zeros(*ctx.shape)
            z[0:1] = g
            return z

        @staticmethod
        def jvp(ctx, t):
            return t[0:1]

    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = First.apply(x)
    (y * 3).sum().backward()
    close(x.grad, [3.0, 0.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([5.0, 6.0]))
        close(tangent(First.apply(d)), [5.0])


# -- torch's contract for jvp ----------------------------------------------------------------------


def test_vjp_is_backward_alias_and_both_is_an_error():
    class Double(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return 2 * g

    x = pf.tensor([1.0, 2.0], requires_grad=True)
    Double.apply(x).sum().backward()
    close(x.grad, [2.0, 2.0])

    class Both(Double):
        @staticmethod
        def backward(ctx, g):
            return 2 * g

    with pytest.raises(RuntimeError, match="both 'backward' and 'vjp'"):
        Both.apply(x).sum().backward()


def test_jvp_sees_save_for_forward_only_and_none_for_non_differentiable_inputs():
    seen = {}

    class F(pf.autograd.Function):
        @staticmethod
        def forward(ctx, n, x, k, i):
            ctx.save_for_backward(x, i)
            return x * k

        @staticmethod
        def jvp(ctx, n_t, x_t, k_t, i_t):
            seen.update(saved=ctx.saved_tensors, n=n_t, k=k_t, i=i_t)
            return x_t * 3.0

    with fwAD.dual_level():
        out = F.apply(1, fwAD.make_dual(pf.tensor([1.0]), pf.tensor([2.0])), 3.0, pf.tensor([4]))
        close(tangent(out), [6.0])
    # nothing saved for forward: jvp sees no saved tensors (save_for_backward's are kept apart);
    # a Python number and an integer tensor reach jvp as None
    assert seen["saved"] == () and seen["n"] is None and seen["k"] is None and seen["i"] is None


def test_jvp_returning_the_wrong_number_of_tangents_names_the_rule():
    class Two(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def jvp(ctx, t):
            return t

    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="returned 1 tangent.*2 output.*incorrect number of tangents"):
            Two.apply(fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0])))


def _view_fn(flag):
    class ViewFn(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.narrow(0, 0, 2)

        @staticmethod
        def vjp(ctx, g):
            out = pf.zeros(4, 4)
            out[:2] = g
            return out

        @staticmethod
        def jvp(ctx, t):
            res = t.narrow(0, 0, 2)
            if flag != "ok":
                res = res.clone()
            if flag in ("other view", "other base"):
                res = res.view_as(res)
            return res

    return ViewFn


@pytest.mark.parametrize(
    "flag, msg",
    [
        ("ok", None),
        ("not a view", "forward is returning a view .* jvp is not returning a view"),
        ("other view", "jvp is not returning a view of the given grad input"),
        ("other base", "jvp is not returning a view of the same base"),
    ],
)
def test_a_view_output_needs_a_view_tangent(flag, msg):
    x = pf.rand(4, 4, requires_grad=True)

    def f(x):
        return _view_fn(flag).apply(x.view_as(x) if flag == "other base" else x)

    if msg is None:
        assert pf.autograd.gradcheck(f, (x,), check_forward_ad=True)
    else:
        with pytest.raises(RuntimeError, match=msg):
            pf.autograd.gradcheck(f, (x,), check_forward_ad=True)


@pytest.mark.parametrize("in_place", [True, False])
def test_mark_dirty_on_a_dual_that_requires_grad(in_place):
    class Double_(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x.mul_(2)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

        @staticmethod
        def jvp(ctx, t):
            return t.mul_(2) if in_place else 2 * t

    x = pf.rand(3, requires_grad=True)
    f = lambda x: Double_.apply(x.clone())  # noqa: E731
    if in_place:
        assert pf.autograd.gradcheck(f, (x,), check_forward_ad=True)
    else:
        with pytest.raises(RuntimeError, match="not modifying the forward mode gradients inplace"):
            pf.autograd.gradcheck(f, (x,), check_forward_ad=True)


def test_gradcheck_names_a_forward_mode_mismatch_as_torch():
    class Wrong(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return 2 * g

        @staticmethod
        def jvp(ctx, t):
            return 3 * t

    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for output 0"):
        pf.autograd.gradcheck(Wrong.apply, (pf.rand(3, requires_grad=True),), check_forward_ad=True)


def test_mark_dirty_jvp_returning_its_tangent_unchanged_is_refused_as_torch():
    # the primal doubled, the tangent returned as given but not updated: torch sees the tangent's
    # version unchanged and raises (it was accepted, a wrong tangent)
    class Lazy_(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

        @staticmethod
        def jvp(ctx, t):
            return t

    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))
        with pytest.raises(RuntimeError, match="not modifying the forward mode gradients inplace"):
            Lazy_.apply(d)


def test_a_tangent_for_a_non_differentiable_output_is_refused_as_torch():
    class Two(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            z = x * 3
            ctx.mark_non_differentiable(z)
            return x * 2, z

        @staticmethod
        def backward(ctx, g, h):
            return 2 * g

        @staticmethod
        def jvp(ctx, t):
            return t * 2, t * 3

    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))
        with pytest.raises(RuntimeError, match="position 1, but the corresponding forward output is not a diff"):
            Two.apply(d)


def test_mark_dirty_on_a_make_dual_of_a_tensor_that_requires_grad():
    # make_dual's result is a view: its base's history goes through the Function (it raised
    # NotImplementedError); torch's gradients for primal and tangent
    p = pf.tensor([1.0, 2.0], requires_grad=True)
    tt = pf.tensor([1.0, 1.0], requires_grad=True)
    with fwAD.dual_level():
        x = fwAD.make_dual(p * 1, tt * 1)
        y = Double_.apply(x)
        pr, tan = fwAD.unpack_dual(y)
        close(pr.detach(), [2.0, 4.0])
        close(tan.detach(), [2.0, 2.0])
        gp, gt = pf.autograd.grad(pr.sum() + (tan * pf.tensor([1.0, 3.0])).sum(), (p, tt))
    close(gp, [2.0, 2.0])
    close(gt, [2.0, 6.0])
    # a view of a leaf that requires grad is refused, as torch
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        Double_.apply(p[:1])
