"""The faces' database, Array API part: entries written against the standard's namespace, run on
pushforward.array_api and on array_api_strict (the reference: values and dtypes), the element-wise
functions from the same table as NumPy's ufuncs (testing/opdb_faces_ufuncs.py). Where
array_api_strict refuses a call the standard leaves undefined (mixed kinds, booleans in arithmetic)
the case is skipped, not compared.

>>> "linalg.eigh" in ARRAY_API_FACES
True
"""

from __future__ import annotations

import numpy as np

from .faceinfo import M23, M34, SPD, SQ, V3, V4, Face
from .opdb_faces_numpy import OP_SWEPT
from .opdb_faces_ufuncs import ELEMENTWISE, elementwise_faces

__all__ = ["ARRAY_API_FACES", "XP_ELEMENTWISE"]

I4 = np.array([3, 0, 2, 3])
B34 = M34 > 0

# the standard's element-wise names (a subset of NumPy's ufuncs; `bitwise_invert` etc. included)
XP_ELEMENTWISE = (
    "abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_invert bitwise_left_shift bitwise_or "
    "bitwise_right_shift bitwise_xor ceil conj copysign cos cosh divide equal exp expm1 floor floor_divide "
    "greater greater_equal hypot isfinite isinf isnan less less_equal log log10 log1p log2 logaddexp "
    "logical_and logical_not logical_or logical_xor maximum minimum multiply negative nextafter not_equal "
    "positive pow reciprocal remainder sign signbit sin sinh sqrt square subtract tan tanh trunc"
).split()
assert set(XP_ELEMENTWISE) <= set(ELEMENTWISE)


def _v(fn, *inputs) -> Face:
    return Face(fn, inputs, diff=False)


def _eigh(xp, a):
    w, v = xp.linalg.eigh(a + xp.matrix_transpose(a))
    return w, xp.abs(v)


ARRAY_API_FACES: dict[str, Face] = {
    **elementwise_faces(XP_ELEMENTWISE),
    "sum": Face(lambda xp, a: xp.sum(a, axis=1), (M34,)),
    "sum.int_dtype": _v(lambda xp, a: xp.sum(a, dtype=xp.float64), I4),
    "prod": Face(lambda xp, a: xp.prod(a, axis=0, keepdims=True), (M23,)),
    "mean": Face(lambda xp, a: xp.mean(a, axis=(0, 1)), (M34,)),
    "std": Face(lambda xp, a: xp.std(a, axis=1, correction=1), (M34,)),
    "var": Face(lambda xp, a: xp.var(a, axis=0), (M34,)),
    "max": Face(lambda xp, a: xp.max(a, axis=1), (M34,)),
    "min": Face(lambda xp, a: xp.min(a, axis=0, keepdims=True), (M34,)),
    "cumulative_sum": Face(lambda xp, a: xp.cumulative_sum(a, axis=1, include_initial=True), (M23,)),
    "cumulative_prod": Face(lambda xp, a: xp.cumulative_prod(a, axis=0), (M23,)),
    "diff": Face(lambda xp, a: xp.diff(a, axis=1, n=2), (M34,)),
    "isinf.complex_infinity": _v(
        lambda xp, z: (xp.isinf(z), xp.isfinite(z), xp.isnan(z)),
        np.array([complex(np.inf, np.nan), complex(np.nan, np.inf), complex(np.nan, 1.0), 1 + 2j]),
    ),
    "all": _v(lambda xp, a: (xp.all(a, axis=0), xp.any(a, axis=1)), B34),
    "argmax": _v(lambda xp, a: (xp.argmax(a, axis=1), xp.argmin(a)), M34),
    "argsort": _v(lambda xp, a: xp.argsort(a, axis=1, descending=True), M34),
    "sort": Face(lambda xp, a: xp.sort(a, axis=0), (M34,)),
    "count_nonzero": _v(lambda xp, a: xp.count_nonzero(a, axis=1), B34),
    "nonzero": _v(lambda xp, a: xp.nonzero(a), B34),
    "searchsorted": _v(lambda xp, a, v: xp.searchsorted(xp.sort(a), v, side="right"), V4, V3),
    "unique": _v(
        lambda xp, a: (xp.unique_values(a), *xp.unique_counts(a), *xp.unique_inverse(a), *xp.unique_all(a)), I4
    ),
    "where": Face(lambda xp, a, b: xp.where(a > 0, a, b), (V4, V4[::-1]), (0, 1)),
    "clip": Face(lambda xp, a: xp.clip(a, -0.3, 0.4), (V4,)),
    "round": Face(lambda xp, a: xp.round(a * 10), (V4,)),
    "real": Face(lambda xp, a: (xp.real(a * (1 + 2j)), xp.imag(a * (1 + 2j))), (V4,)),
    "astype": _v(lambda xp, a: (xp.astype(a, xp.float32), xp.astype(a, xp.int64)), V4),
    "reshape": Face(lambda xp, a: xp.reshape(a, (4, 3)), (M34,)),
    "permute_dims": Face(lambda xp, a: xp.permute_dims(a, (1, 0)), (M23,)),
    "matrix_transpose": Face(lambda xp, a: xp.matrix_transpose(a), (M23,)),
    "moveaxis": Face(lambda xp, a: xp.moveaxis(a, 0, 1), (M23,)),
    "expand_dims": Face(lambda xp, a: xp.expand_dims(a, axis=1), (M23,)),
    "squeeze": Face(lambda xp, a: xp.squeeze(xp.expand_dims(a, axis=0), axis=0), (M23,)),
    "flip": Face(lambda xp, a: xp.flip(a, axis=1), (M23,)),
    "roll": Face(lambda xp, a: xp.roll(a, 1, axis=0), (M34,)),
    "concat": Face(lambda xp, a, b: xp.concat([a, b], axis=1), (M23, M23[::-1]), (0, 1)),
    "stack": Face(lambda xp, a, b: xp.stack([a, b]), (V3, V3 * 2), (0, 1)),
    "unstack": Face(lambda xp, a: xp.unstack(a, axis=1), (M23,)),
    "tile": Face(lambda xp, a: xp.tile(a, (2, 1)), (M23,)),
    "repeat": Face(lambda xp, a: xp.repeat(a, 2, axis=0), (M23,)),
    "broadcast_to": Face(lambda xp, a: xp.broadcast_to(a, (2, 3)), (V3,)),
    "broadcast_arrays": Face(lambda xp, a, b: xp.broadcast_arrays(a, b), (V3, M23), (0, 1)),
    "meshgrid": Face(lambda xp, a, b: xp.meshgrid(a, b, indexing="ij"), (V3, V4), (0, 1)),
    "take": Face(lambda xp, a, i: xp.take(a, i, axis=1), (M34, I4)),
    "take_along_axis": Face(
        lambda xp, a, i: xp.take_along_axis(a, i, axis=1),
        (M34, np.array([[0, 3], [1, 1], [2, 0]])),
    ),
    "tril": Face(lambda xp, a: (xp.tril(a, k=-1), xp.triu(a, k=1)), (M34,)),
    "matmul": Face(lambda xp, a, b: xp.matmul(a, b), (M23, M34), (0, 1)),
    "tensordot": Face(lambda xp, a, b: xp.tensordot(a, b, axes=1), (M23, M34), (0, 1)),
    "vecdot": Face(lambda xp, a, b: xp.vecdot(a, b), (M34, V4), (0, 1)),
    "creation": _v(
        lambda xp: (
            xp.zeros((2, 3)),
            xp.ones((2,), dtype=xp.int64),
            xp.full((2,), 1.5),
            xp.eye(3, k=1),
            xp.arange(1, 7, 2),
            xp.linspace(0.0, 1.0, 5),
            xp.empty((2, 2)).shape,
        )
    ),
    "creation_like": Face(
        lambda xp, a: (xp.zeros_like(a), xp.ones_like(a) * a, xp.full_like(a, 2.0) * a, xp.empty_like(a).shape), (V3,)
    ),
    "asarray": Face(lambda xp, a: xp.asarray(a, copy=True) * 2, (V3,)),
    "from_dlpack": _v(lambda xp, a: xp.from_dlpack(a), V3),
    "dtypes": _v(
        lambda xp, a: (
            xp.result_type(a, xp.float32) == xp.float64,
            xp.can_cast(a.dtype, xp.float32),
            xp.isdtype(a.dtype, "real floating"),
            xp.finfo(a.dtype).eps,
            xp.iinfo(xp.int32).max,
        ),
        V3,
    ),
    # linalg
    "linalg.cholesky": Face(lambda xp, a: xp.linalg.cholesky(a @ xp.matrix_transpose(a) + 3 * xp.eye(3)), (SQ,)),
    "linalg.det": Face(lambda xp, a: xp.linalg.det(a), (SQ,)),
    "linalg.slogdet": Face(lambda xp, a: tuple(xp.linalg.slogdet(a)), (SQ,)),
    "linalg.inv": Face(lambda xp, a: xp.linalg.inv(a), (SPD,)),
    "linalg.solve": Face(lambda xp, a, b: xp.linalg.solve(a, b), (SPD, SQ), (0, 1)),
    "linalg.eigh": Face(_eigh, (SQ,)),
    "linalg.eigvalsh": Face(lambda xp, a: xp.linalg.eigvalsh(a + xp.matrix_transpose(a)), (SQ,)),
    "linalg.qr": Face(lambda xp, a: xp.abs(xp.linalg.qr(a).R), (M34.T,)),
    "linalg.svd": Face(lambda xp, a: xp.linalg.svd(a, full_matrices=False).S, (M34,)),
    "linalg.svdvals": Face(lambda xp, a: xp.linalg.svdvals(a), (M34,)),
    "linalg.pinv": Face(lambda xp, a: xp.linalg.pinv(a), (M34,)),
    "linalg.matrix_power": Face(lambda xp, a: xp.linalg.matrix_power(a, 3), (SQ,)),
    "linalg.matrix_rank": _v(lambda xp, a: xp.linalg.matrix_rank(a), M34),
    "linalg.matrix_norm": Face(lambda xp, a: xp.linalg.matrix_norm(a, ord="fro"), (M34,)),
    "linalg.vector_norm": Face(lambda xp, a: xp.linalg.vector_norm(a, ord=3, axis=1), (M34,)),
    "linalg.cross": Face(lambda xp, a, b: xp.linalg.cross(a, b), (M23, M23[::-1]), (0, 1)),
    "linalg.diagonal": Face(lambda xp, a: xp.linalg.diagonal(a, offset=1), (M34,)),
    "linalg.trace": Face(lambda xp, a: xp.linalg.trace(a), (SQ,)),
    "linalg.outer": Face(lambda xp, a, b: xp.linalg.outer(a, b), (V3, V4), (0, 1)),
    "linalg.matmul": Face(lambda xp, a, b: xp.linalg.matmul(a, b), (M23, M34), (0, 1)),
    "linalg.tensordot": Face(lambda xp, a, b: xp.linalg.tensordot(a, b, axes=1), (M23, M34), (0, 1)),
    "linalg.vecdot": Face(lambda xp, a, b: xp.linalg.vecdot(a, b), (M34, V4), (0, 1)),
    "linalg.matrix_transpose": Face(lambda xp, a: xp.linalg.matrix_transpose(a), (M23,)),
    # fft
    "fft.fft": Face(lambda xp, a: xp.fft.ifft(xp.fft.fft(xp.astype(a, xp.complex128), n=5)), (V4,)),
    "fft.fftn": Face(lambda xp, a: xp.fft.ifftn(xp.fft.fftn(xp.astype(a, xp.complex128))), (M34,)),
    "fft.rfft": Face(lambda xp, a: xp.fft.irfft(xp.fft.rfft(a), n=4), (V4,)),
    "fft.rfftn": Face(lambda xp, a: xp.fft.irfftn(xp.fft.rfftn(a), s=(3, 4)), (M34,)),
    "fft.hfft": Face(lambda xp, a: (xp.fft.hfft(xp.astype(a, xp.complex128)), xp.fft.ihfft(a)), (V4,)),
    "fft.shift": Face(lambda xp, a: (xp.fft.fftshift(a), xp.fft.ifftshift(a, axes=1)), (M34,)),
    "fft.freqs": _v(lambda xp: (xp.fft.fftfreq(5, d=0.1), xp.fft.rfftfreq(6))),
}

for _k, _f in ARRAY_API_FACES.items():
    if _k.startswith(("linalg.", "fft.")):
        _f.skip = {**OP_SWEPT, **_f.skip}
