"""Sparsity detection: which outputs of f depend on which inputs, for every x.

f runs once on a `PatternTensor`: a tensor that holds the primal value (so shapes and any
value-independent control flow work as usual) and its dependency pattern, a boolean sparse matrix
(elements x inputs). Every op reaching one is handed to the detector (an `Interpreter`,
dispatch/interpret.py), which runs the op on the values and moves the patterns by the rule of the
op's kind (`sparsity_rules`). No derivative is evaluated, so the pattern holds for every x, unless
f reads a value that depends on x (`bool`, `float`, `.item()`, a comparison in an `if`): that
raises `ValueDependentError` (pass `pattern=` to the sparse transforms instead).

>>> import pushforward as pf
>>> f = lambda x: x[1:] * x[:-1]
>>> jacobian_sparsity(f, pf.ones(4)).toarray().astype(int).tolist()
[[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
"""

from __future__ import annotations

from typing import Any, Callable

import weakref

import numpy as np
import scipy.sparse as sp

from ..core.batched import BatchedTensor
from ..core.tensor import Tensor, mark_ad, wrap
from ..dispatch.classifier import apply
from ..dispatch.interpret import Interpreter
from ..dispatch.oprecord import Op
from ..errors import NestingError, OpError, OpTypeError, OpValueError
from .reverse_levels import transform_running
from .patterns import as_bool_csr, broadcast_rows, build, empty, identity, row_union, take_rows, union
from .sparsity_rules import Context, Val, dense_rule, moves_by_index, rule_of

__all__ = ["jacobian_sparsity", "hessian_sparsity", "PatternTensor", "ValueDependentError", "check_one_tensor"]


class ValueDependentError(OpValueError):
    """f read a value that depends on its input while its sparsity pattern was being detected."""


_new = object.__new__


class PatternTensor(Tensor):
    """A tensor with its dependency pattern on the inputs of the function being analysed."""

    _ad = True
    _dep = None  # boolean csr_array (numel, n), or None: depends on nothing
    _taint = False  # its value depends on the input (so reading it is a value-dependent branch)
    _proot = None  # the tensor whose memory this view shares (in-place writes go there)
    _pver = 0  # the root's write count when _dep was last derived from it
    _pids = None

    @property
    def dep(self):
        root = self._proot
        if root is not None and self._pver != root._pver:
            if self._pids is None:
                self._pids = _ids_in(root._data, self._data)[0]
            self._dep = take_rows(root.dep, self._pids)
            self._pver = root._pver
            self._taint = self._taint or root._taint
        return self._dep

    def _live(self) -> bool:
        return self._taint or self.dep is not None

    def _read(self, what: str) -> None:
        if self._live():
            who = _Detector.who[-1] if _Detector.who else "sparsity detection"
            raise ValueDependentError(
                f"{who}: f calls {what} on a tensor whose value depends on the input (shape "
                f"{tuple(self.shape)}): the pattern would hold only for this x, not for every x. "
                "Write the branch without reading values (pf.where, masks) or pass pattern= "
                "to sparse_jacfwd / sparse_jacrev / sparse_hessian"
            )

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        self._read("np.asarray()")
        return np.asarray(self._data, dtype=dtype)

    def __getitem__(self, index: Any) -> Tensor:
        live = _index_tensors(index)
        out = Tensor.__getitem__(self, index)
        if not live:
            return out
        if any(t._data.dtype == np.bool_ for t in live):
            raise ValueDependentError(_mask_message("indexing"))
        # an index computed from the input: any element may be picked (a superset, for every x)
        n = _Detector.contexts[-1].n
        dep = take_rows(row_union(self.dep, n), np.zeros(out._data.size, np.int64))
        return _pattern(out._data, dep, True)

    def __setitem__(self, index: Any, value: Any) -> None:
        if _index_tensors(index):
            raise ValueDependentError(_mask_message("an indexed write"))
        Tensor.__setitem__(self, index, value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        raise NestingError(f"{self._who()}: f takes a gradient of its input; its pattern cannot be detected")

    @staticmethod
    def _who() -> str:
        return _Detector.who[-1] if _Detector.who else "jacobian_sparsity"

    def detach(self) -> Tensor:
        """No derivative flows through, but the value still depends on the input."""
        return _pattern(self._data, None, self._live())

    def __repr__(self) -> str:
        dep = self.dep
        return f"PatternTensor(shape={tuple(self.shape)}, nnz={0 if dep is None else build(dep).nnz})"


def _index_tensors(index) -> list:
    """The pattern tensors with values from the input among the items of an index."""
    items = index if isinstance(index, tuple) else (index,)
    return [it for it in items if isinstance(it, PatternTensor) and it._live()]


def _mask_message(what: str) -> str:
    who = _Detector.who[-1] if _Detector.who else "sparsity detection"
    return (
        f"{who}: {what} with an index computed from the input: which elements it touches depends on "
        "the values, so no pattern holds for every x; write it with pf.where, or pass pattern= to "
        "sparse_jacfwd / sparse_jacrev / sparse_hessian"
    )


# integer and boolean values computed from the input, by id of their array: indexing reads the
# array of a tensor index directly (methods/indexing.py), so an index is recognised by its array
_INDEX_VALUES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _pattern(data: np.ndarray, dep, taint: bool) -> PatternTensor:
    t = _new(PatternTensor)
    t._data = data
    t._dep = dep
    t._taint = taint
    if taint and data.dtype.kind in "iub":
        _INDEX_VALUES[id(data)] = t
    return t


def _ids_in(root: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, bool]:
    """The flat (C order) indices in `root` of the elements of `data`, a view sharing its memory,
    and whether data is a part of each (the real or imaginary part of a complex root).

    Any layout of root (a LAPACK result is column-major, a transpose has swapped strides): its C-order
    indices are written into a shadow buffer at the positions of root's elements in memory (in units
    of data's items), and read back at the positions of data's."""
    partial = root.dtype.kind == "c" and data.dtype.kind == "f" and 2 * data.itemsize == root.itemsize
    if root.dtype != data.dtype and not partial:
        raise OpError(
            f"sparsity detection: an in-place write into a view of a tensor of shape {root.shape} with another "
            f"dtype ({data.dtype} into {root.dtype}) is not supported; write it out of place"
        )
    unit = data.itemsize
    per = root.itemsize // unit  # shadow units per root element
    low = sum(min(0, (n - 1) * st) for n, st in zip(root.shape, root.strides)) // unit
    high = sum(max(0, (n - 1) * st) for n, st in zip(root.shape, root.strides)) // unit + per - 1
    shadow = np.full(high - low + 1 if root.size else 1, -1, dtype=np.int64)

    def place(a: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
        off = (a.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // unit - low
        return np.ndarray(
            shape, dtype=np.int64, buffer=shadow, offset=off * 8, strides=tuple(st // unit * 8 for st in strides)
        )

    flat = np.arange(root.size, dtype=np.int64).reshape(root.shape + (1,))
    place(root, root.shape + (per,), root.strides + (unit,))[...] = flat
    return place(data, data.shape, data.strides).ravel(), partial


class _Detector(Interpreter):
    """Runs ops on the values and moves the patterns (one detection at a time per thread of use)."""

    who: list = []  # the public function running (for error messages)
    contexts: list = []

    def run(self, op: Op, inputs: tuple, args: tuple) -> Any:
        ctx = self.contexts[-1]
        _check_no_transform(op, inputs)
        live = False
        vals, plain = [], []
        diffs = op.diff
        for i, v in enumerate(inputs):
            if type(v) is list or type(v) is tuple:
                vals.append([_val(x, diffs[i]) for x in v])
                plain.append(type(v)(_plain(x) for x in v))
                live = live or any(isinstance(x, PatternTensor) and x._live() for x in v)
            elif isinstance(v, PatternTensor):
                vals.append(Val(v._data, v.dep if diffs[i] else None))
                plain.append(wrap(v._data))
                live = live or v._live()
            else:
                vals.append(_val(v, False))
                plain.append(v)
        args_plain = tuple(_unwrap_args(args)) if args else args
        value_index = False
        if moves_by_index(op):
            found = _value_indexes(args) + [
                v._data for i, v in enumerate(inputs) if isinstance(v, PatternTensor) and v._live() and not diffs[i]
            ]
            value_index = bool(found)
            if op.name != "gather" and any(a.dtype == np.bool_ for a in found):
                raise ValueDependentError(_mask_message(op.name))
        out = apply(op, tuple(plain), args_plain)
        outs = out if type(out) is tuple else (out,)
        datas = [o._data for o in outs]
        rule = dense_rule if value_index else rule_of(op)
        deps = rule(op, vals, args_plain, datas, ctx)
        res = tuple(_pattern(d, dep, live) for d, dep in zip(datas, deps))
        if op.kind != "op" and isinstance(inputs[0], PatternTensor):
            _link_view(inputs[0], res[0])
        return res if type(out) is tuple else res[0]

    def run_inplace(self, op: Op, target, inputs: tuple, args: tuple) -> Any:
        """An in-place op: run it out of place, write value and pattern into the target's root."""
        r = self.run(op, inputs, args)
        if not isinstance(target, Tensor):
            raise OpTypeError(f"{op.name}_: in-place target must be a Tensor, got {type(target).__name__}")
        root = target._proot if isinstance(target, PatternTensor) else target._base
        root = target if root is None else root
        for t in (root, target):
            if type(t) is Tensor:
                t.__class__ = PatternTensor
                mark_ad(t)  # (an instance's own bit would hide the class's)
        if root is not target:
            target._proot = root
        ids, partial = (np.arange(root._data.size), False) if root is target else _ids_in(root._data, target._data)
        np.copyto(target._data, r._data, casting="unsafe")
        new = broadcast_rows(r.dep, r.shape, tuple(target.shape))
        if partial and root.dep is not None:  # (a write into the real or imaginary part keeps the other's)
            old = take_rows(root.dep, ids)
            new = old if new is None else union(old, new)
        root._dep = _replace_rows(root.dep, ids, new, root._data.size, self.contexts[-1].n)
        root._taint = root._taint or r._live()
        root._pver += 1
        _views_follow(root)
        return target


def _check_no_transform(op: Op, inputs: tuple) -> None:
    """A transform inside f (a dual level, a gradient, vmap) differentiates or batches values the detector runs as
    plain arrays: its derivatives, and so the pattern, would be lost. Refused here; the public
    functions then give the dense pattern, which holds for every f (docs/sparse.md)."""
    if transform_running():  # (detection itself runs outside every transform: sparse_* refuse that)
        raise NestingError(f"{PatternTensor._who()}: f runs a transform inside ({op.name} under it)")
    for v in inputs:
        for x in v if type(v) is list or type(v) is tuple else (v,):
            if isinstance(x, Tensor) and (
                x._requires_grad or x._fw is not None or x._vsrc is not None or type(x) is BatchedTensor
            ):
                raise NestingError(
                    f"{PatternTensor._who()}: f runs a transform inside ({op.name} of a tensor with a tangent or a gradient)"
                )


def _replace_rows(dep, ids: np.ndarray, new, size: int, n: int):
    """dep with rows `ids` replaced by the rows of new."""
    keep = np.ones(size, bool)
    keep[ids] = False
    kept = take_rows(dep if dep is not None else empty(size, n), np.where(keep, np.arange(size), -1))
    if new is None:
        return build(kept)
    where = np.full(size, -1, np.int64)
    where[ids] = np.arange(len(ids))
    return build(union(kept, take_rows(new, where)))


def _views_follow(root: Tensor) -> None:
    """Plain views of a root that just became a pattern tensor: they derive their pattern from it."""
    refs = getattr(root._st, "views", None)
    for ref in refs or ():
        v = ref()
        if v is not None and type(v) is Tensor:
            v.__class__ = PatternTensor
            mark_ad(v)
            v._proot = root
            v._pver = -1


def _link_view(src: PatternTensor, out: PatternTensor) -> None:
    if np.may_share_memory(out._data, src._data):
        root = src._proot if src._proot is not None else src
        out._proot = root
        out._pver = root._pver


def _val(v, diff: bool) -> Val | None:
    if v is None:
        return None
    if isinstance(v, PatternTensor):
        return Val(v._data, v.dep if diff else None)
    if isinstance(v, Tensor):
        return Val(v._data, None)
    return Val(v, None)


def _plain(v):
    return wrap(v._data) if isinstance(v, PatternTensor) else v


def _unwrap_args(args) -> list:
    out = []
    for a in args:
        if isinstance(a, PatternTensor):
            out.append(wrap(a._data))
        elif isinstance(a, (tuple, list)):
            out.append(type(a)(_unwrap_args(a)))
        else:
            out.append(a)
    return out


def _value_indexes(args) -> list:
    """The arrays among args (nested) that hold values computed from the input."""
    out = []
    for a in args:
        if isinstance(a, PatternTensor) and a._live():
            out.append(a._data)
        elif type(a) is np.ndarray:
            t = _INDEX_VALUES.get(id(a))
            if t is not None and t._data is a:
                out.append(a)
        elif isinstance(a, (tuple, list)):
            out.extend(_value_indexes(a))
    return out


PatternTensor._interpreter = _Detector()


def _guarded(name: str, what: str) -> Callable:
    """Tensor's `name`, refused on a value that depends on the input."""
    plain = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        self._read(what)
        return plain(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name, _what in (
    ("__bool__", "bool()"),
    ("__float__", "float()"),
    ("__int__", "int()"),
    ("__complex__", "complex()"),
    ("__index__", "an index conversion"),
    ("item", ".item()"),
    ("tolist", ".tolist()"),
    ("numpy", ".numpy()"),
):
    setattr(PatternTensor, _name, _guarded(_name, _what))


def check_one_tensor(x, who: str, what: str = "input") -> Tensor:
    """x as a Tensor (an ndarray is wrapped), or a clear error: the sparse transforms take one tensor."""
    if isinstance(x, np.ndarray):
        return wrap(np.asarray(x))
    if not isinstance(x, Tensor):
        raise OpTypeError(
            f"{who}: f must take one tensor and return one tensor; got {what} of type {type(x).__name__}"
            + (f" with {len(x)} items" if isinstance(x, (tuple, list, dict)) else "")
        )
    return x


def _trace(f: Callable, x, who: str, hessian: bool):
    x = check_one_tensor(x, who)
    n = x.numel()
    ctx = Context(n, hessian)
    px = _pattern(np.array(x._data, copy=True), identity(n), True)
    _Detector.who.append(who)
    _Detector.contexts.append(ctx)
    try:
        y = f(px)
    finally:
        _Detector.who.pop()
        _Detector.contexts.pop()
    y = check_one_tensor(y, who, "an output")
    dep = build(y.dep) if isinstance(y, PatternTensor) else None
    return y, (empty(y.numel(), n) if dep is None else dep), ctx


def jacobian_sparsity(f: Callable, x: Tensor) -> sp.csr_array:
    """The boolean pattern (f(x).numel() x x.numel(), C order) of f's Jacobian, valid for every x.

    >>> import pushforward as pf
    >>> jacobian_sparsity(lambda x: x.roll(1) - x, pf.zeros(3)).toarray().astype(int).tolist()
    [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
    """
    try:
        _, dep, _ = _trace(f, x, "jacobian_sparsity", False)
    except NestingError:
        y = check_one_tensor(f(check_one_tensor(x, "jacobian_sparsity").detach()), "jacobian_sparsity", "an output")
        return _dense(y.numel(), x.numel())
    return as_bool_csr(dep)


def _dense(m: int, n: int) -> sp.csr_array:
    """The pattern of a Jacobian of which nothing is known: every element may be nonzero."""
    return sp.csr_array(np.ones((m, n), dtype=bool))


def hessian_sparsity(f: Callable, x: Tensor) -> sp.csr_array:
    """The boolean pattern (n x n) of the Hessian of a scalar f, valid for every x: the input pairs
    that meet in a nonlinear op (linear ops couple nothing).

    >>> import pushforward as pf
    >>> hessian_sparsity(lambda x: (x[1:] * x[:-1]).sum(), pf.zeros(3)).toarray().astype(int).tolist()
    [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    """
    try:
        y, _, ctx = _trace(f, x, "hessian_sparsity", True)
    except NestingError:
        n = check_one_tensor(x, "hessian_sparsity").numel()
        return _dense(n, n)
    if y.numel() != 1:
        raise OpValueError(f"hessian_sparsity: f must return a single element, got shape {tuple(y.shape)}")
    h = ctx.coupling()
    n = ctx.n
    return as_bool_csr(h if h is not None else empty(n, n))
