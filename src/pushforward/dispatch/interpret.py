"""The resolver: which machinery runs an op call, decided in one place (`resolve`).

A call whose inputs are all plain tensors (NumPy-backed `Tensor`s, Python scalars, lists of them)
runs on the RFC-0007 engine (the classifier and its executors, the general executor). Any other
kind of tensor among the inputs is an *interpreter*'s: the interpreter runs the call by its own
rules, and usually hands the call on, one kind unwrapped, to the dispatcher again. The kinds:

=============  ==============================================  =========================================
trace level    the tensors                                     the interpreter
=============  ==============================================  =========================================
interpreted    a transform's Tensor subclass whose class       its own (`func.series`: Taylor series of
               attribute `_interpreter` is an `Interpreter`    `func.jet`; `func.sparsity`: dependency
                                                               patterns)
lazy           tensors backed by a Dask array                  `LAZY`: the rest of the dispatch under the
                                                               compute guard (`dispatch.lazyops`)
batch          `BatchedTensor` (vmap, batched tangents)        `BATCHING`: the op's batching rule, then
                                                               the dispatch on the physical tensors
                                                               (`dispatch.batching`)
=============  ==============================================  =========================================

When a call mixes kinds, the level listed first in `TRACE_LEVELS` runs first (`resolve`), and
the interpreter of the next one is found when its interpreter dispatches the unwrapped call
(`resolve(values, after=level)`). A new transform is a Tensor subclass with an `_interpreter`
(docs/design.md, "Adding a transform"); the fast paths test `type(x) is Tensor`, so a subclass
never takes them, and it must keep `_ad = True` so that no bare-kernel path reads its array.

An interpreter sees each op call as the engine's record (`Op`: name, kind, kernel, formulas), the
inputs as given (tensors, scalars, lists) and the op's other arguments. An interpreted tensor with a
`_like_of()` method gets `zeros_like` & co. of the plain tensor it returns (core/creation.py).

>>> import pushforward as pf
>>> resolve((pf.tensor([1.0]), 2.0)) is None
True
>>> resolve((pf.func.vmap(lambda x: x)(pf.ones(2, 1)),)) is None  # (a result: unwrapped again)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.batched import BatchedTensor
from ..core.lazy import is_lazy_array
from ..core.tensor import Tensor
from ..engine.registry import DISPATCH
from ..errors import OpError
from .batching import run_batched, run_batched_inplace
from .lazyops import inplace_unsupported, refuse_denied, run_lazy
from .oprecord import Op

__all__ = ["Interpreter", "resolve", "TRACE_LEVELS", "BATCHING", "LAZY"]

# the kinds of tensor, in the order their interpreters run when one call mixes them
TRACE_LEVELS = ("interpreted", "lazy", "batch")
_RANK = {name: i for i, name in enumerate(TRACE_LEVELS)}
_ndarray = np.ndarray


class Interpreter:
    """What a kind of tensor points at: how it runs an op and an in-place op. `level` is its
    trace level: its name in `TRACE_LEVELS` (a transform's own tensor subclass: "interpreted")."""

    level = "interpreted"

    def run(self, op: Op, inputs: tuple, args: tuple) -> Any:
        """op(*inputs, *args) under this interpreter's rules."""
        raise NotImplementedError(f"{type(self).__name__} does not define how ops run")

    def run_inplace(self, op: Op, target, inputs: tuple, args: tuple) -> Any:
        """`target.op_(...)`: by default refused, naming the op (an interpreter may implement it)."""
        raise OpError(f"{op.name}_: in-place ops are not supported by {type(self).__name__}; write it out of place")


class _Lazy(Interpreter):
    """Dask-backed tensors: the call runs on (the rest of the dispatch, under the compute guard:
    nothing computes before `pf.compute`); ops Dask cannot run are refused by name."""

    level = "lazy"

    def run(self, op: Op, inputs: tuple, args: tuple) -> Any:
        refuse_denied(op)
        return run_lazy(op, inputs, args, DISPATCH.run_general, "lazy")

    def run_inplace(self, op: Op, target, inputs: tuple, args: tuple) -> Any:
        raise inplace_unsupported(op.name)  # (Dask arrays are immutable)


class _Batching(Interpreter):
    """`BatchedTensor`s (vmap and vector mode): the op's batching rule, then the dispatch again on
    the physical tensors."""

    level = "batch"

    def run(self, op: Op, inputs: tuple, args: tuple) -> Any:
        return run_batched(op, inputs, args, DISPATCH.run_general)

    def run_inplace(self, op: Op, target, inputs: tuple, args: tuple) -> Any:
        return run_batched_inplace(op, target, inputs, args, DISPATCH.apply_inplace)


LAZY = _Lazy()
BATCHING = _Batching()
BatchedTensor._interpreter = BATCHING  # (the class sits in core, below the dispatch layer)


def _kind(v, floor: int) -> Interpreter | None:
    """The interpreter of one input (None for a plain tensor, a scalar, None) above level `floor`."""
    tv = type(v)
    if tv is Tensor:
        d = v._data
        return LAZY if type(d) is not _ndarray and is_lazy_array(d) else None
    it = getattr(tv, "_interpreter", None)
    if it is BATCHING and floor < _RANK["lazy"]:  # a batch of lazy tensors: the guard first
        d = v._phys.__dict__.get("_data")
        if d is not None and type(d) is not _ndarray and is_lazy_array(d):
            return LAZY
    return it


def resolve(values, after: str | None = None) -> Interpreter | None:
    """The interpreter that runs a call with inputs `values` (list inputs looked into): the one of
    the first level in `TRACE_LEVELS` among them (after the level `after`, when an interpreter
    hands the call on), or None: the RFC-0007 engine runs it."""
    found, rank = None, len(TRACE_LEVELS)
    floor = -1 if after is None else _RANK[after]
    for v in values:
        tv = type(v)
        if tv is list or tv is tuple:
            it = resolve(v, after)
        elif tv is Tensor and type(v._data) is _ndarray:
            continue
        else:
            it = _kind(v, floor)
        if it is not None:
            r = _RANK[it.level]
            if floor < r < rank:
                found, rank = it, r
    return found
