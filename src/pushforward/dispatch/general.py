"""The general executor: every call the array executors of the classifier do not take.

It starts with the resolver (`dispatch.interpret.resolve`): an input of another kind (batched,
lazy, a transform's interpreted tensor) hands the call to that kind's interpreter, which comes
back here with the call unwrapped. Otherwise the inputs are normalised (weak scalars, lists, optional
inputs), the kernel runs, a view output is linked to its base, the tape node is recorded on
the original inputs (so backward formulas see their tangents: forward-over-reverse) and the
tangents are computed level by level, outermost first, each with formulas over primals that
still carry the outer levels' tangents (hierarchical nesting). Each output and its tangent obey
the per-output rules (fit, own memory, layout: engine/outputs.py).

>>> import pushforward as pf
>>> from pushforward.ops.generated import MUL
>>> run_general(MUL, (pf.tensor([2.0]), pf.tensor([3.0])), ())
tensor([6.])
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..engine.outputs import fit_tangent, own_tensor, unshared
from ..engine.tangents import forced, levels_of, set_tangent, tangent_of
from ..engine.graph import record, record_plain
from ..engine.grad_mode import no_grad
from ..engine.pending import Pending, defer
from ..engine.state import STATE
from .interpret import resolve
from ..errors import OpError, OpTypeError
from .oprecord import SCALAR_TYPES, SCALARS, Op, op_error, run_kernel, weak_dtype
from ..core.batched import BatchedTensor, values_of
from ..core.lazy import is_immutable
from ..core.tensor import _NO_STORAGE, Tensor, alias, join_storage, needs_ad, wrap, FLOATING
from ..engine.registry import DISPATCH

__all__ = ["run_general", "run_view", "normalize", "prim_at", "tape_node", "saved"]

_new = object.__new__
_ndarray = np.ndarray


def _as_input(v, kind: str, dtypes: list, op: Op, pname: str):
    """Normalise a Tensor-typed argument: Tensor, None (optional), list, or a weak scalar."""
    if type(v) is Tensor:
        return v
    if v is None:
        if kind == "T?":
            return None
        raise OpTypeError(f"{op.name}: argument '{pname}' must be a Tensor, not None")
    if kind == "T[]":
        if not isinstance(v, (list, tuple)):
            raise OpTypeError(f"{op.name}: argument '{pname}' must be a sequence of Tensors, got {type(v).__name__}")
        return [x if type(x) is Tensor else _coerce(x, op, pname) for x in v]
    if isinstance(v, SCALARS):
        # NumPy's NEP 50: a Python scalar takes the dtype of the tensors it meets ("weak").
        try:
            return wrap(np.asarray(v, dtype=weak_dtype(dtypes, v)))
        except Exception as e:
            raise OpError(f"{op.name}: cannot combine scalar {v!r} with dtypes {dtypes}: {e}") from None
    return _coerce(v, op, pname)


def _coerce(v, op: Op, pname: str) -> Tensor:
    if isinstance(v, Tensor):
        return v
    try:
        arr = np.asarray(v)
    except Exception as e:
        raise OpTypeError(f"{op.name}: argument '{pname}' must be a Tensor, got {type(v).__name__}: {e}") from None
    if arr.dtype.kind not in "fciub":
        raise OpTypeError(f"{op.name}: argument '{pname}' must be a Tensor, got {type(v).__name__}")
    return wrap(arr)


def normalize(op: Op, inputs) -> list:
    kinds = op.kinds
    dtypes = [v._data.dtype for v in inputs if type(v) is Tensor]
    return [_as_input(v, kinds[i], dtypes, op, op.params[i]) for i, v in enumerate(inputs)]


def _datas(ins: list) -> list:
    return [v._data if type(v) is Tensor else (None if v is None else [x._data for x in v]) for v in ins]


def _diff_tensors(op: Op, ins: list):
    """Every differentiable input tensor, lists flattened."""
    for i, v in enumerate(ins):
        if not op.diff[i] or v is None:
            continue
        if type(v) is Tensor:
            yield v
        else:
            yield from v


def run_general(op: Op, inputs, args: tuple, after: str | None = None):
    """Run `op` on inputs that may require grad or carry tangents (or need normalising), or of
    another kind (its interpreter runs the call; `after`: the trace level handing it on)."""
    it = resolve(inputs, after)
    if it is not None:
        return it.run(op, inputs, args)
    if op.simple and all(type(v) is Tensor for v in inputs):
        ins = inputs
        datas = [v._data for v in inputs]
    else:
        ins = normalize(op, inputs)
        datas = _datas(ins)
        if op.simple:  # a Python scalar reaches the kernel as it does on the fast paths (NumPy's weak
            # scalar; pow lays out `number ** x` unlike `tensor ** x`, as torch does)
            for i, v in enumerate(inputs):
                if type(v) in SCALAR_TYPES:
                    datas[i] = v
    if op.n_out == 1:
        out = run_kernel(op, ins, datas, args)
        outs = (out,)
    else:
        raw = run_kernel(op, ins, datas, args, raw=True)
        outs = tuple(wrap(unshared(r, datas) if isinstance(r, np.ndarray) and r.base is not None else r) for r in raw)
        out = outs
    if op.kind != "op":
        _link_view(op, ins[0], outs[0], args)
    if not op.differentiable:
        return out
    st = STATE
    node = tape_node(op, ins, args, outs) if st.grad_enabled else None
    if st.levels:
        # the inputs' levels, read once: id of a differentiable input tensor -> its levels' ids
        lv_of = {}
        for t in _diff_tensors(op, ins):
            if t._fw is not None or t._st.dual:
                lv_of[id(t)] = levels_of(t)
        for uid in sorted({lv for lvs in lv_of.values() for lv in lvs}):  # (outermost first)
            _forward(op, ins, args, outs, uid, lv_of)
    saved(node, outs)
    return out


def run_view(op: Op, x, args: tuple, key: tuple | None = None):
    """A view op (`kind: view`, one Tensor input) on a plain NumPy-backed tensor: run_general's
    steps for its commonest cases written out (the kernel, the view linked by `_link_view`, the
    tape node when x requires grad, and the tangent when x holds one plain tangent: the op on the
    tangent, which is what an `auto_linear` formula is, docs/design.md); any other case is
    run_general's. Indexing's fast path (methods/indexing.py) and the classifier call it; basic
    indexing passes `key`, the NumPy index its kernel applies (`array[key]` is the kernel's call,
    on the primal and the tangent, without its frame).

    A view of a tensor holding one plain tangent of its own (or of such a view), requiring no grad,
    gets no tangent tensor of its own: it keeps that tensor, its tangent's array and the same view
    of that array (`_vsrc`), which the array paths read while the tangent is still that tensor's
    (engine.tangents.tangent_array, inplace.view_tangent; tangent_of replays `_view`):
    docs/design.md, "Lazy view tangents".

    >>> import pushforward as pf
    >>> from pushforward.ops.generated import GETITEM
    >>> x = pf.zeros(3)
    >>> v = run_view(GETITEM, x, ((slice(1, None),),)); v._base is x, v.shape
    (True, (2,))
    """
    if type(x) is not Tensor or type(x._data) is not _ndarray:
        return run_general(op, (x,), args)
    st = STATE
    t = tan = lazy = None
    if x._ad and op.differentiable:  # (else it needs no tape and sees no tangent)
        fw = x._fw
        vsrc = x._vsrc
        base = x._base
        if st.levels and (fw is not None or vsrc is not None or (base is not None and base._fw is not None)):
            if op.jvp_kind != "auto_linear":
                return run_general(op, (x,), args)
            if fw is None:
                # x reads its holder's tangent, through the array it keeps: so does its view
                if vsrc is None or x._requires_grad or (key is None and op.name == "view"):
                    return run_general(op, (x,), args)
                lazy = vsrc
            else:
                # one plain tangent of x's own, at a live level its base has no other tangent at
                if len(fw) != 1 or vsrc is not None:
                    return run_general(op, (x,), args)
                ((uid, tan),) = fw.items()
                if (
                    type(tan) is not Tensor
                    or tan._ad
                    or uid not in st.by_uid
                    or (base is not None and base._fw is not None and (len(base._fw) != 1 or uid not in base._fw))
                ):
                    return run_general(op, (x,), args)
                # (`view` needs an array's strides to fit, which a tangent's need not: a tangent of its own)
                if not x._requires_grad and (key is not None or op.name != "view"):
                    td = tan._data
                    xd = x._data
                    if type(td) is _ndarray and (td.dtype is xd.dtype or td.dtype == xd.dtype):
                        # (the view's tangent is x's: the same view of its array, no tensor of its own)
                        lazy = (x, td, td)
                        tan = None
    try:
        out = op.kernel(x._data, *args) if key is None else x._data[key]
    except Exception as e:
        raise op_error(op, (x,), args, e) from None
    if type(out) is _ndarray:
        t = _new(Tensor)
        t._data = out
    else:
        t = wrap(out)
    _link_view(op, x, t, args)
    if lazy is not None:  # (x's holder, its tangent's array, and x's tangent: the same view of that)
        ta = lazy[2]
        t._vsrc = (lazy[0], lazy[1], ta[key] if key is not None else op.kernel(ta, *args))
        return t  # (x requires no grad: no node)
    node = None
    if x._requires_grad and st.grad_enabled and op.diff[0] and op.differentiable:
        node = record_plain(op, (x,), args, t)
    if tan is not None:
        # op.jvp's call (an auto_linear formula is the op on the tangent), run_view's steps for a
        # plain tangent on a NumPy array (the arrays' errors were the primal's)
        td = tan._data
        r = _new(Tensor)
        if type(td) is not _ndarray:
            r._data = wrap(op.kernel(td, *args))._data
        else:
            r._data = op.kernel(td, *args) if key is None else td[key]
        _link_view(op, tan, r, args)
        od = t._data
        if r._data.shape != od.shape or r._data.dtype != od.dtype or od.dtype.kind not in FLOATING:
            r = fit_tangent(op, r, od.shape, od.dtype)
        if r is not None:
            set_tangent(t, uid, r)
    if node is not None and node.keep is not None:
        node.save_result((t,))
    return t


def tape_node(op: Op, ins, args: tuple, outs: tuple):
    """The tape node of one call (made the outputs' grad_fn) if a differentiable input requires
    grad, else None. (The two-input case unrolled: a comprehension is a call of its own.)"""
    if not op.simple:
        needs = [t._requires_grad for t in _diff_tensors(op, ins)]
    elif len(ins) == 2:
        (a, b), (da, db) = ins, op.diff
        needs = [a._requires_grad, b._requires_grad] if da and db else [(a if da else b)._requires_grad]
        return record_plain(op, ins, args, outs[0], needs) if True in needs else None
    else:
        needs = [x._requires_grad for x, d in zip(ins, op.diff) if d]
    return record(op, ins, args, outs, needs) if True in needs else None


def saved(node, out):
    """out (a Tensor, or the tuple of a multi-output op's), kept by its tape node (if any, and if
    the node keeps it) once its tangents are set."""
    if node is not None and node.keep is not None:
        node.save_result(out if type(out) is tuple else (out,))
    return out


def _link_view(op: Op, src: Tensor, out: Tensor, args: tuple) -> None:
    """Make `out` a view of src's root (shared memory, version counter, replay steps)."""
    d = out._data
    if type(d) is not _ndarray and is_immutable(d):  # no write reaches it through a base
        return
    if op.kind == "maybe_view" and not np.may_share_memory(d, src._data):
        return
    st = src._st
    if st is _NO_STORAGE:
        st = src._storage()
    ref = join_storage(out, st)
    fw = src._fw
    if fw is not None:  # masks of an unpacked primal hold for its views too
        for lv, t in fw.items():
            if t is None and lv in STATE.by_uid:
                set_tangent(out, lv, None)
    base = src._base
    if base is None:
        out._base = base = src
        out._view = ((op.public, args),)
    else:
        out._base = base
        out._view = src._view + ((op.public, args),)
    out._view_version = st.version
    if not base._requires_grad and d.dtype.kind in FLOATING:
        # a later differentiable write into the root must reach this view (inplace.commit); dead
        # references are dropped as the list grows past the storage's bound (join_storage's, which
        # a dual storage's views raise too: it keeps no members), so that a loop reading elements
        # keeps it proportional to the live views, amortised
        views = st.views
        if views is None:
            st.views = [ref]
        else:
            views.append(ref)
            if len(views) > st._pruned_at:
                views[:] = [r for r in views if r() is not None]
                if len(views) * 2 + 8 > st._pruned_at:
                    st._pruned_at = len(views) * 2 + 8


def _plain(t) -> bool:
    """True when t can be handled as a bare array (nothing can differentiate it)."""
    # (the _ad bit over-approximates: a Dask-backed tangent has it set for the dispatcher, core/lazy.py)
    return t is None or type(t) is Pending or (type(t) is not BatchedTensor and (not t._ad or not needs_ad(t)))


def _raw_tangent(v: Tensor, uid: int):
    """v's own tangent at the level of id `uid` as stored (maybe deferred), else tangent_of's answer."""
    fw = v._fw
    if fw is not None:
        t = fw.get(uid)
        if t is not None:
            return t
    return tangent_of(v, uid)


def _only_level(v: Tensor, uid: int, grad_on: bool, lv_of: dict) -> bool:
    """v carries no tangent but the one at the level of id `uid` and needs no grad: array formulas are exact.
    (lv_of: the inputs' levels, as run_general read them; an output's are read here.)"""
    if grad_on and v._requires_grad:
        return False
    if v._fw is None and not v._st.dual:
        return True
    lv = lv_of.get(id(v))
    if lv is None:
        lv = levels_of(v)
    return not lv or (len(lv) == 1 and uid in lv)


def _forward(op: Op, ins: list, args: tuple, outs: tuple, uid: int, lv_of: dict) -> None:
    """Compute the outputs' tangents at the level of id `uid` from the inputs' tangents there."""
    lvl = STATE.by_uid[uid]
    # Record tangent computations on the tape (reverse-over-forward) unless the level opts out.
    grad_on = STATE.grad_enabled and not lvl.untracked
    # Untracked level while a tape is recorded (forward-over-reverse): defer array formulas.
    deferred = lvl.untracked and STATE.grad_enabled and op.kind == "op" and op.n_out == 1 and op.jvp_np is not None
    tans, single = _input_tangents(op, ins, uid, grad_on, _raw_tangent if deferred else tangent_of, lv_of)
    if all(t is None or (type(t) is list and all(x is None for x in t)) for t in tans):
        return
    if op.jvp is None:
        raise NotImplementedError(f"forward-mode AD is not implemented for {op.name}")
    if single and op.jvp_np is not None and all(_only_level(o, uid, grad_on, lv_of) for o in outs):
        if deferred:
            set_tangent(outs[0], uid, defer(lvl, op, _datas(ins), tans, outs[0]._data, args))
            return
        r = op.jvp_np(
            *_datas(ins),
            *[
                None if t is None else (t._data if type(t) is Tensor else [None if x is None else x._data for x in t])
                for t in tans
            ],
            *[o._data for o in outs],
            *args,
        )
        if op.n_out == 1:
            r = None if r is None else wrap(r)
        else:
            r = tuple(None if x is None else wrap(x) for x in r)
    else:
        if deferred:  # deferred input tangents are needed now
            tans = [forced(t) for t in tans]
        if single and op.jvp_kind == "auto_linear":
            # A linear op (views, mostly): its tangent is the op on the tangents. The formula reads
            # no primal, and tangents nothing differentiates record nothing on the tape.
            r = op.jvp(*ins, *tans, *outs, *args)
        else:
            r = _jvp_on_prims(op, ins, tans, outs, args, uid, grad_on, lv_of)
    _set_output_tangents(op, ins, tans, outs, (r,) if op.n_out == 1 else r, uid)


def _input_tangents(op: Op, ins: list, uid: int, grad_on: bool, read: Callable, lv_of: dict) -> tuple[list, bool]:
    """Per differentiable input its tangent at the level of id `uid` (None, a tangent, or a list for a list
    input), and whether nothing but this level's plain tangents is around (formulas may then run
    on arrays)."""
    tans = []
    single = True
    for i, v in enumerate(ins):
        if not op.diff[i]:
            continue
        if v is None:  # an optional input not given: no tangent, but keep the positions
            tans.append(None)
            continue
        if type(v) is Tensor:
            t = read(v, uid) if (v._fw is not None or v._st.dual) else None
            single = single and _only_level(v, uid, grad_on, lv_of) and _plain(t)
        else:
            t = [read(x, uid) if (x._fw is not None or x._st.dual) else None for x in v]
            single = single and all(_only_level(x, uid, grad_on, lv_of) and _plain(y) for x, y in zip(v, t))
        tans.append(t)
    return tans, single


def _set_output_tangents(op: Op, ins: list, tans: list, outs: tuple, r: tuple, uid: int) -> None:
    """Attach the formula's tangents r to the outputs, fitted, each its own memory (docs/design.md,
    "Per-output rules")."""
    seen = None
    for o, t, d in zip(outs, r, op.out_diff):
        if d and t is not None:
            t = fit_tangent(op, t, o._data.shape, o._data.dtype)
            if t is None:
                continue
            if o._base is None:  # not a view: its tangent must be its own
                if seen is None:
                    seen = _arrays_of(ins) + _arrays_of(tans) + [x._data for x in outs]
                t = own_tensor(t, seen)
                seen.append(t._data if type(t) is Tensor else values_of(t))
            set_tangent(o, uid, t)


def _arrays_of(values) -> list:
    """The arrays of Tensors (or lists of them, or deferred tangents) in `values`, flattened: the
    memory a new tangent may not share (engine.outputs.own_tensor)."""
    out = []
    for v in values:
        tv = type(v)
        if tv is Tensor:
            out.append(v._data)
        elif tv is list:
            out.extend(_arrays_of(v))
        elif tv is BatchedTensor:
            out.append(values_of(v))
        elif tv is Pending:
            if v.value is not None and type(v.value) is Tensor:
                out.append(v.value._data)
        elif isinstance(v, np.ndarray):  # (pf.compile's tracer passes an ndarray subclass)
            out.append(v)
    return out


def _jvp_on_prims(op: Op, ins: list, tans: list, outs: tuple, args: tuple, uid: int, grad_on: bool, lv_of: dict):
    """The Tensor formula over primals that carry only the outer levels' tangents (nesting);
    recorded on the tape when the level is tracked, else run without recording."""
    prims = [
        (prim_at(v, uid, lv_of.get(id(v))) if type(v) is Tensor else [prim_at(x, uid, lv_of.get(id(x))) for x in v])
        if op.diff[i] and v is not None
        else v
        for i, v in enumerate(ins)
    ]
    if grad_on or not STATE.grad_enabled:
        return op.jvp(*prims, *tans, *outs, *args)
    with no_grad():
        return op.jvp(*prims, *tans, *outs, *args)


def prim_at(v: Tensor, uid: int, levels: list | None = None) -> Tensor:
    """v seen from the level of id `uid`: same tape identity, only the tangents of outer levels
    (`levels`: the ids of v's levels, if the caller has read them)."""
    if v._fw is None and not v._st.dual:
        return v
    if levels is None:
        levels = levels_of(v)
    if not levels:
        return v
    p = alias(v)
    for lv in levels:
        if lv < uid:
            set_tangent(p, lv, tangent_of(v, lv))
    return p


# (the interpreters hand unwrapped calls back here; they sit below this module: dispatch/interpret.py)
DISPATCH.fill({"run_general": run_general})
