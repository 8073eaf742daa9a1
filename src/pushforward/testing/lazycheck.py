"""The op database run on lazy (Dask-backed) inputs against the NumPy path.

`check_lazy(name)` runs an op's float64 samples with every tensor of the sample made a Dask array
(several chunks per dim): the values, the jvp and the vjp, each built with computing refused (an
attempt raises: nothing may compute before `pf.compute`) and then computed and compared with the
same call on NumPy arrays to 1e-12. An op Dask cannot run raises `LazyUnsupportedError`: that is
"unsupported", not a failure. `runs_lazily(name)` is the value part alone (cached per process),
what `pushforward ops` prints.

>>> check_lazy("sin")["lazy"]
True
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..core.creation import as_tensor
from ..core.lazy import LazyUnsupportedError, _refuse
from ..core.tensor import Tensor
from ..func.transforms import jvp, vjp
from ..methods.lazy import compute
from .opinfo import F64, OpInfo, SampleInput, _map
from .opdb import OPS, _is_float_tensor, _rebuild, diff_leaves

__all__ = ["check_lazy", "check_lazy_sample", "runs_lazily", "lazy_sample", "dask_installed", "OPS", "TOL"]

TOL = 1e-12
_MAX_SAMPLES = 4


def _lazy_tensor(t: Tensor) -> Tensor:
    """t as a lazy tensor: the same values in a Dask array of about two chunks per dim."""
    import dask.array as da

    d = t._data
    return as_tensor(da.from_array(np.array(d), chunks=tuple(max(1, (n + 1) // 2) for n in d.shape)))


def lazy_sample(sample: SampleInput) -> SampleInput:
    """The sample with every tensor in it (index and mask tensors too) made lazy."""
    inp, args, kwargs = _map(_lazy_tensor, (sample.input, sample.args, sample.kwargs), lambda v: isinstance(v, Tensor))
    return SampleInput(inp, args, kwargs, sample.name, sample.grad, sample.gradgrad)


def _tensors(out: Any) -> list:
    found: list = []
    _map(found.append, out, lambda v: isinstance(v, Tensor))
    return found


def _refusing():
    import dask

    return dask.config.set(scheduler=_refuse)


def _compare(what: str, got: list, want: list) -> None:
    """Computed lazy results against NumPy ones, to TOL; raise AssertionError naming `what`."""
    if len(got) != len(want):
        raise AssertionError(f"{what}: {len(got)} results on lazy inputs, {len(want)} on NumPy ones")
    got = compute(*got) if got else ()
    got = (got,) if isinstance(got, Tensor) else got
    for i, (g, w) in enumerate(zip(got, want)):
        if g is None or w is None:
            if g is not w:
                raise AssertionError(f"{what}[{i}]: {g!r} on lazy inputs, {w!r} on NumPy ones")
            continue
        a, b = np.asarray(g.detach()._data), np.asarray(w.detach()._data)
        if a.shape != b.shape or a.dtype != b.dtype or not np.allclose(a, b, rtol=TOL, atol=TOL, equal_nan=True):
            raise AssertionError(f"{what}[{i}]: lazy {a.dtype}{a.shape} differs from NumPy {b.dtype}{b.shape}")


def _check_values(info: OpInfo, s: SampleInput) -> None:
    want = _tensors(info(s))
    with _refusing():
        out = info(lazy_sample(s))
    got = _tensors(out)
    _compare("value", got, want)


def _derivative_fns(info: OpInfo, s: SampleInput):
    leaves = [t.detach() for t in diff_leaves(s)]

    def fn(*xs):
        r = _rebuild(s, xs)
        out = [t for t in _tensors(info(r)) if _is_float_tensor(t)]
        return tuple(out)

    return fn, leaves


def _check_derivatives(info: OpInfo, s: SampleInput) -> None:
    fn, leaves = _derivative_fns(info, s)
    if not leaves or not fn(*leaves):  # no differentiable output: jvp refuses an empty output, as torch's
        return
    rng = np.random.default_rng(0)
    tans = [Tensor(rng.standard_normal(t.shape).astype(t.dtype)) for t in leaves]
    lazy_leaves = [_lazy_tensor(t) for t in leaves]
    lazy_fn, _ = _derivative_fns(info, lazy_sample(s))
    _, want_t = jvp(fn, tuple(leaves), tuple(tans))
    with _refusing():
        _, got_t = jvp(lazy_fn, tuple(lazy_leaves), tuple(_lazy_tensor(t) for t in tans))
    _compare("jvp", list(got_t), list(want_t))
    outs, back = vjp(fn, *leaves)
    cots = tuple(Tensor(rng.standard_normal(o.shape).astype(o.dtype)) for o in outs)
    want_g = back(cots)
    with _refusing():
        _, lazy_back = vjp(lazy_fn, *lazy_leaves)
        got_g = lazy_back(tuple(_lazy_tensor(c) for c in cots))
    _compare("vjp", list(got_g), list(want_g))


def check_lazy_sample(info: OpInfo, s: SampleInput, *, derivatives: bool = True) -> None:
    """One sample's values (and jvp and vjp) on lazy inputs against the NumPy path: raise
    AssertionError on a mismatch or a computation before `pf.compute`, LazyUnsupportedError when
    Dask cannot run the op."""
    _check_values(info, s)
    if derivatives and info.differentiable and s.grad:
        _check_derivatives(info, s)


def check_lazy(name: str, *, derivatives: bool = True) -> dict:
    """{"lazy": True (runs lazily and matches), None (unsupported on Dask-backed tensors), False
    (a mismatch or an error that is not the unsupported one), "error": the first message}."""
    info = OPS[name]
    samples = info.samples(F64)[:_MAX_SAMPLES]
    res: dict = {"lazy": None if not samples else True, "error": None}
    for s in samples:
        try:
            check_lazy_sample(info, s, derivatives=derivatives)
        except LazyUnsupportedError as e:
            return {"lazy": None, "error": str(e)}
        except Exception as e:  # noqa: BLE001 - every failure is reported
            return {"lazy": False, "error": f"{s!r}: {type(e).__name__}: {str(e).splitlines()[0]}"}
    return res


def dask_installed() -> bool:
    try:
        import dask.array  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def runs_lazily(name: str) -> bool | None:
    """Whether op `name`'s samples run (and match) on lazy inputs; None without samples."""
    if name not in OPS:
        return None
    return check_lazy(name, derivatives=False)["lazy"] is True
