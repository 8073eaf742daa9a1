"""How `pushforward.numpy` wraps a NumPy namespace: each function runs its NEP-18 handler
(`pushforward.numpy._api.handler`, the same one NumPy's own dispatch runs) when a tensor is among its
arguments, even inside a list, and NumPy itself otherwise; ufuncs lift lists holding tensors to
one tensor first; everything else (dtypes, constants, classes) is NumPy's.

>>> import numpy
>>> import pushforward as pf
>>> ns = wrap_namespace(numpy, ["mean"])
>>> ns["mean"]([pf.tensor(1.0), pf.tensor(3.0)])
tensor(2.)
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

import numpy as np

from ..core.tensor import Tensor
from . import _api as numpy_api
from ._api import _CALL
from ._values import as_t, has_tensor

__all__ = ["wrap_namespace", "wrap_function", "wrap_ufunc"]


def _any_tensor(args: tuple, kwargs: dict) -> bool:
    return any(has_tensor(a) for a in args) or any(has_tensor(v) for v in kwargs.values())


class _Ufunc:
    """A NumPy ufunc whose inputs may be lists holding tensors (its methods are NumPy's)."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self._nin = ufunc.nin
        functools.update_wrapper(self, ufunc, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == self._nin and type(args[0]) is Tensor:
            # the op NumPy's dispatch would land on (array_ufunc's fast path, once it has filled its
            # table), called at once: NumPy's override lookup and a frame less. (Exactly its inputs:
            # a positional out= takes NumPy's path; so does a list, lifted below.)
            fn = _CALL.get(self._ufunc)
            if fn is not None and (len(args) == 1 or type(args[1]) not in (list, tuple)):
                return fn(*args)
        for a in args:  # (a loop, not a generator: the commonest call has no list, and pays no frame)
            if isinstance(a, (list, tuple)):
                args = tuple(as_t(a) if isinstance(a, (list, tuple)) and has_tensor(a) else a for a in args)
                break
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ufunc, name)

    def __repr__(self) -> str:
        return f"<pushforward.numpy ufunc {self._ufunc.__name__!r}>"


def wrap_ufunc(ufunc: np.ufunc) -> Any:
    """ufunc, reading lists that hold tensors as one tensor."""
    return _Ufunc(ufunc)


def wrap_function(fn: Callable) -> Callable:
    """fn, running its NEP-18 handler when a tensor is among the arguments."""
    h = numpy_api.handler(fn)

    @functools.wraps(fn)
    def f(*args: Any, **kwargs: Any) -> Any:
        if (args and type(args[0]) is Tensor) or _any_tensor(args, kwargs):  # (the commonest, at once)
            if h is None:  # NumPy's dispatch raises, naming the function
                return fn(*[as_t(a) if has_tensor(a) else a for a in args], **kwargs)
            return h(*args, **kwargs)
        return fn(*args, **kwargs)

    return f


def wrap_namespace(module: Any, names: Iterable[str]) -> dict:
    """The names of a NumPy module, wrapped."""
    out = {}
    missing = object()
    for name in names:
        obj = getattr(module, name, missing)
        if obj is missing:
            continue
        if isinstance(obj, np.ufunc):
            out[name] = wrap_ufunc(obj)
        elif callable(obj) and not isinstance(obj, type) and numpy_api.handler(obj) is not None:
            out[name] = wrap_function(obj)
        else:
            out[name] = obj
    return out
