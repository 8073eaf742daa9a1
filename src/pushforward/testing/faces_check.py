"""The checks of the faces' database, one entry at a time: values and dtypes against the reference
namespace (NumPy, SciPy or array_api_strict; where the reference raises, the face raises the same
error class), gradcheck in reverse and forward mode and at second order, and the entry's function
under vmap, jet, pf.compile and on Dask-backed inputs, each the op database's generic check
(tests/test_ops.py, testing/taylor_check.py, testing/lazycheck.py) run on the face's function.

>>> from pushforward.testing.faceinfo import V3
>>> import numpy, pushforward.numpy as pnp
>>> f = Face(lambda np, a: np.sin(a), (V3,))
>>> check_values(f, numpy, pnp); run_check(f, "vmap", pnp)
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..autograd.gradcheck import gradcheck, gradgradcheck
from ..compiler import compile as compile_fn
from ..core.lazy import LazyUnsupportedError
from ..core.tensor import Tensor
from ..func.vmapping import vmap
from .faceinfo import Face, face_function, face_inputs, leaves
from .lazycheck import check_lazy_sample
from .opinfo import OpInfo, SampleInput
from .taylor_check import check_jet

__all__ = ["check_values", "run_check", "reference_call", "Unsupported"]

_ERRORS = (TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError, NotImplementedError)


class Unsupported(Exception):
    """A transform refuses the entry's function with its own clear error (Dask cannot run an op)."""


def _ref_inputs(face: Face, asarray: Callable | None) -> list:
    return [
        x if asarray is None or type(x) in (int, float, complex, bool) else asarray(np.asarray(x)) for x in face.inputs
    ]


def reference_call(face: Face, ref_ns: Any, asarray: Callable | None = None) -> Any:
    """The entry's body on the reference namespace's arrays (seeded for a random function)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if face.seeded:
            np.random.seed(0)
        return face.fn(ref_ns, *_ref_inputs(face, asarray))


def _face_call(face: Face, ns: Any, asarray: Callable | None) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if face.seeded:
            np.random.seed(0)
        return face.fn(ns, *face_inputs(face, asarray))


def _is_array(v: Any) -> bool:
    return isinstance(v, (np.ndarray, np.generic)) or (not isinstance(v, type) and hasattr(v, "__array_namespace__"))


def _compare(got: Any, want: Any, tol: float, plain: bool = False) -> None:
    g, w = leaves(got), leaves(want)
    if len(g) != len(w):
        raise AssertionError(f"{len(g)} results, the reference has {len(w)}")
    for i, (a, b) in enumerate(zip(g, w)):
        if not _is_array(b):
            if isinstance(a, Tensor) or a != b:
                raise AssertionError(f"result {i}: {a!r}, the reference {b!r}")
            continue
        if not isinstance(a, Tensor) and not (plain and isinstance(a, (np.ndarray, np.generic))):
            raise AssertionError(f"result {i} is {type(a).__name__}, not a tensor (the reference: an array)")
        ga, wa = np.asarray(a.detach()._data if isinstance(a, Tensor) else a), np.asarray(b)
        if ga.shape != wa.shape or ga.dtype != wa.dtype:
            raise AssertionError(f"result {i}: {ga.dtype}{ga.shape}, the reference {wa.dtype}{wa.shape}")
        tol_i = max(tol, 1e-6) if wa.dtype in (np.float32, np.complex64) else tol
        np.testing.assert_allclose(ga, wa, rtol=tol_i, atol=tol_i, equal_nan=True, err_msg=f"result {i}")


def check_values(
    face: Face,
    ref_ns: Any,
    ns: Any,
    ref_asarray: Callable | None = None,
    asarray: Callable | None = None,
    same_errors: bool = True,
) -> None:
    """Raise AssertionError unless the face's results equal the reference's (shapes, dtypes,
    values), or both raise errors of the same class; with `same_errors` False a call the
    reference refuses raises `Unsupported` (array_api_strict refuses what the standard leaves
    undefined)."""
    try:
        want = reference_call(face, ref_ns, ref_asarray)
    except _ERRORS as e:
        if not same_errors:
            raise Unsupported(f"the reference refuses the call: {type(e).__name__}: {e}") from None
        expected = next(c for c in _ERRORS if isinstance(e, c))
        try:
            _face_call(face, ns, asarray)
        except expected:
            return
        raise AssertionError(f"the reference raises {type(e).__name__} ({e}); the face does not") from None
    _compare(_face_call(face, ns, asarray), want, face.tol, face.plain)


def _diff_inputs(face: Face, asarray: Callable | None) -> list:
    return [t for i, t in enumerate(face_inputs(face, asarray)) if i in face.argnums]


def _check_vmap(f: Callable, xs: list) -> None:
    batched = [Tensor(np.stack([x.detach()._data, x.detach()._data * 1.001])) for x in xs]
    got = vmap(f)(*batched)
    each = [f(*[b[i] for b in batched]) for i in range(2)]
    assert len(got) == len(each[0]), f"{len(got)} results under vmap, {len(each[0])} without"
    for k, g in enumerate(got):
        want = np.stack([np.asarray(e[k].detach()._data) for e in each])
        np.testing.assert_allclose(np.asarray(g.detach()._data), want, rtol=1e-10, atol=1e-12)


def _check_jet(f: Callable, xs: list) -> None:
    rng = np.random.default_rng(0)
    vs = [Tensor(rng.standard_normal(x.shape)) for x in xs]
    check_jet(f, [x.detach() for x in xs], vs, order=3, rtol=1e-6, atol=1e-8)


def _check_dask(f: Callable, xs: list) -> None:
    info = OpInfo("face", lambda *a: f(*a), lambda m: [])
    sample = SampleInput(xs[0].detach(), tuple(x.detach() for x in xs[1:]))
    try:
        check_lazy_sample(info, sample)
    except LazyUnsupportedError as e:
        raise Unsupported(str(e)) from None


def run_check(face: Face, check: str, ns: Any, asarray: Callable | None = None) -> None:
    """Run one derivative or transform check of CHECKS (not "values") of the entry's function in
    `ns`; raise on a failure, `Unsupported` when Dask refuses it."""
    f = face_function(face, ns, asarray)
    xs = _diff_inputs(face, asarray)
    fast = sum(int(np.size(x.detach()._data)) for x in xs) > 12
    if check == "backward":
        gradcheck(f, xs, fast_mode=fast)
    elif check == "forward":
        gradcheck(f, xs, check_forward_ad=True, check_backward_ad=False, fast_mode=fast)
    elif check == "gradgrad":
        gradgradcheck(f, xs, check_rev_over_rev=False, fast_mode=True)
    elif check == "vmap":
        _check_vmap(f, xs)
    elif check == "jet":
        _check_jet(f, xs)
    elif check == "compile":
        gradcheck(compile_fn(f), xs, check_forward_ad=True, fast_mode=True)
    elif check == "dask":
        _check_dask(f, xs)
    else:
        raise ValueError(f"run_check: unknown check {check!r}")
