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

from ..engine.tangents import levels_of, set_tangent, tangent_of, tangent_requires_grad, zero_tangent
from ..engine.graph import rebase_history, save_entry
from ..engine.saved import before_write
from ..engine.state import STATE
from .classifier import apply
from ..errors import OpError, OpRuntimeTypeError, OpTypeError
from .general import normalize
from .interpret import resolve
from .oprecord import SCALAR_TYPES, Op, run_kernel
from ..core.tensor import _NO_STORAGE, Tensor, FLOATING, mark_ad
from ..engine.registry import DISPATCH

__all__ = ["apply_inplace", "commit"]


def _is_plain_input(v) -> bool:
    return v is None or type(v) in SCALAR_TYPES or (type(v) is Tensor and not v._ad)


def apply_inplace(op: Op, target, inputs: tuple, args: tuple):
    """`target.op_(...)`: compute op(inputs) out of place, then write it into target.

    Values, tape history and tangents are all updated in place, so views of target
    (and their tangents) see the change.
    """
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
    np.copyto(td, r, casting="unsafe")
    st.version += 1


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
