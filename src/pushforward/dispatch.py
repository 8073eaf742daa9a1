"""How an op runs: kernel on arrays, tape recording, tangents for every live level.

Simple generated ops (one or two plain Tensors, one result) call `bare.run1`/`run2`, which
run the kernel when no input needs autodiff and hand over to `apply1`/`apply2` otherwise; the
other ops call `applyn` or `apply_inplace`. Then, by case:

- one dual level and array formulas: `fast_jvp1`/`fast_jvp` (`fast_untracked` on an untracked
  level, `fast_batched` at a vector-mode level for element-wise ops): the formula on arrays;
- everything else, `dispatch`: a batched input goes to batching.py (the op's batching rule,
  then dispatch again on the physical tensors); otherwise the tape node is recorded on the
  original inputs (so backward formulas see their tangents: forward-over-reverse) and the
  tangents are computed level by level, outermost first, each with formulas over primals that
  still carry the outer levels' tangents (hierarchical nesting).
"""
from __future__ import annotations

import weakref
from typing import Callable

import numpy as np

from .autograd.state import STATE
from .autograd.forward_ad import levels_of, set_tangent, tangent_of, tangents_below, zero_tangent
from .errors import OpError, OpTypeError, describe, same_kind
from .kernels import CONTIGUOUS_RESULTS
from .autograd.graph import rebase_history, record, record1
from .autograd.pending import Pending, defer, flush
from .batching import OPS, has_batched, run_batched, run_batched_inplace
from ._batched import BatchedTensor, values_of
from .autograd.grad_mode import no_grad
from ._tensor import _NO_STORAGE, Tensor, alias, join_storage, wrap, FLOATING

_new = object.__new__
_SCALARS = (int, float, complex, bool, np.integer, np.floating, np.complexfloating, np.bool_)
_SCALAR_TYPES = frozenset((int, float, complex, bool))


class Op:
    """Runtime description of one op, built by the generated module from derivatives.yaml."""

    __slots__ = ("name", "kernel", "params", "kinds", "diff", "backward", "jvp", "jvp_np", "jvp_kind",
                 "save", "save_fn", "n_out", "out_diff", "kind", "differentiable",
                 "public", "simple", "jvp_np_reads", "grad_embeds", "contiguous", "argnames", "batch")

    def __init__(self, name: str, kernel: Callable, params: tuple, kinds: tuple, diff: tuple, *,
                 backward=None, jvp=None, jvp_np=None, jvp_kind: str = "none", save: tuple | None = None,
                 save_fn: Callable | None = None, n_out: int = 1, out_diff: tuple = (True,), kind: str = "op",
                 differentiable: bool = True, jvp_np_reads: tuple | None = None, grad_embeds: bool = False,
                 argnames: tuple = (), batch: str = "loop") -> None:
        self.name = name
        self.kernel = kernel
        self.params = params          # names of the Tensor-typed parameters
        self.kinds = kinds            # per tensor param: "T", "T?" or "T[]"
        self.diff = diff              # per tensor param: differentiable?
        self.backward = backward      # (grad, *inputs, result, *args, needs) -> tuple of grads
        self.jvp = jvp                # (*prims, *tangents, result, *args) -> tangent (Tensor ops)
        self.jvp_np = jvp_np          # the same formula over ndarrays, or None
        self.jvp_kind = jvp_kind      # explicit / auto_element_wise / auto_linear / none
        # What the tape node keeps, derived from the backward formulas (codegen/saves.py):
        # save[mask] = (per tensor param: 0 nothing, 1 metadata, 2 the tensor; per output: 0/2,
        # or None when no output is kept), where bit i of mask says differentiable param i needs
        # grad. save_fn(*tensor params, *args) gives the table when it depends on static tests.
        self.save = save if save is not None else ((((0,) * len(params)), None),) * (1 << sum(diff))
        self.save_fn = save_fn
        self.n_out = n_out
        self.out_diff = out_diff
        self.kind = kind              # "op", "view" or "maybe_view"
        self.differentiable = differentiable
        # per tensor param, then the result: read by jvp_np? (None: all are)
        self.jvp_np_reads = jvp_np_reads
        # the backward places grad into zeros of the input's shape, where this view looks
        self.grad_embeds = grad_embeds
        self.public = None            # the public function (set by the generated module)
        OPS[name] = self              # batching rules call ops by name
        self.argnames = argnames      # names of the non-Tensor arguments, in the order of `args`
        self.batch = batch            # batching rule from derivatives.yaml (see batching.py)
        # plain Tensor inputs and one output: the hot paths may skip normalising and flattening
        self.simple = all(k == "T" for k in kinds) and n_out == 1
        # the kernel's result is C-contiguous: so must its tangent be, whichever path computes it
        # (wrapped here, so the other ops' hot paths pay nothing for it)
        self.contiguous = name in CONTIGUOUS_RESULTS
        if self.contiguous:
            self.jvp = _contiguous_tensor_formula(jvp) if jvp is not None else None
            self.jvp_np = _contiguous_array_formula(jvp_np) if jvp_np is not None else None

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def _contiguous_array_formula(f: Callable) -> Callable:
    def formula(*a):
        r = f(*a)
        return np.ascontiguousarray(r) if type(r) is np.ndarray and not r.flags.c_contiguous else r
    return formula


def _contiguous_tensor_formula(f: Callable) -> Callable:
    def formula(*a):
        r = f(*a)
        return r.clone() if type(r) is Tensor and not r._data.flags.c_contiguous else r
    return formula


def op_error(op: Op, inputs, args, exc: BaseException) -> OpError:
    """An error naming the op, its inputs' shapes/dtypes and NumPy's complaint."""
    msg = str(exc).split("\n")[0]
    shown = ", ".join(describe(v) for v in inputs)
    extra = (", args=" + ", ".join(repr(a) for a in args)) if args else ""
    return same_kind(exc)(f"{op.name}: {msg} (inputs: {shown}{extra})")


# -- fast paths ---------------------------------------------------------------------------

def _bare(op: Op, inputs, datas, args: tuple) -> Tensor:
    """Kernel on bare arrays (or Python scalars) and a fresh tensor around the result; NumPy's
    errors become ours, naming the op and its inputs."""
    try:
        out = op.kernel(*datas, *args)
    except Exception as e:
        raise op_error(op, inputs, args, e) from None
    t = _new(Tensor)
    if type(out) is np.ndarray:
        if out.base is not None and op.kind == "op":
            out = _unshared(out, datas)
        t._data = out
    else:
        t._data = np.asarray(out)
    return t


def _unshared(out: np.ndarray, datas) -> np.ndarray:
    """A non-view op's kernel result that is a NumPy view (einsum('ij->ji'), a reshape in the
    kernel) may alias an input: then autograd would not know that writing into the result
    writes into the input. Such a result is copied: every op returns a tracked view (view ops)
    or fresh memory. (A result that is an input itself has no base: kernels never do that.)"""
    return out.copy() if own_array(out, datas) is not out else out


def apply1(op: Op, x, args: tuple):
    """One input that bare.run1 could not run on its array (it needs autodiff, or is not a plain
    Tensor): the tape-only and one-level forward cases here, the rest by `dispatch`."""
    st = STATE
    if st.levels:
        out = fast_jvp1(op, x, args) if type(x) is Tensor else None
        if out is not None:
            return out
    elif type(x) is Tensor and x._fw is None and not x._st.dual:
        # no tangent anywhere: the tape only, when x requires grad (its _ad bit may be stale:
        # requires_grad_(False), detach_() or an exited level leave it set)
        out = _bare(op, (x,), (x._data,), args)
        if x._requires_grad and st.grad_enabled and op.differentiable:
            node = record1(op, x, args, out)
            if node.keep is not None:
                node.save_result((out,))
        return out
    return dispatch(op, (x,), args)


def fast_jvp1(op: Op, x: Tensor, args: tuple):
    """fast_jvp for one input, with the commonest case unrolled (an ordinary level, nothing
    requiring grad: element-wise chains are mostly unary)."""
    levels = STATE.levels
    fw = x._fw
    if len(levels) != 1 or op.jvp_np is None or fw is None or len(fw) != 1:
        return None
    lvl = levels[0]
    key = lvl.uid
    if lvl.untracked:
        return fast_untracked(op, (x,), args, lvl)
    t = fw.get(key)
    if type(t) is not Tensor or t._ad or \
            (x._requires_grad and STATE.grad_enabled):
        return fast_batched(op, (x,), args, lvl) if type(t) is BatchedTensor else None
    xd = x._data
    out = _bare(op, (x,), (xd,), args)
    od = out._data
    td = t._data
    r = op.jvp_np(xd, td, od, *args)
    # (formulas never return a primal unchanged: the opdb test of own_array checks it)
    if type(r) is np.ndarray and (r.base is not None or r is td):
        r = own_array(r, (xd, td, od))
    return _attach(op, out, r, key, lvl)


# -- the aliasing rule ------------------------------------------------------------------------
# A tangent may share memory with another tensor's tangent only where the primals do: a view
# and its base. A formula may return an input's tangent unchanged (``x + 1``: self_t), or a
# reshape of it, or a primal; attached as it is, an in-place op on either tensor would change
# the other's tangent. Every place that attaches a formula's tangent to a non-view output
# (_attach, _forward and the deferred tangents of pending.py) goes through `own_array` or
# `own_tensor`, which copy exactly in that case. A fresh array (no base, not an input) costs
# two identity tests.

def own_array(r: np.ndarray, arrays) -> np.ndarray:
    """r, or a copy of r when it may share memory with one of `arrays` (ndarrays, lists of them,
    None or scalars: the formula's inputs and the op's outputs)."""
    fresh = r.base is None
    for a in arrays:
        if type(a) is list:
            if own_array(r, a) is not r:
                return r.copy()
        elif type(a) is np.ndarray and (a is r if fresh else np.may_share_memory(r, a)):
            return r.copy()
    return r


def _arrays_of(values) -> list:
    """The arrays of Tensors (or lists of them, or deferred tangents) in `values`, flattened."""
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
        elif tv is np.ndarray:
            out.append(v)
    return out


def own_tensor(t: Tensor, arrays) -> Tensor:
    """t, or t.clone() (differentiable, for nested levels) when it may share memory with `arrays`."""
    d = t._data if type(t) is not BatchedTensor else values_of(t)
    fresh = d.base is None
    for a in arrays:
        if a is d if fresh else np.may_share_memory(d, a):
            return t.clone()
    return t


def _attach(op: Op, out: Tensor, r, key: int, level) -> Tensor:
    """Give `out` the tangent array r (None: no tangent; it must share memory with no input or
    output array, see own_array) at the level `key`."""
    if r is None:
        return out
    od = out._data
    if type(r) is not np.ndarray or r.shape != od.shape or r.dtype != od.dtype or od.dtype.kind not in FLOATING:
        t = fit_tangent(wrap(np.asarray(r)), out, op)
        if t is None:
            return out
    else:
        t = _new(Tensor)
        t._data = r
    out._fw = {key: t}
    out._ad = True
    level.register(out)
    return out


def apply2(op: Op, a, b, args: tuple):
    """Two inputs (either may be a Python scalar) that bare.run2 could not run on their arrays:
    the tape-only and one-level forward cases here, the rest by `dispatch`."""
    ta = type(a)
    tb = type(b)
    st = STATE
    if st.levels:
        out = fast_jvp(op, (a, b), args)
        if out is not None:
            return out
    elif ((a._fw is None and not a._st.dual) if ta is Tensor else ta in _SCALAR_TYPES) and \
            ((b._fw is None and not b._st.dual) if tb is Tensor else tb in _SCALAR_TYPES):
        # inputs without tangents: only the tape needs care (the recorded forward's hot path)
        if not st.grad_enabled:
            return _bare(op, (a, b), (a._data if ta is Tensor else a, b._data if tb is Tensor else b), args)
        if ta is not Tensor:
            a = wrap(np.asarray(a, dtype=_weak_dtype([b._data.dtype], a)))
        elif tb is not Tensor:
            b = wrap(np.asarray(b, dtype=_weak_dtype([a._data.dtype], b)))
        ins = (a, b)
        out = _bare(op, ins, (a._data, b._data), args)
        if op.differentiable:
            da, db = op.diff
            ra = a._requires_grad and da
            rb = b._requires_grad and db
            if ra or rb:
                node = record(op, ins, args, (out,), [ra, rb] if da and db else [ra or rb])
                if node.keep is not None:
                    node.save_result((out,))
        return out
    return dispatch(op, (a, b), args)


def _tape(op: Op, ins: tuple, args: tuple, out: Tensor):
    """The tape node of a one- or two-Tensor-input op if an input requires grad, else None."""
    if len(ins) == 1:
        needs = [ins[0]._requires_grad]
    else:
        a, b = ins
        da, db = op.diff
        needs = [a._requires_grad, b._requires_grad] if da and db else [(a if da else b)._requires_grad]
    return record(op, ins, args, (out,), needs) if True in needs else None


def fast_jvp(op: Op, ins: tuple, args: tuple):
    """The common forward-mode case on bare arrays: one live level, every input with at most that
    level's tangent, and a formula over arrays. An input that requires grad is fine when no tape is
    being recorded. Untracked levels go to `fast_untracked`.

    Returns None when the case is not that simple (the general path then runs).
    """
    levels = STATE.levels
    if len(levels) != 1 or op.jvp_np is None:
        return None
    lvl = levels[0]
    if lvl.untracked:
        return fast_untracked(op, ins, args, lvl)
    key = lvl.uid
    grad_on = STATE.grad_enabled
    if len(ins) == 2 and type(ins[0]) is Tensor and type(ins[1]) is Tensor and op.diff[0] and op.diff[1]:
        return _fast_jvp2(op, ins, args, lvl, grad_on)
    datas = []
    tans = []
    scalars = False
    any_t = False
    for x, d in zip(ins, op.diff):
        tx = type(x)
        if tx is Tensor:
            if x._requires_grad and grad_on:
                return None  # the tangent formulas go on the tape: the general path
            t = _fast_tangent(x, key)
            if t is _NOT_FAST:
                return None
            if t is _BATCHED:
                return fast_batched(op, ins, args, lvl)
            if t is not None:
                any_t = any_t or d
            datas.append(x._data)
        elif tx in _SCALAR_TYPES:
            datas.append(x)
            scalars = True
            t = None
        else:
            return None
        if d:
            tans.append(t)
    out = _bare(op, ins, datas, args)
    if not any_t:
        return out
    od = out._data
    if scalars:
        datas = _scalar_arrays(datas, od)
    r = op.jvp_np(*datas, *tans, od, *args)
    if type(r) is np.ndarray:  # _own_fast, inlined: this is the jvp hot path
        if r.base is not None:
            r = own_array(r, (*datas, *tans, od))
        else:
            for a in tans:
                if a is r:
                    r = r.copy()
                    break
    return _attach(op, out, r, key, lvl)


def _fast_jvp2(op: Op, ins: tuple, args: tuple, lvl, grad_on: bool):
    """fast_jvp's loop unrolled for two Tensors, both differentiable (mul, add, ...)."""
    x, y = ins
    if grad_on and (x._requires_grad or y._requires_grad):
        return None  # the tangent formulas go on the tape: the general path
    key = lvl.uid
    tx = _fast_tangent(x, key)
    ty = _fast_tangent(y, key)
    if tx is _BATCHED or ty is _BATCHED:
        return fast_batched(op, ins, args, lvl)
    if tx is _NOT_FAST or ty is _NOT_FAST:
        return None
    xd = x._data
    yd = y._data
    out = _bare(op, ins, (xd, yd), args)
    if tx is None and ty is None:
        return out
    od = out._data
    r = op.jvp_np(xd, yd, tx, ty, od, *args)
    if type(r) is np.ndarray:  # _own_fast, inlined
        if r.base is not None:
            r = own_array(r, (xd, yd, tx, ty, od))
        elif r is tx or r is ty:
            r = r.copy()
    return _attach(op, out, r, key, lvl)


_NOT_FAST = object()
_BATCHED = object()  # a vector-mode level's tangent: fast_batched's case


def _fast_tangent(x: Tensor, key: int):
    """x's tangent array at the level `key` for the fast paths: None without a tangent, or _NOT_FAST
    when the general path must run (a view whose base may hold the tangent, several levels' tangents,
    a tangent that is differentiable, deferred or has tangents of its own)."""
    fw = x._fw
    if fw is None:
        return _NOT_FAST if x._st.dual else None
    if len(fw) != 1:
        return _NOT_FAST
    t = fw.get(key)
    if type(t) is not Tensor or t._ad:
        return _BATCHED if type(t) is BatchedTensor else _NOT_FAST
    return t._data


def fast_batched(op: Op, ins: tuple, args: tuple, lvl):
    """fast_jvp at a vector-mode level (dual_level(batch=B)) for an element-wise op: its array
    formula runs once on the tangents' (B, ...) arrays, each with size-1 dims inserted after the
    batch dim up to the output's rank, so that right-aligned broadcasting lines the logical dims
    up with the primals' (the `elementwise` batching rule, on arrays). None: not that case (the
    general path runs the Tensor formula by the batching rules)."""
    if op.batch != "elementwise" or op.jvp_np is None:
        return None
    got = _batched_arrays(op, ins, lvl)
    if got is None:
        return None
    datas, tans, scalars, rec = got
    out = _bare(op, ins, datas, args)
    node = _tape(op, _tape_inputs(ins) if scalars else ins, args, out) if rec else None
    od = out._data
    if od.dtype.kind not in FLOATING:
        return _saved(node, out)  # integer results carry no tangent (DESIGN rule 3)
    rank = od.ndim + 1
    tans = [t if t is None or t.ndim == rank else t.reshape(t.shape[:1] + (1,) * (rank - t.ndim) + t.shape[1:])
            for t in tans]
    r = op.jvp_np(*(_scalar_arrays(datas, od) if scalars else datas), *tans, od, *args)
    if r is None:
        return _saved(node, out)
    want = (lvl.batch,) + od.shape
    if type(r) is not np.ndarray or r.shape != want or r.dtype != od.dtype:
        r = np.asarray(r)
        if r.dtype.kind == "c" and od.dtype.kind != "c":
            r = r.real
        r = np.array(np.broadcast_to(r, want), dtype=od.dtype)  # a fresh array of the full batch
    else:
        r = _own_fast(r, datas, tans, od)
    out._fw = {lvl.uid: BatchedTensor(wrap(r), lvl.blevel)}
    out._ad = True
    lvl.register(out)
    return _saved(node, out)


def _batched_arrays(op: Op, ins: tuple, lvl):
    """fast_batched's inputs: (primal arrays or scalars, tangents' physical arrays or None, any
    scalar?, record the primal op?), or None when the general path must run."""
    key, blevel, grad_on = lvl.uid, lvl.blevel, STATE.grad_enabled
    datas, tans = [], []
    scalars = rec = False
    for x, d in zip(ins, op.diff):
        tx = type(x)
        t = None
        if tx is Tensor:
            if x._requires_grad and grad_on:
                if not lvl.untracked:
                    return None  # the tangent formula goes on the tape: the general path
                rec = True  # an untracked level (forward-over-reverse): only the primal op is recorded
            fw = x._fw
            if fw is not None:
                t = fw.get(key)
                if len(fw) != 1 or type(t) is not BatchedTensor or t._blevel != blevel:
                    return None
                p = t._phys
                if type(p) is not Tensor or p._ad:
                    return None
                t = p._data
            elif x._st.dual:
                return None  # a view whose base may hold the tangent
            datas.append(x._data)
        elif tx in _SCALAR_TYPES:
            datas.append(x)
            scalars = True
        else:
            return None
        if d:
            tans.append(t)
    return datas, tans, scalars, rec


def _saved(node, out: Tensor) -> Tensor:
    """out, kept by its tape node (if any, and if the node keeps it) once its tangents are set."""
    if node is not None and node.keep is not None:
        node.save_result((out,))
    return out


def _own_fast(r: np.ndarray, datas: list, tans: list, od: np.ndarray) -> np.ndarray:
    """own_array for the fast paths: a fresh array (no base) can only be an input tangent itself
    (formulas never return a primal unchanged: the opdb test of own_array checks it)."""
    if r.base is not None:
        return own_array(r, (*datas, *tans, od))
    for a in tans:
        if a is r:
            return r.copy()
    return r


def _scalar_arrays(datas: list, od: np.ndarray) -> list:
    """Formulas need arrays: a Python scalar takes the output's dtype (NumPy's weak scalars)."""
    dt = od.dtype if od.dtype.kind in "fc" else None
    return [np.asarray(v, dtype=dt) if type(v) in _SCALAR_TYPES else v for v in datas]


def fast_untracked(op: Op, ins: tuple, args: tuple, lvl):
    """fast_jvp on an untracked level (forward-over-reverse): inputs may require grad (the tape
    node is recorded; the tangent formula is not). While grad mode is on the tangent is deferred
    (pending.py); otherwise it is computed now, on arrays. (Kept apart from fast_jvp: merged, the
    checks for deferral and the tape cost the ordinary jvp path about 4%.)"""
    key = lvl.uid
    lazy = STATE.grad_enabled
    datas = []
    tans = []
    scalars = False
    rec = False
    any_t = False
    for x, d in zip(ins, op.diff):
        tx = type(x)
        if tx is Tensor:
            rec = rec or (lazy and x._requires_grad)
            fw = x._fw
            if fw is None:
                if x._st.dual:
                    return None  # a view whose base may hold the tangent
                t = None
            else:
                if len(fw) != 1:
                    return None
                t = fw.get(key)
                if type(t) is Pending:
                    if not lazy:
                        t = tangent_of(x, key)  # needed now
                elif type(t) is not Tensor or t._ad:
                    return fast_batched(op, ins, args, lvl) if type(t) is BatchedTensor else None
                if t is not None:
                    any_t = any_t or d
                    if not lazy:
                        t = t._data
            datas.append(x._data)
        elif tx in _SCALAR_TYPES:
            datas.append(x)
            scalars = True
            t = None
        else:
            return None
        if d:
            tans.append(t)
    out = _bare(op, ins, datas, args)
    node = _tape(op, _tape_inputs(ins) if scalars else ins, args, out) if rec else None
    if any_t:
        od = out._data
        if scalars:
            datas = _scalar_arrays(datas, od)
        if lazy:
            out._fw = {key: defer(lvl, op, datas, tans, od, args)}
            out._ad = True
            lvl.register(out)
        else:
            r = op.jvp_np(*datas, *tans, od, *args)
            if type(r) is np.ndarray:
                r = _own_fast(r, datas, tans, od)
            _attach(op, out, r, key, lvl)
    return _saved(node, out)


def _tape_inputs(ins: tuple) -> tuple:
    """The tape takes Tensors: a Python scalar input is wrapped with its weak dtype."""
    dts = [x._data.dtype for x in ins if type(x) is Tensor]
    return tuple(x if type(x) is Tensor else wrap(np.asarray(x, dtype=_weak_dtype(dts, x))) for x in ins)


def applyn(op: Op, inputs: tuple, args: tuple):
    """Any number of inputs (including lists); views always take this path."""
    return dispatch(op, inputs, args)


# -- the general path ---------------------------------------------------------------------------

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
    if isinstance(v, _SCALARS):
        # NumPy's NEP 50: a Python scalar takes the dtype of the tensors it meets ("weak").
        try:
            return wrap(np.asarray(v, dtype=_weak_dtype(dtypes, v)))
        except Exception as e:
            raise OpError(f"{op.name}: cannot combine scalar {v!r} with dtypes {dtypes}: {e}") from None
    return _coerce(v, op, pname)


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float16): np.dtype(np.complex64)}


def _weak_dtype(dtypes: list, v) -> np.dtype:
    """The dtype NumPy gives a Python scalar `v` combined with tensors of `dtypes` (NEP 50)."""
    tv = type(v)
    if not dtypes or tv not in _SCALAR_TYPES:
        return np.result_type(*dtypes, v) if dtypes else np.asarray(v).dtype
    dt = dtypes[0] if len(dtypes) == 1 else np.result_type(*dtypes)
    kind = dt.kind
    if tv is bool or (tv is int and kind != "b") or (tv is float and kind in "fc") or (tv is complex and kind == "c"):
        return dt
    if tv is int:
        return np.dtype(np.int64)
    if tv is float:
        return np.dtype(np.float64)
    return _COMPLEX_OF.get(dt, np.dtype(np.complex128))


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


def dispatch(op: Op, inputs, args: tuple):
    """Run `op` on inputs that may require grad or carry tangents (or need normalising)."""
    if has_batched(inputs):
        return run_batched(op, inputs, args, dispatch)
    if op.simple and all(type(v) is Tensor for v in inputs):
        ins = inputs
        datas = [v._data for v in inputs]
    else:
        ins = normalize(op, inputs)
        datas = _datas(ins)
    if op.n_out == 1:
        out = _bare(op, ins, datas, args)
        outs = (out,)
    else:
        try:
            raw = op.kernel(*datas, *args)
        except Exception as e:
            raise op_error(op, ins, args, e) from None
        outs = tuple(wrap(_unshared(r, datas) if type(r) is np.ndarray and r.base is not None else r) for r in raw)
        out = outs
    if op.kind != "op":
        _link_view(op, ins[0], outs[0], args)
    if not op.differentiable:
        return out
    st = STATE
    node = None
    if st.grad_enabled:
        if op.simple:
            needs = [v._requires_grad for v, d in zip(ins, op.diff) if d]
        else:
            needs = [t._requires_grad for t in _diff_tensors(op, ins)]
        if True in needs:
            node = record(op, ins, args, outs, needs)
    if st.levels:
        levels = set()
        for t in _diff_tensors(op, ins):
            if t._fw is not None or t._st.dual:
                levels.update(levels_of(t))
        for level in sorted(levels):
            _forward(op, ins, args, outs, level)
    if node is not None and node.keep is not None:
        node.save_result(outs)
    return out


def _link_view(op: Op, src: Tensor, out: Tensor, args: tuple) -> None:
    """Make `out` a view of src's root (shared memory, version counter, replay steps)."""
    if op.kind == "maybe_view" and not np.may_share_memory(out._data, src._data):
        return
    join_storage(out, src._storage())
    if src._fw is not None:  # masks of an unpacked primal hold for its views too
        for lv, t in list(src._fw.items()):
            if t is None and lv in STATE.by_uid:
                set_tangent(out, lv, None)
    base = src._base
    if base is None:
        out._base = src
        out._view = ((op.public, args),)
    else:
        out._base = base
        out._view = src._view + ((op.public, args),)
    out._view_version = out._st.version
    if not out._base._requires_grad and out._data.dtype.kind in FLOATING:
        st = out._st  # a later differentiable write into the root must reach this view (commit)
        if st.views is None:
            st.views = []
        st.views.append(weakref.ref(out))


def _plain(t) -> bool:
    """True when t can be handled as a bare array (nothing can differentiate it)."""
    return t is None or type(t) is Pending or (
        type(t) is not BatchedTensor and not t._ad)


def _raw_tangent(v: Tensor, level: int):
    """v's own tangent at `level` as stored (maybe deferred), else tangent_of's answer."""
    fw = v._fw
    if fw is not None:
        t = fw.get(level)
        if t is not None:
            return t
    return tangent_of(v, level)


def _forced_tangent(t):
    if type(t) is Pending:
        return t.force()
    if type(t) is list:
        return [_forced_tangent(x) for x in t]
    return t


def _only_level(v: Tensor, level: int, grad_on: bool) -> bool:
    """v carries no tangent but the one at `level` and needs no grad: array formulas are exact."""
    if grad_on and v._requires_grad:
        return False
    if v._fw is None and not v._st.dual:
        return True
    lv = levels_of(v)
    return not lv or (len(lv) == 1 and level in lv)


def _forward(op: Op, ins: list, args: tuple, outs: tuple, level: int) -> None:
    """Compute the outputs' tangents at `level` from the inputs' tangents at `level`."""
    lvl = STATE.by_uid[level]
    # Record tangent computations on the tape (reverse-over-forward) unless the level opts out.
    grad_on = STATE.grad_enabled and not lvl.untracked
    # Untracked level while a tape is recorded (forward-over-reverse): defer array formulas.
    lazy = lvl.untracked and STATE.grad_enabled and op.kind == "op" and op.n_out == 1 and op.jvp_np is not None
    tans, single = _input_tangents(op, ins, level, grad_on, _raw_tangent if lazy else tangent_of)
    if all(t is None or (type(t) is list and all(x is None for x in t)) for t in tans):
        return
    if op.jvp is None:
        raise NotImplementedError(f"forward-mode AD is not implemented for {op.name}")
    if single and op.jvp_np is not None and all(_only_level(o, level, grad_on) for o in outs):
        if lazy:
            set_tangent(outs[0], level, defer(lvl, op, _datas(ins), tans, outs[0]._data, args))
            return
        r = op.jvp_np(*_datas(ins), *[None if t is None else (t._data if type(t) is Tensor else
                                      [None if x is None else x._data for x in t]) for t in tans],
                      *[o._data for o in outs], *args)
        if op.n_out == 1:
            r = None if r is None else wrap(r)
        else:
            r = tuple(None if x is None else wrap(x) for x in r)
    else:
        if lazy:  # deferred input tangents are needed now
            tans = [_forced_tangent(t) for t in tans]
        if single and op.jvp_kind == "auto_linear":
            # A linear op (views, mostly): its tangent is the op on the tangents. The formula reads
            # no primal, and tangents nothing differentiates record nothing on the tape.
            r = op.jvp(*ins, *tans, *outs, *args)
        else:
            r = _jvp_on_prims(op, ins, tans, outs, args, level, grad_on)
    _set_output_tangents(op, ins, tans, outs, (r,) if op.n_out == 1 else r, level)


def _input_tangents(op: Op, ins: list, level: int, grad_on: bool, read: Callable) -> tuple[list, bool]:
    """Per differentiable input its tangent at `level` (None, a tangent, or a list for a list
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
            t = read(v, level) if (v._fw is not None or v._st.dual) else None
            single = single and _only_level(v, level, grad_on) and _plain(t)
        else:
            t = [read(x, level) if (x._fw is not None or x._st.dual) else None for x in v]
            single = single and all(_only_level(x, level, grad_on) and _plain(y) for x, y in zip(v, t))
        tans.append(t)
    return tans, single


def _set_output_tangents(op: Op, ins: list, tans: list, outs: tuple, r: tuple, level: int) -> None:
    """Attach the formula's tangents r to the outputs, fitted, each its own memory (own_tensor)."""
    seen = None
    for o, t, d in zip(outs, r, op.out_diff):
        if d and t is not None:
            t = fit_tangent(t, o, op)
            if t is None:
                continue
            if o._base is None:  # not a view: its tangent must be its own (see own_array)
                if seen is None:
                    seen = _arrays_of(ins) + _arrays_of(tans) + [x._data for x in outs]
                t = own_tensor(t, seen)
                seen.append(t._data if type(t) is Tensor else values_of(t))
            set_tangent(o, level, t)


def _jvp_on_prims(op: Op, ins: list, tans: list, outs: tuple, args: tuple, level: int, grad_on: bool):
    """The Tensor formula over primals that carry only the outer levels' tangents (nesting);
    recorded on the tape when the level is tracked, else run without recording."""
    prims = [(_prim(v, level) if type(v) is Tensor else [_prim(x, level) for x in v])
             if op.diff[i] and v is not None else v for i, v in enumerate(ins)]
    if grad_on or not STATE.grad_enabled:
        return op.jvp(*prims, *tans, *outs, *args)
    with no_grad():
        return op.jvp(*prims, *tans, *outs, *args)


def _prim(v: Tensor, level: int) -> Tensor:
    """v seen from `level`: same tape identity, only the tangents of outer levels."""
    if (v._fw is None and not v._st.dual) or not levels_of(v):
        return v
    p = alias(v)
    below = tangents_below(v, level)
    if below:
        for lvl, t in below.items():
            set_tangent(p, lvl, t)
    return p


def fit_tangent(t, out: Tensor, op: Op):
    """Bring a formula's tangent to the output's shape and dtype (the one place that does).
    None for an integer or bool output: those never carry tangents (DESIGN rule 3), whatever
    the formula says (a cast's formula casts the tangent too). A batched tangent (batched dual
    level) is fitted by its logical shape."""
    od = out._data
    if od.dtype.kind not in FLOATING:
        return None
    if not isinstance(t, Tensor):
        t = wrap(np.asarray(t))
    shape, dtype = (t._data.shape, t._data.dtype) if type(t) is Tensor else (t.shape, t.dtype)
    if shape != od.shape:
        try:
            np.broadcast_shapes(shape, od.shape)
        except ValueError:
            raise OpError(f"{op.name}: forward formula produced a tangent of shape {tuple(shape)} for an output of "
                          f"shape {od.shape}") from None
        t = t.expand(od.shape).clone()
    if dtype != od.dtype:
        if dtype.kind == "c" and od.dtype.kind != "c":
            t = t.real
        if t.dtype != od.dtype:
            t = t.to(od.dtype)
    return t


# -- in-place ops: out-of-place result, then committed into the target -----------------------

def _is_plain_input(v) -> bool:
    return v is None or type(v) in _SCALAR_TYPES or (
        type(v) is Tensor and not v._ad)


def apply_inplace(op: Op, target, inputs: tuple, args: tuple):
    """`target.op_(...)`: compute op(inputs) out of place, then write it into target.

    Values, tape history and tangents are all updated in place, so views of target
    (and their tangents) see the change.
    """
    if type(target) is not Tensor:
        if has_batched((target,) + tuple(inputs)):
            return run_batched_inplace(op, target, inputs, args, apply_inplace)
        raise OpTypeError(f"{op.name}_: in-place target must be a Tensor, got {type(target).__name__}")
    if has_batched(inputs):
        return run_batched_inplace(op, target, inputs, args, apply_inplace)
    if (all(_is_plain_input(v) for v in inputs) and _is_plain_input(target)
            and (target._base is None or not target._base._requires_grad)):
        try:
            r = op.kernel(*[v._data if type(v) is Tensor else v for v in inputs], *args)
        except Exception as e:
            raise op_error(op, inputs, args, e) from None
        _write(op, target, r)
        return target
    st = STATE
    if st.grad_enabled:
        _check_inplace_allowed(op, target)
        if inputs[0] is target and _keeps_first(op, inputs, args):
            # The backward formula needs self's old value: keep it out of the write's way.
            inputs = (target.clone(),) + tuple(inputs[1:])
    r = dispatch(op, inputs, args)
    commit(op, target, r)
    return target


def _keeps_first(op: Op, inputs: tuple, args: tuple) -> bool:
    """Will the tape node of op(inputs) keep its first input's value (op.save)?"""
    ins = normalize(op, inputs)
    mask = 0
    bit = 1
    for v, d in zip(ins, op.diff):
        if d:
            if v is not None and any(x._requires_grad for x in ((v,) if type(v) is Tensor else v)):
                mask |= bit
            bit <<= 1
    if not mask:
        return False
    table = op.save if op.save_fn is None else op.save_fn(*ins, *args)
    return table[mask][0][0] == 2


def _check_inplace_allowed(op: Op, target: Tensor) -> None:
    root = target._base if target._base is not None else target
    if root._requires_grad and root._grad_fn is None:
        what = "a view of a leaf Variable" if target._base is not None else "a leaf Variable"
        raise OpError(f"{op.name}_: {what} that requires grad is being used in an in-place operation "
                      "(use torch-style `with pf.no_grad():` to modify it)")


def _write(op: Op, target: Tensor, r) -> None:
    """Write array r into target's memory (broadcast, same-kind cast) and bump the version."""
    td = target._data
    r = np.asarray(r)
    if r.shape != td.shape:
        try:
            shape = np.broadcast_shapes(r.shape, td.shape)
        except ValueError:
            shape = None
        if shape != td.shape:
            raise OpError(f"{op.name}_: output with shape {td.shape} doesn't match the broadcast shape "
                          f"{shape if shape is not None else r.shape} of its inputs")
    if r.dtype != td.dtype and not np.can_cast(r.dtype, td.dtype, casting="same_kind"):
        raise OpError(f"{op.name}_: result type {r.dtype} can't be cast to the desired output type {td.dtype}")
    if not td.flags.writeable:
        raise OpError(f"{op.name}_: the tensor's memory is read-only; clone() it first")
    if 0 in td.strides and td.size > 1 and any(s == 0 and n > 1 for s, n in zip(td.strides, td.shape)):
        raise OpError(f"{op.name}_: unsupported operation: more than one element of the written-to tensor refers "
                      "to a single memory location (an expanded view); clone() it first")
    if STATE.levels:
        flush()  # deferred tangents read their inputs' memory: compute them before it changes
    np.copyto(td, r, casting="unsafe")
    target._storage().version += 1


def commit(op: Op, target: Tensor, r: Tensor) -> None:
    """Write out-of-place result r into target: data, tape history, tangents."""
    _write(op, target, r._data)
    st = STATE
    if st.grad_enabled and (r._requires_grad or target._requires_grad
                            or (target._base is not None and target._base._requires_grad)):
        rebase_history(target, r)
        _views_follow(target)
    if target._data.dtype.kind not in FLOATING:
        return  # an integer or bool tensor never carries a tangent (DESIGN rule 3)
    levels = set(levels_of(r)) | set(levels_of(target))
    for level in sorted(levels):
        rt = tangent_of(r, level)
        tt = tangent_of(target, level)
        if tt is None:
            if rt is None:
                continue
            tt = _zero_tangent_for(target, level)
        if rt is None:
            tt.zero_()
        else:
            tt.copy_(rt)


def _views_follow(target: Tensor) -> None:
    """The root of `target` now requires grad (a differentiable write): its views made while it
    did not now require grad too, their grad_fn rebuilt from the root on next use (as torch)."""
    root = target._base if target._base is not None else target
    st = root._st
    if not root._requires_grad or st is _NO_STORAGE or not st.views:
        return
    refs, st.views = st.views, None
    for ref in refs:
        v = ref()
        if v is not None and not v._requires_grad:
            v._requires_grad = True
            v._ad = True
            v._view_version = -1  # stale: edge()/grad_fn replay the view from the root


def _zero_tangent_for(target: Tensor, level: int) -> Tensor:
    """DESIGN rule 5: writing a dual into a non-dual tensor gives its root a zero tangent first."""
    root = target._base
    masked = target._fw is not None and level in target._fw  # an unpacked primal: a lens of its own
    if root is None or masked:
        z = zero_tangent(target, level)
        set_tangent(target, level, z)
        return z
    set_tangent(root, level, zero_tangent(root, level))
    return tangent_of(target, level)
