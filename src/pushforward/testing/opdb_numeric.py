"""Op-database entries for the numeric functions NumPy and torch share (isinf, fmax, ldexp,
float_power, trapezoid, searchsorted, ...): samples and NumPy references, integer dtypes included
so the dtype rules (integers compute in float64, as NumPy) are compared too.

>>> from pushforward.testing.opdb import OPS
>>> OPS["fmax"].dtypes[0]
dtype('float64')
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .opinfo import BOOL, C128, F32, F64, I64, REAL, REAL_COMPLEX, OpInfo, SampleInput, _binary, _fn, _leaf, _unary

__all__ = ["register"]

REAL_INT = REAL + (I64,)


def _special(m, values, name="special", grad=False):
    return SampleInput(m.tensor(values), (), {}, name, grad=grad)


def s_special_unary(m):
    out = _unary(m)
    if m.dtype.kind in "fc":
        out.append(_special(m, [np.nan, 1.0, np.inf, -np.inf, -0.0, 0.0]))
    if m.dtype.kind == "c":
        out.append(
            _special(m, [complex(np.inf, np.nan), complex(np.nan, -np.inf), complex(1.0, np.inf)], "inf and nan")
        )
    return out


def s_nan_to_num(m):
    out = _unary(m)
    if m.dtype.kind in "fc":
        special = [np.nan, 1.5, np.inf, -np.inf]
        out += [
            _special(m, special),
            SampleInput(m.tensor(special), (), {"nan": 1.0, "posinf": 2.0, "neginf": -3.0}, "replacements", grad=False),
            SampleInput(m((2, 3)), (), {"nan": 1.0, "posinf": 2.0}, "finite, replacements"),
        ]
    if m.dtype.kind == "c":
        out.append(_special(m, [complex(np.inf, 1.0), complex(np.nan, -np.inf)], "complex parts"))
    return out


def s_fmax(m):
    out = _binary(m)
    if m.dtype.kind == "f":
        out += [
            SampleInput(m.tensor([np.nan, 1.5, np.nan]), (m.tensor([0.5, np.nan, np.nan]),), {}, "nan", grad=False),
            SampleInput(m.tensor([1.0, 0.5]), (m.tensor([1.0, -0.5]),), {}, "tie", grad=False),
        ]
    return out


def s_heaviside(m):
    out = _binary(m)
    # at self == 0 the result is `values` (its derivative flows there); self integer, so not differentiated
    out.append(SampleInput(_leaf(np.array([-1, 0, 2, 0])), (m((4,)),), {}, "zeros in self"))
    return out


def s_ldexp(m):
    return [
        SampleInput(m((2, 3)), (_leaf(np.array([0, 1, -2])),), {}, "int exponents"),
        SampleInput(m((2, 3)), (3,), {}, "int scalar exponent"),
        SampleInput(m(()), (_leaf(np.array(2)),), {}, "0-d"),
        SampleInput(m((0, 3)), (_leaf(np.array([1, 1, 1])),), {}, "empty"),
        SampleInput(m((2, 3)), (m((3,), dtype=F64),), {}, "float exponents (torch)"),
    ]


def _ref_ldexp(a, b):
    b = np.asarray(b)
    if b.dtype.kind in "iu":
        return np.ldexp(a, b)
    return a * np.exp2(b)


def s_float_power(m):
    out = _binary(m, rhs={"low": -2.0, "high": 2.0}, scalars=(2, 0.5, -1.5), lhs_scalars=(1.7,))
    if m.dtype.kind == "f":
        out.append(SampleInput(m((4,), low=-2.0, high=2.0), (3,), {}, "negative base, int exponent"))
    if m.dtype.kind == "i":
        out.append(SampleInput(m((4,)), (_leaf(np.array([-1, 0, 1, 2])),), {}, "negative int exponents"))
    return out


def s_floor_divide(m):
    return _binary(m, rhs={"low": 0.5, "high": 2.0} if m.dtype.kind == "f" else {"low": 1.0, "high": 3.0})


def s_trapezoid(m):
    return [
        SampleInput(m((4,))),
        SampleInput(m((2, 3)), (), {"dx": 0.5}, "dx"),
        SampleInput(m((3, 2)), (), {"dim": 0}, "dim=0"),
        SampleInput(m((2, 4)), (m((4,), dtype=F64),), {}, "x 1-d"),
        SampleInput(m((2, 3)), (m((2, 3), dtype=F64),), {"dim": 0}, "x like y"),
        SampleInput(m((0, 3)), (), {"dim": 0}, "empty along dim"),
        SampleInput(m((1, 3)), (), {"dim": 0}, "one point"),
    ]


def _ref_trapezoid(y, x=None, dx=None, dim=-1):
    return np.asarray(np.trapezoid(y, x, dx=1.0 if dx is None else dx, axis=dim))


def s_count_nonzero(m):
    x = m((3, 4))
    vals = np.array(x._data)
    vals[::2, 1] = 0
    x = _leaf(vals)
    return [
        SampleInput(x),
        SampleInput(_leaf(vals), (1,), {}, "dim=1"),
        SampleInput(_leaf(vals), ((0, 1),), {}, "dims"),
        SampleInput(_leaf(vals), (-2,), {}, "dim=-2"),
        SampleInput(m(()), (), {}, "0-d"),
        SampleInput(m((0, 3)), (0,), {}, "empty"),
    ]


def _ref_count_nonzero(x, dim=None):
    return np.asarray(np.count_nonzero(x, axis=dim)).astype(np.int64)


def s_searchsorted(m):
    seq = _leaf(np.sort(np.array(m((5,))._data)))
    rows = _leaf(np.sort(np.array(m((2, 5))._data), axis=-1))
    unsorted = np.array(m((5,))._data)
    return [
        SampleInput(seq, (m((2, 3)),), {}, "1-d sequence"),
        SampleInput(_leaf(np.array(seq._data)), (_leaf(np.array(seq._data)),), {"right": True}, "equal values, right"),
        SampleInput(_leaf(np.array(seq._data)), (_leaf(np.array(seq._data)),), {"side": "right"}, "side='right'"),
        SampleInput(rows, (m((2, 3)),), {}, "rows"),
        SampleInput(_leaf(np.array(seq._data)), (m((4,)),), {"out_int32": True}, "int32"),
        SampleInput(_leaf(unsorted), (m((3,)),), {"sorter": _leaf(np.argsort(unsorted))}, "sorter"),
        SampleInput(_leaf(np.array(seq._data)), (m((0,)),), {}, "no values"),
    ]


def _ref_searchsorted(seq, values, out_int32=False, right=False, side=None, sorter=None):
    which = "right" if right or side == "right" else "left"
    dt = np.int32 if out_int32 else np.int64
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=which, sorter=sorter).astype(dt)
    out = np.empty(values.shape, dt)
    for pos in np.ndindex(*values.shape[:-1]):
        out[pos] = np.searchsorted(seq[pos], values[pos], side=which)
    return out


def s_shift(m):
    return [
        SampleInput(m((2, 3)), (_leaf(np.array([0, 1, 3])),), {}, "shifts"),
        SampleInput(m((4,)), (2,), {}, "scalar shift"),
        SampleInput(m(()), (_leaf(np.array(1)),), {}, "0-d"),
    ]


def s_logical_xor(m):
    return _binary(m, scalars=(True, 0.0))


def s_signbit(m):
    return _unary(m) + ([_special(m, [-0.0, 0.0, -np.inf, np.inf, -1.5])] if m.dtype.kind == "f" else [])


def s_hermitian_from_triangle(m):
    return [
        SampleInput(m((3, 3)), (), {}, "L"),
        SampleInput(m((3, 3)), ("U",), {}, "U"),
        SampleInput(m((2, 4, 4)), ("U",), {}, "batched"),
        SampleInput(m((1, 1)), (), {}, "1x1"),
    ]


def _ref_hermitian_from_triangle(a, UPLO="L"):
    part = np.tril(a, -1) if UPLO == "L" else np.triu(a, 1)
    d = np.diagonal(a, 0, -2, -1).real
    return part + np.conj(np.swapaxes(part, -1, -2)) + d[..., :, None] * np.eye(a.shape[-1], dtype=d.dtype)


def register(add: Callable[[OpInfo], None]) -> None:
    """Add the entries to the op database."""
    unary = {
        "cbrt": (np.cbrt, REAL_INT),
        "deg2rad": (np.deg2rad, REAL_INT),
        "rad2deg": (np.rad2deg, REAL_INT),
    }
    for name, (ref, dts) in unary.items():
        add(OpInfo(name, _fn(name), _unary, ref, dts))
    add(OpInfo("_fabs", _fn("_fabs"), _unary, np.fabs, REAL_INT, composite=True))
    add(OpInfo("nan_to_num", _fn("nan_to_num"), s_nan_to_num, np.nan_to_num, REAL_COMPLEX + (I64,)))
    add(OpInfo("logaddexp2", _fn("logaddexp2"), _binary, np.logaddexp2, REAL_INT))
    add(OpInfo("fmax", _fn("fmax"), s_fmax, np.fmax, REAL_INT))
    add(OpInfo("fmin", _fn("fmin"), s_fmax, np.fmin, REAL_INT))
    add(OpInfo("heaviside", _fn("heaviside"), s_heaviside, np.heaviside, REAL_INT))
    add(OpInfo("ldexp", _fn("ldexp"), s_ldexp, _ref_ldexp, REAL_INT))
    add(
        OpInfo(
            "float_power",
            _fn("float_power"),
            s_float_power,
            np.float_power,
            REAL_COMPLEX + (I64,),
            (0.5, 2.0),
            composite=True,
        )
    )
    add(OpInfo("floor_divide", _fn("floor_divide"), s_floor_divide, np.floor_divide, REAL_INT, composite=True))
    add(OpInfo("trapezoid", _fn("trapezoid"), s_trapezoid, _ref_trapezoid, REAL_INT, composite=True))
    add(
        OpInfo(
            "_hermitian_from_triangle",
            _fn("_hermitian_from_triangle"),
            s_hermitian_from_triangle,
            _ref_hermitian_from_triangle,
            REAL_COMPLEX,
            composite=True,
        )
    )
    # not differentiable
    for name in ("isinf", "isposinf", "isneginf"):
        dts = (F64, F32, C128, I64) if name == "isinf" else (F64, F32, I64)
        add(OpInfo(name, _fn(name), s_special_unary, getattr(np, name), dts, differentiable=False))
    add(OpInfo("signbit", _fn("signbit"), s_signbit, np.signbit, REAL_INT, differentiable=False))
    add(
        OpInfo("logical_xor", _fn("logical_xor"), s_logical_xor, np.logical_xor, (F64, BOOL, I64), differentiable=False)
    )
    for name, ref in (("bitwise_left_shift", np.left_shift), ("bitwise_right_shift", np.right_shift)):
        add(OpInfo(name, _fn(name), s_shift, ref, (I64,), differentiable=False))
    add(
        OpInfo(
            "count_nonzero",
            _fn("count_nonzero"),
            s_count_nonzero,
            _ref_count_nonzero,
            (F64, I64, BOOL),
            differentiable=False,
        )
    )
    add(
        OpInfo("searchsorted", _fn("searchsorted"), s_searchsorted, _ref_searchsorted, (F64, I64), differentiable=False)
    )
