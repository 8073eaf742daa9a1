"""Forward-mode AD by the semantics rules of docs/design.md: levels, nesting, tangents, reverse interplay, coverage, grad mode, complex.

Views, in-place and the lens laws (rules 4-6) are in test_views_inplace.py.
"""

import contextlib
import gc
import math
import threading
import weakref

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.engine.state import STATE
from helpers import close, needs_torch, tangent, torch


# -- rule 1: levels ------------------------------------------------------------------------------


@contextlib.contextmanager
def _dual_made_in_other_thread():
    """Yield a dual made at level 0 of another thread, whose level stays open meanwhile."""
    box = {}
    ready = threading.Event()
    done = threading.Event()

    def maker():
        with fwAD.dual_level():
            box["d"] = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([5.0]))
            ready.set()
            done.wait(5)

    th = threading.Thread(target=maker)
    th.start()
    ready.wait(5)
    try:
        yield box["d"]
    finally:
        done.set()
        th.join()


class TestLevels:
    def test_enter_returns_increasing_indices_and_exit_pops(self):
        a = fwAD.enter_dual_level()
        b = fwAD.enter_dual_level()
        assert b == a + 1
        fwAD.exit_dual_level(level=b)
        fwAD.exit_dual_level(level=a)
        assert len(STATE.levels) == 0

    def test_current_level_is_the_innermost_open_level(self):
        # torch's private module attribute, read by code that closes the levels it left open
        assert fwAD._current_level == -1
        fwAD.enter_dual_level()
        with fwAD.dual_level():
            assert fwAD._current_level == 1
        assert fwAD._current_level == 0
        while fwAD._current_level >= 0:
            fwAD.exit_dual_level()
        assert len(STATE.levels) == 0

    def test_context_manager_yields_level(self):
        with fwAD.dual_level() as lvl:
            assert lvl == 0
            with fwAD.dual_level() as inner:
                assert inner == 1
        assert len(STATE.levels) == 0

    def test_decorator(self):
        @fwAD.dual_level()
        def f(x):
            assert len(STATE.levels) == 1
            return tangent(fwAD.make_dual(x, pf.ones_like(x)).exp())

        t = f(pf.tensor([0.0, 1.0]))
        close(t, np.exp([0.0, 1.0]))
        assert len(STATE.levels) == 0

    def test_context_exits_on_exception(self):
        with pytest.raises(ZeroDivisionError):
            with fwAD.dual_level():
                1 / 0
        assert len(STATE.levels) == 0

    def test_levels_are_per_thread(self):
        seen = {}

        def worker():
            seen["levels_at_start"] = len(STATE.levels)
            try:
                fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]))
            except Exception as e:  # no level in this thread
                seen["error"] = e
            with fwAD.dual_level() as lvl:
                seen["own_level"] = lvl
                d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([2.0]))
                seen["tangent"] = tangent(d * 3).tolist()

        with fwAD.dual_level():
            with fwAD.dual_level():
                th = threading.Thread(target=worker)
                th.start()
                th.join()
                # our levels are untouched by the thread's enter/exit
                assert len(STATE.levels) == 2
        assert seen["levels_at_start"] == 0
        assert "dual_level" in str(seen["error"])
        assert seen["own_level"] == 0
        assert seen["tangent"] == [6.0]

    def test_thread_tangent_invisible_to_other_thread_level(self):
        """A dual made in one thread is not seen through another thread's (same-index) level."""
        with _dual_made_in_other_thread() as d:
            # this thread has no live level: unpack_dual sees no tangent
            assert fwAD.unpack_dual(d).tangent is None

    def test_thread_tangent_invisible_to_same_index_level_of_other_thread(self):
        """Both threads are at their level 0: the other thread's tangent must still not be seen."""
        with _dual_made_in_other_thread() as d:
            with fwAD.dual_level() as lvl:
                assert lvl == 0
                assert fwAD.unpack_dual(d).tangent is None
                assert fwAD.unpack_dual(d * 2).tangent is None

    def test_level_none_is_innermost_for_make_dual(self):
        with fwAD.dual_level() as outer:
            with fwAD.dual_level() as inner:
                d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([2.0]))
                assert fwAD.unpack_dual(d, level=inner).tangent.tolist() == [2.0]
                assert fwAD.unpack_dual(d, level=outer).tangent is None
                assert fwAD.unpack_dual(d).tangent.tolist() == [2.0]

    def test_level_none_is_innermost_for_unpack_dual(self):
        with fwAD.dual_level() as outer:
            d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([2.0]), level=outer)
            with fwAD.dual_level():
                # innermost level has no tangent on d: level=None must not fall back to outer
                assert fwAD.unpack_dual(d).tangent is None
                assert fwAD.unpack_dual(d, level=outer).tangent.tolist() == [2.0]

    def test_exit_non_innermost_errors(self):
        outer = fwAD.enter_dual_level()
        inner = fwAD.enter_dual_level()
        try:
            with pytest.raises(RuntimeError, match="innermost"):
                fwAD.exit_dual_level(level=outer)
            # nothing was popped
            assert len(STATE.levels) == 2
        finally:
            fwAD.exit_dual_level(level=inner)
            fwAD.exit_dual_level(level=outer)

    def test_exit_without_level_errors(self):
        with pytest.raises(RuntimeError):
            fwAD.exit_dual_level()

    def test_exit_clears_all_tangents(self):
        with fwAD.dual_level():
            x = pf.tensor([1.0, 2.0])
            d = fwAD.make_dual(x, pf.tensor([1.0, 1.0]))
            y = d.sin() * 2
            v = y[1:]
            z = v.exp()
            made = [d, y, v, z]
            assert all(tangent(t) is not None for t in made)
        with fwAD.dual_level():
            # a fresh level (same index 0) must not resurrect old tangents
            for t in made:
                assert fwAD.unpack_dual(t).tangent is None
        for t in made:
            assert fwAD.unpack_dual(t).tangent is None

    def test_exit_inner_keeps_outer_tangents(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([3.0]))
            with fwAD.dual_level():
                e = fwAD.make_dual(d, pf.tensor([4.0]))
                f = e * 2
            assert tangent(d).tolist() == [3.0]
            assert tangent(e).tolist() == [3.0]  # e kept d's outer tangent
            assert tangent(f).tolist() == [6.0]

    def test_exit_frees_tangent_memory(self):
        with fwAD.dual_level():
            t = pf.tensor([1.0, 2.0, 3.0])
            r_in = weakref.ref(t)
            d = fwAD.make_dual(pf.tensor([0.5, 1.0, 1.5]), t)
            y = d.sin() * d
            r_out = weakref.ref(fwAD.unpack_dual(y).tangent)
            del t
            assert r_in() is not None  # d still holds it
        gc.collect()
        assert r_in() is None
        assert r_out() is None
        # the tensors themselves survive, without tangents
        assert fwAD.unpack_dual(y).tangent is None
        close(y, np.sin([0.5, 1.0, 1.5]) * [0.5, 1.0, 1.5])

    def test_exit_frees_tangent_memory_without_gc(self):
        """Refcounting alone frees the tangents (no cycles from a dual to its tangent)."""
        gc.disable()
        try:
            with fwAD.dual_level():
                t = pf.tensor([1.0, 2.0])
                r = weakref.ref(t)
                d = fwAD.make_dual(pf.tensor([1.0, 2.0]), t)
                del t
            assert r() is None
            assert d.tolist() == [1.0, 2.0]
        finally:
            gc.enable()

    def test_exit_frees_tangents_even_if_tape_keeps_tensors_alive(self):
        x = pf.tensor([1.0, 2.0], requires_grad=True)
        with fwAD.dual_level():
            t = pf.tensor([1.0, 1.0])
            r = weakref.ref(t)
            d = fwAD.make_dual(x, t)
            del t
            y = (d.exp() * d).sum()  # the tape saves d and exp(d)
            r_exp = weakref.ref(fwAD.unpack_dual(d.exp()).tangent)
        gc.collect()
        assert r() is None and r_exp() is None
        y.backward()  # the tape still works, without tangents
        close(x.grad, np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])))
        assert fwAD.unpack_dual(x.grad).tangent is None

    def test_exit_inner_frees_only_inner_tangents(self):
        with fwAD.dual_level():
            t0 = pf.tensor([1.0])
            r0 = weakref.ref(t0)
            d = fwAD.make_dual(pf.tensor([2.0]), t0)
            del t0
            with fwAD.dual_level():
                t1 = pf.tensor([1.0])
                r1 = weakref.ref(t1)
                e = fwAD.make_dual(d, t1)
                del t1
                y = e * e
            gc.collect()
            assert r1() is None
            assert r0() is not None
            close(tangent(y), [4.0])  # 2 * e * t0 at the outer level

    def test_make_dual_outside_level_errors_naming_dual_level(self):
        with pytest.raises(RuntimeError, match="dual_level"):
            fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]))

    def test_unpack_dual_outside_level_returns_no_tangent(self):
        x = pf.tensor([1.0])
        p, t = fwAD.unpack_dual(x)
        assert t is None and p is x

    def test_unpack_dual_namedtuple(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([2.0]))
            u = fwAD.unpack_dual(d)
            assert u.primal.tolist() == [1.0] and u.tangent.tolist() == [2.0]
            assert u[0] is u.primal and u[1] is u.tangent
            # the primal is a view sharing memory, without the tangent
            assert np.shares_memory(u.primal.numpy(), d.numpy())
            assert fwAD.unpack_dual(u.primal).tangent is None

    def test_nonexistent_level_errors(self):
        with fwAD.dual_level():
            with pytest.raises(RuntimeError, match="does not exist"):
                fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]), level=3)
            with pytest.raises(RuntimeError, match="does not exist"):
                fwAD.unpack_dual(pf.tensor([1.0]), level=3)
            with pytest.raises(RuntimeError):
                fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]), level=-1)

    def test_exited_level_errors(self):
        with fwAD.dual_level():
            with fwAD.dual_level() as inner:
                pass
            with pytest.raises(RuntimeError, match="exited"):
                fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]), level=inner)
            with pytest.raises(RuntimeError):
                fwAD.unpack_dual(pf.tensor([1.0]), level=inner)

    def test_exit_exited_level_errors(self):
        lvl = fwAD.enter_dual_level()
        fwAD.exit_dual_level(level=lvl)
        with pytest.raises(RuntimeError):
            fwAD.exit_dual_level(level=lvl)

    def test_make_dual_twice_at_same_level_errors(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]))
            with pytest.raises(RuntimeError, match="already"):
                fwAD.make_dual(d, pf.tensor([2.0]))


# -- rule 2: nesting -----------------------------------------------------------------------------


class TestNesting:
    def test_third_derivative_of_sin(self):
        x0 = 0.7
        with fwAD.dual_level() as l0:
            with fwAD.dual_level() as l1:
                with fwAD.dual_level() as l2:
                    x = pf.tensor(x0)
                    x = fwAD.make_dual(x, pf.tensor(1.0), level=l0)
                    x = fwAD.make_dual(x, pf.tensor(1.0), level=l1)
                    x = fwAD.make_dual(x, pf.tensor(1.0), level=l2)
                    y = pf.sin(x)
                    d1 = fwAD.unpack_dual(y, level=l2).tangent  # cos(x), carrying l0, l1
                    d2 = fwAD.unpack_dual(d1, level=l1).tangent  # -sin(x), carrying l0
                    d3 = fwAD.unpack_dual(d2, level=l0).tangent  # -cos(x)
                    close(y.item(), math.sin(x0))
                    close(d1.item(), math.cos(x0))
                    close(d2.item(), -math.sin(x0))
                    close(d3.item(), -math.cos(x0))

    def test_second_derivative_forward_over_forward_polynomial(self):
        with fwAD.dual_level() as l0:
            with fwAD.dual_level() as l1:
                x = fwAD.make_dual(pf.tensor([2.0, 3.0]), pf.tensor([1.0, 1.0]), level=l0)
                x = fwAD.make_dual(x, pf.tensor([1.0, 1.0]), level=l1)
                y = x**4
                d1 = tangent(y, l1)
                close(d1, 4 * np.array([2.0, 3.0]) ** 3)
                close(tangent(d1, l0), 12 * np.array([2.0, 3.0]) ** 2)

    def test_perturbation_confusion(self):
        """d/dx [x * (d/dy (x + y))(1)] at x=1 is 1, not 2 (Siskind & Pearlmutter)."""

        def inner(x):
            with fwAD.dual_level():
                y = fwAD.make_dual(pf.tensor(1.0), pf.tensor(1.0))
                return fwAD.unpack_dual(x + y).tangent  # d/dy (x + y) = 1

        with fwAD.dual_level():
            x = fwAD.make_dual(pf.tensor(1.0), pf.tensor(1.0))
            out = x * inner(x)
            assert tangent(out).item() == 1.0

    def test_perturbation_confusion_explicit_levels(self):
        with fwAD.dual_level() as lx:
            x = fwAD.make_dual(pf.tensor(1.0), pf.tensor(1.0), level=lx)
            with fwAD.dual_level() as ly:
                y = fwAD.make_dual(pf.tensor(1.0), pf.tensor(1.0), level=ly)
                dy = fwAD.unpack_dual(x + y, level=ly).tangent
                # d/dy(x+y) is the constant 1: no tangent at the outer level leaks in
                assert dy.item() == 1.0
                t = fwAD.unpack_dual(dy, level=lx).tangent
                assert t is None or t.item() == 0.0
            out = x * dy
            assert tangent(out, lx).item() == 1.0

    def test_mixed_partials(self):
        """d2/dxdy of f(x, y) = x*y*sin(x) is sin(x) + x cos(x)."""
        x0, y0 = 0.3, 1.7
        with fwAD.dual_level() as l0:
            with fwAD.dual_level() as l1:
                x = fwAD.make_dual(pf.tensor(x0), pf.tensor(1.0), level=l0)
                y = fwAD.make_dual(pf.tensor(y0), pf.tensor(1.0), level=l1)
                f = x * y * pf.sin(x)
                df_dy = fwAD.unpack_dual(f, level=l1).tangent  # x sin x, carrying l0
                close(df_dy.item(), x0 * math.sin(x0))
                d2 = fwAD.unpack_dual(df_dy, level=l0).tangent
                close(d2.item(), math.sin(x0) + x0 * math.cos(x0))
                df_dx = fwAD.unpack_dual(f, level=l0).tangent  # y (sin x + x cos x), carrying l1
                close(df_dx.item(), y0 * (math.sin(x0) + x0 * math.cos(x0)))
                # hierarchical (rule 2): the outer level's tangent is computed from primals that carry
                # only levels outside it, so it has no inner-level tangent
                assert fwAD.unpack_dual(df_dx, level=l1).tangent is None

    def test_mixed_partials_inner_over_outer_order(self):
        """The same mixed partial with x at the inner level and y at the outer one."""
        x0, y0 = 0.3, 1.7
        with fwAD.dual_level() as l0:
            with fwAD.dual_level() as l1:
                y = fwAD.make_dual(pf.tensor(y0), pf.tensor(1.0), level=l0)
                x = fwAD.make_dual(pf.tensor(x0), pf.tensor(1.0), level=l1)
                f = x * y * pf.sin(x)
                df_dx = fwAD.unpack_dual(f, level=l1).tangent
                close(df_dx.item(), y0 * (math.sin(x0) + x0 * math.cos(x0)))
                close(fwAD.unpack_dual(df_dx, level=l0).tangent.item(), math.sin(x0) + x0 * math.cos(x0))

    def test_outer_dual_seen_as_plain_value_by_inner_level(self):
        with fwAD.dual_level() as l0:
            a = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]), level=l0)
            with fwAD.dual_level() as l1:
                b = fwAD.make_dual(pf.tensor([3.0]), pf.tensor([1.0]), level=l1)
                c = a * b
                # level 1 sees a as a constant: dc/db = a = 2 (with a's l0 tangent 1)
                t1 = tangent(c, l1)
                assert t1.tolist() == [2.0]
                assert tangent(t1, l0).tolist() == [1.0]
                assert tangent(c, l0).tolist() == [3.0]


# -- rule 3: tangents ----------------------------------------------------------------------------


class TestTangents:
    def test_shape_mismatch_names_both_shapes(self):
        with fwAD.dual_level():
            with pytest.raises(RuntimeError) as ei:
                fwAD.make_dual(pf.zeros(2, 3), pf.zeros(3, 2))
            msg = str(ei.value)
            assert "(2, 3)" in msg and "(3, 2)" in msg

    def test_broadcastable_tangent_is_still_an_error(self):
        with fwAD.dual_level():
            with pytest.raises(RuntimeError, match=r"\(3,\)"):
                fwAD.make_dual(pf.zeros(3), pf.zeros(1))

    def test_integer_tangent_errors(self):
        with fwAD.dual_level():
            with pytest.raises(ValueError, match="int64"):  # torch's class for this misuse
                fwAD.make_dual(pf.zeros(2), pf.tensor([1, 2]))

    @pytest.mark.parametrize("dtype", [pf.int32, pf.int64, pf.bool])
    def test_integer_or_bool_primal_errors(self, dtype):
        with fwAD.dual_level():
            with pytest.raises(ValueError, match=np.dtype(dtype).name):
                fwAD.make_dual(pf.zeros(2, dtype=dtype), pf.zeros(2))

    def test_dtype_mismatch_names_both(self):
        with fwAD.dual_level():
            with pytest.raises(RuntimeError) as ei:
                fwAD.make_dual(pf.zeros(2, dtype=pf.float64), pf.zeros(2, dtype=pf.complex128))
            assert "complex128" in str(ei.value) and "float64" in str(ei.value)

    @pytest.mark.parametrize(
        "primal,tan", [(pf.float64, pf.float32), (pf.float32, pf.float64), (pf.complex128, pf.complex64)]
    )
    def test_float_precision_mismatch_is_cast(self, primal, tan):
        """torch casts a tangent of another precision to the primal's dtype (regression: was an error)."""
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.ones(2, dtype=primal), pf.full((2,), 0.5, dtype=tan))
            t = fwAD.unpack_dual(d * 3.0).tangent
            assert t.dtype == primal and np.allclose(t.numpy(), 1.5)

    def test_real_tangent_for_complex_primal_is_dtype_error(self):
        with fwAD.dual_level():
            with pytest.raises(RuntimeError, match="complex128"):
                fwAD.make_dual(pf.zeros(2, dtype=pf.complex128), pf.zeros(2))

    def test_non_tensor_arguments_error(self):
        with fwAD.dual_level():
            with pytest.raises(TypeError):
                fwAD.make_dual([1.0], pf.tensor([1.0]))
            with pytest.raises(TypeError):
                fwAD.make_dual(pf.tensor([1.0]), np.array([1.0]))

    def test_float32_tangent_kept(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.ones(3, dtype=pf.float32), pf.ones(3, dtype=pf.float32))
            y = d * 2.0
            assert y.dtype == pf.float32 and tangent(y).dtype == pf.float32

    def test_make_dual_shares_primal_memory_and_keeps_tangent_object(self):
        with fwAD.dual_level():
            x = pf.tensor([1.0, 2.0])
            v = pf.tensor([3.0, 4.0])
            d = fwAD.make_dual(x, v)
            assert np.shares_memory(d.numpy(), x.numpy())
            assert tangent(d) is v
            assert fwAD.unpack_dual(x).tangent is None  # x itself stays non-dual

    def test_input_without_tangent_is_zero(self):
        with fwAD.dual_level():
            x = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))
            y = pf.tensor([3.0, 5.0])
            close(tangent(x * y), [3.0, 5.0])
            close(tangent(y * x), [3.0, 5.0])
            close(tangent(pf.atan2(y, x)), -np.array([3.0, 5.0]) / (np.array([1.0, 4.0]) + [9.0, 25.0]))
            close(tangent(pf.where(pf.tensor([True, False]), x, y)), [1.0, 0.0])
            close(tangent(pf.cat([y, x])), [0.0, 0.0, 1.0, 1.0])

    def test_no_tangent_anywhere_means_no_tangent(self):
        with fwAD.dual_level():
            y = pf.tensor([3.0, 5.0]).sin() * 2
            assert tangent(y) is None

    def test_symbolic_zero_not_materialised(self, monkeypatch):
        """f(x_dual, y_plain) never builds a zero array for y's tangent."""
        import pushforward.core.creation as creation

        calls = []
        orig = np.zeros_like

        def spy(a, *args, **kw):
            calls.append(np.shape(a))
            return orig(a, *args, **kw)

        with fwAD.dual_level():
            x = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))
            y = pf.tensor([3.0, 5.0])
            big = pf.ones(1000)
            monkeypatch.setattr(np, "zeros_like", spy)
            monkeypatch.setattr(creation, "zeros_like", lambda *a, **k: calls.append("pf") or orig(*a, **k))
            r = x * y + y
            r2 = (x.unsqueeze(0) * big.unsqueeze(1)).sum()
            monkeypatch.undo()
            close(tangent(r), [3.0, 5.0])
            close(tangent(r2), 2000.0)
        assert not any(c == (1000,) or c == (1000, 1) or c == "pf" for c in calls), calls

    @pytest.mark.parametrize(
        "fn", [pf.floor, pf.ceil, pf.round, pf.trunc, pf.sign, lambda t: t > 0, lambda t: pf.argmax(t)]
    )
    def test_provably_zero_output_has_no_tangent(self, fn):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.5, -2.5]), pf.tensor([1.0, 1.0]))
            assert tangent(fn(d)) is None

    def test_max_dim_indices_have_no_tangent(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([[1.0, 3.0], [4.0, 2.0]]), pf.tensor([[10.0, 30.0], [40.0, 20.0]]))
            vals, idx = pf.max(d, dim=1)
            assert tangent(vals).tolist() == [30.0, 40.0]
            assert tangent(idx) is None

    def test_plain_tensor_never_gets_tangent_from_op(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]))
            y = pf.tensor([2.0])
            _ = d * y
            assert tangent(y) is None


# -- rule 7: mixing with reverse mode ------------------------------------------------------------


class TestReverseInterplay:
    def test_make_dual_differentiable_wrt_tangent(self):
        x = pf.tensor([0.5, 1.0])
        v = pf.tensor([3.0, 4.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, v)
            t = tangent(d.sin())
            (gv,) = pf.autograd.grad(t.sum(), v)
        close(gv, np.cos([0.5, 1.0]))

    def test_make_dual_differentiable_wrt_primal(self):
        x = pf.tensor([0.5, 1.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, pf.tensor([3.0, 4.0]))
            p = fwAD.unpack_dual(d.sin()).primal
            (gx,) = pf.autograd.grad(p.sum(), x)
        close(fwAD.unpack_dual(gx).primal if False else gx.detach(), np.cos([0.5, 1.0]))

    def test_make_dual_identity_grad(self):
        x = pf.tensor([0.5, 1.0], requires_grad=True)
        v = pf.tensor([3.0, 4.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, v)
            p, t = fwAD.unpack_dual(d)
            gx, gv = pf.autograd.grad((p * 2).sum() + (t * 3).sum(), (x, v))
        close(gx.detach(), [2.0, 2.0])
        close(gv, [3.0, 3.0])

    def test_reverse_over_forward(self):
        """grad of a jvp: d/dx [J_f(x) v] for f = sin(x) * x, i.e. (2cos x - x sin x) * v."""
        xv = np.array([0.3, 1.2])
        vv = np.array([1.0, -2.0])
        x = pf.tensor(xv, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, pf.tensor(vv))
            jvp = tangent(pf.sin(d) * d)
            close(jvp.detach(), (np.cos(xv) * xv + np.sin(xv)) * vv)
            assert jvp.requires_grad
            (g,) = pf.autograd.grad(jvp.sum(), x)
        close(g.detach(), (2 * np.cos(xv) - xv * np.sin(xv)) * vv)

    def test_reverse_over_forward_wrt_tangent_and_primal_backward(self):
        x = pf.tensor([0.3, 1.2], requires_grad=True)
        v = pf.tensor([1.0, -2.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, v)
            y = (d.exp() * d).sum()
            tangent(y).backward()
        xv = np.array([0.3, 1.2])
        close(v.grad, np.exp(xv) * (1 + xv))
        close(x.grad.detach(), np.exp(xv) * (2 + xv) * [1.0, -2.0])

    def test_forward_over_reverse_hvp(self):
        """The gradient of a dual input is dual; its tangent is the Hessian-vector product."""
        xv = np.array([1.0, 2.0, -0.5])
        vv = np.array([1.0, 0.5, 2.0])
        A = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 1.0]])
        x = pf.tensor(xv, requires_grad=True)
        with fwAD.dual_level():
            xd = fwAD.make_dual(x, pf.tensor(vv))
            f = (xd**3).sum() + 0.5 * (xd * (pf.tensor(A) @ xd)).sum() + pf.sin(xd).sum()
            (g,) = pf.autograd.grad(f, xd)
            gp, gt = fwAD.unpack_dual(g)
            assert gt is not None
            close(gp, 3 * xv**2 + A @ xv + np.cos(xv))
            H = np.diag(6 * xv - np.sin(xv)) + A
            close(gt, H @ vv)

    def test_forward_over_reverse_through_inplace_and_views(self):
        """hvp of a function using in-place ops on views, against central differences of the gradient."""
        xv = np.array([0.5, -1.0, 0.7])
        vv = np.array([1.0, 2.0, -1.0])

        def f(x):
            y = x * 1
            y.mul_(x)
            y[1:] += x[:2]
            return (y.sin() * y).sum()

        def grad_at(a):
            t = pf.tensor(a, requires_grad=True)
            return pf.autograd.grad(f(t), t)[0].numpy()

        x = pf.tensor(xv, requires_grad=True)
        with fwAD.dual_level():
            xd = fwAD.make_dual(x, pf.tensor(vv))
            (g,) = pf.autograd.grad(f(xd), xd)
            hv = tangent(g)
        eps = 1e-6
        num = (grad_at(xv + eps * vv) - grad_at(xv - eps * vv)) / (2 * eps)
        close(hv, num, tol=1e-6)

    def test_forward_over_reverse_via_backward(self):
        xv = np.array([0.4, -1.1])
        vv = np.array([2.0, 1.0])
        x = pf.tensor(xv, requires_grad=True)
        with fwAD.dual_level():
            xd = fwAD.make_dual(x, pf.tensor(vv))
            (pf.exp(xd) * xd).sum().backward()
            gt = fwAD.unpack_dual(x.grad).tangent
            assert gt is not None
            close(gt, np.exp(xv) * (2 + xv) * vv)

    def test_detach_drops_tape_and_tangent(self):
        x = pf.tensor([1.0, 2.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x * 1, pf.tensor([1.0, 1.0]))
            dd = d.detach()
            assert tangent(dd) is None
            assert not dd.requires_grad and dd.grad_fn is None
            assert np.shares_memory(dd.numpy(), d.detach().numpy())
            y = dd.sin()
            assert tangent(y) is None and not y.requires_grad
            # the original keeps both
            assert tangent(d) is not None and d.requires_grad

    def test_detach_of_view_drops_base_tangent(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.0, 2.0, 3.0]), pf.tensor([1.0, 1.0, 1.0]))
            v = d[1:]
            assert tangent(v) is not None
            assert tangent(v.detach()) is None

    def test_forward_and_reverse_jacobians_agree_with_detach(self):
        """f(x) = x * detach(x): both modes see d/dx = detach(x)."""
        xv = np.array([1.5, -2.0])
        x = pf.tensor(xv, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, pf.tensor([1.0, 0.0]))
            y = d * d.detach()
            fwd = tangent(y).detach().numpy()
        x2 = pf.tensor(xv, requires_grad=True)
        y2 = x2 * x2.detach()
        (row0,) = pf.autograd.grad(y2[0:1].sum(), x2)
        close(fwd, [xv[0], 0.0])
        close(row0, [xv[0], 0.0])


# -- rule 8: coverage ----------------------------------------------------------------------------


class _NoJvp(pf.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class TestCoverage:
    def test_function_without_jvp_raises_when_dual_reaches_it(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.0]), pf.tensor([1.0]))
            with pytest.raises(NotImplementedError) as ei:
                _NoJvp.apply(d)
            msg = str(ei.value)
            assert "forward-mode AD is not implemented for _NoJvp" in msg
            assert "jvp" in msg.split("_NoJvp", 1)[1]

    def test_function_without_jvp_fine_without_dual(self):
        assert _NoJvp.apply(pf.tensor([1.0])).tolist() == [2.0]
        with fwAD.dual_level():
            # a level is active but no dual reaches the function
            assert _NoJvp.apply(pf.tensor([1.0])).tolist() == [2.0]
        x = pf.tensor([1.0], requires_grad=True)
        _NoJvp.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0]

    def test_op_without_forward_formula(self):
        """A generated op whose forward formula is missing raises the exact message only for duals."""
        from pushforward.ops import generated as ops

        op = ops.SIN if hasattr(ops, "SIN") else None
        if op is None:
            pytest.skip("no SIN op object exposed")
        saved = (op.jvp, op.jvp_np)
        op.jvp = op.jvp_np = None
        try:
            assert pf.sin(pf.tensor([0.0])).tolist() == [0.0]
            with fwAD.dual_level():
                assert pf.sin(pf.tensor([0.0])).tolist() == [0.0]
                d = fwAD.make_dual(pf.tensor([0.0]), pf.tensor([1.0]))
                with pytest.raises(NotImplementedError, match="^forward-mode AD is not implemented for sin$"):
                    pf.sin(d)
        finally:
            op.jvp, op.jvp_np = saved

    def test_every_differentiable_op_has_forward_formula(self):
        from pushforward.ops import generated as ops
        from pushforward.dispatch.oprecord import Op

        missing = [
            o.name
            for o in vars(ops).values()
            if isinstance(o, Op) and o.differentiable and o.jvp is None and any(o.diff) and o.jvp_kind == "none"
        ]
        assert missing == []


# -- rule 9: grad mode ----------------------------------------------------------------------------


class TestGradMode:
    def test_no_grad_keeps_tangents(self):
        x = pf.tensor([0.5, 1.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, pf.tensor([1.0, 2.0]))
            with pf.no_grad():
                y = d.sin() * d
            assert not y.requires_grad and y.grad_fn is None
            close(tangent(y), (np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0])) * [1.0, 2.0])

    def test_no_grad_inplace_keeps_tangents(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))
            with pf.no_grad():
                d.mul_(3)
            close(tangent(d), [3.0, 3.0])

    def test_set_grad_enabled_false_keeps_tangents(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]))
            with pf.set_grad_enabled(False):
                y = d**2
            close(tangent(y), [4.0])


# -- rule 10: complex -----------------------------------------------------------------------------


def _numeric_jvp(f, z, v, eps=1e-7):
    return (f(z + eps * v) - f(z - eps * v)) / (2 * eps)


CPLX_FNS = {
    "exp": (pf.exp, np.exp),
    "abs": (pf.abs, np.abs),
    "conj": (pf.conj, np.conj),
    "mul_self_conj": (lambda t: t * t.conj(), lambda a: a * np.conj(a)),
    "sin": (pf.sin, np.sin),
    "real": (pf.real, np.real),
    "imag": (pf.imag, np.imag),
    "angle": (pf.angle, np.angle),
    "square": (pf.square, np.square),
}


class TestComplex:
    Z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 0.5 - 2.0j])

    @pytest.mark.parametrize("name", list(CPLX_FNS))
    @pytest.mark.parametrize("direction", ["real", "imag", "mixed"])
    def test_tangent_is_r_linear_jacobian(self, name, direction):
        f, fnp = CPLX_FNS[name]
        v = {
            "real": np.array([1.0, 0.5, -2.0]) + 0j,
            "imag": 1j * np.array([1.0, 0.5, -2.0]),
            "mixed": np.array([1.0 - 1j, 0.3 + 2j, -0.7 + 0.1j]),
        }[direction]
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor(self.Z), pf.tensor(v))
            t = tangent(f(d))
            expected = _numeric_jvp(lambda a: fnp(a), self.Z, v)
            assert t is not None
            close(t, expected, tol=1e-6)

    def test_abs_tangent_is_real(self):
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor(self.Z), pf.tensor(np.ones(3) * 1j))
            y = pf.abs(d)
            assert y.dtype == pf.float64 and tangent(y).dtype == pf.float64

    @needs_torch
    @pytest.mark.parametrize("name", ["exp", "abs", "conj", "sin", "mul_self_conj", "square", "angle", "real", "imag"])
    def test_backward_matches_torch_wirtinger(self, name):
        f, _ = CPLX_FNS[name]
        tf = {
            "exp": torch.exp,
            "abs": torch.abs,
            "conj": lambda t: torch.conj(t).resolve_conj(),
            "sin": torch.sin,
            "mul_self_conj": lambda t: t * t.conj(),
            "square": torch.square,
            "angle": torch.angle,
            "real": torch.real,
            "imag": torch.imag,
        }[name]
        rng = np.random.default_rng(0)
        x = pf.tensor(self.Z, requires_grad=True)
        xt = torch.tensor(self.Z, requires_grad=True)
        y = f(x)
        yt = tf(xt)
        if np.iscomplexobj(y.detach().numpy()):
            g = rng.standard_normal(3) + 1j * rng.standard_normal(3)
        else:
            g = rng.standard_normal(3)
        y.backward(pf.tensor(g))
        yt.backward(torch.tensor(g))
        close(x.grad, xt.grad.resolve_conj().numpy(), tol=1e-10)

    @needs_torch
    def test_complex_jvp_matches_torch(self):
        import torch.autograd.forward_ad as tfw

        v = np.array([1.0 - 1j, 0.3 + 2j, -0.7 + 0.1j])
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor(self.Z), pf.tensor(v))
            ours = tangent(pf.abs(pf.exp(d) * d.conj())).numpy()
        with tfw.dual_level():
            dt = tfw.make_dual(torch.tensor(self.Z), torch.tensor(v))
            theirs = tfw.unpack_dual(torch.abs(torch.exp(dt) * dt.conj())).tangent.numpy()
        close(ours, theirs)

    def test_real_to_complex_and_back(self):
        """f(x) = |exp(i x)|^2 = 1: tangent zero; g(x) = real(exp(i x)) = cos x."""
        with fwAD.dual_level():
            d = fwAD.make_dual(pf.tensor([0.3, 1.0]), pf.tensor([1.0, 1.0]))
            z = pf.exp(d * 1j)
            assert tangent(z).dtype == pf.complex128
            close(tangent(pf.real(z)), -np.sin([0.3, 1.0]))
            close(tangent(pf.abs(z) ** 2), [0.0, 0.0])


COMPLEX_UNARY = [
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "abs",
    "conj",
    "reciprocal",
    "square",
    "angle",
    "real",
    "imag",
    "rsqrt",
    "log1p",
    "expm1",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "neg",
    "sgn",
    "log2",
    "log10",
    "exp2",
    "sigmoid",
]


@needs_torch
@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary_both_modes_match_torch(name):
    import torch.autograd.forward_ad as tfw

    Z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 0.5 - 2.0j])
    V = np.array([1.0 - 1j, 0.3 + 2j, -0.7 + 0.1j])
    G = np.array([0.5 + 1j, -1 + 0.2j, 0.3 - 0.4j])
    pfn, tfn = getattr(pf, name), getattr(torch, name)
    x = pf.tensor(Z, requires_grad=True)
    y = pfn(x)
    xt = torch.tensor(Z, requires_grad=True)
    yt = tfn(xt).resolve_conj()
    g = G if yt.is_complex() else G.real
    assert y.dtype == yt.detach().numpy().dtype
    y.backward(pf.tensor(g))
    yt.backward(torch.tensor(g))
    close(x.grad, xt.grad.resolve_conj().numpy(), tol=1e-9)
    with fwAD.dual_level():
        t = tangent(pfn(fwAD.make_dual(pf.tensor(Z), pf.tensor(V))))
    with tfw.dual_level():
        tt = tfw.unpack_dual(tfn(tfw.make_dual(torch.tensor(Z), torch.tensor(V)))).tangent.resolve_conj().numpy()
    close(t, tt, tol=1e-9)


@needs_torch
@pytest.mark.parametrize("name", ["mul", "div", "pow", "sub", "add"])
def test_complex_binary_both_modes_match_torch(name):
    import operator
    import torch.autograd.forward_ad as tfw

    f = {"mul": operator.mul, "div": operator.truediv, "pow": operator.pow, "sub": operator.sub, "add": operator.add}[
        name
    ]
    Z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 0.5 - 2.0j])
    W = np.array([1.1 - 0.2j, 0.4 + 0.9j, -0.3 + 0.5j])
    V1 = np.array([1.0 - 1j, 0.3 + 2j, -0.7 + 0.1j])
    V2 = np.array([0.2 + 0.1j, -1j, 1.0])
    G = np.array([0.5 + 1j, -1 + 0.2j, 0.3 - 0.4j])
    x, w = pf.tensor(Z, requires_grad=True), pf.tensor(W, requires_grad=True)
    f(x, w).backward(pf.tensor(G))
    xt, wt = torch.tensor(Z, requires_grad=True), torch.tensor(W, requires_grad=True)
    f(xt, wt).backward(torch.tensor(G))
    close(x.grad, xt.grad.numpy(), tol=1e-9)
    close(w.grad, wt.grad.numpy(), tol=1e-9)
    with fwAD.dual_level():
        t = tangent(f(fwAD.make_dual(pf.tensor(Z), pf.tensor(V1)), fwAD.make_dual(pf.tensor(W), pf.tensor(V2))))
    with tfw.dual_level():
        tt = tfw.unpack_dual(
            f(tfw.make_dual(torch.tensor(Z), torch.tensor(V1)), tfw.make_dual(torch.tensor(W), torch.tensor(V2)))
        ).tangent.numpy()
    close(t, tt, tol=1e-9)


@pytest.mark.parametrize("e", [0.7, 1.4])
def test_complex_base_with_a_0d_real_exponent_tensor_against_finite_differences(e):
    """x ** e, x complex and e a 0-d float64 tensor, takes pow's constant-exponent form, singular
    between 0 and 1 (and e = 1.4 reaches it in forward-over-reverse through x ** (e - 1)): each
    conjugates x ** (e - 1). Finite differences decide (torch's jvp of complex ** real tensor is
    itself wrong)."""
    Z = np.array([0.66 - 0.99j, 1.2 + 0.3j])
    V = np.array([0.46 + 0.79j, -0.3 + 0.2j])
    G = np.array([0.3 - 0.8j, 1.0 + 0.5j])
    h = 1e-6

    def f(z):
        return z ** np.float64(e)

    def grad(z):
        x = pf.tensor(z, requires_grad=True)
        (g,) = pf.autograd.grad(x ** pf.tensor(e), x, pf.tensor(G))
        return g.numpy()

    with fwAD.dual_level():
        t = tangent(fwAD.make_dual(pf.tensor(Z), pf.tensor(V)) ** pf.tensor(e))
    close(t, (f(Z + h * V) - f(Z - h * V)) / (2 * h), tol=1e-7)

    def loss(z):
        return np.sum(np.real(np.conj(G) * f(z)))

    fd = [sum((loss(Z + h * u * d) - loss(Z - h * u * d)) / (2 * h) * u for u in (1, 1j)) for d in np.eye(2)]
    close(grad(Z), np.array(fd), tol=1e-7)
    # the gradient's tangent (forward-over-reverse, no create_graph), the case the fuzzer found
    with fwAD.dual_level():
        x = pf.tensor(Z, requires_grad=True)
        y = fwAD.make_dual(x, pf.tensor(V)) ** fwAD.make_dual(pf.tensor(e), pf.tensor(0.3))
        (g,) = pf.autograd.grad(y, x, pf.tensor(G))
        gt = tangent(g)

    def grad_e(z, ee):
        x = pf.tensor(z, requires_grad=True)
        (g,) = pf.autograd.grad(x ** pf.tensor(ee), x, pf.tensor(G))
        return g.numpy()

    close(gt, (grad_e(Z + h * V, e + h * 0.3) - grad_e(Z - h * V, e - h * 0.3)) / (2 * h), tol=1e-6)


def test_untracked_level_keeps_tangents_off_the_tape_but_through_backward():
    """functional.hvp's level: tangent formulas are not recorded (no reverse-over-forward), yet
    backward formulas still carry the tangents (forward-over-reverse gives H v)."""
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.untracked_level():
        xd = fwAD.make_dual(x, pf.tensor([1.0, 0.0]))
        y = (xd**3).sum()
        assert y.requires_grad and not tangent(y).requires_grad
        (g,) = pf.autograd.grad(y, xd)
        close(g, [3.0, 12.0])
        close(tangent(g), [6.0, 0.0])
    with fwAD.dual_level():  # a tracked level records them
        xd = fwAD.make_dual(x, pf.tensor([1.0, 0.0]))
        assert tangent((xd**3).sum()).requires_grad


def test_a_zero_tangent_takes_its_primal_layout():
    """A dual write into a tensor without a tangent at a level fills a zero tangent made in the
    primal's memory layout, so a view the primal allows works on the tangent (fuzzer: hfft over
    dim 0, mul_ under nested levels, swapaxes, view)."""
    base = pf.tensor(np.arange(8.0).reshape(2, 4)).t()  # (4, 2), column-major
    with fwAD.dual_level():
        plain = base * 1.0  # a fresh tensor in the transposed layout (NumPy keeps it, as torch)
        assert plain.stride() == base.stride() == (1, 4)
        plain.mul_(fwAD.make_dual(pf.ones(4, 2), pf.ones(4, 2)))
        t = fwAD.unpack_dual(plain).tangent
        assert t.stride() == plain.stride()
        assert fwAD.unpack_dual(plain.swapaxes(0, 1).view(8)).tangent.shape == (8,)


def test_make_dual_names_torchs_rules():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Trying to set a forward gradient that has a different size"):
            fwAD.make_dual(pf.rand(2), pf.rand(3))
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
            fwAD.make_dual(pf.ones(2), pf.ones(2, dtype=pf.int64))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(pf.ones(2, dtype=pf.int64), pf.ones(2))
        dual = fwAD.make_dual(pf.rand(2), pf.rand(2))
        with pytest.raises(RuntimeError, match="has a forward gradient at the same level"):
            fwAD.make_dual(pf.rand(2), dual)
        with fwAD.dual_level():  # a tangent dual at an outer level is fine (nesting)
            inner = fwAD.make_dual(pf.rand(2), dual)
            assert fwAD.unpack_dual(inner).tangent is dual


def test_set_fwd_grad_enabled_as_torch():
    x = pf.tensor(0.7)
    t = pf.ones_like(x)

    def f(x):
        with fwAD._set_fwd_grad_enabled(False):
            assert not fwAD._is_fwd_grad_enabled()
            shift = x**2  # computed without tangents: a constant
        return x**2 - shift

    assert fwAD._is_fwd_grad_enabled()
    assert pf.allclose(pf.func.jvp(f, (x,), (t,))[1], 2 * x)
    assert pf.allclose(pf.func.jvp(lambda x: pf.func.jvp(f, (x,), (t,))[1], (x,), (t,))[1], pf.tensor(2.0))
    with fwAD._set_fwd_grad_enabled(False):  # a transform inside works
        assert pf.allclose(pf.func.jvp(pf.sin, (x,), (t,))[1], x.cos())
    assert fwAD._is_fwd_grad_enabled()
    seen = []

    class Sq(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(fwAD._is_fwd_grad_enabled())  # off in forward, as torch's
            return x * x

        @staticmethod
        def jvp(ctx, t):
            return t * 0

    with fwAD.dual_level():
        Sq.apply(fwAD.make_dual(x, t))
    assert seen == [False]


@pytest.mark.parametrize(
    "gram, one_product",
    [
        (lambda x: x @ x.T, True),
        (lambda x: x.T @ x, True),
        (lambda x: pf.cov(x), True),
        (lambda x: np.cov(x), True),
        (lambda x: x[1:] @ x[:-1].T, False),  # (the same memory, not the same rows)
        (lambda x: x @ x.T.clone(), False),  # (a copy carries its own tangent array)
        (lambda x: x[:, :4] @ x[:, :4].T, True),
    ],
)
def test_a_gram_products_eager_tangent_is_one_product(gram, one_product, monkeypatch):
    """The jvp of `x @ x.T` is `t @ x.T + x @ t.T`, the second the first's transpose: eagerly one
    product and its transpose (gram_pair_np says when), with the values of finite differences; a
    product of two different matrices keeps both."""
    import pushforward.ops.generated as G

    seen = []
    test = G.gram_pair_np
    monkeypatch.setattr(G, "gram_pair_np", lambda *a: seen.append(test(*a)) or seen[-1])
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
    with fwAD.dual_level():
        got = fwAD.unpack_dual(gram(fwAD.make_dual(pf.tensor(x), pf.tensor(v)))).tangent
    assert seen == [one_product]
    eps = 1e-6
    want = (gram(pf.tensor(x + eps * v)).numpy() - gram(pf.tensor(x - eps * v)).numpy()) / (2 * eps)
    close(got, want, 1e-6)


@pytest.mark.parametrize("op", ["amax", "amin"])
def test_an_extremums_tangent_over_arrays_shares_ties_in_its_dtype(op):
    """amax/amin have an array formula (the arrays case, no Tensor ops): tied extrema share the
    tangent evenly, and a float32 tangent stays float32 (NumPy's int64 count would promote it)."""
    from pushforward.ops.generated import AMAX, AMIN

    assert (AMAX if op == "amax" else AMIN).jvp_np is not None
    x = np.array([[[1.0, 3.0], [3.0, 0.0]], [[2.0, 2.0], [-1.0, 2.0]]], dtype=np.float32)
    x = x if op == "amax" else -x
    v = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    with fwAD.dual_level():
        out = getattr(pf, op)(fwAD.make_dual(pf.tensor(x), pf.tensor(v)), (1, 2))
        t = fwAD.unpack_dual(out).tangent
    assert t.dtype == pf.float32
    close(t, np.array([(1 + 2) / 2, (4 + 5 + 7) / 3], dtype=np.float32))


@pytest.mark.parametrize("n", [3, 40])
def test_an_outer_products_tangent_with_both_factors_dual_is_one_rank_two_product(n):
    """outer(u, v) with u and v dual: the tangent outer(tu, v) + outer(u, tv), computed as one
    (n, 2) @ (2, n) product above a size (outer_pair_np), the two outers below it, the same values."""
    from pushforward.ops.formulas.common import outer_pair_np

    rng = np.random.default_rng(0)
    u, v, tu, tv = (rng.standard_normal(n) for _ in range(4))
    want = np.multiply.outer(tu, v) + np.multiply.outer(u, tv)
    close(outer_pair_np(tu, v, u, tv), want, 1e-12)
    with fwAD.dual_level():
        out = pf.outer(fwAD.make_dual(pf.tensor(u), pf.tensor(tu)), fwAD.make_dual(pf.tensor(v), pf.tensor(tv)))
        close(fwAD.unpack_dual(out).tangent, want, 1e-12)
