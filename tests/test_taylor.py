"""Taylor mode (`pf.func.jet`): coefficients against mpmath to order 16, against nested dual levels
on every op of the op database to order 4, high orders, composition with the other transforms,
and the errors."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.func import jet
from pushforward.func.jet import jet_by_rules
from pushforward.testing.taylor_check import check_jet, nested_derivatives

mp = pytest.importorskip("mpmath")

X0 = [0.3, -0.7, 1.1]
V = [1.0, 0.5, -0.8]
W = [0.2, -0.4, 0.3]  # the curve's second derivative: x(t) = x0 + v t + w t^2 / 2
M = [[1.0, 0.2, -0.3], [0.1, 0.8, 0.4], [-0.2, 0.5, 1.2]]


def _mp_softplus(z):
    return mp.log(1 + mp.exp(z))


def _mp_mv(m, x):
    return [mp.fsum(m[i][j] * x[j] for j in range(len(x))) for i in range(len(m))]


def _mp_softmax(z):
    e = [mp.exp(v) for v in z]
    s = mp.fsum(e)
    return [v / s for v in e]


def _mp_solve(x):
    a = mp.matrix([[M[i][j] + (x[i] ** 2 + 2 if i == j else 0) for j in range(3)] for i in range(3)])
    b = mp.matrix([mp.exp(v) for v in x])
    return list(mp.lu_solve(a, b))


def _pf_solve(x):
    a = pf.tensor(M) + pf.diag_embed(x * x + 2)
    return pf.linalg.solve(a, pf.exp(x))


# (name, pf function of a 3-vector, mpmath function of a list of 3 mpf, -> list of outputs)
COMPOSITIONS = [
    ("exp_sin", lambda x: pf.exp(pf.sin(x)), lambda x: [mp.exp(mp.sin(v)) for v in x]),
    ("log_tanh", lambda x: pf.log(1 + x * x) * pf.tanh(x), lambda x: [mp.log(1 + v * v) * mp.tanh(v) for v in x]),
    ("div_exp", lambda x: x / (1 + pf.exp(-x)), lambda x: [v / (1 + mp.exp(-v)) for v in x]),
    ("pow_sqrt", lambda x: pf.sqrt(2 + pf.cos(x)) ** 1.7, lambda x: [mp.sqrt(2 + mp.cos(v)) ** 1.7 for v in x]),
    ("pow_series", lambda x: (2 + x) ** pf.sin(x), lambda x: [(2 + v) ** mp.sin(v) for v in x]),
    (
        "erf_softplus",
        lambda x: pf.erf(x) * pf.nn.functional.softplus(x),
        lambda x: [mp.erf(v) * _mp_softplus(v) for v in x],
    ),
    ("sigmoid_recip", lambda x: pf.sigmoid(x) / (3 + x), lambda x: [1 / (1 + mp.exp(-v)) / (3 + v) for v in x]),
    ("sinh_atan", lambda x: pf.sinh(x) * pf.atan(x), lambda x: [mp.sinh(v) * mp.atan(v) for v in x]),  # derived
    (
        "matmul",
        lambda x: pf.tensor(M) @ pf.sin(x) + pf.outer(x, x) @ pf.tanh(x),
        lambda x: [
            a + b
            for a, b in zip(
                _mp_mv(M, [mp.sin(v) for v in x]), _mp_mv([[p * q for q in x] for p in x], [mp.tanh(v) for v in x])
            )
        ],
    ),
    ("softmax", lambda x: pf.softmax(pf.tensor(M) @ x, 0), lambda x: _mp_softmax(_mp_mv(M, x))),
    ("logsumexp", lambda x: pf.logsumexp(x * x, 0), lambda x: [mp.log(mp.fsum(mp.exp(v * v) for v in x))]),
    ("solve", _pf_solve, _mp_solve),
]


def _mp_coefficients(g, order):
    """Normalised Taylor coefficients of each output of t -> g(x(t)), x(t) = x0 + v t + w t^2/2."""
    with mp.workdps(40):

        def curve(t):
            return [mp.mpf(a) + mp.mpf(b) * t + mp.mpf(c) * t * t / 2 for a, b, c in zip(X0, V, W)]

        n = len(g(curve(mp.mpf(0))))
        return [[float(c) for c in mp.taylor(lambda t, i=i: g(curve(t))[i], 0, order)] for i in range(n)]


@pytest.mark.parametrize("name,f,g", COMPOSITIONS, ids=[c[0] for c in COMPOSITIONS])
def test_compositions_agree_with_mpmath_to_order_16(name, f, g):
    order = 16
    series = [pf.tensor(V), pf.tensor(W)] + [pf.zeros(3)] * (order - 2)
    y, terms = jet(f, (pf.tensor(X0),), (series,))
    want = np.array(_mp_coefficients(g, order))  # (outputs, order + 1)
    got = np.stack(
        [np.atleast_1d(y.numpy())] + [np.atleast_1d(t.numpy()) / math.factorial(k + 1) for k, t in enumerate(terms)], 1
    )
    scale = np.max(np.abs(want), axis=0)  # per order
    err = np.max(np.abs(got - want), axis=0)
    assert np.all(err <= 1e-9 * scale + 1e-15), (name, err / np.maximum(scale, 1e-300))


def test_order_30_does_not_overflow():
    x0 = pf.tensor([0.5])
    series = [pf.tensor([1.0])] + [pf.zeros(1)] * 29
    _, terms = jet(lambda x: 1 / (1 - x), (x0,), (series,))
    for k, t in enumerate(terms, start=1):  # d^k/dx^k 1/(1-x) = k! / (1-x)^(k+1)
        want = math.factorial(k) * 2.0 ** (k + 1)
        assert abs(float(t[0]) - want) <= 1e-11 * want, k
    _, terms = jet(lambda x: pf.sin(2 * x), (x0,), (series,))
    for k, t in enumerate(terms, start=1):
        want = 2.0**k * math.sin(1.0 + k * math.pi / 2)
        assert abs(float(t[0]) - want) <= 1e-9 * 2.0**k, k


def test_jet_convention_is_jax_derivatives_along_a_curve():
    # x(t) = t^2 / 2 (series [0, 1]): f = x^2 = t^4 / 4 has f'' = 0 at 0 with 2 terms; 4 terms: f'''' = 6
    y, terms = jet(
        lambda x: x * x, (pf.tensor(0.0),), ([pf.tensor(0.0), pf.tensor(1.0), pf.tensor(0.0), pf.tensor(0.0)],)
    )
    assert [float(t) for t in terms] == [0.0, 0.0, 0.0, 6.0]


def test_several_inputs_tuple_outputs_and_constants():
    x, y = pf.tensor([0.5, 1.5]), pf.tensor(2.0)
    vx, vy = pf.tensor([1.0, -1.0]), pf.tensor(0.5)
    zx, zy = pf.zeros(2), pf.tensor(0.0)

    def f(a, b):
        return {"prod": a * b, "pair": (pf.sin(a).sum(), pf.ones(3))}

    out, terms = jet(f, (x, y), ([vx, zx, zx], [vy, zy, zy]))
    assert set(out) == {"prod", "pair"} and len(terms["pair"][1]) == 3
    assert all(float(t.abs().sum()) == 0 for t in terms["pair"][1])  # a constant output
    np.testing.assert_allclose(terms["prod"][1].numpy(), 2 * vx.numpy() * 0.5)  # (a b)'' = 2 a' b'
    want = nested_derivatives(f, (x, y), (vx, vy), 3)
    for k in range(3):
        np.testing.assert_allclose(terms["pair"][0][k].numpy(), want[k][1].numpy(), rtol=1e-12)


def test_zero_order_is_the_primal():
    y, terms = jet(pf.exp, (pf.tensor([1.0]),), ([],))
    assert terms == [] and np.allclose(y.numpy(), np.e)


# ---- composition with the other transforms


def test_jet_inside_a_dual_level():
    x, u, v = pf.tensor([0.4, 1.0]), pf.tensor([1.0, 2.0]), pf.tensor([0.5, -1.0])
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, u)
        _, terms = jet(pf.sin, (xd,), ([v, pf.zeros(2), pf.zeros(2)],))
        tangent = fwAD.unpack_dual(terms[2]).tangent
    # d/ds of v^3 sin'''(x + s u) = u v^3 sin''''(x) = u v^3 sin(x)
    np.testing.assert_allclose(tangent.numpy(), (u * v**3 * pf.sin(x)).numpy(), rtol=1e-12)


def test_grad_of_a_jet():
    v = pf.tensor([0.5, -1.0])

    def third(x):
        return jet(pf.tanh, (x,), ([v, pf.zeros(2), pf.zeros(2)],))[1][2].sum()

    x = pf.tensor([0.3, -0.2])
    g = pf.func.grad(third)(x)
    h = 1e-6
    num = [(float(third(x + h * e)) - float(third(x - h * e))) / (2 * h) for e in pf.eye(2)]
    np.testing.assert_allclose(g.numpy(), num, rtol=1e-6)


def test_vmap_of_jet():
    xs = pf.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    v = pf.tensor([1.0, -0.5])

    def f(x):
        return jet(lambda z: pf.exp(z).sum() * pf.sin(z), (x,), ([v, pf.zeros(2), pf.zeros(2)],))[1]

    batched = pf.func.vmap(f)(xs)
    for i in range(3):
        for k in range(3):
            np.testing.assert_allclose(batched[k][i].numpy(), f(xs[i])[k].numpy(), rtol=1e-12)


# ---- order 4 against nested dual levels, on every op of the op database

# Ops without a Taylor rule (their formulas or composites read arrays, or the op is not
# differentiable): the interpreter refuses them and jet runs them by nested dual levels. The list
# only shrinks.
REFUSED = {
    "binary_cross_entropy", "cummax", "cummin", "gaussian_nll_loss", "linalg_cond",
    "linalg_eigvals", "linalg_matrix_norm", "linalg_svdvals", "median", "mode", "mvlgamma", "nanmedian",
    "nanquantile", "quantile", "repeat", "scatter_reduce", "tile", "batch_norm", "linalg_lu_factor",
}  # fmt: skip


def _opdb():
    from pushforward.testing.opdb import OPS

    return OPS


@pytest.mark.parametrize("name", sorted(n for n, info in _opdb().items() if info.differentiable))
def test_taylor_column_of_the_op_database(name):
    from pushforward.testing.opdb import F64, check_taylor

    info = _opdb()[name]
    res = {"error": None}
    ok = check_taylor(info, [s for s in info.samples(F64) if s.grad][:2], res)
    if name in REFUSED:
        assert ok is None or ok is True, res["error"]
    else:
        assert ok is True, res["error"] or f"jet refused {name}"


# ---- errors


def test_an_op_without_a_rule_names_itself_and_jet_falls_back_to_nested_levels():
    x, index = pf.tensor([1.0, 2.0, 3.0]), pf.tensor([0, 0, 1])

    def f(z):
        return pf.scatter_reduce(z, 0, index, z, "prod")

    with pytest.raises(NotImplementedError, match="jet: no Taylor rule for scatter_reduce"):
        jet_by_rules(f, (x,), ([pf.ones(3), pf.zeros(3)],))
    _agrees_with_nested_levels(f, x, pf.ones(3))
    # a singular matrix: det's recurrence needs A_0^-1, and its formula (the adjugate) reads arrays
    with pytest.raises(NotImplementedError, match="jet: no Taylor rule for det"):
        jet_by_rules(pf.linalg.det, (pf.ones(2, 2),), ([pf.eye(2), pf.zeros(2, 2)],))
    _agrees_with_nested_levels(pf.linalg.det, pf.ones(2, 2), pf.eye(2))


def _agrees_with_nested_levels(f, x, v, order=3):
    y, terms = jet(f, (x,), ([v] + [pf.zeros_like(v)] * (order - 1),))
    want = nested_derivatives(f, [x], [v], order)
    np.testing.assert_allclose(y.numpy(), f(x).numpy(), rtol=1e-12)
    for k in range(order):
        np.testing.assert_allclose(terms[k].numpy(), want[k][0].numpy(), rtol=1e-10, atol=1e-12)


def test_non_differentiable_floating_ops_are_refused():
    x = pf.tensor([[2.0, 1.0], [1.0, 3.0]])
    with pytest.raises(NotImplementedError, match="_linalg_svdvals is not differentiable"):
        jet_by_rules(pf.linalg.svdvals, (x,), ([pf.ones(2, 2)],))
    _agrees_with_nested_levels(pf.linalg.svdvals, x, pf.ones(2, 2))


def test_bad_calls():
    x = pf.tensor([1.0, 2.0])
    with pytest.raises(pf.errors.OpValueError, match=r"series\[0\]\[0\] has shape \(3,\)"):
        jet(pf.sin, (x,), ([pf.ones(3)],))
    with pytest.raises(pf.errors.OpValueError, match="dtype float32"):
        jet(pf.sin, (x,), ([pf.ones(2, dtype=pf.float32)],))
    with pytest.raises(pf.errors.OpValueError, match="same number of terms"):
        jet(pf.mul, (x, x), ([x], [x, x]))
    with pytest.raises(pf.errors.OpTypeError, match="needs a floating"):
        jet(pf.sin, (pf.tensor([1, 2]),), ([pf.tensor([1, 2])],))
    with pytest.raises(pf.errors.OpTypeError, match="must be tuples"):
        jet(pf.sin, x, [x])
    with pytest.raises(NotImplementedError, match="in-place add_ writing a Taylor series into a tensor that is not"):
        jet_by_rules(lambda z: pf.zeros(2).add_(z), (x,), ([x],))
    with pytest.raises(pf.errors.OpTypeError, match="must return tensors"):
        jet(lambda z: 3, (x,), ([x],))


def test_reverse_mode_inside_jet_runs_by_nested_levels():
    g = pf.func.grad(lambda x: (x**3).sum())  # 3 x^2
    x = pf.tensor([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="reverse mode inside jet"):
        jet_by_rules(g, (x,), ([x, x],))
    y, (d1, d2) = jet(g, (x,), ([pf.ones(2), pf.zeros(2)],))
    np.testing.assert_allclose(y.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(d1.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(d2.numpy(), [6.0, 6.0])
    # writing a series into a plain tensor, out of the rules' reach, also falls back
    _agrees_with_nested_levels(lambda z: pf.zeros(2).add_(z * z), x, pf.ones(2))


def test_nested_jets():
    x = pf.tensor([1.0])

    def outer(a):  # d/dt (a * (b + t)) at t = 0 for b = a: a
        return jet(lambda b: a * b, (a,), ([pf.ones(1)],))[1][0]

    with pytest.raises(NotImplementedError, match="nested jets"):
        jet_by_rules(outer, (x,), ([x],))
    _agrees_with_nested_levels(outer, pf.tensor([1.5]), pf.ones(1))


def test_reading_a_series_array_is_refused_by_the_rules():
    # nested dual levels read the primal of a dual tensor there, as np.asarray of any dual does
    with pytest.raises(NotImplementedError, match="reads a tensor's array directly"):
        jet_by_rules(lambda z: pf.tensor(np.asarray(z)), (pf.tensor([1.0]),), ([pf.tensor([1.0])],))


def test_checker_catches_a_wrong_rule(monkeypatch):
    from pushforward.ops.formulas import taylor as rules

    monkeypatch.setattr(rules, "series_exp", lambda op, xs, args, K: [pf.exp(xs[0][0])] + [xs[0][0]] * K)
    with pytest.raises(AssertionError, match="jet order 1"):
        check_jet(pf.exp, (pf.tensor([0.5]),), (pf.tensor([1.0]),), order=2)


# ---- the taylor: key of derivatives.yaml


def _load(tmp_path, body):
    from pushforward.codegen.load import load

    p = tmp_path / "derivatives.yaml"
    p.write_text(textwrap.dedent(body))
    return load(p)


def test_yaml_taylor_key_is_validated(tmp_path):
    from pushforward.codegen.load import SpecError

    ok = """
    - name: myexp(Tensor self) -> Tensor
      kernel: xp.exp
      taylor: series_exp
      self: grad * result.conj()
      result: auto_element_wise
    """
    assert _load(tmp_path, ok)[0].taylor == "series_exp"
    with pytest.raises(SpecError, match="unknown Taylor rule 'series_nope'.*series_exp"):
        _load(tmp_path, ok.replace("series_exp", "series_nope"))
    with pytest.raises(SpecError, match="composite"):
        _load(
            tmp_path,
            """
            - name: mycomp(Tensor self) -> Tensor
              composite: c_thing(self)
              taylor: series_exp
            """,
        )


def test_in_place_ops_on_series_write_every_coefficient():
    def f(x):
        y = x * 1.0
        first = y[0]  # a view: sees the writes into y
        y.exp_()
        y.mul_(x)
        return y + first

    check_jet(f, (pf.tensor([0.3, 0.5]),), (pf.tensor([1.0, 2.0]),), order=3)
    x, v = pf.tensor([0.3]), pf.tensor([1.0])
    jet(lambda z: (z + 0.0).sin_(), (x,), ([v, v],))
    assert x.tolist() == [0.3] and v.tolist() == [1.0]  # the inputs are not written


def test_a_write_through_a_maybe_view_of_a_transposed_result_reaches_every_coefficient():
    """`.real` of a real series is a view of it: its coefficients stay views of the input's (they
    were laid out anew like an element-wise op's, copies, so the write was lost above order 0)."""

    def f(x):
        y = x.transpose(0, -1).log_softmax(-1)
        y.real.neg_()
        return y

    check_jet(
        f,
        (pf.tensor([[-1.1, 1.2, -1.2], [-0.9, 1.2, 0.7]]),),
        (pf.tensor([[-0.7, -0.8, -0.5], [0.1, -0.1, -0.6]]),),
        order=3,
    )


def test_results_own_their_coefficients():
    # the same op twice (a cache hit) and a derived rule's lower coefficients: an in-place write into
    # one result must not reach the other
    def f(x):
        a, b = x.mean(), x.mean()
        b.add_(b)
        c, d = pf.atan(x), pf.atan(x)  # atan: the derived rule
        d.mul_(3.0)
        return a, c

    check_jet(f, (pf.tensor([0.4, -0.2]),), (pf.tensor([1.0, 0.5]),), order=3)


def test_detach_is_a_constant_as_for_dual_levels():
    check_jet(
        lambda x: x.detach() * x + (x - x.max().detach()).exp(), (pf.tensor([0.4, -0.2]),), (pf.tensor([1.0, 0.5]),)
    )


def test_jet_inside_a_batched_dual_level():
    x, v = pf.tensor([0.4, 1.0]), pf.tensor([0.5, -1.0])
    U = pf.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])

    def third(z):
        return jet(lambda a: pf.tanh(a) * a, (z,), ([v, pf.zeros(2), pf.zeros(2)],))[1][2]

    with fwAD.dual_level(batch=3):
        batched = np.asarray(fwAD.unpack_dual(third(fwAD.make_dual(x, U))).tangent)
    for b in range(3):
        with fwAD.dual_level():
            row = fwAD.unpack_dual(third(fwAD.make_dual(x, U[b]))).tangent
        np.testing.assert_allclose(batched[b], row.numpy(), rtol=1e-13)


def _meshgrid_then_write(x0):
    _, v2 = pf.meshgrid(x0, x0, indexing="ij")  # views of x0 (twice the same view op: never a cached copy)
    x0.neg_()
    return v2


def _narrow_prod_then_write(x0, x1):
    v3 = x0.narrow(0, 1, 1).prod()  # a product of one slice: its own memory, not a view of x0
    x0.div_(x1)
    return v3


def _broadcast_then_write(x0):
    _, v2 = pf.broadcast_tensors(x0, x0)
    v2.pow_(3)
    return x0


@pytest.mark.parametrize(
    "f,xs",
    [
        (_meshgrid_then_write, (pf.tensor(-0.7 + 1.1j),)),
        (_narrow_prod_then_write, (pf.tensor([0.4, 1.4, 1.1, 1.3]), pf.tensor([1.5]))),
        (_broadcast_then_write, (pf.tensor(-0.8),)),
    ],
)
def test_in_place_writes_reach_views_and_only_views(f, xs):
    check_jet(f, xs, tuple(pf.ones_like(x) for x in xs), order=3)


def test_norms_of_empty_and_zero_tensors():
    check_jet(lambda x: x.norm(2, (0, 1), keepdim=True), (pf.zeros(0, 3),), (pf.zeros(0, 3),), order=3)
    check_jet(lambda x: x.norm(), (pf.zeros(2),), (pf.ones(2),), order=2)  # the formula's convention at 0


def test_series_are_laid_out_as_eager_results_so_reshapes_alias_alike():
    # an element-wise op on permuted inputs lays its result out as torch does (not C order); a
    # flatten of it is then a copy, and an in-place write into the copy must not reach the result.
    # The series' coefficients follow the eager layout (a fuzzer finding of the jet mode).
    def f(x0):
        v1 = (x0.mT.abs() + 0.5) ** x0.mT.contiguous().tanh()
        v2 = v1.flatten()
        v2.cos_()
        return v1

    x = pf.tensor(np.array([[[-1.3, 0.6], [0.4, 0.4], [-0.8, -1.0]], [[-0.6, -1.4], [-1.5, -1.2], [-0.7, -0.5]]]))
    v = pf.ones(2, 3, 2)
    _, series = jet(f, (x,), ([v, pf.zeros_like(v), pf.zeros_like(v)],))
    want = nested_derivatives(f, [x], [v], 3)
    for k in range(3):
        np.testing.assert_allclose(series[k].numpy(), want[k][0].numpy(), rtol=1e-12, atol=1e-12)


def test_vander_at_an_exact_zero_has_exact_series():
    # vander is built by successive products: at an input exactly 0 (x / x - 1 here, with a zero
    # series) its Taylor coefficients are exact, as nested dual levels give them (x ** k with a
    # constant tensor exponent divided by x_0; a fuzzer finding of the jet mode)
    def f(x):
        return pf.linalg.vander((x / x).lgamma())

    x, v = pf.tensor([-1.1, -1.4, -1.3, -0.4]), pf.ones(4)
    _, series = jet(f, (x,), ([v, pf.zeros_like(v), pf.zeros_like(v)],))
    want = nested_derivatives(f, [x], [v], 3)
    for k in range(3):
        assert np.isfinite(series[k].numpy()).all()
        np.testing.assert_allclose(series[k].numpy(), want[k][0].numpy(), rtol=1e-12, atol=1e-12)
