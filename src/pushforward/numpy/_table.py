"""The NEP-18 table beyond the core reductions: NumPy functions of `np`, `np.fft` and `np.linalg`
mapped to the NumPy-semantics functions of `_shapes` / `_math` and to our fft/linalg.

`NO_DERIVATIVE` names the NumPy functions that dispatch to nothing on purpose, with the reason
(their results are integers, indices, booleans or sets: nothing to differentiate); calling one on
a tensor raises an error giving that reason. docs/differentiating-numpy.md prints both.

>>> import numpy as np
>>> np.tile in extra_functions()
True
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import fft, linalg, special
from ..errors import OpTypeError
from ..ops import generated as ops
from . import _math as M
from . import _misc as X
from . import _poly as P
from . import _shapes as S
from . import _stats as ST
from ._values import as_t

__all__ = ["extra_functions", "fft_functions", "NO_DERIVATIVE", "VALUES_ONLY", "no_derivative_error"]

_INDEX = "its result is integer indices or counts"
_BOOL = "its result is boolean"
_SET = (
    "its result is a set of values chosen by comparisons (a piecewise-constant selection with a data-dependent shape)"
)
_SHAPE = "its result is a dtype, a shape or other metadata"
_IO = "it reads or writes files or text"
_INT = "it works on integers or bits"

# NumPy function name -> why it has no derivative; on tensors these compute on the values and
# return integer or boolean results (tensors), which carry no derivative, so none is lost
VALUES_ONLY: dict[str, str] = {
    **dict.fromkeys(
        [
            "argpartition",
            "argwhere",
            "nonzero",
            "flatnonzero",
            "searchsorted",
            "digitize",
            "count_nonzero",
            "bincount",
            "nanargmax",
            "nanargmin",
            "lexsort",
            "tril_indices_from",
            "triu_indices_from",
            "diag_indices_from",
            "ravel_multi_index",
            "unravel_index",
            "ix_",
        ],
        _INDEX,
    ),
    **dict.fromkeys(["isin", "array_equiv", "isreal", "iscomplex", "isneginf", "isposinf"], _BOOL),
    **dict.fromkeys(
        [
            "result_type",
            "min_scalar_type",
            "can_cast",
            "common_type",
            "may_share_memory",
            "shares_memory",
            "einsum_path",
        ],
        _SHAPE,
    ),
}

# NumPy function name -> why it does not run on tensors; these raise, naming the reason
NO_DERIVATIVE: dict[str, str] = {
    **dict.fromkeys(
        [
            "unique",
            "intersect1d",
            "union1d",
            "setdiff1d",
            "setxor1d",
            "extract",
            "compress",
            "trim_zeros",
            "histogram",
            "histogram2d",
            "histogramdd",
            "histogram_bin_edges",
        ],
        _SET,
    ),
    **dict.fromkeys(["save", "savez", "savez_compressed", "savetxt", "array2string", "array_repr", "array_str"], _IO),
    **dict.fromkeys(["packbits", "unpackbits"], _INT),
    **dict.fromkeys(
        ["put", "putmask", "place", "copyto", "fill_diagonal", "put_along_axis"],
        "it writes into its argument in place; on tensors write with indexing (t[idx] = v), which is recorded",
    ),
    **dict.fromkeys(
        ["busday_count", "busday_offset", "is_busday", "datetime_as_string"], "no derivative: it works on dates"
    ),
    "insert": "not implemented on tensors yet; build the result with np.concatenate",
    "polydiv": "not implemented on tensors yet (a data-dependent division length)",
}


def no_derivative_error(name: str) -> OpTypeError:
    """The error of a function of NO_DERIVATIVE or VALUES_ONLY given a value with a derivative (a
    VALUES_ONLY function's result then holds floating values: np.bincount's with weights)."""
    return OpTypeError(
        f"np.{name} does not run on pushforward tensors with a derivative "
        f"({NO_DERIVATIVE.get(name) or VALUES_ONLY[name]}); call it on t.detach().numpy() for the values"
    )


def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    return linalg.svd(as_t(a), full_matrices) if compute_uv else linalg.svdvals(as_t(a))


def _pinv(a, rcond=None, hermitian=False, *, rtol=None):
    return linalg.pinv(as_t(a), rtol=rcond if rtol is None else rtol, hermitian=hermitian)


def _matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    # NumPy's tol is the absolute cut-off (torch's atol)
    return linalg.matrix_rank(as_t(A), atol=tol, rtol=rtol, hermitian=hermitian)


def _hermitian_from(a: Any, UPLO: str) -> Any:
    """The Hermitian matrix NumPy's eigh reads: one triangle of a, mirrored (so the derivative is the
    one of the function NumPy computes: the other triangle does not matter)."""
    if UPLO not in ("L", "U"):
        raise OpTypeError(f"np.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return ops._hermitian_from_triangle(as_t(a), UPLO)


def _eigh(a, UPLO="L"):
    return linalg.eigh(_hermitian_from(a, UPLO), UPLO)  # (LAPACK reads the triangle NumPy's does)


def _eigvalsh(a, UPLO="L"):
    return linalg.eigvalsh(_hermitian_from(a, UPLO), UPLO)


def _fft(name: str) -> Callable:
    target = getattr(fft, name)

    def f(a, *args, axes=None, **kwargs):
        if axes is not None:
            kwargs["dim"] = tuple(axes) if not isinstance(axes, int) else axes
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        return target(as_t(a), *args, **kwargs)

    f.__name__ = name
    return f


def fft_functions() -> dict:
    """np.fft.<name> -> pushforward.fft.<name> with NumPy's `axis`/`axes` names (the transforms and
    the shifts: fftfreq and rfftfreq take a length, not an array, and make no tensor)."""
    names = [n for n in np.fft.__all__ if not n.endswith("freq")]
    return {getattr(np.fft, n): _fft(n) for n in names}


def extra_functions() -> dict:
    """np function -> handler, for the shaping, joining and math functions."""
    table: dict = {
        **{getattr(np, n): getattr(m, n) for m in (S, M, ST, P, X) for n in m.__all__ if hasattr(np, n)},
        np.i0: lambda x: special.i0(as_t(x)),
        np.linalg.tensorinv: lambda a, ind=2: linalg.tensorinv(as_t(a), ind),
        np.linalg.tensorsolve: lambda a, b, axes=None: linalg.tensorsolve(as_t(a), as_t(b), axes),
        np.linalg.vecdot: lambda x1, x2, /, *, axis=-1: M.UFUNC_COMPOSITES["vecdot"](x1, x2, axis),
        np.linalg.svd: _svd,
        np.linalg.eigh: _eigh,
        np.linalg.eigvalsh: _eigvalsh,
        np.linalg.pinv: _pinv,
        np.linalg.matrix_rank: _matrix_rank,
        np.linalg.matrix_norm: lambda x, /, *, keepdims=False, ord="fro": linalg.matrix_norm(
            as_t(x), ord, (-2, -1), keepdims
        ),
        np.linalg.vector_norm: lambda x, /, *, axis=None, keepdims=False, ord=2: linalg.vector_norm(
            as_t(x), ord, axis, keepdims
        ),
        np.linalg.svdvals: lambda x, /: linalg.svdvals(as_t(x)),
        np.linalg.tensordot: M.tensordot,
        np.linalg.cross: lambda x1, x2, /, *, axis=-1: M.cross(x1, x2, axis=axis),
        np.linalg.outer: lambda x1, x2, /: ops.outer(as_t(x1), as_t(x2)),
        np.linalg.matmul: lambda x1, x2, /: ops.matmul(as_t(x1), as_t(x2)),
        np.linalg.diagonal: lambda x, /, *, offset=0: as_t(x).diagonal(offset, -2, -1),
        np.linalg.trace: lambda x, /, *, offset=0, dtype=None: as_t(x).diagonal(offset, -2, -1).sum(-1),
        np.linalg.matrix_transpose: lambda x, /: as_t(x).transpose(-2, -1),
        np.matrix_transpose: lambda x, /: as_t(x).transpose(-2, -1),
    }
    table.update(fft_functions())
    return table
