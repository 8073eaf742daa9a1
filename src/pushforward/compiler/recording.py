"""Recording arrays: an ndarray subclass that logs every NumPy call made on it.

While a compiled function is traced, its tensors' arrays are `Rec` arrays. Every ufunc
(`__array_ufunc__`), every NumPy function (`__array_function__`), indexing, assignment and the
array methods that make new arrays or views call NumPy on the plain arrays underneath and append
one `Stmt` to the active `Trace`; their results are `Rec` arrays again. Because the engine's
kernels, array formulas, backward formulas and accumulation all compute on these arrays, the log
is the program the engine executed (forward, tangents, backward, vector mode, nested levels).

A branch on a value (`bool`, `int` of a traced array) is a guard statement: the program checks
the value is the traced one and raises `GuardFailed` if not (compiled.py then runs another trace).
Boolean-mask indexing stays in the program, behind a guard on the mask's count (`_guard_masks`).
Reading a value into Python as a number (`float`, `.item()`, `.tolist()`, `np.asarray(t)`) or an
op whose result shape depends on values (`nonzero`, `unique`) stops the trace with
`DataDependent`; a construct the recorder cannot follow stops it with `Untraceable`.
Either way the compiled function runs eagerly instead (compiled.py).
"""

from __future__ import annotations

import itertools
import operator
import os
import sys
import weakref
from typing import Any

import numpy as np
import scipy.special as sps
from numpy.lib.stride_tricks import as_strided

from ..core import backend

__all__ = [
    "Rec",
    "Trace",
    "Var",
    "Const",
    "Stmt",
    "DataDependent",
    "GuardFailed",
    "Untraceable",
    "active",
    "user_site",
    "trace_call",
    "walk_args",
    "map_args",
    "subst_args",
    "one_value",
    "new_root",
]

_view = np.ndarray.view
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_DIRS = (_PKG_DIR, os.path.dirname(np.__file__), os.path.dirname(sps.__file__).rsplit(os.sep, 1)[0])


class DataDependent(BaseException):  # (not Exception: kernels re-raise those as OpError)
    """The trace read a traced value into Python, or made a value-dependent shape."""

    def __init__(self, op: str, site: str) -> None:
        super().__init__(op, site)
        self.op = op
        self.site = site


class GuardFailed(Exception):
    """A value a compiled program branched on when it was traced (`bool`, `int` of a traced
    array) is different in this call: the program is not the one for these inputs."""

    def __init__(self, op: str, site: str) -> None:
        super().__init__(f"{op} at {site} differs from the traced value")
        self.op = op
        self.site = site


class Untraceable(BaseException):
    """The trace met a construct the recorder cannot replay."""

    def __init__(self, why: str, site: str) -> None:
        super().__init__(why, site)
        self.why = why
        self.site = site


def user_site() -> str:
    """file:line of the innermost frame outside pushforward, NumPy and SciPy (the user's code)."""
    f = sys._getframe(1)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_SKIP_DIRS):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


class Var:
    """A program variable: one array the trace made (or an input)."""

    __slots__ = ("name", "root", "scalar", "shape", "dtype", "contig", "forward", "fresh", "const_base")

    def __init__(self, name: str, raw, root: int, scalar: bool = False) -> None:
        self.name = name
        self.root = root  # id of the buffer its memory belongs to (views share their base's)
        self.scalar = scalar  # replay may give a NumPy scalar
        self.shape = getattr(raw, "shape", None)
        self.dtype = getattr(raw, "dtype", None)
        self.contig = bool(getattr(raw, "flags", None) is not None and raw.flags.c_contiguous)
        # (no negative stride: BLAS reads it; NumPy sums a reversed vector by its own loop)
        self.forward = self.contig or min(getattr(raw, "strides", None) or (0,)) >= 0
        self.fresh = False  # owns its memory (a new buffer made by this statement)
        self.const_base = None  # the Const whose memory this view looks into (writes reach it)

    def __repr__(self) -> str:
        return self.name


class Const:
    """An object the program reads as a constant (an array made outside the trace, a function)."""

    __slots__ = ("name", "obj")

    def __init__(self, name: str, obj: Any) -> None:
        self.name = name
        self.obj = obj


class Stmt:
    """One recorded call: `outs = fn(*args, **kwargs)` (or a method, an index, an assignment)."""

    __slots__ = (
        "kind",
        "fn",
        "_args",
        "_kwargs",
        "outs",
        "writes",
        "label",
        "scalar_out",
        "tuple_out",
        "bare",
        "_leaves",
        "_reads",
    )

    def __init__(self, kind: str, fn: Any, args: tuple, kwargs: dict, label: str) -> None:
        self.kind = kind  # "call", "method", "getitem", "setitem", "attr"
        self.fn = fn  # callable (call), method/attribute name (method, attr)
        self._args = args  # encoded: Var, Const, literals, nested tuples/lists/dicts/slices
        self._kwargs = kwargs
        self._leaves = self._reads = None
        self.outs: list = []  # Vars (a tuple result: several)
        self.writes: list = []  # Vars written in place
        self.label = label
        self.scalar_out = False
        self.tuple_out = False  # the call returns a tuple (of one array, possibly)
        self.bare = False  # replayed as a NumPy scalar (not made a 0-d array again: scalars.py)

    # (the passes ask each statement what it reads many times: found once per change of arguments;
    # the getters are C attribute lookups, the passes read them a few times per statement)
    def _set_args(self, value: tuple) -> None:
        self._args = value
        self._leaves = self._reads = None

    def _set_kwargs(self, value: dict) -> None:
        self._kwargs = value
        self._leaves = self._reads = None

    args = property(operator.attrgetter("_args"), _set_args)
    kwargs = property(operator.attrgetter("_kwargs"), _set_kwargs)

    @property
    def leaves(self) -> list:
        """The Vars and Consts in the arguments, in order."""
        if self._leaves is None:
            acc: list = []
            _collect(self._args, acc)
            if self._kwargs:
                _collect(self._kwargs, acc)
            self._leaves = acc
        return self._leaves

    @property
    def reads(self) -> list:
        """The Vars in the arguments (not the buffers written through `out=`-like writes alone)."""
        if self._reads is None:
            self._reads = [v for v in self.leaves if type(v) is Var]
        return self._reads

    def substitute(self, sub: dict) -> None:
        """Each Var whose id is in `sub` replaced by sub[id], in the arguments and the writes."""
        for v in self.reads:
            if id(v) in sub:
                self.args, self.kwargs = subst_args(self._args, sub), subst_args(self._kwargs, sub)
                break
        if self.writes and any(type(w) is Var and id(w) in sub for w in self.writes):
            self.writes = [sub.get(id(w), w) if type(w) is Var else w for w in self.writes]


class Trace:
    """The log of one traced call."""

    def __init__(self) -> None:
        self.stmts: list = []
        self.inputs: list = []
        self.consts: dict = {}  # id(obj) -> Const
        # (the trace keeps no traced buffer alive: that would change the reference counts the engine
        # reads to accumulate in place; roots are tokens stored on the buffers, see _root_of)
        self.keep: list = []
        self.counts: dict = {}
        self.roots: dict = {}  # root key (_root_of) -> Var owning that memory
        self.plain_views: dict = {}  # id(plain ndarray view) -> (weak reference to it, Var)
        self.snapshots: dict = {}  # id(Const) -> its array's values before the first recorded write
        self.counted: dict = {}  # mask Var -> index in stmts of the guard on its count (_guard_masks)

    def fresh_name(self, label: str) -> str:
        n = self.counts.get(label, 0)
        self.counts[label] = n + 1
        return f"{label}_{n}"

    def const(self, obj: Any, label: str = "c") -> Const:
        c = self.consts.get(id(obj))
        if c is None:
            c = self.consts[id(obj)] = Const(self.fresh_name(label), obj)
        return c


_ACTIVE: list = []


def active() -> Trace | None:
    return _ACTIVE[-1] if _ACTIVE else None


# NumPy's array constructors return a plain ndarray for a subclass (no __array_function__ for them):
# kernels and libraries that call them would take the traced values out of the trace. While a trace
# is active, the numpy module's names call these recording wrappers instead (an argument without a
# recording array goes straight to NumPy), restored when the last trace ends.
_CONSTRUCTORS = ("asarray", "ascontiguousarray", "asfortranarray", "array", "asarray_chkfinite")
_ORIGINAL = {name: getattr(np, name) for name in _CONSTRUCTORS}


def _recording_constructor(name: str, orig):
    def construct(a, *args, **kwargs):
        if _ACTIVE and _has_rec(a):
            return trace_call("call", orig, (a, *args), kwargs, name)
        return orig(a, *args, **kwargs)

    construct.__name__ = name
    return construct


_WRAPPED = {name: _recording_constructor(name, f) for name, f in _ORIGINAL.items()}


def one_value(a: np.ndarray):
    """The Python number a non-empty array of numbers holds everywhere, else None. Zeros of both
    signs are two values (x * -0.0 is not x * 0.0); NaN counts as one.

    >>> one_value(np.full(3, 2.5)), one_value(np.arange(3)), one_value(np.array([-0.0, 0.0]))
    (2.5, None, None)
    """
    if a.size == 0 or a.dtype.kind not in "biufc":
        return None
    first = a.reshape(-1)[0]
    if first != first:
        return first.item() if np.isnan(a).all() else None
    same = a == first
    if a.dtype.kind in "fc":  # (== calls -0.0 and 0.0 equal)
        same &= np.signbit(a.real) == np.signbit(first.real)
        if a.dtype.kind == "c":
            same &= np.signbit(a.imag) == np.signbit(first.imag)
    return first.item() if same.all() else None


def _new_array(a):
    """A plain array a tensor factory made (`pf.zeros`, `pf.ones`, `pf.tensor`) as a recorded
    `np.full` of its value when it holds one value in C order (a statement over literals, which
    simplify.py folds when nothing writes into it: the seed of a backward pass), else a copy."""
    if type(a) is not np.ndarray:
        return a
    v = one_value(a) if a.flags.c_contiguous else None
    if v is not None:
        return trace_call("call", np.full, (a.shape, v, a.dtype), {}, "new")
    return trace_call("call", _ORIGINAL["array"], (a,), {"copy": True, "order": "K"}, "new")


def _opaque_call(kernel, args: tuple, kwargs: dict):
    """A `core.backend.opaque` kernel's call: one statement when it reads a recording array."""
    if _has_rec(args) or _has_rec(kwargs):
        return trace_call("call", kernel, args, kwargs, kernel.__name__)
    return kernel(*args, **kwargs)


def push(trace: Trace) -> None:
    if not _ACTIVE:
        for name, f in _WRAPPED.items():
            setattr(np, name, f)
        backend.TRACE_NEW_ARRAY = _new_array
        backend.TRACE_OPAQUE_CALL = _opaque_call
    _ACTIVE.append(trace)


def pop() -> None:
    _ACTIVE.pop()
    if not _ACTIVE:
        for name, f in _ORIGINAL.items():
            setattr(np, name, f)
        backend.TRACE_NEW_ARRAY = None
        backend.TRACE_OPAQUE_CALL = None


def _buffer(raw) -> Any:
    b = raw
    while isinstance(b, np.ndarray) and b.base is not None:
        b = b.base
    return b


def _label(obj: Any) -> str:
    name = getattr(obj, "__name__", None) or type(obj).__name__
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_").lower() or "v"


_TOKENS = itertools.count()


def _root_of(buf) -> object:
    """A key for the memory `buf` owns: a token stored on a Rec buffer (ids of freed buffers are
    reused), the id of any other (an outside array, which a Const keeps alive)."""
    if type(buf) is Rec:
        tok = buf.__dict__.get("_root")
        if tok is None:
            tok = buf._root = next(_TOKENS)
        return tok
    return ("id", id(buf))


def new_root() -> int:
    """A root key no buffer has (for a value the program makes its own copy of: scalars.py)."""
    return next(_TOKENS)


def new_var(trace: Trace, raw, label: str, scalar: bool = False) -> Var:
    root = _root_of(_buffer(raw))
    v = Var(trace.fresh_name(label), raw, root, scalar)
    if root not in trace.roots:
        trace.roots[root] = v
        v.fresh = True
    return v


_MAKING: list = []  # non-empty while this module makes a Rec view itself


def _rec_view(raw: np.ndarray) -> "Rec":
    _MAKING.append(1)
    try:
        return _view(raw, Rec)
    finally:
        _MAKING.pop()


def own_rec(raw: np.ndarray) -> "Rec":
    """A Rec owning its memory (base None, as the plain result it stands for) with raw's values, in
    raw's memory layout (a permuted 3-d result is neither C nor F ordered: later reshapes view or
    copy by it, as eagerly)."""
    r = np.ndarray.__new__(Rec, raw.shape, raw.dtype, strides=raw.strides if _dense(raw) else None)
    np.copyto(_view(r, np.ndarray), raw)
    return r


def _dense(a: np.ndarray) -> bool:
    """a's elements fill its memory without gaps or overlaps, in some order of its dims."""
    step = a.itemsize
    for stride, n in sorted((st, n) for n, st in zip(a.shape, a.strides) if n > 1):
        if stride != step:
            return False
        step *= n
    return True


# ---- encoding arguments ---------------------------------------------------------------------------
def walk_args(x, pick, acc: list) -> list:
    """acc + what `pick` gives (a list) for each Var and Const in an encoded argument structure."""
    tx = type(x)
    if tx is Var or tx is Const:
        acc.extend(pick(x))
    elif tx is tuple or tx is list:
        for v in x:
            walk_args(v, pick, acc)
    elif tx is dict:
        for v in x.values():
            walk_args(v, pick, acc)
    elif tx is slice:
        walk_args((x.start, x.stop, x.step), pick, acc)
    return acc


def _collect(x, acc: list) -> None:
    """acc + the Vars and Consts in an encoded argument structure (walk_args picking each one: the
    passes ask every statement for its leaves)."""
    for v in x.values() if type(x) is dict else x:
        tv = type(v)
        if tv is Var or tv is Const:
            acc.append(v)
        elif tv is tuple or tv is list or tv is dict:
            _collect(v, acc)
        elif tv is slice:
            _collect((v.start, v.stop, v.step), acc)


def map_args(x, f):
    """An encoded argument structure with each Var and Const replaced by f(it)."""
    tx = type(x)
    if tx is Var or tx is Const:
        return f(x)
    if tx is tuple or tx is list:
        return tx(map_args(v, f) for v in x)
    if tx is dict:
        return {k: map_args(v, f) for k, v in x.items()}
    if tx is slice:
        return slice(map_args(x.start, f), map_args(x.stop, f), map_args(x.step, f))
    return x


def subst_args(x, sub: dict):
    """x with each Var whose id is in `sub` replaced by sub[id]."""
    return map_args(x, lambda v: sub.get(id(v), v) if type(v) is Var else v)


# argument types that encode and decode return as they are (most arguments of a loop's statements)
_LITERALS = frozenset({int, float, bool, complex, str, type(None), type(Ellipsis)})


def encode(trace: Trace, x: Any) -> Any:
    """x with traced arrays replaced by their Vars and outside arrays by Consts."""
    tx = type(x)
    if tx in _LITERALS:
        return x
    if tx is Rec:
        v = x._var
        if v is None:
            raise Untraceable("an array made by an untraced NumPy method", user_site())
        return v
    if tx is np.ndarray:
        b = _rec_base(x)
        if b is not None:  # a plain view of a traced array (np.asarray, as_strided)
            return _plain_view(trace, x, b)
        if isinstance(x.base, np.ndarray):  # a view into an array made outside the trace
            return _const_view(trace, x)
        return trace.const(x, "const")
    if tx is tuple or tx is list:
        out = []
        for v in x:  # (one level inline: a statement's arguments are mostly arrays and literals)
            tv = type(v)
            if tv is Rec and v._var is not None:
                out.append(v._var)
            elif tv in _LITERALS:
                out.append(v)
            else:
                out.append(encode(trace, v))
        return tx(out)
    if tx is dict:
        return {k: encode(trace, v) for k, v in x.items()} if x else {}
    if tx is slice:
        if type(x.start) in _LITERALS and type(x.stop) in _LITERALS and type(x.step) in _LITERALS:
            return x  # (the common slice, of ints)
        return slice(encode(trace, x.start), encode(trace, x.stop), encode(trace, x.step))
    if isinstance(x, np.ndarray):
        raise Untraceable(f"an array of type {tx.__name__}", user_site())
    return x


def _rec_base(x: np.ndarray) -> "Rec | None":
    """The traced array whose memory a plain array x views (x's base chain), else None."""
    b = x
    while b is not None and not isinstance(b, Rec):
        b = getattr(b, "base", None)
    return b


def _ptr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _plain_view(trace: Trace, x: np.ndarray, r: "Rec") -> Var:
    """The Var of a plain ndarray x viewing the traced array r: r's own (np.asarray), or a strided
    view of it recorded now: `as_strided` at r's address, or `np.ndarray(buffer=r, offset=...)`
    elsewhere in a contiguous r."""
    if r._var is None:
        raise Untraceable("a plain view of an untraced array", user_site())
    if _same_view(x, r):
        return r._var
    v = _seen_view(trace, x)
    if v is not None:
        return v
    off = _ptr(x) - _ptr(r)
    if off == 0 and x.dtype == r.dtype:
        stmt = Stmt("call", as_strided, (r._var, x.shape, x.strides), {}, "as_strided")
    elif (r.flags.c_contiguous or r.flags.f_contiguous) and 0 <= off and _within(x, r, off):
        kw = {"buffer": r._var, "offset": off, "strides": x.strides}
        stmt = Stmt("call", np.ndarray, (x.shape, x.dtype), kw, "view")
    else:
        raise Untraceable("a traced array converted to a plain ndarray (np.asarray)", user_site())
    v = new_var(trace, x, stmt.label)
    stmt.outs.append(v)
    trace.stmts.append(stmt)
    trace.plain_views[id(x)] = (weakref.ref(x), v)
    return v


def _within(x: np.ndarray, r: np.ndarray, off: int) -> bool:
    """x's bytes (from `off` past r's start, non-negative strides) lie inside r's."""
    if any(st < 0 for st in x.strides):
        return False
    end = off + sum((n - 1) * st for n, st in zip(x.shape, x.strides)) + x.itemsize if x.size else off
    return end <= r.nbytes


def _seen_view(trace: Trace, x: np.ndarray) -> Var | None:
    hit = trace.plain_views.get(id(x))
    return hit[1] if hit is not None and hit[0]() is x else None


def _const_view(trace: Trace, x: np.ndarray) -> Var:
    """A plain view x into an outside array B (a gradient buffer the engine allocated): a Var made
    by `np.ndarray(shape, dtype, buffer=B, offset, strides)`, so that writes through it reach the
    program's B (a per-call copy when anything writes into it)."""
    b = x
    while isinstance(b.base, np.ndarray):
        b = b.base
    v = _seen_view(trace, x)
    if v is not None:
        return v
    if not (b.flags.c_contiguous or b.flags.f_contiguous) or x.dtype.hasobject:
        raise Untraceable("a view into a strided array made outside the trace", user_site())
    c = trace.const(b, "const")
    off = _ptr(x) - _ptr(b)
    stmt = Stmt("call", np.ndarray, (x.shape, x.dtype), {"buffer": c, "offset": off, "strides": x.strides}, "view")
    v = new_var(trace, x, "view")
    v.fresh = False
    v.const_base = c
    stmt.outs.append(v)
    trace.stmts.append(stmt)
    trace.plain_views[id(x)] = (weakref.ref(x), v)
    return v


def _same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype and _ptr(a) == _ptr(b)


def decode(x: Any) -> Any:
    """The plain values of encoded arguments (the arrays NumPy computes on now)."""
    tx = type(x)
    if tx in _LITERALS:
        return x
    if tx is Rec:
        return _view(x, np.ndarray)
    if tx is tuple or tx is list:
        out = []
        for v in x:
            tv = type(v)
            if tv is Rec:
                out.append(_view(v, np.ndarray))
            elif tv in _LITERALS:
                out.append(v)
            else:
                out.append(decode(v))
        return tx(out)
    if tx is dict:
        return {k: decode(v) for k, v in x.items()} if x else x
    if tx is slice:
        if type(x.start) in _LITERALS and type(x.stop) in _LITERALS and type(x.step) in _LITERALS:
            return x
        return slice(decode(x.start), decode(x.stop), decode(x.step))
    return x


def _has_rec(x: Any) -> bool:
    tx = type(x)
    if tx is Rec:
        return True
    if tx is tuple or tx is list:
        return any(_has_rec(v) for v in x)
    if tx is dict:
        return any(_has_rec(v) for v in x.values())
    return False


def _wrap_out(trace: Trace, stmt: Stmt, raw: Any, label: str) -> Any:
    if isinstance(raw, np.ndarray):
        if type(raw) is not np.ndarray:
            raise Untraceable(f"{label} returned an array of type {type(raw).__name__}", user_site())
        if raw.base is None:  # a fresh array: so is its Rec (code tests `a.base is None`)
            r = own_rec(raw)
            raw = _view(r, np.ndarray)
        else:
            r = _rec_view(raw)
        v = new_var(trace, raw, label)
        r._var = v
        stmt.outs.append(v)
        return r
    if isinstance(raw, np.generic):
        rec = own_rec(np.asarray(raw))
        v = new_var(trace, _view(rec, np.ndarray), label, scalar=True)
        rec._var = v
        stmt.outs.append(v)
        stmt.scalar_out = True
        return rec
    if isinstance(raw, tuple) and raw and all(isinstance(o, (np.ndarray, np.generic)) for o in raw):
        stmt.tuple_out = True
        outs = [_wrap_out(trace, stmt, o, label) for o in raw]
        return type(raw)(*outs) if hasattr(raw, "_fields") else tuple(outs)
    if raw is None:
        return None
    raise Untraceable(f"{label} returned a {type(raw).__name__}", user_site())


# The longest trace compiled: about 50 us per statement to record, optimise and check, and 1.5 KB
# of memory, so half a minute and 1 GB at the limit (npbench's seidel2d jvp traces 0.5M). A longer
# one stops, with the user's line, and the function runs eagerly.
MAX_STATEMENTS = 600_000


def trace_call(kind: str, fn: Any, args: tuple, kwargs: dict, label: str, writes: tuple = (), result_ok=False) -> Any:
    """Run fn on the plain arrays of args and log it; the result's arrays become Rec arrays."""
    trace = _ACTIVE[-1] if _ACTIVE else None
    if trace is None:
        return _call(kind, fn, decode(args), decode(kwargs))
    stmt = Stmt(kind, fn, encode(trace, args), encode(trace, kwargs) if kwargs else {}, label)
    for w in writes:
        enc = w._var if type(w) is Rec else encode(trace, w)
        c = enc if type(enc) is Const else getattr(enc, "const_base", None)
        if c is not None and id(c) not in trace.snapshots:  # its value before the program writes it
            trace.snapshots[id(c)] = c.obj.copy(order="K")
        stmt.writes.append(enc)
    raw = _call(kind, fn, decode(args), decode(kwargs) if kwargs else {})
    trace.stmts.append(stmt)
    if len(trace.stmts) > MAX_STATEMENTS:
        raise Untraceable(
            f"the trace passed {MAX_STATEMENTS:,} statements, too long to compile in seconds (a loop of many "
            "steps, as a while on a tolerance: compile one step and loop in Python)",
            user_site(),
        )
    if result_ok:
        return raw
    return _wrap_out(trace, stmt, raw, label)


def _call(kind: str, fn: Any, args: tuple, kwargs: dict) -> Any:
    if kind == "call":
        return fn(*args, **kwargs)
    if kind == "method":
        return getattr(args[0], fn)(*args[1:], **kwargs)
    if kind == "getitem":
        return args[0][args[1]]
    if kind == "setitem":
        args[0][args[1]] = args[2]
        return None
    if kind == "setattr":  # (the caller sets it on the Rec itself)
        return None
    return getattr(args[0], fn)  # attr


# ---- the subclass ---------------------------------------------------------------------------------

_DATA_DEPENDENT = frozenset(
    {
        "nonzero",
        "flatnonzero",
        "argwhere",
        "unique",
        "unique_values",
        "unique_counts",
        "unique_inverse",
        "unique_all",
        "extract",
        "compress",
        "trim_zeros",
        "count_nonzero",
        "array_equal",
        "array_equiv",
        "allclose",
        "isclose_scalar",
    }
)
_METADATA = frozenset(
    {
        "shape",
        "ndim",
        "size",
        "may_share_memory",
        "shares_memory",
        "iscomplexobj",
        "isrealobj",
        "result_type",
        "can_cast",
        "common_type",
        "isfortran",
        "broadcast_shapes",
    }
)
_WRITES_FIRST = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"})
# x's shape, dtype and layout are part of the signature, not its values: `ones_like(x)` of a
# contiguous x is recorded as `ones(shape, dtype)`, so it does not keep x's computation alive
# (the ones seeding a backward pass would keep the whole primal pass alive otherwise).
_LIKE = {"ones_like": np.ones, "zeros_like": np.zeros, "empty_like": np.empty, "full_like": np.full}


def _shape_only(name: str, args: tuple, kwargs: dict):
    """(fn, args, kwargs, label) of a `*_like` call that needs only its input's metadata (a C-ordered
    result: of a C-contiguous or 1-d input, or asked for with order="C"), else None."""
    a = args[0]
    n_fill = 1 if name == "full_like" else 0
    order = kwargs.get("order", "K")
    if len(args) != 1 + n_fill or set(kwargs) - {"dtype", "shape", "order"} or order not in ("C", "K"):
        return None
    if order == "K" and not (a.flags.c_contiguous or a.ndim <= 1):
        return None
    fill = args[1:]
    if any(isinstance(f, np.ndarray) for f in fill):
        return None
    dtype = kwargs.get("dtype") or a.dtype
    shape = kwargs.get("shape")
    shape = a.shape if shape is None else tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return _LIKE[name], (shape, *fill), {"dtype": np.dtype(dtype)}, name[: -len("_like")]


def _out_writes(kwargs: dict) -> tuple:
    out = kwargs.get("out")
    if out is None:
        return ()
    return tuple(out) if isinstance(out, tuple) else (out,)


def _ufunc_label(ufunc, method: str) -> str:
    return ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}_{method}"


class Rec(np.ndarray):
    """An ndarray whose NumPy calls are logged to the active trace (see the module doc)."""

    _var = None

    def __array_finalize__(self, obj):
        # A plain view of a traced array made a Rec by NumPy (as_strided(..., subok=True)): the same
        # view of the traced array, recorded as one.
        if _MAKING or not isinstance(obj, np.ndarray) or type(obj) is Rec:
            return
        trace = active()
        if trace is None:
            return
        b = _rec_base(obj)
        if b is not None and b._var is not None and _ptr(obj) == _ptr(b):
            self._var = _plain_view(trace, np.ndarray.view(self, np.ndarray), b)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        label = _ufunc_label(ufunc, method)
        writes = _out_writes(kwargs)
        if method == "at":
            writes = (inputs[0],)
        if writes:
            trace_call("call", fn, inputs, kwargs, label, writes, result_ok=True)
            out = kwargs.get("out")
            if method == "at":
                return None
            return out[0] if isinstance(out, tuple) and len(out) == 1 else out
        return trace_call("call", fn, inputs, kwargs, label)

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name in _DATA_DEPENDENT or (name == "where" and len(args) + len(kwargs) == 1):
            raise DataDependent(f"np.{name}", user_site())
        if name in _METADATA:
            return func(*decode(args), **decode(kwargs))
        writes = _out_writes(kwargs)
        if name in _WRITES_FIRST:
            writes = (args[0],)
        if writes:
            trace_call("call", func, args, kwargs, name, writes, result_ok=True)
            return args[0] if name in _WRITES_FIRST else kwargs["out"]
        if name in _LIKE and type(args[0]) is Rec:
            plain = _shape_only(name, args, kwargs)
            if plain is not None:
                return trace_call("call", plain[0], plain[1], plain[2], plain[3])
        return trace_call("call", func, args, kwargs, name)

    # -- reading values into Python: data-dependent
    def _read(self, what: str):
        raise DataDependent(what, user_site())

    def _guarded(self, what: str, convert):
        """A value read into Python to branch on (`if t.any():`, `range(int(n))`): the program
        checks it is the same on each call (a guard statement; recorded.GuardFailed if not)."""
        trace, v = active(), self._var
        if trace is None or v is None:
            self._read(what)
        value = convert(_view(self, np.ndarray))
        trace.stmts.append(Stmt("guard", what, (v, value, user_site()), {}, "guard"))
        return value

    def __bool__(self):
        return self._guarded("bool()", bool)

    def __float__(self):
        self._read("float()")

    def __int__(self):
        return self._guarded("int()", int)

    def __index__(self):
        return self._guarded("int() (as an index)", operator.index)

    def __complex__(self):
        self._read("complex()")

    def item(self, *a):
        self._read(".item()")

    def tolist(self):
        self._read(".tolist()")

    def tobytes(self, *a, **k):
        self._read(".tobytes()")

    def __hash__(self):  # (a traced value as a dict key or set member: an ndarray is unhashable)
        self._read("hash()")

    def __array__(self, *a, **k):
        self._read("np.asarray()")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return f"Rec({self._var!r}, shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__

    def __reduce__(self):
        raise Untraceable("pickling a traced array", user_site())

    # -- indexing
    def __getitem__(self, idx):
        _guard_masks(idx)
        return trace_call("getitem", None, (self, _int_bounds(idx)), {}, "getitem")

    def __setitem__(self, idx, value):
        if type(value) not in _LITERALS and getattr(value, "ndim", 1):  # (a number or a 0-d value fills any region)
            _guard_masks(idx)
        trace_call("setitem", None, (self, _int_bounds(idx), value), {}, "setitem", (self,), result_ok=True)

    def nonzero(self):
        raise DataDependent(".nonzero()", user_site())

    def compress(self, *a, **k):
        raise DataDependent(".compress()", user_site())

    @property
    def flat(self):
        raise Untraceable("ndarray.flat", user_site())

    @property
    def shape(self):
        return np.ndarray.shape.__get__(self)

    @shape.setter
    def shape(self, value):
        v = self._var
        trace_call("setattr", "shape", (self, value), {}, "shape", (self,), result_ok=True)
        np.ndarray.shape.__set__(self, value)
        if v is not None:
            v.contig = False  # (its buffer is not reused: its recorded shape changed)

    @property
    def flags(self):
        return _Flags(self)

    @property
    def T(self):
        return trace_call("attr", "T", (self,), {}, "transpose")

    @property
    def mT(self):
        return trace_call("attr", "mT", (self,), {}, "transpose")

    @property
    def real(self):
        return trace_call("attr", "real", (self,), {}, "real")

    @property
    def imag(self):
        return trace_call("attr", "imag", (self,), {}, "imag")


class _Flags:
    """A Rec's flags: reads go to NumPy's; setting `writeable` is recorded (a view made writable)."""

    __slots__ = ("_rec",)

    def __init__(self, rec: "Rec") -> None:
        object.__setattr__(self, "_rec", rec)

    def __getattr__(self, name: str):
        return getattr(np.ndarray.flags.__get__(self._rec), name)

    def __getitem__(self, key):
        return np.ndarray.flags.__get__(self._rec)[key]

    def __setattr__(self, name: str, value) -> None:
        if name != "writeable":
            raise Untraceable(f"setting flags.{name}", user_site())
        trace_call("setattr", "flags.writeable", (self._rec, value), {}, "flags", (self._rec,), result_ok=True)
        np.ndarray.flags.__get__(self._rec).writeable = value


def count_true(mask: np.ndarray) -> np.intp:
    """The number of True values in a boolean mask as a NumPy integer (NumPy 1's count_nonzero
    gives a Python int, which a recorded call cannot return).

    >>> int(count_true(np.array([True, False, True])))
    2
    """
    return np.intp(np.count_nonzero(mask))


# (NumPy 2's count_nonzero returns a NumPy integer: the program calls it directly)
_COUNT = np.count_nonzero if isinstance(np.count_nonzero(np.ones(1, bool)), np.generic) else count_true
_COUNTED_WINDOW = 8  # statements back a mask's guarded count is reused (a primal's and its tangent's x[mask])


def _counted(trace: Trace, v: Var) -> bool:
    """v's count was guarded a few statements ago and nothing wrote into its memory since."""
    at = trace.counted.get(v)
    if at is None or len(trace.stmts) - at > _COUNTED_WINDOW:
        return False
    return not any(type(w) is Var and w.root == v.root for s in trace.stmts[at:] for w in s.writes)


def _int_bounds(idx):
    """idx with each slice bound that is a traced value (a tensor's `A_row[i]`, a 0-d array) read
    as a Python int: a guard (the program slices with the traced bound, or fails the guard) instead
    of the value itself in the program, whose reads of it NumPy makes outside the trace."""
    if type(idx) is slice:
        b = (idx.start, idx.stop, idx.step)
        if all(v is None or type(v) is int for v in b):
            return idx
        return slice(*(v if v is None or type(v) is int else operator.index(v) for v in b))
    if type(idx) is tuple and any(type(i) is slice for i in idx):
        return tuple(_int_bounds(i) if type(i) is slice else i for i in idx)
    return idx


def _guard_masks(idx) -> None:
    """Each boolean mask in idx that is a traced value (`x[x > 0]`) stays in the program, evaluated
    when it runs, behind a guard that its count of True values is the traced one: the count is all
    of the mask the shapes after it depend on (docs/design.md, "Boolean masks under the compiler")."""
    items = idx if type(idx) is tuple else (idx,)
    for i in items:
        # (a 0-d mask as well: x[b] has 0 or 1 rows; a plain view of a traced mask too)
        if isinstance(i, np.ndarray) and i.dtype == np.bool_ and (type(i) is Rec or _rec_base(i) is not None):
            trace = active()
            if trace is None:
                raise DataDependent("boolean-mask indexing", user_site())
            v = encode(trace, i)
            if _counted(trace, v):
                continue
            n = trace_call("call", _COUNT, (i,), {}, "count")
            n._guarded("the count of a boolean mask", operator.index)
            trace.counted[v] = len(trace.stmts) - 1
        elif type(i) is list and i and all(type(v) is Rec for v in i):
            raise DataDependent("indexing with a list of traced arrays", user_site())


_METHODS = (
    "reshape",
    "transpose",
    "swapaxes",
    "view",
    "astype",
    "copy",
    "__copy__",
    "__deepcopy__",
    "ravel",
    "flatten",
    "squeeze",
    "diagonal",
    "repeat",
    "take",
    "round",
    "cumsum",
    "cumprod",
    "sum",
    "prod",
    "mean",
    "std",
    "var",
    "max",
    "min",
    "argmax",
    "argmin",
    "all",
    "any",
    "dot",
    "conj",
    "conjugate",
    "clip",
    "trace",
    "argsort",
    "searchsorted",
    "choose",
    "byteswap",
    "argpartition",
)
_WRITING_METHODS = ("sort", "fill", "partition", "put", "itemset", "resize", "setfield")


def _method(name: str):
    def m(self, *args, **kwargs):
        return trace_call("method", name, (self, *args), kwargs, name.strip("_"))

    m.__name__ = name
    return m


def _writing_method(name: str):
    def m(self, *args, **kwargs):
        if name in ("resize", "itemset", "setfield"):
            raise Untraceable(f"ndarray.{name}", user_site())
        return trace_call("method", name, (self, *args), kwargs, name, (self,), result_ok=True)

    m.__name__ = name
    return m


for _n in _METHODS:
    setattr(Rec, _n, _method(_n))
for _n in _WRITING_METHODS:
    setattr(Rec, _n, _writing_method(_n))
