"""The NumPy and SciPy faces (testing/opdb_faces.py): every entry's values equal NumPy's/SciPy's,
through NumPy's own dispatch on tensors and through pushforward.numpy / pushforward.scipy, and its
derivatives pass gradcheck in both modes and at second order."""

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
from pushforward.testing.opdb_faces import NUMPY_FACES, SCIPY_FACES


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [x for o in out for x in _leaves(o)]
    return [out]


def _values(out):
    return [x.detach().numpy() if isinstance(x, pf.Tensor) else numpy.asarray(x) for x in _leaves(out)]


def _check_values(got, want, tol):
    g, w = _values(got), _values(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert a.shape == b.shape, (a.shape, b.shape)
        numpy.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _tensors(face):
    return [
        pf.tensor(numpy.asarray(x, dtype=float), requires_grad=i in face.argnums) for i, x in enumerate(face.inputs)
    ]


def _run(face, ns):
    def f(*diff):
        args = list(_tensors(face))
        for i, d in zip(face.argnums, diff):
            args[i] = d
        out = face.fn(ns, *args)
        return tuple(o for o in _leaves(out) if isinstance(o, pf.Tensor) and o.dtype.kind in "fc")

    return f


NUMPY_CASES = [
    (n, ns)
    for n in NUMPY_FACES
    for ns in ("dispatch", "pushforward.numpy")
    if NUMPY_FACES[n].dispatch or ns != "dispatch"
]


@pytest.mark.parametrize("name,ns", NUMPY_CASES, ids=[f"{n}-{ns}" for n, ns in NUMPY_CASES])
def test_numpy_face_values(name, ns):
    face = NUMPY_FACES[name]
    want = face.fn(numpy, *face.inputs)
    got = face.fn(numpy if ns == "dispatch" else pnp, *_tensors(face))
    assert all(isinstance(x, pf.Tensor) for x in _leaves(got)), type(got)
    _check_values(got, want, 1e-10)


@pytest.mark.parametrize("name,ns", NUMPY_CASES, ids=[f"{n}-{ns}" for n, ns in NUMPY_CASES])
def test_numpy_face_derivatives(name, ns):
    face = NUMPY_FACES[name]
    f = _run(face, numpy if ns == "dispatch" else pnp)
    xs = [t for i, t in enumerate(_tensors(face)) if i in face.argnums]
    assert pf.autograd.gradcheck(f, xs, check_forward_ad=True)
    if face.gradgrad:
        assert pf.autograd.gradgradcheck(f, xs)


@pytest.mark.parametrize("name", list(SCIPY_FACES))
def test_scipy_face_values(name):
    face = SCIPY_FACES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = face.fn(scipy, *face.inputs)
    got = face.fn(psp, *_tensors(face))
    _check_values(got, want, 1e-7 if name == "odeint" else 1e-9)


@pytest.mark.parametrize("name", list(SCIPY_FACES))
def test_scipy_face_derivatives(name):
    face = SCIPY_FACES[name]
    f = _run(face, psp)
    xs = [t for i, t in enumerate(_tensors(face)) if i in face.argnums]
    assert pf.autograd.gradcheck(f, xs, check_forward_ad=True)
    if face.gradgrad:
        assert pf.autograd.gradgradcheck(f, xs)
