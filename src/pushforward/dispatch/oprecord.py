"""The runtime record of one op (`Op`, built by the generated module from derivatives.yaml),
the call of its kernel, and NumPy's weak Python scalars (the one place that rule lives).

>>> import pushforward as pf
>>> from pushforward.ops.generated import MUL
>>> run_kernel(MUL, (pf.tensor([2.0]), 3.0), (pf.tensor([2.0])._data, 3.0), ())
tensor([6.])
"""

from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from .batching import RECORDS
from ..errors import OpError, describe, same_kind
from ..engine.outputs import lay_out, unshared
from ..core.lazy import LazyUnsupportedError, is_lazy_array
from ..core.tensor import UNWRITTEN, Tensor, wrap

__all__ = ["Op", "op_error", "run_kernel", "SCALAR_TYPES", "SCALARS", "weak_dtype", "tape_inputs", "scalar_arrays"]

_new = object.__new__
SCALARS = (int, float, complex, bool, np.integer, np.floating, np.complexfloating, np.bool_)
SCALAR_TYPES = frozenset((int, float, complex, bool))


class Op:
    """Runtime description of one op, built by the generated module from derivatives.yaml."""

    __slots__ = (
        "name",
        "kernel",
        "params",
        "kinds",
        "diff",
        "backward",
        "backward_np",
        "jvp",
        "jvp_np",
        "jvp_kind",
        "save",
        "save_fn",
        "n_out",
        "out_diff",
        "kind",
        "differentiable",
        "public",
        "simple",
        "direct",
        "all_diff",
        "jvp_np_reads",
        "grad_embeds",
        "contiguous",
        "argnames",
        "batch",
        "layout",
        "sparsity",
        "curvature",
        "scalar_operator",
    )

    def __init__(
        self,
        name: str,
        kernel: Callable,
        params: tuple,
        kinds: tuple,
        diff: tuple,
        *,
        backward=None,
        backward_np=None,
        jvp=None,
        jvp_np=None,
        jvp_kind: str = "none",
        save: tuple | None = None,
        save_fn: Callable | None = None,
        n_out: int = 1,
        out_diff: tuple = (True,),
        kind: str = "op",
        differentiable: bool = True,
        jvp_np_reads: tuple | None = None,
        grad_embeds: bool = False,
        argnames: tuple = (),
        batch: str = "loop",
        layout: str | None = None,
        sparsity: str | None = None,
        curvature: str | None = None,
        scalar_operator: tuple | None = None,
    ) -> None:
        self.name = name
        self.kernel = kernel
        self.params = params  # names of the Tensor-typed parameters
        self.kinds = kinds  # per tensor param: "T", "T?" or "T[]"
        self.diff = diff  # per tensor param: differentiable?
        self.backward = backward  # (grad, *inputs, result, *args, needs) -> tuple of grads
        # the same formulas over arrays (inputs kept as metadata are given as such), or None
        self.backward_np = backward_np
        self.jvp = jvp  # (*prims, *tangents, result, *args) -> tangent (Tensor ops)
        self.jvp_np = jvp_np  # the same formula over ndarrays, or None
        self.jvp_kind = jvp_kind  # explicit / auto_element_wise / auto_linear / none
        # What the tape node keeps, derived from the backward formulas (codegen/saves.py):
        # save[mask] = (per tensor param: 0 nothing, 1 metadata, 2 the tensor; per output: 0/2,
        # or None when no output is kept), where bit i of mask says differentiable param i needs
        # grad. save_fn(*tensor params, *args) gives the table when it depends on static tests.
        self.save = save if save is not None else ((((0,) * len(params)), None),) * (1 << sum(diff))
        self.save_fn = save_fn
        self.n_out = n_out
        self.out_diff = out_diff
        self.kind = kind  # "op", "view" or "maybe_view"
        self.differentiable = differentiable
        # per tensor param, then the result: read by jvp_np? (None: all are)
        self.jvp_np_reads = jvp_np_reads
        # the backward places grad into zeros of the input's shape, where this view looks
        self.grad_embeds = grad_embeds
        self.public = None  # the public function (set by the generated module)
        RECORDS[name] = self  # batching rules call ops by name
        self.argnames = argnames  # names of the non-Tensor arguments, in the order of `args`
        self.batch = batch  # batching rule from derivatives.yaml (see batching.py)
        # derivatives.yaml's `layout:` (the kernel's result's layout, when not NumPy's), `sparsity:`
        # (the rule of func/sparsity_rules.py, when not derived) and `curvature:` (linear,
        # bilinear, quotient: second derivatives the forward formula does not show)
        self.layout = layout
        self.sparsity = sparsity
        self.curvature = curvature
        # `scalar_operator:` (the operator module's function, the other arguments' defaults): the
        # kernel on two real floating NumPy scalars with those arguments (dispatch/inplace.py)
        self.scalar_operator = (
            None if scalar_operator is None else (getattr(operator, scalar_operator[0]), scalar_operator[1])
        )
        # plain Tensor inputs and one output: the hot paths may skip normalising and flattening
        self.simple = all(k == "T" for k in kinds) and n_out == 1
        # ... and not a view: the classifier's array executors may run it (dispatch.classifier.apply)
        self.direct = self.simple and kind == "op"
        self.all_diff = all(diff)
        # the kernel's result is C-contiguous: so must its tangent be, whichever path computes it
        # (wrapped here, so the other ops' hot paths pay nothing for it)
        self.contiguous = layout == "contiguous"
        if layout:  # (or column-major, LAPACK's: docs/design.md, "Per-output rules")
            self.jvp, self.jvp_np = lay_out(layout, jvp, jvp_np)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def op_error(op: Op, inputs, args, exc: BaseException) -> OpError:
    """An error naming the op, its inputs' shapes/dtypes and NumPy's complaint."""
    msg = str(exc).split("\n")[0]
    shown = ", ".join(describe(v) for v in inputs)
    extra = (", args=" + ", ".join(repr(a) for a in args)) if args else ""
    kind = same_kind(exc)
    if isinstance(exc, NotImplementedError) and any(is_lazy_array(getattr(v, "_data", None)) for v in inputs):
        kind = LazyUnsupportedError  # Dask's own refusal (n-d fancy indexing): the op does not run lazily
    return kind(f"{op.name}: {msg} (inputs: {shown}{extra})")


def run_kernel(op: Op, inputs, datas, args: tuple, raw: bool = False):
    """Kernel on bare arrays (or Python scalars) and a fresh tensor around the result (with `raw`,
    the result as the kernel returns it); NumPy's errors become ours, naming the op and its inputs.
    (The one wrapper of a kernel call; the generated ops' fast paths and bare.py unroll it, for
    the cost of a call on the commonest paths.)"""
    try:
        out = op.kernel(*datas, *args)
    except Exception as e:
        raise op_error(op, inputs, args, e) from None
    if raw:
        return out
    if not isinstance(out, np.ndarray):
        return wrap(out)  # a NumPy scalar, or a Dask array (a lazy tensor)
    t = _new(Tensor)
    if out.base is not None and op.kind == "op":
        out = unshared(out, datas)
    t._data = out
    return t


_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float16): np.dtype(np.complex64)}


def weak_dtype(dtypes: list, v) -> np.dtype:
    """The dtype NumPy gives a Python scalar `v` combined with tensors of `dtypes` (NEP 50)."""
    tv = type(v)
    if not dtypes or tv not in SCALAR_TYPES:
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


def tape_inputs(ins: tuple) -> tuple:
    """The tape takes Tensors: a Python scalar input is wrapped with its weak dtype.
    (Loops, not comprehensions: each of those is a call of its own on the recorded hot path.)"""
    if len(ins) == 2:  # a tensor and a scalar: the common case, unrolled
        a, b = ins
        if type(a) is Tensor and type(b) in SCALAR_TYPES:
            s = wrap(np.asarray(b, dtype=weak_dtype([a._data.dtype], b)))
            s._saved_at = UNWRITTEN  # (nothing can write into it: a node that saves it notes nothing)
            return a, s
        if type(b) is Tensor and type(a) in SCALAR_TYPES:
            s = wrap(np.asarray(a, dtype=weak_dtype([b._data.dtype], a)))
            s._saved_at = UNWRITTEN
            return s, b
    dts = []
    for x in ins:
        if type(x) is Tensor:
            dts.append(x._data.dtype)
    out = []
    for x in ins:
        out.append(x if type(x) is Tensor else wrap(np.asarray(x, dtype=weak_dtype(dts, x))))
    return tuple(out)


def scalar_arrays(datas: list, od: np.ndarray) -> list:
    """Array formulas need arrays: a Python scalar takes the output's dtype (NumPy's weak scalars)."""
    dt = od.dtype if od.dtype.kind in "fc" else None
    if len(datas) == 2:  # (tensor-with-scalar, the commonest: no comprehension, which is a call of its own)
        a, b = datas
        return [
            np.asarray(a, dtype=dt) if type(a) in SCALAR_TYPES else a,
            np.asarray(b, dtype=dt) if type(b) in SCALAR_TYPES else b,
        ]
    out = []
    for v in datas:
        out.append(np.asarray(v, dtype=dt) if type(v) in SCALAR_TYPES else v)
    return out
