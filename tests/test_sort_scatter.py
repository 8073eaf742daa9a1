"""Sorting, scans, scatter and indexing ops of issue 13 against PyTorch (values, indices, vjp and
jvp on the op-database samples), tie rules, and error messages."""
from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
from pushforward.errors import OpError

from torch_compare import compare, torch


def _q(fn):
    def call(x, q, *a, **k):
        return fn(x, q if isinstance(q, float) else torch.as_tensor(q, dtype=x.dtype), *a, **k)
    return call


SORT = {
    "sort": torch.sort, "argsort": torch.argsort, "topk": torch.topk, "kthvalue": torch.kthvalue,
    "median": torch.median, "nanmedian": torch.nanmedian, "quantile": _q(torch.quantile),
    "nanquantile": _q(torch.nanquantile), "mode": torch.mode, "cummax": torch.cummax, "cummin": torch.cummin,
    "logcumsumexp": torch.logcumsumexp, "nansum": torch.nansum, "nanmean": torch.nanmean,
    "var_mean": torch.var_mean, "std_mean": torch.std_mean,
    "aminmax": torch.aminmax, "diff": torch.diff, "dist": torch.dist,
}


@pytest.mark.parametrize("name", sorted(SORT))
def test_sorting_matches_torch(name):
    compare(name, SORT[name])


def test_sort_ties_are_stable_like_torch():
    x = [1.0, 3.0, 1.0, 2.0, 3.0, float("nan")]
    for desc in (False, True):
        v, i = pf.sort(pf.tensor(x), descending=desc, stable=True)
        tv, ti = torch.sort(torch.tensor(x, dtype=torch.float64), descending=desc, stable=True)
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
        np.testing.assert_array_equal(v.numpy(), tv.numpy())


def test_median_is_the_lower_median():
    assert float(pf.median(pf.tensor([1.0, 4.0, 2.0, 3.0]))) == 2.0


def test_sort_gradient_follows_the_permutation():
    x = pf.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, _ = pf.sort(x)
    (g,) = pf.autograd.grad((v * pf.tensor([1.0, 10.0, 100.0])).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [100.0, 1.0, 10.0])


@pytest.mark.parametrize("call, match", [
    (lambda: pf.topk(pf.ones(3), 4), r"topk: k \(4\) is out of range.*size 3"),
    (lambda: pf.kthvalue(pf.ones(3), 0), r"kthvalue: k \(0\)"),
    (lambda: pf.quantile(pf.ones(3), 1.5), r"quantile\(\) q values must be in the range \[0, 1\], got 1.5"),
    (lambda: pf.quantile(pf.ones(3), 0.5, interpolation="cubic"), r"quantile\(\) interpolation.*'cubic'"),
    (lambda: pf.sort(pf.ones(2), 3), r"sort: Dimension out of range"),
    (lambda: pf.diff(pf.tensor(1.0)), r"diff expects input to be at least one-dimensional"),
])
def test_bad_input_errors(call, match):
    with pytest.raises(OpError, match=match):
        call()
