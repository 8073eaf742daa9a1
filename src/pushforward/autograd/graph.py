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
import weakref
from typing import Callable, Sequence

import numpy as np

from .accumulate import add as add_grads, dense, embed_or_none
from .forward_ad import replay_view, set_tangent
from .grad_mode import enable_grad, set_grad_enabled
from .state import STATE
from ..errors import OpError
from ..tensor import Tensor, alias, wrap

_seq = itertools.count()
_new = object.__new__


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

    __slots__ = ("op", "args", "saved", "versions", "metas", "result", "result_version", "released", "keep")

    def __init__(self, op, args: tuple) -> None:
        super().__init__()
        self.op = op
        self.args = args
        self.result = None
        self.released = False
        self.keep = None

    def name(self) -> str:
        return "".join(p.capitalize() for p in self.op.name.split("_")) + "Backward0"

    def save_result(self, outs: tuple) -> None:
        """Keep the outputs the backward formulas read (self.keep), without a reference cycle
        through grad_fn."""
        saved = []
        for out, k in zip(outs, self.keep):
            if not k:
                saved.append(None)
                continue
            r = _new(Tensor)
            r._data = out._data
            r._st = out._storage()
            r._fw = out._fw
            saved.append(r)
        self.result = saved
        self.result_version = [None if r is None else r._st.version for r in saved]

    def _unpack(self, t, version: int):
        if t is None or version is None:
            return t
        if type(t) is list:
            return [self._unpack(x, v) for x, v in zip(t, version)]
        if t._st.version != version:
            raise OpError(
                f"one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{self.name()}] input of shape {tuple(t._data.shape)} was saved at version "
                f"{version}, now at version {t._st.version}"
            )
        return t

    def apply(self, grads: list) -> list:
        if self.released:
            raise OpError(
                f"Trying to backward through the graph a second time (or directly access saved tensors after "
                f"they have already been freed) in {self.name()}. Specify retain_graph=True if you need to "
                "backward through the graph a second time or if you need to access saved tensors after "
                "calling backward."
            )
        grad = grads[0]
        if grad is None:
            return [None] * len(self.next_edges)
        op = self.op
        saved = [self._unpack(t, v) for t, v in zip(self.saved, self.versions)]
        results = [None] * op.n_out
        if self.keep is not None:
            results = []
            for k, (r, v) in enumerate(zip(self.result, self.result_version)):
                if r is None:
                    results.append(None)
                    continue
                if r._st.version != v:
                    raise OpError(
                        f"one of the variables needed for gradient computation has been modified by an inplace "
                        f"operation: [{self.name()}] its output was saved at version {v}, now at version "
                        f"{r._st.version}"
                    )
                res = _new(Tensor)
                res._data = r._data
                res._st = r._st
                res._fw = r._fw
                if STATE.grad_enabled and op.out_diff[k] and r._data.dtype.kind in "fc":
                    res._requires_grad = True  # the saved output's history is this node
                    res._grad_fn = self
                    res._output_nr = k
                results.append(res)
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
            res.append(any(needs[k:k + n]))
            k += n
        return res

    def release(self) -> None:
        self.saved = None
        self.result = None
        self.released = True


def _fit_grad(g, meta: tuple, who):
    """Sum a gradient back to its input's shape and cast it to the input's dtype (meta: (shape, dtype)).
    `who` is the node (named in errors)."""
    if g is None:
        return None
    if type(g) is not Tensor:
        g = wrap(np.asarray(g))
    shape, dt = meta
    gs = g._data.shape
    if gs != shape:
        lead = len(gs) - len(shape)
        if lead < 0 or any(s != 1 and s != gs[lead + i] for i, s in enumerate(shape)):
            raise OpError(f"{who.name()}: gradient of shape {gs} cannot be reduced to input shape {shape}")
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and gs[lead + i] != 1)
        if dims:
            g = g.sum(dims, keepdim=True)
        g = g.reshape(shape)
    if g._data.dtype != dt:
        if g._data.dtype.kind == "c" and dt.kind != "c":
            g = g.real
        if g._data.dtype != dt:
            g = g.to(dt)
    return g


class AccumulateGrad(Node):
    """Sink of a leaf tensor: adds incoming gradients into `.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        super().__init__()
        self.variable = variable

    def apply(self, grads: list) -> list:
        g = grads[0]
        if g is None:
            return []
        v = self.variable
        if not STATE.grad_enabled:
            g = tape_free(g)
        v.grad = g if v.grad is None else v.grad + g
        return []


def tape_free(g):
    """g without tape history but with its tangents (a gradient returned without create_graph)."""
    if not g._requires_grad:
        return g
    out = object.__new__(Tensor)
    out._data = g._data
    out._st = g._storage()
    if g._fw:
        for lv, t in g._fw.items():
            if t is not None:
                set_tangent(out, lv, t)
    return out


def grad_accumulator(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (created once, shared by aliases)."""
    acc = t._grad_acc
    if acc is None:
        acc = t._grad_acc = AccumulateGrad(t)
    return acc


def edge(t):
    """(node, output_nr) through which gradient reaches t, or None."""
    if not t._requires_grad:
        return None
    if t._base is not None and t._view_version != t._st.version:
        refresh_view(t)
    gf = t._grad_fn
    if gf is not None:
        return (gf, t._output_nr)
    return (grad_accumulator(t), 0)


def record(op, ins, args: tuple, outs: tuple, needs: list) -> OpNode:
    """Create the tape node of one op call and make it the outputs' grad_fn."""
    node = _new(OpNode)
    node.seq = next(_seq)
    node.pre_hooks = None
    node.op = op
    node.args = args
    node.released = False
    # what the backward formulas that will run read (op.save, indexed by which params need grad)
    save = op.save if op.save_fn is None else op.save_fn(*ins, *args)
    if op.simple and len(ins) <= 2:  # the hot case, unrolled: one or two plain Tensor inputs
        x = ins[0]
        if len(ins) == 1:
            modes, node.keep = save[1]
            m = modes[0]
            node.saved = (x if m == 2 else (_Meta(x) if m else None),)
            node.versions = (x._st.version if m == 2 else None,)
            node.metas = ((x._data.shape, x._data.dtype),)
            node.next_edges = (edge(x),)
        else:
            y = ins[1]
            dx, dy = op.diff
            (m, n), node.keep = save[(needs[0] + 2 * needs[1]) if dx and dy else int(needs[0])]
            node.saved = (x if m == 2 else (_Meta(x) if m else None), y if n == 2 else (_Meta(y) if n else None))
            node.versions = (x._st.version if m == 2 else None, y._st.version if n == 2 else None)
            if dx and dy:
                node.metas = ((x._data.shape, x._data.dtype), (y._data.shape, y._data.dtype))
                node.next_edges = (edge(x) if needs[0] else None, edge(y) if needs[1] else None)
            else:
                z = x if dx else y
                node.metas = ((z._data.shape, z._data.dtype),)
                node.next_edges = (edge(z),)
        o = outs[0]
        if o._data.dtype.kind in "fc":
            o._requires_grad = True
            o._grad_fn = node
        return node
    _record_general(node, op, ins, needs, save)
    for i, o in enumerate(outs):
        if op.out_diff[i] and o._data.dtype.kind in "fc":
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = i
    return node


def _record_general(node: OpNode, op, ins, needs: list, save: tuple) -> None:
    """record() for ops with optional or list inputs: flatten lists into one edge per tensor."""
    saved, versions, edges, metas = [], [], [], []
    mask = 0  # bit i: differentiable parameter i needs grad (any of its tensors, for a list)
    k = bit = 0
    for v, d in zip(ins, op.diff):
        if d:
            n = 0 if v is None else (1 if type(v) is Tensor else len(v))
            if any(needs[k:k + n]):
                mask |= 1 << bit
            k += n
            bit += 1
    modes, node.keep = save[mask]
    k = 0
    for v, mode, d in zip(ins, modes, op.diff):
        single = type(v) is Tensor
        if v is None or mode == 0:
            saved.append(None)
            versions.append(None)
        elif mode == 2:
            saved.append(v)
            versions.append(v._st.version if single else [x._st.version for x in v])
        else:
            saved.append(_Meta(v) if single else [_Meta(x) for x in v])
            versions.append(None)
        if not d:
            continue
        if v is None:  # an optional input not given: a placeholder edge (`needs` has no entry for it)
            metas.append(None)
            edges.append(None)
        elif single:
            metas.append((v._data.shape, v._data.dtype))
            edges.append(edge(v) if needs[k] else None)
            k += 1
        else:
            metas.append([(x._data.shape, x._data.dtype) for x in v])
            for x in v:
                edges.append(edge(x) if needs[k] else None)
                k += 1
    node.saved, node.versions, node.next_edges, node.metas = saved, versions, edges, metas


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
        t._requires_grad = True
        t._grad_fn = v._grad_fn
        t._output_nr = v._output_nr


def rebase_history(target, r) -> None:
    """target's memory now holds r: make target's (or its root's) history go through r."""
    base = target._base
    if base is None:
        target._requires_grad = r._requires_grad
        target._grad_fn = r._grad_fn if r._requires_grad else None
        target._output_nr = r._output_nr
        return
    from .._generated.ops import _VIEW_SCATTER
    # The root's new value is view_scatter(old root, r): record that node (the data is already written).
    old = alias(base) if base._requires_grad else base
    holder = _new(Tensor)
    holder._data = base._data
    node = record(_VIEW_SCATTER, (old, r), (tuple(target._view),), (holder,),
                  [base._requires_grad, r._requires_grad])
    base._requires_grad = True
    base._grad_fn = node
    base._output_nr = 0
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


def retain_grad(t) -> None:
    """Keep the gradient of a non-leaf in `.grad` after backward."""
    if not t._requires_grad:
        raise OpError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None or t._retains_grad:
        return
    ref = weakref.ref(t)

    def keep(g):
        x = ref()
        if x is not None:
            gg = g if STATE.grad_enabled else tape_free(g)
            x.grad = gg if x.grad is None else x.grad + gg
        return None

    t._retains_grad = True
    register_hook(t, keep)


# -- the engine -----------------------------------------------------------------------------------

def _collect(roots: list) -> dict:
    """Dependency counts of every node reachable from the roots (iterative DFS)."""
    deps: dict = {}
    seen = set()
    stack = [n for n in roots if n is not None]
    for n in stack:
        seen.add(n)
    while stack:
        n = stack.pop()
        for e in n.next_edges:
            if e is None:
                continue
            m = e[0]
            deps[m] = deps.get(m, 0) + 1
            if m not in seen:
                seen.add(m)
                stack.append(m)
    return deps


def _needed(roots: list, targets: set) -> set:
    """Nodes from which some target node is reachable (only these run for autograd.grad)."""
    order = []
    seen = set()
    stack = [(n, False) for n in roots if n is not None]
    while stack:
        n, done = stack.pop()
        if done:
            order.append(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        stack.append((n, True))
        for e in n.next_edges:
            if e is not None and e[0] not in seen:
                stack.append((e[0], False))
    needed = set()
    for n in order:  # post-order: children first
        if n in targets or any(e is not None and e[0] in needed for e in n.next_edges):
            needed.add(n)
    return needed


def run_backward(outputs: Sequence, grad_outputs: Sequence, *, retain_graph: bool, create_graph: bool,
                 inputs: Sequence | None = None, accumulate: bool = True, allow_unused: bool = False):
    """Propagate grad_outputs from outputs; accumulate into leaves or return grads of `inputs`."""
    roots = []
    buffers: dict = {}
    for o, g in zip(outputs, grad_outputs):
        e = edge(o)
        if e is None:
            raise OpError("element 0 of tensors does not require grad and does not have a grad_fn")
        node, nr = e
        roots.append(node)
        buf = buffers.setdefault(node, {})
        buf[nr] = g if nr not in buf else buf[nr] + g
    capture = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            e = edge(t)
            if e is not None:
                capture.setdefault(e, []).append(i)
    deps = _collect(roots)
    needed = _needed(roots, {e[0] for e in capture}) if (inputs is not None and not accumulate) else None
    results = [None] * (len(inputs) if inputs is not None else 0)
    heap = []
    queued = set()
    for n in dict.fromkeys(roots):
        if deps.get(n, 0) == 0:
            heapq.heappush(heap, (-n.seq, id(n), n))
            queued.add(n)
    with set_grad_enabled(create_graph):
        while heap:
            _, _, node = heapq.heappop(heap)
            buf = buffers.pop(node, {})
            nout = max(buf) + 1 if buf else 1
            grads = [dense(buf.get(k)) for k in range(nout)]
            if node.pre_hooks:
                for k, hooks in node.pre_hooks.items():
                    for h in list(hooks):
                        if k < len(grads) and grads[k] is not None:
                            new = h(grads[k])
                            if new is not None:
                                grads[k] = new
            if capture:
                for k, g in enumerate(grads):
                    for i in capture.get((node, k), ()):
                        results[i] = g
            run = needed is None or node in needed
            if isinstance(node, AccumulateGrad) and not accumulate:
                run = False
            if run:
                # without create_graph a view's gradient may stay sparse (accumulate.py)
                sparse = None if create_graph or type(node) is not OpNode else node.embed_grad(grads)
                outs = node.apply(grads) if sparse is None else (sparse,)
                if not retain_graph:
                    node.release()
            else:
                outs = [None] * len(node.next_edges)
            for e, g in zip(node.next_edges, outs):
                if e is None:
                    continue
                m, k = e
                if g is not None:
                    b = buffers.setdefault(m, {})
                    old = b.get(k)
                    b[k] = g if old is None else (old + g if create_graph else add_grads(old, g))
                else:
                    buffers.setdefault(m, {})
                deps[m] -= 1
                if deps[m] == 0 and m not in queued:
                    queued.add(m)
                    heapq.heappush(heap, (-m.seq, id(m), m))
    if inputs is not None and not allow_unused and not accumulate:
        for i, r in enumerate(results):
            if r is None:
                raise OpError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
    return results


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
                raise OpError(f"{who}: grad can be implicitly created only for scalar outputs "
                              f"(got an output of shape {tuple(o._data.shape)}); pass `gradient`/`grad_outputs`")
            g = wrap(np.ones_like(o._data))
        elif not isinstance(g, Tensor):
            g = wrap(np.asarray(g, dtype=o._data.dtype))
        if g._data.shape != o._data.shape:
            raise OpError(f"{who}: Mismatch in shape: grad_output has a shape of {tuple(g._data.shape)} and "
                          f"output has a shape of {tuple(o._data.shape)}")
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
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        res = run_backward(outs, gs, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs,
                           accumulate=False, allow_unused=True)
        for t, g in zip(inputs, res):
            if g is not None:
                g = g if create_graph else tape_free(g)
                t.grad = g if t.grad is None else t.grad + g
        return
    run_backward(outs, gs, retain_graph=retain_graph, create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused: bool = False, is_grads_batched: bool = False, materialize_grads: bool = False):
    """Gradients of outputs with respect to inputs, returned (not accumulated), as torch.autograd.grad."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched=True is not implemented (no vmap)")
    single_out = isinstance(outputs, Tensor)
    outs = [outputs] if single_out else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    for i, t in enumerate(ins):
        if not t._requires_grad:
            raise OpError(f"grad: input {i} does not require grad")
    gs = _grad_outputs(outs, [grad_outputs] if isinstance(grad_outputs, Tensor) else grad_outputs, "grad")
    if retain_graph is None:
        retain_graph = create_graph
    res = run_backward(outs, gs, retain_graph=retain_graph, create_graph=create_graph, inputs=ins,
                       accumulate=False, allow_unused=allow_unused or materialize_grads)
    out = []
    for t, g in zip(ins, res):
        if g is None and materialize_grads:
            from ..creation import zeros_like
            g = zeros_like(t)
        elif g is not None and not create_graph:
            g = tape_free(g)
        out.append(g)
    return tuple(out)
