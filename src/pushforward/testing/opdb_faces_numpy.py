"""The faces' database, NumPy part beyond opdb_faces.py's first entries: reductions, shapes,
indexing, the writing functions (copyto, put, place, putmask, fill_diagonal: on a copy, so the
derivative reaches both the written array and the values), histograms with weights, set and sort
functions, creation, dtype and shape utilities (values and dtypes only), np.linalg and np.fft, and
np.random (seeded: the same numbers as NumPy's generator, as tensors).

>>> sorted(MORE_NUMPY_FACES)[:2]
['all', 'allclose']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .faceinfo import M23, M34, P4, SPD, SQ, V3, V4, Face

__all__ = ["OP_SWEPT", "MORE_NUMPY_FACES", "LINALG_FACES", "FFT_FACES", "RANDOM_FACES"]

I4 = np.array([3, 0, 2, 3])
B4 = np.array([True, False, True, True])
B34 = M34 > 0
N34 = np.where(M34 > 0.6, np.nan, M34)  # NaNs for the nan-functions
_READS = "reads the values (a sort, a search, a count): an integer result, no derivative"


def _values(fn: Any, *inputs: Any) -> Face:
    """An entry checked for values and dtypes only."""
    return Face(fn, inputs, diff=False)


def _write(name: str) -> Any:
    def f(np, a, v):
        c = np.copy(a)
        if name == "copyto":
            np.copyto(c, v[:4], where=np.array([True, False, True, True]))
        elif name == "put":
            np.put(c, np.array([0, 5]), v[:2])
        elif name == "place":
            np.place(c, c > 0, v)
        elif name == "putmask":
            np.putmask(c, c < 0, v)
        else:
            np.fill_diagonal(c, v[:3])
        return c

    return f


def _put_along(np, a, v):
    c = np.copy(a)
    np.put_along_axis(c, np.array([[0], [2]]), v, axis=1)
    return c


def _as_copy(np, a):
    return np.copy(a) * np.asarray(a) + np.ascontiguousarray(a) + np.asanyarray(a)


def _refusing(fn: Any, why: str, *inputs: Any) -> Face:
    """An entry whose derivative the face refuses (values on tensors without one)."""
    return Face(fn, inputs, diff=False, refuses=why)


def _own(fn: Any, *inputs: Any) -> Face:
    """NumPy's own conversion to an array (no handler): an array, refused with a derivative."""
    return Face(fn, inputs, diff=False, plain=True, refuses="NumPy's own: converts to an array")


_NAN_READ = {n: "reads the values for NaN (a ragged selection is refused)" for n in ("vmap", "dask")}
_NOT_YET = "not implemented with a derivative yet: refused, naming the function"
_RAGGED = "a selection of data-dependent length: refused with a derivative, naming the function"
_WRITES_BATCHED = "a write at positions NumPy computes from the values: refused under vmap, naming it"
_MASK_VALUES = "the mask is read from the values (a Dask array would be computed): refused lazily"


MORE_NUMPY_FACES: dict[str, Face] = {
    # reductions
    **{n: Face(lambda np, a, n=n: getattr(np, n)(a, axis=1), (M34,)) for n in ("amax", "amin", "max", "min")},
    "prod": Face(lambda np, a: np.prod(a, axis=0, keepdims=True), (M34,)),
    "std": Face(lambda np, a: np.std(a, axis=1, ddof=1), (M34,)),
    "var": Face(lambda np, a: np.var(a), (M34,)),
    "var.int": _values(lambda np, a: np.var(a), I4),
    "cumsum": Face(lambda np, a: np.cumsum(a, axis=1), (M34,)),
    "cumprod": Face(lambda np, a: np.cumprod(a), (M23,)),
    "trace": Face(lambda np, a: np.trace(a, offset=1), (M34,)),
    "nanmean": Face(lambda np, a: np.nanmean(a, axis=0), (N34,)),
    "nanmin": Face(lambda np, a: np.nanmin(a, axis=1), (N34,)),
    # (with a NaN in a row the selection is ragged: refused, naming the function; without, differentiable)
    "nanmedian": Face(lambda np, a: np.nanmedian(a, axis=1), (M34,), skip=_NAN_READ),
    "nanquantile": Face(lambda np, a: np.nanquantile(a, 0.3, axis=1), (M34,), skip=_NAN_READ),
    "nanpercentile": Face(lambda np, a: np.nanpercentile(a, 70, axis=0), (M34,), skip=_NAN_READ),
    "nanmedian.nan": _refusing(lambda np, a: np.nanmedian(a, axis=1), _RAGGED, N34),
    "nancumprod": Face(lambda np, a: np.nancumprod(a, axis=1), (N34,)),
    "nansum.dtype": _values(lambda np, a: np.nansum(a, axis=1, dtype=np.float32), N34),
    "nanargmax": _values(lambda np, a: np.nanargmax(a, axis=1), N34),
    "nanargmin": _values(lambda np, a: np.nanargmin(a, axis=1), N34),
    "all": _values(lambda np, a: np.all(a, axis=0), B34),
    "any": _values(lambda np, a: (np.any(a, axis=1), np.any(a)), B34),
    "argmax": _values(lambda np, a: np.argmax(a, axis=1), M34),
    "argmin": _values(lambda np, a: np.argmin(a), M34),
    "count_nonzero": _values(lambda np, a: np.count_nonzero(a > 0, axis=1), M34),
    # shapes
    "reshape": Face(lambda np, a: np.reshape(a, (4, 3)), (M34,)),
    "ravel": Face(lambda np, a: np.ravel(a), (M23,)),
    "transpose": Face(lambda np, a: np.transpose(a, (1, 0)), (M23,)),
    "permute_dims": Face(lambda np, a: np.permute_dims(a), (M23,)),
    "matrix_transpose": Face(lambda np, a: np.matrix_transpose(a), (M23,)),
    "swapaxes": Face(lambda np, a: np.swapaxes(a, 0, 1), (M23,)),
    "moveaxis": Face(lambda np, a: np.moveaxis(a[None], 0, 2), (M23,)),
    "expand_dims": Face(lambda np, a: np.expand_dims(a, (0, 2)), (M23,)),
    "squeeze": Face(lambda np, a: np.squeeze(a[:, None], axis=1), (M23,)),
    "broadcast_to": Face(lambda np, a: np.broadcast_to(a, (2, 3)), (V3,)),
    "flip": Face(lambda np, a: np.flip(a, axis=1), (M23,)),
    "roll": Face(lambda np, a: np.roll(a, 2, axis=1), (M34,)),
    "concatenate": Face(lambda np, a, b: np.concatenate([a, b], axis=0), (M23, M23[::-1]), (0, 1)),
    "concat": Face(lambda np, a, b: np.concat([a, b], axis=None), (M23, V3), (0, 1)),
    "stack": Face(lambda np, a, b: np.stack([a, b], axis=1), (V3, V3 * 2), (0, 1)),
    "row_stack": Face(lambda np, a, b: np.row_stack([a, b]), (V3, V3 * 2), (0, 1)),
    "astype": _values(lambda np, a: (np.astype(a, np.float32), np.astype(a, np.int64)), V4),
    "insert": _refusing(lambda np, a, v: np.insert(a, [1, 3], v[:2]), _NOT_YET, V4, V3),
    "trim_zeros": _refusing(lambda np, a: np.trim_zeros(np.concatenate([np.zeros(1), a, np.zeros(2)])), _RAGGED, V3),
    "diagonal": Face(lambda np, a: np.diagonal(a, 1), (M34,)),
    "tril": Face(lambda np, a: np.tril(a, -1), (M34,)),
    "triu": Face(lambda np, a: np.triu(a), (M34,)),
    "around": Face(lambda np, a: np.around(a * 10, 1), (V4,)),
    "round": Face(lambda np, a: np.round(a * 10), (V4,)),
    "fix": Face(lambda np, a: np.fix(a * 3), (V4,)),
    "clip": Face(lambda np, a: np.clip(a, -0.3, 0.4), (V4,)),
    "real": Face(lambda np, a: np.real(a * (1 + 2j)), (V4,)),
    "imag": Face(lambda np, a: np.imag(a * (1 + 2j)), (V4,)),
    "outer": Face(lambda np, a, b: np.outer(a, b), (V3, V4), (0, 1)),
    "inner": Face(lambda np, a, b: np.inner(a, b), (M34, V4), (0, 1)),
    "vdot": Face(lambda np, a, b: np.vdot(a, b), (M23, M23[::-1]), (0, 1)),
    "matmul": Face(lambda np, a, b: np.matmul(a, b), (M23, M34), (0, 1)),
    "vecmat": Face(lambda np, a, b: np.vecmat(a, b), (V3, M34), (0, 1)),
    "einsum": Face(lambda np, a, b: np.einsum("ij,jk->ik", a, b), (M23, M34), (0, 1)),
    "where": Face(lambda np, a, b: np.where(a > 0, a, b), (V4, V4[::-1]), (0, 1)),
    "where.one_argument": _values(lambda np, a: np.where(a > 0), M34),
    "nonzero": _values(lambda np, a: np.nonzero(a > 0), M34),
    "flatnonzero": _values(lambda np, a: np.flatnonzero(a > 0), M34),
    "argwhere": _values(lambda np, a: np.argwhere(a > 0), M34),
    "extract": _refusing(lambda np, a: np.extract(a > 0, a), _RAGGED, M34),
    "compress": _refusing(lambda np, a: np.compress([True, False, True], a, axis=0), _RAGGED, M34),
    "put_along_axis": _refusing(_put_along, _NOT_YET, M23, V3[:2, None]),
    "copyto": Face(_write("copyto"), (V4, V4[::-1]), (0, 1)),
    "put": Face(_write("put"), (M23, V3), (0, 1), skip={"vmap": _WRITES_BATCHED}),
    "place": Face(_write("place"), (M23, V4 * 5), (0, 1), skip={"vmap": _WRITES_BATCHED, "dask": _MASK_VALUES}),
    "putmask": Face(_write("putmask"), (M23, V3 * 5), (0, 1), skip={"vmap": _WRITES_BATCHED, "dask": _MASK_VALUES}),
    "fill_diagonal": Face(_write("fill_diagonal"), (SQ, V3), (0, 1), skip={"vmap": _WRITES_BATCHED}),
    # np.asarray of a tensor is NumPy's own (not dispatched): the drop-in's keeps the tensor
    "copy_family": Face(_as_copy, (V4,), dispatch=False),
    "asarray_chkfinite": _own(lambda np, a: np.asarray_chkfinite(a), V4),
    # sorting, searching, counting
    "argsort": _values(lambda np, a: np.argsort(a, axis=1), M34),
    "argpartition": _values(lambda np, a: np.sort(np.argpartition(a, 1)[:1]), V4),
    "lexsort": _values(lambda np, a, b: np.lexsort((a, b)), I4, V4),
    "searchsorted": _values(lambda np, a, v: np.searchsorted(np.sort(a), v, side="right"), V4, V3),
    "digitize": _values(lambda np, x: np.digitize(x, np.array([-0.5, 0.0, 0.5])), V4),
    "sort_complex": _values(lambda np, a: np.sort_complex(a + 1j * a[::-1]), V4),
    "unique": _values(lambda np, a: np.unique(a, return_counts=True), I4),
    "unique_values": _values(lambda np, a: np.unique_values(a), I4),
    "unique_counts": _values(lambda np, a: tuple(np.unique_counts(a)), I4),
    "unique_inverse": _values(lambda np, a: tuple(np.unique_inverse(a)), I4),
    "unique_all": _values(lambda np, a: tuple(np.unique_all(a)), I4),
    "intersect1d": _values(lambda np, a, b: np.intersect1d(a, b), I4, np.array([2, 3, 5])),
    "union1d": _values(lambda np, a, b: np.union1d(a, b), I4, np.array([2, 3, 5])),
    "setdiff1d": _values(lambda np, a, b: np.setdiff1d(a, b), I4, np.array([2, 5])),
    "setxor1d": _values(lambda np, a, b: np.setxor1d(a, b), I4, np.array([2, 5])),
    "isin": _values(lambda np, a, b: np.isin(a, b), I4, np.array([2, 5])),
    "bincount": _values(lambda np, a: np.bincount(a, minlength=5), I4),
    "bincount.weights": Face(lambda np, w: np.bincount(np.array([3, 0, 2, 3]), weights=w), (V4,)),
    "histogram": _values(lambda np, a: np.histogram(a, bins=3, range=(-1.0, 1.0)), M34),
    "histogram.weights": Face(
        lambda np, w: np.histogram(np.array([0.1, 0.5, 0.9, 0.3]), bins=2, range=(0.0, 1.0), weights=w)[0], (V4,)
    ),
    "histogram.density": _values(lambda np, a: np.histogram(a, bins=4, density=True), M34),
    "histogram2d": _values(lambda np, a, b: np.histogram2d(a, b, bins=2), V4, V4[::-1]),
    "histogram2d.weights": Face(
        lambda np, w: np.histogram2d(np.array([0.1, 0.5, 0.9, 0.3]), np.array([0.2, 0.8, 0.4, 0.6]), bins=2, weights=w)[
            0
        ],
        (V4,),
    ),
    "histogramdd": _values(lambda np, a: np.histogramdd(a.T, bins=2)[0], M34[:2]),
    "histogram_bin_edges": _values(lambda np, a: np.histogram_bin_edges(a, bins=3), M34),
    "packbits": _values(lambda np, a: np.packbits(a), B34),
    "unpackbits": _values(lambda np, a: np.unpackbits(a), np.array([3, 255], dtype=np.uint8)),
    "isclose": _values(lambda np, a, b: np.isclose(a, b, atol=0.3), V4, V4[::-1]),
    "allclose": _values(lambda np, a, b: np.allclose(a, b), V4, V4 + 1e-12),
    "array_equal": _values(lambda np, a, b: np.array_equal(a, b), V4, V4),
    "array_equiv": _values(lambda np, a: np.array_equiv(a, a[None]), V4),
    "isinf.complex_infinity": _values(
        lambda np, z: (np.isinf(z), np.isfinite(z), np.isnan(z)),
        np.array([complex(np.inf, np.nan), complex(np.nan, np.inf), complex(np.nan, 1.0), 1 + 2j]),
    ),
    "float_power.int": _values(lambda np, a: np.float_power(a, 2), I4),
    "isposinf": _values(lambda np, a: np.isposinf(a / 0.0), V4),
    "isneginf": _values(lambda np, a: np.isneginf(a / 0.0), V4),
    "iscomplex": _values(lambda np, a: np.iscomplex(a + 1j * (a > 0)), V4),
    "isreal": _values(lambda np, a: np.isreal(a + 1j * (a > 0)), V4),
    "iscomplexobj": _values(lambda np, a: (np.iscomplexobj(a), np.isrealobj(a)), V4),
    "isscalar": _values(lambda np, a: (np.isscalar(a), np.iterable(a)), V4),
    "shape": _values(lambda np, a: (np.shape(a), np.ndim(a), np.size(a), np.size(a, 1)), M34),
    "result_type": _values(lambda np, a: (np.result_type(a, 1.0), np.min_scalar_type(a), np.common_type(a)), V4),
    "can_cast": _values(lambda np, a: np.can_cast(a, np.float32), V4),
    "shares_memory": _values(lambda np, a: (np.shares_memory(a, a[1:]), np.may_share_memory(a, a + 1)), V4),
    "array2string": _values(lambda np, a: (np.array2string(a, precision=3), np.array_str(a, precision=2)), V4),
    "apply_over_axes": Face(lambda np, a: np.apply_over_axes(np.sum, a, [0]), (M34,)),
    "polydiv": _refusing(lambda np, a, b: np.polydiv(a, b), _NOT_YET + " (a data-dependent length)", V4, P4[:2]),
    "polysub": Face(lambda np, a, b: np.polysub(a, b), (V3, V4), (0, 1)),
    "roots": Face(
        lambda np, p: np.sort(np.roots(p)),
        (np.array([1.0, -6.0, 11.0, -6.0]),),
        skip={n: "strips the leading zeros it reads from the values" for n in ("vmap", "dask")},
    ),
    # index utilities (integer results)
    "ix_": _values(lambda np, a, b: np.ix_(a, b), I4[:2], np.array([0, 2])),
    "ravel_multi_index": _values(lambda np, a, b: np.ravel_multi_index((a, b), (4, 4)), I4, I4[::-1]),
    "unravel_index": _values(lambda np, a: np.unravel_index(a, (2, 2)), I4),
    "diag_indices_from": _values(lambda np, a: np.diag_indices_from(a), SQ),
    "tril_indices_from": _values(lambda np, a: np.tril_indices_from(a), SQ),
    "triu_indices_from": _values(lambda np, a: np.triu_indices_from(a, 1), SQ),
    # creation: tensors from numbers
    **{n: _values(lambda np, n=n: getattr(np, n)((2, 3))) for n in ("zeros", "ones", "indices")},
    "empty": _values(lambda np: np.empty((2, 3)).shape),
    "full": _values(lambda np: np.full((2, 2), 1.5)),
    "arange": _values(lambda np: (np.arange(5), np.arange(0.5, 2.0, 0.5))),
    "eye": _values(lambda np: (np.eye(3, k=1), np.identity(2), np.tri(3, 2))),
    "full_like": Face(lambda np, a: np.full_like(a, 2.0) * a, (V3,)),
    "fromfunction": _values(lambda np: np.fromfunction(lambda i, j: i + 2 * j, (2, 3))),
    "fromiter": _values(lambda np: np.fromiter(range(4), float)),
    "fromstring": _values(lambda np: np.fromstring("1 2 3", sep=" ")),
    "frombuffer": _values(lambda np: np.frombuffer(bytes(range(8)), dtype=np.uint8)),
    "copy": Face(lambda np, a: np.copy(a) * 2, (V3,)),
    "asfortranarray": _own(lambda np, a: np.asfortranarray(a), M23),
    "require": _own(lambda np, a: np.require(a, requirements="C") * 2, V3),
    "index_arrays": Face(
        lambda np: (np.diag_indices(3), np.tril_indices(3), np.triu_indices(3, 1)), (), diff=False, plain=True
    ),
    "mask_indices": Face(lambda np: np.mask_indices(3, np.triu), (), diff=False, plain=True),
    "broadcast_shapes": _values(lambda np: np.broadcast_shapes((2, 1), (3,))),
    "einsum_path": _values(lambda np, a, b: np.einsum_path("ij,jk", a, b)[0], M23, M34),
    **{
        n: Face(lambda np, n=n: getattr(np, n)(5), (), diff=False, plain=True)
        for n in ("bartlett", "blackman", "hamming", "hanning")
    },
    "kaiser": Face(lambda np: np.kaiser(5, 2.0), (), diff=False, plain=True),
}


# np.linalg and np.fft name the linalg and fft ops: their op-database entries sweep them under jet,
# pf.compile and Dask (the face adds names and NumPy's argument conventions, checked here otherwise)
OP_SWEPT = {c: "the op's own entry in testing/opdb sweeps it" for c in ("jet", "compile", "dask")}

LINALG_FACES: dict[str, Face] = {
    "linalg.inv": Face(lambda np, a: np.linalg.inv(a), (SPD,)),
    "linalg.det": Face(lambda np, a: np.linalg.det(a), (SQ,)),
    "linalg.slogdet": Face(lambda np, a: tuple(np.linalg.slogdet(a)), (SQ,)),
    "linalg.solve": Face(lambda np, a, b: np.linalg.solve(a, b), (SPD, M34[:, :2]), (0, 1)),
    "linalg.cholesky": Face(lambda np, a: np.linalg.cholesky(a), (SPD,)),
    "linalg.qr": Face(lambda np, a: np.abs(np.linalg.qr(a)[1]), (M34.T,)),
    "linalg.svdvals": Face(lambda np, a: np.linalg.svdvals(a), (M34,)),
    "linalg.pinv": Face(lambda np, a: np.linalg.pinv(a), (M34,)),
    "linalg.lstsq": Face(lambda np, a, b: np.linalg.lstsq(a, b)[0], (M34.T, V4), (0, 1)),
    "linalg.matrix_power": Face(lambda np, a: np.linalg.matrix_power(a, 3), (SQ,)),
    "linalg.matrix_rank": _values(lambda np, a: np.linalg.matrix_rank(a), M34),
    "linalg.norm": Face(lambda np, a: (np.linalg.norm(a), np.linalg.norm(a, ord=1, axis=0)), (M34,)),
    "linalg.vector_norm": Face(lambda np, a: np.linalg.vector_norm(a, ord=3, axis=1), (M34,)),
    "linalg.cond": Face(lambda np, a: np.linalg.cond(a), (SPD,)),
    "linalg.eigvals": Face(lambda np, a: np.sort(np.linalg.eigvals(a).real), (SPD,)),
    "linalg.eig": Face(lambda np, a: np.sort(np.linalg.eig(a)[0].real), (SPD,)),
    "linalg.multi_dot": Face(lambda np, a, b, c: np.linalg.multi_dot([a, b, c]), (M23, M34, V4), (0, 1, 2)),
    "linalg.tensorinv": Face(lambda np, a: np.linalg.tensorinv(a.reshape(3, 1, 3), ind=2), (SPD,)),
    "linalg.cross": Face(lambda np, a, b: np.linalg.cross(a, b), (M23, M23[::-1]), (0, 1)),
    "linalg.diagonal": Face(lambda np, a: np.linalg.diagonal(a, offset=1), (M34,)),
    "linalg.trace": Face(lambda np, a: np.linalg.trace(a), (M34,)),
    "linalg.outer": Face(lambda np, a, b: np.linalg.outer(a, b), (V3, V4), (0, 1)),
    "linalg.matmul": Face(lambda np, a, b: np.linalg.matmul(a, b), (M23, M34), (0, 1)),
    "linalg.tensordot": Face(lambda np, a, b: np.linalg.tensordot(a, b, axes=1), (M23, M34), (0, 1)),
    "linalg.matrix_transpose": Face(lambda np, a: np.linalg.matrix_transpose(a), (M23,)),
}

for _f in LINALG_FACES.values():
    _f.skip = {**OP_SWEPT, **_f.skip}

FFT_FACES: dict[str, Face] = {
    "fft.fft_ifft": Face(lambda np, a: np.fft.ifft(np.fft.fft(a * (1 + 0.5j), n=5)), (V4,)),
    "fft.fft2": Face(lambda np, a: np.fft.ifft2(np.fft.fft2(a)), (M34,)),
    "fft.fftn": Face(lambda np, a: np.fft.ifftn(np.fft.fftn(a, axes=(1,)), axes=(1,)), (M34,)),
    "fft.rfft": Face(lambda np, a: np.fft.irfft(np.fft.rfft(a), n=4), (V4,)),
    "fft.rfft2": Face(lambda np, a: np.fft.irfft2(np.fft.rfft2(a), s=(3, 4)), (M34,)),
    "fft.hfft": Face(lambda np, a: (np.fft.hfft(a * (1 - 0.5j)), np.fft.ihfft(a)), (V4,)),
    "fft.ifftshift": Face(lambda np, a: np.fft.ifftshift(a), (M34,)),
    "fft.freqs": Face(lambda np: (np.fft.fftfreq(5, 0.1), np.fft.rfftfreq(6)), (), diff=False, plain=True),
}

for _f in FFT_FACES.values():
    _f.skip = {**OP_SWEPT, **_f.skip}

_RANDOM_CALLS = {
    "rand": (2, 3),
    "randn": (3,),
    "random": (3,),
    "random_sample": (3,),
    "ranf": (2,),
    "sample": (2,),
    "standard_normal": (3,),
    "standard_cauchy": (3,),
    "standard_exponential": (3,),
}
_RANDOM_KW = {
    "normal": dict(loc=1.0, scale=2.0, size=3),
    "uniform": dict(low=-1.0, high=2.0, size=3),
    "beta": dict(a=2.0, b=3.0, size=3),
    "binomial": dict(n=5, p=0.3, size=3),
    "chisquare": dict(df=2.0, size=3),
    "exponential": dict(scale=2.0, size=3),
    "f": dict(dfnum=3.0, dfden=4.0, size=3),
    "gamma": dict(shape=2.0, size=3),
    "geometric": dict(p=0.4, size=3),
    "gumbel": dict(size=3),
    "hypergeometric": dict(ngood=5, nbad=4, nsample=3, size=3),
    "laplace": dict(size=3),
    "logistic": dict(size=3),
    "lognormal": dict(size=3),
    "logseries": dict(p=0.5, size=3),
    "negative_binomial": dict(n=3, p=0.5, size=3),
    "noncentral_chisquare": dict(df=2.0, nonc=1.0, size=3),
    "noncentral_f": dict(dfnum=3.0, dfden=4.0, nonc=1.0, size=3),
    "pareto": dict(a=3.0, size=3),
    "poisson": dict(lam=2.0, size=3),
    "power": dict(a=2.0, size=3),
    "rayleigh": dict(size=3),
    "standard_gamma": dict(shape=2.0, size=3),
    "standard_t": dict(df=3.0, size=3),
    "triangular": dict(left=0.0, mode=0.5, right=1.0, size=3),
    "vonmises": dict(mu=0.0, kappa=2.0, size=3),
    "wald": dict(mean=1.0, scale=2.0, size=3),
    "weibull": dict(a=2.0, size=3),
    "zipf": dict(a=2.0, size=3),
    "randint": dict(low=0, high=10, size=3),
    "random_integers": dict(low=1, high=10, size=3),
    "choice": dict(a=5, size=3),
    "dirichlet": dict(alpha=[1.0, 2.0], size=2),
    "multinomial": dict(n=5, pvals=[0.2, 0.8], size=2),
    "multivariate_normal": dict(mean=[0.0, 1.0], cov=[[1.0, 0.2], [0.2, 1.0]], size=2),
}


def _random(name: str, shape: tuple = (), kw: dict | None = None) -> Face:
    return Face(lambda np: getattr(np.random, name)(*shape, **(kw or {})), (), diff=False, seeded=True)


RANDOM_FACES: dict[str, Face] = {
    **{f"random.{n}": _random(n, s) for n, s in _RANDOM_CALLS.items()},
    **{f"random.{n}": _random(n, kw=kw) for n, kw in _RANDOM_KW.items()},
    "random.permutation": Face(
        lambda np, a: np.random.permutation(a), (np.arange(5.0),), dispatch=False, diff=False, seeded=True
    ),
    "random.permutation_int": Face(lambda np: np.random.permutation(5), (), diff=False, seeded=True),
    "random.shuffle": Face(lambda np: _shuffled(np), (), diff=False, seeded=True),
}


def _shuffled(np):
    x = np.arange(6.0)
    np.random.shuffle(x)
    return x
