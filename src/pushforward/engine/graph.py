"""Reverse mode: tape nodes and the engine that walks them.

A node is created per differentiable op call whose inputs require grad. It keeps the
inputs its backward formulas need (with their tangents, so backward formulas propagate
them: forward-over-reverse) and the edges to the inputs' own nodes. The engine walks the
graph iteratively in dependency order (no recursion), and gradients are brought back to
each input's shape and dtype in one place, `_fit_grad`.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from .accumulate import add as add_grads, dense, embed_or_none, exclusive
from .tangents import forced, levels_of, replay_view, set_tangent, tangent_of
from .grad_mode import enable_grad, set_grad_enabled
from .outputs import to_dtype
from .registry import OPS
from .state import STATE
from ..core.batched import BatchedTensor
from ..core.creation import zeros, zeros_like
from ..core.lazy import as_array, has_layout
from ..errors import OpError, OpRuntimeTypeError, SavedTensorModifiedError
from ..core.tensor import _NO_STORAGE, Tensor, add_saver, alias, note_value, join_storage, mark_ad, set_history, wrap

_seq = itertools.count()
_new = object.__new__
_ref = weakref.ref
_NO_RESULT = _NONE1 = (None,)  # e.g. the result argument of a formula whose node keeps no output
_NEEDS1, _NONE_NEEDED1 = (True,), (False,)


class _Meta:
    """What a backward formula may read of an input it does not need in full."""

    __slots__ = ("shape", "dtype", "ndim")

    def __init__(self, t) -> None:
        self.shape = t._data.shape
        self.dtype = t._data.dtype
        self.ndim = t._data.ndim

    def numel(self) -> int:
        return int(np.prod(self.shape))

    def dim(self) -> int:
        return self.ndim

    def size(self, d=None):
        return self.shape if d is None else self.shape[d]


class Node:
    """Base of tape nodes: edges to the next nodes, hooks, ordering."""

    __slots__ = ("next_edges", "pre_hooks", "seq", "__weakref__")

    def __init__(self) -> None:
        self.next_edges: list = []
        self.pre_hooks: dict | None = None
        self.seq = next(_seq)

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    def apply(self, grads: list) -> list:
        raise NotImplementedError(f"{type(self).__name__} does not implement apply()")

    def release(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{self.name()}>"


class OpNode(Node):
    """Backward of one call of a generated op."""

    # needs: per edge, does the input need a gradient (set by record's hot path for one or two
    # plain inputs; None: worked out from the edges, whose list may hold placeholders)
    __slots__ = ("op", "args", "saved", "versions", "metas", "result", "result_version", "released", "keep", "needs")

    def __init__(self, op, args: tuple) -> None:
        super().__init__()
        self.op = op
        self.args = args
        self.result = None
        self.released = False
        self.keep = None
        self.needs = None

    def name(self) -> str:
        return "".join(p.capitalize() for p in self.op.name.split("_")) + "Backward0"

    def save_result(self, outs: tuple) -> None:
        """Keep the outputs the backward formulas read (self.keep), without a reference cycle
        through grad_fn: per output, (array, storage, tangents) or None. `_results` makes the
        Tensors the formulas see. (A write into an output whose grad_fn is this node finds it so,
        engine/saved.py: only the others are noted on their storage.)"""
        if len(outs) == 1:  # the common case, unrolled
            out = outs[0]
            st = out._storage()  # shared with out: an in-place write into out bumps its version
            self.result = ((out._data, st, out._fw),)
            self.result_version = (st.version,)
            if out._grad_fn is not self:
                add_saver(out, _ref(self))
            return
        saved = [(out._data, out._storage(), out._fw) if k else None for out, k in zip(outs, self.keep)]
        self.result = saved
        self.result_version = [None if r is None else r[1].version for r in saved]
        for out, k in zip(outs, self.keep):
            if k and out._grad_fn is not self:  # (an integer output has no history to find this node by)
                add_saver(out, _ref(self))

    def _unpack(self, t, note: list):
        """The saved input t as it was saved (note: its core.tensor.note_value; a list per tensor for a
        list input): t, or the copy kept before a write changed it, or torch's error."""
        if t is None or note is None:
            return t
        if type(t) is list:
            return [self._unpack(x, v) for x, v in zip(t, note)]
        if t._st.version == note[0]:
            return t
        if len(note) > 1:
            return note[1]
        raise self._modified(f"input of shape {tuple(t.shape)} was saved", note[0], t._st.version)

    def _modified(self, what: str, saved: int, now: int) -> OpError:
        return SavedTensorModifiedError(
            f"one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{self.name()}] {what} at version {saved}, now at version {now}"
        )

    def keep_overwritten(self, st, data, version: int) -> bool:
        """`data`, on storage `st` at `version`, is about to be overwritten: each output this node
        saved on st at that version is replaced by a copy (snapshot) if the write may change it, else
        kept with its saved version moved past the write. Does the node still read st's memory?
        (Saved inputs are kept through their notes, engine/saved.py; docs/design.md, "Overwritten
        saved values".)"""
        if self.released or self.keep is None:
            return False
        live = False
        results, rversions = list(self.result), list(self.result_version)
        for k, (r, v) in enumerate(zip(results, rversions)):
            if r is not None and r[1] is st and v == version:
                if overlaps(r[0], data):
                    fw = r[2] and {lv: _copy(forced(t)) for lv, t in r[2].items()}
                    results[k], rversions[k] = (_copy_array(r[0]), _NO_STORAGE, fw), 0
                else:
                    rversions[k] = version + 1
                    live = True
        self.result, self.result_version = tuple(results), tuple(rversions)
        return live

    def _results(self) -> list:
        """The saved outputs the formulas read (None for the others), checked against in-place writes."""
        results = []
        grad_on = STATE.grad_enabled
        for k, (r, v) in enumerate(zip(self.result, self.result_version)):
            if r is None:
                results.append(None)
                continue
            data, st, fw = r
            if st.version != v:
                raise self._modified("its output was saved", v, st.version)
            res = _new(Tensor)
            res._data = data
            join_storage(res, st)
            if fw is not None:
                res._fw = fw
                mark_ad(res)
            if grad_on and self.op.out_diff[k] and data.dtype.kind in "fc":
                set_history(res, self, k)  # the saved output's history is this node
            results.append(res)
        return results

    def apply(self, grads: list) -> list:
        grad = grads[0]
        needs = self.needs
        if self.released or grad is None or needs is None or len(grads) > 1:
            return self._apply_rare(grads)
        if self.op.backward_np is not None and not STATE.grad_enabled and type(grad) is Tensor:
            gd = grad._data
            # nothing records the gradient: unless a tangent rides on it (forward-over-reverse) or
            # a batch (vmap), the formulas may run on arrays (Dask arrays lack ndarray's methods the
            # array form uses)
            if (type(gd) is np.ndarray or has_layout(gd)) and self._untangled(grad, STATE.levels):
                return self._apply_arrays(grad, gd, needs)
        return self._apply_formulas(grad, needs)  # the hot case: record's unrolled path, one output

    def _untangled(self, grad: Tensor, levels: list) -> bool:
        """Are the gradient and what the node keeps plain Tensors without tangents (at `levels`,
        the live ones)?"""
        for t in self.saved:
            if t is not None and type(t) is not Tensor and type(t) is not _Meta:
                return False
        if not levels:
            return True
        for t in (grad, *self.saved):
            if type(t) is Tensor and (
                t._fw is not None or t._vsrc is not None or (t._base is not None and t._base._fw is not None)
            ):
                return False
        return self.keep is None or all(r is None or r[2] is None for r in self.result)

    def _apply_arrays(self, grad: Tensor, gd: np.ndarray, needs) -> list:
        """The backward formulas over arrays (op.backward_np): nothing differentiates the gradient."""
        datas = []
        for t, v in zip(self.saved, self.versions):
            if v is not None and t._st.version != v[0]:
                t = self._unpack(t, v)
            datas.append(t._data if type(t) is Tensor else t)  # (metadata and None as they are)
        if self.keep is None:
            res = _NO_RESULT
        else:
            res = []
            for r, v in zip(self.result, self.result_version):
                if r is not None and r[1].version != v:
                    raise self._modified("its output was saved", v, r[1].version)
                res.append(None if r is None else r[0])
        if len(datas) == 1 and not self.args and res is _NO_RESULT:  # (no star call: the commonest node)
            raw = self.op.backward_np(gd, datas[0], None, needs)
        else:
            raw = self.op.backward_np(gd, *datas, *res, *self.args, needs)
        out = []
        for g, m, n in zip(raw, self.metas, needs):
            if g is None or not n:
                out.append(None)
            elif g is gd:
                out.append(grad if gd.shape == m[0] and gd.dtype == m[1] else _fit_grad(grad, m, self))
            elif type(g) is np.ndarray and g.shape == m[0] and g.dtype == m[1]:
                t = _new(Tensor)
                t._data = g
                out.append(t)
            else:
                out.append(_fit_grad(wrap(as_array(g)), m, self))  # (a Dask array stays lazy)
        return out

    def _apply_rare(self, grads: list) -> list:
        """apply() for a released node, several or no incoming gradients, or a general node."""
        if self.released:
            raise OpError(
                f"Trying to backward through the graph a second time (or directly access saved tensors after "
                f"they have already been freed) in {self.name()}. Specify retain_graph=True if you need to "
                "backward through the graph a second time or if you need to access saved tensors after "
                "calling backward."
            )
        grad = grads[0]
        if len(grads) > 1 and any(g is not None for g in grads[1:]):
            # formulas take one grad; no op has two differentiable outputs yet: never drop one silently
            raise NotImplementedError(
                f"{self.name()}: backward through more than one output of {self.op.name} is not implemented"
            )
        if grad is None:
            return [None] * len(self.next_edges)
        if self.needs is None:
            if (
                self.op.backward_np is not None
                and not STATE.grad_enabled
                and type(grad) is Tensor
                and has_layout(grad._data)  # (the array form uses ndarray's methods)
            ):
                if self._untangled(grad, STATE.levels):  # (as apply(): no list inputs, one output)
                    return self._apply_arrays(grad, grad._data, [e is not None for e in self.next_edges])
            return self._apply_general(grad)
        return self._apply_formulas(grad, self.needs)

    def _apply_formulas(self, grad, needs) -> list:
        """The backward formulas as Tensor ops (the hot case of apply())."""
        saved = self.saved
        if len(needs) == 1 and len(saved) == 1:  # one input: unrolled further
            t = saved[0]
            v = self.versions[0]
            if v is not None and t._st.version != v[0]:
                t = self._unpack(t, v)
            g = self.op.backward(grad, t, *(_NO_RESULT if self.keep is None else self._results()), *self.args, needs)[0]
            if g is None or not needs[0]:
                return _NONE1
            m = self.metas[0]
            if type(g) is not Tensor or g._data.shape != m[0] or g._data.dtype != m[1]:
                g = _fit_grad(g, m, self)
            return (g,)
        for t, v in zip(saved, self.versions):
            if v is not None and t._st.version != v[0]:
                saved = [self._unpack(x, w) for x, w in zip(saved, self.versions)]
                break
        raw = self.op.backward(grad, *saved, *(_NO_RESULT if self.keep is None else self._results()), *self.args, needs)
        out = []
        for g, m, n in zip(raw, self.metas, needs):
            if g is None or not n:
                out.append(None)
            elif type(g) is Tensor and g._data.shape == m[0] and g._data.dtype == m[1]:
                out.append(g)  # _fit_grad's common case, inlined
            else:
                out.append(_fit_grad(g, m, self))
        return out

    def _apply_general(self, grad) -> list:
        """apply() for nodes of ops with list or optional inputs or several outputs."""
        op = self.op
        saved = [self._unpack(t, v) for t, v in zip(self.saved, self.versions)]
        results = [None] * op.n_out if self.keep is None else self._results()
        needs = [e is not None for e in self.next_edges]
        metas = self.metas
        if "T[]" not in op.kinds:  # no list inputs: one edge per differentiable parameter
            raw = op.backward(grad, *saved, *results, *self.args, needs)
            return [None if g is None or not n else _fit_grad(g, m, self) for g, m, n in zip(raw, metas, needs)]
        raw = op.backward(grad, *saved, *results, *self.args, self.param_needs(needs))
        out = []
        for g, meta in zip(raw, metas):  # one entry per differentiable parameter; lists flattened
            if type(meta) is list:
                gs = g if g is not None else [None] * len(meta)
                for gi, mi in zip(gs, meta):
                    out.append(_fit_grad(gi, mi, self) if needs[len(out)] else None)
            else:
                out.append(_fit_grad(g, meta, self) if needs[len(out)] else None)
        return out

    def embed_grad(self, grads: list):
        """For a view op whose backward only places grad into its input (`op.grad_embeds`): the
        gradient as an accumulate.Embed, summed in place by the engine; None: run apply()."""
        grad = grads[0]
        if self.released or not self.op.grad_embeds or self.next_edges[0] is None:
            return None
        shape, dtype = self.metas[0]
        return embed_or_none(grad, shape, dtype, ((self.op.public, self.args),))

    def param_needs(self, needs: list) -> list:
        """Per differentiable parameter: does any of its tensors need a gradient?"""
        res = []
        k = 0
        for meta in self.metas:
            n = len(meta) if type(meta) is list else 1
            res.append(any(needs[k : k + n]))
            k += n
        return res

    def release(self) -> None:
        self.saved = self.versions = None  # (the notes of its saved values go: engine/saved.py)
        self.result = None
        self.released = True


def overlaps(saved, written) -> bool:
    """May a write into array `written` change an element of array `saved` (same storage)? Exact
    for NumPy arrays where that is cheap to decide, else True (a copy too many, never too few)."""
    if type(saved) is not np.ndarray or type(written) is not np.ndarray:
        return True
    try:
        return bool(np.shares_memory(saved, written, max_work=10_000))
    except np.exceptions.TooHardError:
        return True


def snapshot(t):
    """t's values copied now, differentiable as t is now: the same tape edge (so backward of
    backward and create_graph reach t's history) and copies of its tangents at the live levels
    (an in-place write updates those in place too; deferred ones are computed first). What a node
    keeps of a saved value an in-place write is about to change (docs/design.md, "Overwritten
    saved values").

    >>> import pushforward as pf
    >>> x = pf.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 2
    >>> c = snapshot(y); _ = y.add_(1.0)
    >>> c, c.grad_fn is not y.grad_fn
    (tensor([2., 4.], grad_fn=<MulBackward0>), True)
    """
    if type(t) is BatchedTensor:
        return BatchedTensor(snapshot(t._phys), t._blevel)
    c = _new(Tensor)
    c._data = _copy_array(t._data)
    if t._requires_grad:
        node, nr = _edge_of(t)
        if type(node) is AccumulateGrad:
            c._grad_acc = node
        else:
            c._grad_fn = node
            c._output_nr = nr
        c._requires_grad = True
        c._ad = True
    for lv in levels_of(t):
        tan = tangent_of(t, lv)
        if tan is not None:
            set_tangent(c, lv, snapshot(tan))
    return c


def _copy(t):
    """snapshot of a stored tangent (None stays None)."""
    return None if t is None else snapshot(t)


def _copy_array(d):
    """A copy of array d in its layout (a Dask array: its lazy copy)."""
    return np.array(d, order="K", subok=True) if isinstance(d, np.ndarray) else d.copy()


def _fit_grad(g, meta: tuple, who, index: int | None = None):
    """Sum a gradient back to its input's shape and cast it to the input's dtype (meta: (shape, dtype)).
    `who` is the node and `index` the input's position (named in errors)."""
    if g is None:
        return None
    if not isinstance(g, Tensor):
        g = wrap(np.asarray(g))
    shape, dt = meta
    gs = g._data.shape if type(g) is Tensor else g.shape  # a batched gradient: its logical shape
    if gs != shape:
        lead = len(gs) - len(shape)
        if lead < 0 or any(s != 1 and s != gs[lead + i] for i, s in enumerate(shape)):
            which = "input" if index is None else f"input {index}"
            raise OpError(f"{who.name()}: gradient of shape {gs} cannot be reduced to {which} shape {shape}")
        # leading dims summed away, the others kept: the result has the input's shape without a
        # reshape (whose view would cost the leaf a copy of its gradient, accumulate_into)
        if lead:
            g = g.sum(tuple(range(lead)))
        dims = tuple(i for i, s in enumerate(shape) if s == 1 and gs[lead + i] != 1)
        if dims:
            g = g.sum(dims, keepdim=True)
    return to_dtype(g, dt) if g.dtype != dt else g


class AccumulateGrad(Node):
    """Sink of a leaf tensor: adds incoming gradients into `.grad`.

    It holds its leaf weakly (the leaf holds it, and the graph holds it through its edges):
    a leaf is freed by reference counting as soon as the last user reference goes, even
    while a graph that used it is alive (its gradient then has nowhere to go). The lock
    makes accumulation atomic when several threads run backward into one leaf.
    """

    __slots__ = ("_ref", "lock")

    def __init__(self, variable) -> None:
        super().__init__()
        self._ref = weakref.ref(variable)
        self.lock = threading.Lock()

    @property
    def variable(self):
        """The leaf (None once it has been freed)."""
        return self._ref()

    def apply(self, grads: list) -> list:
        if grads[0] is None:
            return []
        v = self._ref()
        if v is not None:
            accumulate_into(v, grads, 0, self.lock)
        return []


def accumulate_into(v, lst: list, i: int, lock) -> None:
    """v.grad += lst[i], atomically under `lock`, into memory nobody else holds: the gradient
    itself when the engine made it and nothing else references it, else a copy (a clone under
    create_graph, so the copy stays differentiable); a second gradient is summed out of place."""
    with lock:
        old = v.grad
        if old is None:
            # (without create_graph grad mode is off here, so the clone and the sum record nothing)
            v.grad = lst[i] if not STATE.grad_enabled and exclusive(lst, i) else lst[i].clone()
        else:
            g = lst[i]
            if not isinstance(old, Tensor) or old._data.shape != g._data.shape or old._data.dtype != g._data.dtype:
                what = (
                    f"shape {tuple(old._data.shape)} and dtype {old._data.dtype}"
                    if isinstance(old, Tensor)
                    else f"type {type(old).__name__}"
                )
                raise OpError(
                    f"cannot accumulate a gradient of shape {tuple(g._data.shape)} and dtype "
                    f"{g._data.dtype} into .grad, which has {what} (was .grad assigned by hand?)"
                )
            v.grad = old + g


def tape_free(g):
    """g without tape history but with its tangents (a gradient returned without create_graph)."""
    if not g._requires_grad:
        return g
    out = object.__new__(Tensor)
    out._data = g._data
    join_storage(out, g._storage())
    copy_tangents(g, out)
    return out


def copy_tangents(src, dst) -> None:
    """Give dst src's tangents at the live levels: its own as stored (a deferred one stays deferred),
    or, for a view made without one, the view of its holder's (docs/design.md, "Lazy view tangents")."""
    if src._vsrc is not None:
        for lv in levels_of(src):
            set_tangent(dst, lv, tangent_of(src, lv))
    elif src._fw:
        live = STATE.by_uid
        for lv, t in src._fw.items():
            if t is not None and lv in live:
                set_tangent(dst, lv, t)


_ACC_LOCK = threading.Lock()


def grad_accumulator(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (created once, shared by aliases; thread-safe)."""
    acc = t._grad_acc
    if acc is None:
        with _ACC_LOCK:  # two threads must not give one leaf two accumulators (and two locks)
            acc = t._grad_acc
            if acc is None:
                acc = t._grad_acc = AccumulateGrad(t)
    return acc


def edge(t):
    """(node, output_nr) through which gradient reaches t, or None."""
    return _edge_of(t) if t._requires_grad else None


def _edge_of(t):
    """edge(t) for a tensor known to require grad."""
    if t._base is not None and t._view_version != t._st.version:
        refresh_view(t)
    gf = t._grad_fn
    if gf is not None:
        return gf, t._output_nr
    acc = t._grad_acc  # (grad_accumulator's first test, inline: a leaf's alias already has it)
    return (acc if acc is not None else grad_accumulator(t)), 0


def record_plain(op, ins, args: tuple, out, needs=_NEEDS1) -> OpNode:
    """record() for one or two plain Tensor inputs and one output (an element-wise chain's tape):
    save_entry's mask, _saved_input's rule, _edge_of's commonest case and set_history unrolled (a
    loop costs these calls a third more). `needs` as record's (one input: it requires grad)."""
    node = _new(OpNode)
    # (two or three targets at once compile to stack swaps: no tuple is built)
    node.seq, node.pre_hooks, node.op = next(_seq), None, op
    node.args, node.released = args, False
    save = op.save if op.save_fn is None else op.save_fn(*ins, *args)
    if len(ins) == 1:
        x = ins[0]
        (m,), node.keep = save[1]  # (the one parameter needs grad)
        d = x._data
        if m != 2:
            s = _Meta(x) if m else None
            node.versions = _NONE1
        else:  # (_kept's first test, inline)
            s = x if x._base is None or (type(d) is np.ndarray and 0 not in d.strides) else _kept(x)
            # (note_value's cases of a fresh tensor, on the placeholder storage, inline)
            k = s._saved_at if s._st is _NO_STORAGE else note_value(s)
            if k is None:
                k = s._saved_at = [0]
            node.versions = (k,)
        if x._base is None or x._view_version == x._st.version:  # (_edge_of's, inline)
            gf = x._grad_fn
            if gf is not None:
                e = (gf, x._output_nr)
            else:
                acc = x._grad_acc  # (a leaf's: the accumulator, made once)
                e = (acc, 0) if acc is not None else _edge_of(x)
        else:
            e = _edge_of(x)
        node.saved, node.metas = (s,), ((d.shape, d.dtype),)
        node.next_edges, node.needs = (e,), _NEEDS1
    else:
        x, y = ins
        dx, dy = op.diff
        (m, n), node.keep = save[(needs[0] + 2 * needs[1]) if dx and dy else int(needs[0])]
        if m == 2:  # (the notes: note_value's cases of a fresh tensor inline, as above)
            sx = _kept(x) if x._base is not None else x
            kx = sx._saved_at if sx._st is _NO_STORAGE else note_value(sx)
            if kx is None:
                kx = sx._saved_at = [0]
        else:
            sx, kx = (_Meta(x) if m else None), None
        if n == 2:
            sy = _kept(y) if y._base is not None else y
            ky = sy._saved_at if sy._st is _NO_STORAGE else note_value(sy)
            if ky is None:
                ky = sy._saved_at = [0]
        else:
            sy, ky = (_Meta(y) if n else None), None
        node.saved, node.versions = (sx, sy), (kx, ky)
        if dx and dy:
            d, d2 = x._data, y._data
            node.metas = ((d.shape, d.dtype), (d2.shape, d2.dtype))
            # (a True in needs means that input requires grad)
            gx = x._grad_fn if x._base is None else None  # (_edge_of's commonest case, inline)
            gy = y._grad_fn if y._base is None else None
            node.next_edges = (
                ((gx, x._output_nr) if gx is not None else _edge_of(x)) if needs[0] else None,
                ((gy, y._output_nr) if gy is not None else _edge_of(y)) if needs[1] else None,
            )
            node.needs = (needs[0], needs[1])
        else:
            z = x if dx else y
            node.metas = ((z._data.shape, z._data.dtype),)
            node.next_edges = ((e := edge(z)),)
            node.needs = _NEEDS1 if e is not None else _NONE_NEEDED1
    if out._data.dtype.kind in "fc":  # (set_history, inline)
        out._requires_grad = True
        out._grad_fn = node
        out._output_nr = 0
        out._ad = True
    return node


def record(op, ins, args: tuple, outs: tuple, needs: list) -> OpNode:
    """Create the tape node of one op call and make it the outputs' grad_fn. `needs`: per
    differentiable input tensor (lists flattened, absent optional inputs left out), does it
    require grad. (One or two plain inputs: record_plain, the same rules unrolled.)"""
    if op.simple and len(ins) <= 2:
        return record_plain(op, ins, args, outs[0], needs)
    node = OpNode(op, args)
    # what the backward formulas that will run read (op.save, indexed by which params need grad)
    modes, node.keep = save_entry(op, ins, args, needs)
    saved, versions, edges, metas = [], [], [], []
    k = 0
    for v, mode, d in zip(ins, modes, op.diff):
        if v is None or mode == 0:
            s = ver = None
        elif type(v) is Tensor:
            s, ver = _saved_input(v, mode)
        else:  # a list input: per tensor
            pairs = [_saved_input(x, mode) for x in v]
            s, ver = [p[0] for p in pairs], (None if mode == 1 else [p[1] for p in pairs])
        saved.append(s)
        versions.append(ver)
        if not d:
            continue
        if v is None:  # an optional input not given: a placeholder edge (`needs` has no entry for it)
            metas.append(None)
            edges.append(None)
        elif type(v) is Tensor:
            metas.append((v._data.shape, v._data.dtype))
            edges.append(_edge_of(v) if needs[k] else None)
            k += 1
        else:
            metas.append([(x._data.shape, x._data.dtype) for x in v])
            for x in v:
                edges.append(_edge_of(x) if needs[k] else None)
                k += 1
    node.saved, node.versions, node.next_edges, node.metas = saved, versions, edges, metas
    node.needs = tuple(needs) if op.simple else None  # (apply's fast path: plain inputs, one output)
    for i, o in enumerate(outs):
        if op.out_diff[i] and o._data.dtype.kind in "fc":
            set_history(o, node, i)
    return node


def save_entry(op, ins, args: tuple, needs) -> tuple:
    """The entry of op's save table for this call: (per tensor input what the node keeps: 0
    nothing, 1 metadata, 2 the value; per output the same, or None). The table is indexed by the
    mask whose bit i says differentiable parameter i needs grad (any of its tensors, for a list);
    `needs` as record takes it."""
    mask = k = 0
    bit = 1
    for v, d in zip(ins, op.diff):
        if d:
            n = 0 if v is None else (1 if type(v) is Tensor else len(v))
            if True in needs[k : k + n]:
                mask |= bit
            k += n
            bit <<= 1
    return (op.save if op.save_fn is None else op.save_fn(*ins, *args))[mask]


def _saved_input(x: Tensor, mode: int) -> tuple:
    """(what a node keeps of input x, the note of its value, core.tensor.note_value): for mode 2
    its value (_kept), for 1 its metadata, for 0 nothing."""
    if mode == 2:
        s = _kept(x) if x._base is not None else x
        return s, note_value(s)
    return (_Meta(x) if mode else None), None


def _kept(x: Tensor) -> Tensor:
    """The tensor a node keeps for an input that is a view: the view itself, unless it is a broadcast
    (expanded) view, whose values are then kept in memory of their own (a differentiable copy), so that
    a later in-place write into its base does not make the gradient uncomputable. torch keeps such
    operands the same way where its kernels copy them (matmul reshapes them for bmm)."""
    d = x._data
    if isinstance(d, np.ndarray) and 0 in d.strides and any(st == 0 and n > 1 for st, n in zip(d.strides, d.shape)):
        return x.contiguous()
    return x


# -- views and in-place -------------------------------------------------------------------------


def refresh_view(t) -> None:
    """After an in-place write through the view's root, rebuild the view's grad_fn from the root."""
    base = t._base
    if t._view_version == t._st.version or not base._requires_grad:
        return
    t._view_version = t._st.version
    with enable_grad():
        v = replay_view(alias(base), t._view)
    if v._requires_grad:
        set_history(t, v._grad_fn, v._output_nr)


def scatter_history(base, steps: tuple, r) -> None:
    """The region of root `base` that the view chain `steps` selects now holds r (the data is
    written already): base's new value is view_scatter(old base, r), that node its history."""
    old = alias(base) if base._requires_grad else base
    holder = _new(Tensor)
    holder._data = base._data
    node = record(OPS._VIEW_SCATTER, (old, r), (steps,), (holder,), [base._requires_grad, r._requires_grad])
    set_history(base, node)


def rebase_history(target, r) -> None:
    """target's memory now holds r: make target's (or its root's) history go through r."""
    base = target._base
    if base is None:
        if r._requires_grad:
            set_history(target, r._grad_fn, r._output_nr)
        else:
            target._requires_grad = False
            target._grad_fn = None
            target._output_nr = r._output_nr
        return
    scatter_history(base, tuple(target._view), r)
    target._view_version = -1  # force refresh_view on next use
    refresh_view(target)


# -- hooks ---------------------------------------------------------------------------------------


class RemovableHandle:
    def __init__(self, hooks: list, fn: Callable) -> None:
        self._ref = hooks
        self._fn = fn

    def remove(self) -> None:
        if self._fn in self._ref:
            self._ref.remove(self._fn)


def register_hook(t, hook: Callable) -> RemovableHandle:
    """Call hook(grad) when t's gradient is computed; a non-None return replaces it."""
    if not t._requires_grad:
        raise OpError("cannot register a hook on a tensor that doesn't require gradient")
    node, nr = edge(t)
    if node.pre_hooks is None:
        node.pre_hooks = {}
    hooks = node.pre_hooks.setdefault(nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


_RETAIN_LOCK = threading.Lock()


def retain_grad(t) -> None:
    """Keep the gradient of a non-leaf in `.grad` after backward."""
    if not t._requires_grad:
        raise OpError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None or t._retains_grad:
        return
    ref = weakref.ref(t)

    def keep(g):
        x = ref()
        if x is not None:  # a copy: the gradient flows on to other nodes
            accumulate_into(x, [g], 0, _RETAIN_LOCK)
        return None

    t._retains_grad = True
    register_hook(t, keep)


# -- the engine -----------------------------------------------------------------------------------


def _collect(roots: list) -> dict:
    """Dependency counts of every node reachable from the roots (iterative DFS): the number of
    edges into each node, each node's own edges counted once however often it is a root."""
    deps: dict = {}
    get = deps.get
    rootset = set(roots)
    stack = list(rootset)
    while stack:
        for e in stack.pop().next_edges:
            if e is not None:
                m = e[0]
                c = get(m)
                if c is None:
                    deps[m] = 1
                    if m not in rootset:  # a root is on the stack already
                        stack.append(m)
                else:
                    deps[m] = c + 1
    return deps


def _needed(roots: list, targets: set, deps: dict) -> set:
    """Nodes that must run for autograd.grad: those with a target node below them (a target's own
    gradient is captured before it would run, so it runs only if another target lies below it).
    `deps`: _collect's counts, from which an order with every node before the nodes below it is
    read (Kahn's); walked backwards, each node's children are decided before it."""
    left = dict(deps)
    order = []
    ready = [n for n in roots if n not in left]
    while ready:
        n = ready.pop()
        order.append(n)
        for e in n.next_edges:
            if e is not None:
                m = e[0]
                c = left[m] - 1
                left[m] = c
                if not c:
                    ready.append(m)
    needed = set()
    for n in reversed(order):
        for e in n.next_edges:
            if e is not None and (e[0] in needed or e[0] in targets):
                needed.add(n)
                break
    return needed


def run_backward(
    outputs: Sequence,
    grad_outputs: Sequence,
    *,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence | None = None,
    accumulate: bool = True,
    allow_unused: bool = False,
):
    """Propagate grad_outputs from outputs; accumulate into leaves or return grads of `inputs`.

    Outputs may repeat or share a node (several outputs of one op): their gradients are summed
    into the node's input buffer before it runs, once. A node's input buffer is a list indexed by
    output number, holding Tensors, or (without create_graph) accumulate.Embed / Acc entries."""
    roots = []  # distinct root nodes, in order
    buffers: dict = {}
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        e = edge(o)
        if e is None:
            raise OpError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        node, nr = e
        if node not in buffers:
            buffers[node] = []
            roots.append(node)
        buf = buffers[node]
        buf.extend([None] * (nr + 1 - len(buf)))
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    capture = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            e = edge(t)
            if e is not None:
                capture.setdefault(e, []).append(i)
    deps = _collect(roots)
    targets = {e[0] for e in capture}  # (nodes whose incoming gradients autograd.grad returns)
    needed = _needed(roots, targets, deps) if (inputs is not None and not accumulate) else None
    results = [None] * (len(inputs) if inputs is not None else 0)
    heap = [(-n.seq, id(n), n) for n in roots if n not in deps]
    heapq.heapify(heap)
    with set_grad_enabled(create_graph):
        _drain(heap, buffers, deps, capture, targets, results, needed, retain_graph, create_graph, accumulate)
    if inputs is not None and not accumulate:
        for i, t in enumerate(inputs):
            if results[i] is None and _reached(t, deps, roots):
                # on the graph, but only symbolic zeros reached it (a value copy_ overwrote): zeros, as torch
                results[i] = _zeros_as(tuple(t.shape), t.dtype, grad_outputs[0])
    if inputs is not None and not allow_unused and not accumulate:
        for i, r in enumerate(results):
            if r is None:
                raise OpError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
    return results


def _zeros_as(shape: tuple, dtype, like) -> Tensor:
    """Zeros of `shape`, batched as the cotangent `like` is (vector-mode vjp batches them)."""
    if type(like) is BatchedTensor:
        return BatchedTensor(_zeros_as((like._phys.shape[0],) + shape, dtype, like._phys), like._blevel)
    return zeros(shape, dtype=dtype)


def _reached(t, deps: dict, roots) -> bool:
    e = edge(t)
    return e is not None and (e[0] in deps or e[0] in roots)


def _drain(
    heap: list,
    buffers: dict,
    deps: dict,
    capture: dict,
    targets: set,
    results: list,
    needed,
    retain_graph: bool,
    create_graph: bool,
    accumulate: bool,
) -> None:
    """The engine's loop: run ready nodes, latest first, and hand their gradients to the next nodes'
    buffers. The engine holds a gradient only in its buffer list while a node runs, so AccumulateGrad
    and accumulate.add can tell whether anything else references it (accumulate.exclusive); hence
    the `= None`s."""
    pop, push, take = heapq.heappop, heapq.heappush, buffers.pop
    gated = needed is not None or not accumulate  # else every node reached runs
    nxt = None  # the next node, when it is the only ready one (a chain): no trip through the heap
    while nxt is not None or heap:
        if nxt is None:
            node = pop(heap)[2]
        else:
            node = nxt
        grads = take(node, None)
        if grads is None:
            grads = [None]
        elif len(grads) == 1:
            if type(grads[0]) not in _DENSE:
                grads[0] = dense(grads[0])
        else:
            for k in range(len(grads)):
                if type(grads[k]) not in _DENSE:
                    grads[k] = dense(grads[k])
        if node.pre_hooks or node in targets:
            _incoming(node, grads, capture, results)
        if gated and not ((needed is None or node in needed) and (accumulate or type(node) is not AccumulateGrad)):
            outs = _NONE1 * len(node.next_edges)
        else:
            outs = None
            if grads[0] is None and len(grads) == 1 and type(node) is OpNode:
                # only a symbolic zero came in (copy_'s old value): nothing to pull back, and a formula
                # must not multiply a materialised zero by a derivative that is inf or NaN there (a
                # leaf on the way gets zeros, as in torch)
                outs = tuple(
                    zeros_like(e[0].variable) if accumulate and e is not None and type(e[0]) is AccumulateGrad else None
                    for e in node.next_edges
                )
            elif not create_graph and type(node) is OpNode and node.op.grad_embeds:
                # without create_graph a view's gradient may stay sparse (accumulate.py)
                outs = node.embed_grad(grads)
                outs = None if outs is None else (outs,)
            if outs is None:
                outs = node.apply(grads)
            if not retain_graph:
                node.release()
        grads = None
        nxt = _deliver(node, outs, buffers, deps, create_graph)
        outs = None
        if nxt is not None and (heap or type(nxt) is list):  # several are ready: the heap orders them
            for m in nxt if type(nxt) is list else (nxt,):
                push(heap, (-m.seq, id(m), m))
            nxt = None


def _deliver(node, outs, buffers: dict, deps: dict, create_graph: bool):
    """Hand a node's input gradients to the buffers of the nodes they go to; the node that became
    ready (every gradient in), a list when several did, or None."""
    ready = None
    edges = node.next_edges
    for i in range(len(edges)):
        e = edges[i]
        if e is None:
            continue
        m, k = e
        if outs[i] is not None:
            b = buffers.get(m)
            if b is None:
                buffers[m] = [outs[i]] if k == 0 else [None] * k + [outs[i]]
            else:
                if k >= len(b):
                    b.extend([None] * (k + 1 - len(b)))
                if b[k] is None:
                    b[k] = outs[i]
                elif create_graph:
                    b[k] = b[k] + outs[i]
                else:
                    b[k] = add_grads(b, k, outs[i])  # in place when the engine owns b[k]
            b = None  # (accumulate.exclusive counts references)
        d = deps[m] - 1
        deps[m] = d
        if not d:
            ready = m if ready is None else ([ready, m] if type(ready) is not list else ready + [m])
    return ready


_DENSE = (Tensor, type(None))


def _incoming(node, grads: list, capture: dict, results: list) -> None:
    """Before a node runs: its pre-hooks on its incoming gradients, then the gradients autograd.grad
    returns (`capture`: (node, output_nr) -> indices into `results`)."""
    if node.pre_hooks:
        _run_hooks(node, grads)
    if capture:
        for k in range(len(grads)):
            for i in capture.get((node, k), ()):
                results[i] = grads[k]


def _run_hooks(node, grads: list) -> None:
    """The node's pre-hooks on its incoming gradients (a non-None result replaces the gradient)."""
    for k, hooks in node.pre_hooks.items():
        for h in list(hooks):
            if k < len(grads) and grads[k] is not None:
                new = h(grads[k])
                if new is not None:
                    _check_hook_result(h, grads[k], new, node, k)
                    grads[k] = new
                new = None


def _check_hook_result(hook, old, new, node, k: int) -> None:
    """A hook may replace a gradient only by one of the same shape and dtype (else the engine would
    broadcast or cast it into a wrong gradient without a word)."""
    name = getattr(hook, "__name__", type(hook).__name__)
    where = f"the gradient of output {k} of {node.name()}"
    if not isinstance(new, Tensor):
        raise OpError(f"hook '{name}' on {where} returned a {type(new).__name__}; expected a Tensor or None")
    if new.shape != old.shape:
        raise OpError(
            f"hook '{name}' has changed the shape of {where} (was {tuple(old.shape)}, got {tuple(new.shape)})"
        )
    if new.dtype != old.dtype:
        raise OpError(f"hook '{name}' has changed the dtype of {where} (was {old.dtype}, got {new.dtype})")


def _grad_outputs(outputs: Sequence, grad_outputs, who: str) -> list:
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    grad_outputs = list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise OpError(f"{who}: got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    res = []
    for o, g in zip(outputs, grad_outputs):
        if g is None:
            if o._data.size != 1:
                raise OpError(
                    f"{who}: grad can be implicitly created only for scalar outputs "
                    f"(got an output of shape {tuple(o._data.shape)}); pass `gradient`/`grad_outputs`"
                )
            if o._data.dtype.kind == "c":
                raise OpRuntimeTypeError(
                    f"{who}: grad can be implicitly created only for real scalar outputs (got a complex "
                    "output); differentiate its real part or abs(), or pass `gradient`/`grad_outputs`"
                )
            # (one element: its layout is moot; ones_like: a lazy output's seed is lazy too, or every
            # cotangent from it would be a NumPy array of its input's full size)
            g = wrap(np.ones_like(o._data))
        elif not isinstance(g, Tensor):
            g = wrap(np.asarray(g, dtype=o._data.dtype))
        # (shape and dtype, not the array: a batched cotangent, vmap over a vjp, is checked logically)
        if g.shape != o._data.shape:
            raise OpError(
                f"{who}: Mismatch in shape: grad_output has a shape of {tuple(g.shape)} and "
                f"output has a shape of {tuple(o._data.shape)}"
            )
        if (g.dtype.kind == "c") != (o._data.dtype.kind == "c"):  # torch's rule; a cast would drop a part
            raise OpError(
                f"{who}: For complex Tensors, both grad_output and output are required to have the same "
                f"dtype. Mismatch in dtype: grad_output[{len(res)}] has a dtype of {g.dtype} and "
                f"output[{len(res)}] has a dtype of {o._data.dtype}"
            )
        res.append(g)
    return res


def backward(tensor, gradient=None, *, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Accumulate d(tensor)/d(leaf) into every leaf's .grad (see Tensor.backward)."""
    outs = list(tensor) if isinstance(tensor, (list, tuple)) else [tensor]
    grads = gradient if isinstance(gradient, (list, tuple)) else ([gradient] if gradient is not None else None)
    gs = _grad_outputs(outs, grads, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, Tensor) else list(dict.fromkeys(inputs))  # each accumulates once
        if not inputs:
            raise OpError("backward: the `inputs` argument cannot be empty")
        for i, t in enumerate(inputs):
            if not t._requires_grad:
                raise OpError(f"backward: inputs[{i}] (shape {tuple(t._data.shape)}) does not require grad")
        res = run_backward(
            outs,
            gs,
            retain_graph=retain_graph,
            create_graph=create_graph,
            inputs=inputs,
            accumulate=False,
            allow_unused=True,
        )
        with set_grad_enabled(create_graph):
            for i, t in enumerate(inputs):
                if res[i] is not None:
                    lock = _RETAIN_LOCK if t.grad_fn is not None else grad_accumulator(t).lock
                    accumulate_into(t, res, i, lock)
        return
    run_backward(outs, gs, retain_graph=retain_graph, create_graph=create_graph)


def autograd_backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """torch.autograd.backward: accumulate the gradients of `tensors` (weighted by `grad_tensors`)
    into the leaves' `.grad`; a tensor listed twice counts twice.

    >>> import pushforward as pf
    >>> x = pf.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 3
    >>> pf.autograd.backward([y, y], [pf.ones(2), pf.ones(2)]); x.grad
    tensor([6., 6.])
    """
    backward(tensors, grad_tensors, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """Gradients of outputs with respect to inputs, returned (not accumulated), as torch.autograd.grad."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched=True is not implemented (no vmap)")
    single_out = isinstance(outputs, Tensor)
    outs = [outputs] if single_out else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not ins:
        raise OpError("grad: the `inputs` argument cannot be empty")
    for i, t in enumerate(ins):
        if not t._requires_grad:
            raise OpError(f"grad: input {i} does not require grad")
    gs = _grad_outputs(outs, [grad_outputs] if isinstance(grad_outputs, Tensor) else grad_outputs, "grad")
    if retain_graph is None:
        retain_graph = create_graph
    res = run_backward(
        outs,
        gs,
        retain_graph=retain_graph,
        create_graph=create_graph,
        inputs=ins,
        accumulate=False,
        allow_unused=allow_unused or materialize_grads,
    )
    out = []
    for t, g in zip(ins, res):
        if g is None and materialize_grads:
            g = zeros_like(t)
        elif g is not None and not create_graph:
            g = tape_free(g)
        out.append(g)
    return tuple(out)
