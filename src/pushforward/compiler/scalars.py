"""Element reads and scalar arithmetic replayed as NumPy scalars, not 0-d arrays.

The engine keeps every value an array: an element read `a[i, j]` is the 0-d view `a[i, j, ...]`,
and a ufunc on 0-d arrays, which NumPy returns as a scalar, is made a 0-d array again. A loop
over elements then pays the 0-d array machinery (~1 us) on every statement, where NumPy scalar
arithmetic costs ~0.1 us. So a value may be replayed as a NumPy scalar (`Stmt.bare`) when what
the program does with it gives the same results for a scalar:

- it is read only as an operand of ufuncs (not their `out=`) or of `np.where`, as the value of an assignment
  `b[idx] = v` or of `np.copyto(dst, v)`, by a reduction whose result is a scalar anyway, or (for
  a value with memory of its own) by `np.broadcast_to`; a ufunc on operands that are 0-d or
  scalars returns a scalar either way, and on any larger operand the same array;
- it is not an output, and nothing writes into its memory: a scalar result owns no memory
  (`ever_written`), and an element read `a[i, j]` (a copy, where the view followed a) is taken
  only when nothing writes into a before the read's last use.

A value with any other reader (a method, a view of it, an index) stays a 0-d array.

Overwrites of a 0-d value (`overwrites`), before that: `np.copyto(v, w)` that replaces the whole
of a 0-d array v the program made, that no other variable views and that nothing else writes
(`beta *= x` on a 0-d tensor), is dropped and the later reads of v read w, when w is a 0-d array of
v's dtype owning its memory that nothing writes: v then has one value and may be a scalar.

Element stores (`stores`), after that: an element read `a[i, j]` replayed as a scalar that
follows the assignment `a[i, j] = v` of a scalar v, with no write into a in between, is v (a
scalar is immutable); and such an assignment that a later one into the same element of the same
array overwrites, with nothing reading a's memory in between (a scalar read of another element
of a does not), is dropped. A loop that updates an
element several times (`A[i, j] += x; A[i, j] /= 9.0`) then writes it once.
"""

from __future__ import annotations

import numpy as np

from .lifetimes import Lifetimes
from .recording import Stmt, Var, new_root, walk_args

__all__ = ["overwrites", "scalarize", "stores"]

# reductions whose result on a 0-d array or a scalar is a scalar (Stmt.scalar_out in the trace)
_REDUCTIONS = frozenset({np.sum, np.prod, np.max, np.min, np.amax, np.amin, np.mean})


def _mentions(x, v: Var) -> bool:
    return bool(x) and bool(walk_args(x, lambda u: (1,) if u is v else (), []))


def _scalar_use(s: Stmt, v: Var, owns_memory: bool) -> bool:
    """s reads v in a way that gives the same results when v is a NumPy scalar (the module doc)."""
    if any(w is v for w in s.writes):
        return False
    if s.kind == "guard":  # (bool and int of a scalar and of a 0-d array are the same)
        return True
    if s.kind == "setitem":
        return s.args[2] is v and not _mentions(s.args[:2], v)
    if s.kind != "call":
        return False
    if isinstance(s.fn, np.ufunc) or s.fn is np.where:  # (np.where's result is an array either way)
        return not _mentions(s.kwargs, v)
    if s.fn is np.copyto:
        return s.args[1] is v and s.args[0] is not v and not _mentions(s.kwargs, v)
    if s.fn is np.broadcast_to:
        return owns_memory and s.args[0] is v
    if s.fn in _REDUCTIONS:
        return s.scalar_out and s.args[0] is v and not _mentions((s.args[1:], s.kwargs), v)
    return False


def _element(s: Stmt):
    """The base of an element read `base[i, j, ...]` (ints for every dim) of a floating or complex
    array making a 0-d view, else None."""
    if s.kind != "getitem" or len(s.outs) != 1 or s.outs[0].fresh or s.outs[0].shape != ():
        return None
    base, idx = s.args
    items = idx if type(idx) is tuple else (idx,)
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    if type(base) is not Var or base.shape is None or len(items) != len(base.shape):
        return None
    if base.dtype is None or base.dtype.kind not in "fc":  # (integer scalars warn on overflow, arrays wrap)
        return None
    return base if all(type(i) is int for i in items) else None


def _whole_overwrite(s: Stmt):
    """(v, w) for `np.copyto(v, w, casting="unsafe")` of 0-d Vars of one dtype, else None."""
    if s.kind != "call" or s.fn is not np.copyto or len(s.args) != 2 or s.kwargs != {"casting": "unsafe"}:
        return None
    v, w = s.args
    if type(v) is not Var or type(w) is not Var or v.shape != () or w.shape != () or v.dtype != w.dtype:
        return None
    return (v, w) if len(s.writes) == 1 and s.writes[0] is v else None


def overwrites(stmts: list, outputs: list, fixed_roots: set) -> list:
    """stmts without the whole overwrites of 0-d values (the module doc); fixed_roots: the
    inputs' memory, which the program must write."""
    lt = Lifetimes(stmts)
    per_root: dict = {}
    for s in stmts:
        for v in s.outs:
            per_root[v.root] = per_root.get(v.root, 0) + 1
    writers: dict = {}
    for s in stmts:
        for w in s.writes:
            if type(w) is Var:
                writers[w.root] = writers.get(w.root, 0) + 1
    whole: dict = {}
    for s in stmts:
        vw = _whole_overwrite(s)
        if vw is not None:
            whole[vw[0].root] = whole.get(vw[0].root, 0) + 1
    pinned = {id(v) for v in outputs} | {v.root for v in outputs if type(v) is Var} | fixed_roots
    pinned |= {id(s.args[0]) for s in stmts if s.kind == "setattr"}
    sub: dict = {}
    kept = []
    for s in stmts:
        vw = _whole_overwrite(s)  # (before substituting: v is the 0-d array written, not its last value)
        if sub:
            s.substitute(sub)
        if vw is not None:
            v, w = vw
            if (
                v.fresh
                and w.fresh
                and id(v) not in pinned
                and v.root not in pinned
                and per_root.get(v.root) == 1
                and whole.get(v.root) == writers.get(v.root)
                and not lt.ever_written(w.root)
            ):
                sub[id(v)] = w
                continue
        kept.append(s)
    return kept


def scalarize(stmts: list, outputs: list) -> list:
    """stmts with the values that may be NumPy scalars marked `bare` (the module doc)."""
    lt = Lifetimes(stmts)
    out_ids = {id(v) for v in outputs}
    out_roots = {v.root for v in outputs if type(v) is Var}
    for i, s in enumerate(stmts):
        if s.scalar_out:
            if len(s.outs) != 1 or s.tuple_out:
                continue
            v = s.outs[0]
            if not v.fresh or id(v) in out_ids or v.root in out_roots or lt.ever_written(v.root):
                continue
            owns = True
        elif _element(s) is not None:
            v = s.outs[0]
            if id(v) in out_ids or lt.written(v.root, i, lt.last.get(id(v), i)):
                continue
            owns = False
        else:
            continue
        if all(_scalar_use(stmts[k], v, owns) for k in lt.readers.get(id(v), ())):
            s.bare = True
            if not owns:  # a copy of the element now: memory of its own
                v.root, v.fresh, v.scalar = new_root(), True, True
    return stmts


def _element_key(s: Stmt):
    """(id of the base, the int indices) of `base[i, j, ...]` with ints only, else None."""
    idx = s.args[1]
    items = idx if type(idx) is tuple else (idx,)
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    base = s.args[0]
    if type(base) is not Var or base.shape is None or len(items) != len(base.shape):
        return None
    return (id(base), items) if all(type(i) is int for i in items) else None


def stores(stmts: list, outputs: list) -> list:
    """stmts with element reads after an element store forwarded and overwritten stores dropped
    (the module doc)."""
    lt = Lifetimes(stmts)
    bare = {id(v) for s in stmts if s.bare for v in s.outs}
    out_ids = {id(v) for v in outputs}
    last: dict = {}  # element key -> (statement index, scalar stored)
    sub: dict = {}
    kept = []
    for i, s in enumerate(stmts):
        if sub:
            s.substitute(sub)
        if s.kind == "getitem" and s.bare and id(s.outs[0]) not in out_ids:
            key = _element_key(s)
            st = last.get(key) if key is not None else None
            if st is not None and not lt.written(s.args[0].root, st[0], i - 1):
                sub[id(s.outs[0])] = st[1]
                continue
        elif s.kind == "setitem":
            key = _element_key(s)
            v = s.args[2]
            if key is not None and type(v) is Var and id(v) in bare and v.shape == () and v.dtype == s.args[0].dtype:
                last[key] = (i, v)
        kept.append(s)
    for i, v in enumerate(outputs):
        outputs[i] = sub.get(id(v), v)
    return _overwritten(kept)


def _at(s: Stmt):
    """The element `base[i, j, ...]` of an element read or store (ints only) as non-negative
    indices, else None: `a[-1, 0]` and `a[n - 1, 0]` are one element."""
    key = _element_key(s)
    if key is None or not key[1] or min(key[1]) >= 0:
        return None if key is None else key[1]
    return tuple([i % n for i, n in zip(key[1], s.args[0].shape)])


def _overwritten(stmts: list) -> list:
    """stmts without the element stores a later store into the same element overwrites before
    anything reads that memory (a setitem's target is written, not read). A scalar read of an
    element `base[i, j]` reads only that one, when every store pending on its buffer went through
    base itself (`A[i, j] = s; A[j, j]; A[i, j] = s / A[j, j]` writes A[i, j] once); through
    another view of the buffer, any element may alias."""
    pending: dict = {}  # root -> [id of the Var stored through (None: several), {element: index of its store}]
    dead = set()
    for i, s in enumerate(stmts):
        kind = s.kind
        at = _at(s) if kind == "setitem" or (kind == "getitem" and s.bare) else None
        if at is not None and kind == "getitem":
            base = s.args[0]
            mine = pending.get(base.root)
            if mine is not None:
                if mine[0] != id(base):
                    del pending[base.root]
                else:
                    mine[1].pop(at, None)
            continue
        reads = s.reads if at is None else [v for v in s.reads if v is not s.args[0]]
        for v in reads:
            pending.pop(v.root, None)
        if at is None:
            for w in s.writes:  # (a write of another shape: the stores before it may show through it)
                if type(w) is Var:
                    pending.pop(w.root, None)
            continue
        base = s.args[0]
        mine = pending.get(base.root)
        if mine is None:
            mine = pending[base.root] = [id(base), {}]
        elif mine[0] != id(base):
            mine[0] = None
        j = mine[1].get(at)
        if j is not None and mine[0] is not None:
            dead.add(j)
        mine[1][at] = i
    return [s for i, s in enumerate(stmts) if i not in dead] if dead else stmts
