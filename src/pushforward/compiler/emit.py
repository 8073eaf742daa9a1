"""From a trace to Python source: dead code out, common subexpressions shared, buffers reused.

The program is one function of the input arrays returning the output arrays, one statement per
recorded NumPy call, each variable named after its op (`sin_3 = np.sin(x_0)`). Passes, in order:

- dead code: a statement stays if an output or a later kept statement reads what it makes, or it
  writes into memory something later reads (an input, a constant, a live buffer);
- constants folded and negations merged into constant factors (simplify.py);
- common subexpressions: the same function on the same variables with the same constant
  arguments (and no write in between into what it reads) is computed once (after the
  simplifier, which makes more of them: a number's place in `2.0 * v`);
- the second product of a Gram product's tangent (`a @ t.mT` after `t @ a.mT`) as the first's
  transpose (peephole.py);
- `np.flip` as the basic index it takes, `np.ascontiguousarray` as a copy, a matmul of two vectors
  as `x.dot(y)` (peephole.py, `cheap_forms`);
- writes into views, writes of a region into itself, copies and element reads as NumPy scalars (peephole.py, scalars.py), then
  common subexpressions again, with views shared across writes; whole overwrites of 0-d values
  read as the values written, element stores forwarded to the
  element reads after them, and overwritten ones dropped (scalars.py), and a region's view read
  after its assignment as the array assigned (peephole.py); an element-wise result
  copied into an array computed into it (`a += b`, peephole.py);
- buffers: an element-wise ufunc's result goes into a dead temporary of the same shape, dtype
  and layout (`out=`); NumPy's overlap rule keeps that exact even when the buffer is an input;
  a large temporary with no dead buffer to go into goes into a scratch array the program keeps
  between calls (one set per thread), unless it is an output or an output views it: a fresh
  array of that size comes from pages the kernel must map and zero on first touch, which costs
  as much as the arithmetic (docs/compile.md, "Scratch arrays");
- `del` of each temporary at its last use.
"""

from __future__ import annotations

import collections
import math
import threading

import numpy as np
import scipy.special as sps

from .recording import Const, GuardFailed, Stmt, Trace, Untraceable, Var, walk_args
from .peephole import cheap_forms, copies, elementwise, gram_products, in_place, loop_writes, region_stores
from .scalars import overwrites, scalarize, stores
from .simplify import simplify

__all__ = ["Program", "emit"]


class Program:
    """Generated source and the namespace it runs in."""

    def __init__(self, source: str, namespace: dict, name: str) -> None:
        self.source = source
        self.namespace = namespace
        try:
            code = compile(source, f"<pf.compile {name}>", "exec")
        except SyntaxError as e:
            raise Untraceable(f"the generated program does not parse ({e.msg})", "<emit>") from None
        exec(code, namespace)
        self.fn = namespace[name]


def _consts_in(x, acc: list) -> list:
    """The Consts in x, and those the Vars in x view (their const_base)."""
    return walk_args(
        x, lambda v: (v,) if type(v) is Const else (v.const_base,) if v.const_base is not None else (), acc
    )


def _dce(stmts: list, outputs: list, fixed_roots: set, temps: set) -> list:
    """The statements something reads: an output, a later kept statement, or memory that outlives
    the call (an input, an array made outside the trace that something else holds). A write into
    a temporary outside array (`temps`: a gradient buffer the engine allocated) counts only when
    that array is read later."""
    # (Vars and Consts hash by identity: the sets hold them, not their ids)
    var_outs = [v for v in outputs if type(v) is Var]
    live = set(var_outs)
    live_roots = {v.root for v in var_outs} | fixed_roots
    live_c = set(_consts_in(list(outputs), []))
    kept = []
    for s in reversed(stmts):
        need = s.kind == "guard"
        if not need:
            for v in s.outs:
                if v in live:
                    need = True
                    break
        if s.writes:
            for w in s.writes:
                if type(w) is Const:
                    c = w
                else:
                    c = w.const_base
                    if c is None:
                        if w.root in live_roots:
                            need = True
                        continue
                need = need or id(c) not in temps or c in live_c
        if not need:
            continue
        kept.append(s)
        for c in s.leaves:
            if type(c) is Const:
                live_c.add(c)
            else:
                live.add(c)
                live_roots.add(c.root)
                if c.const_base is not None:
                    live_c.add(c.const_base)
        for w in s.writes:
            if type(w) is Var:
                live.add(w)
                live_roots.add(w.root)
    kept.reverse()
    return kept


_SIMPLE = (int, float, bool, str, type(None))


def _key(x) -> object:
    """A hashable key of an encoded argument structure: Vars and Consts by identity (they define
    no equality), literals by type and value (1 and 1.0 are different arguments)."""
    tx = type(x)
    if tx is Var or tx is Const:
        return x
    if tx is tuple or tx is list:
        return (tx, *[v if type(v) is Var or type(v) is int else _key(v) for v in x])
    if tx in _SIMPLE:
        return (tx, x)
    if tx is dict:
        return (dict, *[(k, _key(v)) for k, v in sorted(x.items())]) if x else (dict,)
    if tx is slice:
        return (slice, _key(x.start), _key(x.stop), _key(x.step))
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return (tx, x)


_COMMUTATIVE = frozenset({np.add, np.multiply, np.maximum, np.minimum, np.logaddexp, np.hypot})


def _cse(stmts: list, outputs: list, views: bool = False) -> list:
    """Statements computing what an earlier one did replaced by its result: the same call on the
    same arguments (and no write in between into what it reads), and with `views`, the same view of
    the same array (a view reads its memory when used: writes in between do not matter; not before
    scalars.py, which reads an element once when no write comes before its last use)."""
    written = {w.root for s in stmts for w in s.writes if type(w) is Var}
    out_ids = {id(v) for v in outputs}
    reshaped = {id(s.args[0]) for s in stmts if s.kind == "setattr"}  # (a view of these depends on when)
    sub: dict = {}
    seen: dict = {}
    version: dict = {}
    kept = []
    for s in stmts:
        if sub:
            s.substitute(sub)
        if s.writes:
            for w in s.writes:
                if type(w) is Var:
                    version[w.root] = version.get(w.root, 0) + 1
            kept.append(s)
            continue
        outs = s.outs
        if not outs or (len(outs) == 1 and (id(outs[0]) in out_ids or id(outs[0]) in reshaped)):
            kept.append(s)
            continue
        if len(outs) > 1 and any(id(v) in out_ids or id(v) in reshaped for v in outs):
            kept.append(s)
            continue
        reads = s.reads
        if not any(v.root in written for v in outs):
            at = tuple([version.get(v.root, 0) for v in reads])
        elif (
            views
            and all(not v.fresh for v in s.outs)
            and s.kind != "setattr"
            and not any(id(v) in reshaped for v in reads)
        ):
            at = "view"
        else:
            kept.append(s)
            continue
        args = s.args
        if s.fn in _COMMUTATIVE and len(args) == 2 and type(args[0]) is not Var and type(args[1]) is Var:
            args = (args[1], args[0])  # (a number and an array: the order changes no bit, no layout)
        k = (s.kind, id(s.fn), repr(s.fn) if isinstance(s.fn, str) else "", s.bare, _key(args), _key(s.kwargs), at)
        prev = seen.get(k)
        if prev is not None and len(prev.outs) == len(s.outs):
            for a, b in zip(s.outs, prev.outs):
                sub[id(a)] = b
            continue
        seen[k] = s
        kept.append(s)
    for i, v in enumerate(outputs):
        outputs[i] = sub.get(id(v), v)
    return kept


# ---- rendering ------------------------------------------------------------------------------------

_MODULES = (
    ("np", np),
    ("np.linalg", np.linalg),
    ("np.fft", np.fft),
    ("np.lib.stride_tricks", np.lib.stride_tricks),
    ("sp", sps),
)


class _Namer:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.namespace: dict = {"np": np, "sp": sps}

    def func(self, fn) -> str:
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, np.ufunc):  # a ufunc method: np.add.reduce
            return f"{self.func(owner)}.{fn.__name__}"
        name = getattr(fn, "__name__", None)
        if name is not None:
            for mod_name, mod in _MODULES:
                if getattr(mod, name, None) is fn:
                    return f"{mod_name}.{name}"
        return self.const(self.trace.const(fn, _clean(name or "fn")))

    def const(self, c: Const) -> str:
        self.namespace[c.name] = c.obj
        return c.name

    def expr(self, x) -> str:
        tx = type(x)
        if tx is Var:
            return x.name
        if tx is Const:
            return self.const(x)
        if tx is tuple:
            inner = ", ".join(self.expr(v) for v in x)
            return f"({inner},)" if len(x) == 1 else f"({inner})"
        if tx is list:
            return "[" + ", ".join(self.expr(v) for v in x) + "]"
        if tx is dict:
            return "{" + ", ".join(f"{k!r}: {self.expr(v)}" for k, v in x.items()) + "}"
        if tx is slice:
            return f"slice({self.expr(x.start)}, {self.expr(x.stop)}, {self.expr(x.step)})"
        return self.literal(x)

    def literal(self, x) -> str:
        tx = type(x)
        if x is None or tx is bool or tx is int or tx is str:
            return repr(x)
        if x is Ellipsis:
            return "..."
        if tx is float:
            return repr(x) if math.isfinite(x) else f"float('{x}')"
        if tx is complex and math.isfinite(x.real) and math.isfinite(x.imag):
            return repr(x)
        if isinstance(x, np.dtype) and x.fields is None:
            return f"np.dtype({x.str!r})"
        if isinstance(x, type) and getattr(np, x.__name__, None) is x:
            return f"np.{x.__name__}"
        if isinstance(x, (np.ufunc,)) or callable(x):
            return self.func(x)
        return self.const(self.trace.const(x, "k"))

    def index(self, idx) -> str:
        items = idx if type(idx) is tuple else (idx,)
        parts = []
        for i in items:
            if type(i) is slice:
                a = "" if i.start is None else self.expr(i.start)
                b = "" if i.stop is None else self.expr(i.stop)
                c = "" if i.step is None else ":" + self.expr(i.step)
                parts.append(f"{a}:{b}{c}")
            else:
                parts.append(self.expr(i))
        if type(idx) is tuple and len(idx) == 1:
            return parts[0] + ","
        return ", ".join(parts) if parts else "()"


def _clean(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_").lower() or "fn"


def _call_args(nm: _Namer, args, kwargs) -> str:
    parts = [nm.expr(a) for a in args] + [f"{k}={nm.expr(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


# Binary ufuncs written as Python operators when an operand is a program array: `a * b` calls
# np.multiply(a, b) through ndarray.__mul__, skipping the ufunc call's argument parsing.
_BINARY = {
    np.add: "+",
    np.subtract: "-",
    np.multiply: "*",
    np.true_divide: "/",
    np.power: "**",
    np.matmul: "@",
    np.floor_divide: "//",
}
# np.sum and np.prod of a program array (an ndarray or a NumPy scalar): the ufunc's reduce, which
# the wrappers call for an ndarray (with axis=None their default, not reduce's 0)
_REDUCE = {np.sum: "np.add.reduce", np.prod: "np.multiply.reduce"}
# out= (a dead buffer) pays only for arrays this large; smaller ones are cheaper to allocate
BUFFER_MIN_SIZE = 1024
# a temporary this large goes into a scratch array kept between calls (glibc maps fresh pages for
# an allocation past 128 KiB); a program keeps at most SCRATCH_MAX_BYTES of them
SCRATCH_MIN_BYTES = 1 << 17
SCRATCH_MAX_BYTES = 64 << 20


class Scratch(threading.local):
    """A program's scratch arrays, made on a thread's first call: two threads running one compiled
    program never share them (one thread runs a program to its end before running it again: the
    program calls no Python code that could call it)."""

    def __init__(self, specs: tuple) -> None:
        self.arrays = [np.empty(shape, dtype) for shape, dtype in specs]


def _render_call(nm: _Namer, s: Stmt, out_buf: str | None) -> str:
    op = _BINARY.get(s.fn) if out_buf is None and not s.kwargs and len(s.args) == 2 else None
    if op is not None and any(type(a) is Var for a in s.args):
        return f"{nm.expr(s.args[0])} {op} {nm.expr(s.args[1])}"
    if s.fn is np.negative and out_buf is None and not s.kwargs and len(s.args) == 1 and type(s.args[0]) is Var:
        return f"-{nm.expr(s.args[0])}"
    out = s.kwargs.get("out") if len(s.kwargs) == 1 and len(s.args) == 2 else None
    if (
        type(out) is tuple
        and len(out) == 1
        and out[0] is s.args[0]
        and s.fn in _BINARY
        and s.fn is not np.matmul
        and type(out[0]) is Var
    ):
        return f"{nm.expr(s.args[0])} {_BINARY[s.fn]}= {nm.expr(s.args[1])}"  # (in place: the operator's path)
    reduce = _REDUCE.get(s.fn) if out_buf is None and len(s.args) == 1 and type(s.args[0]) is Var else None
    if reduce is not None:  # (np.sum's Python wrapper costs as much as a small sum)
        kw = {k: v for k, v in s.kwargs.items() if not (k == "dtype" and v is None or k == "keepdims" and v is False)}
        kw.setdefault("axis", None)
        return f"{reduce}({_call_args(nm, s.args, kw)})"
    if out_buf is not None:  # (a positional out is the cheaper form)
        return f"{nm.func(s.fn)}({_call_args(nm, s.args, {})}, {out_buf})"
    return f"{nm.func(s.fn)}({_call_args(nm, s.args, s.kwargs)})"


def _render(nm: _Namer, s: Stmt, out_buf: str | None) -> str:
    """s as one line of Python; out_buf: the name of the buffer its element-wise result goes into."""
    if s.kind == "call":
        rhs = _render_call(nm, s, out_buf)
    elif s.kind == "method":
        rhs = f"{nm.expr(s.args[0])}.{s.fn}({_call_args(nm, s.args[1:], s.kwargs)})"
    elif s.kind == "getitem":
        idx = s.args[1]
        if s.bare or _an_array_either_way(idx, s.args[0]):
            idx = _without_ellipsis(idx)
        rhs = f"{nm.expr(s.args[0])}[{nm.index(idx)}]"
    elif s.kind == "setitem":
        idx = s.args[1]
        value = s.args[2]
        if type(value) is not Var or value.shape == () or _has_slice(idx):
            idx = _without_ellipsis(idx)  # (the same assignment, by NumPy's faster path)
        return f"{nm.expr(s.args[0])}[{nm.index(idx)}] = {nm.expr(value)}"
    elif s.kind == "guard":  # (the traced value read into Python: the same each call, or not this program)
        nm.namespace["GuardFailed"] = GuardFailed
        x, value, site = nm.expr(s.args[0]), s.args[1], s.args[2]
        test = f"not {x}" if value is True else x if value is False else f"int({x}) != {value!r}"
        return f"if {test}: raise GuardFailed({s.fn!r}, {site!r})"
    elif s.kind == "setattr":
        return f"{nm.expr(s.args[0])}.{s.fn} = {nm.expr(s.args[1])}"
    else:
        rhs = f"{nm.expr(s.args[0])}.{s.fn}"
    if s.scalar_out and not s.bare:  # (a NumPy scalar made a 0-d array again; each of several results)
        rhs = f"np.asarray({rhs})" if len(s.outs) < 2 and not s.tuple_out else f"map(np.asarray, {rhs})"
    if not s.outs:
        return rhs
    # (a tuple of one array unpacks with a trailing comma: np.unravel_index of a 1-d shape)
    return ", ".join(v.name for v in s.outs) + ("," if s.tuple_out and len(s.outs) == 1 else "") + " = " + rhs


def _without_ellipsis(idx):
    """idx without a trailing Ellipsis (a 0-d result of ints only is then a scalar copy)."""
    if type(idx) is tuple and len(idx) > 1 and idx[-1] is Ellipsis:
        return idx[:-1] if len(idx) > 2 else idx[0]
    return idx


def _an_array_either_way(idx, base) -> bool:
    """`base[idx]` with and without idx's trailing Ellipsis is the same view: idx has a slice or a
    None, or fewer ints than base has dims (only a full set of ints makes a 0-d view with the
    Ellipsis and a scalar without; NumPy parses the index without it faster)."""
    if _has_slice(idx):
        return True
    items = idx if type(idx) is tuple else (idx,)
    n = getattr(base, "shape", None)
    if n is None or not all(type(i) is int or i is Ellipsis for i in items):
        return False
    return sum(type(i) is int for i in items) < len(n)


def _has_slice(idx) -> bool:
    return any(type(i) is slice or i is None for i in (idx if type(idx) is tuple else (idx,)))


def _last_uses(stmts: list) -> dict:
    last: dict = {}
    for i, s in enumerate(stmts):
        for v in s.reads + [w for w in s.writes if type(w) is Var] + s.outs:
            last[v.name] = i
    return last


def _buffers(stmts: list, inputs: list, outputs: list) -> tuple:
    """({stmt index: the dead Var (or the index of the scratch array) its element-wise ufunc result
    is written into (out=)}, [(shape, dtype) of each scratch array]). One pass: each buffer is
    released at the statement after its last use (`due`), and dead buffers wait in a queue per
    (shape, dtype), oldest first."""
    fixed = {v.root for v in inputs} | {v.root for v in outputs}
    end: dict = {}
    owner: dict = {}
    for i, s in enumerate(stmts):
        for v in s.reads + [w for w in s.writes if type(w) is Var] + s.outs:
            end[v.root] = i
        for v in s.outs:
            if v.fresh:
                owner[v.root] = v
    due: dict = {}  # statement index -> roots whose last use is the statement before
    for r, e in end.items():
        if r not in fixed and r in owner:
            due.setdefault(e + 1, []).append(r)
    plan: dict = {}
    scratch: list = []
    scratch_bytes = 0
    free: dict = {}  # (shape, dtype) -> dead buffers, oldest first
    released: set = set()
    for i, s in enumerate(stmts):
        for r in due.pop(i, ()):
            if end[r] == i - 1 and r not in released:
                released.add(r)
                v = owner[r]
                if v.contig and not v.scalar and v.shape is not None and _size(v.shape) >= BUFFER_MIN_SIZE:
                    free.setdefault((v.shape, v.dtype), collections.deque()).append(v)
        if not elementwise(s):
            continue
        out = s.outs[0]
        if not (out.fresh and out.contig) or out.root in fixed or _size(out.shape) < BUFFER_MIN_SIZE:
            continue
        queue = free.get((out.shape, out.dtype))
        if queue:
            b = queue.popleft()
            plan[i] = b
            end[b.root] = end.get(out.root, i)
            due.setdefault(end[b.root] + 1, []).append(b.root)
            released.discard(b.root)
            released.add(out.root)  # its lifetime is now the buffer's
        else:
            nbytes = _size(out.shape) * out.dtype.itemsize
            if nbytes >= SCRATCH_MIN_BYTES and scratch_bytes + nbytes <= SCRATCH_MAX_BYTES:
                plan[i] = len(scratch)  # (released at its end as any fresh temporary: then reused)
                scratch.append((out.shape, out.dtype))
                scratch_bytes += nbytes
    return plan, scratch


def _size(shape) -> int:
    n = 1
    for d in shape or ():
        n *= d
    return n


def emit(trace: Trace, inputs: list, outputs: list, name: str, mutated_consts: list, temps: set) -> Program:
    """The program of a trace: a function `name(*inputs) -> tuple(outputs)`."""
    fixed_roots = {v.root for v in inputs}
    stmts = _dce(trace.stmts, outputs, fixed_roots, temps)
    outputs = list(outputs)
    # (the writes a loop makes rewritten first: the passes after see a fraction of the statements)
    stmts = _dce(loop_writes(stmts, outputs), outputs, fixed_roots, temps)
    stmts = _cse(simplify(trace, stmts, outputs, temps, mutated_consts), outputs)
    stmts = cheap_forms(_dce(gram_products(stmts, outputs), outputs, fixed_roots, temps), outputs)
    stmts = scalarize(overwrites(copies(stmts, outputs, fixed_roots), outputs, fixed_roots), outputs)
    stmts = _dce(_cse(stmts, outputs, views=True), outputs, fixed_roots, temps)
    stmts = in_place(_dce(region_stores(stores(stmts, outputs), outputs), outputs, fixed_roots, temps), outputs)
    used = set()
    for s in stmts:
        for c in (*s.leaves, *s.writes) if s.writes else s.leaves:
            if type(c) is Const:
                used.add(id(c))
            elif c.const_base is not None:
                used.add(id(c.const_base))
    mutated_consts = [c for c in mutated_consts if id(c) in used or any(c is o for o in outputs)]
    nm = _Namer(trace)
    plan, scratch = _buffers(stmts, inputs, [v for v in outputs if type(v) is Var])
    last = _last_uses(stmts)
    for i, b in plan.items():
        if type(b) is Var:
            last[b.name] = max(last.get(b.name, i), i)
    keep = {v.name for v in inputs} | {v.name for v in outputs if type(v) is Var}
    # (a small temporary is not worth a statement: it goes when the function returns)
    keep |= {v.name for s in stmts for v in s.outs if v.shape is not None and _size(v.shape) < BUFFER_MIN_SIZE}
    lines = [f"def {name}({', '.join(v.name for v in inputs)}):"]
    for c in mutated_consts:
        init = trace.snapshots.get(id(c), c.obj)
        if init.flags.c_contiguous and init.dtype.kind in "fc" and not init.any():
            # (a gradient buffer: fresh zeros cost the allocator's zeroed pages, not a copy's pass)
            lines.append(f"    {c.name} = np.zeros({init.shape!r}, {nm.literal(init.dtype)})")
            continue
        nm.namespace[c.name + "_init"] = init
        lines.append(f"    {c.name} = {c.name}_init.copy(order='K')")
    names = [f"scratch_{k}" for k in range(len(scratch))]
    if scratch:
        nm.namespace["scratch"] = Scratch(tuple(scratch))
        lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = scratch.arrays")
    out_bufs = {i: (b.name if type(b) is Var else names[b]) for i, b in plan.items()}
    dead_at: dict = {}
    for n, i in last.items():
        if n not in keep:
            dead_at.setdefault(i, []).append(n)
    for i, s in enumerate(stmts):
        lines.append("    " + _render(nm, s, out_bufs.get(i)))
        if i in dead_at:
            lines.append("    del " + ", ".join(sorted(dead_at[i])))
    rets = [(v.name if type(v) is Var else nm.expr(v)) for v in outputs]
    lines.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    return Program("\n".join(lines) + "\n", nm.namespace, name)
