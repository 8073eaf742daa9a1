"""Lazy tensors: a Tensor whose array is a Dask array (design rule "lazy tensors").

The one predicate the engine asks (`is_lazy_array`) and the guard every op with a lazy input runs
under (`guarded`). Dask is an optional dependency: this module never imports it at import time
(the predicate reads the array's type's module), so `import pushforward` costs nothing without it.

A lazy tensor's `_ad` bit is always True (wrap and join_storage set it): the bare-kernel paths,
which read `_data` as an ndarray, never see one, and the resolver (`dispatch.interpret.resolve`)
hands every call with a lazy input to the lazy interpreter, which runs it under `guarded`. Inside the guard any
attempt to compute (Dask's fallback for NumPy functions it lacks, `np.asarray` in a kernel, a
SciPy routine) raises `LazyUnsupportedError` naming the op instead of computing: nothing is ever
computed before `t.compute()`, `pf.compute(...)`, `t.numpy()` or `np.asarray(t)`.

>>> import numpy as np
>>> is_lazy_array(np.zeros(2))
False
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..errors import OpError, PushforwardError

_ndarray = np.ndarray

__all__ = [
    "is_lazy_array",
    "has_layout",
    "is_immutable",
    "any_lazy",
    "Seen",
    "as_array",
    "guarded",
    "LazyUnsupportedError",
    "unsupported",
    "concrete",
    "lazy_repr",
]


class LazyUnsupportedError(OpError):
    """An op that Dask cannot run lazily was called on a Dask-backed tensor."""


def is_lazy_array(a: Any) -> bool:
    """True for a Dask array (any object of a type defined in a `dask.` module).

    >>> is_lazy_array([1.0])
    False
    """
    return type(a).__module__.startswith("dask.")


def has_layout(a: Any) -> bool:
    """The backend predicate "has a memory layout": strides, views, ndarray's methods (NumPy's arrays
    and pf.compile's recording ones); a Dask array has chunks instead. Engine and dispatch code asks
    this, not which library the array comes from (docs/design.md, "Adding a backend").

    >>> has_layout(np.zeros(2))
    True
    """
    return type(a) is _ndarray or not is_lazy_array(a)


def is_immutable(a: Any) -> bool:
    """The backend predicate "no write can change it" (a Dask array): sharing such an array is
    harmless (no copy to own it), and a sum into it is made out of place.

    >>> is_immutable(np.zeros(2))
    False
    """
    return type(a) is not _ndarray and is_lazy_array(a)


class Seen:
    """What the process has seen of the user's Dask arrays: `chunk_bytes`, the largest chunk
    (bytes), is the size of the chunks made for dims an op creates (a scalar cotangent expanded
    to its input's shape), so that they line up with the user's."""

    chunk_bytes = 0


def any_lazy(values) -> bool:
    """True when one of `values` (Tensors, lists of them, scalars) is backed by a Dask array."""
    for v in values:
        dct = getattr(v, "__dict__", None)
        if dct is not None:  # a Tensor (its array), or a batched one (its physical tensor's)
            d = dct.get("_data")
            if d is None and "_phys" in dct:
                d = dct["_phys"].__dict__.get("_data")
            if d is not None and type(d) is not _ndarray and is_lazy_array(d):
                return True
        elif type(v) is list or type(v) is tuple:
            if any_lazy(v):
                return True
    return False


def unsupported(name: str, detail: str = "") -> LazyUnsupportedError:
    """The error for an op Dask cannot run: names it and says the way out."""
    why = f" ({detail})" if detail else ""
    return LazyUnsupportedError(
        f"{name} is not supported on Dask-backed tensors{why}; call t.compute() first "
        "(or pf.compute(...)) to run it on NumPy arrays"
    )


class _ComputeRefused(PushforwardError):
    """Raised by the refusing scheduler: something tried to compute inside an op."""


def _refuse(dsk: Any, keys: Any, **kwargs: Any) -> Any:
    raise _ComputeRefused("it would compute the Dask array")


class _Depth:
    n = 0


# Dask's message when a NumPy function it lacks would run on computed arrays
_FALLBACK = ".*is not implemented by Dask array.*"


def guarded(name: str, fn: Callable, *args: Any) -> Any:
    """fn(*args) with computing refused: an attempt becomes `unsupported(name)`. Re-entrant (the
    formulas of an op call ops); the scheduler setting is Dask's global config, so a thread that
    computes while another builds a lazy op would be refused too."""
    if _Depth.n:
        return fn(*args)
    import dask

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=_FALLBACK, category=FutureWarning)
        with dask.config.set(scheduler=_refuse):
            _Depth.n += 1
            try:
                return fn(*args)
            except (_ComputeRefused, FutureWarning) as e:
                raise unsupported(name, "Dask would compute the array to run it") from e
            except NotImplementedError as e:  # Dask's own refusal (a mode it lacks)
                raise unsupported(name, str(e).strip().splitlines()[0]) from None
            except PushforwardError as e:
                # an op's kernel error wraps the refusal (oprecord.op_error): say what happened
                text = str(e)
                if "would compute the Dask array" in text or "not implemented by Dask array" in text:
                    raise unsupported(name, "Dask would compute the array to run it") from None
                raise
            finally:
                _Depth.n -= 1


def as_array(a: Any, dtype: Any = None) -> Any:
    """np.asarray(a, dtype), except that a Dask array stays one (cast lazily): the kernels' way to
    accept array-likes without computing a lazy input.

    >>> as_array([1, 2]).dtype
    dtype('int64')
    """
    if type(a) is not _ndarray and is_lazy_array(a):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return np.asanyarray(a, dtype=dtype)  # (an ndarray subclass stays: compiler/recording.py)


def concrete(a: Any) -> Any:
    """a, computed when it is a Dask array (the explicit ways out: numpy(), item(), np.asarray)."""
    return np.asarray(a.compute()) if is_lazy_array(a) else a  # (a 0-d result computes to a scalar)


def lazy_repr(a: Any) -> str:
    """What a lazy tensor prints instead of its values (printing computes nothing)."""
    return f"dask.array<shape={tuple(a.shape)}, dtype={a.dtype}, chunksize={tuple(a.chunksize)}>"
