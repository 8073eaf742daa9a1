"""Three algebraic passes over a trace's statements, run between common subexpressions and dead code.

- constants: a statement that reads only constants of the signature (literals, the `ones(shape)`
  seeding a backward pass, arrays the trace made and nothing else holds) is computed once, when
  the program is emitted, and read as a constant afterwards: the sum's backward broadcasts its
  seed and scales it by each formula's constant factors, on every call otherwise;
- one-value constants: a constant array of one repeated value (the broadcast seed, scaled) that
  an element-wise ufunc combines with an array of its shape and dtype becomes that value as a
  Python number: NumPy reads no constant array then, and `2.0 * v` and `v * 2.0` are one common
  subexpression (emit.py runs that pass again after this one);
- constant factors: `-(c * x)` and `c * -x`, for a constant c, become `(-c) * x`, one full-size
  pass instead of two (the backward formulas of subtraction and of `1 - x` negate what a constant
  factor then scales), and `c1 * (c2 * x)` becomes `(c1 c2) * x` when c1 or c2 is a power of two.
  IEEE rounding is symmetric and scaling by a power of two exact, so the bits are the same
  (but for results in the subnormal range).

The first and last pass only touch statements whose results are read once and by nothing that
outlives the call (no output, no view, no write), and the second changes no result's value,
dtype, shape or layout, so the program's outputs and in-place writes are unchanged.
"""

from __future__ import annotations

import numpy as np

from .lifetimes import read_counts
from .recording import Const, Stmt, Trace, Var, _call, map_args, one_value

__all__ = ["simplify"]

# pure NumPy functions (besides ufuncs) a constant statement may call: no randomness, no I/O
_PURE = frozenset(
    {
        np.ones,
        np.zeros,
        np.full,
        np.expand_dims,
        np.array,
        np.asarray,
        np.broadcast_to,
        np.reshape,
        np.lib.stride_tricks.as_strided,
    }
)


# ufuncs NumPy computes by another loop when an operand is a number, 0-d, or strides like one
# (zero strides) than for an array: np.power(x, 0.5) is sqrt(x), nan at -inf where pow gives inf
_SCALAR_PATHS = frozenset({np.power, np.float_power})


def _decode(x, env: dict):
    """The values of an encoded argument structure: Vars from env, Consts their objects."""
    return map_args(x, lambda v: env[id(v)] if type(v) is Var else v.obj)


class _Uses:
    """Who reads each Var, and which Vars must keep their own memory (outputs, written roots)."""

    def __init__(self, stmts: list, outputs: list) -> None:
        self.count = read_counts(stmts)
        self.pinned = {v.root for v in outputs if type(v) is Var}
        self.pinned |= {w.root for s in stmts for w in s.writes if type(w) is Var}

    def private(self, v) -> bool:
        """v is a fresh array read by one statement and nothing else sees its memory."""
        return type(v) is Var and v.fresh and self.count.get(v, 0) == 1 and v.root not in self.pinned


def _constant_stmt(s: Stmt, const_vars: set, frozen: set) -> bool:
    if s.writes or not s.outs or s.scalar_out:
        return False
    if s.kind == "call":
        if not (isinstance(s.fn, np.ufunc) or s.fn in _PURE):
            return False
    elif s.kind != "getitem":
        return False
    for v in s.leaves:
        if type(v) is Var and (id(v) not in const_vars or v.const_base is not None):
            return False
        if type(v) is Const and (not isinstance(v.obj, np.ndarray) or id(v) not in frozen):
            return False
    return True


def _fold(trace: Trace, stmts: list, uses: _Uses, frozen: set) -> list:
    """Statements over constants computed now; the Vars they make, read by the others, become Consts."""
    const_vars: set = set()
    env: dict = {}
    kept = []
    for s in stmts:
        if _constant_stmt(s, const_vars, frozen) and not any(v.root in uses.pinned for v in s.outs):
            raw = _call(s.kind, s.fn, _decode(s.args, env), _decode(s.kwargs, env))
            for v, r in zip(s.outs, raw if len(s.outs) > 1 or s.tuple_out else (raw,)):
                env[id(v)] = r
                const_vars.add(id(v))
            continue
        kept.append(s)
    if not const_vars:
        return stmts
    sub = {}
    # (power computes x ** c by another loop when c is a scalar or strides like one: sqrt for 0.5)
    by_power = {id(v) for s in kept if s.fn in _SCALAR_PATHS for v in s.leaves}
    for s in kept:
        for v in s.leaves:
            if type(v) is Var and id(v) in const_vars and id(v) not in sub:
                a = env[id(v)]
                c = sub[id(v)] = Const(trace.fresh_name("folded"), a if id(v) in by_power else _compact(a))
                frozen.add(id(c))
        s.substitute(sub)
    return kept


def _compact(a):
    """A folded 1-d array of one repeated value as that value broadcast (zero strides): no memory
    held, and a ufunc reads it as fast as a scalar. (Only 1-d: there the result's memory layout
    does not depend on its operands' strides.)"""
    if not isinstance(a, np.ndarray) or a.ndim != 1 or a.size < 2 or a.dtype.kind not in "fc":
        return a
    if one_value(a) is None:
        return a
    return np.broadcast_to(a[:1].reshape(()), a.shape)


def _one_value(c, frozen: set):
    """The Python number a frozen constant array of at most one dim holds everywhere, else None."""
    if type(c) is not Const or id(c) not in frozen or not isinstance(c.obj, np.ndarray):
        return None
    a = c.obj
    if a.ndim > 1 or a.dtype.kind not in "fc":
        return None
    v = one_value(a)
    return v if v is not None and np.isfinite(v) else None


def _scalar_constants(stmts: list, frozen: set) -> list:
    """Binary ufunc calls whose constant operand holds one value, with the value as a Python number
    where that changes neither the result's dtype (the other operand's: a Python number is weak)
    nor its shape nor its layout (the constant has at most one dim)."""
    for s in stmts:
        if s.kind != "call" or not isinstance(s.fn, np.ufunc) or s.fn.nin != 2 or len(s.args) != 2:
            continue
        if s.kwargs or s.writes or len(s.outs) != 1:
            continue
        out = s.outs[0]
        for k in (0, 1):
            other = s.args[1 - k]
            if type(other) is not Var or other.shape != out.shape or other.dtype != out.dtype:
                continue
            v = _one_value(s.args[k], frozen)
            if v is None or (s.fn in _SCALAR_PATHS and s.args[k].obj.ndim):
                continue
            if s.args[k].obj.dtype == out.dtype:
                s.args = (v, other) if k == 0 else (other, v)
                break
    return stmts


def _negated_constant(trace: Trace, c, frozen: set):
    """-c for a Python number or a frozen constant array, else None."""
    if type(c) in (int, float, complex):
        return -c
    if type(c) is Const and id(c) in frozen and isinstance(c.obj, np.ndarray) and c.obj.dtype.kind in "fc":
        n = Const(trace.fresh_name("negated"), _compact(np.negative(c.obj)))
        frozen.add(id(n))
        return n
    return None


def _power_of_two(c) -> bool:
    if type(c) is not float and type(c) is not int:
        return False
    m, _ = np.frexp(abs(c))
    return c != 0 and m == 0.5


def _product(trace: Trace, c1, c2, frozen: set):
    """c1 * c2 when one is a Python power of two (scaling by it is exact) and the other a number
    or a frozen constant array, else None."""
    if _power_of_two(c2):
        c1, c2 = c2, c1
    if not _power_of_two(c1):
        return None
    if type(c2) in (int, float):
        return c1 * c2
    if type(c2) is Const and id(c2) in frozen and isinstance(c2.obj, np.ndarray) and c2.obj.dtype.kind in "fc":
        n = Const(trace.fresh_name("scaled"), _compact(np.multiply(c2.obj, c1, dtype=c2.obj.dtype)))
        frozen.add(id(n))
        return n
    return None


def _is(s: Stmt, ufunc) -> bool:
    return s.kind == "call" and s.fn is ufunc and not s.kwargs and not s.writes and len(s.outs) == 1


def _scaled(s: Stmt):
    """(position of the constant factor, the other operand) of a multiply by a constant, else None."""
    if not _is(s, np.multiply) or len(s.args) != 2:
        return None
    a, b = s.args
    if type(b) is Var and type(a) is not Var:
        return 0, b
    if type(a) is Var and type(b) is not Var:
        return 1, a
    return None


def _with_factor(s: Stmt, k: int, factor, other) -> tuple:
    """s's arguments with the constant at position k replaced by factor and the operand by other
    (the operands keep their places: the result's memory layout follows them in order)."""
    return (factor, other) if k == 0 else (other, factor)


def _factors(trace: Trace, stmts: list, outputs: list, uses: _Uses, frozen: set) -> list:
    made = {id(v): s for s in stmts for v in s.outs}
    sub: dict = {}
    kept = []
    for s in stmts:
        if sub:
            s.substitute(sub)
        if _is(s, np.negative) and len(s.args) == 1 and uses.private(s.args[0]):
            p = made.get(id(s.args[0]))
            sc = _scaled(p) if p is not None else None
            neg = _negated_constant(trace, p.args[sc[0]], frozen) if sc is not None else None
            out = s.outs[0]
            if neg is not None and out.dtype == s.args[0].dtype and out.root not in uses.pinned:
                p.args = _with_factor(p, sc[0], neg, sc[1])  # -(c * x) -> (-c) * x, where c * x was
                sub[id(out)] = s.args[0]
                continue
        sc = _scaled(s)
        if sc is not None and uses.private(sc[1]):
            p = made.get(id(sc[1]))
            if p is not None and _is(p, np.negative) and len(p.args) == 1 and type(p.args[0]) is Var:
                neg = _negated_constant(trace, s.args[sc[0]], frozen)
                if neg is not None:
                    s.args = _with_factor(s, sc[0], neg, p.args[0])  # c * -x -> (-c) * x; -x is dead now
            psc = _scaled(p) if p is not None else None
            if psc is not None and s.outs[0].dtype == sc[1].dtype:
                both = _product(trace, s.args[sc[0]], p.args[psc[0]], frozen)
                if both is not None:  # c1 * (c2 * x) -> (c1 c2) * x, exact for a power of two
                    s.args = _with_factor(s, sc[0], both, psc[1])
        kept.append(s)
    for i, v in enumerate(outputs):
        outputs[i] = sub.get(id(v), v)
    return kept


def simplify(trace: Trace, stmts: list, outputs: list, temps: set, mutated: list) -> list:
    """stmts with constant statements folded and negations merged into constant factors (the
    module doc). `temps`: ids of the Consts nothing outside holds; `mutated`: Consts the program
    writes (never folded)."""
    frozen = set(temps) - {id(c) for c in mutated}
    uses = _Uses(stmts, outputs)
    stmts = _scalar_constants(_fold(trace, stmts, uses, frozen), frozen)
    return _factors(trace, stmts, outputs, _Uses(stmts, outputs), frozen)
