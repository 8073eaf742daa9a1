"""Deferred tangents on untracked levels: a forward formula that runs only if its tangent is read.

In forward-over-reverse (functional.hvp) the function's forward pass computes every
intermediate's tangent, but only the tangents the backward formulas read are ever used: in
``(100 * (b - a**2)**2 + (1 - a)**2).sum()`` the tangents of ``d**2``, ``100 * d2``, ``e**2``,
the sum and the total go unread. On an untracked level (nothing differentiates the tangents)
with grad mode on (a tape is being recorded for a backward pass), an op with an array
formula therefore stores a `Pending` instead of its tangent; reading the tangent
(`forward_ad.tangent_of`) computes it and every pending tangent it depends on, once.

The formula's inputs are kept by reference, so anything that writes into a tensor's memory
(`inplace._write`, the one place that does) first computes every pending tangent of the
live levels (`flush`); a write into `.numpy()`'s array bypasses this, as it bypasses the
version counter that guards the tape's saved tensors. The cost of deferring is memory: a
pending tangent keeps its inputs' arrays alive until it is computed or the level exits.

>>> import pushforward as pf
>>> from pushforward.autograd.functional import hvp
>>> hvp(lambda x: ((1.0 - x) ** 2).sum(), pf.tensor([0.0, 3.0]), pf.tensor([1.0, 1.0]))[1]
tensor([2., 2.])
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .outputs import fit_array, own_array
from .state import STATE
from ..core.tensor import wrap

__all__ = ["Pending", "defer", "flush"]

_UNSET = object()


class Pending:
    """The tangent of one op's single output at one level, not yet computed.

    `tans` holds the inputs' tangents as the formula takes them: a Tensor, None, another
    Pending, or a list of those (a list input).
    """

    __slots__ = ("op", "datas", "tans", "od", "shape", "dtype", "args", "value", "__weakref__")

    def __init__(self, op: Any, datas: list, tans: list, od: Any, args: tuple) -> None:
        self.op = op
        self.shape = od.shape
        self.dtype = od.dtype
        reads = op.jvp_np_reads
        if reads is not None:  # keep only the arrays the formula reads: the others may be freed
            datas = [d if r else None for d, r in zip(datas, reads)]
            if not reads[-1]:
                od = None
        self.datas = datas
        self.tans = tans
        self.od = od
        self.args = args
        self.value = _UNSET

    def force(self) -> Any:
        """The tangent (a Tensor, or None for a zero tangent), computed on first use.

        Iterative, so a long chain of deferred tangents needs no deep recursion.
        """
        stack = [self]
        while stack:
            p = stack[-1]
            if p.value is not _UNSET:
                stack.pop()
                continue
            todo = [q for q in _deps(p.tans) if q.value is _UNSET]
            if todo:
                stack.extend(todo)
                continue
            p._compute()
            stack.pop()
        return self.value

    def _compute(self) -> None:
        op = self.op
        tans = [_array(t) for t in self.tans]
        if all(t is None or (type(t) is list and all(x is None for x in t)) for t in tans):
            # every input tangent turned out zero (e.g. after ceil): so is this one; the formulas
            # are only ever called with at least one tangent (as general._forward does)
            r = None
        else:
            r = op.jvp_np(*self.datas, *tans, self.od, *self.args)
        if r is not None:  # the per-output rules, as the executors' (docs/design.md, "Per-output rules")
            if isinstance(r, np.ndarray):
                r = own_array(r, (*self.datas, *tans, self.od))
            if (
                type(r) is not np.ndarray
                or r.shape != self.shape
                or r.dtype != self.dtype
                or self.dtype.kind not in "fc"
            ):
                r = fit_array(op, r, self.shape, self.dtype)  # (its commonest case, fitting nothing, inline)
            if r is not None:
                r = wrap(r)
        self.value = r
        # the inputs are no longer needed: let their arrays go
        self.datas = self.tans = self.od = self.args = None


def _deps(tans: list):
    for t in tans:
        if type(t) is Pending:
            yield t
        elif type(t) is list:
            yield from (x for x in t if type(x) is Pending)


def _array(t):
    """A formula argument: the tangent's array (None for no tangent), element-wise for lists."""
    if type(t) is list:
        return [_array(x) for x in t]
    if type(t) is Pending:
        t = t.value
    return None if t is None else t._data


def defer(lvl: Any, op: Any, datas: list, tans: list, od: Any, args: tuple) -> Pending:
    """A Pending for `op`'s output at the level `lvl` (a _Level), tracked so a write can flush it."""
    p = Pending(op, datas, tans, od, args)
    pend = lvl.pending
    pend.append(weakref.ref(p))
    if len(pend) > lvl.pending_limit:
        pend[:] = [r for r in pend if (q := r()) is not None and q.value is _UNSET]
        lvl.pending_limit = max(1024, 2 * len(pend))
    return p


def flush() -> None:
    """Compute every pending tangent of this thread's live levels (before memory is written)."""
    for lvl in STATE.levels:
        pend = lvl.pending
        if pend:
            lvl.pending = []
            for r in pend:
                p = r()
                if p is not None:
                    p.force()
