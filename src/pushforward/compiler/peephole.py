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
  is a itself (the tangent rules copy a value they hand on: the tangent of a read element), when
  a is C-contiguous (b has its layout then) or a vector that only exactly rounded element-wise
  ufuncs read through b (`+ - * /`: the same bits for any strides, a contiguous result either
  way; the engine copies a flipped vector into C order); and an output b copied from a
  C-contiguous temporary of the call at its last use, which nothing views, is that temporary
  (`return y.clone()`: the copy is a pass over y's memory; each call still makes its own y);

- writes of a region into itself: `base[idx] = v` where v is the view `base[idx]` (the same
  basic index of the same Var), or a copy of it (`copy`, `astype` to its own dtype) taken after the last
  write into base: Python runs `a[i] += x` as a read, an in-place add into the view, and that
  assignment, which the engine records as a copy of the view written back;
- in-place updates: `t = f(a, b); np.copyto(a, t)` for an element-wise ufunc f whose result t has
  a's shape and dtype and is read only there, a made before it and nothing reading or writing a
  in between, is
  `f(a, b, out=a)` (`a += b`): NumPy's overlap rule makes that the same values, one pass fewer;
  so is `base[idx] = t` where a is the view `base[idx]` (a loop's `y[:k] += alpha * y[:k]` on a
  dual y, whose tangent the engine computes out of place and assigns);
- views that are their input: a transpose by the identity permutation, `ascontiguousarray` of a
  C-contiguous array (the engine's layout steps after `flip` and reductions of 1-d arrays);
- cheaper spellings of one call (`cheap_forms`): `np.flip(x, axis)` as the basic index `x[::-1, :]`
  it is (np.flip builds that index in Python, ~5 us; the index costs ~0.3 us), `np.ascontiguousarray(x)`
  of an array of one dim or more that is not C-contiguous as `x.copy()` (a C-ordered copy either
  way), and the matmul of two vectors of one floating or complex dtype, neither with a negative
  stride, as `x.dot(y)` (the same inner product routine NumPy's matmul calls, without the gufunc's
  argument parsing: ~0.6 us against ~1.3 us; a reversed vector takes another summation order in
  matmul, so it stays).

- region stores forwarded (`region_stores`): the view `v = base[idx]` read after the assignment
  `base[idx] = t` of a fresh array t of the region's shape and dtype that nothing writes, with no
  write into base until v's last use other than assignments into regions of base disjoint from
  idx, is t, when only `+ - * /` (and assignments) read v: the same bits from t's memory, and a
  vector's result is contiguous either way (a recurrence over columns, `y[:, j] = ... y[:, j - 1]`,
  then reads each column it made as the contiguous array it was, not as a strided view).

None changes a value, dtype, shape or memory layout a later statement sees.
"""

from __future__ import annotations

import numpy as np

from .lifetimes import Lifetimes, read_counts
from .recording import Const, Stmt, Var

__all__ = ["loop_writes", "copies", "in_place", "elementwise", "cheap_forms", "region_stores"]


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
    bits for every float, -0.0 and nan included) of a Var a, else None."""
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
    if not ok or type(a) is not Var or a.dtype != b.dtype or a.shape != b.shape:
        return None
    return a, b


# ufuncs correctly rounded by IEEE whatever loop NumPy picks (contiguous, strided, SIMD or not)
_EXACT = frozenset({np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.positive})


def _read_as_values(b: Var, stmts: list, lt: Lifetimes) -> bool:
    """b, a vector, is read only as an operand of exactly rounded element-wise ufuncs: they give
    the same bits for any strides of it, and a new vector of one layout (C-contiguous)."""
    if b.shape is None or len(b.shape) != 1:
        return False
    for k in lt.readers.get(id(b), ()):
        r = stmts[k]
        if not elementwise(r) or r.fn not in _EXACT or any(w is b for w in r.writes):
            return False
    return True


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


def copies(stmts: list, outputs: list, fixed_roots: frozenset = frozenset()) -> list:
    """Copies of values that do not change while the copy lives, replaced by the values (the module
    doc; after `cheap_forms`, which drops the views that are their input: the engine's copy of a
    flipped vector into C order ends in one, and the copy's readers read it); an output copied
    from a temporary at its last use is that temporary. fixed_roots: the inputs' memory."""
    out_ids = {id(v) for v in outputs}
    lt = Lifetimes(stmts)
    per_root: dict = {}
    for s in stmts:
        for v in s.outs:
            per_root[v.root] = per_root.get(v.root, 0) + 1
    out_roots = {v.root for v in outputs if type(v) is Var}
    sub: dict = {}
    kept = []
    for i, s in enumerate(stmts):
        if sub:
            s.substitute(sub)
        ab = _copied(s)
        if ab is not None:
            a, b = ab
            private = b.fresh and per_root[b.root] == 1 and id(b) not in out_ids and b.root not in out_roots
            private = private and (a.contig or a.shape == () or _read_as_values(b, stmts, lt))
            if private and not lt.ever_written(b.root) and not lt.written(a.root, i, lt.last.get(id(b), i)):
                sub[id(b)] = a
                continue
            if id(b) in out_ids and _moved(a, b, i, lt, per_root, out_ids, out_roots | fixed_roots):
                sub[id(b)] = a
                continue
        kept.append(s)
    if sub:
        for k, v in enumerate(outputs):
            outputs[k] = sub.get(id(v), v)
    return kept


def _moved(a: Var, b: Var, i: int, lt: Lifetimes, per_root: dict, out_ids: set, pinned: set) -> bool:
    """The output b, a copy of a at statement i, may be a itself: a is a C-contiguous temporary of
    this call (no input's memory, no outside array's, no other output's) that nothing views and
    nothing uses after the copy, and b is neither viewed nor written (a result such as
    `x.clone()` of a value computed here: one pass over its memory fewer)."""
    if not (a.fresh and a.contig and a.const_base is None and id(a) not in out_ids and a.root not in pinned):
        return False
    if per_root.get(a.root) != 1 or lt.last.get(id(a)) != i:
        return False
    return b.fresh and per_root.get(b.root) == 1 and not lt.ever_written(b.root)


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
        if s.kind == "call" and s.fn is np.copyto and len(s.args) == 2 and s.kwargs == {"casting": "unsafe"}:
            a, t = s.args
            if type(a) is not Var or len(s.writes) != 1 or s.writes[0] is not a:
                continue
        elif s.kind == "setitem" and len(s.writes) == 1:
            a, t = _region_operand(s, stmts, made), s.args[2]  # (base[idx] = f(base[idx], b))
            if a is None:
                continue
        else:
            continue
        if type(t) is not Var:
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
        if made.get(id(a), -1) >= j or _read_between(stmts, lt, a.root, j, i) or lt.written(a.root, j, i - 1):
            continue  # (a made after the ufunc, a zeros buffer: it does not exist there yet)
        f = stmts[j]
        f.kwargs, f.writes = {"out": (a,)}, [a]
        f.outs = []
        drop.add(i)
    return [s for i, s in enumerate(stmts) if i not in drop] if drop else stmts


def _read_between(stmts: list, lt: Lifetimes, root, j: int, i: int) -> bool:
    """A statement strictly between j and i reads buffer `root`: looked at directly when they are
    few (the ufunc and its assignment are usually neighbours), else through the program's reads."""
    if i - j > 8:
        return lt.read(root, j, i - 1)
    return any(v.root == root for k in range(j + 1, i) for v in stmts[k].reads)


def _region_operand(s: Stmt, stmts: list, made: dict):
    """For `base[idx] = t` with t made by an element-wise ufunc reading the view `base[idx]` (the
    same basic index of the same Var, which is then exactly the memory written), that view, else
    None (`y[:k] = y[:k] + x`: the ufunc computes into the view instead)."""
    base, idx, t = s.args
    if type(base) is not Var or type(t) is not Var or s.writes[0] is not base or not _basic(idx):
        return None
    j = made.get(id(t))
    if j is None or not elementwise(stmts[j]):
        return None
    key = _index_key(idx)
    for a in stmts[j].args:
        k = made.get(id(a)) if type(a) is Var else None
        if k is None:
            continue
        view = stmts[k]
        if view.kind == "getitem" and view.args[0] is base and not a.fresh and not view.bare:
            if _basic(view.args[1]) and _index_key(view.args[1]) == key and a.dtype == base.dtype:
                return a
    return None


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


_DOT_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def _flip_index(s: Stmt):
    """The basic index `np.flip(x, axis=...)` takes of a Var x of one dim or more, else None."""
    x = s.args[0] if len(s.args) == 1 else None
    if type(x) is not Var or x.shape is None or not x.shape or set(s.kwargs) - {"axis"}:
        return None
    n = len(x.shape)
    axis = s.kwargs.get("axis")
    axes = range(n) if axis is None else (axis,) if type(axis) is int else axis
    if type(axes) not in (range, tuple) or not all(type(a) is int and -n <= a < n for a in axes):
        return None
    flipped = {a % n for a in axes}
    idx = tuple(slice(None, None, -1) if d in flipped else slice(None) for d in range(n))
    return idx[0] if n == 1 else idx  # (`x[::-1]`: NumPy parses a lone slice faster than a tuple)


def cheap_forms(stmts: list, outputs: list) -> list:
    """Calls spelled the cheaper way that computes the same, and without the views that are their
    input, read as that input (the module doc)."""
    out_ids = {id(v) for v in outputs}
    reshaped = {id(s.args[0]) for s in stmts if s.kind == "setattr"}
    flip, contiguous, matmul, transpose = np.flip, np.ascontiguousarray, np.matmul, np.transpose
    sub: dict = {}
    kept = []
    for s in stmts:
        if sub:
            s.substitute(sub)
        fn = s.fn
        if fn is flip or fn is contiguous or fn is matmul or fn is transpose or fn == "transpose":
            same = _same_view(s)
            if same is not None and id(same[1]) not in out_ids and id(same[1]) not in reshaped:
                sub[id(same[1])] = same[0]
                continue
            if s.kind == "call" and not s.writes and len(s.outs) == 1:
                _cheaper(s)
        kept.append(s)
    for i, v in enumerate(outputs):
        outputs[i] = sub.get(id(v), v)
    return kept


def _cheaper(s: Stmt) -> None:
    """s, a call of np.flip, np.ascontiguousarray or np.matmul, spelled the cheaper way (the module doc)."""
    fn = s.fn
    if fn is np.flip:
        idx = _flip_index(s)
        if idx is not None:
            s.kind, s.fn, s.label = "getitem", None, "flip"
            s.args, s.kwargs = (s.args[0], idx), {}
    elif fn is np.ascontiguousarray:
        x = s.args[0] if len(s.args) == 1 and not s.kwargs else None
        if type(x) is Var and x.shape and not x.contig and s.outs[0].fresh and s.outs[0].dtype == x.dtype:
            s.kind, s.fn = "method", "copy"
    elif fn is np.matmul and len(s.args) == 2 and not s.kwargs:
        x, y = s.args
        if (
            type(x) is Var
            and type(y) is Var
            and x.forward
            and y.forward
            and x.shape is not None
            and len(x.shape) == 1
            and y.shape == x.shape
            and x.dtype == y.dtype
            and x.dtype in _DOT_DTYPES
        ):
            s.kind, s.fn = "method", "dot"


# writes between a region store and a read of it a forwarding pass looks at, each (then it gives up)
_FORWARD_WRITES = 8


def _span(i, n: int):
    """(start, stop) of the elements an int or a step-1 slice picks along a dim of n, else None."""
    if type(i) is int:
        i %= n
        return i, i + 1
    if type(i) is slice and i.step in (None, 1):
        start, stop, _ = i.indices(n)
        return start, max(start, stop)
    return None


def _disjoint(a, b, shape) -> bool:
    """Basic indices a and b (of ints and slices, one per leading dim) of an array of this shape
    pick no common element: along some dim, their spans do not meet."""
    a = a if type(a) is tuple else (a,)
    b = b if type(b) is tuple else (b,)
    for i, j, n in zip(a, b, shape):
        if i is None or j is None or i is Ellipsis or j is Ellipsis:
            return False
        x, y = _span(i, n), _span(j, n)
        if x is not None and y is not None and (x[1] <= y[0] or y[1] <= x[0]):
            return True
    return False


def _value_reads(v: Var, stmts: list, lt: Lifetimes) -> bool:
    """Only exactly rounded element-wise ufuncs (as operands) and assignments (as the value) read v."""
    for k in lt.readers.get(id(v), ()):
        r = stmts[k]
        if r.kind == "setitem":
            if r.args[2] is not v or r.args[0] is v or not _basic(r.args[1]):
                return False
        elif not elementwise(r) or r.fn not in _EXACT:
            return False
    return True


def region_stores(stmts: list, outputs: list) -> list:
    """Views of a region read after its assignment as the array assigned (the module doc). The
    reads of each statement are scanned only when some view follows an assignment of its region."""
    out_ids = {id(v) for v in outputs}
    stored: dict = {}  # (id of base, index key) -> (statement index, value assigned)
    found = []  # (index of the view's statement, the assignment's index, the value assigned)
    for i, s in enumerate(stmts):
        kind = s.kind
        if kind == "setitem":
            base, idx, t = s.args
            if type(base) is Var and type(t) is Var and base.shape and _has_range(idx) and _basic(idx):
                stored[(id(base), _index_key(idx))] = (i, t)
        elif kind == "getitem" and stored and not s.bare and len(s.outs) == 1 and type(s.args[0]) is Var:
            idx = s.args[1]
            st = stored.get((id(s.args[0]), _index_key(idx))) if _has_range(idx) and _basic(idx) else None
            if st is not None and id(s.outs[0]) not in out_ids:
                found.append((i, *st))
    if not found:
        return stmts
    lt = Lifetimes(stmts)
    sub: dict = {}
    drop = set()
    for i, j, t in found:
        s = stmts[i]
        t = sub.get(id(t), t)  # (a value assigned that was itself a forwarded view)
        if _forwards(j, t, s.args[0], s.args[1], s.outs[0], i, stmts, lt):
            sub[id(s.outs[0])] = t
            drop.add(i)
    if not sub:
        return stmts
    kept = []
    for i, s in enumerate(stmts):
        if i not in drop:
            s.substitute(sub)
            kept.append(s)
    for i, v in enumerate(outputs):
        outputs[i] = sub.get(id(v), v)
    return kept


def _has_range(idx) -> bool:
    return any(type(i) is slice for i in (idx if type(idx) is tuple else (idx,)))


def _forwards(j: int, t: Var, base: Var, idx, v: Var, i: int, stmts: list, lt: Lifetimes) -> bool:
    """The view v = base[idx] at statement i reads, until its last use, what `base[idx] = t` at
    statement j assigned (the module doc)."""
    if t.shape != v.shape or t.dtype != v.dtype or v.dtype != base.dtype or not t.fresh or v.fresh:
        return False
    if lt.ever_written(t.root) or not (len(v.shape) == 1 or (v.contig and t.contig)):
        return False
    if not _value_reads(v, stmts, lt):
        return False
    between = lt.writes_in(base.root, j, lt.last.get(id(v), i), _FORWARD_WRITES)
    if between is None:
        return False
    for k in between:
        w = stmts[k]
        if w.kind != "setitem" or w.args[0] is not base or not _basic(w.args[1]):
            return False
        if not _disjoint(w.args[1], idx, base.shape):
            return False
    return True
