"""NumPy's dispatch on tensors ("NumPy dispatch in one frame", docs/design.md): a plain
`np.<ufunc>(t, ...)` enters `__array_ufunc__` and then exactly what the operator or method enters,
a keyword-free `np.<function>(t)` enters `__array_function__` and then the op; and every call off
that path (reflected operands, NumPy scalars, keywords, ufunc methods, other kinds of tensor) keeps
its values, dtypes and derivatives."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
import pushforward.numpy as pnp
from pushforward.bench.timing import python_calls


def _t(shape=(3, 4), seed=0, dtype=np.float64):
    return pf.tensor(np.random.default_rng(seed).random(shape).astype(dtype))


_MASK = pf.tensor(np.random.default_rng(5).random((3, 4)) > 0.5)


def _calls(fn, t):
    """The Python functions fn(t) enters below fn (a first call, which may fill a table, not counted)."""
    fn(t)
    return python_calls(lambda: fn(t))[2:]


@pytest.mark.parametrize(
    "via_numpy, via_tensor",
    [
        (lambda t: np.add(t, t), lambda t: t + t),
        (lambda t: np.multiply(t, 2.0), lambda t: t * 2.0),
        (lambda t: np.subtract(t, t), lambda t: t - t),
        (lambda t: np.sin(t), lambda t: t.sin()),
        (lambda t: np.negative(t), lambda t: -t),
        (lambda t: np.matmul(t, t), lambda t: t @ t),
    ],
)
def test_ufunc_call_is_one_frame_above_the_operator(via_numpy, via_tensor):
    t = _t((4, 4))
    assert _calls(via_numpy, t) == ["array_ufunc"] + _calls(via_tensor, t)
    np.testing.assert_array_equal(via_numpy(t).numpy(), via_tensor(t).numpy())


@pytest.mark.parametrize("func, op", [(np.sum, "sum"), (np.prod, "prod"), (np.max, "amax"), (np.min, "amin")])
def test_reduction_on_one_tensor_lands_on_the_op(func, op):
    t = _t()
    func(t)  # (a first call fills the table)
    calls = python_calls(lambda: func(t))[1:]
    op_calls = python_calls(lambda: getattr(pf, op)(t))[1:]
    assert calls[1:] == ["array_function"] + op_calls  # (calls[0]: NumPy's dispatcher)
    np.testing.assert_array_equal(func(t).numpy(), func(t.numpy()))


@pytest.mark.parametrize(
    "via_numpy, via_op",
    [
        (lambda t: np.sum(t, 0), lambda t: pf.sum(t, 0)),
        (lambda t: np.max(t, 1), lambda t: pf.amax(t, 1)),
        (lambda t: np.where(_MASK, t, 0.0), lambda t: pf.where(_MASK, t, 0.0)),
    ],
)
def test_positional_calls_land_on_the_op(via_numpy, via_op):
    t = _t()
    calls = _calls(via_numpy, t)
    assert calls[1:] == ["array_function"] + _calls(via_op, t)  # (calls[0]: NumPy's dispatcher)
    np.testing.assert_array_equal(via_numpy(t).numpy(), via_numpy(t.numpy()))


def test_where_with_one_argument_is_nonzero():
    t = pf.tensor([[0.0, 1.0], [2.0, 0.0]])
    got = np.where(t)
    for g, w in zip(got, np.where(t.numpy())):
        np.testing.assert_array_equal(g.numpy(), w)


def test_reduction_fast_path_keeps_numpy_dtypes_and_axis():
    ti = pf.tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    for func in (np.sum, np.prod, np.max, np.min, np.all, np.any):
        got, want = func(ti), func(ti.numpy())
        assert got.dtype == want.dtype, func
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(func(ti, 0).numpy(), func(ti.numpy(), 0))
        np.testing.assert_array_equal(func(ti, axis=1, keepdims=True).numpy(), func(ti.numpy(), axis=1, keepdims=True))


def test_off_the_fast_path_ufunc_calls_keep_numpy_semantics():
    t = _t(dtype=np.float32)
    a = np.random.default_rng(1).random((3, 4))
    cases = [
        (lambda x: np.add(a, x), lambda x: np.add(a, x)),  # reflected: NumPy's order and promotion
        (lambda x: np.add(np.float64(2.0), x), lambda x: np.add(np.float64(2.0), x)),
        (lambda x: np.multiply(x, 3), lambda x: np.multiply(x, 3)),
        (lambda x: np.add(x, x, dtype=np.float64), lambda x: np.add(x, x, dtype=np.float64)),
        (lambda x: np.add(x, 1.0, where=True), lambda x: np.add(x, 1.0, where=True)),
        (lambda x: np.add.reduce(x, axis=1), lambda x: np.add.reduce(x, axis=1)),
        (lambda x: np.multiply.outer(x[0], x[1]), lambda x: np.multiply.outer(x[0], x[1])),
        (lambda x: np.maximum.accumulate(x, 0), None),
    ]
    for ours, numpys in cases:
        if numpys is None:
            with pytest.raises(TypeError, match="np.maximum.accumulate"):
                ours(t)
            continue
        got, want = ours(t), numpys(t.numpy())
        assert isinstance(got, pf.Tensor)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_ufunc_out_and_at_write_into_a_tensor():
    t = _t()
    out = pf.zeros(3, 4)
    r = np.add(t, t, out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), 2 * t.numpy())
    u = pf.zeros(4)
    np.add.at(u, [0, 0, 2], 1.0)
    np.testing.assert_array_equal(u.numpy(), [2.0, 0.0, 1.0, 0.0])


def test_fast_paths_carry_tangents_and_gradients():
    x = _t(seed=2)
    v = _t(seed=3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        tangent = fwAD.unpack_dual(np.add(np.sin(d), d)).tangent
        total = fwAD.unpack_dual(np.sum(np.multiply(d, d))).tangent
    np.testing.assert_allclose(tangent.numpy(), (np.cos(x.numpy()) + 1) * v.numpy())
    np.testing.assert_allclose(total.numpy(), np.sum(2 * x.numpy() * v.numpy()))
    w = x.detach().requires_grad_()
    np.sum(np.multiply(np.sin(w), w)).backward()
    np.testing.assert_allclose(w.grad.numpy(), np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy()))


def test_batched_tensors_take_the_general_path():
    x = _t()
    got = pf.func.vmap(lambda r: np.sum(np.add(r, np.sin(r))))(x)
    np.testing.assert_allclose(got.numpy(), np.sum(x.numpy() + np.sin(x.numpy()), axis=1))


_NUMPY_SCALARS = [np.float64(1.5), np.float32(1.5), np.int64(3), np.int8(3), np.complex128(1 + 2j), np.bool_(True)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("s", _NUMPY_SCALARS, ids=lambda s: type(s).__name__)
def test_numpy_scalars_on_either_side_keep_numpy_dtypes_and_values(s, dtype):
    # (a NumPy scalar is strong in NEP 50: its dtype takes part in the promotion, on either side,
    # by the operator or the ufunc; it takes the tensor executors as a 0-d tensor)
    a = (np.arange(12).reshape(3, 4) % 5 + 1).astype(dtype)
    t = pf.tensor(a)
    for ours, numpys in [
        (lambda: t * s, lambda: a * s),
        (lambda: s * t, lambda: s * a),
        (lambda: np.multiply(s, t), lambda: np.multiply(s, a)),
        (lambda: np.subtract(s, t), lambda: np.subtract(s, a)),
        (lambda: t - s, lambda: a - s),
    ]:
        try:
            want = numpys()
        except TypeError:  # (bool - bool: NumPy refuses, and so does the op)
            with pytest.raises(TypeError):
                ours()
            continue
        got = ours()
        assert isinstance(got, pf.Tensor) and got.dtype == want.dtype, (s, dtype)
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("s", [np.float64(1.5), np.float32(2.0), np.int64(3)], ids=lambda s: type(s).__name__)
def test_numpy_scalars_carry_tangents_and_gradients(s):
    x = _t(seed=4)
    v = _t(seed=5)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        outs = [d * s, s * d, np.multiply(s, d), np.divide(s, d), d / s, np.add(s, np.sin(d))]
        tangents = [fwAD.unpack_dual(o).tangent.numpy() for o in outs]
    xs, vs, f = x.numpy(), v.numpy(), float(s)
    for got, want in zip(tangents, [f * vs, f * vs, f * vs, -f * vs / xs**2, vs / f, np.cos(xs) * vs]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    w = x.detach().requires_grad_()
    np.sum(s * w + np.multiply(s, w) + w / s).backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full(xs.shape, 2 * f + 1 / f))


def test_numpy_scalars_take_the_executors_of_tensors():
    # (NumPy code multiplies by NumPy scalars everywhere: `alpha * A`, `A[i, j] * x`; they took the
    # general executor, four times the Python calls of a Python number's)
    t = _t(seed=6)
    s = np.float64(2.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(t, _t(seed=7))
        for fn in (lambda: t * s, lambda: s * t, lambda: d * s, lambda: s * d, lambda: np.multiply(s, d)):
            fn()
            calls = python_calls(fn)
            assert "run_general" not in calls and len(calls) <= len(python_calls(lambda: d * 2.0)) + 1, calls


def test_matmul_of_dual_rows_reaches_its_primitive_at_once():
    # (`a @ b`, np.matmul and np.dot in a row loop: matmul's composite reads no values, so it runs
    # without the lazy guard's frames, and the operators skip matmul's out= test)
    a, b = _t((5,), seed=1), _t((5, 4), seed=2)
    with fwAD.dual_level():
        da, db = fwAD.make_dual(a, _t((5,), seed=3)), fwAD.make_dual(b, _t((5, 4), seed=4))
        at_op = _calls(lambda x: x @ db, da)
        assert at_op[:3] == ["c_matmul", "_matmul", "run2"], at_op
        assert _calls(lambda x: np.matmul(x, db), da) == ["array_ufunc"] + at_op
        assert _calls(lambda x: pnp.dot(x, db), da) == ["f", "dot"] + at_op
        assert _calls(lambda x: np.dot(x, db), da)[1:] == ["array_function", "dot"] + at_op
        assert "fit_array" not in _calls(lambda x: x @ x, da)  # (a 0-d tangent: its array made inline)
        for fn in (lambda: da @ db, lambda: np.matmul(da, db), lambda: np.dot(da, db), lambda: pnp.dot(da, db)):
            p, t = fwAD.unpack_dual(fn())
            np.testing.assert_allclose(p.numpy(), a.numpy() @ b.numpy())
            np.testing.assert_allclose(
                t.numpy(), _t((5,), seed=3).numpy() @ b.numpy() + a.numpy() @ _t((5, 4), seed=4).numpy()
            )


def test_matmul_of_lazy_tensors_stays_lazy_without_the_guard():
    da = pytest.importorskip("dask.array")
    x = pf.tensor(da.ones((3, 2), chunks=2))
    y = x @ pf.ones(2)
    assert type(y._data) is not np.ndarray
    np.testing.assert_array_equal(y.compute().numpy(), [2.0, 2.0, 2.0])


def test_drop_in_ufunc_calls_the_op_at_once():
    t = _t((4, 4))
    assert _calls(lambda x: pnp.add(x, x), t) == ["__call__"] + _calls(lambda x: x + x, t)
    assert _calls(lambda x: pnp.exp(x), t) == ["__call__"] + _calls(lambda x: pf.exp(x), t)
    out = np.empty((4, 4))
    assert pnp.exp(t, out) is out  # (a positional out= takes NumPy's path)
    np.testing.assert_allclose(out, np.exp(t.numpy()))
    np.testing.assert_allclose(pnp.add(t, [[1.0] * 4] * 4).numpy(), t.numpy() + 1.0)


def test_relu_tangent_keeps_float32_and_ties_share():
    x = pf.tensor(np.array([-1.0, 0.0, 2.0], dtype=np.float32))
    with fwAD.dual_level():
        d = fwAD.make_dual(x, pf.tensor(np.array([1.0, 1.0, 1.0], dtype=np.float32)))
        t = fwAD.unpack_dual(np.maximum(d, 0)).tangent
        t2 = fwAD.unpack_dual(np.maximum(d, pf.tensor(np.array([0.0, 5.0, 1.0], dtype=np.float32)))).tangent
        assert "fit_array" not in _calls(lambda v: np.maximum(v, 1.5), d)  # (no float64 mask to cast back)
    assert t.dtype == pf.float32
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.5, 1.0])  # (the tie at 0: half, as torch)
    np.testing.assert_array_equal(t2.numpy(), [0.0, 0.0, 1.0])


def test_drop_in_max_over_axes_reaches_the_op_at_once():
    # (maxpool's np.max(x[:, a:b, c:d, :], axis=(1, 2)) in a loop: no keyword checks, no axis
    # conversion, and the tangent's reductions without NumPy's Python wrappers)
    x = np.random.default_rng(8).random((2, 3, 4, 2))
    x[0, 1, 2, 1] = x[0, 0, 0, 1] = 2.0  # (a tie: the tangent is the mean of the tied ones')
    v = np.random.default_rng(9).random((2, 3, 4, 2))
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor(x), pf.tensor(v))
        calls = _calls(lambda y: pnp.max(y, axis=(1, 2)), d)
        assert calls[:4] == ["f", "f", "reduced", "amax"] and "expand_dims" not in calls and "_sum" not in calls, calls
        for axis in [(1, 2), (2, 1), 1, -1, None, (0, 1, 2, 3)]:
            p, t = fwAD.unpack_dual(pnp.max(d, axis=axis))
            want = np.max(x, axis=axis, keepdims=True)
            mask = x == want
            np.testing.assert_array_equal(p.numpy(), np.max(x, axis=axis))
            np.testing.assert_allclose(t.numpy(), (np.sum(v * mask, axis=axis) / np.sum(mask, axis=axis)))
        p, t = fwAD.unpack_dual(pnp.min(d, axis=(1, 2), keepdims=True))
        np.testing.assert_allclose(
            t.numpy(), np.take_along_axis(v.reshape(2, 12, 2), x.reshape(2, 12, 2).argmin(1)[:, None], 1)[:, :, None]
        )
