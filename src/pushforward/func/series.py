"""Taylor series tensors: the tensors `jet` runs a function on, and the interpreter of their ops.

A `Series` holds the normalised Taylor coefficients x_0..x_K of x(t) = sum_k x_k t^k (each an
ordinary tensor, so a coefficient may carry tangents, require grad or be batched: that is how jet
composes with dual levels, grad and vmap). It is an interpreted tensor (dispatch/interpret.py):
every op that reaches one runs by its Taylor rule (docs/taylor.md, "Rules"):

- the op's `taylor:` rule in derivatives.yaml (ops/formulas/taylor.py), else
- a linear op (`result: auto_linear`): each coefficient through the op's forward formula, else
- the rule derived from the op's forward formula J: y' = J(x, x'), evaluated on series of order
  K - 1 (the formula's ops run by this interpreter again, one order lower) gives y_K = (y')_{K-1} / K.

Non-differentiable ops and ops with zero derivative give plain (constant) tensors.

>>> import pushforward as pf
>>> x = Series([pf.tensor(0.0), pf.tensor(1.0), pf.tensor(0.0)], SeriesTag())
>>> [float(c) for c in pf.sin(x).coefficients]
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import numpy as np

import sys

from ..core.batched import BatchedTensor, new_batch_level, values_of
from ..core.creation import zeros_like
from ..core.tensor import Size, Tensor
from ..dispatch.classifier import apply
from ..dispatch.interpret import Interpreter
from ..dispatch.oprecord import SCALARS, Op
from ..engine.outputs import in_layout_of, own_tensor
from ..engine.state import STATE
from ..engine.tangents import levels_of
from ..errors import NestingError, OpError
from ..ops import generated as G
from ..ops.formulas import taylor as rules

__all__ = ["Series", "SeriesTag", "TaylorInterpreter", "SeriesArrayError"]


class SeriesArrayError(NotImplementedError):
    """Code read a Taylor series' array directly: it cannot see the higher coefficients."""


class SeriesTag:
    """One jet call: its series carry it; ops on series of the same call share a cache (a derived
    rule asks for the same lower-order series several times)."""

    __slots__ = ("cache", "depth", "outer_levels", "inner_batch")

    def __init__(self) -> None:
        self.cache: dict = {}
        self.depth = 0  # > 0 while a derived rule evaluates a forward formula (not the user's code)
        # the dual levels around the jet call: a tangent at a level opened inside it (a jvp inside the
        # jet'ed function) is not carried by the coefficients (see _scan)
        self.outer_levels = frozenset(STATE.by_uid)
        # batch levels from this one on are opened inside the jet call (a vmap inside f): the rules
        # run on vmap's physical tensors only for an enclosing vmap
        self.inner_batch = new_batch_level()


class Series(Tensor):
    """The normalised Taylor coefficients [x_0, ..., x_K] (K >= 1) of one tensor-valued curve."""

    _ad = True  # never a bare array: the dispatcher hands every op to the interpreter

    def __init__(self, coefficients: list, tag: SeriesTag) -> None:  # noqa: D107 - see class docstring
        self._c = coefficients
        self._tag = tag

    @property
    def coefficients(self) -> list:
        return list(self._c)

    @property
    def order(self) -> int:
        return len(self._c) - 1

    @property
    def _data(self):
        where = sys._getframe(1).f_code.co_name
        raise SeriesArrayError(
            f"jet: {where} reads a tensor's array directly, which a Taylor series cannot give "
            "(it would see the primal only and drop the higher coefficients)"
        )

    @property
    def shape(self) -> tuple:
        return tuple(self._c[0].shape)

    @property
    def dtype(self):
        return self._c[0].dtype

    @property
    def ndim(self) -> int:
        return self._c[0].ndim

    @property
    def itemsize(self) -> int:
        return self._c[0].itemsize

    @property
    def size(self) -> Size:
        """The element count, callable as torch's size() / size(dim) (docs/design.md, "x.size")."""
        return Size(self.shape)

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self._c[0].numel()

    def element_size(self) -> int:
        return self.itemsize

    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    def __len__(self) -> int:
        return len(self._c[0])

    def contiguous(self) -> "Series":
        return Series([c.contiguous() for c in self._c], self._tag)

    def is_contiguous(self) -> bool:
        return all(c.is_contiguous() for c in self._c)

    def detach(self) -> "Series":
        """A constant series (the primal, detached; zero above): detach cuts every derivative, as it
        cuts tangents (nested dual levels give the same). Still a series, so that reverse mode
        inside jet (grad's fresh leaves are detached inputs) is refused rather than seeing a constant."""
        c0 = self._c[0].detach()
        return Series([c0] + [zeros_like(c0) for _ in self._c[1:]], self._tag)

    def requires_grad_(self, requires_grad: bool = True) -> "Series":
        raise NotImplementedError(
            "jet: reverse mode inside jet (grad, vjp or backward of a function of a Taylor series) is not "
            "supported yet; put jet inside grad instead (grad of a function that calls jet)"
        )

    def _like_of(self) -> Tensor:
        """What `zeros_like(series)` and the other `*_like` copy shape and dtype from (core/creation)."""
        return self._c[0]

    def __repr__(self) -> str:
        return f"Series(order={self.order}, primal={self._c[0]!r})"

    __str__ = __repr__


class TaylorInterpreter(Interpreter):
    """Runs each op on Series inputs by its Taylor rule (see the module docstring)."""

    def run(self, op: Op, inputs: tuple, args: tuple):
        tag, K = _scan(op, inputs)
        xs = [_coefficients(op, i, v, K) for i, v in enumerate(inputs)]
        if not op.differentiable or op.jvp_kind in ("none", "zero"):
            return _constant(op, xs, args)
        # (a view op is not cached: each call's result must be a view of its input, never a copy)
        key = _key(op, xs, args) if op.kind == "op" else None
        hit = tag.cache.get(key) if key is not None else None
        if hit is not None:
            return _owned(hit[0]) if tag.depth == 0 else hit[0]
        out, derived = _run_rule(op, xs, args, K, tag)
        if type(out) is dict:  # a rule that gives the series of sibling ops too (sin and cos)
            for name, coeffs in out.items():
                sib = _key(getattr(G, name.upper()), xs, args) if key is not None else None
                res = _output(coeffs, tag)
                if sib is not None:
                    tag.cache[sib] = (res, xs)
            out = out[op.name]
        if op.kind == "op" and G.TAYLOR_RULES.get(op.name) in _MAY_SHARE:
            out = _unshared(out, xs, op.n_out)
        res = tuple(_output(c, tag) for c in out) if op.n_out > 1 else _output(out, tag)
        res = _plain_outputs(op, res)
        if op.batch == "elementwise" and op.n_out == 1 and op.kind == "op":
            # (a view's coefficients stay views of its input's: laying them out anew would copy them,
            # and an in-place write through the view would not reach the input)
            res = _laid_out_as_eager(op, xs, args, res)
        if key is not None:
            tag.cache[key] = (res, xs)  # (the inputs are kept alive: the key holds their ids)
        return _owned(res) if derived and tag.depth == 0 else res

    def run_inplace(self, op: Op, target, inputs: tuple, args: tuple):
        """`target.op_(...)` on a series: the op out of place, then each coefficient written into the
        target's (so views of the target, whose coefficients are views of its, see the write)."""
        if type(target) is not Series:
            raise NotImplementedError(
                f"jet: in-place {op.name}_ writing a Taylor series into a tensor that is not one (shape "
                f"{tuple(target.shape)}) is not supported yet; write it out of place (e.g. pf.where or pf.cat)"
            )
        if any(c.requires_grad for c in target._c):
            # the rule's recorded nodes may keep the target's coefficients, which the write below
            # changes: the rule reads copies (as the engine's in-place ops read a clone)
            inputs = tuple(Series([c.clone() for c in v._c], v._tag) if v is target else v for v in inputs)
        r = self.run(op, inputs, args)
        K = target.order
        new = _lower(r, K) if type(r) is not Series or r.order >= K else _lower(r, r.order) + [None] * (K - r.order)
        for c, v in zip(target._c, new):
            if v is None:
                c.zero_()
            else:
                c.copy_(v)
        target._tag.cache.clear()  # cached results may read the coefficients just written
        return target


def _constant(op: Op, xs: list, args: tuple):
    """An op whose result does not move with its inputs (comparisons, argmax, floor): on x_0 only.
    A non-differentiable op with a floating result is refused rather than taken as constant."""
    out = apply(op, tuple(rules._coefficient(op, i, x, 0) for i, x in enumerate(xs)), args)
    if not op.differentiable and any(o.dtype.kind in "fc" for o in (out if op.n_out > 1 else (out,))):
        raise NotImplementedError(
            f"jet: {op.name} is not differentiable, so it has no Taylor rule (its floating result would "
            "wrongly be taken as constant along the curve)"
        )
    return out


def _owned(res):
    """A result given to the user's code that owns every coefficient: cached results and a derived
    rule's lower coefficients are shared, and the user may write the result in place."""
    if type(res) is tuple:
        return tuple(_owned(r) for r in res)
    if type(res) is Series:
        return Series([_copy(c) for c in res._c], res._tag)
    return _copy(res) if isinstance(res, Tensor) else res


def _copy(c):
    """A copy of coefficient c in c's own memory layout (clone's is C order), so that a reshape of
    the result views or copies as it does eagerly (docs/design.md, "Memory layout")."""
    if type(c) is Tensor and type(c._data) is np.ndarray and not c._data.flags.c_contiguous:
        return in_layout_of(c._data, c)
    return c.clone()


def _run_rule(op: Op, xs: list, args: tuple, K: int, tag: SeriesTag) -> tuple:
    """(the output's coefficients, whether the derived rule gave them)."""
    name = G.TAYLOR_RULES.get(op.name)
    if name is not None:
        try:
            out = getattr(rules, name)(op, xs, args, K)
        finally:
            rules.release_stacks()
        if out is not None:
            return out, False
    if op.jvp_kind == "auto_linear":
        return rules.series_linear(op, xs, args, K), False
    if op.jvp is None:
        raise NotImplementedError(f"jet: no Taylor rule for {op.name} (it has no forward formula to derive one from)")
    tag.depth += 1
    try:
        return _derived(op, xs, args, K, tag), True
    except SeriesArrayError as e:
        raise NotImplementedError(
            f"jet: no Taylor rule for {op.name}: its forward formula cannot run on series ({e})"
        ) from None
    finally:
        tag.depth -= 1


def _derived(op: Op, xs: list, args: tuple, K: int, tag: SeriesTag):
    """y_K from the forward formula on series of order K - 1: y' = J(x, x'), y_K = (y')_{K-1} / K;
    y_0..y_{K-1} are the op on the inputs of order K - 1 (this interpreter again, or plain at K = 1)."""
    lo = [_input_at_order(op, i, x, K - 1, tag, _truncated) for i, x in enumerate(xs)]
    y_lo = apply(op, tuple(lo), args)
    tans = [_input_at_order(op, i, x, K - 1, tag, _derivative) for i, x in enumerate(xs) if op.diff[i]]
    outs = y_lo if op.n_out > 1 else (y_lo,)
    r = op.jvp(*lo, *tans, *outs, *args)
    rs = r if op.n_out > 1 else (r,)
    ys = []
    for y, d in zip(outs, rs):
        c = _lower(y, K - 1) + [None]
        top = _coefficient_of(d, K - 1)
        c[K] = None if top is None else top / K
        ys.append(c)
    return ys if op.n_out > 1 else ys[0]


def _truncated(x: list, m: int) -> list | None:
    return x[: m + 1] if len(x) > 1 else None


def _derivative(x: list, m: int) -> list | None:
    """The coefficients of x'(t) to order m: (j + 1) x_{j+1}."""
    if len(x) == 1:
        return None
    return [x[j + 1] * (j + 1) if j else x[1] for j in range(m + 1)]


def _input_at_order(op: Op, i: int, x, m: int, tag: SeriesTag, how):
    """Input i as a series of order m (`how` picks the curve: x itself or x'), a plain tensor at
    order 0, or the constant itself (x) or None (x') for a constant input."""
    if x is None:
        return None
    if op.kinds[i] == "T[]":
        return [_one_at_order(s, m, tag, how) for s in x]
    return _one_at_order(x, m, tag, how)


def _one_at_order(x: list, m: int, tag: SeriesTag, how):
    c = how(x, m)
    if c is None:
        return x[0] if how is _truncated else None
    return c[0] if m == 0 else Series(c, tag)


def _lower(y, m: int) -> list:
    """y's coefficients 0..m as a list (a plain tensor is a constant: zeros above 0)."""
    if type(y) is Series:
        return list(y._c[: m + 1])
    return [y] + [None] * m


def _coefficient_of(d, k: int):
    if d is None:
        return None
    if type(d) is Series:
        if len(d._c) <= k:
            raise OpError(f"jet: a forward formula gave a series of order {d.order} where order {k} was needed")
        return d._c[k]
    return d if k == 0 else None


def _output(coeffs: list, tag: SeriesTag):
    """A Series from a rule's coefficients (zeros for None, fitted to y_0's shape and dtype); the
    plain y_0 when the output is constant (an integer result, or no coefficient but y_0)."""
    y0 = coeffs[0]
    if not isinstance(y0, Tensor) or y0.dtype.kind not in "fc" or all(c is None for c in coeffs[1:]):
        return y0
    return Series([y0] + [_fit(c, y0) for c in coeffs[1:]], tag)


def _fit(c, y0: Tensor) -> Tensor:
    if c is None:
        return zeros_like(y0)
    if not isinstance(c, Tensor):
        c = zeros_like(y0) + c
    if tuple(c.shape) != tuple(y0.shape):
        c = c.expand(tuple(y0.shape)).clone()
    if c.dtype != y0.dtype:
        if c.dtype.kind == "c" and y0.dtype.kind != "c":
            c = c.real
        if c.dtype != y0.dtype:
            c = c.to(y0.dtype)
    return c


# rules that may give back an input's coefficient object (the others make every coefficient anew)
_MAY_SHARE = (None, "series_linear", "series_pow", "series_prod", "series_cumprod")


def _unshared(out, xs: list, n_out: int):
    """An op that is not a view owns its result (docs/design.md, "Per-output rules"): a coefficient
    that shares memory with an input's coefficient (a linear formula that returns its tangent) is
    copied, so that an in-place write into the result cannot reach the input."""
    arrays = []
    for x in xs:
        for s in (x if x and type(x[0]) is list else [x]) if x is not None else ():
            arrays.extend(d for d in (values_of(c) for c in s if isinstance(c, Tensor)) if type(d) is np.ndarray)
    outs = out if n_out > 1 else (out,)
    fixed = [[own_tensor(c, arrays) if isinstance(c, Tensor) else c for c in o] for o in outs]
    return fixed if n_out > 1 else fixed[0]


def _laid_out_as_eager(op: Op, xs: list, args: tuple, res):
    """Every coefficient of an element-wise result laid out in memory as the eager op lays out its
    result (its kernel on the inputs' y_0: docs/design.md, "Memory layout"), so a later reshape
    copies or views all coefficients as eagerly, and an in-place write through it reaches them all
    or none. (The rules compute with ops whose layouts need not be the op's own.)"""
    if type(res) is not Series or type(res._c[0]) is not Tensor or type(res._c[0]._data) is not np.ndarray:
        return res
    ins = [rules._coefficient(op, i, x, 0) for i, x in enumerate(xs)]
    if any(isinstance(x, Tensor) and type(x) is not Tensor for x in ins):
        return res  # a batch of coefficients (vmap): no memory layout of one example to follow
    want = op.kernel(*[x._data if type(x) is Tensor else x for x in ins], *args)
    if type(want) is not np.ndarray:
        return res
    out = []
    for c in res._c:
        if type(c) is Tensor and type(c._data) is np.ndarray and c._data.strides != want.strides:
            c = in_layout_of(want, c)
        out.append(c)
    return Series(out, res._tag)


def _plain_outputs(op: Op, res):
    """Outputs the op declares non-differentiable are constants: their y_0 only."""
    if op.n_out == 1 or all(op.out_diff):
        return res
    return tuple(r if d or type(r) is not Series else r._c[0] for r, d in zip(res, op.out_diff))


def _scan(op: Op, inputs) -> tuple[SeriesTag, int]:
    """The jet call of the series among the inputs and the order they share (the lowest)."""
    tag, K = None, None
    for v in inputs:
        for s in v if type(v) in (list, tuple) else (v,):
            if type(s) is Series:
                if tag is not None and s._tag is not tag:
                    raise NotImplementedError(
                        f"jet: {op.name} got Taylor series of two different jet calls; nesting jet inside a "
                        "jet'ed function over shared tensors is not supported yet"
                    )
                tag, K = s._tag, s.order if K is None else min(K, s.order)
    if tag is not None:
        _check_outer_only(op, inputs, tag)
    return tag, K


def _check_outer_only(op: Op, inputs, tag: SeriesTag) -> None:
    """A tangent of a dual level, or a batch of a vmap, opened inside the jet'ed function cannot be
    carried by the coefficients (a jvp or vmap of a function closing over a series): jet then runs
    f by nested dual levels (docs/taylor.md, "Beyond the rules")."""
    inner_levels = len(STATE.by_uid) > len(tag.outer_levels)
    for v in inputs:
        for s in v if type(v) in (list, tuple) else (v,):
            while type(s) is BatchedTensor:  # (a vmap around the jet: the tangent sits in the batch)
                if s._blevel >= tag.inner_batch:
                    raise NestingError(
                        f"jet: {op.name} mixes a Taylor series with a vmap opened inside the jet'ed function"
                    )
                s = s._phys
            if inner_levels and isinstance(s, Tensor) and type(s) is not Series:
                if any(lv not in tag.outer_levels for lv in levels_of(s)):
                    raise NestingError(
                        f"jet: {op.name} mixes a Taylor series with a tangent of a dual level opened inside "
                        "the jet'ed function (a jvp of a function closing over the series)"
                    )


def _coefficients(op: Op, i: int, v, K: int):
    """Input i as the rules take it: its coefficients 0..K, [v] for a constant, a list of those for
    a `Tensor[]` parameter."""
    if i < len(op.kinds) and op.kinds[i] == "T[]" and type(v) in (list, tuple):
        return [_one(s, K) for s in v]
    return None if v is None else _one(v, K)


def _one(v, K: int) -> list:
    if type(v) is Series:
        return v._c[: K + 1]
    return [v]


def _key(op: Op, xs: list, args: tuple):
    """A cache key for op on these inputs (None when not cacheable: a constant tensor input may be
    written in place between two calls, a Series' coefficients never are)."""
    parts = []
    for x in xs:
        if x is None:
            parts.append(None)
            continue
        items = x if x and type(x[0]) is list else [x]
        for s in items:
            if len(s) == 1:
                if type(s[0]) not in SCALARS:
                    return None
                parts.append((type(s[0]), s[0]))
            else:
                parts.append(tuple(map(id, s)))
    try:
        frozen = _freeze(args)
        hash(frozen)
    except TypeError:
        return None
    return (op.name, frozen, tuple(parts))


def _freeze(v):
    if type(v) in (list, tuple):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, Tensor):
        raise TypeError("a tensor argument")
    return v


Series._interpreter = TaylorInterpreter()
