"""Error types raised by pushforward ops.

`OpError` subclasses RuntimeError (torch's choice) and ValueError/TypeError (NumPy's),
so code written for either library catches it.
"""
from __future__ import annotations


class OpError(RuntimeError, ValueError, TypeError):
    """A bad argument to an op: the message names the op and the offending values."""


def describe(value) -> str:
    """Short description of an op argument for error messages: shape and dtype of tensors."""
    data = getattr(value, "_data", None)
    if data is not None:
        return f"Tensor(shape={tuple(data.shape)}, dtype={data.dtype})"
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "_data") for v in value):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    return repr(value)
