"""Batching rules: how an op runs when some input is a BatchedTensor (vmap, batched tangents).

`dispatch` sends such a call here. The innermost batch level among the inputs is unwrapped: its
batched inputs become their physical tensors (batch at dim 0), the others stay as they are
(unbatched at this level). The op's rule, named by its `batch:` key in derivatives.yaml, then
adjusts the inputs and arguments so that *one* call of the op on the physical tensors computes
every batch element, and the result is wrapped again. Because the physical call goes through
the ordinary dispatch, tapes and tangents on the physical tensors (transforms applied outside
the vmap) follow, and nested batch levels unwrap one per call.

Rules (the name in `batch:`, its arguments naming the op's parameters they adjust):

- `elementwise`: broadcasting ops. Batched inputs get size-1 dims after the batch dim up to the
  output's logical rank, so NumPy's right-aligned broadcasting lines the logical dims up.
- `dims(a, ...)`: each named argument is a logical dim (int, list of ints or None, kept): made
  physical by shifting non-negative dims past the batch dim.
- `reduce(dim[, keepdim])`: like dims, and `dim=None` (every logical dim) becomes the logical dims.
- `flat(dim[, keepdim])`: like dims, and `dim=None` (the op on the flattened tensor) flattens the
  logical dims first.
- `shape(size)`: a target shape gets the batch size prepended (reshape, view, expand).
- `prefix(index)`: a NumPy index gets a leading `slice(None)`.
- `copy`: `_copy_from` (copy_, setitem): src broadcast into self's shape.
- `matmul`: matmul semantics with vectors (a batched vector stays a vector), run as the `_matmul` primitive.
- `stack(dim)` / `cat(dim)`: list inputs, unbatched members expanded to the batch.
- `t`, `roll`, `einsum`: hand-written (a new subscript letter for the batch, for einsum).
- `fold`: ops independent along their dim 0 (im2col's N): the batch folds into it and back out.
- `views`: a view op's backward (_view_embed, _view_scatter): the view chain replayed on the batch.
- `loop`: one call per batch element, results stacked: correct for every op, slow; the default
  for ops that do not declare a rule. A composite that reads its inputs' arrays (a value-dependent
  algorithm: median, quantile, lstsq...) gets the same by its decorator, `loop_batched`.

`a(x) + b(y)` composes two rules (b adjusts what a returns; the batched flags are a's input's).

>>> import pushforward as pf
>>> pf.func.vmap(pf.matmul, in_dims=(None, 0))(pf.eye(2), pf.ones(3, 2)).shape
(3, 2)
"""

from __future__ import annotations

import functools
import math
import re
from typing import Callable

from ..core.batched import BatchedTensor, broadcast_batch, new_batch_level
from ..core.tensor import Tensor
from ..engine.tangents import replay_view
from ..core.creation import zeros
from ..errors import NestingError, OpError
from .promotion import promote, vmap_running

__all__ = [
    "has_batched",
    "blevel_of",
    "refuse_interpreted",
    "run_batched",
    "run_batched_inplace",
    "loop_batched",
    "RULES",
    "RECORDS",
]

# op name -> its Op record, filled by dispatch.oprecord.Op as the generated module builds its records (rules call ops
# by name: this layer sits below the generated module and does not import it)
RECORDS: dict = {}


def has_batched(inputs) -> bool:
    """Is one of `inputs` (or a member of a list input) a BatchedTensor?"""
    for v in inputs:
        tv = type(v)
        if tv is BatchedTensor:
            return True
        if (tv is list or tv is tuple) and any(type(x) is BatchedTensor for x in v):
            return True
    return False


def blevel_of(inputs) -> tuple[int, int]:
    """The innermost batch level among the inputs and its batch size (which must agree)."""
    blevel = -1
    found = []
    for v in inputs:
        for x in v if type(v) in (list, tuple) else (v,):
            if type(x) is BatchedTensor:
                found.append(x)
                blevel = max(blevel, x._blevel)
    sizes = {x._phys.shape[0] for x in found if x._blevel == blevel}
    if len(sizes) != 1:
        raise OpError(f"vmap: batched inputs of one batch level have different batch sizes {sorted(sizes)}")
    return blevel, sizes.pop()


def _unwrap(v, blevel: int):
    """(physical value, batched?) of one input at batch level `blevel`; lists element-wise."""
    tv = type(v)
    if tv is BatchedTensor and v._blevel == blevel:
        return v._phys, True
    if tv is list or tv is tuple:
        pairs = [_unwrap(x, blevel) for x in v]
        return [p for p, _ in pairs], [b for _, b in pairs]
    return v, False


def _unwrap_all(inputs, blevel: int) -> tuple[list, list]:
    """The inputs' physical values at batch level `blevel` and, per input, whether it is batched there."""
    pairs = [_unwrap(v, blevel) for v in inputs]
    return [p for p, _ in pairs], [b for _, b in pairs]


def _wrap(out, blevel: int):
    if isinstance(out, Tensor):
        return BatchedTensor(out, blevel)
    if isinstance(out, (tuple, list)):
        return _rebuilt(out, [_wrap(o, blevel) for o in out])
    return out


def _rebuilt(like, parts: list):
    """parts as a sequence of like's kind: a tuple, a list, or a named tuple (values, indices)."""
    return type(like)(*parts) if hasattr(like, "_fields") else type(like)(parts)


# -- the rules: (op, ins, bat, args, B, names) -> (op, ins, args, post) or None ----------------------
# A rule returns the op to run once on the physical inputs (usually the same op), the adjusted
# inputs and arguments, and a function applied to the physical result (or None). None: this call
# has no one-pass form (the loop runs).


def _lrank(v, batched) -> int:
    return v.ndim - 1 if batched else v.ndim


def _pad(v, k: int):
    """Physical batched v with k size-1 dims inserted after the batch dim."""
    if k <= 0:
        return v
    shape = tuple(v.shape)
    return v.reshape(shape[:1] + (1,) * k + shape[1:])


def _elementwise(op, ins, bat, args, B, names):
    ranks = [_lrank(v, b) for v, b in zip(ins, bat) if isinstance(v, Tensor)]
    r = max(ranks) if ranks else 0
    out = [(_pad(v, r - _lrank(v, b)) if b else v) for v, b in zip(ins, bat)]
    return op, out, args, None


def _shift(d):
    """Logical dim d (int or list of ints; None kept) as a physical dim."""
    if d is None:
        return None
    if isinstance(d, (list, tuple)):
        return type(d)(_shift(x) for x in d)
    d = int(d)
    return d + 1 if d >= 0 else d


def _batched_rank(ins, bat) -> int:
    """The logical rank of the first batched input."""
    for v, b in zip(ins, bat):
        if b is True:
            return v.ndim - 1
    return 0


def _set_args(op, args, updates: dict) -> tuple:
    args = list(args)
    for name, value in updates.items():
        args[op.argnames.index(name)] = value
    return tuple(args)


def _arg(op, args, name):
    return args[op.argnames.index(name)]


def _dims(op, ins, bat, args, B, names):
    if _batched_rank(ins, bat) == 0:
        return None  # a 0-d tensor's dim 0 / -1 has no physical counterpart: loop
    return op, ins, _set_args(op, args, {n: _shift(_arg(op, args, n)) for n in names}), None


# View ops must stay views on a 0-d tensor too (a loop stacks copies, and a later in-place op on
# the result would not reach the base): three `dims` rules say what their dims mean there.
def _new_dim(op, ins, bat, args, B, names):
    """unsqueeze: the dim counts the result's dims, so it shifts as usual, a 0-d input's too."""
    return op, ins, _set_args(op, args, {n: _shift(_arg(op, args, n)) for n in names}), None


def _swap(op, ins, bat, args, B, names):
    """transpose(dim0, dim1): of a 0-d tensor, transpose(0, -1) is the tensor itself."""
    if _batched_rank(ins, bat) == 0 and all(_arg(op, args, n) in (0, -1) for n in names):
        return op, ins, _set_args(op, args, {n: -1 for n in names}), None
    return _dims(op, ins, bat, args, B, names)


def _flatten(op, ins, bat, args, B, names):
    """flatten(start_dim, end_dim): of a 0-d tensor, flatten(0, -1) is its unsqueeze (shape (1,))."""
    if _batched_rank(ins, bat) == 0 and all(_arg(op, args, n) in (0, -1) for n in names):
        return RECORDS["unsqueeze"], ins, (-1,), None
    return _dims(op, ins, bat, args, B, names)


def _aligned(op, ins, bat, args, B, names):
    """Ops whose Tensor inputs line up dim by dim without broadcasting (gather, scatter): every
    Tensor input batched (unbatched ones expanded), dims shifted. A 0-d input (scatter's value)
    stays as it is when unbatched; batched, the call loops."""
    if any(isinstance(v, Tensor) and _lrank(v, b) == 0 for v, b in zip(ins, bat) if b):
        return None
    ins = [
        v if isinstance(v, Tensor) and not b and v.ndim == 0 else w
        for v, b, w in zip(ins, bat, _all_batched(ins, bat, B))
    ]
    return _dims(op, ins, [isinstance(v, Tensor) for v in ins], args, B, names)


def _indexed(op, ins, bat, args, B, names):
    """index_select/index_add/...: a 1-D index tensor (named second) must stay unbatched; the
    other Tensor inputs are batched and the dim shifted."""
    dim, index = names
    pos = op.params.index(index)
    if bat[pos] or any(isinstance(v, Tensor) and _lrank(v, b) == 0 for v, b in zip(ins, bat) if b):
        return None
    # the index and an unbatched 0-d value (index_fill's) stay as they are
    ins = [
        v if i == pos or (isinstance(v, Tensor) and not bat[i] and v.ndim == 0) else w
        for i, (v, w) in enumerate(zip(ins, _all_batched(ins, bat, B)))
    ]
    return op, ins, _set_args(op, args, {dim: _shift(_arg(op, args, dim))}), None


def _copy(op, ins, bat, args, B, names):
    """_copy_from: src broadcasts into self's shape. A batched src gets size-1 dims after the batch
    dim up to self's logical rank (an unbatched one broadcasts as it is); an unbatched self is
    expanded to the batch (the result has self's shape)."""
    dst, src = ins
    if bat[1]:
        src = _pad(src, _lrank(dst, bat[0]) - _lrank(src, True))
    if not bat[0]:
        dst = broadcast_batch(dst, B)
    return op, [dst, src], args, None


def _all_batched(ins, bat, B) -> list:
    """Ops that do not broadcast (gather, index_select, ...) need every Tensor input batched."""
    return [broadcast_batch(v, B) if isinstance(v, Tensor) and not b else v for v, b in zip(ins, bat)]


def _reduce(op, ins, bat, args, B, names):
    dim_name = names[0]
    r = _batched_rank(ins, bat)
    dim = _arg(op, args, dim_name)
    if r == 0 and dim is not None and not (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None  # dim 0 / -1 of a 0-d tensor: loop
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):  # every logical dim
        if r == 0:  # a 0-d logical tensor: reduce a size-1 dim that stands for it
            keep = len(names) > 1 and _arg(op, args, names[1])
            ins = [v.unsqueeze(-1) if b else v for v, b in zip(ins, bat)]
            return (
                op,
                ins,
                _set_args(op, args, {dim_name: (-1,) if isinstance(dim, tuple) else -1}),
                (_squeeze_last if keep else None),
            )
        dim = tuple(range(1, r + 1))
    else:
        dim = _shift(dim)
    return op, ins, _set_args(op, args, {dim_name: dim}), None


def _squeeze_last(out):
    return out.squeeze(-1)


def _flat(op, ins, bat, args, B, names):
    dim_name = names[0]
    dim = _arg(op, args, dim_name)
    r = _batched_rank(ins, bat)
    if dim is not None:
        return None if r == 0 else (op, ins, _set_args(op, args, {dim_name: _shift(dim)}), None)
    keep = len(names) > 1 and _arg(op, args, names[1])
    shape = None
    new = []
    for v, b in zip(ins, bat):
        if b:
            shape = tuple(v.shape)
            v = v.reshape((shape[0], -1))
        new.append(v)
    args = _set_args(op, args, {dim_name: 1})
    if keep:  # keepdim with dim=None: every logical dim kept with size 1
        ones = (shape[0],) + (1,) * (len(shape) - 1)
        return op, new, args, lambda out: out.reshape(ones)
    return op, new, args, None


def _shape(op, ins, bat, args, B, names):
    name = names[0]
    size = tuple(_arg(op, args, name))
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    v = ins[0]
    if op.name == "expand":  # expand may add leading dims: they go after the batch dim
        ins = [_pad(v, len(size) - (v.ndim - 1))] + list(ins[1:])
    return op, ins, _set_args(op, args, {name: (B,) + size}), None


def _prefix(op, ins, bat, args, B, names):
    """A NumPy index gets a leading full slice for the batch dim. Advanced indices separated by a
    slice would move their dims to the front (NumPy's rule): such an index loops instead."""
    name = names[0]
    idx = _arg(op, args, name)
    idx = idx if isinstance(idx, tuple) else (idx,)
    advanced = [i for i, v in enumerate(idx) if not isinstance(v, (int, slice, type(None), type(Ellipsis)))]
    if advanced and advanced[-1] - advanced[0] + 1 != len(advanced):
        return None
    return op, ins, _set_args(op, args, {name: (slice(None),) + idx}), None


def _squeeze(op, ins, bat, args, B, names):
    """squeeze(dim=None) squeezes every size-1 logical dim, never the batch dim."""
    name = names[0]
    dim = _arg(op, args, name)
    if dim is None:
        shape = ins[0].shape
        dim = tuple(i for i in range(1, len(shape)) if shape[i] == 1)
    elif _batched_rank(ins, bat) == 0:
        # squeeze(0) of a 0-d tensor is the tensor itself (a view: no loop, which would copy)
        dim = () if dim in (0, -1) else _shift(dim)
    else:
        dim = _shift(dim)
    return op, ins, _set_args(op, args, {name: dim}), None


def _permute(op, ins, bat, args, B, names):
    name = names[0]
    dims = tuple(_arg(op, args, name))
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    r = ins[0].ndim - 1
    return op, ins, _set_args(op, args, {name: (0,) + tuple(int(d) % max(r, 1) + 1 for d in dims)}), None


def _matmul(op, ins, bat, args, B, names):
    """matmul, mm, bmm, dot, mv: run as matmul, with vectors made matrices and back (a batch of
    vectors must not be read as a matrix: that would transpose the result)."""
    a, b = ins
    ba, bb = bat
    a_vec = _lrank(a, ba) == 1
    b_vec = _lrank(b, bb) == 1
    # one GEMM instead of B small products where the batch can ride along as rows or columns
    if ba and not bb and b.ndim <= 2:
        if a.ndim <= 2 or b.ndim == 1:
            return RECORDS["_matmul"], [a, b], (), None  # (B, k) @ (k, m) or (B, ..., k) @ (k,)
        lead = tuple(a.shape[:-1])  # (B, ..., n, k) @ (k, m): the stack as rows
        # (the row count spelled out: -1 is ambiguous when a dim is 0)
        return (
            RECORDS["_matmul"],
            [a.reshape((math.prod(lead), a.shape[-1])), b],
            (),
            lambda out: out.reshape(lead + (out.shape[-1],)),
        )
    if bb and not ba and a.ndim == 2:
        if b_vec:
            return RECORDS["_matmul"], [b, a.mT], (), None  # A v for every v: rows of V A^T
        if b.ndim == 3:  # A (B, k, m): A (k, B m), columns back to (B, n, m)
            size, k, m = b.shape
            n = a.shape[0]
            return (
                RECORDS["_matmul"],
                [a, b.permute(1, 0, 2).reshape((k, size * m))],
                (),
                # (contiguous: each example laid out as eager mm's result, so that a view of it works)
                lambda out: out.reshape((n, size, m)).permute(1, 0, 2).contiguous(),
            )
    if a_vec:
        a = a.unsqueeze(-2)
    if b_vec:
        b = b.unsqueeze(-1)
    r = max(_lrank(a, ba), _lrank(b, bb))
    if ba:
        a = _pad(a, r - _lrank(a, ba))
    if bb:
        b = _pad(b, r - _lrank(b, bb))

    def post(out):
        if b_vec:
            out = out.squeeze(-1)
        if a_vec:
            out = out.squeeze(-1 if b_vec else -2)
        return out

    return RECORDS["_matmul"], [a, b], (), post


def _masked(op, ins, bat, args, B, names):
    """masked_fill(self, mask, value) is where(mask, value, self): a batched value broadcasts."""
    self_, mask, value = ins
    return _elementwise(RECORDS["where"], [mask, value, self_], [bat[1], bat[2], bat[0]], (), B, ())


def _views(op, ins, bat, args, B, names):
    """_view_embed(src, shape, steps) / _view_scatter(self, src, steps), a view op's backward: the
    view chain is replayed on the batch (each step by its own rule) and src written there."""
    steps = _arg(op, args, "steps")
    blevel = new_batch_level()
    if op.name == "_view_embed":
        src = ins[0]
        base = zeros((B,) + tuple(_arg(op, args, "shape")), dtype=src.dtype)
        src = BatchedTensor(src, blevel)
    else:
        base, src = ins
        base = (base if bat[0] else broadcast_batch(base, B)).clone()
        src = BatchedTensor(src, blevel) if bat[1] else src
    try:
        region = replay_view(BatchedTensor(base, blevel), steps)
    except OpError:
        # a `.view` the chain took on its tensor's layout, which the batch's fresh buffer lacks
        # (a view after a transpose of a column-major base): no one-pass form, the loop runs (the
        # array kernels find such a region by its elements' positions, K.write_region)
        return None
    region.copy_(src)
    return base


def _t(op, ins, bat, args, B, names):
    """t(): the last two dims of a matrix swapped; a vector or scalar is its own transpose."""
    x = ins[0]
    if x.ndim - 1 < 2:
        return RECORDS["alias"], [x], (), None
    return RECORDS["transpose"], [x], (-2, -1), None


def _roll(op, ins, bat, args, B, names):
    """roll over the flattened logical tensor (dims=None) rolls each batch element's flattening."""
    x = ins[0]
    shifts, dims = _arg(op, args, "shifts"), _arg(op, args, "dims")
    if dims is not None:
        return op, ins, _set_args(op, args, {"dims": _shift(dims)}), None
    shape = tuple(x.shape)
    return RECORDS["roll"].public(x.reshape((shape[0], -1)), shifts, 1).reshape(shape)


def _einsum(op, ins, bat, args, B, names):
    """A new subscript letter for the batch, on the batched operands and the output."""
    eq = _arg(op, args, "equation").replace(" ", "")
    free = [c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in eq]
    if not free:
        return None
    letter = free[0]
    lhs, _, rhs = eq.partition("->")
    specs = lhs.split(",")
    if "->" not in eq:  # the implicit output: letters used once, sorted (after the ellipsis)
        letters = [c for c in lhs if c.isalpha()]
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    flags = bat[0] if type(bat[0]) is list else bat  # einsum's list of operands, or _einsum_pair's two
    specs = [letter + sp if f else sp for sp, f in zip(specs, flags)]
    return op, ins, _set_args(op, args, {"equation": ",".join(specs) + "->" + letter + rhs}), None


def _fold(op, ins, bat, args, B, names):
    """Ops independent along their dim 0 (im2col's N): the batch folds into it and back out."""
    x = ins[0]
    shape = tuple(x.shape)
    if len(shape) < 2 or any(b for b in bat[1:]):
        return None
    return (
        op,
        [x.reshape((shape[0] * shape[1],) + shape[2:])] + list(ins[1:]),
        args,
        lambda out: out.reshape((shape[0], shape[1]) + tuple(out.shape[1:])),
    )


def _outer(op, ins, bat, args, B, names):
    a, b = ins
    return (
        RECORDS["mul"],
        [a.unsqueeze(-1) if bat[0] else a.reshape((-1, 1)), b.unsqueeze(-2) if bat[1] else b],
        (),
        None,
    )


def _listed(op, ins, bat, args, B, names):
    """stack/cat: the list's unbatched members are expanded to the batch; dim shifted."""
    out = [t if f else broadcast_batch(t, B) for t, f in zip(ins[0], bat[0])]
    return op, [out] + list(ins[1:]), _set_args(op, args, {names[0]: _shift(_arg(op, args, names[0]))}), None


PREPARE: dict[str, Callable] = {
    "elementwise": _elementwise,
    "trailing": _elementwise,  # ops on the last dims (linalg, tril): leading dims broadcast alike
    "dims": _dims,
    "new_dim": _new_dim,
    "swap": _swap,
    "flatten": _flatten,
    "aligned": _aligned,
    "copy": _copy,
    "indexed": _indexed,
    "squeeze": _squeeze,
    "permute": _permute,
    "outer": _outer,
    "masked": _masked,
    "views": _views,
    "t": _t,
    "roll": _roll,
    "einsum": _einsum,
    "fold": _fold,
    "reduce": _reduce,
    "flat": _flat,
    "shape": _shape,
    "prefix": _prefix,
    "matmul": _matmul,
    "stack": _listed,
    "cat": _listed,
}
RULES = frozenset(PREPARE) | {"loop"}

_RULE = re.compile(r"^([a-z_]+)(?:\((.*)\))?$")
_parsed: dict = {}


def _rule_of(op) -> list:
    """[(rule name, argument names), ...]: `a(x) + b(y)` applies a, then b to a's result."""
    got = _parsed.get(op)
    if got is None:
        got = []
        for part in op.batch.split("+"):
            m = _RULE.match(part.strip())
            name = m.group(1) if m else ""
            if name not in RULES or (name == "loop" and len(got)):
                raise OpError(
                    f"{op.name}: unknown batching rule {op.batch!r} in derivatives.yaml "
                    f"(known: {', '.join(sorted(RULES))})"
                )
            got.append((name, tuple(a.strip() for a in (m.group(2) or "").split(",") if a.strip())))
        _parsed[op] = got
    return got


def _plan(op, ins, bat, args, B):
    """The rules' plan for one call: (op, ins, args, post), a finished physical result, or None."""
    rules = _rule_of(op)
    if rules[0][0] == "loop":
        return None
    plan = (op, ins, args, None)
    posts = []
    for name, names in rules:
        plan = PREPARE[name](plan[0], plan[1], bat, plan[2], B, names)
        if plan is None or isinstance(plan, Tensor):
            return plan
        if plan[3] is not None:
            posts.append(plan[3])
    if len(posts) > 1:
        raise OpError(f"{op.name}: batching rule {op.batch!r} composes two rules that both post-process")
    return plan[0], plan[1], plan[2], (posts[0] if posts else None)


# -- entry points (called by dispatch) ---------------------------------------------------------


def run_batched(op, inputs, args: tuple, dispatch: Callable):
    """op(inputs, args) where some input is batched: the result, batched at the innermost level."""
    blevel, B = blevel_of(inputs)
    ins, bat = _unwrap_all(inputs, blevel)
    plan = _plan(op, ins, bat, args, B)
    if plan is None:
        return _wrap(_loop(op, ins, bat, args, B, dispatch), blevel)
    if isinstance(plan, Tensor):
        return _wrap(plan, blevel)
    run, ins, args, post = plan
    out = dispatch(run, ins, args)
    if post is not None:
        out = post(out)
    return _wrap(out, blevel)


def _select(v, flag, b: int):
    if flag is True:
        return v[b]
    if type(flag) is list:
        return [x[b] if f else x for x, f in zip(v, flag)]
    return v


def _loop(op, ins, bat, args, B, dispatch):
    return _per_element(ins, bat, B, lambda vs: dispatch(op, vs, args), op.name)


def _per_element(ins, bat, B: int, call: Callable, who: str):
    """call(inputs of batch element b) for every b, the results stacked (the `loop` rule)."""
    if B == 0:
        raise OpError(f"{who}: vmap over a batch of size 0 needs a batching rule for this op")
    return _stack_like([call([_select(v, f, b) for v, f in zip(ins, bat)]) for b in range(B)])


def _stack_like(results):
    first = results[0]
    if isinstance(first, Tensor):
        shapes = {tuple(r.shape) for r in results}
        if len(shapes) > 1:  # (torch's vmap refuses the same: one batched tensor has one shape)
            raise OpError(
                f"vmap: the result's shape depends on the input's values (shapes {sorted(shapes)} across the "
                "batch): an op whose output shape varies with its values cannot be batched"
            )
        return RECORDS["stack"].public(results)
    if isinstance(first, (tuple, list)):
        return _rebuilt(first, [_stack_like([r[i] for r in results]) for i in range(len(first))])
    raise OpError(f"vmap: cannot stack results of type {type(first).__name__}")


def loop_batched(fn: Callable) -> Callable:
    """A composite that reads its inputs' arrays, run once per batch element when an input is
    batched (vmap's `loop` rule for a function: correct for every composite that returns new
    tensors, slow), its results stacked and batched again. Otherwise the composite itself. (Not for
    a composite returning views: stacked, they would be copies, and writes through them lost.)

    >>> import pushforward as pf
    >>> pf.func.vmap(lambda x: pf.median(x))(pf.tensor([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]]))
    tensor([2., 3.])
    """

    @functools.wraps(fn)
    def run(*args, **kwargs):
        batched = has_batched(args) or (kwargs and has_batched(kwargs.values()))
        if batched or vmap_running():  # (a Taylor series inside the vmap may hold the batch too)
            refuse_interpreted([*args, *kwargs.values()], fn.__name__)
        if not batched:
            return fn(*args, **kwargs)
        names, n = list(kwargs), len(args)
        blevel, B = blevel_of([*args, *kwargs.values()])
        ins, bat = _unwrap_all([*args, *kwargs.values()], blevel)
        # (each element through `run` again: it may still be batched at an outer vmap's level)
        out = _per_element(ins, bat, B, lambda vs: run(*vs[:n], **dict(zip(names, vs[n:]))), fn.__name__)
        return _wrap(out, blevel)

    return run


def refuse_interpreted(values, who: str) -> None:
    """A loop over batch elements cannot select an element of an interpreted tensor (a Taylor series
    or a sparsity pattern of a transform inside the vmap, whose coefficients are batched): it says
    so with a NestingError, on which jet takes its nested-levels path and sparsity detection the
    dense pattern."""
    for v in values:
        for x in v if type(v) in (list, tuple) else (v,):
            if isinstance(x, Tensor) and type(x) is not BatchedTensor and type(x)._interpreter is not None:
                raise NestingError(
                    f"{who}: a value that varies across a vmap batch meets a {type(x).__name__} of a transform "
                    "inside the vmap, which a loop over the batch cannot take apart"
                )


def run_batched_inplace(op, target, inputs, args: tuple, apply_inplace: Callable):
    """target.op_(inputs) where something is batched: the write goes into target's physical tensor."""
    blevel, B = blevel_of((target,) + tuple(inputs))
    if not (type(target) is BatchedTensor and target._blevel == blevel) and not promote(target, blevel, B):
        raise OpError(
            f"{op.name}_: vmap: an in-place operation would write a batched value into a tensor that is "
            f"not batched (shape {tuple(target.shape)}) and shares memory or carries a derivative; use the "
            f"out-of-place {op.name} instead"
        )
    ins, bat = _unwrap_all(inputs, blevel)
    tphys = target._phys
    plan = _plan(op, ins, bat, args, B)
    if type(plan) is tuple and plan[0] is op and plan[3] is None and plan[1][0] is tphys:
        apply_inplace(op, tphys, tuple(plan[1]), plan[2])
        return target
    for b in range(B):
        row = tphys[b]
        ins_b = [row if v is tphys else _select(v, f, b) for v, f in zip(ins, bat)]
        apply_inplace(op, row, tuple(ins_b), args)
    return target
