"""The per-output rules (docs/design.md, "Per-output rules"; engine/outputs.py) hold on every path
an op call can take: fitted tangents, none for an integer output, each tangent its own memory,
laid out as its result; and the fitting says what is wrong with a formula's tangent."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.engine.outputs import fit_array, fit_tangent, own_array, own_fast
from pushforward.errors import OpError


def _x(shape=(3, 4), seed=0, **kw):
    return pf.tensor(np.random.default_rng(seed).random(shape), **kw)


@contextmanager
def _path(name):
    """A dual of _x() whose ops take the executor named (see tests/test_dispatch.py); yields
    (dual, read) where read(y) gives y's tangent as one array (a batch at a vector-mode level)."""
    t = _x(seed=1)
    if name == "arrays":
        with fwAD.dual_level():
            yield fwAD.make_dual(_x(), t), lambda y: fwAD.unpack_dual(y).tangent
    elif name == "combined":
        with fwAD.dual_level():
            yield fwAD.make_dual(_x(requires_grad=True), t), lambda y: fwAD.unpack_dual(y).tangent
    elif name == "deferred":
        with fwAD.untracked_level():
            yield fwAD.make_dual(_x(requires_grad=True), t), lambda y: fwAD.unpack_dual(y).tangent
    elif name == "vector":
        with fwAD.dual_level(batch=2):
            yield fwAD.make_dual(_x(), pf.stack([t, 2 * t])), lambda y: fwAD.unpack_dual(y).tangent
    else:  # nested levels: the general executor, level by level
        with fwAD.dual_level():
            with fwAD.dual_level():
                d = fwAD.make_dual(fwAD.make_dual(_x(), _x(seed=2), level=0), t, level=1)
                yield d, lambda y: fwAD.unpack_dual(y, level=1).tangent


PATHS = ["arrays", "combined", "deferred", "vector", "general"]


def _array(t):
    return t._data if type(t._data) is np.ndarray else np.asarray(t.detach().numpy())


@pytest.mark.parametrize("path", PATHS)
def test_a_tangent_owns_its_memory_on_every_path(path):
    """`x + 1` and `x.clone()`'s formulas may return x's tangent itself: attached as it is, an
    in-place write into one tangent would change the other."""
    with _path(path) as (x, read):
        tx = read(x)
        for y in (x + 1.0, x - 0.0, x.clone(), x * 1.0):
            ty = read(y)
            assert ty is not None and not np.shares_memory(_array(ty), _array(tx)), path
            np.testing.assert_allclose(_array(ty), _array(tx))


@pytest.mark.parametrize("path", PATHS)
def test_an_integer_or_bool_result_has_no_tangent_on_every_path(path):
    with _path(path) as (x, read):
        for y in (x > 0.5, pf.sign(x).to(pf.int64), pf.argmax(x, 1)):
            assert read(y) is None, (path, y.dtype)


@pytest.mark.parametrize("path", PATHS)
def test_a_contiguous_result_has_a_contiguous_tangent_on_every_path(path):
    """cumsum's result is contiguous (`layout: contiguous`): its tangent too, of a transposed input."""
    with _path(path) as (x, read):
        y = pf.cumsum(x.mT, 0)
        assert y._data.flags.c_contiguous
        d = read(y)._data
        assert (d[0] if path == "vector" else d).flags.c_contiguous, path  # (a batch: each tangent)


@pytest.mark.parametrize("path", PATHS)
def test_an_elementwise_tangent_is_laid_out_as_its_result_on_every_path(path):
    """sin of a transposed input: the result keeps the input's layout, and so does its tangent."""
    with _path(path) as (x, read):
        y = pf.sin(x.mT)
        t = read(y)
        if path != "vector":  # (a batch of tangents keeps the batch dim outermost)
            assert t._data.strides == y._data.strides, path


class _Op:
    name = "an_op"


def test_fit_broadcasts_casts_and_drops_as_the_rule_says():
    f64, c128, i64 = np.dtype(np.float64), np.dtype(np.complex128), np.dtype(np.int64)
    np.testing.assert_array_equal(fit_array(_Op, np.ones(3), (2, 3), f64), np.ones((2, 3)))
    r = fit_array(_Op, np.array([1 + 2j, 3 - 1j]), (2,), f64)  # a complex tangent of a real output: its real part
    assert r.dtype == f64 and r.tolist() == [1.0, 3.0]
    assert fit_array(_Op, np.ones(2), (2,), i64) is None and fit_array(_Op, None, (2,), f64) is None
    assert fit_array(_Op, 2.0, (2,), f64, batch=3).shape == (3, 2)
    t = fit_tangent(_Op, pf.tensor([1.0]), (2, 2), c128)
    assert t.shape == (2, 2) and t.dtype == pf.complex128
    assert fit_tangent(_Op, pf.tensor([1.0]), (2,), np.dtype(np.bool_)) is None


@pytest.mark.parametrize("batch", [None, 4])
def test_a_tangent_that_cannot_be_fitted_names_the_op_and_both_shapes(batch):
    with pytest.raises(OpError, match=r"an_op: forward formula produced a tangent of shape \(3,\) .*\(2,\)"):
        fit_array(_Op, np.ones(3), (2,), np.dtype(np.float64), batch)
    with pytest.raises(OpError, match=r"an_op: .* shape \(3,\) for an output of shape \(2,\)"):
        fit_tangent(_Op, pf.ones(3), (2,), np.dtype(np.float64))
    with pytest.raises(
        OpError, match=r"an_op: .* shape \(2, 1\) for an output of shape \(2,\)"
    ):  # (broadcasts, but wider)
        fit_tangent(_Op, pf.ones(2, 1), (2,), np.dtype(np.float64))


def test_own_copies_exactly_what_may_share_memory():
    a, b = np.ones(4), np.zeros(4)
    assert own_array(a, (b,)) is a  # fresh and not an input: kept
    assert own_array(a, (b, [a])) is not a  # an input (in a list input): copied
    v = a[1:]
    assert own_array(v, (a,)) is not v and own_array(v, (b,)) is v  # a view of an input: copied
    assert own_fast(a, [b], [a], b) is not a and own_fast(a, [b], [None], b) is a


def test_an_elementwise_results_layout_is_remembered_per_strides_not_per_shape():
    """elementwise_layout remembers its answer for each shapes-and-strides question: two products
    of the same shapes whose inputs disagree the other way round each follow their first input."""
    from pushforward.kernels.basic import elementwise_layout

    c, f = np.ones((3, 4)), np.asfortranarray(np.ones((3, 4)))
    for _ in range(2):  # (the second round answers from memory)
        assert elementwise_layout(np.multiply(f, c), f, c).flags.f_contiguous
        assert elementwise_layout(np.multiply(c, f), c, f).flags.c_contiguous


def test_elementwise_layout_of_c_ordered_slices_is_torchs():
    # (the shortcut for inputs whose strides are all C-ordered, a stencil's slices, against the
    # full rule: torch's dims order read off the inputs' strides)
    from pushforward.kernels.basic import _c_ordered, _torch_order, elementwise_layout

    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        nd = int(rng.integers(2, 4))
        base = rng.random((6,) * nd)

        def pick():
            x = base[
                tuple(
                    slice(int(rng.integers(0, 2)), int(rng.integers(3, 6)), int(rng.integers(1, 3))) for _ in range(nd)
                )
            ]
            return x.transpose(rng.permutation(nd)) if rng.random() < 0.3 else x

        a, b = pick(), pick()
        if a.shape != b.shape:
            continue
        out = np.add(a, b)
        if out.flags.c_contiguous and _c_ordered((a, b)):
            hits += 1
            assert _torch_order(out, [a, b]) is None, (a.strides, b.strides)
            assert elementwise_layout(out, a, b) is out
    assert hits > 20
