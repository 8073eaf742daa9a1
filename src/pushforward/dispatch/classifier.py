"""How an op call runs: one classifier, one executor per case.

A simple generated op (one or two plain Tensors, one result) first tries its fast paths (its
kernel on the arrays when no input needs autodiff, `Tensor._ad`; then bare.run1 / run2, which
read the commonest cases of this table in a few tests: the tape case, the arrays case, and the
combined case of one input, and hand them to their executors here).
Every other out-of-place call goes through `apply`, the classifier. An input of another kind
(batched, Dask-backed, interpreted) goes to the general executor, which starts with the resolver
(`dispatch.interpret.resolve`): that kind's interpreter runs the call. (The resolver is asked
for an input that is not a plain `Tensor` on a NumPy array only: the hot path pays one type
test.) Otherwise it looks at the call once (grad
mode, which inputs require grad, which levels have tangents, untracked or vector-mode levels)
and names the executor of its case:

========  ==============================================================  ==================
case      when                                                            executor
========  ==============================================================  ==================
tape      no differentiable input carries a tangent                       `run_tape`
arrays    one ordinary level, plain tangents, nothing recorded            `run_arrays`
combined  one ordinary level, plain tangents, an input requiring grad     `run_combined`
          (forward and reverse at once): the tangent formula goes on the tape
deferred  one untracked level while grad mode is on (forward-over-        `run_deferred`
          reverse): the primal op is recorded, its tangent deferred
vector    one vector-mode level (B tangents per tensor), element-wise op  `run_vector`
view      a view op on one tensor (one plain tangent at most)             `general.run_view`
general   other views, lists, several outputs or levels, tangents that    `general.run_general`
          are differentiated themselves, no array formula
========  ==============================================================  ==================

The classifier hands its executor what it read (its reading: level, input arrays, tangents,
whether an input requires grad, Python scalars); no executor reads the inputs again. The array
cases run the op's array formula (`Op.jvp_np`) on NumPy arrays; run_combined and the general
executor the Tensor formula (the general one level by level). Each rule lives once: weak Python
scalars (oprecord.py), the per-output rules (a tangent fitted to its output, integer results
carrying none, each owning its memory, laid out as its result: engine/outputs.py), views
(general.py) and in-place writes (inplace.py). A new kind of level or tangent is a new case
in `apply` and its executor.

>>> import pushforward as pf
>>> import pushforward.autograd.forward_ad as fwAD
>>> from pushforward.ops.generated import SIN
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(pf.tensor([0.0]), pf.tensor([2.0]))
...     fwAD.unpack_dual(apply(SIN, (x,), ())).tangent
tensor([2.])
"""

from __future__ import annotations

import numpy as np

from ..engine.tangents import OTHER, set_new_tangent, tangent_array, tangent_of
from ..engine.graph import record_plain
from ..engine.outputs import fit_array, fit_tangent, own_fast, own_tensor
from ..engine.pending import Pending, defer
from ..engine.state import STATE
from .general import normalize, run_general, run_view, saved, tape_node
from .oprecord import SCALAR_TYPES, Op, run_kernel, scalar_arrays, tape_inputs
from ..core.batched import BatchedTensor
from .interpret import resolve
from ..core.tensor import _NO_STORAGE, FLOATING, Tensor, alias, join_storage, wrap

__all__ = ["apply", "run_tape", "run_arrays", "run_combined", "run_deferred", "run_vector"]

_new = object.__new__
_ndarray = np.ndarray


def apply(op: Op, ins: tuple, args: tuple):
    """op(*ins, *args) for any op and inputs: the classifier. It reads the call once (its inputs'
    arrays, tangents, requires-grad, Python scalars) and hands that reading to the executor of its
    case, which reads the inputs no further."""
    if not op.direct:  # (a view of one tensor: its fast path, general.run_view)
        return run_view(op, ins[0], args) if op.kind == "view" and len(ins) == 1 else run_general(op, ins, args)
    levels, grad_on = STATE.levels, STATE.grad_enabled
    if not levels:
        return run_tape(op, ins, args)  # no live level: no tangent anywhere
    lvl, key = (levels[0], levels[0].uid) if len(levels) == 1 else (None, None)
    deferred = lvl is not None and lvl.untracked and grad_on
    datas, tans = [], []
    scalars = rec = any_t = batched = plain = False
    for x in ins:
        tx = type(x)
        if tx is Tensor:
            if type(x._data) is not _ndarray and resolve(ins) is not None:
                return run_general(op, ins, args)  # (a Dask-backed input: the resolver's interpreter)
            datas.append(x._data)
            if grad_on and x._requires_grad:
                rec = True
            fw = x._fw
            if fw is None:
                # None: no tangent (a tensor that is no view sees none, even on a storage that had one);
                # an array: a lazy view tangent, its holder's; OTHER: a view whose base may hold one
                t = tangent_array(x, key)
                if t is OTHER or (deferred and t is not None):
                    return run_general(op, ins, args)
                plain = plain or t is not None
            elif lvl is None or len(fw) != 1:
                return run_general(op, ins, args)  # tangents of several levels (or none live): nesting
            else:
                t = fw.get(key)
                tt = type(t)
                if (tt is Tensor and not t._ad) or tt is Pending:  # (a deferred one is needed now unless deferred)
                    t = t if deferred else t._data if tt is Tensor else _forced_array(x, key)
                    plain = True
                elif tt is BatchedTensor and t._blevel == lvl.blevel and type(t._phys) is Tensor and not t._phys._ad:
                    t = t._phys._data
                    batched = True
                else:  # a tangent differentiated itself, a masked (unpacked) primal, another level's tangent
                    return run_general(op, ins, args)
            any_t = any_t or t is not None
        elif tx in SCALAR_TYPES:
            datas.append(x)
            scalars = True
            t = None
        else:  # (another kind of tensor, or to normalise: it resolves; a NumPy scalar becomes a tensor)
            return apply(op, _numpy_scalars(op, ins), args) if isinstance(x, np.generic) else run_general(op, ins, args)
        tans.append(t)
    if not op.all_diff:  # tangents of differentiable inputs only
        tans = [t for t, d in zip(tans, op.diff) if d]
        any_t = any_t and any(t is not None for t in tans)
    if not any_t:
        return run_tape(op, ins, args)
    # (tangents are arrays, except for run_deferred: as stored, Tensor or Pending, for pending.py)
    if batched:  # (an ordinary vector-mode level records the tangent formula too: general)
        if not plain and op.batch == "elementwise" and (lvl.untracked or not rec) and op.jvp_np is not None:
            return run_vector(op, ins, args, lvl, datas, tans, scalars, rec)
    elif deferred:
        if op.jvp_np is not None:
            return run_deferred(op, ins, args, lvl, datas, tans, scalars, rec)
    elif rec:
        if op.jvp is not None:
            return run_combined(op, ins, args, lvl, datas, tans, scalars)
    elif op.jvp_np is not None:
        return run_arrays(op, ins, args, lvl, datas, tans, scalars)
    return run_general(op, ins, args)  # mixed tangents, or no formula of the kind the case needs


def _numpy_scalars(op: Op, ins: tuple) -> tuple:
    """The inputs with each NumPy scalar as the 0-d tensor the general path normalises it to (of the
    dtype NumPy computes in: a NumPy scalar is no weak Python scalar), so that the executors of
    tensors take the call. (NumPy code passes NumPy scalars everywhere: `alpha * A`, `A[i, j] * x`.)"""
    if len(ins) == 2:  # (a NumPy scalar of its tensor's dtype, the commonest: that dtype is NumPy's result;
        # its 0-d tensor made inline, as wrap's ndarray case: a call less)
        a, b = ins
        if type(a) is Tensor and isinstance(b, np.generic) and b.dtype == a._data.dtype:
            s = _new(Tensor)
            s._data = np.asarray(b)
            return a, s
        if type(b) is Tensor and isinstance(a, np.generic) and a.dtype == b._data.dtype:
            s = _new(Tensor)
            s._data = np.asarray(a)
            return s, b
    return tuple(n if isinstance(v, np.generic) else v for v, n in zip(ins, normalize(op, ins)))


def _forced_array(x: Tensor, key: int):
    """x's deferred tangent at the level `key`, computed now (and stored): its array, or None."""
    t = tangent_of(x, key)
    return None if t is None else t._data


# -- the executors ---------------------------------------------------------------------------------


def run_tape(op: Op, ins: tuple, args: tuple) -> Tensor:
    """No tangent reaches the output: the kernel, and the tape node when an input requires grad.
    (Reached before apply reads the inputs when no level is live: an input that is neither a
    Tensor nor a Python scalar goes to the general executor, which normalises it.)"""
    rec = STATE.grad_enabled and op.differentiable
    if len(ins) == 1 and type(ins[0]) is Tensor:  # the recorded forward's hot path, unrolled
        x = ins[0]
        if type(x._data) is not _ndarray and resolve(ins) is not None:
            return run_general(op, ins, args)  # (a Dask-backed input: the resolver's interpreter)
        out = run_kernel(op, ins, (x._data,), args)
        if rec and x._requires_grad and op.diff[0]:
            node = record_plain(op, ins, args, out)
            if node.keep is not None:
                node.save_result((out,))
        return out
    scalars = False
    if len(ins) == 2 and type(ins[0]) is Tensor and type(ins[1]) is Tensor:  # (mul, add, ...: unrolled)
        datas = [ins[0]._data, ins[1]._data]
        if (type(datas[0]) is not _ndarray or type(datas[1]) is not _ndarray) and resolve(ins) is not None:
            return run_general(op, ins, args)
    else:
        datas = []
        for x in ins:
            if type(x) is Tensor:
                if type(x._data) is not _ndarray and resolve(ins) is not None:
                    return run_general(op, ins, args)
                datas.append(x._data)
            elif type(x) in SCALAR_TYPES:
                datas.append(x)
                scalars = True
            elif isinstance(x, np.generic):
                return run_tape(op, _numpy_scalars(op, ins), args)
            else:
                return run_general(op, ins, args)
    if not rec:
        return run_kernel(op, ins, datas, args)
    if scalars:  # (the tape takes Tensors; the kernel keeps the Python scalar, as the bare path's:
        # pow lays out `number ** x` unlike `tensor ** x`, as torch does)
        ins = tape_inputs(ins)
    out = run_kernel(op, ins, datas, args)
    node = tape_node(op, ins, args, (out,))
    if node is not None and node.keep is not None:  # (saved(), inline: every recorded binary op's)
        node.save_result((out,))
    return out


def run_arrays(op: Op, ins: tuple, args: tuple, lvl, datas: list, tans: list, scalars: bool, out=None) -> Tensor:
    """One ordinary level: the kernel (unless its result `out` is given: bare.py), then the array
    formula on the tangents."""
    if out is None:
        out = run_kernel(op, ins, datas, args)
    od = out._data
    if scalars:
        datas = scalar_arrays(datas, od)
    if len(datas) == 1 and not args:  # (a star call packs a tuple: the unary chain's hot path skips it)
        r = op.jvp_np(datas[0], tans[0], od)
    else:
        r = op.jvp_np(*datas, *tans, od, *args)
    if isinstance(r, np.ndarray) and (
        r.base is not None or r is tans[0] or (len(tans) != 1 and (len(tans) != 2 or r is tans[1]))
    ):  # (own_fast's tests for one or two tangents, inline: a fresh array that is no input tangent is kept)
        r = own_fast(r, datas, tans, od)
    if type(r) is not np.ndarray or r.shape != od.shape or r.dtype != od.dtype or od.dtype.kind not in FLOATING:
        if isinstance(r, np.generic) and not od.shape and r.dtype == od.dtype and od.dtype.kind in FLOATING:
            r = np.array(r)  # (a 0-d result's NumPy scalar, the commonest in element loops: fit_array's, inline)
        else:
            r = fit_array(op, r, od.shape, od.dtype)
            if r is None:
                return out
    t = _new(Tensor)
    t._data = r
    set_new_tangent(out, lvl, t)
    return out


def run_combined(op: Op, ins: tuple, args: tuple, lvl, datas: list, tans: list, scalars: bool, out=None) -> Tensor:
    """One ordinary level and an input that requires grad (the combined case: forward-over-reverse
    on a tracked level): the kernel and its tape node, then the Tensor formula on the primals, its
    ops recorded on the tape too. A primal carrying the tangent is seen through an alias without it
    (same tape identity), so the formula's ops carry no tangent and take the tape's fast case
    (bare.py)."""
    if scalars:
        ins = tape_inputs(ins)
    if out is None:  # (bare.py hands the kernel's result)
        out = run_kernel(op, ins, datas, args)
    x = ins[0]
    if len(ins) == 1 and x._requires_grad and op.diff[0]:  # (tape_node's one-input case, unrolled)
        node = record_plain(op, ins, args, out)
        prims = (alias(x) if x._fw is not None or x._vsrc is not None else x,)
    else:
        node = tape_node(op, ins, args, (out,))
        prims = [alias(v) if d and (v._fw is not None or v._vsrc is not None) else v for v, d in zip(ins, op.diff)]
    seen = [*datas, out._data]  # (loops, not comprehensions: each is a call of its own)
    tts = []
    uid = lvl.uid
    for t, v in zip(tans, ins if op.all_diff else [v for v, d in zip(ins, op.diff) if d]):
        if t is not None:
            seen.append(t)
            # the formula's nodes may keep the tangent: on its own storage, so that an in-place write
            # into the tangent later (the primal's in-place op) is seen by their version check
            fw = v._fw
            src = fw.get(uid) if fw is not None else None
            if src is None:
                src = tangent_of(v, uid)  # (a view's, replayed from its base's)
            w = _new(Tensor)
            w._data = t
            if type(src) is Tensor and src._data.shape == t.shape:
                st = src._st
                join_storage(w, st if st is not _NO_STORAGE else src._storage())
            t = w
        tts.append(t)
    r = op.jvp(*prims, *tts, out, *args)
    if r is not None:
        od = out._data
        if (
            type(r) is not Tensor
            or r._data.shape != od.shape
            or r._data.dtype != od.dtype
            or od.dtype.kind not in FLOATING
        ):
            r = fit_tangent(op, r, od.shape, od.dtype)
        if r is not None:
            set_new_tangent(out, lvl, own_tensor(r, seen))
    if node is not None and node.keep is not None:
        node.save_result((out,))
    return out


def run_deferred(op: Op, ins: tuple, args: tuple, lvl, datas: list, tans: list, scalars: bool, rec: bool) -> Tensor:
    """An untracked level while a tape is recorded (forward-over-reverse): the primal op goes on
    the tape, its tangent formula is deferred until something reads the tangent (pending.py)."""
    out = run_kernel(op, ins, datas, args)
    node = tape_node(op, tape_inputs(ins) if scalars else ins, args, (out,)) if rec else None
    od = out._data
    if od.dtype.kind in FLOATING:
        set_new_tangent(out, lvl, defer(lvl, op, scalar_arrays(datas, od) if scalars else datas, tans, od, args))
    return saved(node, out)


def run_vector(op: Op, ins: tuple, args: tuple, lvl, datas: list, tans: list, scalars: bool, rec: bool) -> Tensor:
    """A vector-mode level (dual_level(batch=B)), element-wise op: its array formula runs once on
    the tangents' (B, ...) arrays, each with size-1 dims inserted after the batch dim up to the
    output's rank, so that right-aligned broadcasting lines the logical dims up with the primals'
    (the `elementwise` batching rule, on arrays). On an untracked level the primal op is recorded."""
    out = run_kernel(op, ins, datas, args)
    node = tape_node(op, tape_inputs(ins) if scalars else ins, args, (out,)) if rec else None
    od = out._data
    if od.dtype.kind in FLOATING:
        rank = od.ndim + 1
        tans = [
            t if t is None or t.ndim == rank else t.reshape(t.shape[:1] + (1,) * (rank - t.ndim) + t.shape[1:])
            for t in tans
        ]
        if scalars:
            datas = scalar_arrays(datas, od)
        r = op.jvp_np(*datas, *tans, od, *args)
        if isinstance(r, np.ndarray):
            r = own_fast(r, datas, tans, od)
        r = fit_array(op, r, od.shape, od.dtype, lvl.batch)
        if r is not None:
            set_new_tangent(out, lvl, BatchedTensor(wrap(r), lvl.blevel))
    return saved(node, out)
