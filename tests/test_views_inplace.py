"""Forward AD with views and in-place ops (docs/design.md, "Views", "In-place", "Lens laws"), plus view/version basics in reverse mode."""

import zlib

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.engine.state import STATE
from helpers import INPLACE, close, needs_torch, tangent


def shares(a, b) -> bool:
    return np.shares_memory(a.numpy(), b.numpy())


@pytest.fixture(autouse=True)
def _level():
    while STATE.levels:
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        yield
    assert not STATE.levels


def dual(shape=(3, 4)):
    n = int(np.prod(shape))
    p = pf.arange(n, dtype=pf.float64).reshape(*shape).clone()
    t = (pf.arange(n, dtype=pf.float64) * 10 + 100).reshape(*shape).clone()
    return fwAD.make_dual(p, t), p.numpy().copy(), t.numpy().copy()


# -- rule 4: views -------------------------------------------------------------------------------

VIEWS = {
    "slice": (lambda t: t[1:, ::2], lambda a: a[1:, ::2]),
    "row": (lambda t: t[1], lambda a: a[1]),
    "ellipsis_newaxis": (lambda t: t[None, ..., 1:3], lambda a: a[None, ..., 1:3]),
    "view": (lambda t: t.view(4, 3), lambda a: a.reshape(4, 3)),
    "view_flat": (lambda t: t.view(-1), lambda a: a.reshape(-1)),
    "reshape": (lambda t: t.reshape(2, 6), lambda a: a.reshape(2, 6)),
    "transpose": (lambda t: t.transpose(0, 1), lambda a: a.T),
    "t": (lambda t: t.t(), lambda a: a.T),
    "permute": (lambda t: t.permute(1, 0), lambda a: a.T),
    "narrow": (lambda t: t.narrow(1, 1, 2), lambda a: a[:, 1:3]),
    "select": (lambda t: t.select(1, 2), lambda a: a[:, 2]),
    "diagonal": (lambda t: t.diagonal(), lambda a: np.diagonal(a)),
    "diagonal_offset": (lambda t: t.diagonal(1), lambda a: np.diagonal(a, 1)),
    "unbind": (lambda t: t.unbind(0)[2], lambda a: a[2]),
    "unbind_dim1": (lambda t: t.unbind(1)[3], lambda a: a[:, 3]),
    "split": (lambda t: t.split(2, dim=1)[1], lambda a: a[:, 2:4]),
    "chunk": (lambda t: t.chunk(3, dim=0)[1], lambda a: a[1:2]),
    "unsqueeze": (lambda t: t.unsqueeze(0), lambda a: a[None]),
    "flatten": (lambda t: t.flatten(), lambda a: a.reshape(-1)),
    "view_of_view": (lambda t: t[1:].transpose(0, 1)[::2], lambda a: a[1:].T[::2]),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_tangent_is_same_view_of_base_tangent(name):
    f, fnp = VIEWS[name]
    d, p, t = dual()
    v = f(d)
    close(v, fnp(p))
    vt = tangent(v)
    assert vt is not None
    close(vt, fnp(t))
    assert shares(vt, tangent(d)), "view's tangent must share memory with the base's tangent"
    assert shares(v, d)


@pytest.mark.parametrize("name", ["row", "select", "unbind"])
def test_view_tangent_0d(name):
    """Views down to a single element (x[i] on a 1-D tensor) are views too."""
    d = fwAD.make_dual(pf.tensor([1.0, 2.0, 3.0]), pf.tensor([10.0, 20.0, 30.0]))
    v = {"row": lambda t: t[1], "select": lambda t: t.select(0, 1), "unbind": lambda t: t.unbind(0)[1]}[name](d)
    assert v.item() == 2.0
    assert tangent(v).item() == 20.0
    assert shares(v, d)
    assert shares(tangent(v), tangent(d))


def test_view_created_before_make_dual_finds_base_tangent():
    """A view without its own tangent looks up its base's (here the dual's memory root)."""
    d, _, t = dual()
    v1 = d[0]
    v2 = d[0]
    tangent(d).mul_(2)  # an update of the base's tangent is seen by views through the lookup
    close(tangent(v1), 2 * t[0])
    close(tangent(v2), 2 * t[0])


def test_view_of_base_made_dual_later():
    base = pf.zeros(4)
    v = base[1:3]
    assert tangent(v) is None
    out = pf.zeros(4)
    out[1:3] = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([5.0, 6.0]))
    w = out[1:3]
    close(tangent(w), [5.0, 6.0])
    # a view taken before the base became dual sees its tangent too
    out2 = pf.zeros(4)
    early = out2[2:]
    out2[:2] = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([5.0, 6.0]))
    close(tangent(early), [0.0, 0.0])
    close(tangent(out2), [5.0, 6.0, 0.0, 0.0])


def test_view_ops_on_view_of_dual_propagate():
    d, p, t = dual()
    y = (d[1:] * 2).sum()
    close(tangent(y), 2 * t[1:].sum())


def test_expand_tangent():
    d = fwAD.make_dual(pf.tensor([[1.0], [2.0]]), pf.tensor([[3.0], [4.0]]))
    e = d.expand(2, 3)
    close(tangent(e), [[3.0] * 3, [4.0] * 3])


def test_reshape_copy_case_has_tangent_without_sharing():
    d, p, t = dual()
    r = d.t().reshape(12)  # not expressible as a view: a copy
    close(r, p.T.reshape(12))
    close(tangent(r), t.T.reshape(12))


def test_advanced_index_is_copy_with_tangent():
    d, p, t = dual()
    c = d[[0, 2]]
    close(tangent(c), t[[0, 2]])
    assert not shares(c, d)
    mask = d > 5
    m = d[mask]
    close(tangent(m), t[p > 5])


def test_unpacked_primal_of_view_has_no_tangent():
    d, p, t = dual()
    v = d[1:]
    pv, tv = fwAD.unpack_dual(v)
    assert tangent(pv) is None
    assert shares(pv, d)
    close(tv, t[1:])


# -- rule 5: in-place ----------------------------------------------------------------------------


def test_inplace_updates_tangent_in_place():
    d, p, t = dual((4,))
    tan = tangent(d)
    d.mul_(2)
    assert tangent(d) is tan, "the tangent object itself must be updated"
    close(tan, 2 * t)
    close(d, 2 * p)


def test_inplace_seen_by_previous_view_tangent():
    d, p, t = dual((4,))
    v = d[1:3]
    vt = tangent(v)
    d.mul_(2)
    close(vt, 2 * t[1:3])
    close(tangent(v), 2 * t[1:3])
    close(v, 2 * p[1:3])


def test_inplace_on_view_updates_base_tangent():
    d, p, t = dual((4,))
    v = d[1:3]
    v.mul_(3)
    exp = t.copy()
    exp[1:3] *= 3
    close(tangent(d), exp)
    close(tangent(v), exp[1:3])


def test_inplace_on_view_via_augmented_operator():
    d, p, t = dual((2, 3))
    row = d[0]
    row += fwAD.make_dual(pf.ones(3), pf.full((3,), 7.0))
    exp = t.copy()
    exp[0] += 7
    close(tangent(d), exp)


def test_inplace_add_plain_keeps_tangent():
    d, p, t = dual((3,))
    d.add_(pf.tensor([1.0, 2.0, 3.0]))
    close(tangent(d), t)
    close(d, p + [1, 2, 3])


def test_inplace_plain_target_dual_value_makes_target_dual():
    x = pf.tensor([1.0, 2.0])
    x.add_(fwAD.make_dual(pf.tensor([1.0, 1.0]), pf.tensor([3.0, 4.0])))
    close(tangent(x), [3.0, 4.0])
    close(x, [2.0, 3.0])


def test_zero_and_fill_clear_tangent():
    d, _, _ = dual((3,))
    d.zero_()
    close(tangent(d), [0.0, 0.0, 0.0])
    d2, _, _ = dual((3,))
    d2.fill_(5.0)
    close(tangent(d2), [0.0, 0.0, 0.0])


def test_copy_plain_into_dual_zeroes_tangent():
    d, _, _ = dual((3,))
    d.copy_(pf.tensor([7.0, 8.0, 9.0]))
    close(d, [7.0, 8.0, 9.0])
    close(tangent(d), [0.0, 0.0, 0.0])


def test_copy_dual_into_dual():
    d, _, _ = dual((3,))
    d.copy_(fwAD.make_dual(pf.tensor([7.0, 8.0, 9.0]), pf.tensor([1.0, 2.0, 3.0])))
    close(tangent(d), [1.0, 2.0, 3.0])


def test_setitem_dual_into_plain_0d_index():
    out = pf.zeros(5)
    out[2] = fwAD.make_dual(pf.tensor(7.0), pf.tensor(3.0))
    close(out, [0, 0, 7, 0, 0])
    assert tangent(out) is not None
    close(tangent(out), [0, 0, 3, 0, 0])


def test_setitem_dual_into_plain_slice():
    out = pf.zeros(5)
    out[1:3] = fwAD.make_dual(pf.tensor([7.0, 8.0]), pf.tensor([3.0, 4.0]))
    close(out, [0, 7, 8, 0, 0])
    close(tangent(out), [0, 3, 4, 0, 0])


def test_setitem_dual_row_into_plain_matrix():
    out = pf.zeros(3, 2)
    out[1] = fwAD.make_dual(pf.tensor([7.0, 8.0]), pf.tensor([3.0, 4.0]))
    close(tangent(out), [[0, 0], [3, 4], [0, 0]])


def test_setitem_dual_through_view_of_plain_base():
    base = pf.zeros(2, 3)
    view = base[1]
    view[0:2] = fwAD.make_dual(pf.tensor([7.0, 8.0]), pf.tensor([3.0, 4.0]))
    close(base, [[0, 0, 0], [7, 8, 0]])
    close(tangent(base), [[0, 0, 0], [3, 4, 0]])
    close(tangent(view), [3, 4, 0])


def test_setitem_dual_advanced_index():
    out = pf.zeros(5)
    out[[1, 3]] = fwAD.make_dual(pf.tensor([7.0, 8.0]), pf.tensor([3.0, 4.0]))
    close(out, [0, 7, 0, 8, 0])
    close(tangent(out), [0, 3, 0, 4, 0])


def test_setitem_dual_bool_mask():
    out = pf.zeros(4)
    mask = pf.tensor([True, False, True, False])
    out[mask] = fwAD.make_dual(pf.tensor([7.0, 8.0]), pf.tensor([3.0, 4.0]))
    close(tangent(out), [3, 0, 4, 0])


def test_setitem_plain_into_dual_zeroes_region():
    d, p, t = dual((4,))
    d[1:3] = pf.tensor([0.5, 0.5])
    exp = t.copy()
    exp[1:3] = 0
    close(tangent(d), exp)


def test_setitem_scalar_into_dual():
    d, p, t = dual((4,))
    d[0:1] = 3.0
    exp = t.copy()
    exp[0] = 0
    close(tangent(d), exp)


def test_mul_by_dual_uses_old_self():
    a = fwAD.make_dual(pf.tensor([2.0, -1.0]), pf.tensor([1.0, 2.0]))
    b = fwAD.make_dual(pf.tensor([3.0, 4.0]), pf.tensor([5.0, -1.0]))
    a.mul_(b)
    close(a, [6.0, -4.0])
    close(tangent(a), [1 * 3 + 2 * 5, 2 * 4 + (-1) * (-1)])


def test_mul_self_by_self():
    a = fwAD.make_dual(pf.tensor([2.0, 3.0]), pf.tensor([1.0, 1.0]))
    a.mul_(a)
    close(a, [4.0, 9.0])
    close(tangent(a), [4.0, 6.0])


def test_pow_inplace_uses_old_self():
    a = fwAD.make_dual(pf.tensor([2.0, 3.0]), pf.tensor([1.0, 0.5]))
    a.pow_(3)
    close(a, [8.0, 27.0])
    close(tangent(a), [3 * 4 * 1.0, 3 * 9 * 0.5])


def test_pow_inplace_dual_exponent():
    a = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]))
    e = fwAD.make_dual(pf.tensor([3.0]), pf.tensor([2.0]))
    a.pow_(e)
    # d(a^e) = e a^(e-1) da + a^e ln a de
    close(tangent(a), [3 * 4 * 1.0 + 8 * np.log(2) * 2.0])


def test_pow_self_self():
    a = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]))
    a.pow_(a)
    close(tangent(a), [4 * (np.log(2) + 1)])


def test_div_inplace_by_dual():
    a = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]))
    b = fwAD.make_dual(pf.tensor([4.0]), pf.tensor([1.0]))
    a.div_(b)
    close(a, [0.5])
    close(tangent(a), [(1 * 4 - 2 * 1) / 16])


def test_div_self_by_self():
    a = fwAD.make_dual(pf.tensor([2.0]), pf.tensor([1.0]))
    a.div_(a)
    close(tangent(a), [0.0])


def test_div_plain_by_dual_inplace():
    a = pf.tensor([2.0])
    b = fwAD.make_dual(pf.tensor([4.0]), pf.tensor([1.0]))
    a.div_(b)
    close(tangent(a), [-2.0 / 16])


def test_sub_inplace_on_view_uses_old_values():
    d = fwAD.make_dual(pf.tensor([1.0, 2.0, 3.0]), pf.tensor([1.0, 1.0, 1.0]))
    v = d[1:]
    v.mul_(d[:2])  # overlapping views: v = [2*1, 3*2]; old values must be used
    close(d, [1.0, 2.0, 6.0])
    # t: [1, 1*1+2*1, 1*2+3*1]
    close(tangent(d), [1.0, 3.0, 5.0])


def test_clamp_inplace_tangent():
    d = fwAD.make_dual(pf.tensor([-1.0, 0.5, 2.0]), pf.tensor([1.0, 1.0, 1.0]))
    d.clamp_(0.0, 1.0)
    close(d, [0.0, 0.5, 1.0])
    close(tangent(d), [0.0, 1.0, 0.0])


def test_masked_fill_inplace_tangent():
    d = fwAD.make_dual(pf.tensor([1.0, 2.0, 3.0]), pf.tensor([4.0, 5.0, 6.0]))
    d.masked_fill_(pf.tensor([False, True, False]), 0.0)
    close(tangent(d), [4.0, 0.0, 6.0])


def test_inplace_on_unpacked_primal_keeps_dual_tangent():
    d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0]))
    p, t = fwAD.unpack_dual(d)
    p.mul_(2)
    close(d, [2.0, 4.0])  # shared primal memory
    close(tangent(d), [3.0, 4.0])  # p had no tangent: d's tangent untouched
    assert tangent(p) is None


def test_inplace_on_primal_base_after_make_dual():
    """make_dual's result is a view of the primal; an in-place on the plain primal changes the dual's value."""
    x = pf.tensor([1.0, 2.0])
    d = fwAD.make_dual(x, pf.tensor([3.0, 4.0]))
    x.add_(1)
    close(d, [2.0, 3.0])
    close(tangent(d), [3.0, 4.0])


# -- rule 6: lens laws -----------------------------------------------------------------------------


def _rfc_example(index):
    """RFC-0007 appendix "views can have different perturbations", step by step."""
    x = pf.zeros(100)
    x2 = x[index]
    t_y = pf.ones_like(x2) * 2.0
    t_z = pf.ones_like(x2) * 3.0
    y = fwAD.make_dual(x2, t_y)
    z = fwAD.make_dual(x2, t_z)
    # y and z alias the same primal but keep separate tangents
    assert shares(y, z) and shares(y, x)
    close(tangent(y), 2.0)
    close(tangent(z), 3.0)
    assert not shares(tangent(y), tangent(z))
    dual = fwAD.make_dual(pf.ones_like(x2) * 5.0, pf.ones_like(x2) * 7.0)
    y.add_(dual)
    # 1-2: y_new = y + dual; make_dual_putback: primal into x2, tangent into t_y
    close(y, 5.0)
    close(tangent(y), 9.0)
    close(t_y, 9.0)  # y's tangent is updated in place
    # 3: index putback: x sees the new primal
    close(x2, 5.0)
    assert x.numpy()[2] == 5.0 and x.numpy().sum() == 5.0 * x2.numel()
    # the tangent of x / x2 is NOT updated: the tangent of dual only modifies t_y
    assert tangent(x) is None
    assert tangent(x2) is None
    # 4: make_dual_get downstream: z sees the new primal, with its own unchanged tangent
    close(z, 5.0)
    close(tangent(z), 3.0)
    close(t_z, 3.0)


def test_lens_rfc_example_exact():
    _rfc_example(2)


def test_lens_rfc_example_slice():
    _rfc_example(slice(2, 3))


def test_two_duals_over_view_mul_only_own_tangent():
    base = pf.tensor([1.0, 2.0, 3.0])
    pv = base[1:]
    d1 = fwAD.make_dual(pv, pf.tensor([10.0, 20.0]))
    d2 = fwAD.make_dual(pv, pf.tensor([100.0, 200.0]))
    d1.mul_(2)
    close(base, [1.0, 4.0, 6.0])
    close(d2, [4.0, 6.0])
    close(tangent(d1), [20.0, 40.0])
    close(tangent(d2), [100.0, 200.0])
    assert tangent(base) is None


def test_two_duals_then_op_uses_own_tangent():
    x = pf.tensor([1.0, 2.0])
    a = fwAD.make_dual(x, pf.tensor([1.0, 0.0]))
    b = fwAD.make_dual(x, pf.tensor([0.0, 1.0]))
    close(tangent(a * 3), [3.0, 0.0])
    close(tangent(b * 3), [0.0, 3.0])
    # views of each dual follow their own tangent
    close(tangent(a[1:]), [0.0])
    close(tangent(b[1:]), [1.0])


def test_make_dual_get_put_law():
    """get(put(s, v)) = v: unpacking a freshly made dual gives back the tangent and the primal values."""
    x = pf.tensor([1.0, 2.0])
    t = pf.tensor([3.0, 4.0])
    p2, t2 = fwAD.unpack_dual(fwAD.make_dual(x, t))
    assert t2 is t
    close(p2, x)
    assert shares(p2, x)


def test_make_dual_put_get_law():
    """put(s, get(s)) = s: re-making a dual from an unpacked one keeps primal memory and tangent."""
    d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0]))
    p, t = fwAD.unpack_dual(d)
    d2 = fwAD.make_dual(p, t)
    assert shares(d2, d)
    assert tangent(d2) is t


def test_inplace_on_dual_over_plain_view_does_not_give_base_a_tangent():
    base = pf.zeros(4)
    d = fwAD.make_dual(base[1:3], pf.tensor([1.0, 1.0]))
    d.mul_(fwAD.make_dual(pf.tensor([2.0, 2.0]), pf.tensor([1.0, 1.0])))
    assert tangent(base) is None
    close(tangent(d), [2.0, 2.0])


# -- views and versions (no level needed, but harmless) ---------------------------------------------


def test_inplace_through_view_bumps_shared_version():
    x = pf.zeros(4)
    v = x[1:3]
    w = x.view(2, 2)
    v0 = x._version
    v.add_(1)
    assert x._version == v._version == w._version == v0 + 1
    w[0, 0] = 5.0
    assert x._version == v0 + 2
    close(x, [5.0, 1.0, 1.0, 0.0])


def test_inplace_on_diagonal_view_of_dual():
    d = fwAD.make_dual(pf.ones(2, 2), pf.tensor([[1.0, 2.0], [3.0, 4.0]]))
    d.diagonal().mul_(3)
    close(d, [[3.0, 1.0], [1.0, 3.0]])
    close(tangent(d), [[3.0, 2.0], [3.0, 12.0]])


try:
    import torch
    import torch.autograd.forward_ad as tfw
except ImportError:  # pragma: no cover
    torch = None


def _program(lib, fw, x, t, y, ty):
    """A program mixing views and in-place ops; run with pushforward and with torch."""
    d = fw.make_dual(x, t)
    e = fw.make_dual(y, ty)
    out = lib.zeros(3, 4, dtype=x.dtype)
    out[1] = e  # dual into a plain base through a view
    v = out[:, 1:3]
    v.mul_(d[:, :2])  # in-place on a view with a dual of another shape
    w = out.t()
    w[0].add_(d[:, 3].sin())  # through a transposed view
    d2 = d.clone()
    d2[0:2] = d2[1:3] * d2[0:2]  # overlapping read/write
    d2.pow_(2)
    r = (out * 2).sum(1) + d2.sum(1)
    return fw.unpack_dual(r).tangent, fw.unpack_dual(out).tangent, fw.unpack_dual(v).tangent


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_views_and_inplace_match_torch_forward_ad():
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    y, ty = rng.standard_normal(4), rng.standard_normal(4)
    ours = _program(pf, fwAD, *(pf.tensor(a) for a in (x, t, y, ty)))
    with tfw.dual_level():
        theirs = _program(torch, tfw, *(torch.tensor(a) for a in (x, t, y, ty)))
        theirs = [a.detach().numpy().copy() for a in theirs]
    for o, th in zip(ours, theirs):
        close(o, th)


def test_inplace_nested_levels_updates_both_tangents():
    l0 = len(STATE.levels) - 1  # the fixture's level
    with fwAD.dual_level() as l1:
        x = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]), level=l0)
        d = fwAD.make_dual(x, pf.tensor([3.0, 3.0]), level=l1)
        v = d[1:]
        d.mul_(d)
        close(d, [1.0, 4.0])
        close(tangent(d, l0), [2.0, 4.0])
        t1 = tangent(d, l1)
        close(t1, [6.0, 12.0])
        close(tangent(t1, l0), [6.0, 6.0])  # d/dx (2 x * 3)
        close(tangent(v, l1), [12.0])
        close(tangent(v, l0), [4.0])


def test_broadcast_result_tangent_is_writable():
    d = fwAD.make_dual(pf.tensor([[1.0], [2.0]]), pf.tensor([[1.0], [2.0]]))
    y = d + pf.zeros(1, 3)
    assert tangent(y).shape == (2, 3)
    y.mul_(2)
    close(tangent(y), [[2.0] * 3, [4.0] * 3])


def test_dual_scalar_added_into_plain_vector():
    z = pf.ones(4)
    z.add_(fwAD.make_dual(pf.tensor(1.0), pf.tensor(2.0)))
    close(z, [2.0] * 4)
    close(tangent(z), [2.0] * 4)


def test_complex_inplace_tangent():
    c = fwAD.make_dual(pf.tensor([1 + 1j, 2j]), pf.tensor([1 + 0j, 1j]))
    c.mul_(1j)
    close(tangent(c), [1j, -1.0])


def test_make_dual_on_view_of_dual_same_level_errors():
    d = fwAD.make_dual(pf.tensor([1.0, 2.0, 3.0]), pf.tensor([1.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="already has a tangent"):
        fwAD.make_dual(d[0:1], pf.tensor([5.0]))
    # after unpacking, a view of the primal can carry a new tangent, separate from d's
    p = fwAD.unpack_dual(d).primal
    e = fwAD.make_dual(p[0:1], pf.tensor([5.0]))
    close(tangent(e), [5.0])
    close(tangent(d), [1.0, 1.0, 1.0])


def test_exit_clears_tangent_given_to_base_by_setitem():
    import gc
    import weakref

    with fwAD.dual_level():
        out = pf.zeros(3)
        out[1:2] = fwAD.make_dual(pf.tensor([4.0]), pf.tensor([9.0]))
        v = out[1:]
        r = weakref.ref(tangent(out))
        close(tangent(v), [9.0, 0.0])
    assert tangent(out) is None and tangent(v) is None
    gc.collect()
    assert r() is None
    close(out, [0.0, 4.0, 0.0])


def test_dual_and_requires_grad_through_setitem_and_inplace():
    x = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = pf.zeros(3)
    base[0:2] = fwAD.make_dual(x[:2] * 1, pf.tensor([1.0, 1.0]))
    base.mul_(fwAD.make_dual(x * 1, pf.tensor([0.0, 0.0, 1.0])))
    close(base.detach(), [1.0, 4.0, 0.0])
    close(tangent(base).detach(), [1.0, 2.0, 0.0])
    (g,) = pf.autograd.grad(base.sum(), x)
    close(g.detach(), [2.0, 4.0, 0.0])


def test_views_of_unpacked_primal_have_no_tangent():
    out = pf.zeros(3)
    out[1:2] = fwAD.make_dual(pf.tensor([4.0]), pf.tensor([9.0]))  # the root itself carries the tangent
    p = fwAD.unpack_dual(out).primal
    assert tangent(p) is None
    assert tangent(p[1:2]) is None
    assert tangent(p[1:2] * 2) is None
    assert tangent(p.view(3, 1)) is None
    close(tangent(out[1:2]), [9.0])  # the dual's own views still see it


def test_inplace_dual_into_unpacked_primal():
    """Lens law: the unpacked primal is a separate lens without tangent; writing a dual into it gives it its own."""
    dd = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0]))
    p = fwAD.unpack_dual(dd).primal
    p.add_(fwAD.make_dual(pf.tensor([1.0, 1.0]), pf.tensor([5.0, 5.0])))
    close(dd, [2.0, 3.0])
    close(tangent(dd), [3.0, 4.0])
    close(tangent(p), [5.0, 5.0])


@pytest.mark.parametrize("name", list(INPLACE))
@pytest.mark.parametrize("target", ["dual", "plain", "dual_view", "plain_view"])
@pytest.mark.parametrize("other", ["dual", "plain", "scalar"])
def test_inplace_tangent_equals_out_of_place(name, target, other):
    inplace, outplace = INPLACE[name]
    rng = np.random.default_rng(zlib.crc32(f"{name}/{target}/{other}".encode()))
    base_p = rng.uniform(0.5, 2.0, (2, 3))
    base_t = rng.standard_normal((2, 3))
    o_p = rng.uniform(0.5, 2.0, 3)
    o_t = rng.standard_normal(3)

    def make_target():
        b = pf.tensor(base_p)
        if target.startswith("dual"):
            b = fwAD.make_dual(b, pf.tensor(base_t))
        return b, (b[1] if target.endswith("view") else b)

    def make_other():
        if other == "scalar":
            return 1.5
        o = pf.tensor(o_p)
        return fwAD.make_dual(o, pf.tensor(o_t)) if other == "dual" else o

    ob, ot = make_target()
    expected = outplace(ot, make_other())
    b, t = make_target()
    r = inplace(t, make_other())
    assert r is t
    close(t, expected)
    exp_t = tangent(expected)
    if exp_t is None:
        assert tangent(t) is None or np.all(tangent(t).numpy() == 0)
    else:
        close(tangent(t), exp_t)
    if target.endswith("view"):
        # the base sees both the new value and the new tangent of its row
        close(b[1], expected)
        if exp_t is not None:
            close(tangent(b)[1], exp_t)
            if target == "dual_view":
                close(tangent(b)[0], base_t[0])
            else:
                close(tangent(b)[0], np.zeros(3))


def test_negative_stride_view_and_inplace():
    d = fwAD.make_dual(pf.arange(4.0), pf.tensor([1.0, 2.0, 3.0, 4.0]))
    r = d[::-1]
    close(tangent(r), [4.0, 3.0, 2.0, 1.0])
    assert shares(tangent(r), tangent(d))
    r[0:2].mul_(10)
    close(d, [0.0, 1.0, 20.0, 30.0])
    close(tangent(d), [1.0, 2.0, 30.0, 40.0])


def test_inplace_through_split_and_transpose_views():
    m = fwAD.make_dual(pf.arange(6.0).reshape(2, 3), pf.ones(2, 3))
    m.t()[0].add_(fwAD.make_dual(pf.ones(2), pf.tensor([5.0, 7.0])))
    close(tangent(m), [[6.0, 1.0, 1.0], [8.0, 1.0, 1.0]])
    m.split(1, 0)[1].zero_()
    close(tangent(m), [[6.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    assert [tangent(row).tolist() for row in m] == [[6.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


def test_nested_views_taken_before_base_became_dual():
    out = pf.zeros(2, 2)
    row = out[1]
    cell = row[1:]
    out[1, 1:] = fwAD.make_dual(pf.tensor([3.0]), pf.tensor([4.0]))
    close(tangent(cell), [4.0])
    close(tangent(row), [0.0, 4.0])


def test_views_made_before_their_base_gets_a_tangent_see_it():
    """The dispatcher's one "needs autodiff" bit (Tensor._ad): a view made while its base was
    plain must leave the bare-kernel path once a dual write reaches the base (mark_dual)."""
    import pushforward.autograd.forward_ad as fwAD
    from pushforward.core.tensor import needs_ad

    x = pf.zeros(2, 3)
    rows, col, alias_ = x[0], x[:, 1], x.detach()
    assert not (rows._ad or col._ad)
    with fwAD.dual_level():
        x.add_(fwAD.make_dual(pf.ones(2, 3), pf.full((2, 3), 2.0)))
        for v in (rows, col, alias_):
            assert v._ad or not needs_ad(v)
        assert np.allclose(fwAD.unpack_dual(rows * 3).tangent.numpy(), [6.0, 6.0, 6.0])
        assert np.allclose(fwAD.unpack_dual(col.sin()).tangent.numpy(), 2 * np.cos([1.0, 1.0]))
        assert (
            fwAD.unpack_dual(alias_ * 3).tangent is None
        )  # detach cuts tangents (docs/design.md, "Mixing with reverse mode")


@needs_torch
@pytest.mark.parametrize("fn", ["ones_like", "zeros_like", "empty_like", "full_like"])
def test_like_functions_keep_their_input_layout_as_torch(fn):
    """torch's *_like keep a dense input's strides (preserve_format) and order a sliced one's dims
    by stride; a later reshape is then a view or a copy as in torch."""
    makers = [
        lambda L: L.tensor(np.arange(12.0).reshape(3, 4)).t(),
        lambda L: L.tensor(np.arange(24.0).reshape(4, 6))[:, ::2],
        lambda L: L.tensor(np.arange(24.0).reshape(2, 3, 4)).permute(2, 0, 1),
        lambda L: L.tensor(np.arange(4.0).reshape(1, 4)).expand(3, 4),
    ]
    for make in makers:
        args = (2.0,) if fn == "full_like" else ()
        got, want = getattr(pf, fn)(make(pf), *args), getattr(torch, fn)(make(torch), *args)
        assert got.stride() == want.stride()


@needs_torch
def test_inplace_through_a_view_that_needs_its_base_layout_differentiates():
    """A write through `.mT.view(-1)` of a column-major result (ones_like of a transpose times it):
    the backward replays the view chain on gradients laid out in C order, where `.view` would fail;
    it selects the same elements with reshape (fuzzer)."""
    a = np.random.default_rng(21).uniform(0.5, 1.5, 4)
    grads = []
    for L in (pf, torch):
        x = L.tensor(a, requires_grad=True)
        m = x.reshape(2, 2)
        v = ((L.ones_like(m.mT) + L.full_like(m.mT, 0.5)) * m.mT).mT.view(-1)
        v.mul_(x)
        v.sin_()
        (g,) = (pf.autograd.grad if L is pf else torch.autograd.grad)((v * L.arange(4.0)).sum(), x)
        grads.append(g.detach().numpy())
    assert np.allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)


def test_as_strided_matches_torch_values_views_and_derivatives():
    import torch

    import pushforward.autograd.forward_ad as fwAD

    base = np.random.default_rng(0).standard_normal(9)
    cases = [((3, 2), (1, 1), 0), ((2, 2), (1, 3), 1), ((2,), (4,), None), ((0, 3), (1, 1), 7)]
    for size, stride, off in cases:
        tx = torch.tensor(base, requires_grad=True)
        px = pf.tensor(base, requires_grad=True)
        ty, py = tx[1:].as_strided(size, stride, off), px[1:].as_strided(size, stride, off)
        assert py.tolist() == ty.tolist()
        w = np.random.default_rng(1).standard_normal(size)
        (ty * torch.tensor(w)).sum().backward()
        (py * pf.tensor(w)).sum().backward()
        # overlapping reads add up. torch drops the gradient of memory the view reads outside its input
        # (x[0] here, read through x[1:] at offset 0); finite differences decide: it is not zero
        e = 1e-6
        fd = [
            (
                (
                    pf.tensor(base + e * u)[1:].as_strided(size, stride, off)
                    - pf.tensor(base - e * u)[1:].as_strided(size, stride, off)
                )
                * pf.tensor(w)
            ).sum()
            / (2 * e)
            for u in np.eye(9)
        ]
        assert np.allclose(px.grad.numpy(), [float(v) for v in fd], atol=1e-6)
        assert np.allclose(px.grad.numpy()[1:], tx.grad.numpy()[1:])
    x = pf.arange(6.0)
    x.as_strided((2,), (2,), 1).mul_(10)  # a view: writes reach the input
    assert x.tolist() == [0.0, 10.0, 2.0, 30.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="out of bounds for the tensor's storage of 6 elements"):
        x.as_strided((3,), (2,), 2)
    # reading past the input into a differentiable base: the gradient reaches the base's elements read
    leaf = pf.arange(5.0, requires_grad=True)
    (leaf * 1)[:4].as_strided((5,), (1,), 0).pow(2).sum().backward()
    assert leaf.grad.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    with fwAD.dual_level():
        # a detached slice: its tangent is laid out like its memory, zeros beyond it (torch's rule)
        t = pf.ones(4)
        d = fwAD.make_dual(pf.arange(5.0)[:4].detach(), t)
        assert fwAD.unpack_dual(d.as_strided((5,), (1,), 0)).tangent.tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]
        fwAD.unpack_dual(d).tangent.mul_(2)
        assert t.tolist() == [1.0] * 4
        # the dual of a view keeps the caller's tangent (RFC-0007), so memory beyond it has no known tangent
        v = fwAD.make_dual(pf.arange(5.0)[:4], pf.ones(4))
        with pytest.raises(RuntimeError, match="outside the input tensor"):
            v.as_strided((5,), (1,), 0)
        # a view of a dual reads its base's tangent beyond itself (the same view of the tangent's memory)
        w = fwAD.make_dual(pf.arange(5.0), pf.arange(5.0) + 10)[1:]
        assert fwAD.unpack_dual(w.as_strided((2,), (1,), 0)).tangent.tolist() == [10.0, 11.0]


# -- indexing's fast path (methods/indexing.py: dispatch.general.run_view, dispatch.bare.write_view)
# Basic indices take a short path for plain, dual and recorded tensors; it must give what the
# general path gives (values, tangents, versions, views, gradients, errors), which the tests get by
# turning the fast path off.

FAST_INDEXES = [(1, slice(1, -1)), (slice(None), 2), 2, (Ellipsis, None, 1), (2, 3), (slice(None, None, -1), 0)]
FAST_TENSORS = ["plain", "dual", "recorded", "combined", "view_of_dual", "leaf_no_grad", "int"]
FAST_VALUES = ["float", "int", "bool", "plain", "dual", "own_row", "broadcast", "int_tensor", "recorded"]


@pytest.fixture
def general_path(monkeypatch):
    """Turn indexing's fast path off (every index, and every view op, then takes the general path)."""
    from pushforward.dispatch import classifier, general
    from pushforward.methods import indexing

    def off():
        monkeypatch.setattr(indexing, "_plain_index", lambda index: False)
        monkeypatch.setattr(classifier, "run_view", lambda op, x, args: general.run_general(op, (x,), args))

    return off


def _indexed(kind: str, value: str, index, write: bool) -> dict:
    """What y = x[index] (and then, with `write`, x[index] = v) gives for x and v of these kinds."""
    p = np.arange(24.0).reshape(4, 6) * 0.5 - 3
    leaf = pf.tensor(p, requires_grad=True)
    x = {
        "plain": lambda: pf.tensor(p),
        "dual": lambda: fwAD.make_dual(pf.tensor(p), pf.tensor(p * 10 + 1)),
        "recorded": lambda: leaf * 1,
        "combined": lambda: fwAD.make_dual(leaf * 1, pf.tensor(p * 10 + 1)),
        "view_of_dual": lambda: fwAD.make_dual(pf.tensor(p), pf.tensor(p * 10 + 1))[::-1],
        "leaf_no_grad": lambda: leaf,
        "int": lambda: pf.tensor(p.astype(np.int64)),
    }[kind]()
    out = {}
    y = x[index]
    out["y"] = (y.detach().numpy().copy(), y.shape, y._base is (x._base if x._base is not None else x))
    out["y_tangent"] = None if tangent(y) is None else tangent(y).numpy().copy()
    out["y_grad"] = _grad(y, leaf)
    if write:
        shape = y.shape
        v = {
            "float": lambda: 2.5,
            "int": lambda: 7,
            "bool": lambda: True,
            "plain": lambda: pf.full(shape, 4.0),
            "dual": lambda: fwAD.make_dual(pf.full(shape, 4.0), pf.full(shape, -1.0)),
            "own_row": lambda: x[index] * 1 if kind == "int" else x[index].clone()[...],
            "broadcast": lambda: pf.full((1,) * len(shape), 9.0),
            "int_tensor": lambda: pf.full(shape, 3, dtype=pf.int64),
            "recorded": lambda: pf.full(shape, 4.0, requires_grad=True) * 2,
        }[value]()
        try:
            if kind == "leaf_no_grad":
                with pf.no_grad():
                    x[index] = v
            else:
                x[index] = v
        except Exception as e:
            return {"error": (type(e), str(e))}
        out["y_after"] = y.detach().numpy().copy()  # (the view sees the write)
        out["y_tangent_after"] = None if tangent(y) is None else tangent(y).numpy().copy()
    out["x"] = x.detach().numpy().copy()
    out["x_tangent"] = None if tangent(x) is None else tangent(x).numpy().copy()
    out["version"] = x._version
    out["grad"] = _grad(x, leaf)
    return out


def _grad(y, leaf):
    """The gradient of a weighted sum of y with respect to leaf (None: y does not require grad)."""
    if not y.requires_grad:
        return None
    w = pf.tensor(np.arange(y.numel()).reshape(y.shape) + 1.0)
    (g,) = pf.autograd.grad((y * w).sum(), leaf, allow_unused=True, retain_graph=True)
    return None if g is None else g.detach().numpy()


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        u, v = a[k], b[k]
        if isinstance(u, tuple):
            assert len(u) == len(v) and all(np.array_equal(p, q) for p, q in zip(u, v)), k
        elif u is None or v is None:
            assert u is v, k
        elif isinstance(u, np.ndarray):
            assert u.dtype == v.dtype and np.array_equal(u, v), k
        else:
            assert u == v, k


@pytest.mark.parametrize("index", FAST_INDEXES, ids=repr)
@pytest.mark.parametrize("kind", FAST_TENSORS)
def test_fast_index_read_agrees_with_the_general_path(kind, index, general_path):
    fast = _indexed(kind, "", index, write=False)
    general_path()
    _same(fast, _indexed(kind, "", index, write=False))


@pytest.mark.parametrize("value", FAST_VALUES)
@pytest.mark.parametrize("kind", FAST_TENSORS)
@pytest.mark.parametrize("index", FAST_INDEXES[:3] + FAST_INDEXES[4:5], ids=repr)
def test_fast_index_write_agrees_with_the_general_path(kind, value, index, general_path):
    fast = _indexed(kind, value, index, write=True)
    general_path()
    _same(fast, _indexed(kind, value, index, write=True))


@pytest.mark.parametrize(
    "case",
    ["out_of_range", "too_many", "complex_into_real", "wrong_shape", "read_only", "expanded", "leaf_requires_grad"],
)
def test_fast_index_errors_are_the_general_paths(case, general_path):
    def run():
        x = pf.zeros(3, 4)
        try:
            if case == "out_of_range":
                x[5, 1] = 1.0
            elif case == "too_many":
                x[1, 2, 3]
            elif case == "complex_into_real":
                x[1] = 1j
            elif case == "wrong_shape":
                x[1] = pf.ones(3)
            elif case == "read_only":
                pf.from_numpy(np.broadcast_to(np.zeros(4), (3, 4)))[1] = pf.ones(4)
            elif case == "expanded":
                pf.zeros(4).expand(3, 4)[:, 1] = pf.ones(3)
            else:
                v = x[1:]
                x.requires_grad_()
                v[0] = 1.0  # (a view made before its root required grad: a leaf's view then)
        except Exception as e:
            return type(e), str(e)
        raise AssertionError(f"{case}: no error")

    fast = run()
    general_path()
    assert run() == fast


def test_fast_write_reads_a_value_tangent_that_aliases_the_primal_before_writing(general_path):
    """value's tangent is the memory the primal write changes (two tensors over one NumPy array):
    copy_ reads value's tangent before it writes."""

    def run():
        memory = np.arange(6.0)
        y = fwAD.make_dual(pf.from_numpy(memory), pf.zeros(6))
        v = fwAD.make_dual((pf.arange(6.0) + 7)[:2], pf.from_numpy(memory)[:2])
        y[:2] = v
        return y.detach().tolist(), tangent(y).tolist()

    fast = run()
    assert fast == ([7.0, 8.0, 2.0, 3.0, 4.0, 5.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    general_path()
    assert run() == fast


def test_views_of_a_storage_read_in_a_loop_stay_proportional_to_the_live_ones():
    x = pf.zeros(4, 5)
    for i in range(5000):
        x[i % 4, 1] + 1.0
        x[1:3]
    assert len(x._st.views) < 100 and len(x._st.members) < 100


def test_views_of_a_detached_alias_stay_off_the_tape_after_a_write_into_the_root():
    # the alias shares the storage (and its list of views) but not the root: a differentiable
    # write into the root must not make the alias's views require grad (torch: they stay detached)
    x = pf.tensor([1.0, 2.0, 3.0])
    v = x.detach()[1:]
    w = pf.tensor([5.0, 6.0], requires_grad=True)
    x[1:] = w * 2
    assert x.requires_grad and not v.requires_grad
    (g,) = pf.autograd.grad((v * 3.0).sum() + x.sum(), w)
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(v.numpy(), [10.0, 12.0])


def _element_programs():
    """Loop-kernel statements (augmented element and row writes, element reads) on x, 4x6."""
    return {
        "x[1, 2] += x[1, 1]": lambda x: x.__setitem__((1, 2), x[1, 2].__iadd__(x[1, 1])),
        "x[1, 2] /= 9.0": lambda x: x.__setitem__((1, 2), x[1, 2].__itruediv__(9.0)),
        "x[1, 1:4] *= x[2, 1:4]": lambda x: x.__setitem__((1, slice(1, 4)), x[1, 1:4].__imul__(x[2, 1:4])),
        "x[1, 2] -= x[1, :3] @ x[:3, 2]": lambda x: x.__setitem__((1, 2), x[1, 2].__isub__(x[1, :3] @ x[:3, 2])),
        "x[2, :] += 0.5 * x[1, 2] * x[3, :]": lambda x: x.__setitem__(
            (2, slice(None)), x[2, :].__iadd__(0.5 * x[1, 2] * x[3, :])
        ),
        "v = x[1, 2]; x[1, 2] = v": lambda x: x.__setitem__((1, 2), x[1, 2]),
        "x[1, 2] = unpacked primal of x[1, 2]": lambda x: x.__setitem__((1, 2), fwAD.unpack_dual(x[1, 2]).primal),
    }


def _run_element_program(kind: str, program) -> tuple:
    """program(x) at the module's dual level: x's values, tangent and versions written."""
    p = np.arange(24.0).reshape(4, 6) * 0.5 - 3
    x = {
        "plain": lambda: pf.tensor(p),
        "dual": lambda: fwAD.make_dual(pf.tensor(p), pf.tensor(p * 10 + 1)),
        "view_of_dual": lambda: fwAD.make_dual(pf.tensor(p), pf.tensor(p * 10 + 1))[::-1],
    }[kind]()
    before = x._version
    program(x)
    t = tangent(x)
    return x.detach().tolist(), None if t is None else t.tolist(), x._version - before


@pytest.mark.parametrize("kind", ["plain", "dual", "view_of_dual"])
@pytest.mark.parametrize("name", list(_element_programs()))
def test_element_writes_by_arrays_match_the_general_path(kind, name, monkeypatch):
    """The in-place op by arrays (plain tangents of one level) and the element write of a region
    into itself (x[i] += v ends with x[i] = x[i]) give the general path's values, tangents and
    versions; an unpacked primal (its tangent masked) is written, not skipped."""
    from pushforward.dispatch import bare, inplace
    from pushforward.methods import indexing

    program = _element_programs()[name]
    fast = _run_element_program(kind, program)
    monkeypatch.setattr(inplace, "_write_lazy_view", lambda *a: False)
    monkeypatch.setattr(inplace, "_write_arrays", lambda *a: False)
    monkeypatch.setattr(indexing, "rewritten_lazy", lambda *a: False)
    monkeypatch.setattr(bare, "_in_place_of", lambda *a: False)
    assert fast == _run_element_program(kind, program)
    if name.startswith("x[1, 2] = unpacked") and kind != "plain":
        assert fast[1][1][2] == 0.0  # (the masked tangent written: zero there)


def test_element_write_of_a_recorded_read_keeps_the_saved_value():
    """y = w * x[1, 2] saves the element; x[1, 2] += 1 (by arrays: x needs no tape) keeps what the
    node read, so the gradient is that of the old value."""
    x = pf.tensor(np.arange(12.0).reshape(3, 4))
    w = pf.tensor(2.0, requires_grad=True)
    y = w * x[1, 2]
    x[1, 2] += 1.0
    (g,) = pf.autograd.grad(y, w)
    assert float(g) == 6.0 and float(x[1, 2]) == 7.0


def test_an_augmented_element_write_takes_the_array_paths(monkeypatch):
    """x[1, 2] += x[1, 1] on a dual tensor: the in-place op on the lazy view by arrays, the write
    back found in place (and, on a plain tensor, the arrays path and write_view's test)."""
    from pushforward.dispatch import bare, inplace
    from pushforward.methods import indexing

    seen = []
    for module, name in (
        (inplace, "_write_lazy_view"),
        (inplace, "_write_arrays"),
        (indexing, "rewritten_lazy"),
        (bare, "_in_place_of"),
    ):
        fn = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, fn=fn, name=name: seen.append((name, fn(*a))) or seen[-1][1])
    _run_element_program("dual", _element_programs()["x[1, 2] += x[1, 1]"])
    assert seen == [("_write_lazy_view", True), ("rewritten_lazy", True)]
    seen.clear()
    _run_element_program("plain", _element_programs()["x[1, 2] += x[1, 1]"])
    assert seen == [("_write_arrays", True), ("_in_place_of", True)]
