"""The fuzzer's op table: one entry per op, shared by pushforward and torch (same names).

An entry says how to pick its operands among the program's variables, how to sample its
other arguments, how to render the call as Python source over a module ``L`` (``pf`` or
``torch``), and which inputs are inside its domain (away from kinks, poles, branch cuts
and ties, so that finite differences can arbitrate). Adding an op is adding one line:

    unary("sin")
    unary("log", dom=log_dom)
    binary("atan2", "L.atan2({0}, {1})", kinds="f")
    Op("sum_dim", gen=reduce_gen("{0}.sum({dim!r}, keepdim={kd!r})"))

``gen(ctx)`` returns ``(operands, params)`` or None when the op does not fit the current
variables; ``render`` is a ``str.format`` template over the operand names ({0}, {1}, ...)
and the params; ``dom(args, params)`` sees the concrete torch values of the operands
(before the op runs) and returns False to reject the sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch

# ------------------------------------------------------------------ the entry


@dataclass
class Op:
    name: str
    render: str  # format template: {0}.. operands, {p} params
    gen: Callable  # gen(ctx) -> (list[int], dict) | None
    dom: Callable | None = None  # dom(list[torch.Tensor], params) -> bool
    inplace: bool = False  # a statement that writes into operand 0
    statement: bool = False  # render is a full statement (no result var)
    weight: float = 1.0
    tags: tuple = field(default_factory=tuple)
    group: str = "core"  # run.py --only selects groups (or op names)


OPS: list[Op] = []


def add(op: Op) -> Op:
    OPS.append(op)
    return op


# ------------------------------------------------------------------ domain helpers
M = 0.05  # margin from kinks, cuts, ties


def _re(t):
    return t.real if t.is_complex() else t


def nz(m=M):
    return lambda a, p: bool((a[0].abs() > m).all())


def log_dom(a, p, shift=0.0):
    x = a[0] + shift
    if x.is_complex():
        return bool(((x.abs() > 0.1) & ~((x.real < 0) & (x.imag.abs() < 0.1))).all())
    return bool((x > 0.1).all())


def frac_away(x, m=M, half=False):
    f = x - torch.floor(x)
    if half:
        f = (f - 0.5).abs()
        return bool((f > m).all())
    return bool(((f > m) & (f < 1 - m)).all())


def real_interval(lo, hi, cut_pred=None):
    """Real inputs inside (lo, hi); complex inputs off the cuts given by cut_pred(z)."""

    def dom(a, p):
        x = a[0]
        if x.is_complex():
            return cut_pred is None or not bool(cut_pred(x).any())
        return bool(((x > lo) & (x < hi)).all())

    return dom


def cut_real_outside(r):  # branch cuts on the real axis with |re| > r (asin, acos, atanh)
    return lambda z: (z.real.abs() > r - 0.1) & (z.imag.abs() < 0.1)


def cut_imag_outside(r):  # cuts on the imaginary axis with |im| > r (atan, asinh)
    return lambda z: (z.imag.abs() > r - 0.1) & (z.real.abs() < 0.1)


def no_ties(a, dims=None, m=M):
    """The max/min along dims is unique with a margin (reals)."""
    x = a if isinstance(a, torch.Tensor) else a[0]
    if x.numel() == 0:
        return True
    if dims is None:
        v = x.reshape(-1).sort().values
        return v.numel() < 2 or bool((v[1:] - v[:-1]).min() > m)
    if isinstance(dims, int):
        dims = (dims,)
    dims = tuple(d % max(x.ndim, 1) for d in dims) if x.ndim else ()
    if not dims:
        return True
    rest = [d for d in range(x.ndim) if d not in dims]
    y = x.permute(*rest, *dims).reshape(*[x.shape[d] for d in rest], -1)
    if y.shape[-1] < 2:
        return True
    v = y.sort(-1).values
    return bool((v[..., 1:] - v[..., :-1]).min() > m)


# ------------------------------------------------------------------ operand pickers


def unary_gen(kinds="fc", inplace=False, params=None):
    def gen(ctx):
        i = ctx.pick(kinds, inplace=inplace)
        if i is None:
            return None
        p = params(ctx, ctx.meta(i)) if params else {}
        return None if p is None else ([i], p)

    return gen


def binary_gen(kinds="fc", kinds2=None, inplace=False, params=None):
    def gen(ctx):
        i = ctx.pick(kinds, inplace=inplace)
        if i is None:
            return None
        j = ctx.partner(i, kinds2 or kinds, into=inplace)
        if j is None:
            return None
        p = params(ctx, ctx.meta(i)) if params else {}
        return None if p is None else ([i, j], p)

    return gen


def scalar_param(ctx, meta, lo=0.5, hi=2.0):
    s = round(ctx.rng.uniform(lo, hi) * ctx.rng.choice([-1, 1]), 2)
    return {"s": s}


def dim_param(ctx, meta, allow_none=False, need_nonempty=False):
    nd = len(meta.shape)
    if nd == 0:
        return {"dim": ctx.rng.choice([0, -1])}
    d = ctx.rng.randrange(-nd, nd)
    return {"dim": d}


def dims_param(ctx, meta):
    nd = len(meta.shape)
    if nd == 0:
        return ()
    k = ctx.rng.randint(1, nd)
    return tuple(sorted(ctx.rng.sample(range(nd), k)))


def unary(name, dom=None, kinds="fc", render=None, inplace_variant=False, weight=1.0):
    add(Op(name, render or "{0}.%s()" % name, unary_gen(kinds), dom, weight=weight))
    if inplace_variant:
        add(
            Op(
                name + "_",
                "{0}.%s_()" % name,
                unary_gen(kinds, inplace=True),
                dom,
                inplace=True,
                statement=True,
                weight=weight * 0.7,
            )
        )


def binary(name, render, kinds="fc", kinds2=None, dom=None, weight=1.0):
    add(Op(name, render, binary_gen(kinds, kinds2), dom, weight=weight, tags=("elementwise",)))


# ------------------------------------------------------------------ element-wise, one input
_cos_ok = lambda a, p: bool((a[0].cos().abs() > 0.2).all() and (_im_small(a[0], 2)))  # noqa: E731


def _im_small(x, r):
    return not x.is_complex() or bool((x.imag.abs() < r).all())


unary("neg", inplace_variant=True)
unary("abs", dom=nz(), kinds="fc")
add(Op("abs_", "{0}.abs_()", unary_gen("f", inplace=True), nz(), inplace=True, statement=True, weight=0.5))
unary("sgn", dom=nz())
unary("sign", dom=nz(), kinds="f")
unary("exp", dom=lambda a, p: bool((_re(a[0]) < 4).all()), inplace_variant=True)
unary("exp2", dom=lambda a, p: bool((_re(a[0]) < 5).all()))
unary("expm1", dom=lambda a, p: bool((_re(a[0]) < 4).all()))
unary("log", dom=log_dom, inplace_variant=True)
unary("log2", dom=log_dom)
unary("log10", dom=log_dom)
unary("log1p", dom=lambda a, p: log_dom(a, p, 1.0))
unary("sqrt", dom=log_dom, inplace_variant=True)
unary("rsqrt", dom=log_dom)
unary("square")
unary("reciprocal", dom=nz(0.2))
unary("sin", inplace_variant=True)
unary("cos", inplace_variant=True)
unary("tan", dom=_cos_ok)
unary("asin", dom=real_interval(-0.9, 0.9, cut_real_outside(1)))
unary("acos", dom=real_interval(-0.9, 0.9, cut_real_outside(1)))
unary("atan", dom=real_interval(-math.inf, math.inf, cut_imag_outside(1)))
unary("sinh", dom=lambda a, p: bool((_re(a[0]).abs() < 4).all()))
unary("cosh", dom=lambda a, p: bool((_re(a[0]).abs() < 4).all()))
unary("tanh", dom=lambda a, p: bool((a[0].cosh().abs() > 0.2).all()), inplace_variant=True)
unary("asinh", dom=real_interval(-math.inf, math.inf, cut_imag_outside(1)))
unary("acosh", dom=real_interval(1.1, math.inf, lambda z: (z.real < 1.1) & (z.imag.abs() < 0.1)))
unary("atanh", dom=real_interval(-0.9, 0.9, cut_real_outside(1)))
unary("sigmoid", dom=lambda a, p: bool(((1 + (-a[0]).exp()).abs() > 0.2).all()), inplace_variant=True)
unary("logit", dom=real_interval(0.1, 0.9), kinds="f")
unary("relu", dom=nz(), kinds="f", inplace_variant=True)
unary("erf", kinds="f")
unary("erfc", kinds="f")
unary("erfinv", dom=real_interval(-0.9, 0.9), kinds="f")
unary("lgamma", dom=real_interval(0.1, 20), kinds="f")
unary("digamma", dom=real_interval(0.1, 20), kinds="f")
add(
    Op(
        "polygamma",
        "L.polygamma({n!r}, {0})",
        unary_gen("f", params=lambda c, m: {"n": c.rng.randrange(3)}),
        real_interval(0.2, 20),
    )
)
unary("floor", dom=lambda a, p: frac_away(a[0]), kinds="f", weight=0.4)
unary("ceil", dom=lambda a, p: frac_away(a[0]), kinds="f", weight=0.4)
unary("trunc", dom=lambda a, p: frac_away(a[0]), kinds="f", weight=0.4)
unary("round", dom=lambda a, p: frac_away(a[0], half=True), kinds="f", weight=0.4)


def _clamp_params(ctx, meta):
    lo = round(ctx.rng.uniform(-1.5, 0.5), 2)
    return {"lo": lo, "hi": round(lo + ctx.rng.uniform(0.3, 2), 2)}


def _clamp_dom(a, p):
    x = a[0]
    return bool((((x - p["lo"]).abs() > M) & ((x - p["hi"]).abs() > M)).all())


add(Op("clamp", "{0}.clamp({lo!r}, {hi!r})", unary_gen("f", params=_clamp_params), _clamp_dom))
add(Op("clamp_min", "{0}.clamp(min={lo!r})", unary_gen("f", params=_clamp_params), _clamp_dom, weight=0.5))
add(
    Op(
        "clamp_",
        "{0}.clamp_({lo!r}, {hi!r})",
        unary_gen("f", inplace=True, params=_clamp_params),
        _clamp_dom,
        inplace=True,
        statement=True,
        weight=0.5,
    )
)
unary("real", render="{0}.real")
unary("imag", render="{0}.imag", kinds="c")
unary("conj")
unary(
    "angle",
    dom=lambda a, p: (
        bool((a[0].abs() > M).all())
        and not (a[0].is_complex() and bool(((a[0].real < 0) & (a[0].imag.abs() < 0.1)).any()))
    ),
)

# ------------------------------------------------------------------ element-wise, two inputs
_den = lambda a, p: bool((a[1].abs() > 0.2).all())  # noqa: E731
binary("add", "{0} + {1}")
binary("add_m", "{0}.add({1})", weight=0.3)
add(Op("add_alpha", "L.add({0}, {1}, alpha={s!r})", binary_gen(params=scalar_param), weight=0.4))
binary("sub", "{0} - {1}")
add(Op("sub_alpha", "L.sub({0}, {1}, alpha={s!r})", binary_gen(params=scalar_param), weight=0.3))
binary("mul", "{0} * {1}", weight=1.5)
binary("div", "{0} / {1}", dom=_den)
binary("div_m", "L.div({0}, {1})", dom=_den, weight=0.3)
binary("pow", "{0} ** {1}", dom=lambda a, p: log_dom(a, p) and bool((_re(a[1]).abs() < 3).all()))
binary(
    "atan2",
    "L.atan2({0}, {1})",
    kinds="f",
    dom=lambda a, p: bool(((a[0] ** 2 + a[1] ** 2 > 0.05) & ~((a[1] < 0) & (a[0].abs() < 0.1))).all()),
)
binary("hypot", "L.hypot({0}, {1})", kinds="f", dom=lambda a, p: bool((a[0] ** 2 + a[1] ** 2 > 0.05).all()))
binary("maximum", "L.maximum({0}, {1})", kinds="f", dom=lambda a, p: bool(((a[0] - a[1]).abs() > M).all()))
binary("minimum", "L.minimum({0}, {1})", kinds="f", dom=lambda a, p: bool(((a[0] - a[1]).abs() > M).all()))
_mod_dom = lambda a, p: _den(a, p) and frac_away(a[0] / a[1])  # noqa: E731
binary("fmod", "L.fmod({0}, {1})", kinds="f", dom=lambda a, p: _den(a, p) and frac_away((a[0] / a[1]).abs()))
binary("remainder", "L.remainder({0}, {1})", kinds="f", dom=_mod_dom)
binary("mod_op", "{0} % {1}", kinds="f", dom=_mod_dom, weight=0.3)
binary("floordiv", "{0} // {1}", kinds="f", dom=_mod_dom, weight=0.3)
binary(
    "copysign",
    "L.copysign({0}, {1})",
    kinds="f",
    dom=lambda a, p: bool((a[0].abs() > M).all() and (a[1].abs() > M).all()),
)
binary("xlogy", "L.xlogy({0}, {1})", kinds="f", dom=lambda a, p: bool((a[1] > 0.1).all()))
binary("logaddexp", "L.logaddexp({0}, {1})", kinds="f")


# Two inputs whose layouts disagree (a permuted one first): torch lays the result out by the first
# input's strides, so its reshape is a copy, and an in-place write into that copy leaves the result
# (saved by pow for its backward) alone. The flattened form writes through the reshape at once.
def _matrix_gen(ctx):
    i = ctx.pick("f", pred=lambda m: len(m.shape) >= 2 and min(m.shape) > 0)
    return None if i is None else ([i], {})


_PERMUTED_POW = "(({0}.mT.abs() + 0.5) ** {0}.mT.contiguous().tanh())"
add(Op("pow_permuted", _PERMUTED_POW, _matrix_gen, weight=0.4, tags=("elementwise",)))
add(Op("pow_permuted_flat", _PERMUTED_POW + ".flatten()", _matrix_gen, weight=0.4, tags=("elementwise",)))
add(Op("mul_permuted", "({0}.mT * {0}.mT.contiguous())", _matrix_gen, weight=0.3, tags=("elementwise",)))
# *_like of a permuted input keeps its layout (torch's preserve_format), and so does an element-wise
# result whose first input it is: its transpose views as a vector
_LIKE_PERMUTED = "((L.ones_like({0}.mT) + L.full_like({0}.mT, 0.5)) * {0}.mT)"
add(Op("like_permuted", _LIKE_PERMUTED, _matrix_gen, weight=0.2, tags=("elementwise",)))
add(Op("like_permuted_view", _LIKE_PERMUTED + ".mT.view(-1)", _matrix_gen, weight=0.2, tags=("elementwise",)))

# a Python scalar on either side
add(Op("add_s", "{0} + {s!r}", unary_gen(params=scalar_param)))
add(Op("radd_s", "{s!r} + {0}", unary_gen(params=scalar_param), weight=0.3))
add(Op("sub_s", "{0} - {s!r}", unary_gen(params=scalar_param), weight=0.5))
add(Op("rsub_s", "{s!r} - {0}", unary_gen(params=scalar_param), weight=0.5))
add(Op("mul_s", "{0} * {s!r}", unary_gen(params=scalar_param)))
add(Op("rmul_s", "{s!r} * {0}", unary_gen(params=scalar_param), weight=0.5))
add(Op("div_s", "{0} / {s!r}", unary_gen(params=scalar_param), weight=0.5))
add(Op("rdiv_s", "{s!r} / {0}", unary_gen(params=scalar_param), nz(0.2), weight=0.5))
add(
    Op(
        "pow_s",
        "{0} ** {e!r}",
        unary_gen(params=lambda c, m: {"e": c.rng.choice([2, 3, 0.5, -1, 1.5])}),
        lambda a, p: (
            (log_dom(a, p) if not float(p["e"]).is_integer() else True)
            and (p["e"] > 0 or bool((a[0].abs() > 0.2).all()))
        ),
    )
)
# A 0-d real exponent tensor (a constant, or a reduction the program differentiates) takes pow's
# constant-exponent forms, unlike a number or a full-shape tensor; a complex base must conjugate
# its x ** (e - 1) there (exponents in (0, 1), and in (1, 2) for the gradient's tangent).
_POW_T0 = [0.5, 0.7, 1.4, 1.7, 2.5, -0.5]


def _pow_r0_gen(ctx):
    i = ctx.pick("fc")
    j = None if i is None else ctx.pick("f")
    return None if j is None else ([i, j], {})


add(
    Op(
        "pow_t0",
        "{0} ** L.tensor({e!r}, dtype=L.float64)",
        unary_gen(params=lambda c, m: {"e": c.rng.choice(_POW_T0)}),
        lambda a, p: log_dom(a, p) and (p["e"] > 0 or bool((a[0].abs() > 0.2).all())),
        weight=0.5,
    )
)
add(
    Op(
        "pow_r0",
        "{0} ** {1}.mean()",
        _pow_r0_gen,
        lambda a, p: log_dom(a, p) and a[1].numel() > 0 and bool((a[1].mean().abs() < 3).all()),
        weight=0.5,
    )
)
add(
    Op(
        "rpow_s",
        "{s!r} ** {0}",
        unary_gen(params=lambda c, m: {"s": c.rng.choice([2.0, 0.5, 1.5])}),
        lambda a, p: bool((_re(a[0]).abs() < 4).all()),
    )
)
add(
    Op(
        "fmod_s",
        "L.fmod({0}, {s!r})",
        unary_gen("f", params=scalar_param),
        lambda a, p: frac_away((a[0] / p["s"]).abs()),
        weight=0.4,
    )
)
add(
    Op(
        "remainder_s",
        "L.remainder({0}, {s!r})",
        unary_gen("f", params=scalar_param),
        lambda a, p: frac_away(a[0] / p["s"]),
        weight=0.4,
    )
)
# ------------------------------------------------------------------ NumPy-named element-wise ops
# (torch 2.13 has no derivative for heaviside and floor_divide: oracle.py gives its programs
# torch compositions with the same values and the exact derivatives)
unary("deg2rad", render="L.deg2rad({0})", kinds="f", weight=0.4)
unary("rad2deg", render="{0}.rad2deg()", kinds="f", weight=0.4)
unary("nan_to_num", render="{0}.nan_to_num()", weight=0.3)
# the log of a negative number is NaN: replaced by a constant, the derivative there is zero
add(
    Op(
        "nan_to_num_log",
        "L.nan_to_num({0}.log(), nan={s!r}, neginf=-2.0)",
        unary_gen("f", params=scalar_param),
        nz(),
        weight=0.4,
    )
)
binary("logaddexp2", "L.logaddexp2({0}, {1})", kinds="f")
_apart = lambda a, p: bool(((a[0] - a[1]).abs() > M).all())  # noqa: E731
binary("fmax", "L.fmax({0}, {1})", kinds="f", dom=_apart, weight=0.6)
binary("fmin", "{0}.fmin({1})", kinds="f", dom=_apart, weight=0.6)


def _nan_apart(a, p):  # log(x) is NaN where x < 0 (fmax/fmin pick the other side there)
    x, y = torch.broadcast_tensors(a[0], a[1])
    return bool((x.abs() > M).all()) and bool(((x.clamp(min=M).log() - y).abs() > M)[x > 0].all())


binary("fmax_nan", "L.fmax({0}.log(), {1})", kinds="f", dom=_nan_apart, weight=0.4)
binary("fmin_nan", "L.fmin({1}, {0}.log())", kinds="f", dom=_nan_apart, weight=0.4)
binary("heaviside", "L.heaviside({0}, {1})", kinds="f", dom=nz(), weight=0.4)
# self exactly zero everywhere (x - x): the result is values, with values' derivative
binary("heaviside_zero", "L.heaviside({0} - {0}, {1})", kinds="f", weight=0.3)


def _exponents(ctx, meta):  # integer exponents: a list along the last dim, or one number
    if meta.shape and ctx.rng.random() < 0.7:
        return {"e": [ctx.rng.randint(-2, 3) for _ in range(meta.shape[-1])]}
    return {"e": ctx.rng.randint(-2, 3)}


# (complex mantissas: pushforward refuses them, as NumPy's ldexp; torch multiplies by 2 ** e)
add(Op("ldexp", "L.ldexp({0}, L.tensor({e!r}))", unary_gen("f", params=_exponents), weight=0.5))
binary("ldexp_t", "L.ldexp({0}, {1})", kinds="f", dom=lambda a, p: bool((a[1].abs() < 3).all()), weight=0.3)
binary(
    "float_power",
    "L.float_power({0}, {1})",
    dom=lambda a, p: log_dom(a, p) and bool((_re(a[1]).abs() < 3).all()),
    weight=0.5,
)
add(
    Op(
        "float_power_s",
        "{0}.float_power({e!r})",
        unary_gen(params=lambda c, m: {"e": c.rng.choice([2, 3, 0.5, -1, 1.5])}),
        lambda a, p: (
            (log_dom(a, p) if not float(p["e"]).is_integer() else True)
            and (p["e"] > 0 or bool((a[0].abs() > 0.2).all()))
        ),
        weight=0.4,
    )
)
binary("floor_divide", "L.floor_divide({0}, {1})", kinds="f", dom=_mod_dom, weight=0.3)
add(
    Op(
        "floor_divide_s",
        "L.floor_divide({0}, {s!r})",
        unary_gen("f", params=scalar_param),
        lambda a, p: frac_away(a[0] / p["s"]),
        weight=0.3,
    )
)


# ------------------------------------------------------------------ comparisons, masks, where
binary("gt", "{0} > {1}", kinds="f", dom=lambda a, p: bool(((a[0] - a[1]).abs() > M).all()), weight=0.5)
binary("le", "L.le({0}, {1})", kinds="f", dom=lambda a, p: bool(((a[0] - a[1]).abs() > M).all()), weight=0.3)
# (an operand compared with itself, or values apart by more than rounding: two values that differ by
# an ulp in one library and are equal in the other, e.g. x * 3 / 3 and x, compare differently)
binary("ne", "{0} != {1}", dom=lambda a, p: a[0] is a[1] or bool(((a[0] - a[1]).abs() > M).all()), weight=0.2)
add(
    Op(
        "lt_s",
        "{0} < {s!r}",
        unary_gen("f", params=scalar_param),
        lambda a, p: bool(((a[0] - p["s"]).abs() > M).all()),
        weight=0.5,
    )
)
binary("logical_and", "L.logical_and({0}, {1})", kinds="b", weight=0.3)
unary("logical_not", render="L.logical_not({0})", kinds="b", weight=0.3)
unary("isfinite", render="L.isfinite({0})", weight=0.2)
unary("signbit", render="L.signbit({0})", kinds="f", dom=nz(), weight=0.2)
# exp(x) * 1e308 overflows to inf where x > log(1.797...): away from that point
_overflow_apart = lambda a, p: bool(((a[0] - 0.5864).abs() > M).all())  # noqa: E731
add(Op("isposinf", "L.isposinf({0}.exp() * 1e308)", unary_gen("f"), _overflow_apart, weight=0.2))
add(Op("isneginf", "L.isneginf({0}.exp() * -1e308)", unary_gen("f"), _overflow_apart, weight=0.2))
add(Op("isinf", "L.isinf({0}.exp() * 1e308)", unary_gen("f"), _overflow_apart, weight=0.2))
unary("isinf_c", render="L.isinf({0})", kinds="c", weight=0.1)
binary("logical_xor", "L.logical_xor({0}, {1})", kinds="b", weight=0.3)
binary(
    "logical_xor_f",
    "L.logical_xor({0}.relu(), {1})",
    kinds="f",
    dom=lambda a, p: bool((a[0].abs() > M).all() and (a[1].abs() > M).all()),
    weight=0.2,
)
# integer results: shifts of integer variables (argmax, to_long, ... make them)
_shift = lambda c, m: {"k": c.rng.randint(0, 3)}  # noqa: E731
add(Op("lshift", "{0} << {k!r}", unary_gen("i", params=_shift), weight=0.3))
add(Op("rshift", "L.bitwise_right_shift({0}, {k!r})", unary_gen("i", params=_shift), weight=0.3))
add(
    Op(
        "lshift_t",
        "L.bitwise_left_shift({0}, L.tensor({e!r}).abs())",
        unary_gen("i", params=_exponents),
        weight=0.2,
    )
)


def _where_gen(ctx):
    c = ctx.pick("b")
    if c is None:
        return None
    a = ctx.partner(c, "fc")
    if a is None:
        return None
    b = ctx.partner(a, "fc")
    return None if b is None else ([c, a, b], {})


add(Op("where", "L.where({0}, {1}, {2})", _where_gen, weight=1.0))
add(
    Op(
        "where_s",
        "L.where({0}, {1}, {s!r})",
        lambda ctx: (
            lambda c: (
                None
                if c is None
                else (lambda a: None if a is None else ([c, a], scalar_param(ctx, None)))(ctx.partner(c, "fc"))
            )
        )(ctx.pick("b")),
        weight=0.4,
    )
)


def _mask_gen(inplace):
    def gen(ctx):
        a = ctx.pick("fc", inplace=inplace)
        if a is None:
            return None
        m = ctx.partner(a, "b", into=True)
        return None if m is None else ([a, m], scalar_param(ctx, None))

    return gen


add(Op("masked_fill", "{0}.masked_fill({1}, {s!r})", _mask_gen(False), weight=0.5))
add(Op("masked_fill_", "{0}.masked_fill_({1}, {s!r})", _mask_gen(True), inplace=True, statement=True, weight=0.5))

# ------------------------------------------------------------------ in-place, two operands
for _name, _tmpl, _dom in (
    ("add_", "{0}.add_({1})", None),
    ("sub_", "{0}.sub_({1})", None),
    ("mul_", "{0}.mul_({1})", None),
    ("div_", "{0}.div_({1})", _den),
    ("iadd", "{0} += {1}", None),
    ("imul", "{0} *= {1}", None),
    ("copy_", "{0}.copy_({1})", None),
):
    add(Op(_name, _tmpl, binary_gen("fc", "fc", inplace=True), _dom, inplace=True, statement=True, weight=1.2))
add(Op("mul_s_", "{0}.mul_({s!r})", unary_gen(inplace=True, params=scalar_param), inplace=True, statement=True))
add(Op("add_s_", "{0}.add_({s!r})", unary_gen(inplace=True, params=scalar_param), inplace=True, statement=True))
add(
    Op(
        "pow_s_",
        "{0}.pow_({e!r})",
        unary_gen(inplace=True, params=lambda c, m: {"e": c.rng.choice([2, 3])}),
        inplace=True,
        statement=True,
        weight=0.5,
    )
)
add(Op("zero_", "{0}.zero_()", unary_gen(inplace=True), inplace=True, statement=True, weight=0.5))
add(
    Op(
        "fill_",
        "{0}.fill_({s!r})",
        unary_gen(inplace=True, params=scalar_param),
        inplace=True,
        statement=True,
        weight=0.4,
    )
)
add(Op("self_mul_", "{0}.mul_({0})", unary_gen(inplace=True), inplace=True, statement=True, weight=0.3))
add(Op("self_add_", "{0}.add_({0})", unary_gen(inplace=True), inplace=True, statement=True, weight=0.3))


# ------------------------------------------------------------------ reductions
def reduce_gen(kinds="fc", dims=False, kd=True, extra=None):
    def params(ctx, meta):
        p = {}
        if dims:
            p["dim"] = dims_param(ctx, meta)
            if p["dim"] == ():
                return None
        else:
            p.update(dim_param(ctx, meta))
        p["kd"] = ctx.rng.random() < 0.4 if kd else False
        if extra:
            p.update(extra(ctx, meta))
        return p

    return unary_gen(kinds, params=params)


_gap_dim = lambda a, p: no_ties(a[0], p["dim"])  # noqa: E731
add(Op("sum", "{0}.sum()", unary_gen()))
add(Op("sum_dim", "{0}.sum({dim!r}, keepdim={kd!r})", reduce_gen(dims=True)))
add(Op("mean", "{0}.mean()", unary_gen(), weight=0.5))
add(Op("mean_dim", "{0}.mean({dim!r}, keepdim={kd!r})", reduce_gen(dims=True)))
add(Op("prod", "{0}.prod()", unary_gen(), lambda a, p: a[0].numel() <= 8, weight=0.5))
add(Op("prod_dim", "{0}.prod({dim!r}, keepdim={kd!r})", reduce_gen()))
add(Op("amax", "{0}.amax({dim!r}, keepdim={kd!r})", reduce_gen("f", dims=True), _gap_dim))
add(Op("amin", "{0}.amin({dim!r}, keepdim={kd!r})", reduce_gen("f", dims=True), _gap_dim, weight=0.5))
add(Op("max", "{0}.max()", unary_gen("f"), lambda a, p: no_ties(a[0]), weight=0.5))
add(Op("min", "L.min({0})", unary_gen("f"), lambda a, p: no_ties(a[0]), weight=0.3))
add(Op("max_dim", "{0}.max({dim!r}, keepdim={kd!r})", reduce_gen("f"), _gap_dim, tags=("multi",)))
add(Op("min_dim", "L.min({0}, {dim!r})", reduce_gen("f", kd=False), _gap_dim, tags=("multi",), weight=0.5))
add(Op("argmax", "{0}.argmax({dim!r}, keepdim={kd!r})", reduce_gen("f"), _gap_dim, weight=0.3))
add(Op("argmin", "{0}.argmin()", unary_gen("f"), lambda a, p: no_ties(a[0]), weight=0.2))
_var_extra = lambda c, m: {"corr": c.rng.choice([0, 1])}  # noqa: E731


def _var_dom(a, p):
    x = a[0]
    d = p["dim"]
    n = math.prod(x.shape[i] for i in (d if isinstance(d, tuple) else (d,))) if x.ndim else 1
    return n > p["corr"] and bool((x.var(d, correction=p["corr"]) > 0.01).all())


add(
    Op(
        "var",
        "{0}.var({dim!r}, correction={corr!r}, keepdim={kd!r})",
        reduce_gen(dims=True, extra=_var_extra),
        _var_dom,
    )
)
add(
    Op(
        "std",
        "{0}.std({dim!r}, correction={corr!r}, keepdim={kd!r})",
        reduce_gen(dims=True, extra=_var_extra),
        _var_dom,
    )
)
add(Op("var_all", "{0}.var()", unary_gen(), lambda a, p: a[0].numel() > 1 and bool(a[0].var() > 0.01), weight=0.3))
add(Op("norm", "{0}.norm()", unary_gen(), lambda a, p: bool(a[0].norm() > 0.1), weight=0.5))
add(
    Op(
        "norm_dim",
        "{0}.norm({pp!r}, {dim!r}, keepdim={kd!r})",
        reduce_gen(dims=True, extra=lambda c, m: {"pp": c.rng.choice([1, 2, 3])}),
        lambda a, p: bool((a[0].abs() > M).all()),
    )
)
# (complex: not where the sum lies near the negative real axis, the log's branch cut, where the
# sign of a rounding-level imaginary part picks +pi or -pi, e.g. after an fft)
add(
    Op(
        "logsumexp",
        "{0}.logsumexp({dim!r}, keepdim={kd!r})",
        reduce_gen(dims=True),
        lambda a, p: (
            not a[0].is_complex()
            or bool(((a[0].logsumexp(p["dim"], keepdim=p["kd"]).imag.abs() - math.pi).abs() > M).all())
        ),
    )
)
add(Op("softmax", "{0}.softmax({dim!r})", reduce_gen("f", kd=False)))
add(Op("log_softmax", "{0}.log_softmax({dim!r})", reduce_gen("f", kd=False)))
add(Op("cumsum", "{0}.cumsum({dim!r})", reduce_gen(kd=False)))
add(Op("cumprod", "{0}.cumprod({dim!r})", reduce_gen(kd=False), lambda a, p: bool((a[0].abs() > 0.1).all())))


# ------------------------------------------------------------------ products
def _matmul_gen(ctx):
    a = ctx.pick("fc", pred=lambda m: len(m.shape) >= 1)
    if a is None:
        return None
    k = ctx.meta(a).shape[-1]
    nd_a = len(ctx.meta(a).shape)
    b = ctx.choose(
        lambda m: (
            m.kind in "fc"
            and len(m.shape) >= 1
            and ((len(m.shape) == 1 and m.shape[0] == k) or (len(m.shape) >= 2 and m.shape[-2] == k))
        )
    )
    if b is not None:
        return [a, b], {"t": ""}
    b = ctx.choose(
        lambda m: m.kind in "fc" and len(m.shape) >= 1 and m.shape[-1] == k and (nd_a > 1 or len(m.shape) > 1)
    )
    return None if b is None else ([a, b], {"t": ".mT" if len(ctx.meta(b).shape) >= 2 else ""})


add(Op("matmul", "{0} @ {1}{t}", _matmul_gen, weight=1.5))


def _same_shape_gen(n=2, kinds="fc", pred=None):
    def gen(ctx):
        a = ctx.pick(kinds, pred=pred)
        if a is None:
            return None
        sh = ctx.meta(a).shape
        rest = [ctx.choose(lambda m: m.kind in kinds and m.shape == sh) for _ in range(n - 1)]
        return None if None in rest else ([a, *rest], {})

    return gen


add(Op("dot", "L.dot({0}, {1})", _same_shape_gen(pred=lambda m: len(m.shape) == 1), weight=0.5))
add(
    Op(
        "outer",
        "L.outer({0}, {1})",
        lambda ctx: (lambda a, b: None if a is None or b is None else ([a, b], {}))(
            ctx.pick("fc", pred=lambda m: len(m.shape) == 1), ctx.pick("fc", pred=lambda m: len(m.shape) == 1)
        ),
        weight=0.5,
    )
)
add(Op("mm", "L.mm({0}, {1}.mT)", _same_shape_gen(pred=lambda m: len(m.shape) == 2), weight=0.5))
add(Op("bmm", "L.bmm({0}, {1}.mT)", _same_shape_gen(pred=lambda m: len(m.shape) == 3), weight=0.5))

_EINSUM_1 = {
    1: ["i->", "i->i"],
    2: ["ij->ji", "ij->j", "ij->i", "ij->", "ii->i", "ii->", "ij->ij"],
    3: ["ijk->kji", "ijk->ik", "iij->ij", "ijk->j"],
}
_EINSUM_2 = {
    (1, 1): ["i,i->", "i,j->ij", "i,i->i"],
    (2, 2): ["ij,ij->i", "ij,kj->ik", "ij,ij->", "ij,ij->ji"],
    (2, 1): ["ij,j->i", "ij,i->j"],
    (3, 3): ["bij,bkj->bik", "bij,bij->b"],
}


def _einsum_gen(ctx):
    a = ctx.pick("fc", pred=lambda m: 1 <= len(m.shape) <= 3)
    if a is None:
        return None
    sa = ctx.meta(a).shape
    if ctx.rng.random() < 0.5:
        eqs = [e for e in _EINSUM_1[len(sa)] if _einsum_ok(e, [sa])]
        return None if not eqs else ([a], {"eq": ctx.rng.choice(eqs)})
    cands = []
    for j, m in ctx.items():
        if m.kind in "fc" and (len(sa), len(m.shape)) in _EINSUM_2:
            for e in _EINSUM_2[(len(sa), len(m.shape))]:
                if _einsum_ok(e, [sa, m.shape]):
                    cands.append((j, e))
    if not cands:
        return None
    j, e = ctx.rng.choice(cands)
    return [a, j], {"eq": e}


def _einsum_ok(eq, shapes):
    ins = eq.split("->")[0].split(",")
    size = {}
    for sub, sh in zip(ins, shapes):
        for ch, n in zip(sub, sh):
            if size.setdefault(ch, n) != n:
                return False
    return True


# Mixed complex/real operands only when nothing is empty: torch's einsum of an empty complex and an
# empty real operand gives a real result (NumPy's and ours: complex), a dtype quirk, not a derivative.
add(
    Op(
        "einsum",
        "L.einsum({eq!r}, {args})",
        lambda ctx: _einsum_args(_einsum_gen(ctx)),
        lambda a, p: len({t.dtype for t in a}) == 1 or all(t.numel() for t in a),
        weight=1.2,
    )
)


def _einsum_args(r):
    if r is None:
        return None
    ops, p = r
    p["args"] = ", ".join("{%d}" % k for k in range(len(ops)))
    return ops, p


# ------------------------------------------------------------------ views and shape ops
def _view_shape(ctx, sh):
    n = math.prod(sh)
    opts = [(-1,), (n,)]
    if n and n % 2 == 0:
        opts += [(2, n // 2), (n // 2, -1)]
    if n and n % 3 == 0:
        opts += [(3, -1), (-1, 3, 1)]
    if n == 1:
        opts += [(), (1, 1)]
    return {"shape": ctx.rng.choice(opts)}


def _fmt_shape(p):
    p["shp"] = ", ".join(map(str, p["shape"])) if p["shape"] else "()"
    return p


add(
    Op("view", "{0}.view({shp})", unary_gen("fcb", params=lambda c, m: _fmt_shape(_view_shape(c, m.shape))), weight=1.2)
)
add(Op("reshape", "{0}.reshape({shp})", unary_gen("fc", params=lambda c, m: _fmt_shape(_view_shape(c, m.shape)))))
add(Op("flatten", "{0}.flatten()", unary_gen(), weight=0.4))


def _two_dims(ctx, meta):
    nd = len(meta.shape)
    if nd < 2:
        return None
    d0, d1 = ctx.rng.sample(range(nd), 2)
    return {"d0": d0, "d1": d1 - nd if ctx.rng.random() < 0.3 else d1}


add(Op("transpose", "{0}.transpose({d0!r}, {d1!r})", unary_gen("fcb", params=_two_dims), weight=1.2))
add(
    Op(
        "permute",
        "{0}.permute({perm})",
        unary_gen(
            params=lambda c, m: {"perm": ", ".join(map(str, c.rng.sample(range(len(m.shape)), len(m.shape)))) or "()"}
        ),
        weight=0.6,
    )
)
add(Op("t", "{0}.t()", unary_gen(kinds="fc", params=lambda c, m: {} if len(m.shape) <= 2 else None), weight=0.6))
add(Op("mT", "{0}.mT", unary_gen(kinds="fc", params=lambda c, m: {} if len(m.shape) >= 2 else None), weight=0.5))
add(Op("squeeze", "{0}.squeeze()", unary_gen(params=lambda c, m: {} if 1 in m.shape else None), weight=0.5))
add(
    Op(
        "squeeze_dim",
        "{0}.squeeze({dim!r})",
        unary_gen(params=lambda c, m: {"dim": m.shape.index(1)} if 1 in m.shape else dim_param(c, m)),
        weight=0.4,
    )
)
add(
    Op(
        "unsqueeze",
        "{0}.unsqueeze({dim!r})",
        unary_gen("fcb", params=lambda c, m: {"dim": c.rng.randrange(-len(m.shape) - 1, len(m.shape) + 1)}),
    )
)


def _expand_params(ctx, meta):
    sh = list(meta.shape)
    new = [2 if n == 1 and ctx.rng.random() < 0.7 else n for n in sh]
    if ctx.rng.random() < 0.3:  # -1 keeps a size
        new = [-1 if a == b and ctx.rng.random() < 0.5 else a for a, b in zip(new, sh)]
    if ctx.rng.random() < 0.5 or new == sh:
        new = [ctx.rng.choice([1, 2])] + new
    return {"shp": ", ".join(map(str, new))}


add(Op("expand", "{0}.expand({shp})", unary_gen("fc", params=_expand_params)))
add(Op("expand_as", "{0}.expand({1}.shape)", lambda ctx: _bcast_to_gen(ctx), weight=0.4))


def _bcast_to_gen(ctx):
    b = ctx.pick("fc")
    if b is None:
        return None
    a = ctx.partner(b, "fc", into=True)
    return None if a is None else ([a, b], {})


def _diag_params(ctx, meta):
    sh = meta.shape
    if len(sh) < 2:
        return None
    d1, d2 = ctx.rng.sample(range(len(sh)), 2)
    return {"off": ctx.rng.choice([0, 0, 1, -1]), "d1": d1, "d2": d2}


add(Op("diagonal", "{0}.diagonal({off!r}, {d1!r}, {d2!r})", unary_gen(params=_diag_params)))


def _narrow_params(ctx, meta):
    sh = meta.shape
    if not sh:
        return None
    d = ctx.rng.randrange(len(sh))
    if sh[d] == 0:
        return {"dim": d, "start": 0, "len": 0}
    st = ctx.rng.randrange(sh[d])
    return {"dim": d, "start": st, "len": ctx.rng.randint(0 if ctx.rng.random() < 0.1 else 1, sh[d] - st)}


add(Op("narrow", "{0}.narrow({dim!r}, {start!r}, {len!r})", unary_gen(params=_narrow_params)))


def _select_params(ctx, meta):
    sh = meta.shape
    ds = [d for d in range(len(sh)) if sh[d] > 0]
    if not ds:
        return None
    d = ctx.rng.choice(ds)
    return {"dim": d, "i": ctx.rng.randrange(-sh[d], sh[d])}


add(Op("select", "{0}.select({dim!r}, {i!r})", unary_gen(params=_select_params)))


def basic_index(ctx, sh):
    """A basic (view) index for shape sh, as source text."""
    parts = []
    for n in sh:
        r = ctx.rng.random()
        if n > 0 and r < 0.3:
            parts.append(str(ctx.rng.randrange(-n, n)))
        elif r < 0.7 and n > 0:
            a = ctx.rng.randrange(n)
            b = ctx.rng.randint(a + 1, n)
            st = ctx.rng.choice([1, 1, 2])
            parts.append(f"{a}:{b}" + (f":{st}" if st != 1 else ""))
        else:
            parts.append(":")
        if ctx.rng.random() < 0.1:
            parts.append("None")
    while parts and parts[-1] == ":" and ctx.rng.random() < 0.7:
        parts.pop()
    if ctx.rng.random() < 0.1 and parts:
        parts = ["..."] + parts[len(parts) // 2 :]
    return ", ".join(parts) if parts else "..."


def advanced_index(ctx, sh, unique=False):
    """An integer-array index into dim 0; unique: no position twice (a write with repeated
    positions keeps an unspecified one of the values in torch)."""
    if not sh or sh[0] == 0:
        return None
    k = ctx.rng.randint(1, 4)
    idx = [ctx.rng.randrange(-sh[0], sh[0]) for _ in range(k)]
    if unique:
        seen = {}
        for i in idx:
            seen.setdefault(i % sh[0], i)
        idx = list(seen.values())
    if ctx.rng.random() < 0.5:
        return f"L.tensor({idx!r})"
    return repr(idx)


add(Op("getitem", "{0}[{idx}]", unary_gen("fcb", params=lambda c, m: {"idx": basic_index(c, m.shape)}), weight=2))
add(
    Op(
        "getitem_adv",
        "{0}[{idx}]",
        unary_gen(params=lambda c, m: (lambda i: None if i is None else {"idx": i})(advanced_index(c, m.shape))),
    )
)
add(
    Op(
        "getitem_mask",
        "{0}[{1}]",
        lambda ctx: (
            lambda m: (
                None
                if m is None
                else (lambda a: None if a is None else ([a, m], {}))(
                    ctx.choose(lambda v: v.kind in "fc" and v.shape == ctx.meta(m).shape)
                )
            )
        )(ctx.pick("b")),
        weight=0.5,
    )
)


def _split_params(ctx, meta):
    sh = meta.shape
    if not sh:
        return None
    d = ctx.rng.randrange(len(sh))
    return {"dim": d, "n": ctx.rng.randint(1, max(1, sh[d]))}


add(Op("split", "{0}.split({n!r}, {dim!r})", unary_gen(params=_split_params), tags=("multi",), weight=0.6))
add(Op("chunk", "{0}.chunk({n!r}, {dim!r})", unary_gen(params=_split_params), tags=("multi",), weight=0.5))
add(
    Op(
        "unbind",
        "{0}.unbind({dim!r})",
        unary_gen(
            params=lambda c, m: {"dim": c.rng.randrange(len(m.shape))} if m.shape and 0 < max(m.shape) <= 4 else None
        ),
        tags=("multi",),
        weight=0.5,
    )
)
add(
    Op(
        "flip",
        "{0}.flip({dims!r})",
        unary_gen(params=lambda c, m: {"dims": dims_param(c, m)} if m.shape else None),
        weight=0.6,
    )
)
add(
    Op(
        "roll",
        "{0}.roll({s!r}, {dim!r})",
        unary_gen(
            params=lambda c, m: {"s": c.rng.randint(-3, 3), "dim": c.rng.randrange(len(m.shape))} if m.shape else None
        ),
        weight=0.6,
    )
)
add(
    Op(
        "tril",
        "{0}.tril({k!r})",
        unary_gen(params=lambda c, m: {"k": c.rng.randint(-1, 1)} if len(m.shape) >= 2 else None),
        weight=0.5,
    )
)
add(
    Op(
        "triu",
        "{0}.triu({k!r})",
        unary_gen(params=lambda c, m: {"k": c.rng.randint(-1, 1)} if len(m.shape) >= 2 else None),
        weight=0.5,
    )
)


def _cat_gen(stack):
    def gen(ctx):
        a = ctx.pick("fc", pred=lambda m: stack or len(m.shape) >= 1)
        if a is None:
            return None
        sh = ctx.meta(a).shape
        nd = len(sh)
        d = ctx.rng.randrange(-nd - 1, nd + 1) if stack else ctx.rng.randrange(-nd, nd)
        if stack:
            b = ctx.choose(lambda m: m.kind in "fc" and m.shape == sh)
        else:
            dd = d % nd
            b = ctx.choose(
                lambda m: (
                    m.kind in "fc"
                    and len(m.shape) == nd
                    and all(x == y for k, (x, y) in enumerate(zip(m.shape, sh)) if k != dd)
                )
            )
        if b is None:
            return None
        lst = [a, b] if ctx.rng.random() < 0.7 else [a, b, a]
        return lst, {"dim": d, "lst": ", ".join("{%d}" % k for k in range(len(lst)))}

    return gen


add(Op("cat", "L.cat([{lst}], {dim!r})", _cat_gen(False)))
add(Op("stack", "L.stack([{lst}], {dim!r})", _cat_gen(True), weight=0.6))


def _gather_params(ctx, meta):
    sh = meta.shape
    if not sh or 0 in sh:
        return None
    d = ctx.rng.randrange(len(sh))
    ishape = [ctx.rng.randint(1, n) for n in sh]
    ishape[d] = ctx.rng.randint(1, 4)
    n = math.prod(ishape)
    vals = [ctx.rng.randrange(sh[d]) for _ in range(n)]
    return {"dim": d, "idx": repr(torch.tensor(vals).reshape(ishape).tolist())}


add(Op("gather", "L.gather({0}, {dim!r}, L.tensor({idx}))", unary_gen(params=_gather_params)))


def _index_select_params(ctx, meta):
    sh = meta.shape
    if not sh or sh[0] == 0 and len(sh) == 1:
        return None
    d = ctx.rng.randrange(len(sh))
    if sh[d] == 0:
        return None
    return {"dim": d, "idx": [ctx.rng.randrange(sh[d]) for _ in range(ctx.rng.randint(1, 4))]}


add(Op("index_select", "{0}.index_select({dim!r}, L.tensor({idx!r}))", unary_gen(params=_index_select_params)))

# ------------------------------------------------------------------ copies and casts
unary("clone", weight=0.6)
unary("contiguous", weight=0.6)
unary("detach", weight=0.3)
add(Op("to_same", "{0}.to({0}.dtype)", unary_gen(), weight=0.6))
add(Op("to_f64", "{0}.to(L.float64)", unary_gen("f"), weight=0.5))
add(Op("double", "{0}.double()", unary_gen("f"), weight=0.5))
add(Op("to_c128", "{0}.to(L.complex128)", unary_gen("f"), weight=0.6))
add(Op("long_double", "{0}.long().double()", unary_gen("f"), lambda a, p: frac_away(a[0]), weight=0.3))
add(Op("bool_double", "{0}.bool().double()", unary_gen("f"), nz(), weight=0.2))
add(Op("to_long", "{0}.long()", unary_gen("f"), lambda a, p: frac_away(a[0]), weight=0.2))
add(Op("cdouble_of_int", "{0}.to(L.float64)", unary_gen("i"), weight=0.5))
add(Op("float_of_bool", "{0}.double()", unary_gen("b"), weight=0.3))


# ------------------------------------------------------------------ writes through indexing and views
def _into(ctx, a):
    """Kinds that may be written into variable a (torch would drop an imaginary part silently)."""
    return "fc" if ctx.meta(a).kind == "c" else "f"


def _setitem_gen(adv=False, acc=False):
    def gen(ctx):
        a = ctx.pick("fc", inplace=True, pred=lambda m: len(m.shape) >= 1)
        if a is None:
            return None
        sh = ctx.meta(a).shape
        idx = advanced_index(ctx, sh, unique=True) if adv else basic_index(ctx, sh)
        if idx is None:
            return None
        try:
            ish = tuple(eval(f"_v[{idx}]", {"L": torch, "_v": torch.empty(sh)}).shape)
        except Exception:
            return None
        if ctx.rng.random() < 0.25:
            return [a], {"idx": idx, "val": repr(scalar_param(ctx, None)["s"])}
        b = ctx.partner_shape(ish, _into(ctx, a), target=a, allow_self=False)
        return None if b is None else ([a, b], {"idx": idx, "val": "{1}"})

    return gen


add(Op("setitem", "{0}[{idx}] = {val}", _setitem_gen(), inplace=True, statement=True, weight=2))
add(Op("setitem_adv", "{0}[{idx}] = {val}", _setitem_gen(adv=True), inplace=True, statement=True, weight=0.6))
add(Op("setitem_iadd", "{0}[{idx}] += {val}", _setitem_gen(), inplace=True, statement=True, weight=0.8))


# The recorded-write fast path (dispatch.bare's write_view on a tensor on the tape) takes a value
# of the region's own shape and dtype or a Python number, and an augmented assignment's write-back
# of its region into itself (x[i] = x[i]) records nothing: these entries draw exactly those
# operands (a broadcast or cast value goes the general path, which setitem above covers). An
# element index (x[i, j]) is drawn as often as a basic one.
def element_index(ctx, sh):
    """An integer per dimension (a 0-d view), as source text; None for an empty or 0-d shape."""
    if not sh or 0 in sh:
        return None
    return ", ".join(str(ctx.rng.randrange(-n, n)) for n in sh)


def _region(ctx, a):
    """(index, the region's shape) of a write into variable a, or None."""
    sh = ctx.meta(a).shape
    idx = element_index(ctx, sh) if ctx.rng.random() < 0.5 else None
    idx = idx or basic_index(ctx, sh)
    try:
        return idx, tuple(eval(f"_v[{idx}]", {"_v": torch.empty(sh)}).shape)
    except Exception:
        return None


def _same_region_value(ctx, a, ish, number_p=0.4, nonzero=False):
    """A variable of the region's shape and a's kind apart from a's memory, else (or by chance) a
    Python number or a NumPy scalar (the general path's case): (operands, value text)."""
    kind = ctx.meta(a).kind
    if ctx.rng.random() >= number_p:
        ok = [
            i
            for i, m in enumerate(ctx.metas)
            if m.kind == kind and m.shape == ish and i != a and not ctx._shares_memory(i, a)
        ]
        if ok:
            return [a, ctx.rng.choice(ok)], "{1}"
    s = scalar_param(ctx, None, lo=0.5 if nonzero else 0.0)["s"]
    return [a], ("np.float64(%r)" if ctx.rng.random() < 0.25 else "%r") % s


def _setitem_same_gen(aug):
    def gen(ctx):
        a = ctx.pick("fc", inplace=True, pred=lambda m: len(m.shape) >= 1 and 0 not in m.shape)
        r = None if a is None else _region(ctx, a)
        if r is None:
            return None
        idx, ish = r
        op = ctx.rng.choice(["+", "-", "*", "/"]) if aug else ""
        operands, val = _same_region_value(ctx, a, ish, nonzero=op == "/")
        if op == "/" and val == "{1}":
            return None  # (a divisor drawn from the program may be near 0)
        return operands, {"idx": idx, "op": op, "val": val}

    return gen


add(Op("setitem_same", "{0}[{idx}] = {val}", _setitem_same_gen(False), inplace=True, statement=True, weight=1.2))
add(Op("setitem_aug", "{0}[{idx}] {op}= {val}", _setitem_same_gen(True), inplace=True, statement=True, weight=1.2))


def _setitem_self_gen(ctx):
    """A region written into itself: at once (x[i] = x[i], one index object from the code's
    constants), or a view of it taken earlier, written back after the whole tensor changed (the
    view sees the change: the write changes nothing either way)."""
    a = ctx.pick("fc", inplace=True, pred=lambda m: len(m.shape) >= 1 and 0 not in m.shape)
    r = None if a is None else _region(ctx, a)
    if r is None:
        return None
    if ctx.rng.random() < 0.5:
        return [a], {"form": "{0}[%s] = {0}[%s]" % (r[0], r[0])}
    s = scalar_param(ctx, None)["s"]
    return [a], {"form": "_w = {0}[%s]; {0}.mul_(%r); {0}[%s] = _w" % (r[0], s, r[0])}


add(Op("setitem_self", "{form}", _setitem_self_gen, inplace=True, statement=True, weight=0.6))

# A view read of a dual (or recorded) tensor with a Python number or a NumPy scalar on either side
# (x[i, j] * 0.5, 2.0 - x[i], np.float64(1.5) * x): the arrays case of one plain tangent
# (dispatch.bare's run2 with a scalar) and the NumPy-scalar paths (the classifier's 0-d tensor,
# __array_ufunc__'s reflected fast path). A NumPy scalar's dtype counts (NEP 50): np.float32 and
# np.int64 with float64 and complex128 tensors give the tensor's dtype in both libraries.
_SCALAR_FORMS = [
    "{s!r}",
    "{s!r}",
    "{n!r}",
    "complex({s!r}, 0.5)",
    "np.float64({s!r})",
    "np.float32({s!r})",
    "np.complex128({s!r})",
    "np.int64({n!r})",
]


def _elem_scalar_gen(ctx):
    i = ctx.pick("fc")
    if i is None:
        return None
    sh = ctx.meta(i).shape
    r = ctx.rng.random()
    idx = element_index(ctx, sh) if r < 0.5 else (basic_index(ctx, sh) if r < 0.8 and sh else None)
    x = "{0}" if idx is None else "({0}[%s])" % idx
    form = ctx.rng.choice(_SCALAR_FORMS)
    if "complex" in form and ctx.meta(i).kind != "c":
        form = "np.float64({s!r})"  # (a complex scalar would make a real program's outputs complex)
    s = scalar_param(ctx, None)["s"]
    n = ctx.rng.choice([-2, -1, 2, 3])
    scalar = form.format(s=s, n=n)
    if ctx.rng.random() < 0.2:
        # a NumPy scalar exponent is a 0-d tensor exponent: pow's constant-exponent forms
        e = ctx.rng.choice([2.0, 3.0, 0.5, 0.7, 1.5, -1.0])
        return [i], {"expr": f"{x} ** " + ctx.rng.choice(["%r", "np.float64(%r)"]) % e, "rdiv": False, "e": e}
    op = ctx.rng.choice(["+", "-", "*", "/"])
    expr = f"{x} {op} {scalar}" if ctx.rng.random() < 0.5 else f"{scalar} {op} {x}"
    return [i], {"expr": expr, "rdiv": op == "/" and expr.startswith(scalar), "e": None}


def _elem_scalar_dom(a, p):
    e = p["e"]
    if e is None:
        return not p["rdiv"] or bool((a[0].abs() > 0.2).all())
    return (e.is_integer() or log_dom(a, p)) and (e > 0 or bool((a[0].abs() > 0.2).all()))


add(Op("elem_scalar", "{expr}", _elem_scalar_gen, _elem_scalar_dom, weight=1.5))


def _setitem_data_gen(ctx):
    """An index computed from the target's values (an argsort): under vmap it is batched."""
    a = ctx.pick("f", inplace=True, pred=lambda m: len(m.shape) >= 1 and m.shape[0] > 0)
    if a is None:
        return None
    sh = ctx.meta(a).shape
    k = ctx.rng.randint(1, sh[0])
    idx = f"L.argsort({{0}}.reshape(-1)[:{sh[0]}], 0)[:{k}]"
    if ctx.rng.random() < 0.3:
        return [a], {"idx": idx, "val": repr(scalar_param(ctx, None)["s"])}
    b = ctx.partner_shape((k,) + tuple(sh[1:]), "f", target=a, allow_self=False)
    return None if b is None else ([a, b], {"idx": idx, "val": "{1}"})


add(
    Op(
        "setitem_data",
        "{0}[{idx}] = {val}",
        _setitem_data_gen,
        dom=lambda a, p: no_ties(a[0].reshape(-1)[: a[0].shape[0]], None, m=0.05),
        inplace=True,
        statement=True,
        weight=0.4,
    )
)


def _index_put_gen(ctx):
    a = ctx.pick("fc", inplace=True, pred=lambda m: len(m.shape) >= 1 and m.shape[0] > 0)
    if a is None:
        return None
    sh = ctx.meta(a).shape
    k = ctx.rng.randint(1, 3)
    idx = [ctx.rng.randrange(sh[0]) for _ in range(k)]
    acc = ctx.rng.random() < 0.5
    if not acc:
        idx = sorted(set(idx))
    b = ctx.partner_shape((len(idx), *sh[1:]), _into(ctx, a), target=a)
    return None if b is None else ([a, b], {"idx": idx, "acc": acc})


add(
    Op(
        "index_put_",
        "{0}.index_put_((L.tensor({idx!r}),), {1}, accumulate={acc!r})",
        _index_put_gen,
        inplace=True,
        statement=True,
        weight=0.5,
    )
)

_VIEW_WRITES = [
    "[0]",
    "[..., 0]",
    ".diagonal()",
    ".t()",
    ".view(-1)",
    ".real",
    ".imag",
    "[1:]",
    ".mT",
    ".unsqueeze(0)",
    ".transpose(0, -1)",
    "[::2]",
]
_VIEW_INPLACE = ["mul_({s!r})", "add_({1})", "mul_({1})", "zero_()", "copy_({1})", "sin_()", "neg_()", "div_({s!r})"]


def _view_inplace_gen(ctx):
    a = ctx.pick("fc", inplace=True, pred=lambda m: len(m.shape) >= 1)
    if a is None:
        return None
    v = ctx.rng.choice(_VIEW_WRITES)
    op = ctx.rng.choice(_VIEW_INPLACE)
    try:
        view = eval(f"_v{v}", {"_v": torch.zeros(ctx.meta(a).shape, dtype=ctx.value(a).dtype)})
    except Exception:
        return None
    vsh = tuple(view.shape)
    p = {"view": v, "ip": op.replace("{s!r}", repr(scalar_param(ctx, None)["s"]))}
    if "{1}" in op:
        b = ctx.partner_shape(vsh, "fc" if view.is_complex() else "f", target=a, allow_self=False)
        if b is None:
            return None
        return [a, b], p
    return [a], p


add(Op("view_inplace", "{0}{view}.{ip}", _view_inplace_gen, inplace=True, statement=True, weight=2))


# a constant operand (no tangent, no grad): x + t where t is a plain tensor
def _const_gen(ctx):
    i = ctx.pick("fc")
    if i is None:
        return None
    m = ctx.meta(i)
    sh = list(m.shape)
    if sh and ctx.rng.random() < 0.4:
        sh[ctx.rng.randrange(len(sh))] = 1
    n = math.prod(sh)
    vals = [round(ctx.rng.uniform(-2, 2), 2) for _ in range(n)]
    cplx = m.kind == "c" and ctx.rng.random() < 0.5
    if cplx:
        vals = [complex(v, round(ctx.rng.uniform(-1, 1), 2)) for v in vals]
    lit = repr(torch.tensor(vals).reshape(sh).tolist()) if sh else repr(vals[0])
    return [], {"lit": lit, "dt": "complex128" if cplx else "float64"}


add(Op("const", "L.tensor({lit}, dtype=L.{dt})", _const_gen, weight=0.6))
add(Op("zeros_like", "L.zeros_like({0})", unary_gen(), weight=0.5))

# ------------------------------------------------------------------ aliases and argument variants
# (the same kernels reached through other names, methods, properties and keyword arguments)
add(Op("mH", "{0}.mH", unary_gen(params=lambda c, m: {} if len(m.shape) >= 2 else None), weight=0.4))
add(Op("H", "{0}.H", unary_gen(params=lambda c, m: {} if len(m.shape) == 2 else None), weight=0.3))
add(Op("T", "{0}.T", unary_gen(params=lambda c, m: {} if len(m.shape) == 2 else None), weight=0.3))
add(Op("broadcast_to", "{0}.broadcast_to(({shp},))", unary_gen(params=_expand_params), weight=0.4))
add(Op("clip", "L.clip({0}, {lo!r}, {hi!r})", unary_gen("f", params=_clamp_params), _clamp_dom, weight=0.3))
add(
    Op(
        "clamp_t",
        "{0}.clamp({1}, {1} + 1.0)",
        binary_gen("f"),
        lambda a, p: bool(((a[0] - a[1]).abs() > M).all() and ((a[0] - a[1] - 1).abs() > M).all()),
        weight=0.4,
    )
)
add(Op("swapaxes", "{0}.swapaxes({d0!r}, {d1!r})", unary_gen(params=_two_dims), weight=0.3))
add(Op("concat", "L.concat([{lst}], {dim!r})", _cat_gen(False), weight=0.3))
add(Op("fix", "L.fix({0})", unary_gen("f"), lambda a, p: frac_away(a[0]), weight=0.2))
add(
    Op(
        "ger",
        "L.ger({0}, {1})",
        lambda ctx: (lambda a, b: None if a is None or b is None else ([a, b], {}))(
            ctx.pick("fc", pred=lambda m: len(m.shape) == 1), ctx.pick("fc", pred=lambda m: len(m.shape) == 1)
        ),
        weight=0.2,
    )
)
add(
    Op(
        "div_trunc",
        "L.div({0}, {1}, rounding_mode='trunc')",
        binary_gen("f"),
        lambda a, p: _den(a, p) and frac_away((a[0] / a[1]).abs()),
        weight=0.2,
    )
)
add(
    Op(
        "round_dec",
        "{0}.round(decimals=1)",
        unary_gen("f"),
        lambda a, p: frac_away(a[0] * 10, m=0.2, half=True),
        weight=0.2,
    )
)
add(Op("sum_dtype", "{0}.sum({dim!r}, dtype=L.complex128)", reduce_gen("f", dims=True), weight=0.3))
add(Op("cumsum_dtype", "{0}.cumsum({dim!r}, dtype=L.complex128)", reduce_gen("f", kd=False), weight=0.2))
add(Op("norm_inf", "{0}.norm(float('inf'))", unary_gen("f"), lambda a, p: no_ties(a[0].abs()), weight=0.3))
add(
    Op(
        "logit_eps",
        "{0}.logit(0.1)",
        unary_gen("f"),
        lambda a, p: bool((((a[0] - 0.1).abs() > M) & ((a[0] - 0.9).abs() > M)).all()),
        weight=0.2,
    )
)
add(
    Op(
        "arctan2",
        "L.arctan2({0}, {1})",
        binary_gen("f"),
        lambda a, p: bool(((a[0] ** 2 + a[1] ** 2 > 0.05) & ~((a[1] < 0) & (a[0].abs() < 0.1))).all()),
        weight=0.2,
    )
)
add(Op("subtract_alpha", "L.subtract({0}, {1}, alpha={s!r})", binary_gen(params=scalar_param), weight=0.2))
add(Op("absolute", "L.absolute({0})", unary_gen(), nz(), weight=0.2))
add(
    Op(
        "flatten_range",
        "{0}.flatten({a!r}, {b!r})",
        unary_gen(
            params=lambda c, m: (
                (lambda a: {"a": a, "b": c.rng.randrange(a, len(m.shape))})(c.rng.randrange(len(m.shape)))
                if m.shape
                else None
            )
        ),
        weight=0.3,
    )
)
add(Op("rmatmul_like", "{1}.mT @ {0}", _same_shape_gen(pred=lambda m: len(m.shape) == 2), weight=0.3))


# ------------------------------------------------------------------ known triggers
# Ops that (on the branch where the fuzzer was written) trigger the failure classes
# already known; `run.py --skip-known` leaves them out to look for new classes.
KNOWN_TRIGGERS = {
    "add_s",
    "radd_s",
    "sub_s",
    "rsub_s",
    "const",
    "zeros_like",
    "fmod_s",  # 1: shared tangent objects
    "gather",  # 2: gather broadcasts its index
    "to_same",
    "to_f64",
    "double",
    "contiguous",  # 3/4: aliasing, repeated outputs
    "long_double",
    "bool_double",
    "to_long",  # 5: integer casts keep tangents
}


# ------------------------------------------------------------------ breadth
# linalg, fft, special, nn, sort, scatter, misc: see table_breadth.py (imported for its entries)
from . import table_breadth  # noqa: E402,F401

GROUPS = sorted({op.group for op in OPS})


def select(only: str) -> set:
    """Op names selected by a comma-separated list of groups and/or op names."""
    want = {w for w in only.split(",") if w}
    bad = want - set(GROUPS) - {op.name for op in OPS}
    if bad:
        raise SystemExit(f"--only: unknown groups/ops {sorted(bad)}; groups are {GROUPS}")
    return {op.name for op in OPS if op.group in want or op.name in want}
