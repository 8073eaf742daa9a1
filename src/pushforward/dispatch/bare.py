"""The fast paths of the generated ops (PyTorch's generated VariableType is the model).

A generated element-wise or reduction op with one or two plain Tensor inputs first runs its
kernel itself when no input needs autodiff (`Tensor._ad`): the bare path. The generated module
declares such an op by its signature and docstring under `@bare_op(RECORD, kernel)`; `bare_op`
builds the public function from one template (`_TEMPLATE`), so that the bare path runs in the
op's own frame (one Python frame per call, as if written out: the closure's cells are read as
fast as globals), and wraps a result that is not a fresh array with `fresh`. Every other call comes here, to `run1` / `run2`:

- a Python scalar next to a Tensor that needs no autodiff (run2): the kernel, NumPy's weak scalar;
- plain Tensors through which no tangent reaches the output (no live level, or an input that
  is no view and carries no tangent of its own: the classifier's test): the kernel and the tape
  node, run_tape's case written out (the recorded forward, and the ops of a tangent formula in the
  combined case, take it);
- one ordinary level, plain tangents: the classifier's arrays case (nothing recorded) and, for one
  input, its combined case (an input requiring grad too), read here in a few tests (`_tangent_array`) and
  handed to their executors, run_arrays and run_combined;
- anything else: dispatch.classifier.apply, the classifier.

Same tests, same errors, same weak Python scalars as dispatch.classifier.run_tape; written out so that the
commonest calls cost fewer Python frames. (No `*args` in these signatures: CPython 3.11 calls a
function with exact positional parameters and defaults faster, ~0.1 us per op.)
"""

from __future__ import annotations

import inspect
import linecache
import os
from typing import Callable

import numpy as np

from ..core.tensor import Tensor
from .classifier import apply, run_arrays, run_combined
from .general import tape_node
from .inplace import OTHER as _OTHER, _apart, storable, store, tangent_array as _tangent_array, view_tangent
from .oprecord import SCALAR_TYPES, Op, op_error
from ..kernels.basic import elementwise_layout
from ..engine.graph import record_plain, scatter_history
from ..engine.outputs import unshared
from ..engine.saved import before_write
from ..engine.state import STATE

__all__ = ["run1", "run2", "fresh", "bare_op", "write_view", "rewritten_lazy"]

_new = object.__new__
_ndarray = np.ndarray


def run1(op: Op, kernel: Callable, x, args: tuple = ()) -> Tensor:
    """op(x, *args): `kernel` on x's array, with its tape node when no tangent reaches the output,
    or its tangent by the executor of the arrays or combined case (else dispatch.classifier.apply).

    >>> import pushforward as pf, numpy as np
    >>> from pushforward.ops.generated import NEG
    >>> run1(NEG, np.negative, pf.tensor([1.0, 2.0], requires_grad=True))
    tensor([-1., -2.], grad_fn=<NegBackward0>)
    """
    if type(x) is not Tensor or type(x._data) is not _ndarray or not op.direct:
        return apply(op, (x,), args)
    d = x._data
    levels = STATE.levels
    lvl = None
    if levels and (x._fw is not None or x._base is not None):  # a tangent may reach the output
        if len(levels) != 1 or not op.diff[0]:
            return apply(op, (x,), args)
        lvl = levels[0]
        grad_on = STATE.grad_enabled
        combined = grad_on and x._requires_grad
        tx = _tangent_array(x, lvl.uid) if not (grad_on and lvl.untracked) else _OTHER
        if tx is _OTHER or (op.jvp if combined else op.jvp_np) is None:
            return apply(op, (x,), args)
        if tx is None:
            lvl = None  # (x sees no tangent: the tape's case)
    try:
        out = kernel(d) if not args else kernel(d, args[0]) if len(args) == 1 else kernel(d, *args)
    except Exception as e:
        raise op_error(op, (x,), args, e) from None
    if type(out) is _ndarray and out.base is None:
        t = _new(Tensor)
        t._data = out
    else:
        t = fresh(out, (d,))
    if lvl is not None:
        return (run_combined if combined else run_arrays)(op, (x,), args, lvl, [d], [tx], False, t)
    if x._requires_grad and op.diff[0] and STATE.grad_enabled and op.differentiable:
        node = record_plain(op, (x,), args, t)
        if node.keep is not None:
            node.save_result((t,))
    return t


def run2(op: Op, kernel: Callable, a, b, args: tuple = ()) -> Tensor:
    """op(a, b, *args), either of a, b possibly a Python scalar (NumPy's weak scalars):
    `kernel` on the arrays when neither needs autodiff; for two Tensors, with the tape node when
    no tangent reaches the output, or the tangent by the arrays case's executor (else
    dispatch.classifier.apply).

    >>> import pushforward as pf, numpy as np
    >>> from pushforward.ops.generated import MUL
    >>> run2(MUL, np.multiply, pf.tensor([1.0, 2.0]), 3.0)
    tensor([3., 6.])
    """
    ta = type(a)
    tb = type(b)
    if ta is Tensor and tb is Tensor:
        da = a._data
        db = b._data
        if type(da) is not _ndarray or type(db) is not _ndarray or not op.direct:
            return apply(op, (a, b), args)
        levels = STATE.levels
        if levels and (a._fw is not None or b._fw is not None or a._base is not None or b._base is not None):
            if len(levels) != 1 or op.jvp_np is None or not op.all_diff:
                return apply(op, (a, b), args)
            lvl = levels[0]
            if STATE.grad_enabled and (lvl.untracked or a._requires_grad or b._requires_grad):
                return apply(op, (a, b), args)
            t1 = _tangent_array(a, lvl.uid)
            t2 = _tangent_array(b, lvl.uid)
            if t1 is _OTHER or t2 is _OTHER:
                return apply(op, (a, b), args)
            if t1 is not None or t2 is not None:
                t = _call2(op, kernel, a, b, da, db, args)
                return run_arrays(op, (a, b), args, lvl, [da, db], [t1, t2], False, t)
        t = _call2(op, kernel, a, b, da, db, args)
        ra = a._requires_grad
        rb = b._requires_grad
        if (ra or rb) and STATE.grad_enabled and op.differentiable:
            node = record_plain(op, (a, b), args, t, (ra, rb)) if op.all_diff else tape_node(op, (a, b), args, (t,))
            if node is not None and node.keep is not None:
                node.save_result((t,))
        return t
    if ta is Tensor and tb in SCALAR_TYPES:
        if not a._ad:
            return _call2(op, kernel, a, b, a._data, b, args)
        return _with_scalar(op, kernel, a, b, a, args)
    if ta in SCALAR_TYPES and tb is Tensor:
        if not b._ad:
            return _call2(op, kernel, a, b, a, b._data, args)
        return _with_scalar(op, kernel, a, b, b, args)
    return apply(op, (a, b), args)


def _with_scalar(op: Op, kernel: Callable, a, b, x: Tensor, args: tuple) -> Tensor:
    """op(a, b) where one of a, b is a Python scalar and the other, x, needs autodiff: when x holds
    one plain tangent at the one ordinary level and nothing is recorded (`x * 0.5` in a loop
    kernel's jvp), the kernel with NumPy's weak scalar and the arrays case's executor; any other
    case is dispatch.classifier.apply's."""
    levels = STATE.levels
    if type(x._data) is not _ndarray or not op.direct or len(levels) != 1 or op.jvp_np is None or not op.all_diff:
        return apply(op, (a, b), args)
    lvl = levels[0]
    if STATE.grad_enabled and (lvl.untracked or x._requires_grad):
        return apply(op, (a, b), args)
    tx = _tangent_array(x, lvl.uid)
    if tx is None or tx is _OTHER:
        return apply(op, (a, b), args)
    if x is a:
        da, db, tans = a._data, b, [tx, None]
    else:
        da, db, tans = a, b._data, [None, tx]
    t = _call2(op, kernel, a, b, da, db, args)
    return run_arrays(op, (a, b), args, lvl, [da, db], tans, True, t)


def _call2(op: Op, kernel: Callable, a, b, da, db, args: tuple) -> Tensor:
    """The kernel of a two-input op on its arrays (or weak scalars), as a fresh tensor."""
    try:
        # (a star call of a Python kernel costs ~0.1 us more than a plain one: one argument is common)
        out = kernel(da, db) if not args else kernel(da, db, args[0]) if len(args) == 1 else kernel(da, db, *args)
    except Exception as e:
        raise op_error(op, (a, b), args, e) from None
    if type(out) is _ndarray and out.base is None:
        t = _new(Tensor)
        t._data = out
        return t
    return fresh(out, (da, db))


def fresh(out, datas) -> Tensor:
    """A tensor around a non-view op's kernel result, as oprecord.run_kernel makes it: a NumPy
    view of an input is copied (engine.outputs.unshared), a NumPy scalar becomes a 0-d array."""
    t = _new(Tensor)
    t._data = (out if out.base is None else unshared(out, datas)) if isinstance(out, np.ndarray) else np.asanyarray(out)
    return t


def write_view(op: Op, x, args: tuple, value, copy_op: Op) -> bool:
    """`op(x, *args).copy_(value)` (x[index] = value, with op getitem) for the commonest cases, by
    the region's arrays: nothing needs the tape (no tensor requires grad; a tensor on the tape:
    _write_recorded) and x holds no tangent or one plain tangent of its own (then the same region of it gets value's tangent, or zeros), value
    a Tensor or a Python scalar. Apply_inplace's and commit's steps written out, without the view
    tensors: the values copy_ writes (`copy_op`'s kernel, where NumPy's own copy would not cast and
    broadcast alike), then inplace.store for the primal and the tangent (_write's checks, the version
    counter). False (nothing written) for every other case, and for bad input, whose error the
    general path raises.

    >>> import pushforward as pf
    >>> from pushforward.ops.generated import GETITEM, _COPY_FROM
    >>> x = pf.zeros(3)
    >>> write_view(GETITEM, x, ((slice(1, None),),), 2.0, _COPY_FROM), x, x._version
    (True, tensor([0., 2., 2.]), 1)
    """
    if type(x) is not Tensor or type(x._data) is not _ndarray:
        return False
    base = x._base
    tan = None  # the tensor of x's tangent (its holder's, for a lazy view tangent) and its array
    if x._ad:
        if x._requires_grad or (base is not None and base._requires_grad):
            return _write_recorded(op, x, args, value, copy_op)
        fw = x._fw
        vsrc = x._vsrc
        if fw is not None or vsrc is not None or (base is not None and base._fw is not None):
            # (the level of x's one tangent: its own, or its holder's for a lazy view tangent)
            held = fw if fw is not None else vsrc[0]._fw if vsrc is not None else None
            if held is None or len(held) != 1 or op.jvp_kind != "auto_linear":
                return False
            (uid,) = held
            found = view_tangent(x, uid) if uid in STATE.by_uid else _OTHER
            if found is None or found is _OTHER:
                return False
            tan, tarr = found
    elif base is not None and base._requires_grad:
        return False  # (a view made before its root required grad: apply_inplace refuses or records)
    if type(value) is Tensor and _rewritten_in_place(op, x, args, value, tan):
        return True
    vt = None
    if type(value) is Tensor:
        vd = value._data
        if type(vd) is not _ndarray:
            return False
        if value._ad:
            if value._requires_grad:
                return False
            vb = value._base
            if value._fw is not None or value._vsrc is not None or (vb is not None and vb._fw is not None):
                if tan is None:
                    return False  # (x gets a zero tangent first: general)
                found = view_tangent(value, uid)
                if found is _OTHER:
                    return False  # (tangents of other levels, or not plain: general)
                vt = None if found is None else found[1]
    elif type(value) in SCALAR_TYPES:
        vd = value
    else:
        return False
    try:
        dst = op.kernel(x._data, *args)
        src = (
            vd
            if type(vd) is _ndarray and vd.shape == dst.shape and vd.dtype == dst.dtype
            else _copied(copy_op, dst, vd)
        )
        if tan is not None:
            tdst = op.kernel(tarr, *args)
            if vt is None:
                tsrc = 0
            elif vt.shape == tdst.shape and vt.dtype == tdst.dtype:
                # (copy_ reads value's tangent before it writes the primal)
                tsrc = vt if _apart(vt, dst) else vt.copy()
            else:
                tsrc = _copied(copy_op, tdst, vt)
    except Exception:
        return False
    store(copy_op, x, dst, src)
    if tan is not None:
        store(copy_op, tan, tdst, tsrc)
    return True


def _write_recorded(op: Op, x: Tensor, args: tuple, value, copy_op: Op) -> bool:
    """write_view's case of a tensor on the tape (its root a non-leaf requiring grad, no level
    live, grad mode on): value a Tensor of the region's shape and dtype, or a Python scalar. The
    region is written (inplace.store's steps), and the root's history becomes view_scatter(old root,
    value) (graph.scatter_history), which is commit's and rebase_history's node without the view
    tensor and copy_'s node (value is what copy_ would make of it). x[i] = x[i] records nothing
    (docs/design.md, "A region written into itself"). False (nothing written) for every other case.

    >>> import pushforward as pf
    >>> from pushforward.ops.generated import GETITEM, _COPY_FROM
    >>> x = pf.zeros(3, requires_grad=True).clone()
    >>> write_view(GETITEM, x, ((slice(1, None),),), 2.0, _COPY_FROM), x
    (True, tensor([0., 2., 2.], grad_fn=<ViewScatterBackward0>))
    """
    root = x._base if x._base is not None else x
    st = STATE
    if (
        st.levels
        or not st.grad_enabled
        or not x._requires_grad
        or not root._requires_grad
        or root._grad_fn is None
        or x._fw is not None
        or root._fw is not None
    ):
        return False  # (a leaf's error, tangents, no_grad: apply_inplace)
    tv = type(value)
    if tv is Tensor:
        vd = value._data
        if (
            type(vd) is not _ndarray
            or value._fw is not None
            or (value._base is not None and value._base._fw is not None)
        ):
            return False
        if _rewritten_in_place(op, x, args, value, None):
            return True
    elif tv not in SCALAR_TYPES:
        return False
    try:
        dst = op.kernel(x._data, *args)
        if tv is Tensor:
            if vd.shape != dst.shape or vd.dtype != dst.dtype:
                return False  # (copy_ casts or broadcasts it: its node)
            src = vd
        else:
            src = _copied(copy_op, dst, value)
    except Exception:
        return False
    if not storable(dst, src):
        return False  # (_write's checks: its errors)
    stg = before_write(x, dst)  # (the old history's nodes keep what the write changes)
    if tv is not Tensor:
        value = _new(Tensor)  # (a constant: the node keeps its shape and dtype only)
        value._data = dst
    # (recorded before the write, which would leave value's history stale: the node keeps no value)
    scatter_history(root, tuple(x._view) + ((op.public, args),), value)
    dst[...] = src
    stg.version += 1
    return True


def rewritten_lazy(op: Op, x, args: tuple, value: Tensor) -> bool:
    """x[i] = x[i] for `value` a view holding no tangent of its own (docs/design.md, "Lazy view
    tangents"), made as `op(x, *args)` with the same index object: the write-back of an augmented
    assignment on an element or slice of a dual tensor. Its values and its tangent are in place
    already (docs/design.md, "A region written into itself"): x's storage and its holder's
    tangent's get their versions bumped after `before_write`, as write_view's steps for it do, in
    fewer calls. It is one only when x is value's holder or has the same holder, which holds one
    plain tangent at a live level, and nothing requires grad; False (nothing done) otherwise.

    >>> import pushforward as pf
    >>> import pushforward.autograd.forward_ad as fwAD
    >>> from pushforward.ops.generated import GETITEM
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(pf.zeros(3), pf.ones(3))
    ...     i = (slice(1, None),)
    ...     rewritten_lazy(GETITEM, x, (i,), x[i]), x._version
    (True, 1)
    """
    holder = value._vsrc[0]
    vsteps = value._view
    if not vsteps:
        return False  # (a view op's result on memory of its own)
    fn, vargs = vsteps[-1]
    if not vargs or vargs[0] is not args[0] or type(x) is not Tensor:  # (the index object first)
        return False
    xfw = x._fw
    if xfw is None:
        xs = x._vsrc
        if xs is None or xs[0] is not holder:
            return False
    elif x is not holder:
        return False
    hfw = holder._fw
    base = x._base
    root = x if base is None else base
    if hfw is None or len(hfw) != 1 or x._requires_grad or value._requires_grad or root._requires_grad:
        return False
    ((uid, tan),) = hfw.items()
    hbase = holder._base
    xsteps = x._view
    if (
        uid not in STATE.by_uid
        or type(tan) is not Tensor
        or tan._ad
        or type(tan._data) is not _ndarray
        or (xfw is None and tan._data is not xs[1])
        or (hbase is not None and hbase._fw is not None and (len(hbase._fw) != 1 or uid not in hbase._fw))
        or not (
            # (_region_of's test, for a view of the root's whole array at once)
            value._base is root and len(vsteps) == 1 and fn is op.public and len(vargs) == len(args) == 1
            if not xsteps
            else _region_of(value, x, op, args)
        )
    ):
        return False  # (view_tangent's other cases: write_view's or the general path's)
    vd, xd = value._data, x._data
    if type(xd) is not _ndarray or type(vd) is not _ndarray or vd.base is not (xd if xd.base is None else xd.base):
        return False
    before_write(x).version += 1
    before_write(tan).version += 1
    return True


def _rewritten_in_place(op: Op, x: Tensor, args: tuple, value: Tensor, tan) -> bool:
    """x[i] = x[i] (docs/design.md, "A region written into itself"): the values are in place
    already, so only the write's other steps run (saved values, versions). False
    (nothing done) when value is not that region (the index object tested first: the test the
    other writes pay)."""
    vs = value._view
    if not vs or not (va := vs[-1][1]) or va[0] is not args[0] or not _in_place_of(op, value, x, args, tan):
        return False
    before_write(x).version += 1
    if tan is not None:
        before_write(tan).version += 1
    return True


def _in_place_of(op: Op, value: Tensor, x: Tensor, args: tuple, tan) -> bool:
    """Is `value` the region `op(x, *args)` itself (a view of x's root by x's steps and this one),
    its tangent (if any of its own) the same region of x's tangent `tan`, so that writing it there
    changes nothing? The index is the same object (as an augmented assignment passes it), on x's
    own array."""
    root = x._base if x._base is not None else x
    if value._requires_grad is not root._requires_grad or not _region_of(value, x, op, args):
        return False
    vd, xd = value._data, x._data
    if type(vd) is not _ndarray or vd.base is not (xd if xd.base is None else xd.base):
        return False
    vfw = value._fw
    if vfw is None:
        # its tangent, if any, is x's through the view when both read one tensor's: value's holder
        # is x or x's holder (a lazy view tangent), or neither has one and both read the root's
        vs = value._vsrc
        if vs is None:
            return x._base is None or (x._fw is None and x._vsrc is None)
        return vs[0] is (x if x._fw is not None else x._vsrc[0] if x._vsrc is not None else None)
    if tan is None or len(vfw) != 1 or x._fw is None:
        return False  # (x without a tangent of its own reads its holder's: `tan` is not x's region)
    (vt,) = vfw.values()
    return type(vt) is Tensor and _region_of(vt, tan, op, args)


def _region_of(t: Tensor, owner: Tensor, op: Op, args: tuple) -> bool:
    """Was view t made as `op(owner, *args)` (its steps: owner's, then this one, the index the same
    object)?"""
    root = owner._base if owner._base is not None else owner
    steps, before = t._view, owner._view
    n = len(before)
    if t._base is not root or len(steps) != n + 1 or (n and steps[:n] != before):
        return False
    fn, vargs = steps[n]
    return fn is op.public and len(vargs) == len(args) and vargs[0] is args[0] and vargs[1:] == args[1:]


def _copied(copy_op: Op, dst: np.ndarray, v):
    """What copy_ writes into array dst from v, an array of another shape or dtype (copy_op's
    kernel's result) or a Python scalar (itself when np.copyto casts it as copy_ does: a number of
    dst's kind, or one NumPy casts to it alike)."""
    if type(v) is not _ndarray:
        tv, k = type(v), dst.dtype.kind
        if tv is bool or (tv is float and k in "fc") or (tv is complex and k == "c"):
            return v
        if tv is int and k in "fc" and -(2**63) <= v < 2**63:
            return v
    return copy_op.kernel(dst, v)


# The public function of an op with a bare path (renamed after the op). `{...}` are filled per op
# (bare_op): its parameters, the test that no input needs autodiff, the kernel's call on the
# arrays, the op's arguments as a tuple. `_op`, `_kernel` (the YAML's kernel, in the YAML's
# argument order) and `_run` (the record's kernel, Tensor arguments first) are the closure's own,
# so ops of one signature share one compiled text (`_maker`).
_TEMPLATE = """\
def _make(_op, _kernel, _run, _write_out):
    def bare_path({params}):
{prologue}        if {test}:
{arrays}            try:
                _r = _kernel({kernel_args})
{layout}            except Exception as _e:
                raise op_error(_op, {tensors}, {args}, _e) from None
            if type(_r) is _ndarray{unshared}:
                _t = _new(Tensor)
                _t._data = _r
                return _t
            return fresh(_r, {datas})
        return run{n}(_op, _run, {call})
    return bare_path
"""
_LAYOUT = """\
                if _r.ndim > 1:  # (a result of fewer dims has one layout)
                    _r = elementwise_layout(_r, {datas})
"""
_SCOPE = {"Tensor": Tensor, "_new": _new, "_ndarray": _ndarray, "op_error": op_error, "fresh": fresh}
_SCOPE.update(run1=run1, run2=run2, elementwise_layout=elementwise_layout)


def bare_op(
    op: Op, kernel: Callable, layout: bool = False, write_out: Callable | None = None
) -> Callable[[Callable], Callable]:
    """Decorator of a generated op's declaration (a `def` with its signature and docstring only):
    the public function, whose body is the bare path (the kernel on the inputs' arrays when they
    are plain Tensors needing no autodiff; `layout`: laid out as torch lays out an element-wise
    result of several inputs) and else `run1` / `run2`. NumPy's name `axis` for `dim` is taken
    when given. A NumPy ufunc's result is never a view, so only other kernels' results are
    checked for one. With `write_out` the declaration's `out=` keyword (torch's) is handed to it:
    the call without out=, its result written into out (ops/composites/out.py).

    >>> import pushforward as pf, numpy as np
    >>> from pushforward.ops.generated import NEG
    >>> @bare_op(NEG, np.negative)
    ... def negate(self):
    ...     \"\"\"-self.\"\"\"
    >>> negate(pf.tensor([1.0, -2.0])), negate.__doc__
    (tensor([-1.,  2.]), '-self.')
    """

    def build(stub: Callable) -> Callable:
        name = stub.__name__
        params = list(inspect.signature(stub).parameters.values())
        tensors = list(op.params)
        args = list(op.argnames)
        alias = "axis" in (p.name for p in params) and "axis" not in args
        has_out = write_out is not None and any(p.name == "out" for p in params)
        prologue = "        dim = dim if axis is None else axis  # (NumPy's name)\n" if alias else ""
        if has_out:
            again = ", ".join(
                p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}" for p in params if p.name != "out"
            )
            prologue = (
                f"        if out is not None:\n            return _write_out({name!r}, out, {_tuple(tensors)}, "
                f"lambda: bare_path({again}))\n" + prologue
            )
        datas = {t: "_" + t for t in tensors}
        sig, star = [], False
        for p in params:
            if p.kind is p.KEYWORD_ONLY and not star:
                sig.append("*")
                star = True
            sig.append(str(p))  # (the default's text; the function gets the stub's default objects)
        pad = "            "
        text = _TEMPLATE.format(
            params=", ".join(sig),
            prologue=prologue,
            test=" and ".join(f"type({t}) is Tensor" for t in tensors)
            + " and not "
            + (f"({tensors[0]}._ad or {tensors[1]}._ad)" if len(tensors) == 2 else f"{tensors[0]}._ad"),
            arrays="".join(f"{pad}{datas[t]} = {t}._data\n" for t in tensors),
            kernel_args=", ".join(
                datas.get(p.name, p.name) for p in params if not (alias and p.name == "axis") and p.name != "out"
            ),
            layout=_LAYOUT.format(datas=", ".join(datas.values())) if layout else "",
            tensors=_tuple(tensors),
            args=_tuple(args),
            unshared="" if isinstance(kernel, np.ufunc) else " and _r.base is None",
            datas=_tuple(list(datas.values())),
            n=len(tensors),
            call=", ".join(tensors + ([_tuple(args)] if args else [])),
        )
        fn = _maker(text)(op, kernel, op.kernel, write_out)
        fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name)  # (tracebacks name the op)
        fn.__defaults__ = stub.__defaults__
        fn.__kwdefaults__ = stub.__kwdefaults__
        fn.__doc__ = stub.__doc__
        fn.__module__ = stub.__module__
        fn.__qualname__ = stub.__qualname__
        return fn

    return build


_MAKERS: dict = {}  # template text -> its `_make` (ops of one signature share the compiled code)


def _maker(text: str) -> Callable:
    """`_make` of the template text, compiled once per text (its source kept for tracebacks and
    inspect.getsource)."""
    make = _MAKERS.get(text)
    if make is None:
        # (in the package's folder, as the generated module's own code was: frames there are not the
        # user's, compiler.recording.user_site)
        filename = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"<bare path {len(_MAKERS)}>")
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        scope = dict(_SCOPE)
        exec(compile(text, filename, "exec"), scope)
        make = _MAKERS[text] = scope["_make"]
    return make


def _tuple(names: list) -> str:
    """`()`, `(a,)` or `(a, b)`."""
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
