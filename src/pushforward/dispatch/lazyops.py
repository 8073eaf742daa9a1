"""Op calls with a lazy (Dask-backed) input: the rest of the dispatch under the compute guard.

The resolver (`dispatch.interpret.resolve`) hands every call with a lazy input to its lazy
interpreter, which runs it here: the ordinary dispatch (kernels and formulas dispatch to Dask
through NumPy's protocols) with computing refused (`core.lazy.guarded`). Ops Dask cannot run (derivatives.yaml's `dask:`
key) are refused up front by name (`DENIED`), so their error says why; anything else that would compute is caught
by the guard. In-place ops on lazy tensors are refused (`inplace_unsupported`): Dask arrays are
immutable, and a write that reached no memory would be a silent wrong answer.

>>> from pushforward.dispatch.lazyops import DENIED
>>> "det" in DENIED
True
"""

from __future__ import annotations

from typing import Callable

from ..core.lazy import _Depth, guarded, unsupported, LazyUnsupportedError
from .oprecord import Op

__all__ = ["DENIED", "REASONS", "refuse_on_dask", "run_lazy", "refuse_denied", "guarded_now", "inplace_unsupported"]

# Why Dask cannot run an op: derivatives.yaml's `dask:` key names one of these reasons.
REASONS = {
    "no_linalg": "dask.array.linalg has no such routine",
    "no_ufunc_at": "Dask arrays have no unbuffered in-place ufunc methods (ufunc.at)",
    "no_accumulate": "Dask arrays have no ufunc.accumulate",
    "no_out_buffer": "Dask arrays cannot be written into (an out= buffer)",
    "no_airy": "Dask has no multi-output scipy.special.airy",
    "no_sort": "dask.array cannot sort along an axis",
    "no_storage": "a Dask array has no storage to view with strides",
}
# op (or helper of a composite op) -> why Dask cannot run it; filled by the generated module from
# derivatives.yaml (refuse_on_dask)
DENIED: dict[str, str] = {}


def refuse_on_dask(table: dict[str, str]) -> None:
    """Record what Dask cannot run: name -> a key of REASONS (the generated module's call).

    >>> DENIED["det"]
    'dask.array.linalg has no such routine'
    """
    DENIED.update({name: REASONS[why] for name, why in table.items()})


def refuse_denied(op: Op) -> None:
    """For a call with a lazy input: raise, naming the op and why, if Dask cannot run `op`."""
    why = DENIED.get(op.name)
    if why is not None:
        raise unsupported(op.name, why)


def guarded_now() -> bool:
    """True inside a guarded call (an op's formulas calling ops): no second guard needed."""
    return _Depth.n > 0


def run_lazy(op: Op, inputs, args: tuple, run: Callable, *more):
    """run(op, inputs, args, *more) for a call with a lazy input (refuse_denied let the op run), with
    computing refused (re-entrant: an op's formulas calling ops run inside the one guard)."""
    return guarded(op.name, run, op, inputs, args, *more)


def inplace_unsupported(name: str) -> LazyUnsupportedError:
    """The error for an in-place op touching a lazy tensor: says what to write instead."""
    what = f"{name}_ (an in-place op)" if not name.startswith("_") else "an in-place write (copy_, fill_, zero_)"
    instead = f"`x = x.{name}(...)` instead of `x.{name}_(...)`, " if not name.startswith("_") else ""
    return LazyUnsupportedError(
        f"{what} is not supported on Dask-backed tensors: Dask arrays are immutable. Write it out of "
        f"place, e.g. {instead}`x = pf.where(mask, value, x)` or `x = x.index_put(...)` instead of "
        "`x[i] = value`, `x = pf.zeros_like(x)` instead of `x.zero_()`; or call t.compute() first"
    )
