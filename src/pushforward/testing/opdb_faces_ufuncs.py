"""The faces' database, element-wise part: every NumPy ufunc of pushforward.numpy (and, by the
same table, the Array API's element-wise functions) in each input dtype NumPy reads (float64,
float32, int64, bool, complex128, a float32 array with a Python float): values and dtypes against
NumPy's, where NumPy raises the face raises the same error class; derivatives on float64; and the
ufunc machinery (out=, where=, .at, .outer, .reduce, .accumulate).

>>> ELEMENTWISE["hypot"]
('ff', 'all')
>>> sorted(elementwise_faces(["hypot"]))[:2]
['hypot', 'hypot.bool']
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..ops.numpy_names import numpy_ufuncs
from .faceinfo import M23, V3, V4, Face

__all__ = ["ELEMENTWISE", "DOMAINS", "TORCH_RULES", "elementwise_faces", "UFUNC_METHOD_FACES"]

# name -> (kind, domain). kind: "f" unary differentiable, "n" unary without a derivative (a
# boolean or integer result, or piecewise constant: values only), "ff"/"f0"/"0f" binary
# differentiable in both / the first / the second input, "nn" binary without a derivative,
# "f2" unary with two results, "ff2" binary with two results.
ELEMENTWISE: dict[str, tuple[str, str]] = {
    **{n: ("f", "all") for n in "sin cos tan sinh cosh tanh arctan atan arcsinh asinh exp exp2 expm1".split()},
    **{n: ("f", "all") for n in "negative positive square conj conjugate deg2rad degrees rad2deg radians".split()},
    **{n: ("f", "all") for n in "abs absolute fabs cbrt reciprocal ceil floor rint trunc sign".split()},
    **{n: ("f", "unit") for n in "arcsin asin arccos acos arctanh atanh".split()},
    **{n: ("f", "gt1") for n in "arccosh acosh".split()},
    **{n: ("f", "pos") for n in "log log2 log10 log1p sqrt".split()},
    **{n: ("n", "all") for n in "signbit isfinite isinf isnan isnat logical_not spacing".split()},
    **{n: ("n", "int") for n in "invert bitwise_not bitwise_invert bitwise_count".split()},
    **{n: ("ff", "all") for n in "add subtract multiply divide true_divide maximum minimum fmax fmin".split()},
    **{n: ("ff", "all") for n in "arctan2 atan2 hypot logaddexp logaddexp2 copysign fmod remainder mod".split()},
    **{n: ("ff", "pos") for n in "power pow float_power".split()},
    "floor_divide": ("ff", "all"),
    "ldexp": ("f0", "int2"),
    "heaviside": ("0f", "all"),
    **{n: ("nn", "all") for n in "equal not_equal greater greater_equal less less_equal nextafter".split()},
    **{n: ("nn", "all") for n in "logical_and logical_or logical_xor".split()},
    **{n: ("nn", "int") for n in "gcd lcm bitwise_and bitwise_or bitwise_xor".split()},
    **{n: ("nn", "int") for n in "left_shift right_shift bitwise_left_shift bitwise_right_shift".split()},
    "modf": ("f2", "all"),
    "frexp": ("n", "all"),
    "divmod": ("ff2", "all"),
}

DOMAINS = {
    "all": np.array([-1.3, -0.4, 0.3, 1.1]),
    "unit": np.array([-0.8, -0.3, 0.2, 0.7]),
    "gt1": np.array([1.2, 1.7, 2.4, 3.1]),
    "pos": np.array([0.3, 0.8, 1.5, 2.6]),
    "int": np.array([-3, 0, 2, 5]),
    "int2": np.array([-1.3, -0.4, 0.3, 1.1]),
}
# the second operand of binary functions (away from the first's values: no ties, no zero divisors)
_OTHER = {"all": np.array([0.7, -1.2, 0.5, 1.6]), "pos": np.array([0.6, -1.4, 2.2, 0.5])}
_INT_OTHER = np.array([2, 1, 3, 1])


def _call(name: str, n: int):
    if n == 1:
        return lambda np, a: getattr(np, name)(a)
    return lambda np, a, b: getattr(np, name)(a, b)


def _dtype_inputs(domain: str, n: int) -> dict:
    """Inputs of one element-wise function in each dtype NumPy reads (values only)."""
    x = DOMAINS[domain]
    y = _INT_OTHER if domain in ("int", "int2") else _OTHER.get(domain, _OTHER["all"])
    ints = DOMAINS["int"]
    out = {
        "f32": (x.astype(np.float32),) + ((y.astype(np.float32),) if n == 2 else ()),
        "i64": (ints,) + ((_INT_OTHER,) if n == 2 else ()),
        "bool": (ints > 0,) + ((_INT_OTHER > 1,) if n == 2 else ()),
        "c128": (x + 0.5j * x[::-1],) + ((y - 0.3j * y[::-1],) if n == 2 else ()),
    }
    if n == 2:
        out["f32-scalar"] = (x.astype(np.float32), 2.5)
        out["i64-f32"] = (ints, y.astype(np.float32))
    if domain == "int2":  # ldexp: NumPy reads integer exponents only (the op also takes floats, as torch)
        out = {k: (v[0], _INT_OTHER) for k, v in out.items() if k != "i64-f32"}
    return out


# Dtype cases where the face keeps torch's rule on purpose (each: why), left out of the sweep.
TORCH_RULES = {
    "conj.bool": "NumPy's conjugate has no boolean loop and returns int8; the conj op keeps bool, as torch",
    "conjugate.bool": "as conj.bool",
    "positive.bool": "NumPy's positive has no boolean loop and raises; the face returns its input, as torch",
}


_HEAVY = ("jet", "compile", "dask")


def _op_swept(name: str) -> dict:
    """A NumPy name derivatives.yaml gives to an op: the op database sweeps that op under jet,
    pf.compile and Dask (the face adds a name, not a computation)."""
    return {c: "the op's own entry in testing/opdb sweeps it" for c in _HEAVY} if name in numpy_ufuncs() else {}


def elementwise_faces(names: Iterable[str]) -> dict[str, Face]:
    """The entries of `names` (keys of ELEMENTWISE): float64 with its derivatives, then each other
    dtype for values and dtypes ("sin.f32", ...)."""
    out = {}
    for name in names:
        kind, domain = ELEMENTWISE[name]
        n = 2 if kind.startswith(("ff", "f0", "0f", "nn")) else 1
        x = DOMAINS[domain]
        if domain == "int2":  # ldexp: a float mantissa and an integer exponent
            inputs: tuple = (x, _INT_OTHER)
        elif domain == "int":
            inputs = (x, _INT_OTHER)[:n]
        else:
            inputs = (x, _OTHER.get(domain, _OTHER["all"]))[:n]
        argnums = {"f0": (0,), "0f": (1,)}.get(kind, tuple(range(n)))
        diff = kind not in ("n", "nn")
        out[name] = Face(_call(name, n), inputs, argnums, diff=diff, skip=_op_swept(name))
        for label, args in _dtype_inputs(domain, n).items():
            if f"{name}.{label}" not in TORCH_RULES:
                out[f"{name}.{label}"] = Face(_call(name, n), args, diff=False)
    return out


def _at(np, a, b):
    c = a.copy()
    np.add.at(c, np.array([0, 2, 0]), b)
    return c


def _out_where(np, a, b):
    out = np.zeros_like(a)
    np.multiply(a, b, out=out, where=a > 0)
    return out


UFUNC_METHOD_FACES: dict[str, Face] = {
    "add.outer": Face(lambda np, a, b: np.add.outer(a, b), (V3, V4), (0, 1)),
    "multiply.outer": Face(lambda np, a, b: np.multiply.outer(a, b), (V3, V4), (0, 1)),
    "add.reduce": Face(lambda np, a: np.add.reduce(a, axis=1), (M23,)),
    "multiply.reduce": Face(lambda np, a: np.multiply.reduce(a, axis=0, keepdims=True), (M23,)),
    "maximum.reduce": Face(lambda np, a: np.maximum.reduce(a, axis=1), (M23,)),
    "add.accumulate": Face(lambda np, a: np.add.accumulate(a, axis=1), (M23,)),
    "multiply.accumulate": Face(lambda np, a: np.multiply.accumulate(a), (V4,)),
    "add.at": Face(
        _at,
        (V4, V3),
        (0, 1),
        skip={"vmap": "ufunc.at writes at an index array NumPy reads: refused under vmap, naming it"},
    ),
    "multiply.out_where": Face(_out_where, (V4, V4[::-1]), (0, 1)),
    "add.out": Face(lambda np, a, b: np.add(a, b, out=np.empty_like(a)), (V4, V4[::-1]), (0, 1)),
    "sin.out_where": Face(lambda np, a: np.sin(a, out=np.ones_like(a), where=a < 0.5), (V4,)),
    "add.dtype": Face(lambda np, a: np.add(a, a, dtype=np.float32), (V4,), diff=False),
}
