"""In-place ops: `target.op_(...)` computes op(...) out of place (by `dispatch.classifier.apply`), then
writes it into the target: values, tape history and tangents, so that views of the target
(and their tangents) see the change. `_write` is the one place that writes into a tensor's
memory (and so the one place that computes the deferred tangents first: pending.flush).

>>> import pushforward as pf
>>> x = pf.tensor([1.0, 2.0])
>>> _ = x.mul_(3.0)
>>> x
tensor([3., 6.])
"""

from __future__ import annotations

import numpy as np

from ..engine.tangents import (
    OTHER,
    levels_of,
    set_tangent,
    tangent_array,
    tangent_of,
    tangent_requires_grad,
    zero_tangent,
)
from ..engine.graph import rebase_history, save_entry
from ..engine.saved import before_write
from ..engine.state import STATE
from .classifier import apply
from ..errors import OpError, OpRuntimeTypeError, OpTypeError
from .general import normalize
from .interpret import resolve
from .oprecord import SCALAR_TYPES, Op, op_error, run_kernel, scalar_arrays
from ..core.tensor import _NO_STORAGE, Tensor, FLOATING, mark_ad
from ..engine.registry import DISPATCH

__all__ = ["apply_inplace", "commit", "storable", "store", "tangent_array", "view_tangent", "OTHER"]

_ndarray = np.ndarray
_float64 = np.float64
_new = object.__new__


def _is_plain_input(v) -> bool:
    return v is None or type(v) in SCALAR_TYPES or (type(v) is Tensor and not v._ad)


def apply_inplace(op: Op, target, inputs: tuple, args: tuple):
    """`target.op_(...)`: compute op(inputs) out of place, then write it into target.

    Values, tape history and tangents are all updated in place, so views of target
    (and their tangents) see the change.
    """
    if type(target) is Tensor and op.direct:
        if target._vsrc is not None and len(inputs) == 2 and _write_lazy_view(op, target, inputs[1], args):
            return target  # (a lazy view tangent's region, written by arrays)
        if _write_arrays(op, target, inputs, args):
            return target  # (a plain Tensor on a NumPy array and plain inputs: nothing to resolve)
    it = resolve((target, *inputs))
    if it is not None:
        return it.run_inplace(op, target, inputs, args)
    if type(target) is not Tensor:
        raise OpTypeError(f"{op.name}_: in-place target must be a Tensor, got {type(target).__name__}")
    if (
        all(_is_plain_input(v) for v in inputs)
        and _is_plain_input(target)
        and (target._base is None or not target._base._requires_grad)
    ):
        r = run_kernel(op, inputs, [v._data if type(v) is Tensor else v for v in inputs], args, raw=True)
        _write(op, target, r)
        return target
    st = STATE
    if st.grad_enabled:
        _check_inplace_allowed(op, target)
        if inputs[0] is target and (_keeps_first(op, inputs, args) or _tangent_on_tape(target)):
            # The backward formula needs self's old value, or the tangent formula, recorded, may keep
            # self's old tangent (torch clones it too): keep them out of the write's way.
            old = target.clone()
            inputs = tuple(old if v is target else v for v in inputs)  # (x.mul_(x): both read the old x)
    r = apply(op, inputs, args)
    commit(op, target, r)
    return target


def view_tangent(x: Tensor, key: int):
    """x's tangent at the live level `key` for a write into it: (tensor, array), the tangent's
    tensor (the owner of its memory, whose version a write bumps) and the array of x's region of
    it; None when x sees no tangent; OTHER for any other case (tangents at other levels, or not
    plain: the general path's). For x's own plain tangent, that tangent and its array; for a view
    made without one (docs/design.md, "Lazy view tangents"), its holder's plain tangent and the
    region its array steps select.

    >>> import pushforward as pf
    >>> import pushforward.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(pf.zeros(3), pf.tensor([1.0, 2.0, 3.0]))
    ...     owner, a = view_tangent(x[1:], STATE.levels[0].uid)
    ...     owner is fwAD.unpack_dual(x).tangent, a
    (True, array([2., 3.]))
    """
    fw = x._fw
    if fw is None:
        a = tangent_array(x, key)
        if a is None or a is OTHER:
            return a
        holder = x._vsrc[0]
        base = holder._base
    else:
        t = fw.get(key) if len(fw) == 1 and x._vsrc is None else None
        if type(t) is not Tensor or t._ad or type(t._data) is not _ndarray:
            return OTHER
        holder, a = x, t._data
        base = x._base
    if base is not None and base._fw is not None and (len(base._fw) != 1 or key not in base._fw):
        return OTHER  # (its base has tangents at other levels: the general path's)
    return holder._fw[key], a


def _write_arrays(op: Op, target, inputs: tuple, args: tuple) -> bool:
    """target.op_(*inputs) by arrays when nothing needs the tape (no tensor requires grad) and at
    most one ordinary level is live, every tangent a plain one of that level: the kernel and the
    array formula (the classifier's arrays case) on the inputs' arrays, the primal and the tangent
    written by _write (apply_inplace's and commit's steps without the out-of-place result tensor
    and the tangent's own copy_). False (nothing written) for any other case, which the general
    path takes: a target that gets its first tangent (its root's zero tangent first), nested or
    vector-mode levels, deferred tangents."""
    if type(target._data) is not _ndarray or target._requires_grad:
        return False
    base = target._base
    if base is not None and base._requires_grad:
        return False
    levels = STATE.levels
    tan = None  # the tensor of the target's tangent (its root's for a view without one) and its array
    if levels:
        if len(levels) != 1 or op.jvp_np is None:
            return False
        uid = levels[0].uid
        found = view_tangent(target, uid)
        if found is OTHER:
            return False
        if found is not None:
            tan, tarr = found
    datas = []
    tans = []
    any_t = scalars = False
    for v in inputs:
        tv = type(v)
        if tv is Tensor:
            if type(v._data) is not _ndarray or v._requires_grad:
                return False
            datas.append(v._data)
            if v is target and tan is not None:
                t = tarr  # (x.op_(x, ...): read once)
            else:
                t = tangent_array(v, uid) if tan is not None or (levels and v._ad) else None
            if t is OTHER:
                return False
            any_t = any_t or t is not None
            tans.append(t)
        elif tv in SCALAR_TYPES:
            datas.append(v)
            tans.append(None)
            scalars = True
        else:
            return False
    if any_t and tan is None:
        return False  # (the target's root gets a zero tangent first: commit's case)
    try:
        r = op.kernel(*datas, *args)
    except Exception as e:
        raise op_error(op, inputs, args, e) from None
    rt = None
    if tan is not None:
        if not op.all_diff:
            tans = [t for t, d in zip(tans, op.diff) if d]
        if scalars:
            datas = scalar_arrays(datas, np.asanyarray(r))
        rt = op.jvp_np(*datas, *tans, r, *args)  # (before the write: it may read the inputs' values)
        if type(rt) is _ndarray and not _apart(rt, target._data):
            rt = rt.copy()  # (an input's tangent on the memory the primal write changes)
    store(op, target, target._data, r)
    if tan is not None:
        store(op, tan, tarr, 0 if rt is None else rt)
    return True


_REAL_SCALARS = frozenset((np.float64, np.float32, np.float16))


def _write_lazy_view(op: Op, target: Tensor, other, args: tuple) -> bool:
    """`target.op_(other)` for a view holding no tangent of its own (docs/design.md, "Lazy view
    tangents"), the element or slice statement of a loop kernel (`a[i, j] += a[i, j - 1]`,
    `a[i, 1:-1] /= 9.0`): _write_arrays' steps for its commonest case written out. One ordinary
    level is live, nothing requires grad, target's holder holds its one plain tangent there (the
    view's tangent is the region `target._vsrc` keeps), `other` a number, a NumPy scalar or a Tensor
    whose tangent is a plain array of that level (or none); the result of target's shape and dtype.
    The kernel and the array formula run on the arrays; the primal region and the tangent region are
    written and their storages' versions bumped (each after `before_write`), as _write_arrays' two
    stores do. False (nothing written) for any other case, the general path's (and its errors:
    a result of another shape or dtype, a read-only or expanded target).

    >>> import pushforward as pf
    >>> import pushforward.autograd.forward_ad as fwAD
    >>> from pushforward.ops.generated import ADD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(pf.zeros(3), pf.tensor([1.0, 2.0, 3.0]))
    ...     _write_lazy_view(ADD, x[1:], x[:2], (1,)), fwAD.unpack_dual(x).tangent
    (True, tensor([1., 3., 5.]))
    """
    holder, td, ta = target._vsrc
    levels = STATE.levels
    hfw = holder._fw
    if len(levels) != 1 or target._requires_grad or hfw is None or len(hfw) != 1 or op.jvp_np is None:
        return False
    uid = levels[0].uid
    tan = hfw.get(uid)
    base = target._base
    bfw = base._fw
    if (
        type(tan) is not Tensor
        or tan._data is not td
        or tan._ad
        or base._requires_grad
        or (bfw is not None and (len(bfw) != 1 or uid not in bfw))
        or not op.all_diff
    ):
        return False  # (the holder's tangent replaced or not plain, other levels: _write_arrays' or general)
    xd, to = target._data, type(other)
    if to is Tensor:
        od = other._data
        if other._requires_grad or type(od) is not _ndarray:
            return False
        ovs = other._vsrc
        if ovs is not None and ovs[0] is holder and ovs[1] is td:
            ot = ovs[2]  # (a lazy view of the same holder: tangent_array's answer, read at once)
        else:
            ot = ta if other is target else tangent_array(other, uid) if other._ad else None
            if ot is OTHER:
                return False
    elif to in SCALAR_TYPES or (isinstance(other, np.generic) and to is not np.object_):
        od, ot = other, None
    else:
        return False
    if type(xd) is not _ndarray or not xd.flags.writeable or 0 in xd.strides:
        return False  # (_write's errors)
    try:
        so = op.scalar_operator if xd.ndim == 0 else None  # (derivatives.yaml's: real floats only)
        if so is not None:
            x0 = xd[()]
            sc = type(x0)
            if sc not in _REAL_SCALARS or (type(od) is _ndarray and od.ndim) or args != so[1]:
                so = None
        if so is not None:
            # an element: its value, the other's and the tangents as NumPy scalars, whose
            # operators cost a tenth of a ufunc's call on 0-d arrays
            o0 = od[()] if type(od) is _ndarray else od
            r = so[0](x0, o0)
            if type(r) is not sc:
                return False  # (another dtype: a cast, _write's, or its error)
            if to is not Tensor and type(o0) is not sc:
                o0 = sc(o0)  # (scalar_arrays': a number in the result's dtype)
            rt = op.jvp_np(x0, o0, ta[()], None if ot is None else ot[()], r, *args)
        else:
            r = op.kernel(xd, od, *args)
            if r.shape != xd.shape or r.dtype != xd.dtype:
                return False  # (a cast or a broadcast, or an error: _write's)
            if to is not Tensor:
                od = np.asarray(od, dtype=r.dtype if r.dtype.kind in "fc" else None)  # (scalar_arrays')
            rt = op.jvp_np(xd, od, ta, ot, r, *args)  # (before the write: it may read the inputs' values)
            if type(rt) is _ndarray and not _apart(rt, xd):
                rt = rt.copy()  # (an input's tangent on the memory the primal write changes)
    except Exception:
        return False  # (the general path raises the op's error)
    st = before_write(target, xd)
    xd[...] = r
    st.version += 1
    st = before_write(tan, ta)
    ta[...] = 0 if rt is None else rt
    st.version += 1
    return True


def _apart(a: np.ndarray, b: np.ndarray) -> bool:
    """Do arrays a and b lie apart in memory? Two arrays that own their memories, or views of two
    such (NumPy's `.base`), do: np.may_share_memory's answer in that common case at a fraction of
    its cost; else its answer."""
    oa = a if a.base is None else a.base
    ob = b if b.base is None else b.base
    if oa is not ob and type(oa) is _ndarray and type(ob) is _ndarray and oa.base is None and ob.base is None:
        return True
    return not np.may_share_memory(a, b)


def _tangent_on_tape(target: Tensor) -> bool:
    """Will target's tangent formula be recorded (target or a tangent of it requires grad), so that
    its nodes may keep target's old tangent?"""
    if not STATE.levels or not levels_of(target):
        return False
    return target._requires_grad or tangent_requires_grad(target)


def _keeps_first(op: Op, inputs: tuple, args: tuple) -> bool:
    """Will the tape node of op(inputs) keep its first input's value (op.save)?"""
    ins = normalize(op, inputs)
    needs = [
        x._requires_grad
        for v, d in zip(ins, op.diff)
        if d and v is not None
        for x in ((v,) if type(v) is Tensor else v)
    ]
    return True in needs and save_entry(op, ins, args, needs)[0][0] == 2


def _check_inplace_allowed(op: Op, target: Tensor) -> None:
    root = target._base if target._base is not None else target
    if root._requires_grad and root._grad_fn is None:
        what = "a view of a leaf Variable" if target._base is not None else "a leaf Variable"
        raise OpRuntimeTypeError(
            f"{op.name}_: {what} that requires grad is being used in an in-place operation "
            "(use torch-style `with pf.no_grad():` to modify it)"
        )


def _write(op: Op, target: Tensor, r) -> None:
    """Write array r into target's memory (broadcast, same-kind cast) and bump the version.

    Every write into a tensor's memory, and every bump of a storage's version, goes through here
    (or calls `before_write` first, then bumps: promotion, the compiler's runner): the deferred
    tangents and the tape's saved values read that memory (docs/design.md, "Overwritten saved
    values")."""
    td = target._data
    r = np.asanyarray(r)  # (an ndarray subclass stays: compiler/recording.py)
    if r.shape != td.shape:
        try:
            shape = np.broadcast_shapes(r.shape, td.shape)
        except ValueError:
            shape = None
        if shape != td.shape:
            raise OpError(
                f"{op.name}_: output with shape {td.shape} doesn't match the broadcast shape "
                f"{shape if shape is not None else r.shape} of its inputs"
            )
    if r.dtype != td.dtype and not np.can_cast(r.dtype, td.dtype, casting="same_kind"):
        raise OpError(f"{op.name}_: result type {r.dtype} can't be cast to the desired output type {td.dtype}")
    if not td.flags.writeable:
        raise OpError(f"{op.name}_: the tensor's memory is read-only; clone() it first")
    if 0 in td.strides and td.size > 1 and any(s == 0 and n > 1 for s, n in zip(td.strides, td.shape)):
        raise OpError(
            f"{op.name}_: unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location (an expanded view); clone() it first"
        )
    st = before_write(target)
    if type(td) is _ndarray and type(r) is _ndarray:
        td[...] = r  # (np.copyto's cast and broadcast, after the checks above; a third of its cost)
    else:
        np.copyto(td, r, casting="unsafe")  # (an ndarray subclass: compiler/recording.py sees the call)
    st.version += 1


def storable(dst: np.ndarray, src) -> bool:
    """`store`'s common case: src an array or NumPy scalar of dst's shape and dtype, or a float
    or 0 into a floating dst; dst a writeable NumPy array with no repeated element (none of
    _write's checks can fail)."""
    ts = type(src)
    return (
        type(dst) is _ndarray
        and (
            ((ts is _ndarray or ts is _float64) and src.shape == dst.shape and src.dtype == dst.dtype)
            or ((ts is float or (ts is int and src == 0)) and dst.dtype.kind in "fc")
        )
        and dst.flags.writeable
        and 0 not in dst.strides
    )


def store(op: Op, owner: Tensor, dst: np.ndarray, src) -> None:
    """Write src into array dst, owner's memory or a region of it: `_write`'s checks and steps,
    its commonest case (`storable`) written out.

    >>> import pushforward as pf
    >>> from pushforward.ops.generated import _COPY_FROM
    >>> x = pf.zeros(3)
    >>> store(_COPY_FROM, x, x._data[1:], 2.0); x, x._version
    (tensor([0., 2., 2.]), 1)
    """
    if storable(dst, src):
        st = before_write(owner, dst)
        dst[...] = src
        st.version += 1
        return
    region = _new(Tensor)  # (a tensor of the region on its owner's storage, for _write: no view links)
    region._data = dst
    st = owner._st
    region._st = st if st is not _NO_STORAGE else owner._storage()
    _write(op, region, src)


def commit(op: Op, target: Tensor, r: Tensor) -> None:
    """Write out-of-place result r into target: data, tape history, tangents."""
    _write(op, target, r._data)
    st = STATE
    if st.grad_enabled and (
        r._requires_grad or target._requires_grad or (target._base is not None and target._base._requires_grad)
    ):
        rebase_history(target, r)
        _views_follow(target)
    if target._data.dtype.kind not in FLOATING:
        return  # an integer or bool tensor never carries a tangent (docs/design.md, "Tangents")
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
    # views of a detach()ed alias share the storage but not the root: they stay cut from the tape
    keep = []
    for ref in st.views:
        v = ref()
        if v is None:
            continue
        if v._base is not root:
            keep.append(ref)
        elif not v._requires_grad:
            v._requires_grad = True
            mark_ad(v)
            v._view_version = -1  # stale: edge()/grad_fn replay the view from the root
    st.views = keep or None


def _zero_tangent_for(target: Tensor, level: int) -> Tensor:
    """Writing a dual into a non-dual tensor gives its root a zero tangent first (docs/design.md, "In-place")."""
    root = target._base
    masked = target._fw is not None and level in target._fw  # an unpacked primal: a lens of its own
    if root is None or masked:
        z = zero_tangent(target, level)
        set_tangent(target, level, z)
        return z
    set_tangent(root, level, zero_tangent(root, level))
    return tangent_of(target, level)


# (the batching interpreter writes into the physical tensors through this: dispatch/interpret.py)
DISPATCH.fill({"apply_inplace": apply_inplace})
