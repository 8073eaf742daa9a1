"""Custom differentiable ops: subclass `Function` with forward, backward and jvp.

>>> import pushforward as pf
>>> class Cube(pf.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x); ctx.save_for_forward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 3 * x ** 2 * g
...     @staticmethod
...     def jvp(ctx, t):
...         (x,) = ctx.saved_tensors
...         return 3 * x ** 2 * t
>>> x = pf.tensor([2.0], requires_grad=True)
>>> Cube.apply(x).sum().backward(); x.grad
tensor([12.])
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

from ..engine.tangents import levels_of, set_tangent, tangent_of
from .forward_ad import _set_fwd_grad_enabled
from ..engine.graph import Node, _fit_grad, copy_tangents, edge, overlaps, rebase_history, snapshot, tape_free
from ..engine.grad_mode import no_grad
from ..engine.registry import DISPATCH
from ..engine.state import STATE
from ..core.batched import BatchedTensor
from ..dispatch.batching import RECORDS
from ..core.creation import zeros, zeros_like
from ..errors import OpError, SavedTensorModifiedError
from ..core.tensor import Tensor, add_saver, join_storage, set_history, wrap

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The `ctx` passed to forward/backward/jvp."""

    def __init__(self) -> None:
        self._to_save: tuple = ()
        self._saved_versions: tuple = ()
        self._for_forward: tuple | None = None
        self._dirty: tuple = ()
        self._non_diff: tuple = ()
        self._in_jvp = False
        self.materialize_grads = True
        self.needs_input_grad: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self._to_save = tensors
        self._saved_versions = tuple(t._st.version if t is not None else None for t in tensors)

    def save_for_forward(self, *tensors: Any) -> None:
        self._for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:  # torch keeps the two apart: jvp sees only what save_for_forward saved
            return _unpacked(self._for_forward or ())
        for t, v in zip(self._to_save, self._saved_versions):
            if t is not None and t._st.version != v:
                raise SavedTensorModifiedError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [custom Function] saved at version {v}, now at version {t._st.version}"
                )
        return _unpacked(self._to_save)

    def mark_dirty(self, *tensors: Any) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)


def _unpacked(saved: tuple) -> tuple:
    if any(type(t) is _SavedOutput for t in saved):
        return tuple(t.unpack() if type(t) is _SavedOutput else t for t in saved)
    return saved


class FunctionNode(Node):
    """Tape node calling a custom Function's backward."""

    __slots__ = ("cls", "ctx", "metas", "out_metas", "released", "is_tensor")

    def name(self) -> str:
        return self.cls.__name__ + "Backward"

    def apply(self, grads: list) -> list:
        if self.released:
            raise OpError(
                f"Trying to backward through the graph a second time in {self.name()}; specify retain_graph=True"
            )
        if all(g is None for g in grads):
            return [None] * len(self.next_edges)
        grads = list(grads) + [None] * (len(self.out_metas) - len(grads))
        if self.ctx.materialize_grads:
            grads = [
                zeros(*m[0], dtype=m[1]) if (g is None and m is not None) else g for g, m in zip(grads, self.out_metas)
            ]
        res = _backward_of(self.cls)(self.ctx, *grads)
        return self._check_grads(res if isinstance(res, tuple) else (res,))

    def _check_grads(self, res: tuple) -> list:
        """backward's results, one per forward argument (torch's rules: extra trailing Nones are
        dropped; a non-Tensor argument's gradient must be None), fitted to the Tensor inputs."""
        who = f"function {self.cls.__name__}.backward"
        n = len(self.is_tensor)
        if len(res) > n and all(g is None for g in res[n:]):
            res = res[:n]
        if len(res) != n:
            raise OpError(
                f"{who} returned an incorrect number of gradients (expected {n}, got {len(res)}): "
                "one gradient (or None) per argument of forward"
            )
        out = []
        for i, (g, is_t) in enumerate(zip(res, self.is_tensor)):
            if not is_t:
                if g is not None:
                    raise OpError(
                        f"{who} returned a gradient different than None at position {i + 1}, but "
                        "the corresponding forward input was not a Tensor"
                    )
                continue
            if g is not None and not isinstance(g, Tensor):
                raise OpError(f"{who} returned a {type(g).__name__} at position {i + 1}; expected a Tensor or None")
            out.append(_fit_grad(g, self.metas[len(out)], self, i) if g is not None else None)
        return out

    def release(self) -> None:
        self.ctx._to_save = ()
        self.released = True

    def keep_overwritten(self, st, data, version: int) -> bool:
        """As OpNode.keep_overwritten, for what ctx.save_for_backward saved (engine/saved.py)."""
        if self.released:
            return False
        ctx = self.ctx
        live = False
        saved, versions = list(ctx._to_save), list(ctx._saved_versions)
        for i, (t, v) in enumerate(zip(saved, versions)):
            if t is None or t._st is not st or v != version:
                continue
            if not overlaps(t.tensor._data if type(t) is _SavedOutput else t._data, data):
                versions[i] = version + 1
                live = True
            elif type(t) is _SavedOutput:
                saved[i], versions[i] = t.kept(), 0
            else:
                saved[i] = snapshot(t)
                versions[i] = saved[i]._st.version
        ctx._to_save, ctx._saved_versions = tuple(saved), tuple(versions)
        return live

    def note_saved(self) -> None:
        """Note the tensors ctx.save_for_backward saved on their storages (engine/saved.py)."""
        ref = weakref.ref(self)
        for t in self.ctx._to_save:
            if type(t) is _SavedOutput:
                add_saver(t.tensor, ref)
            elif isinstance(t, Tensor):
                add_saver(t, ref)


class _SavedOutput:
    """A saved output of a custom Function (or an input it modified in place): its memory and
    tangents without its grad_fn, which is the node holding the ctx (a reference cycle that
    would keep the graph alive until the cycle collector runs). Rebuilt when read."""

    __slots__ = ("tensor", "node", "output_nr")

    def __init__(self, t, node: FunctionNode) -> None:
        self.tensor = tape_free(t)
        self.node = weakref.ref(node)
        self.output_nr = t._output_nr

    @property
    def _st(self):
        return self.tensor._st

    def kept(self) -> "_SavedOutput":
        """This saved output with its values and tangents copied now (before a write into them)."""
        k = object.__new__(_SavedOutput)
        k.tensor, k.node, k.output_nr = snapshot(self.tensor), self.node, self.output_nr
        return k

    def unpack(self):
        s = self.tensor
        node = self.node()
        t = object.__new__(Tensor)
        t._data = s._data
        join_storage(t, s._st)
        copy_tangents(s, t)
        if node is not None and not node.released:
            set_history(t, node, self.output_nr)
        return t


def _unlink_outputs(ctx: FunctionCtx, node: FunctionNode) -> None:
    """Replace the saved tensors whose grad_fn is `node` by _SavedOutput (no reference cycle)."""

    def unlink(ts):
        return tuple(_SavedOutput(t, node) if getattr(t, "_grad_fn", None) is node else t for t in ts)

    ctx._to_save = unlink(ctx._to_save)
    if ctx._for_forward is not None:
        ctx._for_forward = unlink(ctx._for_forward)


# torch's wording for its rules, which ported tests match
_NO_BACKWARD = "custom Function must implement either the backward or the vjp method to be used in reverse mode"


class Function:
    """Base class of custom ops; call them with `MyFunction.apply(*args)`."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        raise NotImplementedError("custom Function must implement the forward function (a staticmethod)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        raise NotImplementedError(_NO_BACKWARD)

    @staticmethod
    def vjp(ctx: FunctionCtx, *grads: Any) -> Any:
        """torch's other name for backward: define one of the two."""
        raise NotImplementedError(_NO_BACKWARD)

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> Any:
        raise NotImplementedError(
            "custom Function must implement the jvp function (a staticmethod) to be used in forward mode"
        )

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> Any:
        """torch-2 style: define it (and a `forward` without ctx) to fill ctx from inputs and output."""
        raise NotImplementedError("setup_context is not overridden")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx()
        grad_on = STATE.grad_enabled
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and grad_on and a._requires_grad for a in args)
        # forward sees plain tensors (same memory, no tape, no tangents)
        plain, originals = _plain_inputs(args)
        with no_grad(), _set_fwd_grad_enabled(False):  # (as torch: forward is not differentiated)
            raw = _run_forward(cls, ctx, plain)
        # Saved inputs are handed back with their tape identity and tangents, so backward and jvp
        # formulas are themselves differentiable (double backward, reverse-over-forward, nesting).
        ctx._to_save = tuple(originals.get(id(t), t) for t in ctx._to_save)
        if ctx._for_forward is not None:
            ctx._for_forward = tuple(originals.get(id(t), t) for t in ctx._for_forward)
        single = not isinstance(raw, tuple)
        outs = [raw] if single else list(raw)
        dirty = {id(t) for t in ctx._dirty}
        non_diff = {id(t) for t in ctx._non_diff}
        results = _results(cls, outs, originals, dirty, grad_on)
        tensors_in = [a for a in args if isinstance(a, Tensor)]
        node = None
        # reverse mode
        if grad_on and any(ctx.needs_input_grad):
            node = _record(cls, ctx, args, tensors_in, results, outs, non_diff)
        # forward mode
        if STATE.levels:
            levels = sorted({lv for a in tensors_in for lv in levels_of(a)})
            roles = _roles(outs, plain, dirty)
            for level in levels:
                _forward_at(cls, ctx, args, level, results, outs, roles, non_diff)
        if node is not None:
            _unlink_outputs(ctx, node)
            node.note_saved()
        return results[0] if single else tuple(results)


def _backward_of(cls) -> Callable:
    """cls's backward, or its vjp (torch's alias); defining both is ambiguous, as in torch."""
    has_backward = cls.backward is not Function.backward
    has_vjp = cls.vjp is not Function.vjp
    if has_backward and has_vjp:
        raise OpError(
            f"{cls.__name__}: Implementing both 'backward' and 'vjp' for a custom Function is not allowed; "
            "define only one of them (vjp is an alias of backward)"
        )
    return cls.vjp if has_vjp else cls.backward


def _plain_inputs(args: tuple) -> tuple:
    """forward's arguments (Tensors replaced by plain tensors on the same memory: no tape, no
    tangents) and {id(plain): original}."""
    plain = []
    originals = {}
    for a in args:
        if isinstance(a, Tensor):
            p = wrap(a._data)
            join_storage(p, a._storage())
            originals[id(p)] = a
            plain.append(p)
        else:
            plain.append(a)
    return plain, originals


def _results(cls, outs: list, originals: dict, dirty: set, grad_on: bool) -> list:
    """What apply returns for forward's outputs: the original of a dirty (in-place) input, a fresh
    tensor on the memory of an input or of a view made in forward, else the output itself."""
    results = []
    for o in outs:
        if isinstance(o, Tensor) and id(o) in dirty:
            orig = originals[id(o)]
            root = orig._base if orig._base is not None else orig
            if grad_on and root._requires_grad and root._grad_fn is None:
                what = "a view of a leaf Variable" if orig._base is not None else "a leaf Variable"
                raise OpError(
                    f"{cls.__name__}: {what} that requires grad is being used in an in-place operation (mark_dirty)"
                )
            results.append(orig)
        elif isinstance(o, Tensor) and (id(o) in originals or o._base is not None):
            # an input, or a view made in forward: a fresh tensor on the same memory, whose history
            # is this Function (not the view chain forward used)
            r = wrap(o._data)
            join_storage(r, o._storage())
            results.append(r)
        else:
            results.append(o)
    return results


def _record(
    cls, ctx: FunctionCtx, args: tuple, tensors_in: list, results: list, outs: list, non_diff: set
) -> FunctionNode:
    """The tape node calling cls.backward, made the grad_fn of the differentiable results."""
    node = FunctionNode()
    node.cls, node.ctx, node.released = cls, ctx, False
    node.is_tensor = [isinstance(a, Tensor) for a in args]
    node.metas = [(a._data.shape, a._data.dtype) for a in tensors_in]
    node.next_edges = [edge(a) if n else None for a, n in zip(args, ctx.needs_input_grad) if isinstance(a, Tensor)]
    node.out_metas = [(r._data.shape, r._data.dtype) if isinstance(r, Tensor) else None for r in results]
    for k, (r, o) in enumerate(zip(results, outs)):
        if isinstance(r, Tensor) and id(o) not in non_diff and r._data.dtype.kind in "fc":
            if r._base is None:
                set_history(r, node, k)
                continue
            # a view modified in place (mark_dirty; make_dual's result is one): as an in-place op's,
            # its base's history goes through this node where the view lies
            h = object.__new__(Tensor)
            h._data = r._data
            set_history(h, node, k)
            rebase_history(r, h)
    return node


def _roles(outs: list, plain: list, dirty: set) -> list:
    """Per output of forward: ("dirty", i) for input i modified in place, ("view", i) for input i
    returned as-is or a view of it, else None (torch's checks on jvp's tangents differ for each)."""
    index = {id(p): i for i, p in enumerate(plain) if isinstance(p, Tensor)}
    roles = []
    for o in outs:
        if not isinstance(o, Tensor):
            roles.append(None)
        elif id(o) in index:
            roles.append(("dirty" if id(o) in dirty else "view", index[id(o)]))
        elif o._base is not None and id(o._base) in index:
            roles.append(("view", index[id(o._base)]))
        else:
            roles.append(None)
    return roles


def _forward_at(
    cls, ctx: FunctionCtx, args: tuple, level: int, results: list, outs: list, roles: list, non_diff: set
) -> None:
    """Run cls.jvp on the inputs' tangents at `level` and give the results their tangents.

    jvp sees None for an argument that is not a differentiable Tensor, and the tangent object
    itself for a dual input (zeros for a Tensor without one), so it can update it in place."""
    if cls.jvp is Function.jvp:
        raise NotImplementedError(
            f"forward-mode AD is not implemented for {cls.__name__}: a custom Function must implement the jvp "
            "function (a staticmethod) to be used in forward mode"
        )
    own = [(tangent_of(a, level) if _is_diff(a) else None) for a in args]
    tans = [_zeros_for(a) if (t is None and _is_diff(a)) else t for a, t in zip(args, own)]
    saved = ctx._for_forward
    if saved is not None:  # seen from this level: only the outer levels' tangents remain
        ctx._for_forward = tuple(_prim(t, level) if isinstance(t, Tensor) else t for t in saved)
    ctx._in_jvp = True
    try:
        res = _run_jvp(cls, ctx, tans, results, roles, STATE.by_uid[level])
    finally:
        ctx._in_jvp = False
        ctx._for_forward = saved
    for k, (r, o, t, role) in enumerate(zip(results, outs, res, roles)):
        if t is not None and id(o) in non_diff:
            raise OpError(
                f"function {cls.__name__}.jvp returned a gradient at position {k}, but the corresponding "
                "forward output is not a differentiable Tensor (mark_non_differentiable). You should return "
                "None at that position instead."
            )
        if t is None or not isinstance(r, Tensor) or r._data.dtype.kind not in "fc":
            continue
        if role is not None and role[0] == "dirty" and own[role[1]] is not None:
            continue  # jvp updated the input's own tangent in place (checked)
        set_tangent(r, level, t)


def _is_diff(a) -> bool:
    return isinstance(a, Tensor) and a._data.dtype.kind in "fc"


def _run_jvp(cls, ctx, tans: list, results: list, roles: list, lvl) -> list:
    """cls.jvp on the tangents of one level, checked. At a vector-mode level a Function runs its jvp
    once per batch element and the results are stacked, unless it declares
    `generate_vmap_rule = True` (its jvp uses only pushforward ops: it then sees the batched
    tangents and runs once, by the ops' batching rules)."""

    def one(ts):
        versions = [t._st.version if isinstance(t, Tensor) else None for t in ts]
        res = cls.jvp(ctx, *ts)
        res = _check_tangents(cls, [res] if not isinstance(res, tuple) else list(res), results)
        _check_aliasing(cls, res, ts, versions, roles)
        return res

    if lvl.batch is None or getattr(cls, "generate_vmap_rule", False):
        return one(tans)
    rows = [
        one([t._phys[b] if type(t) is BatchedTensor and t._blevel == lvl.blevel else t for t in tans])
        for b in range(lvl.batch)
    ]
    out = []
    for k in range(len(results)):
        col = [r[k] for r in rows]
        if all(t is None for t in col):
            out.append(None)
            continue
        col = [t if t is not None else zeros_like(results[k]) for t in col]
        out.append(BatchedTensor(RECORDS["stack"].public(col), lvl.blevel))
    return out


def _check_aliasing(cls, res: list, ts: list, versions: list, roles: list) -> None:
    """torch's rules on what jvp returns for an input forward modified in place (that input's
    tangent, modified in place: the same tensor, whose version the write moved on) and for a view
    of an input, or an input returned as-is (a view of that input's tangent). `versions`: the
    tangents' versions before jvp ran."""
    for k, (t, role) in enumerate(zip(res, roles)):
        if t is None or role is None:
            continue
        given = ts[role[1]]
        if role[0] == "dirty":
            if t is not given or t._st.version == versions[role[1]]:
                raise OpError(
                    f"function {cls.__name__}.jvp: an inplace custom Function is not modifying the forward mode "
                    f"gradients inplace (output {k}). If the forward is modifying an input inplace (mark_dirty), "
                    "then the jvp function must modify the corresponding gradient inplace and return it"
                )
            continue
        root = given._base if given._base is not None else given
        rule = f"function {cls.__name__}: A custom Function's forward is returning a view (or an input as-is)"
        if t._base is None:
            raise OpError(f"{rule} but the jvp is not returning a view (output {k}): jvp must return a view")
        if t._base is not root:
            what = "the given grad input" if given._base is None else "the same base as the given grad input"
            raise OpError(f"{rule} but the jvp is not returning a view of {what} (output {k})")


def _check_tangents(cls, res: list, results: list) -> list:
    """jvp's tangents, one per output of forward, each None or a Tensor of its output's shape and dtype."""
    who = f"function {cls.__name__}.jvp"
    if len(res) != len(results):
        raise OpError(
            f"{who} returned {len(res)} tangent(s), but forward returned {len(results)} output(s): an incorrect "
            "number of tangents (one tangent, or None, per output)"
        )
    for k, (t, r) in enumerate(zip(res, results)):
        if t is None or not isinstance(r, Tensor):
            continue
        if not isinstance(t, Tensor):
            raise OpError(
                f"{who} returned a {type(t).__name__} as the tangent of output {k}; expected a Tensor or None"
            )
        if t.shape != r._data.shape:
            raise OpError(
                f"{who} returned a tangent of shape {tuple(t.shape)} for output {k} of shape "
                f"{tuple(r._data.shape)}; a tangent has its output's shape"
            )
        if t.dtype != r._data.dtype and r._data.dtype.kind in "fc":
            raise OpError(
                f"{who} returned a tangent of dtype {t.dtype} for output {k} of dtype "
                f"{r._data.dtype}; a tangent has its output's dtype"
            )
    return res


def _prim(t, level: int):
    # through the registry: this package is first imported from inside the dispatch layer's own
    # imports, before general.py has defined prim_at
    return DISPATCH.prim_at(t, level)


def _zeros_for(a):
    return zeros_like(a)


class _OnceDifferentiableBackward(Node):
    """grad_fn of a once_differentiable backward's results: differentiating them is an error."""

    __slots__ = ("fn_name",)

    def name(self) -> str:
        return "DelayedError"

    def apply(self, grads: list) -> list:
        raise OpError(
            f"trying to differentiate twice a function that was marked with @once_differentiable ({self.fn_name})"
        )


def once_differentiable(fn: Callable) -> Callable:
    """Decorator for a custom Function's backward that is not itself differentiable (as torch's):
    it runs without recording a tape, and differentiating its results (double backward with
    create_graph=True) raises instead of silently returning a wrong second derivative.

    >>> import pushforward as pf
    >>> class Exp(pf.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp(); ctx.save_for_backward(y); return y
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         (y,) = ctx.saved_tensors
    ...         return g * y
    >>> x = pf.tensor([0.0], requires_grad=True)
    >>> Exp.apply(x).sum().backward(); x.grad
    tensor([1.])
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not STATE.grad_enabled:
            return outputs
        needs = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not needs:
            return outputs
        node = _OnceDifferentiableBackward()
        node.fn_name = getattr(fn, "__qualname__", "backward")
        node.next_edges = [edge(a) for a in needs]
        single = not isinstance(outputs, tuple)
        res = []
        for k, o in enumerate([outputs] if single else outputs):
            if isinstance(o, Tensor) and o._data.dtype.kind in "fc":
                o = wrap(o._data)  # a fresh tensor: an input handed back must keep its own history
                o._requires_grad, o._ad, o._grad_fn, o._output_nr = True, True, node, 0
            res.append(o)
        return res[0] if single else tuple(res)

    return wrapper


def _run_forward(cls, ctx: FunctionCtx, args: list) -> Any:
    """forward(ctx, *args), or in torch-2 style (setup_context defined) forward(*args) then
    setup_context(ctx, inputs, output)."""
    if cls.setup_context is Function.setup_context:
        return cls.forward(ctx, *args)
    out = cls.forward(*args)
    cls.setup_context(ctx, tuple(args), out)
    return out
