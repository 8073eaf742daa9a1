"""The NumPy and SciPy faces beyond the faces' database (tests/test_face_db.py sweeps every entry's
values and derivatives): the coverage table in the docs, functions without a derivative or a
handler, the SciPy special functions' branches, the drop-in's creation functions and lists."""

from __future__ import annotations

import warnings

import numpy
import pytest
import scipy
import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

import pushforward as pf
import pushforward.numpy as pnp
import pushforward.scipy as psp


def test_coverage_table_in_the_docs_is_current():
    from pathlib import Path

    from pushforward.numpy._coverage import END, START, coverage_markdown

    text = (Path(__file__).parent.parent / "docs" / "differentiating-numpy.md").read_text()
    block = text.split(START)[1].split(END)[0].strip()
    assert block == coverage_markdown(), (
        'docs/differentiating-numpy.md is stale: run python -c "from pushforward.numpy._coverage '
        "import write_docs; write_docs('docs/differentiating-numpy.md')\""
    )


def test_every_numpy_array_function_is_in_the_table():
    rows = {(ns, name) for ns, name, *_ in __import__("pushforward.numpy._coverage").numpy._coverage.coverage_rows()}
    for ns, mod in (("np", numpy), ("np.linalg", numpy.linalg), ("np.fft", numpy.fft)):
        for name in dir(mod):
            if not name.startswith("_") and hasattr(getattr(mod, name), "_implementation"):
                assert (ns, name) in rows, f"{ns}.{name}"


@pytest.mark.parametrize(
    "call",
    [
        lambda x: numpy.unique(x),
        lambda x: numpy.nextafter(x, x),
        lambda x: numpy.put_along_axis(x, numpy.array([0]), 1.0, 0),
    ],
)
def test_functions_without_a_derivative_raise_naming_them(call):
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"np\.(unique|nextafter|put_along_axis)"):
        call(x)


def test_a_numpy_function_with_no_handler_raises_naming_it(monkeypatch):
    from pushforward.numpy import _api as numpy_api

    table = dict(numpy_api._functions())
    del table[numpy.tile]
    monkeypatch.setattr(numpy_api, "_FUNCTIONS", table)
    with pytest.raises(TypeError, match=r"np\.tile has no pushforward op"):
        numpy.tile(pf.tensor([1.0], requires_grad=True), 2)
    # with no derivative to lose, NumPy computes on the values (the drop-in's plain tensors)
    r = numpy.tile(pf.tensor([1.0]), 2)
    assert isinstance(r, pf.Tensor) and r.tolist() == [1.0, 1.0]


def test_integer_results_are_computed_on_the_values():
    x = pf.tensor([3.0, 1.0, 2.0], requires_grad=True)
    r = numpy.argsort(x)
    assert isinstance(r, pf.Tensor) and r.dtype == numpy.int64
    assert r.tolist() == [1, 2, 0]
    assert numpy.count_nonzero(x > 1.5) == 2


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda v, x: psp.special.iv(v, x), "v"),
        (lambda v, x: psp.special.jn(v, x), "v"),
        (lambda a, x: psp.special.gammainc(a, x), "a"),
        (lambda a, x: psp.special.betainc(a, 2.0, x), "a"),
        (lambda df, x: psp.stats.t.cdf(x, df), "df"),
    ],
)
def test_a_derivative_that_does_not_exist_raises_naming_the_argument(call, arg):
    p = pf.tensor(1.5, requires_grad=True)
    with pytest.raises(NotImplementedError, match=arg):
        call(p, pf.tensor([0.5]))
    call(p.detach(), pf.tensor([0.5]))  # as a constant it computes


def test_scipy_special_ufuncs_dispatch_on_tensors():
    x = pf.tensor([0.3, 1.2], requires_grad=True)
    for name in ("erf", "gammaln", "expit", "psi", "i0", "erfinv", "logit"):
        y = getattr(scipy.special, name)(x * 0.5)
        assert isinstance(y, pf.Tensor), name
        numpy.testing.assert_allclose(y.detach().numpy(), getattr(scipy.special, name)(numpy.array([0.15, 0.6])))
    g = pf.func.grad(lambda t: scipy.special.xlogy(t, t).sum())(x)
    numpy.testing.assert_allclose(g.detach().numpy(), numpy.log([0.3, 1.2]) + 1)


@pytest.mark.parametrize("name", ["rel_entr", "kl_div", "huber", "pseudo_huber", "boxcox", "boxcox1p"])
def test_scipy_special_composites_special_values(name):
    """The composites' branches (zeros, negatives, infinities, NaN in either argument) give SciPy's
    values, and the boundary derivatives are those of the limits (entr's at 0, boxcox's series at 0)."""
    vals = [-numpy.inf, -2.0, -0.0, 0.0, 1e-300, 0.5, 1.0, 3.0, numpy.inf, numpy.nan]
    a, b = numpy.array([(u, v) for u in vals for v in vals]).T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(scipy.special, name)(a, b)
        got = getattr(psp.special, name)(pf.tensor(a), pf.tensor(b)).numpy()
    numpy.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_boxcox_derivative_in_lambda_at_zero():
    # d/dlmbda (x**lmbda - 1) / lmbda at lmbda = 0 is log(x)**2 / 2 (the quotient alone would give 0 / 0)
    g = pf.func.grad(lambda lm: psp.special.boxcox(pf.tensor(2.0), lm))(pf.tensor(0.0))
    numpy.testing.assert_allclose(g.item(), numpy.log(2.0) ** 2 / 2, rtol=1e-12)
    g = pf.func.grad(lambda t: psp.special.kl_div(t, pf.tensor(0.7)))(pf.tensor(0.0))
    assert g.item() == -numpy.inf  # log(x / y) at x = 0, as entr's derivative there


def test_pushforward_numpy_runs_numpy_without_tensors_and_creates_tensors():
    assert type(pnp.sum(numpy.ones(3))) is numpy.float64
    assert pnp.random is not None and pnp.pi == numpy.pi and pnp.newaxis is None
    # allocate, then fill: the creation functions make tensors
    for made in (pnp.zeros(2), pnp.empty((2, 2)), pnp.array([1.0, 2.0]), pnp.eye(2), pnp.random.rand(2)):
        assert type(made) is pf.Tensor
    assert pnp.array([1, 2]).dtype == numpy.int64 and pnp.arange(3).tolist() == [0, 1, 2]


def test_pushforward_numpy_reads_lists_holding_tensors():
    x = pf.tensor(2.0)
    assert pnp.array([x, 3.0]).tolist() == [2.0, 3.0]
    assert float(pnp.max([x, pf.tensor(5.0)])) == 5.0
    assert pnp.r_[pf.tensor([1.0]), 2.0].tolist() == [1.0, 2.0]
    assert pnp.c_[pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0])].shape == (2, 2)
    g = pf.func.grad(lambda t: pnp.sum(pnp.array([t, t * t]) ** 2))(x)
    assert float(g) == 2 * 2.0 + 4 * 2.0**3
