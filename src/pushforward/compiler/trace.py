"""Tracing one call: run fn on recording arrays, check the program, describe its outputs.

`trace_call` runs fn once on copies of the inputs whose arrays are `Rec` arrays, emits the log
(emit.py), then checks it: the program re-run on perturbed inputs must agree with fn run eagerly
on the same inputs (to 1e-12), so that nothing derived from the traced values can have been
baked in as a constant. Any disagreement, or a construct the recorder cannot follow, raises
`Untraceable`; a value read into Python raises `DataDependent` (recording.py).
"""

from __future__ import annotations

import gc
import inspect
import keyword
import sys
import warnings

import numpy as np

from ..core.pytree import tree_flatten, tree_unflatten
from ..core.tensor import Tensor, join_storage, wrap
from ..engine.saved import before_write
from .emit import Program, emit
from .recording import (
    Const,
    DataDependent,
    GuardFailed,
    Rec,
    Trace,
    Untraceable,
    encode,
    new_var,
    own_rec,
    pop,
    push,
)

__all__ = ["Entry", "trace_call", "DataDependent", "GuardFailed", "Untraceable"]

_new = object.__new__


class Entry:
    """A compiled signature: its program and how to turn the program's arrays into fn's outputs."""

    def __init__(self, program: Program, spec, kinds: list, views: dict, bumps: list) -> None:
        self.program = program
        self.fn = program.fn
        self.spec = spec  # output pytree structure
        self.kinds = kinds  # per output leaf: ("t", k) tensor from array k, ("a", k) array, ("s", v) static
        self.views = views  # output leaf -> (input index, view steps) for views of inputs
        self.bumps = bumps  # (input index, version increase) of inputs written in place
        self.packed: tuple = ()  # inputs the program reads as C-contiguous copies (see trace_call)
        self.writes_inputs = False  # the program writes into an input's memory
        self.saves: tuple = ()  # inputs a guarded program writes: restored when a guard fails
        self.others: list = []  # traces of this signature for other values of its guards
        self.simple = len(kinds) == 1 and kinds[0][0] == "t" and not views and not bumps and spec.kind == "leaf"

    def run(self, tensors: list):
        """fn's outputs for these tensor arguments; NotImplemented when the program cannot run them
        (it writes into inputs that share memory: it was traced with separate ones)."""
        if self.writes_inputs and _aliased([t._data for t in tensors]):
            return NotImplemented
        for i, _ in self.bumps:  # (the program writes into these inputs: tape nodes keep what they saved)
            before_write(tensors[i])
        if self.packed or self.saves:
            arrays = [t._data for t in tensors]
            for i in self.packed:
                arrays[i] = np.ascontiguousarray(arrays[i])
            saved = [(arrays[i], arrays[i].copy()) for i in self.saves]
            try:
                outs = self.fn(*arrays)
            except GuardFailed:
                for a, c in saved:  # (so that another trace, or fn, runs on the caller's values)
                    np.copyto(a, c)
                raise
        else:
            outs = self.fn(*[t._data for t in tensors])
        if self.simple:
            t = _new(Tensor)
            t._data = outs[0]
            return t
        for i, n in self.bumps:
            tensors[i]._storage().version += n
        made: dict = {}
        leaves = []
        for j, (kind, v) in enumerate(self.kinds):
            if kind == "s":
                leaves.append(v)
            elif kind == "a":
                leaves.append(outs[v])
            elif v in made:
                leaves.append(made[v])
            else:
                t = made[v] = _new(Tensor)
                t._data = outs[v]
                if j in self.views:
                    _link(t, tensors, *self.views[j])
                leaves.append(t)
        return tree_unflatten(leaves, self.spec)


def _aliased(arrays: list) -> bool:
    return any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1 :])


def _link(out: Tensor, tensors: list, k: int, steps: tuple) -> None:
    src = tensors[k]
    join_storage(out, src._storage())
    if src._base is None:
        out._base, out._view = src, steps
    else:
        out._base, out._view = src._base, src._view + steps
    out._view_version = out._st.version


def _rec_inputs(trace: Trace, arrays: list, names: list) -> list:
    recs = []
    for a, name in zip(arrays, names):
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            a = np.ascontiguousarray(a)
        r = own_rec(np.asarray(a))
        r._var = new_var(trace, np.ndarray.view(r, np.ndarray), name)
        if names.count(name) == 1:  # the parameter's own name, when it is one
            r._var.name = name
        trace.inputs.append(r._var)
        recs.append(r)
    return recs


def _run(fn, args_spec, leaves: list, tpos: list, arrays: list):
    leaves = list(leaves)
    tensors = []
    for p, a in zip(tpos, arrays):
        t = wrap(a)
        leaves[p] = t
        tensors.append(t)
    args, kwargs = tree_unflatten(leaves, args_spec)
    return fn(*args, **kwargs), tensors


def _describe_outputs(trace: Trace, out, tensors: list) -> tuple:
    """(output Vars/Consts, kinds, views, spec, written consts) of a traced call's result."""
    leaves, spec = tree_flatten(out)
    arrays: list = []
    index: dict = {}
    kinds: list = []
    views: dict = {}
    pos = {id(t): i for i, t in enumerate(tensors)}
    for j, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor):
            if type(leaf) is not Tensor:
                raise Untraceable(f"an output of type {type(leaf).__name__}", "<output>")
            if leaf._requires_grad or leaf._fw:
                raise Untraceable(
                    "an output requires grad or carries a tangent (made inside the function, or through a tensor "
                    "it closes over): return detached values, or pass that tensor as an argument",
                    "<output>",
                )
            d = leaf._data
            kind = "t"
            if leaf._base is not None and id(leaf._base) in pos:
                views[j] = (pos[id(leaf._base)], leaf._view)
        elif isinstance(leaf, np.ndarray):
            d, kind = leaf, "a"
        else:
            kinds.append(("s", leaf))
            continue
        key = id(d)
        if key not in index:
            index[key] = len(arrays)
            arrays.append(d._var if type(d) is Rec and d._var is not None else _output_array(trace, d))
            if type(d) is Rec and d._var is None:
                raise Untraceable("an output array made by an untraced NumPy method", "<output>")
        kinds.append((kind, index[key]))
    return arrays, kinds, views, spec


def _output_array(trace: Trace, d: np.ndarray):
    """The Const of a plain output array; the view of a plain view into a traced array or into an
    array made outside the trace (a kernel's buffer that recorded calls filled: the program's copy
    of it is filled too)."""
    if d.base is None:
        return trace.const(d, "const")
    try:
        return encode(trace, d)
    except Untraceable:  # (a view into a strided outside array: the check tells whether it is stale)
        return trace.const(d, "const")


def trace_call(fn, name: str, args_spec, leaves: list, tpos: list, names: list) -> Entry:
    """Trace fn on the tensor leaves at positions tpos (copies, as Rec arrays) and check it.

    Python's cyclic garbage collector is off meanwhile: a trace of 10^4-10^5 statements is as many
    live objects, which each full collection walks (a third of the compile time of a loop kernel);
    what the trace leaves in cycles is collected when it is back on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        return _trace_call(fn, name, args_spec, leaves, tpos, names)
    finally:
        if was_on:
            gc.enable()


def _trace_call(fn, name: str, args_spec, leaves: list, tpos: list, names: list) -> Entry:
    trace = Trace()
    arrays = [leaves[p]._data for p in tpos]
    recs = _rec_inputs(trace, arrays, names)
    push(trace)
    try:
        out, tensors = _run(fn, args_spec, leaves, tpos, recs)
        outs, kinds, views, spec = _describe_outputs(trace, out, tensors)
        out = None  # (the traced outputs must not hold their arrays: see _temporaries)
    finally:
        pop()
    bumps = []
    for i, (t, r) in enumerate(zip(tensors, recs)):
        if t._data is not r:
            raise Untraceable("an input tensor's array was replaced (an in-place op that reallocates)", "<input>")
        if t._st.version:
            bumps.append((i, t._st.version))
    # A strided input (a broadcast cotangent, a slice) is traced and run as a C-contiguous copy: the
    # program's strided views assume the traced layout. Only when the program neither writes into
    # it nor returns a view of it: then the copy is invisible.
    packed = tuple(i for i, a in enumerate(arrays) if not (a.flags.c_contiguous or a.flags.f_contiguous))
    for i in packed:
        root = trace.inputs[i].root
        if any(type(o) is not Const and o.root == root for o in outs) or any(
            type(w) is not Const and w.root == root for s in trace.stmts for w in s.writes
        ):
            raise Untraceable(f"a write into or a view of the strided argument {names[i]!r}", "<input>")
    mutated, temps = _const_plan(trace, outs)
    program = emit(trace, trace.inputs, outs, _ident(name), mutated, temps)
    entry = Entry(program, spec, kinds, views, bumps)
    if packed:
        entry.packed, entry.simple = packed, False
    in_roots = {v.root for v in trace.inputs}
    written = {w.root for s in trace.stmts for w in s.writes if type(w) is not Const}
    if written & in_roots:
        entry.writes_inputs, entry.simple = True, False
        if any(s.kind == "guard" for s in trace.stmts):
            entry.saves = tuple(i for i, v in enumerate(trace.inputs) if v.root in written)
    _check(fn, entry, args_spec, leaves, tpos, arrays)
    return entry


def _const_plan(trace: Trace, outs: list) -> tuple:
    """(the Consts the program copies at its start, the temporary Consts). An array made during
    the trace (a buffer the engine allocated, a `pf.zeros` in fn) and written into or returned is
    fresh each call, as eagerly; an array fn closes over is read by reference, and writing into
    it is refused (the write would reach a per-call copy, not the caller's tensor)."""
    temps = _temporaries(trace)
    written = {id(w) for s in trace.stmts for w in s.writes if type(w) is Const}
    written |= {id(w.const_base) for s in trace.stmts for w in s.writes if type(w) is not Const and w.const_base}
    if written - temps:
        raise Untraceable(
            "an in-place write into a tensor the function closes over (pass it as an argument)", "<const>"
        )
    returned = {id(o) for o in outs if type(o) is Const}
    mutated = [c for c in trace.consts.values() if id(c) in written or (id(c) in returned and id(c) in temps)]
    return mutated, temps


def _temporaries(trace: Trace) -> set:
    """ids of the Consts whose arrays nothing but the trace holds (buffers the engine allocated and
    let go, e.g. a gradient accumulator): writes into them matter only if the program reads them."""
    consts = [c for c in trace.consts.values() if isinstance(c.obj, np.ndarray)]
    # An array referenced only by its Const (and getrefcount's argument) is a temporary; the others
    # are looked up in one walk of the heap (gc.get_referrers is linear in the heap's size), where
    # each foreign holder's referents say which arrays it holds.
    shared = [c for c in consts if sys.getrefcount(c.obj) > 2]
    ours = {id(trace.keep), id(trace.consts), *(id(c) for c in consts)}
    held: set = set()
    for r in gc.get_referrers(*(c.obj for c in shared)) if shared else ():
        if id(r) not in ours and not inspect.isframe(r):
            held.update(id(o) for o in gc.get_referents(r))
    return {id(c) for c in consts if id(c.obj) not in held}


def _ident(name: str) -> str:
    s = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_")
    return s if s and not s[0].isdigit() and not keyword.iskeyword(s) else "compiled_" + s


def _perturbed(a: np.ndarray, rng, size: float = 0.01) -> np.ndarray:
    """a * (1 + size u) + size / 10 u, u uniform in [-1, 1] (floating and complex arrays)."""
    if a.dtype.kind not in "fc":
        return a.copy(order="K")
    if a.size > SHUFFLE_MAX:
        # u a random block of prime length repeated: drawing 10^7 random numbers costs more than
        # the rest of the check of a large kernel
        u = rng.uniform(-1.0, 1.0, PERIOD)
        t = np.resize(u * size + 1.0, a.shape)
        t *= a
        t += np.resize(u * (size / 10), a.shape)
        return t.astype(a.dtype, copy=False)
    u = rng.uniform(-1.0, 1.0, a.shape)
    # in place where it can be (large inputs: each pass costs)
    t = np.multiply(u, size)
    t += 1.0
    r = a * t
    u *= size / 10
    r += u
    return r.astype(a.dtype, copy=False)


def _shuffled(a: np.ndarray, rng) -> np.ndarray:
    """a's values in another order (in a's layout): ranks and orderings change, the values stay in
    fn's domain. A single value moves by about half its size instead (round() of it changes). A
    large array is reversed and rotated by a third (a random permutation of 10^7 values costs
    seconds; this order changes every rank but the middle one's as well)."""
    if a.dtype.kind not in "fc":
        return a.copy(order="K")
    if a.size < 2:
        return (a * 1.5 + 0.5).astype(a.dtype)
    out = np.empty_like(a)
    flat = a.reshape(-1)
    if a.size > SHUFFLE_MAX:
        out[...] = np.roll(flat[::-1], a.size // 3 + 1).reshape(a.shape)
    else:
        out[...] = rng.permutation(flat).reshape(a.shape)
    return out


def _doubled(a: np.ndarray, rng) -> np.ndarray:
    """a * 2 (floating and complex arrays): exact, so every comparison of a value with another, or
    with a product or quotient of others by constants, is the traced one (`r < rmax * k / n`)."""
    if a.dtype.kind not in "fc":
        return a.copy(order="K")
    return a * a.dtype.type(2)


SHUFFLE_MAX = 1 << 16
# Relative sizes of the check's perturbation. A guard that fails at the first may be a branch near
# its threshold (`abs(z) < 1.0` at |z| = 0.9993): the second still moves every value 10^7 times
# the check's tolerance, so a traced value baked into the program as a constant still shows.
PERTURBATIONS = (1e-2, 1e-5)
PERIOD = 65521  # (a prime: the pattern lines up with no row length)


def _check(fn, entry: Entry, args_spec, leaves: list, tpos: list, arrays: list) -> None:
    """The program agrees with fn run eagerly (outputs and in-place writes) on perturbed inputs, and
    on the inputs' values shuffled: a value computed from the traced inputs that reached the program
    as a constant (a kernel writing into an array NumPy made, which the tracer cannot see: the
    indices of cummin) differs there."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # (fn and the program on the check's inputs: a warning there, say sqrt of a negative value
        # of the shuffled inputs, is not one the user's call made)
        warnings.simplefilter("ignore")
        _check_on_other_inputs(fn, entry, args_spec, leaves, tpos, arrays)


def _check_on_other_inputs(fn, entry: Entry, args_spec, leaves: list, tpos: list, arrays: list) -> None:
    rng = np.random.default_rng(0)
    for size in PERTURBATIONS:
        try:
            if not _agrees(fn, entry, args_spec, leaves, tpos, [_perturbed(a, rng, size) for a in arrays]):
                # perturbed values outside fn's domain: check the replay on the traced values
                _agrees(fn, entry, args_spec, leaves, tpos, arrays, required=True)
            break
        except GuardFailed as g:
            failed = g
    else:
        # Every perturbation moves a value branched on, or a boolean mask's count (a mask of the
        # values under a fraction of their max): the inputs doubled keep every such comparison and
        # still move each value. fn must run on them: they are the check's only other inputs.
        try:
            agreed = _agrees(fn, entry, args_spec, leaves, tpos, [_doubled(a, rng) for a in arrays])
        except GuardFailed:  # (a value branched on moves with the inputs: not one program)
            agreed = False
        if not agreed:
            raise DataDependent(failed.op, failed.site) from None
    try:
        _agrees(fn, entry, args_spec, leaves, tpos, [_shuffled(a, rng) for a in arrays])
    except GuardFailed:  # (shuffled values may take the other branch: that program is another trace)
        pass


def _agrees(fn, entry: Entry, args_spec, leaves: list, tpos: list, pert: list, required: bool = False) -> bool:
    """The program and fn agree on inputs `pert` (Untraceable if not); False if fn itself fails on
    them (outside its domain), unless `required`."""
    # (a program that writes no input: fn and the program get the arrays themselves, a copy of a
    # large input costs as much as the kernel; should fn write into them on another path, the
    # program's results differ from fn's and the check fails)
    writes = entry.writes_inputs or bool(entry.bumps)
    eager_in = [p.copy(order="K") for p in pert] if writes else list(pert)
    prog_in = [p.copy(order="K") for p in pert] if writes else list(pert)
    try:
        expect, _ = _run(fn, args_spec, leaves, tpos, eager_in)
    except Exception:
        if required:
            raise
        return False
    try:
        got = entry.run([wrap(p) for p in prog_in])
    except GuardFailed:
        raise
    except Exception as e:  # fn ran on these inputs: the program must too
        raise Untraceable(f"the compiled program fails where fn runs ({type(e).__name__}: {e})", "<check>") from None
    e_leaves, e_spec = tree_flatten(expect)
    g_leaves, g_spec = tree_flatten(got)
    if e_spec != g_spec:
        raise Untraceable("the compiled program's outputs differ in structure from fn's", "<check>")
    for e, g in zip(list(e_leaves) + eager_in, list(g_leaves) + prog_in):
        if not _close(e, g):
            raise Untraceable(
                "the compiled program disagrees with fn on other inputs (a value computed from the traced "
                "inputs reached the program as a constant)",
                "<check>",
            )
    return True


def _close(e, g) -> bool:
    if isinstance(e, Tensor) != isinstance(g, Tensor):
        return False
    if isinstance(e, Tensor):
        e, g = e._data, g._data
    if isinstance(e, np.ndarray) or isinstance(g, np.ndarray):
        e, g = np.asarray(e), np.asarray(g)
        if e.shape != g.shape or e.dtype != g.dtype:
            return False
        if e.dtype.kind not in "fc":
            return bool(np.array_equal(e, g))
        if (e == g).all():  # (the same bits, mostly: one pass over large outputs)
            return True
        with np.errstate(invalid="ignore", over="ignore"):
            scale = 1.0 + np.nanmax(np.abs(e), initial=0.0)
            diff = np.abs(e - g)
        same_nan = np.array_equal(np.isnan(e), np.isnan(g))
        return bool(same_nan and (np.nanmax(diff, initial=0.0) <= 1e-12 * scale))
    return e == g
