"""How each kind of op moves dependency patterns (see `sparsity` for the tensors that carry them).

One rule per op kind, chosen from what derivatives.yaml says about the op (its `sparsity:` key, or
else its batching rule, its tangent formula kind, its view flag; `curvature:` says which inputs
meet in its second derivatives): element-wise (with broadcasting), reductions over dims, ops
along a dim (softmax, sort, cumsum), contractions (matmul, einsum), ops that only move elements
(views, indexing, roll, cat, gather: the op itself applied to element ids tells where each output
element comes from) and, for anything else, "every output depends on every input" (a superset).

A rule gets the op, its tensor inputs as `Val`s (primal data and pattern, None for "depends on
nothing"), its other arguments, the primal outputs and a `Context` (the number of inputs, and the
Hessian coupling it adds to when second-order patterns are wanted); it returns one pattern per
output.

>>> import numpy as np
>>> from pushforward.func.patterns import identity
>>> ctx = Context(3)
>>> x = Val(np.zeros(3), identity(3))
>>> from pushforward.ops.generated import SUM
>>> rule_of(SUM)(SUM, [x], (None, False, None), [np.zeros(())], ctx)[0].toarray().tolist()
[[True, True, True]]
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..dispatch.oprecord import Op
from .patterns import Unbuilt, broadcast_rows, build, gram, row_union, selector, take_rows, union, union_all

__all__ = ["Val", "Context", "rule_of", "dense_rule", "moves_by_index"]

# the largest iteration space a contraction rule enumerates before it settles for "dense"
_MAX_TERMS = 20_000_000


class Val:
    """One tensor input of an op: its primal data (an array or a Python scalar) and its pattern."""

    __slots__ = ("data", "dep")

    def __init__(self, data, dep) -> None:
        self.data = data
        self.dep = dep


class Context:
    """What a rule may need besides its op: the number of inputs n, and (when a Hessian pattern is
    wanted) the accumulated input pairs that meet in a nonlinear op."""

    def __init__(self, n: int, hessian: bool = False) -> None:
        self.n = n
        self.hessian = hessian
        self._pairs: list = []
        self._h = None

    def couple(self, a, b=None) -> None:
        """Inputs of a with inputs of b (or among themselves) meet in a nonlinear op: both orders."""
        if not self.hessian or a is None:
            return
        g = gram(a, b) if b is not None else gram(a)
        if g is not None and g.nnz:
            self._pairs.append(g)
            if len(self._pairs) >= 32:
                self._h = union_all([self._h, *self._pairs])
                self._pairs = []

    def coupling(self):
        """The Hessian pattern accumulated so far (None: nothing couples)."""
        return build(union_all([self._h, *self._pairs]))


def _size(data) -> int:
    return int(np.size(data))


def _nonlinear(op: Op) -> bool:
    return op.jvp_kind != "auto_linear" and op.curvature != "linear"


def moves_by_index(op: Op) -> bool:
    """Does the op move elements by an index given as an argument (`sparsity: moves_by_index`)? A
    value-dependent index makes its rule "dense" (or, boolean, an error: the output's shape
    depends on the values)."""
    return op.sparsity == "moves_by_index"


def _rule_arg(op: Op) -> str | None:
    """The argument of the op's `sparsity: rule(arg)`, or None."""
    rule = op.sparsity or ""
    return rule[rule.index("(") + 1 : -1] if "(" in rule else None


def _flat_vals(ins: list) -> list:
    out = []
    for v in ins:
        if isinstance(v, list):
            out.extend(v)
        elif v is not None:
            out.append(v)
    return out


def _diff_vals(op: Op, ins: list) -> list:
    """The differentiable inputs (lists flattened)."""
    return _flat_vals([v for v, d in zip(ins, op.diff) if d])


def dense_rule(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    """The superset every op satisfies: each output element depends on every input element."""
    u = union_all([row_union(v.dep, ctx.n) for v in _diff_vals(op, ins)])
    if _nonlinear(op):
        ctx.couple(u)
    return [take_rows(u, np.zeros(_size(o), np.int64)) if d else None for o, d in zip(outs, op.out_diff)]


def _nothing(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    return [None] * len(outs)


def _elementwise(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    shape = np.shape(outs[0])
    deps = {}
    for i, (v, d) in enumerate(zip(ins, op.diff)):
        if d and v is not None and v.dep is not None and not (op.name == "_copy_from" and i == 0):
            deps[op.params[i]] = broadcast_rows(v.dep, np.shape(v.data), shape)
    out = union_all(deps.values())
    if op.curvature in ("bilinear", "quotient"):  # (self * other: they meet; self / other: other too)
        a, b = deps.get("self"), deps.get("other")
        if a is not None and b is not None:
            ctx.couple(a, b)
        if op.curvature == "quotient":
            ctx.couple(b)
    elif _nonlinear(op):
        ctx.couple(out)
    return [out] + [None] * (len(outs) - 1)


def _dims_of(op: Op, args: tuple, ndim: int) -> tuple | None:
    """The normalised `dim` argument (all dims for None or []); None if it is not understood."""
    names = op.argnames
    dim = args[names.index("dim")] if "dim" in names and names.index("dim") < len(args) else None
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    try:
        return tuple(sorted({int(d) % ndim if ndim else 0 for d in dims}))
    except (TypeError, ValueError):
        return None


def _grouped(dep, shape: tuple, dims: tuple):
    """Union of dep over `dims` (kept as size 1): the pattern of a reduction with keepdim."""
    kshape = tuple(1 if i in dims else s for i, s in enumerate(shape))
    size = int(np.prod(shape, dtype=np.int64))
    ksize = int(np.prod(kshape, dtype=np.int64))
    to = np.broadcast_to(np.arange(ksize, dtype=np.int64).reshape(kshape), shape).ravel()
    return selector(to, np.arange(size), (ksize, size)) @ build(dep), kshape


def _reduction(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    x = ins[0]
    shape = np.shape(x.data)
    dims = _dims_of(op, args, len(shape))
    if dims is None or x.dep is None:
        return dense_rule(op, ins, args, outs, ctx) if dims is None else [None]
    g, kshape = _grouped(x.dep, shape, dims)
    if g.shape[0] != _size(outs[0]):
        return dense_rule(op, ins, args, outs, ctx)
    if _nonlinear(op):
        ctx.couple(g)
    return [g]


def _along_dim(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    """Each output element depends on the slice along `dim` it lies in (sort, softmax, cumsum)."""
    x = ins[0]
    shape = np.shape(x.data)
    names = op.argnames
    if x.dep is None or "dim" not in names or args[names.index("dim")] is None or not shape:
        return dense_rule(op, ins, args, outs, ctx)
    dims = _dims_of(op, args, len(shape))
    g, kshape = _grouped(x.dep, shape, dims)
    if _nonlinear(op):
        ctx.couple(g)
    res = []
    for o, d in zip(outs, op.out_diff):
        oshape = np.shape(o)
        if not d:
            res.append(None)
            continue
        ks = kshape if len(oshape) == len(kshape) else tuple(s for i, s in enumerate(kshape) if i not in dims)
        try:
            np.broadcast_shapes(ks, oshape)
        except ValueError:
            return dense_rule(op, ins, args, outs, ctx)
        res.append(broadcast_rows(g, ks, oshape))
    return res


def _same_rows(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    """Ops that keep every element where it is in C order (reshape, view, flatten, squeeze)."""
    x = ins[0]
    if _size(x.data) != _size(outs[0]):
        return _moves(op, ins, args, outs, ctx)
    return [x.dep]


def _moves(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    """The op applied to element ids (1-based; 0 = no source) says where each output element comes from."""
    if op.name == "index_put" and len(args) > 1 and args[1]:
        return dense_rule(op, ins, args, outs, ctx)  # accumulating: several sources per element
    deps, sizes = [], []

    def ids(v):
        if v is None:
            return None
        if v.dep is None:
            return np.zeros(np.shape(v.data), np.int64) if np.ndim(v.data) else 0
        start = sum(sizes) + 1
        deps.append(v.dep)
        sizes.append(_size(v.data))
        return np.arange(start, start + sizes[-1], dtype=np.int64).reshape(np.shape(v.data))

    kargs = []
    for v, d in zip(ins, op.diff):
        if not d:
            kargs.append(None if v is None else v.data)
        elif isinstance(v, list):
            kargs.append([ids(x) for x in v])
        else:
            kargs.append(ids(v))
    try:
        r = op.kernel(*kargs, *args)
    except Exception:  # a kernel that cannot run on integers: the superset
        return dense_rule(op, ins, args, outs, ctx)
    rs = tuple(r) if op.n_out > 1 else (r,)
    if not deps:
        return [None] * len(outs)
    res = []
    for r, o, d in zip(rs, outs, op.out_diff):
        r = np.asarray(r)
        if r.shape != np.shape(o) or r.dtype.kind not in "iu":
            return dense_rule(op, ins, args, outs, ctx)
        res.append(_from_blocks(r.ravel() - 1, deps, sizes) if d else None)
    return res


def _from_blocks(ids: np.ndarray, deps: list, sizes: list):
    """Rows `ids` of the inputs' patterns one above the other (-1: no source). The blocks' terms
    on one base share a term (their rows are disjoint), so cat does not multiply terms."""
    if len(deps) == 1:
        return take_rows(deps[0], ids)
    m, start, slots = len(ids), 0, {}
    for dep, size in zip(deps, sizes):
        local = ids - start
        inside = (local >= 0) & (local < size)
        start += size
        if not inside.any():
            continue
        used: dict = {}
        for base, rows in take_rows(dep, np.where(inside, local, -1)).terms:
            k = used[id(base)] = used.get(id(base), -1) + 1
            columns = slots.setdefault(id(base), [])
            if k == len(columns):
                columns.append((base, np.full(m, -1, np.int64)))
            columns[k][1][inside] = rows[inside]
    terms = [t for columns in slots.values() for t in columns]
    return Unbuilt(terms, (m, deps[0].shape[1])) if terms else None


def _equation(op: Op, ins: list, args: tuple) -> tuple[str | None, list]:
    """The einsum equation of a contraction and its operands (broadcast for batched matmul)."""
    eq = _rule_arg(op)  # `contraction(ij,jk->ik)`, or `contraction(<the parameter holding it>)`
    if eq is not None:
        if "->" not in eq:
            eq = args[op.argnames.index(eq)]
        return eq, list(ins[0]) if op.kinds[0] == "T[]" else list(ins)
    a, b = ins  # `contraction`: NumPy's matmul rules
    na, nb = np.ndim(a.data), np.ndim(b.data)
    if na <= 2 and nb <= 2:
        left = "k" if na == 1 else "ik"
        right = "k" if nb == 1 else "kj"
        out = ("i" if na == 2 else "") + ("j" if nb == 2 else "")
        return f"{left},{right}->{out}", [a, b]
    if na < 2 or nb < 2:
        return None, []
    batch = np.broadcast_shapes(np.shape(a.data)[:-2], np.shape(b.data)[:-2])
    vals = []
    for v in (a, b):
        shape = batch + np.shape(v.data)[-2:]
        vals.append(Val(np.broadcast_to(v.data, shape), broadcast_rows(v.dep, np.shape(v.data), shape)))
    letters = "abcdefgh"[: len(batch)]
    return f"{letters}ik,{letters}kj->{letters}ij", vals


def _coords(subs: list, vals: list, sizes: dict) -> dict | None:
    """Every combination of index values a term of the contraction uses, per letter; a constant
    operand restricts them to its nonzeros."""
    letters = sorted(sizes)
    const = [k for k, v in enumerate(vals) if v.dep is None]
    if const:
        s, data = subs[const[0]], np.asarray(vals[const[0]].data)
        nz = np.nonzero(data) if data.ndim else (np.zeros(int(data != 0), np.int64),)
        keep = np.ones(len(nz[0]) if data.ndim else int(data != 0), bool)
        base = {}
        for pos, letter in enumerate(s):
            if letter in base:
                keep &= base[letter] == nz[pos]
            else:
                base[letter] = nz[pos]
        base = {k: v[keep] for k, v in base.items()}
        count = int(keep.sum())
    else:
        base, count = {}, 1
    free = [c for c in letters if c not in base]
    total = count * int(np.prod([sizes[c] for c in free], dtype=np.int64))
    if total > _MAX_TERMS:
        return None
    grid = np.indices([sizes[c] for c in free]).reshape(len(free), -1) if free else np.zeros((0, 1), np.int64)
    reps = grid.shape[1]
    coords = {k: np.repeat(v, reps) for k, v in base.items()}
    for j, c in enumerate(free):
        coords[c] = np.tile(grid[j], count)
    return coords


def _flat_index(coords: dict, sub: str, shape: tuple, total: int) -> np.ndarray:
    if not sub:
        return np.zeros(total, np.int64)
    return np.ravel_multi_index(tuple(coords[c] for c in sub), shape)


def _contraction(op: Op, ins: list, args: tuple, outs: list, ctx: Context) -> list:
    """matmul/einsum: an output element depends on the operand elements of its terms, restricted
    to a constant operand's nonzeros; two dependent operands meet (Hessian) in each term."""
    eq, vals = _equation(op, ins, args)
    if eq is None or "->" not in eq or "." in eq:
        return dense_rule(op, ins, args, outs, ctx)
    lhs, rhs = eq.replace(" ", "").split("->")
    subs = lhs.split(",")
    sizes: dict = {}
    for s, v in zip(subs, vals):
        if len(s) != np.ndim(v.data):
            return dense_rule(op, ins, args, outs, ctx)
        for c, d in zip(s, np.shape(v.data)):
            if sizes.setdefault(c, d) != d:
                return dense_rule(op, ins, args, outs, ctx)
    coords = _coords(subs, vals, sizes)
    if coords is None or len(subs) != len(vals):
        return dense_rule(op, ins, args, outs, ctx)
    total = len(next(iter(coords.values()))) if coords else 1
    oshape = np.shape(outs[0])
    out_idx = _flat_index(coords, rhs, oshape, total)
    m = _size(outs[0])
    idx = [_flat_index(coords, s, np.shape(v.data), total) for s, v in zip(subs, vals)]
    dep = None
    for k, v in enumerate(vals):
        if v.dep is not None:
            dep = union(dep, selector(out_idx, idx[k], (m, _size(v.data))) @ build(v.dep))
    live = [k for k, v in enumerate(vals) if v.dep is not None]
    for i, k in enumerate(live):
        for j in live[i + 1 :]:
            met = selector(idx[k], idx[j], (_size(vals[k].data), _size(vals[j].data)))
            ctx.couple(vals[k].dep, met @ build(vals[j].dep))
    return [dep]


# the rules a `sparsity:` key names (codegen/load.py's SPARSITY_RULES)
_BY_NAME = {
    "reduction": _reduction,
    "along_dim": _along_dim,
    "contraction": _contraction,
    "same_rows": _same_rows,
    "moves": _moves,
    "moves_by_index": _moves,
}
_RULES: dict = {}


def rule_of(op: Op) -> Callable:
    """The rule for `op` (decided once per op from its record)."""
    rule = _RULES.get(op.name)
    if rule is None:
        rule = _RULES[op.name] = _choose(op)
    return rule


def _choose(op: Op) -> Callable:
    if not op.differentiable or op.jvp_kind in ("none", "zero"):
        return _nothing
    if op.batch in ("elementwise", "masked", "copy"):
        return _elementwise
    if op.sparsity:
        return _BY_NAME[op.sparsity.split("(")[0]]
    if op.kind != "op" and op.jvp_kind == "auto_linear":
        return _moves
    return dense_rule
