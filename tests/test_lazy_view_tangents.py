"""A view of a dual tensor made by the fast view path keeps no tangent of its own: it reads its
holder's through its array steps (docs/design.md, "Lazy view tangents"). Its values, tangents,
versions and lens laws are those of the general path (the reference: the view and write fast
paths turned off, so that every view gets its own tangent at creation)."""

from __future__ import annotations


import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD

from helpers import cholesky_in_place, durbin, fast_paths_off, lu_rows


@pytest.fixture(autouse=True)
def _no_level(no_level):
    yield


def _both_paths(program, monkeypatch):
    """program() by the fast paths, then by the general path."""
    got = program()
    with fast_paths_off(monkeypatch):
        return got, program()


def _dual(shape, seed=0):
    rng = np.random.default_rng(seed)
    p = pf.tensor(rng.standard_normal(shape) + 3.0)
    return fwAD.make_dual(p, pf.tensor(rng.standard_normal(shape)))


def _seidel(a):
    n = a.shape[0]
    for i in range(1, n - 1):
        a[i, 1:-1] += a[i - 1, :-2] + a[i - 1, 1:-1] + a[i + 1, 2:]
        for j in range(1, n - 1):
            a[i, j] += a[i, j - 1]
            a[i, j] /= 9.0
    return a


def _lu(a):
    return lu_rows(np, a)


def _cholesky(a):
    return cholesky_in_place(np, a)


def _durbin(r):
    return durbin(np, r)


def _views_of_views(a):
    row = a[2]
    row[1:3] *= 2.0  # (through a view of a view)
    b = a[1:, 1:]
    b[0][1] = b[1, 2] + row[0]
    c = b[1:].transpose(0, 1)[1]
    c += a[0, :4]
    a[0, 0] = c[1] * b[2, 0]
    return a


def _run(program, shape, seed=0):
    with fwAD.dual_level():
        d = _dual(shape, seed)
        if program is _durbin:
            d = d[0] * 0.1
        out = program(d)
        p, t = fwAD.unpack_dual(out)
        return p.numpy().copy(), t.numpy().copy(), out._version


@pytest.mark.parametrize("program", [_seidel, _lu, _cholesky, _durbin, _views_of_views])
def test_loop_programs_are_the_general_paths(program, monkeypatch):
    shape = (6, 6) if program is not _cholesky else (5, 5)
    if program is _cholesky:

        def program(a, _p=program):  # (a symmetric positive definite matrix, dual)
            return _p(a @ a.mT + 5.0 * pf.eye(5))

    got = _run(program, shape)
    with fast_paths_off(monkeypatch):
        ref = _run(program, shape)
        with fwAD.dual_level():
            assert _dual((2,))[0]._fw is not None  # (the reference: a tangent made with the view)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-12)


def test_an_element_read_makes_no_tangent_of_its_own():
    with fwAD.dual_level():
        d = _dual((3, 4))
        t = fwAD.unpack_dual(d).tangent
        v = d[1, 2]
        assert v._fw is None and v._vsrc[0] is d
        w = v[...]  # (a view of the lazy view: the same holder)
        assert w._fw is None and w._vsrc[0] is d
        got = fwAD.unpack_dual(w).tangent
        assert np.shares_memory(got.numpy(), t.numpy()) and got.item() == t[1, 2].item()


def test_a_write_into_the_holder_after_the_read_is_seen():
    with fwAD.dual_level():
        d = _dual((3, 4))
        t = fwAD.unpack_dual(d).tangent.numpy().copy()
        v = d[1, 1:3]
        d.mul_(2.0)  # (in place: the holder's tangent doubles)
        d[1, 2] = fwAD.make_dual(pf.tensor(5.0), pf.tensor(7.0))
        want = 2.0 * t[1, 1:3]
        want[1] = 7.0
        np.testing.assert_allclose(fwAD.unpack_dual(v).tangent.numpy(), want)
        np.testing.assert_allclose(fwAD.unpack_dual(v + 0.0).tangent.numpy(), want)


def test_a_write_through_the_view_lands_in_the_holders_tangent():
    with fwAD.dual_level():
        d = _dual((3, 4))
        t0 = fwAD.unpack_dual(d).tangent.numpy().copy()
        v = d[2, :]
        w = d[0, :]
        version = fwAD.unpack_dual(d).tangent._version
        v += w  # (the arrays path: the region of the holder's tangent)
        v[1] = 0.0  # (the write fast path: a zero tangent there)
        want = t0.copy()
        want[2] += t0[0]
        want[2, 1] = 0.0
        tan = fwAD.unpack_dual(d).tangent
        np.testing.assert_allclose(tan.numpy(), want)
        assert tan._version == version + 2
        # the tangent handed out for the view is a linked view of the holder's: a write into it lands
        fwAD.unpack_dual(v).tangent.mul_(3.0)
        want[2] *= 3.0
        np.testing.assert_allclose(tan.numpy(), want)


def test_two_duals_over_one_primal_keep_their_tangents():
    """Lens laws: a view reads its holder's tangent, not the root's nor another dual's."""
    with fwAD.dual_level():
        p = pf.tensor([1.0, 2.0, 3.0])
        d1 = fwAD.make_dual(p, pf.tensor([10.0, 20.0, 30.0]))
        d2 = fwAD.make_dual(p, pf.tensor([100.0, 200.0, 300.0]))
        i = 0
        v1, v2 = d1[i], d2[1:]
        assert fwAD.unpack_dual(v1).tangent.item() == 10.0
        d2[i] = v1  # (value's region is the written one, but its tangent is d1's)
        np.testing.assert_array_equal(fwAD.unpack_dual(d2).tangent.numpy(), [10.0, 200.0, 300.0])
        np.testing.assert_array_equal(fwAD.unpack_dual(d1).tangent.numpy(), [10.0, 20.0, 30.0])
        v2 *= 2.0
        np.testing.assert_array_equal(fwAD.unpack_dual(d2).tangent.numpy(), [10.0, 400.0, 600.0])
        np.testing.assert_array_equal(fwAD.unpack_dual(d1).tangent.numpy(), [10.0, 20.0, 30.0])


def test_an_augmented_element_write_is_the_general_paths(monkeypatch):
    def program():
        with fwAD.dual_level():
            d = _dual((4, 4), 3)
            for j in range(1, 4):
                d[2, j] += d[2, j - 1]
                d[2, j] /= 9.0
                d[j, 1] *= d[0, j]
            p, t = fwAD.unpack_dual(d)
            return p.numpy().copy(), t.numpy().copy(), d._version, t._version

    got, ref = _both_paths(program, monkeypatch)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-14)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-14)
    assert got[2:] == ref[2:]


def test_nested_levels_read_each_levels_tangent(monkeypatch):
    def program():
        with fwAD.dual_level():
            d = _dual((3, 3), 1)
            v = d[1, :]  # (made at one level: lazy)
            with fwAD.dual_level():
                inner = fwAD.make_dual(pf.tensor([1.0, 2.0, 3.0]), pf.tensor([0.5, 0.25, 2.0]))
                w = d[2, :]  # (made with two levels live, one tangent: lazy too)
                r = v * inner + w.sin()
                rp, rt = fwAD.unpack_dual(r)
                d[0, :] = r  # (d gets a tangent at the inner level, its root's zero one first)
                dt_inner = fwAD.unpack_dual(v + d[0, :]).tangent.numpy().copy()
            outer = fwAD.unpack_dual(rp).tangent.numpy().copy()
            return rt.numpy().copy(), outer, dt_inner, fwAD.unpack_dual(d).tangent.numpy().copy()

    for g, r in zip(*_both_paths(program, monkeypatch)):
        np.testing.assert_allclose(g, r, rtol=1e-14)


def test_a_view_taken_when_an_inner_level_gives_the_holder_a_tangent():
    with fwAD.dual_level():
        d = _dual((2, 3), 2)
        v = d[0]
        t_out = fwAD.unpack_dual(d).tangent.numpy().copy()
        with fwAD.dual_level():
            d[1] = fwAD.make_dual(pf.tensor([1.0, 2.0, 3.0]), pf.tensor([4.0, 5.0, 6.0]))
            # v sees the inner tangent its root got (zero in its row), and the outer one
            assert fwAD.unpack_dual(v).tangent.numpy().tolist() == [0.0, 0.0, 0.0]
            assert len(list(pf.engine.tangents.levels_of(v))) == 2
        np.testing.assert_allclose(fwAD.unpack_dual(v).tangent.numpy(), t_out[0])
        assert len(list(pf.engine.tangents.levels_of(v))) == 1
    assert not pf.engine.tangents.levels_of(v)


def test_the_level_exit_leaves_the_view_without_a_tangent():
    with fwAD.dual_level():
        d = _dual((3,))
        v = d[1:]
    with fwAD.dual_level():
        assert fwAD.unpack_dual(v).tangent is None
        assert fwAD.unpack_dual(v * 2.0).tangent is None


def test_the_unpacked_primal_of_a_lazy_view_has_no_tangent():
    with fwAD.dual_level():
        d = _dual((3, 4))
        p, t = fwAD.unpack_dual(d[1:, 2])
        assert t is not None and fwAD.unpack_dual(p).tangent is None
        assert fwAD.unpack_dual(p[0] * 2.0).tangent is None


def test_a_lazy_view_that_comes_to_require_grad_has_both_derivatives(monkeypatch):
    """A differentiable write into the root makes its views require grad (torch's rule): then
    the view's formulas see a primal without the tangent (the combined case)."""

    def program():
        w = pf.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with fwAD.dual_level():
            d = _dual((2, 3), 4)
            v = d[1]
            d[0] = w * 3.0
            assert v.requires_grad
            y = (v * d[0]).sum() + (v.sin() * w).sum()
            g = pf.autograd.grad(y, w)[0]
            return fwAD.unpack_dual(y).tangent.item(), fwAD.unpack_dual(g).tangent.numpy().copy()

    got, ref = _both_paths(program, monkeypatch)
    assert got[0] == pytest.approx(ref[0], rel=1e-14)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-14)


def test_a_lazy_view_next_to_a_tensor_requiring_grad_is_seen_without_its_tangent(monkeypatch):
    """The combined case with a lazy view as the plain input: its primal in the tangent formula
    carries no tangent (perturbation confusion otherwise)."""

    def program():
        w = pf.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with fwAD.dual_level():
            d = _dual((2, 3), 5)
            y = pf.where(d[1] > 0, w * d[1], d[0] * d[1]).sum()
            g = pf.autograd.grad(y, w)[0]
            return fwAD.unpack_dual(y).tangent.item(), fwAD.unpack_dual(g).tangent.numpy().copy()

    got, ref = _both_paths(program, monkeypatch)
    assert got[0] == pytest.approx(ref[0], rel=1e-14)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-14)


def test_a_view_op_of_a_lazy_view_without_an_index_is_lazy_too():
    with fwAD.dual_level():
        d = _dual((3, 4))
        t = fwAD.unpack_dual(d).tangent.numpy()
        v = d[1:].transpose(0, 1).diagonal()
        assert v._fw is None and v._vsrc[0] is d
        np.testing.assert_array_equal(fwAD.unpack_dual(v).tangent.numpy(), np.diagonal(t[1:].T))
        f = d.view(12)  # (`view` takes a tangent of its own: its strides may not fit the tangent's)
        assert f._fw is not None


@pytest.mark.parametrize("dims", [(0,), (-1,), 0])
def test_flip_of_a_row_is_the_layout_kernels(dims):
    """A 1-d flip (durbin's np.flip(r[:k])) takes a reversed copy: the values, layout and own memory
    of the general kernel's copy in the input's layout."""
    from pushforward.core.backend import copy_in_layout_of
    from pushforward.kernels import basic as K

    base = np.arange(12.0)
    for a in (base, base[1:9:2], base[::-1], base[3:4]):
        got = K.flip(a, dims)
        ref = copy_in_layout_of(np.flip(a, 0), a)
        np.testing.assert_array_equal(got, ref)
        assert (got.strides == ref.strides or a.size < 2) and not np.shares_memory(got, a)
    with fwAD.dual_level():
        d = _dual((6,))
        p, t = fwAD.unpack_dual(np.flip(d[1:5]))
        np.testing.assert_array_equal(t.numpy(), fwAD.unpack_dual(d).tangent.numpy()[1:5][::-1])
        np.testing.assert_array_equal(p.numpy(), fwAD.unpack_dual(d).primal.numpy()[1:5][::-1])
