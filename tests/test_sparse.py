"""Sparse Jacobians and Hessians: detected patterns, colorings, exact values, SciPy hooks, errors."""

from __future__ import annotations

import doctest
import importlib
import pathlib
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import pushforward as pf
from pushforward.errors import OpTypeError, OpValueError
from pushforward.func import (
    column_coloring,
    hessian,
    hessian_sparsity,
    jacfwd,
    jacobian_sparsity,
    row_coloring,
    sparse_hessian,
    sparse_jacfwd,
    sparse_jacrev,
    star_coloring,
)
from pushforward.func.sparsity import ValueDependentError

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def _brusselator():
    sys.path.insert(0, str(EXAMPLES))
    try:
        return importlib.import_module("brusselator_sparse")
    finally:
        sys.path.pop(0)


# ---- random sparse programs


def _blocks(rng: np.random.Generator, n: int) -> list:
    """Maps of a length-n tensor to a length-n tensor, each with its constants drawn once."""
    a, b = (3, n // 3) if n % 3 == 0 else (1, n)
    perm = rng.permutation(n)
    idx = rng.integers(0, n, n)
    dense = rng.standard_normal((n, n))
    const = pf.as_tensor(np.where(rng.random((n, n)) < 0.15, dense, 0.0))
    mask = pf.as_tensor(rng.random(n) < 0.5)
    shift = int(rng.integers(1, n))

    def setitem(z):
        y = pf.zeros(n)
        y[1:] = z[:-1].sin()
        return y

    return [
        lambda z: z.sin(),
        lambda z: (0.1 * z).exp(),
        lambda z: z.tanh() * 2.0,
        lambda z: z * z,
        lambda z: z**3 / 4.0,
        lambda z: pf.cat([z[:1], z[1:] - z[:-1]]),
        lambda z: pf.cat([z[:2] * 0.5, z[2:] * z[:-2]]),
        lambda z: z.roll(shift) * z,
        lambda z: z[perm],
        lambda z: pf.gather(z, 0, pf.as_tensor(idx)) + z,
        lambda z: (z.reshape(a, b) * z.reshape(a, b).sum(1, keepdim=True)).reshape(-1),
        lambda z: const @ z,
        lambda z: (z.reshape(1, n) @ const).reshape(-1).cos(),
        lambda z: pf.where(mask, z.sin(), z * 2.0),
        lambda z: z.reshape(a, b).softmax(1).reshape(-1),
        lambda z: z.reshape(a, b).cumsum(1).reshape(-1),
        lambda z: z.reshape(a, b).T.reshape(-1),
        lambda z: z.flip(0) - z,
        lambda z: z.reshape(a, b).amax(1, keepdim=True).expand(a, b).reshape(-1) + z,
        lambda z: pf.stack([z[0::2], z[1::2]], 1).reshape(-1) if n % 2 == 0 else z,
        setitem,
    ]


def _program(seed: int, n: int = 12):
    rng = np.random.default_rng(seed)
    blocks = _blocks(rng, n)
    first = [blocks[i] for i in rng.integers(0, len(blocks), 3)]
    second = [blocks[i] for i in rng.integers(0, len(blocks), 2)]

    def f(x):
        y = x
        for blk in first:
            y = blk(y)
        z = x
        for blk in second:
            z = blk(z)
        return y * z.sin() + y

    return f, pf.as_tensor(rng.uniform(0.2, 0.9, n))


def _dense(j) -> np.ndarray:
    return j.detach().numpy() if isinstance(j, pf.Tensor) else np.asarray(j)


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_jacobian(seed):
    f, x = _program(seed)
    jd = _dense(jacfwd(f)(x))
    pat = jacobian_sparsity(f, x).toarray()
    assert pat.shape == jd.shape
    assert not (np.abs(jd) > 0)[~pat].any(), "a nonzero outside the detected pattern"
    for transform in (sparse_jacfwd, sparse_jacrev):
        j = transform(f)(x)
        assert isinstance(j, sp.csr_array) and j.shape == jd.shape
        np.testing.assert_allclose(j.toarray(), jd, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(25))
def test_random_programs_hessian(seed):
    f, x = _program(seed)
    w = pf.as_tensor(np.random.default_rng(seed + 100).standard_normal(x.numel()))

    def g(x):
        return (f(x) * w).sum()

    hd = _dense(hessian(g)(x))
    pat = hessian_sparsity(g, x).toarray()
    assert (pat == pat.T).all()
    assert not (np.abs(hd) > 1e-13)[~pat].any(), "a Hessian nonzero outside the detected pattern"
    np.testing.assert_allclose(sparse_hessian(g)(x).toarray(), hd, rtol=1e-12, atol=1e-12)


# ---- exact patterns


def test_brusselator_pattern_is_exactly_the_stencil():
    br = _brusselator()
    for n in (4, 8):
        f = br.make_rhs(n)
        got = jacobian_sparsity(f, pf.as_tensor(br.initial_state(n))).toarray()
        assert (got == br.stencil_pattern(n)).all()


@pytest.mark.parametrize("n", [32, 64])
def test_brusselator_needs_at_most_12_colors(n):
    br = _brusselator()
    pat = jacobian_sparsity(br.make_rhs(n), pf.as_tensor(br.initial_state(n)))
    colors = column_coloring(pat)
    assert colors.max() + 1 <= 12
    _check_column_coloring(pat.toarray(), colors)


def test_brusselator_sparse_jacobian_equals_jacfwd():
    br = _brusselator()
    f, y = br.make_rhs(6), pf.as_tensor(br.initial_state(6))
    jd = _dense(jacfwd(f)(y))
    np.testing.assert_allclose(sparse_jacfwd(f)(y).toarray(), jd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sparse_jacrev(f)(y).toarray(), jd, rtol=1e-12, atol=1e-12)


def test_patterns_of_basic_ops():
    x = pf.zeros(4)
    tri = np.eye(4, dtype=bool) | np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool)

    def stencil(z):
        return pf.cat([z[:1], z[:-2] - 2 * z[1:-1] + z[2:], z[-1:]])

    got = jacobian_sparsity(stencil, x).toarray()
    assert (got[1:3] == tri[1:3]).all() and got[0].tolist() == [True, False, False, False]
    # linear ops couple nothing; a product couples its factors' inputs
    h = hessian_sparsity(lambda z: (stencil(z) ** 2).sum(), x).toarray()
    assert (h == (tri | np.eye(4, k=2, dtype=bool) | np.eye(4, k=-2, dtype=bool))).all()
    assert hessian_sparsity(lambda z: (3 * z).sum() + z.sum(), x).nnz == 0
    cross = hessian_sparsity(lambda z: (z[:2] * z[2:]).sum(), x).toarray()
    assert cross.sum() == 4 and cross[0, 2] and cross[1, 3] and not cross[0, 0]
    # a constant sparse matrix: its nonzero structure, nothing more
    a = np.array([[1.0, 0, 0, 2], [0, 0, 0, 0], [0, 3, 0, 0]])
    assert (jacobian_sparsity(lambda z: pf.as_tensor(a) @ z, x).toarray() == (a != 0)).all()
    # a reduction over one dim: the rows it sums
    got = jacobian_sparsity(lambda z: z.reshape(2, 2).sum(0), x).toarray()
    assert got.tolist() == [[True, False, True, False], [False, True, False, True]]


def test_value_independent_control_flow_is_fine():
    def f(x):
        y = x.sin()
        if y.shape[0] > 2 and x.dtype == pf.float64:  # shapes and dtypes are not values
            y = y * pf.tensor(2.0)
        return pf.where(x > 0.5, y, -y)  # a value-dependent choice per element: both branches count

    assert (jacobian_sparsity(f, pf.ones(3)).toarray() == np.eye(3, dtype=bool)).all()


def test_inplace_writes_move_patterns():
    def f(x):
        y = pf.zeros(5)
        y[1:4] = x[:3] * 2.0
        y[0] = x[4]
        v = x.clone()
        v.add_(x.roll(1))
        return y + v

    jd = _dense(jacfwd(f)(pf.ones(5)))
    pat = jacobian_sparsity(f, pf.ones(5)).toarray()
    assert ((np.abs(jd) > 0) == pat).all()
    np.testing.assert_allclose(sparse_jacfwd(f)(pf.ones(5)).toarray(), jd, rtol=1e-12)


def test_inplace_writes_into_views_of_any_layout():
    """A write into a view of a column-major result (LAPACK's U of svd, elementwise ops keep its
    layout) or of a transpose moves patterns as into a contiguous one (it raised: transforms fuzz
    seed 90018838)."""

    def f(x):
        u = pf.linalg.svd(x.reshape(3, 3), full_matrices=False)[0]
        v = (u * u).real
        v.add_(x[:3])
        w = (x.reshape(3, 3) * 2.0).mT
        w[0].mul_(x[3:6])
        return (v + w).reshape(-1)

    x = pf.tensor(np.random.default_rng(3).standard_normal(9))
    jd = _dense(jacfwd(f)(x))
    pat = jacobian_sparsity(f, x).toarray()
    assert (pat | (np.abs(jd) == 0)).all()  # the pattern holds every nonzero
    np.testing.assert_allclose(sparse_jacfwd(f)(x).toarray(), jd, rtol=1e-10, atol=1e-12)


# ---- colorings


def _check_column_coloring(p: np.ndarray, colors: np.ndarray) -> None:
    for c in range(colors.max() + 1):
        assert (p[:, colors == c].sum(1) <= 1).all(), f"color {c}: two columns share a row"


def _random_symmetric(rng, n, density):
    a = rng.random((n, n)) < density
    return a | a.T | np.eye(n, dtype=bool)


@pytest.mark.parametrize("seed", range(10))
def test_colorings_are_valid(seed):
    rng = np.random.default_rng(seed)
    p = rng.random((30, 25)) < 0.12
    for order in ("largest_first", "smallest_last"):
        _check_column_coloring(p, column_coloring(sp.csr_array(p), order=order))
        _check_column_coloring(p.T, row_coloring(p, order=order))
    h = _random_symmetric(rng, 25, 0.08)
    colors = star_coloring(h)
    i, j = np.nonzero(h & ~np.eye(25, dtype=bool))
    assert (colors[i] != colors[j]).all()  # distance-1 on the graph
    # every nonzero recovered from H @ S without solving (what a star coloring guarantees)
    from pushforward.func.coloring import decompress_star, seed_matrix

    vals = np.triu(rng.standard_normal((25, 25)) * h)
    vals = vals + np.triu(vals, 1).T
    got = decompress_star(sp.csr_array(h), colors, vals @ seed_matrix(colors))
    np.testing.assert_array_equal(got.toarray(), vals)


def test_tridiagonal_star_coloring_uses_three_colors():
    n = 10_000
    tri = sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1], format="csr")
    assert star_coloring(tri).max() + 1 <= 3


def test_tridiagonal_hessian():
    def f(x):
        return ((x[1:] - x[:-1] ** 2) ** 2).sum() + (x**4).sum()

    x = pf.as_tensor(np.linspace(-1, 1, 50))
    pat = hessian_sparsity(f, x)
    assert star_coloring(pat).max() + 1 <= 3
    np.testing.assert_allclose(sparse_hessian(f)(x).toarray(), _dense(hessian(f)(x)), rtol=1e-12, atol=1e-12)


# ---- caching and given patterns


def test_detection_and_coloring_run_once_per_shape(monkeypatch):
    import pushforward.func.sparse_jacobians as sj

    calls = []
    real = sj.jacobian_sparsity

    def counting(f, x):
        calls.append(tuple(x.shape))
        return real(f, x)

    monkeypatch.setattr(sj, "jacobian_sparsity", counting)
    jac = sj.sparse_jacfwd(lambda z: z[1:] * z[:-1])
    for v in (1.0, 2.0, 3.0):
        jac(pf.full((4,), v))
    jac(pf.ones(6))
    assert calls == [(4,), (6,)]


def test_given_pattern_and_numpy_input():
    f = lambda z: z.sin() * 2.0  # noqa: E731
    j = sparse_jacfwd(f, pattern=np.eye(3))(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(j.toarray(), np.diag(2 * np.cos([0.0, 1.0, 2.0])), rtol=1e-14)


# ---- bad input


def test_value_dependent_branches_raise_with_the_way_out():
    def branch(x):
        return x if x.sum() > 0 else -x

    for f in (branch, lambda x: x * float(x[0]), lambda x: x * x[0].item(), lambda x: x[x > 0.5]):
        with pytest.raises(ValueDependentError, match="pattern="):
            jacobian_sparsity(f, pf.ones(3))
    with pytest.raises(ValueDependentError, match="sparse_jacfwd"):
        sparse_jacfwd(branch)(pf.ones(3))
    # with the pattern given there is nothing to detect
    j = sparse_jacfwd(branch, pattern=np.eye(3, dtype=bool))(pf.ones(3))
    np.testing.assert_array_equal(j.toarray(), np.eye(3))


def test_value_dependent_index_into_a_tensor_made_inside_f():
    def masked_write(x):
        c = pf.zeros(3)
        c[x > 0.5] = x[:1]
        return c

    def gathered_write(x):
        c = pf.zeros(3)
        c[x.argsort()] = x
        return c

    with pytest.raises(ValueDependentError, match="index_put"):
        jacobian_sparsity(masked_write, pf.ones(3))
    x = pf.tensor([0.3, 0.1, 0.2])
    pat = jacobian_sparsity(gathered_write, x).toarray()
    assert pat.all()  # any element may land anywhere: the superset
    np.testing.assert_allclose(sparse_jacfwd(gathered_write)(x).toarray(), _dense(jacfwd(gathered_write)(x)))


def test_value_dependent_index_gives_a_superset():
    f = lambda x: x[x.argmax()] * x  # noqa: E731
    x = pf.tensor([0.1, 0.9, 0.3])
    pat = jacobian_sparsity(f, x).toarray()
    assert pat.all()
    np.testing.assert_allclose(sparse_jacfwd(f)(x).toarray(), _dense(jacfwd(f)(x)), rtol=1e-12)


def test_bad_functions_and_patterns():
    x = pf.ones(3)
    with pytest.raises(OpTypeError, match="jacobian_sparsity: f must take one tensor and return one tensor"):
        jacobian_sparsity(lambda z: (z, z), x)
    with pytest.raises(OpTypeError, match="sparse_jacfwd: .*one tensor"):
        sparse_jacfwd(lambda z: z)((x, x))
    with pytest.raises(OpValueError, match=r"sparse_jacfwd: pattern has shape \(2, 3\).*shape \(3,\) to shape \(3,\)"):
        sparse_jacfwd(lambda z: z, pattern=np.ones((2, 3)))(x)
    with pytest.raises(OpValueError, match=r"sparse_jacrev: pattern has shape \(3, 4\), but the input has 3"):
        sparse_jacrev(lambda z: z, pattern=np.ones((3, 4)))(x)
    with pytest.raises(OpTypeError, match="sparse_jacfwd: pattern must be boolean"):
        sparse_jacfwd(lambda z: z, pattern=np.array([["a"]]))
    with pytest.raises(
        OpValueError, match=r"sparse_hessian: a Hessian pattern must be symmetric; pattern of shape \(2, 2\)"
    ):
        sparse_hessian(lambda z: z.sum(), pattern=np.array([[1, 1], [0, 1]]))
    with pytest.raises(OpValueError, match=r"hessian_sparsity: f must return a single element, got shape \(3,\)"):
        hessian_sparsity(lambda z: z * z, x)
    with pytest.raises(OpValueError, match="star_coloring: a Hessian pattern must be square"):
        star_coloring(np.ones((2, 3)))
    with pytest.raises(OpValueError, match="column_coloring: order must be"):
        column_coloring(np.eye(2), order="random")
    with pytest.raises(OpValueError, match="sparse_jacfwd: the input must be a floating tensor"):
        sparse_jacfwd(lambda z: z)(pf.arange(3))


def test_inplace_into_a_transposed_view():
    def f(x):
        y = pf.zeros(4, 4).T
        y[0] = x.sin()
        y[1:3, 1] = x[:2]
        return y.reshape(-1)

    x = pf.tensor([0.1, 0.2, 0.3, 0.4])
    jd = _dense(jacfwd(f)(x))
    assert ((np.abs(jd) > 0) == jacobian_sparsity(f, x).toarray()).all()


def test_inplace_into_the_real_part_of_a_complex_tensor():
    def f(x):
        y = pf.zeros(4, dtype=pf.complex128)
        y.real.copy_(x)
        return y.real

    np.testing.assert_array_equal(jacobian_sparsity(f, pf.ones(4)).toarray(), np.eye(4))


# ---- SciPy integration


@pytest.mark.parametrize("method", ["BDF", "Radau"])
def test_solve_ivp_with_the_sparse_jacobian(method):
    from scipy.integrate import solve_ivp

    br = _brusselator()
    n = 6
    f, y0 = br.make_rhs(n), br.initial_state(n)
    jac = sparse_jacfwd(f)

    def rhs(t, y):
        return f(pf.as_tensor(y)).numpy()

    kw = dict(method=method, rtol=1e-8, atol=1e-10)
    ad = solve_ivp(rhs, (0.0, 0.5), y0, jac=lambda t, y: jac(y), **kw)
    fd = solve_ivp(rhs, (0.0, 0.5), y0, jac_sparsity=br.stencil_pattern(n), **kw)
    assert ad.success and fd.success and ad.njev > 0
    np.testing.assert_allclose(ad.y[:, -1], fd.y[:, -1], rtol=1e-5, atol=1e-7)


def test_trust_constr_with_the_sparse_hessian():
    from scipy.optimize import minimize, rosen

    def chained(x):
        return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()

    grad = pf.func.grad(chained)
    hess = sparse_hessian(chained)
    x0 = np.full(20, 0.5)
    res = minimize(
        lambda x: float(chained(pf.as_tensor(x))),
        x0,
        jac=lambda x: grad(pf.as_tensor(x)).numpy(),
        hess=hess,
        method="trust-constr",
        options={"gtol": 1e-10, "xtol": 1e-12, "maxiter": 2000},
    )
    assert abs(rosen(res.x)) < 1e-12
    np.testing.assert_allclose(res.x, np.ones(20), atol=1e-6)


# ---- docs and examples


@pytest.mark.parametrize("module", ["patterns", "sparsity", "sparsity_rules", "coloring", "sparse_jacobians"])
def test_module_examples_run(module):
    mod = importlib.import_module(f"pushforward.func.{module}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0


def test_brusselator_example_runs_small():
    br = _brusselator()
    r = br.run(n=6, t_end=0.3)
    assert r["ad"].success and r["fd"].success and r["colors"] <= 12
    np.testing.assert_allclose(r["ad"].y[:, -1], r["fd"].y[:, -1], rtol=1e-4, atol=1e-6)


def test_doc_page_blocks_run():
    import re

    text = (EXAMPLES.parent / "docs" / "sparse.md").read_text()
    env: dict = {"__name__": "sparse_doc"}
    for code in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M):
        exec(compile(code, "docs/sparse.md", "exec"), env)


@pytest.mark.parametrize("name", ["sparse_jacfwd", "sparse_jacrev", "sparse_hessian"])
def test_sparse_transforms_take_one_input_and_say_how_to_pack_several(name):
    transform = getattr(pf.func, name)
    x, y = pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0])
    f = (lambda a, b: (a * b).sum()) if name == "sparse_hessian" else (lambda a, b: a * b)
    with pytest.raises(pf.errors.PushforwardError, match="take one input tensor.*pack them into one flat vector"):
        transform(f)(x, y)
    with pytest.raises(TypeError, match="keyword"):
        transform(lambda a: a)(x=x)
    packed = transform(lambda v: f(v[:2], v[2:]))(pf.cat([x, y]))
    assert packed.shape == ((4, 4) if name == "sparse_hessian" else (2, 4))


def test_an_in_place_write_into_the_real_or_imaginary_part_of_a_complex_tensor():
    # (it raised: the view has another dtype than its root; found by the transforms fuzz, seed 95008498)
    def f(x):
        z = x.to(pf.complex128) * pf.tensor([1.0, 2.0, 3.0])
        z.imag.copy_(x.roll(1, 0))
        z.real.mul_(2.0)
        return pf.cat([z.real, z.imag])

    x = pf.tensor([0.3, 0.5, 0.7])
    np.testing.assert_allclose(pf.func.sparse_jacfwd(f)(x).toarray(), pf.func.jacfwd(f)(x).numpy())
    # a part written keeps the other part's dependence: each complex element's pattern holds both
    pattern = pf.func.jacobian_sparsity(f, x).toarray()
    assert pattern[:3].tolist() == pattern[3:].tolist() == [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
