"""Error types raised by pushforward for bad input.

Each error subclasses the builtin exception PyTorch raises for the same misuse, so a
ported `except RuntimeError:` (or `TypeError`, `ValueError`, `IndexError`) still works,
and all share one base, `PushforwardError`:

- `OpError` (RuntimeError): bad values -- shapes, dtypes, autograd misuse, dual levels;
- `OpTypeError` (TypeError): an argument of the wrong type (`pf.sin("a")`, `len()` of a 0-d tensor);
- `OpRuntimeTypeError` (both): torch's RuntimeError where NumPy or autograd raise TypeError;
- `OpValueError` (ValueError): where torch raises ValueError (an integer primal made dual, `cat([])`);
- `OpIndexError` (IndexError): an index or dimension out of range.

>>> import pushforward as pf
>>> try:
...     pf.zeros(3)[5]
... except IndexError as e:
...     print(type(e).__name__)
OpIndexError
"""

from __future__ import annotations

__all__ = [
    "PushforwardError",
    "NestingError",
    "SavedTensorModifiedError",
    "OpError",
    "OpTypeError",
    "OpRuntimeTypeError",
    "OpValueError",
    "OpDtypeError",
    "OpIndexError",
    "CompileError",
    "same_kind",
    "describe",
    "check_dim",
]


class PushforwardError(Exception):
    """Base of every error pushforward raises for bad input; the message names the op and values."""


class OpError(PushforwardError, RuntimeError):
    """A bad argument value (shape, dtype, level) or autograd misuse: torch's RuntimeError."""


class OpTypeError(PushforwardError, TypeError):
    """An argument of the wrong type: torch's TypeError."""


class OpRuntimeTypeError(OpError, TypeError):
    """A misuse torch reports as RuntimeError and NumPy or autograd as TypeError (an in-place write
    into a leaf that requires grad; the gradient of a complex or bool output): either catches it."""


class OpDtypeError(OpRuntimeTypeError):
    """NumPy refused the inputs' dtypes (a ufunc with no loop for them)."""


class OpValueError(PushforwardError, ValueError):
    """A bad value where torch raises ValueError (e.g. an integer primal made dual)."""


class OpIndexError(PushforwardError, IndexError):
    """An index or dimension out of range: torch's IndexError."""


class CompileError(PushforwardError, RuntimeError):
    """pf.compile cannot compile a function (fullgraph=True): data-dependent control flow, an untraceable
    construct; the message names the function, the file and line, and the op."""


class SavedTensorModifiedError(OpError):
    """A value the tape saved for a backward formula was written in place before the backward pass
    (torch's "one of the variables needed for gradient computation has been modified by an inplace
    operation")."""


class NestingError(PushforwardError, NotImplementedError):
    """A transform met a tensor of an enclosing interpreted transform it cannot see through (reverse
    mode on a function of Taylor series inside jet): the enclosing transform handles it (jet runs
    the function again by nested dual levels)."""


def same_kind(exc: BaseException) -> type:
    """The pushforward error class matching `exc` (for re-raising NumPy's errors as ours)."""
    if isinstance(exc, PushforwardError):
        return type(exc)
    if isinstance(exc, IndexError):  # includes NumPy's AxisError
        return OpIndexError
    if isinstance(exc, TypeError):  # (NumPy's UFuncTypeError: no loop for these dtypes)
        return OpDtypeError
    return OpError


def describe(value: object) -> str:
    """Short description of an op argument for error messages: shape and dtype of tensors."""
    data = getattr(value, "_data", None)
    if data is not None:
        return f"Tensor(shape={tuple(data.shape)}, dtype={data.dtype})"
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "_data") for v in value):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    return repr(value)


def check_dim(d: int, ndim: int, name: str = "") -> int:
    """torch's dim d (may be negative) for a tensor of ndim dims (0-d counts as 1), or torch's
    IndexError naming the op: the one place a dim is normalised and checked.

    >>> check_dim(-1, 3, "sum")
    2
    """
    n = max(ndim, 1)
    if not -n <= d < n:
        where = f"{name}: " if name else ""
        raise OpIndexError(f"{where}Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n
