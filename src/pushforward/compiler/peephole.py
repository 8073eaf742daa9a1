"""Rewrites of the statements an in-place write leaves, run after dead code is out.

- writes into a view: the engine writes `t[idx] = s` as `np.copyto(view, broadcast_to(s,
  view.shape).astype(view.dtype, copy=True), casting="unsafe")` with `view = base[idx]` (one
  kernel for every target). When the view is a basic index of a program array and s has the
  view's dtype (a program array or a constant array), the program writes `base[idx] = s`: NumPy's assignment broadcasts and casts as
  copyto does, and copies s first when it overlaps the target, so the values are the same; the
  broadcast and the cast copy, read only there, are dead afterwards;
- copies of values nothing writes: `b = a.copy()` (or an `astype` to a's own dtype, or `1.0 * a`,
  the backward pass's seed of ones folded into a number) whose result
  no statement writes into, views, or returns, while nothing writes into a before b's last use,
  is a itself (the tangent rules copy a value they hand on: the tangent of a read element).

- writes of a region into itself: `base[idx] = v` where v is the view `base[idx]` (the same
  basic index of the same Var), or a copy of it (`copy`, `astype` to its own dtype) taken after the last
  write into base: Python runs `a[i] += x` as a read, an in-place add into the view, and that
  assignment, which the engine records as a copy of the view written back;
- in-place updates: `t = f(a, b); np.copyto(a, t)` for an element-wise ufunc f whose result t has
  a's shape and dtype and is read only there, a made before it and nothing reading or writing a
  in between, is
  `f(a, b, out=a)` (`a += b`): NumPy's overlap rule makes that the same values, one pass fewer;
- views that are their input: a transpose by the identity permutation, `ascontiguousarray` of a
  C-contiguous array (the engine's layout steps after `flip` and reductions of 1-d arrays).

None changes a value, dtype, shape or memory layout a later statement sees.
"""

from __future__ import annotations

import numpy as np

from .lifetimes import Lifetimes, read_counts
from .recording import Const, Stmt, Var

__all__ = ["loop_writes", "copies", "in_place", "elementwise"]


def _basic(idx) -> bool:
    """idx is a basic index (ints, slices of ints, None, Ellipsis): its result is a view."""
    for i in idx if type(idx) is tuple else (idx,):
        if type(i) is slice:
            if not all(p is None or type(p) is int for p in (i.start, i.stop, i.step)):
                return False
        elif not (type(i) is int or i is None or i is Ellipsis):
            return False
    return True


def _source(s: Stmt, i: int, dst: Var, made: dict, count: dict, outs: set, lt: Lifetimes):
    """What `np.copyto(dst, astype(broadcast_to(x, dst.shape), dst.dtype, copy=True))` copies: x,
    when the cast and the broadcast are read only there and x is not written in between."""
    src = s.args[1]
    if type(src) is not Var or count.get(src) != 1 or id(src) in outs:
        return src
    cast = made.get(id(src), _NONE)[1]
    if cast is None or cast.kind != "method" or cast.fn != "astype" or len(cast.args) != 2:
        return src
    if cast.kwargs != {"copy": True} or not isinstance(cast.args[1], np.dtype) or cast.args[1] != dst.dtype:
        return src
    b = cast.args[0]
    if type(b) is not Var or count.get(b) != 1 or id(b) in outs:
        return src
    j, bc = made.get(id(b), _NONE)
    if bc is None or bc.kind != "call" or bc.fn is not np.broadcast_to or len(bc.args) != 2 or bc.kwargs:
        return src
    x = bc.args[0]
    if type(bc.args[1]) is not tuple or bc.args[1] != dst.shape:
        return src
    if type(x) is Var and lt.written(x.root, j, i - 1):
        return src
    return x


_NONE = (None, None)


def loop_writes(stmts: list, outputs: list) -> list:
    """Writes into views as assignments, then without the writes of a region into itself (the
    module doc): one index of the statements serves both (the first changes no statement's
    position, what any makes, or which buffer any writes)."""
    made = {id(v): (i, s) for i, s in enumerate(stmts) for v in s.outs}
    lt = Lifetimes(stmts)
    return _self_writes(_writes_into_views(stmts, outputs, made, lt), made, lt)


def _writes_into_views(stmts: list, outputs: list, made: dict, lt: Lifetimes) -> list:
    """copyto into a basic-index view written as an assignment into its base (the module doc)."""
    count = read_counts(stmts)
    outs = {id(v) for v in outputs}
    copyto = np.copyto
    for i, s in enumerate(stmts):
        if s.fn is not copyto or s.kind != "call" or len(s.args) != 2 or s.kwargs != {"casting": "unsafe"}:
            continue
        dst = s.args[0]
        if type(dst) is not Var or len(s.writes) != 1 or s.writes[0] is not dst:
            continue
        src = _source(s, i, dst, made, count, outs, lt)
        s.args = (dst, src)
        view = made.get(id(dst), _NONE)[1]
        if view is None or view.kind != "getitem" or dst.fresh or not _basic(view.args[1]):
            continue
        base = view.args[0]
        if type(base) is not Var or base.root != dst.root or base.const_base is not dst.const_base:
            continue
        dtype = src.dtype if type(src) is Var else getattr(src.obj, "dtype", None) if type(src) is Const else None
        if dtype == dst.dtype:
            s.kind, s.fn, s.label = "setitem", None, "setitem"
            s.args, s.kwargs, s.writes = (base, view.args[1], src), {}, [base]
    return stmts


def _index_key(idx):
    """A basic index without a trailing Ellipsis (`a[1, 2, ...]` and `a[1, 2]` name one region)."""
    items = idx if type(idx) is tuple else (idx,)
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    return tuple((slice, i.start, i.stop, i.step) if type(i) is slice else (type(i), i) for i in items)


def _writes_itself(s: Stmt, i: int, made: dict, lt: Lifetimes, reshaped: set) -> bool:
    """s is `base[idx] = v` with v the region base[idx] itself or a copy of it nothing has
    written since (the module doc)."""
    base, idx, v = s.args
    if type(base) is not Var or type(v) is not Var or id(base) in reshaped or not _basic(idx):
        return False
    start = i - 1
    mk = made.get(id(v))
    while mk is not None and mk[1].kind == "method" and mk[1].fn in ("astype", "copy"):
        j, c = mk  # (a copy of a copy: the tangent rules copy the value they hand on)
        x = c.args[0]
        if type(x) is not Var or x.dtype != v.dtype:
            return False
        if c.fn == "astype" and (len(c.args) != 2 or c.kwargs != {"copy": True} or c.args[1] != x.dtype):
            return False
        if c.fn == "copy" and (len(c.args) != 1 or c.kwargs not in ({}, {"order": "C"}, {"order": "K"})):
            return False
        v, start, mk = x, j, made.get(id(x))
    if mk is None or mk[1].kind != "getitem" or v.fresh or v.dtype != base.dtype:
        return False
    view = mk[1]
    if view.args[0] is not base or not _basic(view.args[1]) or _index_key(view.args[1]) != _index_key(idx):
        return False
    return not lt.written(base.root, start, i - 1)


def _self_writes(stmts: list, made: dict, lt: Lifetimes) -> list:
    """stmts without the writes of a region into itself (the module doc)."""
    reshaped = {id(s.args[0]) for s in stmts if s.kind == "setattr"}
    return [s for i, s in enumerate(stmts) if s.kind != "setitem" or not _writes_itself(s, i, made, lt, reshaped)]


def _copied(s: Stmt):
    """(a, b) for `b = a.copy()`, `b = a.astype(a.dtype, copy=True)` or `b = 1.0 * a` (the same
    bits for every float, -0.0 and nan included) of a C-contiguous Var a (b has a's layout
    then), else None."""
    if len(s.outs) != 1 or s.writes or not s.args:
        return None
    a, b = s.args[0], s.outs[0]
    if s.kind == "method" and s.fn == "copy":
        ok = len(s.args) == 1 and s.kwargs in ({}, {"order": "C"}, {"order": "K"})
    elif s.kind == "method" and s.fn == "astype":
        ok = type(a) is Var and len(s.args) == 2 and s.args[1] == a.dtype and s.kwargs in ({}, {"copy": True})
    elif s.kind == "call" and s.fn is np.multiply and len(s.args) == 2 and not s.kwargs and 1.0 in s.args:
        one = 0 if type(s.args[0]) is float and s.args[0] == 1.0 else 1
        a = s.args[1 - one]
        ok = type(s.args[one]) is float and type(a) is Var and a.dtype is not None and a.dtype.kind in "fc"
    else:
        return None
    if not ok or type(a) is not Var or a.dtype != b.dtype or a.shape != b.shape or not (a.contig or a.shape == ()):
        return None
    return a, b


def _same_view(s: Stmt):
    """(a, b) for a statement whose result b is a itself: a transpose by the identity permutation,
    `np.ascontiguousarray` of a C-contiguous a (NumPy returns a), else None."""
    if len(s.outs) != 1 or s.writes or not s.args or type(s.args[0]) is not Var or s.kwargs:
        return None
    a, b = s.args[0], s.outs[0]
    if a.shape is None or a.shape != b.shape or a.dtype != b.dtype:
        return None
    if (s.kind == "call" and s.fn is np.ascontiguousarray) and len(s.args) == 1:
        return (a, b) if a.contig and a.shape != () else None
    if not (s.kind == "method" and s.fn == "transpose" or s.kind == "call" and s.fn is np.transpose):
        return None
    if len(s.args) != 2:
        return None
    axes = s.args[1].obj if type(s.args[1]) is Const else s.args[1]
    if not isinstance(axes, (tuple, list, np.ndarray)) or len(axes) != len(a.shape):
        return None
    return (a, b) if all(type(i) in (int, np.int64, np.intp) and i == k for k, i in enumerate(axes)) else None


def copies(stmts: list, outputs: list) -> list:
    """Copies of values that do not change while the copy lives, replaced by the values (the module doc)."""
    lt = Lifetimes(stmts)
    per_root: dict = {}
    for s in stmts:
        for v in s.outs:
            per_root[v.root] = per_root.get(v.root, 0) + 1
    out_ids = {id(v) for v in outputs}
    out_roots = {v.root for v in outputs if type(v) is Var}
    reshaped = {id(s.args[0]) for s in stmts if s.kind == "setattr"}
    sub: dict = {}
    kept = []
    for i, s in enumerate(stmts):
        if sub:
            s.substitute(sub)
        same = _same_view(s)
        if same is not None and id(same[1]) not in out_ids and id(same[1]) not in reshaped:
            sub[id(same[1])] = same[0]
            continue
        ab = _copied(s)
        if ab is not None:
            a, b = ab
            private = b.fresh and per_root[b.root] == 1 and id(b) not in out_ids and b.root not in out_roots
            if private and not lt.ever_written(b.root) and not lt.written(a.root, i, lt.last.get(id(b), i)):
                sub[id(b)] = a
                continue
        kept.append(s)
    return kept


def elementwise(s: Stmt) -> bool:
    """s calls a ufunc of one output on its inputs alone (no keyword, no out=), on arrays."""
    return (
        s.kind == "call"
        and isinstance(s.fn, np.ufunc)
        and s.fn.nout == 1
        and len(s.outs) == 1
        and not s.kwargs
        and not s.scalar_out
        and len(s.args) == s.fn.nin
    )


def in_place(stmts: list, outputs: list) -> list:
    """Element-wise results copied into an array written as the ufunc's out= (the module doc)."""
    lt = Lifetimes(stmts)
    made = {id(v): i for i, s in enumerate(stmts) for v in s.outs}
    out_ids = {id(v) for v in outputs}
    count = read_counts(stmts)
    drop = set()
    for i, s in enumerate(stmts):
        if s.kind != "call" or s.fn is not np.copyto or len(s.args) != 2 or s.kwargs != {"casting": "unsafe"}:
            continue
        a, t = s.args
        if type(a) is not Var or type(t) is not Var or len(s.writes) != 1 or s.writes[0] is not a:
            continue
        j = made.get(id(t))
        if (
            j is None
            or not elementwise(stmts[j])
            or stmts[j].bare
            or not t.fresh
            or id(t) in out_ids
            or count.get(t) != 1
        ):
            continue
        if t.shape != a.shape or t.dtype != a.dtype or a.shape is None or a.shape == ():
            continue
        if made.get(id(a), -1) >= j or lt.read(a.root, j, i - 1) or lt.written(a.root, j, i - 1):
            continue  # (a made after the ufunc, a zeros buffer: it does not exist there yet)
        f = stmts[j]
        f.kwargs, f.writes = {"out": (a,)}, [a]
        f.outs = []
        drop.add(i)
    return [s for i, s in enumerate(stmts) if i not in drop] if drop else stmts


def _swapped(s: Stmt):
    """a for `b = np.swapaxes(a, -1, -2)` or `b = np.transpose(a, axes)` swapping the last two axes
    only, of an array of two dimensions or more, else None."""
    if s.kind != "call" or s.kwargs or len(s.outs) != 1 or not s.args or type(s.args[0]) is not Var:
        return None
    a = s.args[0]
    n = len(a.shape) if a.shape is not None else 0
    if n < 2:
        return None
    if s.fn is np.swapaxes and len(s.args) == 3:
        return a if {s.args[1], s.args[2]} in ({-1, -2}, {n - 1, n - 2}, {-1, n - 2}, {n - 1, -2}) else None
    if s.fn is np.transpose and len(s.args) == 2:
        axes = s.args[1].obj if type(s.args[1]) is Const else s.args[1]
        want = (*range(n - 2), n - 1, n - 2)
        return a if isinstance(axes, (tuple, list)) and tuple(axes) == want else None
    return None


def gram_products(stmts: list, outputs: list) -> list:
    """The second half of a Gram product's tangent, `a @ t.mT` after `t @ a.mT` (or `a.mT @ t`
    after `t.mT @ a`), is the first's transpose: a view of it, not another matrix product (the jvp
    of np.cov, `x @ x.T` and `x.T @ x` then costs one product, not two). Only where none of a, t
    and the first product is ever written."""
    lt = Lifetimes(stmts)
    swapped = {}
    for s in stmts:
        a = _swapped(s)
        if a is not None:
            swapped[id(s.outs[0])] = a
    out_ids = {id(v) for v in outputs}
    firsts: dict = {}  # (side, id(t), id(a)) -> t @ a.mT (side "R") or t.mT @ a (side "L")
    kept = []
    for s in stmts:
        if s.kind != "call" or s.fn is not np.matmul or len(s.args) != 2 or s.kwargs or len(s.outs) != 1 or s.writes:
            kept.append(s)
            continue
        x, y = s.args
        r = s.outs[0]
        pairs = []
        if type(x) is Var and type(y) is Var:
            if id(y) in swapped:
                pairs.append(("R", x, swapped[id(y)]))
            if id(x) in swapped:
                pairs.append(("L", y, swapped[id(x)]))
        for side, a, t in pairs:  # (r is a @ t.mT, or a.mT @ t: the transpose of the first with a, t swapped)
            m = firsts.get((side, id(t), id(a)))
            if (
                m is not None
                and id(r) not in out_ids
                and r.shape is not None
                and m.shape == r.shape[:-2] + r.shape[:-3:-1]
                and m.dtype == r.dtype
                and not any(lt.ever_written(v.root) for v in (a, t, m))
            ):
                view = Stmt("call", np.swapaxes, (m, -1, -2), {}, s.label)
                view.outs = [r]
                r.root, r.fresh, r.contig = m.root, False, False
                kept.append(view)
                break
        else:
            for side, a, t in pairs:
                firsts.setdefault((side, id(a), id(t)), r)
            kept.append(s)
    return kept
