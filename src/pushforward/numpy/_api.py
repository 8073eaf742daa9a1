"""NumPy protocols (NEP 13 `__array_ufunc__`, NEP 18 `__array_function__`) for Tensor.

NumPy functions called on tensors run the pushforward op of the same meaning, so the
result is a Tensor that carries tangents and records the tape: existing NumPy code is
differentiated unmodified by passing tensors in.

>>> import numpy as np
>>> import pushforward as pf
>>> import pushforward.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(pf.tensor([0.0, 1.0]), pf.tensor([1.0, 1.0]))
...     y = np.sum(np.sin(x) * x, axis=0)           # plain NumPy code, tensors in
...     fwAD.unpack_dual(y).tangent                   # d/dt sum(sin(x) x) = sum(cos(x) x + sin(x))
tensor(1.38177329)

Rules:
- The tables below map each NumPy ufunc / function to a pushforward op, translating
  NumPy's argument names (axis, keepdims, ddof, ...) to torch's.
- A NumPy function or ufunc method with no entry raises a TypeError naming it: a tangent
  or gradient is never dropped silently. `np.asarray(t)` on a tensor that requires grad
  or carries a tangent raises too (as torch's `.numpy()`); `t.detach().numpy()` gives the
  plain array when no derivative is wanted.
- `np.linalg.*` functions run `pushforward.linalg`'s function of the same name, looked up at
  call time (or a handler translating NumPy's arguments).
- `out=`, `where=` and other arguments with no pushforward meaning raise a TypeError.
"""

from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from .. import fft, linalg, special
from ..errors import OpTypeError, OpValueError, check_dim
from ..core import creation
from ..core.lazy import concrete
from ..core.tensor import Tensor, has_derivative, lost_derivative, wrap as _wrap
from ..methods import logic
from ..ops import generated as ops
from ..ops.numpy_names import numpy_ufuncs
from . import _math as M
from . import _creation as numpy_creation, _histogram as numpy_histogram
from . import _out as numpy_out, _writes as numpy_writes
from . import _table as T
from ._values import along, axes_of, numpy_error, as_t as _deep_as_t, floating as _floating, reduced
from ..scipy._special import SCIPY_UFUNCS

__all__ = ["array_ufunc", "array_function", "array", "raise_lost_derivative", "METHODS", "handler"]

# -- ufuncs ------------------------------------------------------------------------------------
# NumPy ufunc name -> the op computing the same values: its name, an alias or a `numpy:` name in
# derivatives.yaml (ops/numpy_names.py). What no op answers to is listed where it is served:
# `positive` (the tensor itself, below), SciPy's ufuncs (scipy/_special.py), the ufuncs of two
# outputs, of products over an axis and of no derivative (`_math.UFUNC_COMPOSITES`).
UFUNCS: dict[str, Callable] = numpy_ufuncs()

# ufunc.reduce / ufunc.accumulate -> the reduction with the same values
_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "amax",
    "minimum": "amin",
    "logical_and": "all",
    "logical_or": "any",
}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


# The package's names the handlers call (pf.sum, pf.linalg.solve, ...), gathered from their homes
# as pushforward/__init__ gathers them: this face sits below the package, which binds it to Tensor.
_PF: Any = types.SimpleNamespace(
    **{n: getattr(creation, n) for n in creation.__all__}
    | ops.FUNCTIONS
    | {n: getattr(logic, n) for n in logic.__all__}
    | {"fft": fft, "linalg": linalg, "special": special}
)


def _pf() -> Any:
    return _PF


def _fn(name: str) -> Callable:
    return getattr(_pf(), name)


def _no_extra(who: str, kwargs: dict, allowed: tuple = ()) -> None:
    """NumPy keywords that pushforward cannot honour raise instead of being ignored."""
    for k, v in kwargs.items():
        if k in allowed:
            continue
        if k == "out" and (v is None or (isinstance(v, tuple) and all(o is None for o in v))):
            continue
        if k == "where" and v is True:
            continue
        if k in ("casting", "order", "subok") and v in ("same_kind", "K", True):
            continue
        raise OpTypeError(
            f"{who}: argument {k}={v!r} is not supported on pushforward tensors "
            "(use t.detach().numpy() for a plain NumPy computation)"
        )


# ufunc object -> pushforward function (the fast path), filled on first use; matmul's is its body
# without the `out=` test, as the `@` operator's (np.matmul passes out= as a keyword: the slow path)
_CALL: dict = {np.matmul: ops.c_matmul}
_NO = object()  # (no second input: a one-input ufunc)


def array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, x: Any, y: Any = _NO, /, *more: Any, **kwargs: Any) -> Any:
    """NEP 13 entry point: np.<ufunc>(tensor, ...) runs the pushforward op. (Positional-only
    parameters: no keyword NumPy passes can collide with them.)"""
    # "NumPy dispatch in one frame" (docs/design.md): a plain call costs one dict lookup and then
    # the very function the operator calls (np.add(t, u) runs Tensor.__add__'s op, whose first
    # lines are its bare path); no inputs repacked, no keyword scanned. The table holds ufuncs of
    # one or two inputs only, and NumPy passes a __call__ exactly its ufunc's inputs: `more` is
    # empty for them.
    if type(x) is Tensor and method == "__call__" and not kwargs:
        try:  # (a subscript costs less than .get; a miss is a first call or a ufunc with no op)
            fn = _CALL[ufunc]
        except KeyError:
            pass
        else:
            return fn(x) if y is _NO else fn(x, y)
    elif type(y) is Tensor and method == "__call__" and not kwargs:
        # a number or NumPy scalar first (NumPy's scalar operators land here: `alpha * A`); the op
        # takes it as the operator's reflected call does (a NumPy scalar is not weak: its dtype counts)
        try:
            fn = _CALL_REFLECTED[ufunc]
        except KeyError:
            pass
        else:
            if type(x) in _NUMBERS:
                return fn(x, y)
            if isinstance(x, np.generic):  # (of y's dtype, the commonest: a 0-d tensor takes the op's bare path)
                return fn(_wrap(np.asarray(x)) if x.dtype == y._data.dtype else x, y)
    return _array_ufunc(ufunc, method, (x,) + more if y is _NO else (x, y) + more, kwargs)


# ufuncs of two inputs whose op takes a number or NumPy scalar first as NumPy does (ldexp's op
# reads its mantissa's dtype, which a Python number does not give: the general path converts it)
_CALL_REFLECTED: dict = {}
_NUMBERS = frozenset((bool, int, float, complex))


def _array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """array_ufunc past its fast path: filling that path's table, reflected calls, out=, where=,
    dtype=, the ufunc methods."""
    if method == "__call__" and not kwargs and ufunc.__name__ in UFUNCS:
        if type(inputs[0]) is Tensor:
            fn = _CALL[ufunc] = UFUNCS[ufunc.__name__]
            return fn(*inputs)
        x = inputs[0]
        if len(inputs) == 2 and ufunc.__name__ != "ldexp" and (type(x) in _NUMBERS or isinstance(x, np.generic)):
            fn = _CALL_REFLECTED[ufunc] = UFUNCS[ufunc.__name__]
            return fn(*inputs)
    name = ufunc.__name__
    who = f"np.{name}" if method == "__call__" else f"np.{name}.{method}"
    if method == "at":
        return numpy_out.ufunc_at(_compute, ufunc, inputs, kwargs, who)
    if not _trivial_out(kwargs):
        return numpy_out.ufunc_with_out(_compute, ufunc, method, inputs, kwargs, who)
    kwargs.pop("out", None)
    kwargs.pop("where", None)
    if method == "__call__":
        target = UFUNCS.get(name)
        if name == "positive":
            _no_extra(who, kwargs)
            return inputs[0] if isinstance(inputs[0], Tensor) else _pf().as_tensor(inputs[0])
        if target is None and ufunc in SCIPY_UFUNCS:
            _no_extra(who, kwargs)
            return SCIPY_UFUNCS[ufunc](*inputs)
        if name in M.NO_DERIVATIVE_UFUNCS:  # (on tensors without a derivative: NumPy's values)
            return numpy_writes.on_values(ufunc, who, inputs, kwargs, lambda: M.no_derivative_error(name))
        if target is None and name in M.UFUNC_COMPOSITES:
            axis = {"axis": kwargs.pop("axis")} if name == "vecdot" and "axis" in kwargs else {}
            _no_extra(who, kwargs)
            return M.UFUNC_COMPOSITES[name](*inputs, **axis)
        if target is None:  # (gcd, lcm, bitwise_count: no op; on values without a derivative)
            return numpy_writes.on_values(ufunc, who, inputs, kwargs, lambda: _unsupported(who))
        dtype = kwargs.pop("dtype", None)
        _no_extra(who, kwargs)
        # a reflected call (ndarray + Tensor): keep NumPy's order; a Python scalar stays one, weak
        # in the ops' promotion as in NumPy's (NEP 50), save for ldexp, whose op reads its mantissa's
        # dtype (a Python number's is NumPy's default, which is what NumPy computes in)
        x0 = inputs[0]
        if not isinstance(x0, (Tensor, bool, int, float, complex)) or isinstance(x0, np.generic) or name == "ldexp":
            inputs = (_pf().as_tensor(inputs[0]),) + inputs[1:]
        if dtype is not None and np.dtype(dtype).kind in "fc":  # NumPy computes in the dtype asked for
            inputs = tuple(i.to(np.dtype(dtype)) if isinstance(i, Tensor) else i for i in inputs)
        out = target(*inputs)
        return out if dtype is None or out.dtype == np.dtype(dtype) else out.to(np.dtype(dtype))
    return _ufunc_method(ufunc, method, inputs, kwargs, who)


def _ufunc_method(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict, who: str) -> Any:
    """ufunc.reduce / .accumulate / .outer on tensors."""
    name = ufunc.__name__
    if method == "reduce" and name in _REDUCE:
        (x,) = inputs
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        dtype = kwargs.pop("dtype", None)
        initial = kwargs.pop("initial", None)
        _no_extra(who, kwargs)
        out = _reduce(_REDUCE[name], _as_t(x), axis, keepdims)
        if initial is not None:  # one more operand of the reduction
            out = UFUNCS[name](out, initial)
        return out if dtype is None else out.to(np.dtype(dtype))
    if method == "accumulate" and name in _ACCUMULATE:
        (x,) = inputs
        axis = kwargs.pop("axis", 0)
        dtype = kwargs.pop("dtype", None)
        _no_extra(who, kwargs)
        out = _fn(_ACCUMULATE[name])(_as_t(x), axis)
        return out if dtype is None else out.to(np.dtype(dtype))
    if method == "outer" and ufunc.nin == 2:
        _no_extra(who, kwargs)
        a, b = (_as_t(v) for v in inputs)
        return _compute(ufunc, "__call__", a.reshape(*a.shape, *([1] * b.ndim)), b)
    raise _unsupported(who)


def _compute(ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """ufunc.<method> on tensors, without out= or where= (numpy_out adds them)."""
    return _array_ufunc(ufunc, method, inputs, kwargs)


def _trivial_out(kwargs: dict) -> bool:
    out = kwargs.get("out")
    no_out = out is None or (isinstance(out, tuple) and all(o is None for o in out))
    return no_out and kwargs.get("where", True) is True


def _unsupported(who: str) -> TypeError:
    return OpTypeError(
        f"{who} has no pushforward op, so it cannot carry tangents or gradients; call it on "
        "t.detach().numpy() if no derivative is needed, or use pushforward ops"
    )


def _as_t(x) -> Tensor:
    return x if isinstance(x, Tensor) else _deep_as_t(x)


def _reduce(name: str, x: Tensor, axis, keepdims: bool) -> Tensor:
    return reduced(_fn(name), x, axis, keepdims)


# -- functions -------------------------------------------------------------------------------
# Each handler takes NumPy's signature and calls pushforward ops.


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    if out is not None or kw:
        _no_extra("np.sum", dict(out=out, **kw))
    return _PF.sum(a if type(a) is Tensor else _as_t(a), axis, keepdims, dtype=dtype)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    if out is not None or kw:
        _no_extra("np.mean", dict(out=out, **kw))
    return _pf().mean(_floating(_as_t(a)), dim=axis, keepdim=keepdims, dtype=dtype)


def _prod(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    if out is not None or kw:
        _no_extra("np.prod", dict(out=out, **kw))
    return _pf().prod(_as_t(a), dim=axis, keepdim=keepdims, dtype=dtype)


def _std_var(name):
    def f(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        _no_extra(f"np.{name}", dict(out=out, **kw), ("correction",) if "correction" in kw else ())
        correction = kw.pop("correction", ddof)
        r = _fn(name)(_floating(_as_t(a)), dim=axis, correction=correction, keepdim=keepdims)
        return r if dtype is None else r.to(np.dtype(dtype))

    return f


def _extreme(name):
    def f(a, axis=None, out=None, keepdims=False, **kw):
        if out is not None or kw:  # (np.max in a loop: no keyword to check, a tensor, at once)
            _no_extra(f"np.{name}", dict(out=out, **kw))
        return reduced(getattr(_PF, name), a if type(a) is Tensor else _as_t(a), axis, keepdims)

    return f


def _arg(name):
    def f(a, axis=None, out=None, keepdims=False):
        _no_extra(f"np.{name}", dict(out=out))
        return _fn(name)(_as_t(a), dim=axis, keepdim=keepdims)

    return f


def _cum(name):
    def f(a, axis=None, dtype=None, out=None):
        _no_extra(f"np.{name}", dict(out=out))
        return _fn(name)(*along(_as_t(a), axis), dtype=dtype)

    return f


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None or casting != "same_kind":
        _no_extra("np.concatenate", dict(out=out, casting=casting))
    ts = [a if type(a) is Tensor else _as_t(a) for a in arrays]
    if axis is None:
        ts, axis = [t.reshape(-1) for t in ts], 0
    r = _PF.cat(ts, axis)
    return r if dtype is None else r.to(np.dtype(dtype))


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _no_extra("np.stack", dict(out=out, casting=casting))
    r = _pf().stack([_as_t(a) for a in arrays], axis)
    return r if dtype is None else r.to(np.dtype(dtype))


def _is_copy(out: Tensor, x: Tensor) -> bool:
    """Does out hold its own memory rather than a view of x's? (A Dask array has no memory to
    share: its reshape is always lazy, never a copy.)"""
    a, b = out._data, x._data
    return type(a) is np.ndarray and type(b) is np.ndarray and not np.shares_memory(a, b)


def _reshape(a, *args, **kwargs):
    shape = kwargs.pop("shape", kwargs.pop("newshape", args[0] if args else None))
    order = kwargs.pop("order", args[1] if len(args) > 1 else "C")
    copy = kwargs.pop("copy", None)  # NumPy 2.1's: True copies, False refuses to, None copies if it must
    if order != "C" or kwargs:
        _no_extra("np.reshape", dict(order=order, **kwargs), ("order",) if order == "C" else ())
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    x = _as_t(a)
    out = x.reshape(*shape)
    if copy and not _is_copy(out, x):
        return ops.clone(out)
    if copy is False and x.numel() and _is_copy(out, x):
        raise OpValueError(
            f"np.reshape: copy=False, but shape {tuple(x.shape)} -> {shape} needs a copy for this "
            "array's memory layout (pass copy=None to allow one)"
        )
    return out


def _transpose(a, axes=None):
    x = _as_t(a)
    return x.permute(*(range(x.ndim - 1, -1, -1) if axes is None else axes))


def _moveaxis(a, source, destination):
    x = _as_t(a)
    src = [check_dim(int(s), x.ndim, "np.moveaxis") for s in np.atleast_1d(source)]
    dst = [check_dim(int(d), x.ndim, "np.moveaxis") for d in np.atleast_1d(destination)]
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.permute(*order)


def _squeeze(a, axis=None):
    x = _as_t(a)
    if axis is None:
        return x.squeeze()
    axes = axes_of(axis, x.ndim, "np.squeeze")
    if any(x.shape[d] != 1 for d in axes):  # (NumPy's rule; the squeeze op passes over such an axis, as torch's)
        raise OpValueError(
            f"np.squeeze: cannot select an axis to squeeze out which has size not equal to one: axis {axis} of shape {tuple(x.shape)}"
        )
    return x.squeeze(axes)


def _expand_dims(a, axis):
    x = _as_t(a)
    axes = axes_of(axis, x.ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1), "np.expand_dims")
    for ax in sorted(axes):
        x = x.unsqueeze(ax)
    return x


def _where(condition, *xy):
    if not xy:  # np.nonzero(condition): indices, no derivative
        try:
            nz = np.nonzero(_as_t(condition).detach().numpy())
        except ValueError as e:  # (NumPy 2's refusal of a 0-d condition)
            raise numpy_error("np.where", e) from e
        return tuple(_pf().as_tensor(i) for i in nz)
    return _PF.where(condition if type(condition) is Tensor else _as_t(condition), *xy)


def _clip(a, a_min=None, a_max=None, out=None, **kw):
    _no_extra("np.clip", dict(out=out, **kw), ("min", "max"))
    lo = kw.get("min", a_min)
    hi = kw.get("max", a_max)
    if lo is None and hi is None:  # NumPy 2.1's clip of no bounds is a copy (the clamp op refuses it, as torch's)
        return ops.clone(_as_t(a))
    return _pf().clamp(_as_t(a), lo, hi)


def _flip(m, axis=None):
    x = _as_t(m)
    dims = tuple(range(x.ndim)) if axis is None else tuple(np.atleast_1d(axis))
    return x.flip(dims)


def _roll(a, shift, axis=None):
    x = _as_t(a)
    if axis is None:
        return x.reshape(-1).roll(shift, 0).reshape(*x.shape)
    return x.roll(shift, axis)


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _no_extra("np.trace", dict(out=out))
    r = _as_t(a).diagonal(offset, axis1, axis2).sum(-1)
    return r if dtype is None else r.to(np.dtype(dtype))


def _round(a, decimals=0, out=None):
    _no_extra("np.round", dict(out=out))
    return _as_t(a).round(decimals=decimals)


def _norm(x, ord=None, axis=None, keepdims=False):
    return _pf().linalg.norm(_as_t(x), ord, axis, keepdims)


def _like(name):
    def f(a, dtype=None, order="K", subok=True, shape=None, **kw):
        _no_extra(f"np.{name}", dict(order=order, subok=subok, **kw), ("fill_value",))
        x = _as_t(a)
        if shape is not None:
            x = _pf().empty(*np.atleast_1d(shape).tolist(), dtype=x.dtype)
        if name == "full_like":
            return _pf().full_like(x, kw["fill_value"], dtype=dtype)
        return _fn(name)(x, dtype=dtype)

    return f


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return _like("full_like")(a, dtype=dtype, order=order, subok=subok, shape=shape, fill_value=fill_value)


def _linalg(name: str) -> Callable:
    """np.linalg.<name> -> pushforward.linalg.<name> (whose arguments are NumPy's), looked up at call time."""

    def f(*args, **kwargs):
        target = getattr(linalg, name, None)  # (looked up at call time: it may come and go)
        if target is None:
            raise _unsupported(f"np.linalg.{name}")
        return target(*[_as_t(a) if isinstance(a, (np.ndarray, Tensor)) else a for a in args], **kwargs)

    f.__name__ = name
    return f


def _functions() -> dict:
    pf = _pf()
    table = {
        np.sum: _sum,
        np.mean: _mean,
        np.prod: _prod,
        np.std: _std_var("std"),
        np.var: _std_var("var"),
        np.amax: _extreme("amax"),
        np.amin: _extreme("amin"),
        np.max: _extreme("amax"),
        np.min: _extreme("amin"),
        np.argmax: _arg("argmax"),
        np.argmin: _arg("argmin"),
        np.cumsum: _cum("cumsum"),
        np.cumprod: _cum("cumprod"),
        np.concatenate: _concatenate,
        np.stack: _stack,
        np.reshape: _reshape,
        np.ravel: lambda a, order="C": _reshape(a, -1, order),
        np.transpose: _transpose,
        np.moveaxis: _moveaxis,
        np.swapaxes: lambda a, axis1, axis2: _as_t(a).transpose(axis1, axis2),
        np.squeeze: _squeeze,
        np.expand_dims: _expand_dims,
        np.broadcast_to: lambda array, shape, subok=False: _as_t(array).broadcast_to(
            *((shape,) if isinstance(shape, (int, np.integer)) else tuple(shape))
        ),
        np.vdot: lambda a, b: _pf().dot(_as_t(a).conj().reshape(-1), _as_t(b).reshape(-1)),
        np.inner: _inner,
        np.fix: lambda x, out=None: _pf().trunc(_as_t(x)),
        np.outer: lambda a, b, out=None: _pf().outer(_as_t(a).reshape(-1), _as_t(b).reshape(-1)),
        np.diagonal: lambda a, offset=0, axis1=0, axis2=1: _as_t(a).diagonal(offset, axis1, axis2),
        np.trace: _trace,
        np.tril: lambda m, k=0: _pf().tril(_as_t(m), k),
        np.triu: lambda m, k=0: _pf().triu(_as_t(m), k),
        np.where: _where,
        np.clip: _clip,
        np.flip: _flip,
        np.roll: _roll,
        np.real: lambda val: _as_t(val).real if _as_t(val).is_complex() else _as_t(val),
        np.imag: lambda val: _pf().imag(_as_t(val)) if _as_t(val).is_complex() else _pf().zeros_like(_as_t(val)),
        np.conj: lambda x, *a, **k: _pf().conj(_as_t(x)),
        np.round: _round,
        np.around: _round,
        np.abs: lambda x, *a, **k: _pf().abs(_as_t(x)),
        np.all: lambda a, axis=None, out=None, keepdims=False, **k: pf.all(_as_t(a), axis, keepdims),
        np.any: lambda a, axis=None, out=None, keepdims=False, **k: pf.any(_as_t(a), axis, keepdims),
        np.allclose: lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: pf.allclose(a, b, rtol, atol, equal_nan),
        np.isclose: lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: pf.isclose(a, b, rtol, atol, equal_nan),
        np.array_equal: lambda a1, a2, equal_nan=False: pf.equal(a1, a2),
        np.shape: lambda a: tuple(a.shape),
        np.ndim: lambda a: a.ndim,
        np.size: lambda a, axis=None: a.numel() if axis is None else a.shape[axis],
        np.iscomplexobj: lambda x: x.is_complex(),
        np.isrealobj: lambda x: not x.is_complex(),
        np.copy: lambda a, order="K", subok=False: _as_t(a).clone(),
        np.zeros_like: _like("zeros_like"),
        np.ones_like: _like("ones_like"),
        np.empty_like: _like("empty_like"),
        np.full_like: _full_like,
        np.linalg.norm: _norm,
    }
    table[np.linalg.cholesky] = _cholesky
    table.update(T.extra_functions())
    for name in {**T.VALUES_ONLY, **T.NO_DERIVATIVE}:  # on values (a derivative: where the result has none)
        fn = getattr(np, name, None)
        if callable(fn):
            table[fn] = _values_unless_derivative(fn, name)
    for name in dir(np.linalg):  # the rest of np.linalg: pf.linalg's function of the same name
        fn = getattr(np.linalg, name)
        if hasattr(linalg, name) and callable(fn) and fn not in table:
            table[fn] = _linalg(name)
    table.update(numpy_writes.FUNCTIONS)
    table.update(numpy_histogram.FUNCTIONS)
    table.update(numpy_creation.LIKE)
    return table


def _values_unless_derivative(fn: Callable, name: str) -> Callable:
    def f(*args, **kwargs):
        return numpy_writes.on_values(fn, f"np.{name}", args, kwargs, lambda: T.no_derivative_error(name))

    return f


def _cholesky(a, upper: bool = False):
    """np.linalg.cholesky reads one triangle of its input (the lower; upper=True: the upper) and
    ignores the other, so its derivative is that of the function of that triangle: the Hermitian
    matrix it stands for is built first. pf.linalg keeps torch's convention (docs/linalg.md,
    "Hermitian inputs")."""
    a = _as_t(a)
    square = a.ndim >= 2 and a.shape[-1] == a.shape[-2]  # (else pf.linalg.cholesky's own error)
    r = linalg.cholesky(ops._hermitian_from_triangle(a, "U" if upper else "L") if square else a)
    return r.mH if upper else r


def _inner(a, b):
    a, b = _as_t(a), _as_t(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return (
        _pf()
        .einsum("ij,kj->ik", a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1]))
        .reshape(*a.shape[:-1], *b.shape[:-1])
    )


_FUNCTIONS: dict = {}  # NumPy function -> handler, filled on first use (_functions)
_TENSOR_ONLY = (Tensor,)
# NumPy function -> (op, fewest, most positional arguments) for the functions whose call with a
# tensor first and that many positional arguments is the op's call with the same arguments (the
# reductions with or without an axis, np.where(c, x, y)): NumPy's dispatch lands on the op itself
# ("NumPy dispatch in one frame", docs/design.md)
_DIRECT: dict = {}


def array_function(self: Tensor, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
    """NEP 18 entry point: np.<function>(..., tensor, ...) runs pushforward ops."""
    if not kwargs and types == _TENSOR_ONLY:
        direct = _DIRECT.get(func)
        if direct is not None and type(args[0]) is Tensor:
            op, fewest, most = direct
            if fewest <= len(args) <= most:
                return op(*args)
        handler = _FUNCTIONS.get(func)
        if handler is not None:
            return handler(*args)
    return _array_function(func, types, args, kwargs)


def _array_function(func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
    """array_function past its fast path: other array libraries' types, functions with no
    handler, out=, where=."""
    if not _FUNCTIONS:
        _fill_functions()
    handler = _FUNCTIONS.get(func)
    for t in types:  # another array library's type: let it (or NumPy) decide
        if not issubclass(t, (Tensor, np.ndarray)):
            return NotImplemented
    if handler is None:
        mod = getattr(func, "__module__", "numpy") or "numpy"
        who = ("np.linalg." if "linalg" in mod else "np.") + getattr(func, "__name__", repr(func))
        return numpy_writes.on_values(func, who, args, kwargs, lambda: _unsupported(who))
    out = kwargs.get("out")
    if out is not None and not isinstance(out, tuple):
        del kwargs["out"]
        return numpy_out.into_out(_call_masked(func, handler, args, kwargs), out, _who(func))
    return _call_masked(func, handler, args, kwargs)


def _fill_functions() -> None:
    pf = _pf()
    _FUNCTIONS.update(_functions())
    reductions = {np.sum: pf.sum, np.prod: pf.prod, np.max: pf.amax, np.amax: pf.amax, np.min: pf.amin}
    reductions.update({np.amin: pf.amin, np.all: pf.all, np.any: pf.any})
    _DIRECT.update({func: (op, 1, 2) for func, op in reductions.items()})
    _DIRECT[np.where] = (pf.where, 3, 3)  # (np.where(c): np.nonzero, the handler's)


def _who(func: Callable) -> str:
    return "np." + getattr(func, "__name__", repr(func))


def _call_masked(func: Callable, handler: Callable, args: tuple, kwargs: dict) -> Any:
    """handler(*args, **kwargs); a reduction's where= (np.sum(a, where=m)) reduces the masked operand."""
    where = kwargs.get("where", True)
    if where is True or func not in _MASKED:
        return handler(*args, **kwargs)
    del kwargs["where"]
    a, *rest = args if args else (kwargs.pop("a"),)
    mask = _as_t(where)
    if func is np.mean:
        total = _sum(_pf().where(mask, _floating(_as_t(a)), 0.0), *rest, **kwargs)
        kwargs.pop("dtype", None)
        return total / _sum(mask.broadcast_to(*_as_t(a).shape).to(total.dtype), *rest[:1], **kwargs)
    ufunc = _MASKED[func]
    initial = kwargs.pop("initial", None) if ufunc.identity is None else None
    return handler(numpy_out.masked_operand(ufunc, _as_t(a), mask, initial, _who(func)), *rest, **kwargs)


# reductions taking where=: the ufunc each reduces with, whose identity a masked-out element stands
# for (as ufunc.reduce's where=; none for max and min: initial= is needed)
_MASKED = {np.sum: np.add, np.prod: np.multiply, np.mean: np.add, np.nansum: np.add}
_MASKED.update({np.max: np.maximum, np.min: np.minimum, np.amax: np.maximum, np.amin: np.minimum})
_MASKED.update({np.all: np.logical_and, np.any: np.logical_or})


def array(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """np.asarray(t): the tensor's values, unless a derivative would be lost (then raise, as torch)."""
    if has_derivative(self) and (dtype is None or np.dtype(dtype).kind not in "biu"):
        # (an integer or bool array asked for, np.int64(t): piecewise constant, nothing is lost)
        raise_lost_derivative(self, "convert a Tensor to a NumPy array")
    a = self._data
    if type(a) is not np.ndarray and isinstance(a, np.ndarray):  # a recording array (compiler/recording.py)
        a = a.__array__()  # refuses: reading its values is data-dependent control flow
    else:
        a = concrete(a)  # a lazy tensor computes here (the explicit way out)
    if dtype is not None and a.dtype != dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


def raise_lost_derivative(t: Tensor, action: str) -> None:
    raise lost_derivative(t, action)


def _astype(self: Tensor, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True, copy: bool = True):
    """ndarray.astype: the tensor in dtype (a differentiable cast; a copy when copy=True)."""
    _no_extra("ndarray.astype", dict(order=order, subok=subok))
    if np.dtype(dtype) == self.dtype:
        return self.clone() if copy else self
    return self.to(np.dtype(dtype))


def _fill(self: Tensor, value: Any) -> None:
    """ndarray.fill: every element set to value, in place (recorded; None, as NumPy returns)."""
    self.copy_(value)


def _ndarray_dot(self: Tensor, b: Any, out: Any = None) -> Tensor:
    return M.dot(self, b, out)


# ndarray methods NumPy code calls that torch's Tensor lacks (or has with a narrower meaning: torch's
# dot takes 1-D tensors only, NumPy's is the general product, which agrees on 1-D)
METHODS: dict[str, Callable] = {
    "astype": _astype,
    "ravel": lambda self, order="C": _reshape(self, -1, order),
    "copy": lambda self, order="C": self.clone(),
    "fill": _fill,
    "dot": _ndarray_dot,
}


def handler(func: Callable) -> Callable | None:
    """The NEP-18 handler of a NumPy function (None if it has none): pushforward.numpy calls the
    same handlers, so one rule decides the values in both."""
    if not _FUNCTIONS:
        _fill_functions()
    return _FUNCTIONS.get(func)
