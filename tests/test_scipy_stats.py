"""pushforward.scipy.stats against SciPy where the faces database does not sample: outside a
distribution's support."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import pushforward as pf
from pushforward.scipy import stats

# (distribution, shape arguments, points below and above the support's lower end)
CASES = [
    ("gamma", (2.5,), [-1.0, 0.5, 3.0]),
    ("chi2", (3.0,), [-1.0, 0.5, 3.0]),
    ("beta", (2.0, 3.0), [-0.5, 0.25, 1.5]),
]


@pytest.mark.parametrize("name, shape, x", CASES)
def test_logpdf_outside_the_support_is_minus_inf_as_scipy(name, shape, x):
    # (the log density at x < loc was nan: the log of a negative number, masked by `value * 0 - inf`)
    got = getattr(stats, name).logpdf(pf.tensor(x), *shape, 0.1, 1.5).numpy()
    want = getattr(scipy.stats, name).logpdf(np.array(x), *shape, loc=0.1, scale=1.5)
    np.testing.assert_allclose(got, want)
    assert np.isneginf(got).any()


def test_poisson_logpmf_off_the_counts_is_minus_inf_as_scipy():
    k = np.array([-1.0, 0.5, 2.0])
    got = stats.poisson.logpmf(k, pf.tensor(1.5)).numpy()
    np.testing.assert_allclose(got, scipy.stats.poisson.logpmf(k, 1.5))


def test_chi2_is_the_gamma_of_half_the_degrees_of_freedom_in_value_and_derivative():
    x = pf.tensor([0.5, 2.0, 4.0])
    df = pf.tensor(3.0, requires_grad=True)
    stats.chi2.logpdf(x, df, 0.0, 2.0).sum().backward()
    want = scipy.stats.chi2.logpdf(x.numpy(), 3.0, scale=2.0).sum()
    np.testing.assert_allclose(stats.chi2.logpdf(x, 3.0, 0.0, 2.0).sum().item(), want)
    h = 1e-6
    fd = (
        scipy.stats.chi2.logpdf(x.numpy(), 3.0 + h, scale=2.0) - scipy.stats.chi2.logpdf(x.numpy(), 3.0 - h, scale=2.0)
    ).sum() / (2 * h)
    np.testing.assert_allclose(df.grad.item(), fd, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="chi2.cdf: the derivative with respect to df"):
        stats.chi2.cdf(x, df)
