"""FFT: values against torch.fft on the op-database samples, adjoint identities
of the one-sided transforms (DC/Nyquist), and errors. Derivatives: the op database."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
from helpers import close, needs_torch, torch
from pushforward.errors import OpError
from pushforward.testing.opdb import OPS

NAMES = sorted(n for n in OPS if n.startswith("fft_"))


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_values_match_torch(name):
    from torch_oracle import check_against_torch

    fn = getattr(torch.fft, name[len("fft_") :])
    assert check_against_torch(name, fn, torch) > 0


def test_every_torch_fft_transform_is_there():
    for n in (
        "fft",
        "ifft",
        "rfft",
        "irfft",
        "hfft",
        "ihfft",
        "fft2",
        "ifft2",
        "rfft2",
        "irfft2",
        "fftn",
        "ifftn",
        "rfftn",
        "irfftn",
        "hfft2",
        "ihfft2",
        "hfftn",
        "ihfftn",
        "fftshift",
        "ifftshift",
        "fftfreq",
        "rfftfreq",
    ):
        assert callable(getattr(pf.fft, n))


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_rfft_irfft_gradients_are_adjoints(n, norm):
    """<irfft(X), y> = Re <X, irfft^*(y)>: the backward of irfft is its adjoint (one-sided bins
    doubled except DC and, for even n, Nyquist), and likewise for rfft."""
    rng = np.random.default_rng(n)
    m = n // 2 + 1
    X = pf.tensor(rng.standard_normal(m) + 1j * rng.standard_normal(m), requires_grad=True)
    y = rng.standard_normal(n)
    (pf.fft.irfft(X, n, norm=norm) * pf.tensor(y)).sum().backward()
    # numerical gradient (conjugate Wirtinger: d/dRe + i d/dIm)
    h = 1e-6
    x0 = X.detach().numpy()
    num = np.zeros(m, complex)
    for k in range(m):
        for unit in (1.0, 1j):
            e = np.zeros(m, complex)
            e[k] = h * unit
            d = (np.fft.irfft(x0 + e, n, norm=norm) @ y - np.fft.irfft(x0 - e, n, norm=norm) @ y) / (2 * h)
            num[k] += d * unit
    close(X.grad, num, 1e-6)
    x = pf.tensor(rng.standard_normal(n), requires_grad=True)
    Y = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    (pf.fft.rfft(x, norm=norm) * pf.tensor(Y).conj()).real.sum().backward()
    num = np.array(
        [
            (
                np.real(np.fft.rfft(x.detach().numpy() + h * np.eye(n)[k], norm=norm) @ Y.conj())
                - np.real(np.fft.rfft(x.detach().numpy() - h * np.eye(n)[k], norm=norm) @ Y.conj())
            )
            / (2 * h)
            for k in range(n)
        ]
    )
    close(x.grad, num, 1e-6)


def test_irfft_ignores_imaginary_dc_and_nyquist():
    X = pf.tensor(np.array([1.0 + 5j, 2.0 - 1j, 3.0 + 7j]), requires_grad=True)
    pf.fft.irfft(X, 4).sum().backward()
    assert X.grad.numpy()[0].imag == 0 and X.grad.numpy()[-1].imag == 0
    close(pf.fft.irfft(X, 4), np.fft.irfft(np.array([1.0, 2.0 - 1j, 3.0]), 4))


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: pf.fft.fft(pf.ones(4), norm="bad"), "Invalid normalization mode"),
        (lambda: pf.fft.rfft(pf.ones(4) * 1j), "real floating input"),
        (lambda: pf.fft.fft(pf.ones(4), 0), "invalid number of data points"),
        (lambda: pf.fft.fftn(pf.ones(2, 2), s=(2,), dim=(0, 1)), "same length"),
        (lambda: pf.fft.fft(pf.tensor(1.0)), "at least one dimension"),
    ],
)
def test_errors(call, match):
    with pytest.raises(OpError, match=match):
        call()


@needs_torch
@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 1, 0), (1, 0, 2)])
def test_results_laid_out_in_memory_as_torch(perm):
    """Layout decides which later reshapes are views, hence whether an in-place write after, say,
    matmul's fold breaks backward (fuzzer: rfft over dim 0, then .imag @ v, then a write): every
    transform lays out its result as torch does, also for non-contiguous inputs."""
    rng = np.random.default_rng(1)
    base = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    for arr in (base.real.copy(), base):
        t, p = torch.tensor(arr).permute(*perm), pf.tensor(arr).permute(*perm)
        calls = [(n, dict(dim=d)) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft") for d in (0, 1, -1)]
        calls += [
            (n, dict(dim=d))
            for n in ("fft2", "rfft2", "irfftn", "hfftn", "ihfftn", "ihfft2")
            for d in ((0, 1), (1, 2), (2, 0))
        ] + [(n, {}) for n in ("fftn", "rfftn", "ihfftn")]
        for name, kw in calls:
            try:
                want = getattr(torch.fft, name)(t, **kw)
            except RuntimeError:  # a real-input transform given a complex array
                continue
            got = getattr(pf.fft, name)(p, **kw).numpy()
            strides = tuple(s // got.itemsize for s in got.strides)
            assert strides == tuple(want.stride()), (name, kw, arr.dtype, strides, want.stride())
            assert np.allclose(got, want.resolve_conj().numpy())


@needs_torch
def test_complex_transform_of_an_expanded_real_input_is_laid_out_as_torch():
    """torch converts a real input to complex first: a dense layout is kept, an expanded one made
    contiguous (fuzzer: ifft2 of a broadcast real vector, then .view(8))."""
    v = np.random.default_rng(6).standard_normal(4)
    for kw in ({}, dict(dim=0), dict(dim=1)):
        name = "ifft2" if not kw else "fft"
        got = getattr(pf.fft, name)(pf.tensor(v).broadcast_to((2, 4)), **kw)
        want = getattr(torch.fft, name)(torch.tensor(v).broadcast_to((2, 4)), **kw)
        assert got.stride() == tuple(want.stride()) and np.allclose(got.numpy(), want.numpy())
