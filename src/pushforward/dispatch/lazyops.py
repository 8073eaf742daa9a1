"""Op calls with a lazy (Dask-backed) input: the rest of the dispatch under the compute guard.

The resolver (`dispatch.interpret.resolve`) hands every call with a lazy input to its lazy
interpreter, which runs it here: the ordinary dispatch (kernels and formulas dispatch to Dask
through NumPy's protocols) with computing refused (`core.lazy.guarded`). Ops Dask cannot run are refused
up front by name (`DENIED`), so their error says why; anything else that would compute is caught
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

__all__ = ["DENIED", "run_lazy", "refuse_denied", "guarded_now", "inplace_unsupported"]

# Ops whose kernels need what Dask does not have (the reason is in the error message).
_NO_LINALG = "dask.array.linalg has no such routine"
_NO_UFUNC_AT = "Dask arrays have no unbuffered in-place ufunc methods (ufunc.at)"
_NO_SORT = "dask.array cannot sort along an axis"
DENIED = {
    **dict.fromkeys(
        "det logdet slogdet inverse pinverse matrix_exp matrix_power eig eigh eigvals eigvalsh lu lu_factor "
        "lu_solve cholesky_solve cholesky_inverse triangular_solve matrix_rank cond svdvals lstsq linalg_pinv "
        "linalg_matrix_rank linalg_lstsq linalg_lu_solve lu_unpack".split(),
        _NO_LINALG,
    ),
    **dict.fromkeys(
        "index_add scatter_add scatter_reduce index_put put index_copy scatter masked_scatter _view_scatter".split(),
        _NO_UFUNC_AT,
    ),
    **dict.fromkeys("_index_backward _index_select_backward".split(), _NO_UFUNC_AT),
    **dict.fromkeys("logcumsumexp".split(), "Dask arrays have no ufunc.accumulate"),
    **dict.fromkeys("_col2im".split(), "Dask arrays cannot be written into (an out= buffer)"),
    **dict.fromkeys("special_airy_ai _special_airy_ai_prime".split(), "Dask has no multi-output scipy.special.airy"),
    **dict.fromkeys(
        "sort argsort msort topk kthvalue median nanmedian quantile nanquantile mode cummax cummin".split(), _NO_SORT
    ),
}


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
