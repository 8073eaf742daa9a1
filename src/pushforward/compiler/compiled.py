"""`pf.compile`: a function traced once per signature and run as straight-line NumPy.

A call's signature is, per tensor argument, its shape, dtype and strides; grad mode, the number
of live dual levels; every other argument by value. Calls whose tensors need autodiff here (they
require grad with grad mode on, or carry a tangent at a live level) run through a custom
`autograd.Function` whose forward is the compiled program and whose backward and jvp are
compiled vjp and jvp functions of fn (so double backward and nested levels compose).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from typing import Any, Callable

import numpy as np

from ..autograd.function import Function
from ..core.pytree import tree_flatten
from ..core.tensor import Tensor
from ..engine.grad_mode import set_grad_enabled
from ..engine.state import STATE
from ..engine.tangents import levels_of
from ..errors import CompileError, OpTypeError
from ..func.transforms import jvp, vjp
from .trace import DataDependent, GuardFailed, Untraceable, trace_call

__all__ = ["CompiledFunction", "compile", "MAX_SIGNATURES"]

MAX_SIGNATURES = 8
MAX_GUARDED = 4  # traces of one signature for other values of what it branched on (guards)
_new = object.__new__
_HERE = os.path.dirname(os.path.abspath(__file__))
_EAGER = object()
_STATIC = frozenset((int, float, bool, str, complex))


class CompiledFunction:
    """What `pf.compile(fn)` returns: call it as fn; `source(*args)` shows the generated program."""

    def __init__(self, fn: Callable, fullgraph: bool = False) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
        self._cache: dict = {}
        self._warned: set = set()
        self._op = None
        self._vjp = None
        self._jvp = None
        self._outer_grad = True
        try:
            self._params = [p for p in inspect.signature(fn).parameters]
        except (TypeError, ValueError):
            self._params = []
        functools.update_wrapper(self, fn, updated=())

    # -- the fast path: positional plain tensors and static scalars
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            st = STATE
            key = [st.grad_enabled, len(st.levels)]
            datas = []
            for a in args:
                ta = type(a)
                if ta is Tensor and not a._ad:
                    d = a._data
                    datas.append(d)
                    key += (d.shape, d.dtype, d.strides)  # (flat: one tuple for the whole key)
                elif ta in _STATIC:
                    key += (ta, a)
                else:
                    break
            else:
                e = self._cache.get(tuple(key))
                if e is not None and e is not _EAGER:
                    if e.simple:
                        try:
                            out = e.fn(*datas)[0]
                        except Exception as exc:  # noqa: BLE001 - see _failed
                            return self._failed(e, exc, args, kwargs)
                        t = _new(Tensor)
                        t._data = out
                        return t
                    try:
                        r = e.run([a for a in args if type(a) is Tensor])
                    except Exception as exc:  # noqa: BLE001 - see _failed
                        return self._failed(e, exc, args, kwargs)
                    return r if r is not NotImplemented else self.fn(*args)
        return self._slow(args, kwargs)

    def _failed(self, e, exc: Exception, args: tuple, kwargs: dict) -> Any:
        """The program raised (NumPy's error, e.g. LinAlgError, at inputs outside an op's domain):
        the eager call raises the library's error, which names the op and its inputs, instead. A
        program that writes into its inputs may have written some: it cannot be run again. A
        failed guard: another trace (_other_trace)."""
        if isinstance(exc, GuardFailed):
            return self._other_trace(e, exc, args, kwargs)
        if e.writes_inputs or e.bumps:
            raise CompileError(
                f"pf.compile({self.name}): the compiled program raised {type(exc).__name__}: {exc}, after it may "
                "have written into its inputs; call the function uncompiled for the library's error"
            ) from exc
        return self.fn(*args, **kwargs)

    def _other_trace(self, e, exc: GuardFailed, args: tuple, kwargs: dict) -> Any:
        """A guard of e failed (a value it branched on differs; the program restored any input it
        wrote): the trace of this signature whose guards hold, traced now if there is none yet
        (up to MAX_GUARDED), else fn eagerly."""
        leaves, spec = tree_flatten((args, kwargs))
        tpos = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
        tensors = [leaves[i] for i in tpos]
        for alt in e.others:
            if alt is _EAGER:
                break
            try:
                r = alt.run(tensors)
            except GuardFailed:
                continue
            except Exception as err:  # noqa: BLE001 - see _failed
                return self._failed(alt, err, args, kwargs)
            return self.fn(*args, **kwargs) if r is NotImplemented else r
        else:
            if len(e.others) < MAX_GUARDED:
                alt = self._trace(spec, leaves, tpos)
                e.others.append(alt)
                if alt is not _EAGER:
                    return self._other_trace(e, exc, args, kwargs)
            else:
                e.others.append(_EAGER)
                self._warn(
                    "guards",
                    f"pf.compile({self.name}): {exc.op} at {exc.site} went another way than in each of its "
                    f"{MAX_GUARDED + 1} traces; calls where it does run eagerly",
                )
        return self.fn(*args, **kwargs)

    def _slow(self, args: tuple, kwargs: dict) -> Any:
        leaves, spec = tree_flatten((args, kwargs))
        tpos = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
        if any(type(leaves[i]) is not Tensor for i in tpos):
            return self._eager(args, kwargs, None)  # batched (vmap) or interpreted tensors: their own rules
        if any(_needs_ad(leaves[i]) for i in tpos):
            if kwargs or spec.children[0].kind != "tuple" or len(tpos) != len(args) - _n_static(args):
                return self._eager(args, kwargs, "autodiff through a compiled function takes positional arguments")
            return self._composed(args)
        key = self._key(leaves, spec, tpos)
        e = self._cache.get(key)
        if e is None:
            e = self._new_entry(key, spec, leaves, tpos)
        if e is _EAGER:
            return self.fn(*args, **kwargs)
        try:
            r = e.run([leaves[i] for i in tpos])
        except Exception as exc:  # noqa: BLE001 - see _failed
            return self._failed(e, exc, args, kwargs)
        return self.fn(*args, **kwargs) if r is NotImplemented else r

    def _key(self, leaves: list, spec, tpos: list) -> tuple:
        key = [STATE.grad_enabled, len(STATE.levels)]
        for v in leaves:
            if isinstance(v, Tensor):
                d = v._data
                key += (d.shape, d.dtype, d.strides)
            else:
                try:
                    hash(v)
                except TypeError:
                    raise OpTypeError(
                        f"pf.compile({self.name}): an argument of type {type(v).__name__} is not hashable; "
                        "non-tensor arguments are part of the signature, by value"
                    ) from None
                key += (type(v), v)
        if not spec.children[1].children and all(c.kind == "leaf" for c in spec.children[0].children):
            return tuple(key)  # flat positional leaves: the key the fast path builds
        return (tuple(key), spec)  # None and nested arguments: their structure is part of the signature

    def _new_entry(self, key, spec, leaves: list, tpos: list):
        if len(self._cache) >= MAX_SIGNATURES:
            self._warn(
                "limit",
                f"pf.compile({self.name}): {MAX_SIGNATURES} signatures compiled already (the recompile limit); "
                "calls with a new signature run eagerly",
            )
            return _EAGER
        e = self._cache[key] = self._trace(spec, leaves, tpos)
        return e

    def _trace(self, spec, leaves: list, tpos: list):
        """The entry of fn traced on these leaves, or _EAGER (with the warning saying why)."""
        names = [self._arg_name(i, leaves) for i in tpos]
        try:
            return trace_call(self.fn, self.name, spec, leaves, tpos, names)
        except DataDependent as exc:
            msg = (
                f"pf.compile({self.name}): data-dependent control flow: {exc.op} at {exc.site} reads a traced "
                "value that changes with the inputs (or makes a value-dependent shape)"
            )
            return self._refuse(msg)
        except Untraceable as exc:
            return self._refuse(f"pf.compile({self.name}): cannot compile: {exc.why} (at {exc.site})")

    def _refuse(self, msg: str):
        if self.fullgraph:
            raise CompileError(msg) from None
        self._warn(msg, msg + "; running eagerly")
        return _EAGER

    def _warn(self, what: str, msg: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            f, level = sys._getframe(), 1  # point the warning at the caller of the compiled function
            while f.f_back is not None and f.f_code.co_filename.startswith(_HERE):
                f, level = f.f_back, level + 1
            warnings.warn(msg, RuntimeWarning, stacklevel=level)

    def _eager(self, args: tuple, kwargs: dict, why: str | None) -> Any:
        if why is not None:
            if self.fullgraph:
                raise CompileError(f"pf.compile({self.name}): {why}")
            self._warn(why, f"pf.compile({self.name}): {why}; running eagerly")
        return self.fn(*args, **kwargs)

    def _arg_name(self, i: int, leaves: list) -> str:
        k = i  # leaf index == positional index for flat positional calls
        if k < len(self._params) and self._params[k].isidentifier() and len(leaves) <= len(self._params):
            return self._params[k]
        return f"a{i}"

    def source(self, *args: Any, **kwargs: Any) -> str:
        """The generated Python for this call's signature (traced now if it was not yet).

        >>> import pushforward as pf
        >>> f = pf.compile(lambda x: pf.sin(x) * x)
        >>> print(f.source(pf.ones(3)))  # doctest: +ELLIPSIS
        def ...(x):
            sin_0 = np.sin(x)
            multiply_0 = sin_0 * x
            return (multiply_0,)
        <BLANKLINE>
        """
        e, _, _ = self._lookup(args, kwargs)
        if e is _EAGER:
            raise CompileError(f"pf.compile({self.name}): this signature runs eagerly (see the warning): no source")
        return e.program.source

    # -- composition: autodiff from outside
    def _composed(self, args: tuple) -> Any:
        e, _, _ = self._lookup(args, {})  # traced here, under the caller's grad mode
        if e is _EAGER:
            return self.fn(*args)
        if e.writes_inputs or e.bumps:
            self._warn(
                "inplace-ad",
                f"pf.compile({self.name}): in-place writes into inputs that need autodiff are not compiled; "
                "running eagerly",
            )
            return self.fn(*args)
        if self._op is None:
            self._op = _function_of(self)
        self._outer_grad = STATE.grad_enabled  # (Function.forward runs under no_grad; fn must not)
        return self._op.apply(*args)

    def _lookup(self, args: tuple, kwargs: dict) -> tuple:
        """(the entry of this call's signature, traced now if new; the leaves; tensor positions)."""
        leaves, spec = tree_flatten((args, kwargs))
        tpos = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
        key = self._key(leaves, spec, tpos)
        e = self._cache.get(key)
        if e is None:
            e = self._new_entry(key, spec, leaves, tpos)
        return e, leaves, tpos

    def _plain(self, args: tuple) -> Any:
        e, leaves, tpos = self._lookup(args, {})
        if e is _EAGER:
            return self.fn(*args)
        try:
            r = e.run([leaves[i] for i in tpos])
        except GuardFailed as exc:
            return self._other_trace(e, exc, args, {})
        return r if r is not NotImplemented else self.fn(*args)


def _n_static(args: tuple) -> int:
    return sum(1 for a in args if not isinstance(a, Tensor))


def _needs_ad(t: Tensor) -> bool:
    if not t._ad:
        return False
    if t._requires_grad and STATE.grad_enabled:
        return True
    return bool(STATE.levels) and bool(list(levels_of(t)))


def _fresh(t: Tensor, datas: list) -> Tensor:
    # (an empty array shares no memory by NumPy's test: a view of an input is recognised by its base)
    if (t._base is not None and t._data.size == 0) or any(np.may_share_memory(t._data, d) for d in datas):
        c = _new(Tensor)
        c._data = t._data.copy()
        return c
    return t


def _diff_positions(args: tuple) -> tuple:
    return tuple(i for i, a in enumerate(args) if isinstance(a, Tensor) and a.dtype.kind in "fc")


def _of_diff(fn: Callable, args: tuple, pos: tuple) -> Callable:
    """fn as a function of its arguments at positions `pos` only (the others fixed to args)."""

    def f(*ts):
        a = list(args)
        for p, t in zip(pos, ts):
            a[p] = t
        return fn(*a)

    return f


def _vjp_program(fn: Callable) -> Callable:
    def vjp_of(n: int, pos: tuple, *rest):
        args, grads = rest[:n], rest[n:]
        out, back = vjp(_of_diff(fn, args, pos), *[args[p] for p in pos])
        return back(grads[0] if not isinstance(out, tuple) else tuple(grads))

    vjp_of.__qualname__ = f"vjp_of_{getattr(fn, '__name__', 'fn')}"
    return vjp_of


def _jvp_program(fn: Callable) -> Callable:
    def jvp_of(n: int, pos: tuple, *rest):
        args, tans = rest[:n], rest[n:]
        return jvp(_of_diff(fn, args, pos), tuple(args[p] for p in pos), tuple(tans))[1]

    jvp_of.__qualname__ = f"jvp_of_{getattr(fn, '__name__', 'fn')}"
    return jvp_of


def _function_of(cf: CompiledFunction) -> type:
    """The custom Function running cf's program forward and its compiled vjp / jvp."""

    def forward(ctx, *args):
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.save_for_forward(*tensors)
        ctx.args = args
        with set_grad_enabled(cf._outer_grad):  # fn's own autodiff (a grad inside it) as eagerly
            out = cf._plain(args)
        if isinstance(out, list):
            out = tuple(out)
        if not isinstance(out, Tensor) and not (isinstance(out, tuple) and all(isinstance(o, Tensor) for o in out)):
            raise CompileError(
                f"pf.compile({cf.name}): autodiff through a compiled function needs Tensor outputs "
                f"(a Tensor or a tuple of Tensors), got {type(out).__name__}"
            )
        # An output on an input's or another output's memory (a view, a detach) would see that one's
        # tangent through the shared storage: through autodiff from outside, outputs are fresh tensors.
        datas = [t._data for t in tensors]
        if isinstance(out, Tensor):
            return _fresh(out, datas)
        res = []
        for o in out:
            res.append(_fresh(o, datas))
            datas.append(res[-1]._data)
        return tuple(res)

    def _args(ctx):
        saved = iter(ctx.saved_tensors)
        return tuple(next(saved) if isinstance(a, Tensor) else a for a in ctx.args)

    def backward(ctx, *grads):
        if cf._vjp is None:
            cf._vjp = CompiledFunction(_vjp_program(cf.fn), cf.fullgraph)
        args = _args(ctx)
        pos = _diff_positions(args)
        gs = cf._vjp(len(args), pos, *args, *grads)
        res = [None] * len(args)
        for p, g in zip(pos, gs):
            res[p] = g
        return tuple(res)

    def jvp(ctx, *tangents):
        if cf._jvp is None:
            cf._jvp = CompiledFunction(_jvp_program(cf.fn), cf.fullgraph)
        args = _args(ctx)
        pos = _diff_positions(args)
        return cf._jvp(len(args), pos, *args, *[tangents[p] for p in pos])

    ns = {"forward": staticmethod(forward), "backward": staticmethod(backward), "jvp": staticmethod(jvp)}
    return type(f"Compiled_{cf.fn.__class__.__name__}", (Function,), ns)


def compile(fn: Callable, *, fullgraph: bool = False) -> CompiledFunction:  # noqa: A001 - torch's name
    """fn traced once per signature and replayed as straight-line NumPy (see docs/compile.md).

    >>> import pushforward as pf
    >>> f = pf.compile(lambda x: pf.sin(x) * x + pf.tanh(x))
    >>> f(pf.tensor([0.0, 1.0]))
    tensor([0.        , 1.60306514])
    """
    if not callable(fn):
        raise OpTypeError(f"pf.compile: expected a callable, got {type(fn).__name__}")
    return CompiledFunction(fn, fullgraph)
