"""The database of the NumPy and SciPy faces: each entry is a function body written once against a
namespace (`np` or `sp`), run with NumPy/SciPy on arrays for the reference values, and with
tensors through NumPy's own dispatch (NEP 13/18, `numpy` itself) and through `pushforward.numpy` /
`pushforward.scipy`. tests/test_numpy_faces.py checks, for every entry, values against the
reference and derivatives against finite differences (reverse, forward, second order).

>>> sorted(NUMPY_FACES)[:3]
['angle', 'append', 'append_axis']
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy
import scipy.integrate  # noqa: F401 - the references' submodules
import scipy.linalg  # noqa: F401
import scipy.signal  # noqa: F401
import scipy.special  # noqa: F401
import scipy.stats  # noqa: F401

from .. import numpy as pnumpy
from .. import scipy as pscipy
from ..autograd.gradcheck import gradcheck, gradgradcheck
from .faceinfo import M23, M34, P4, SPD, SQ, V3, V4, Face, face_function, face_inputs, leaves
from .faceinfo import uniform as _r

__all__ = ["Face", "NUMPY_FACES", "SCIPY_FACES", "check_face", "faces_database", "face_inputs", "face_function"]


_READS_VALUES = {
    c: "reads the values (a data-dependent choice): refused under vmap and lazily" for c in ("vmap", "dask")
}
# (a composite of the linalg ops, whose own entries sweep them under jet, pf.compile and Dask)
_LINALG_COMPOSITE = {c: "a composite of linalg ops their op-database entries sweep" for c in ("jet", "compile", "dask")}

NUMPY_FACES: dict[str, Face] = {
    "tensordot": Face(lambda np, a, b: np.tensordot(a, b, axes=([1], [0])), (M23, M34), (0, 1)),
    "tensordot_int": Face(lambda np, a, b: np.tensordot(a, b, 1), (M23, M34), (0, 1)),
    "dot_nd": Face(lambda np, a, b: np.dot(a, b), (_r(2, 2, 3), _r(2, 3, 2)), (0, 1)),
    "einsum_sublist": Face(lambda np, a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]), (M23, M34), (0, 1)),
    "repeat": Face(lambda np, a: np.repeat(a, 2, axis=1), (M23,)),
    "repeat_flat": Face(lambda np, a: np.repeat(a, [1, 2, 3]), (V3,)),
    "tile": Face(lambda np, a: np.tile(a, (2, 1, 2)), (M23,)),
    "kron": Face(lambda np, a, b: np.kron(a, b), (M23, V3), (0, 1)),
    "diag_make": Face(lambda np, a: np.diag(a, 1), (V3,)),
    "diag_take": Face(lambda np, a: np.diag(a, -1), (SQ,)),
    "diagflat": Face(lambda np, a: np.diagflat(a), (M23,)),
    "split": Face(lambda np, a: np.split(a, 2, axis=0)[1], (_r(4, 2),)),
    "array_split": Face(lambda np, a: np.array_split(a, 3, axis=1)[0], (_r(2, 4),)),
    "hsplit": Face(lambda np, a: np.hsplit(a, [1])[1], (M23,)),
    "vsplit": Face(lambda np, a: np.vsplit(a, 2)[0], (_r(4, 2),)),
    "dsplit": Face(lambda np, a: np.dsplit(a, 2)[1], (_r(2, 2, 4),)),
    "append": Face(lambda np, a, b: np.append(a, b), (M23, V3), (0, 1)),
    "append_axis": Face(lambda np, a, b: np.append(a, b, axis=0), (M23, M23), (0, 1)),
    "diff": Face(lambda np, a: np.diff(a, n=2, axis=1), (M34,)),
    "diff_prepend": Face(lambda np, a: np.diff(a, prepend=0.5), (V4,)),
    "gradient": Face(lambda np, a: np.gradient(a, 0.5, axis=1), (M34,)),
    "gradient_edge2": Face(lambda np, a: np.gradient(a, edge_order=2), (_r(5),)),
    "pad_constant": Face(lambda np, a: np.pad(a, ((1, 0), (2, 1)), constant_values=0.5), (M23,)),
    "pad_reflect": Face(lambda np, a: np.pad(a, 2, mode="reflect"), (M23,)),
    "pad_edge": Face(lambda np, a: np.pad(a, (1, 2), mode="edge"), (V3,)),
    "pad_wrap": Face(lambda np, a: np.pad(a, 1, mode="wrap"), (M23,)),
    "cross": Face(lambda np, a, b: np.cross(a, b), (_r(2, 3), _r(2, 3)), (0, 1)),
    "sort": Face(lambda np, a: np.sort(a, axis=1), (M34,)),
    "sort_flat": Face(lambda np, a: np.sort(a, axis=None), (M23,)),
    "partition_sum": Face(lambda np, a: np.sum(np.partition(a, 1)), (V4,)),
    "select": Face(lambda np, a: np.select([a > 0.3, a < -0.3], [a, a**2], 0.5), (V4,)),
    "rollaxis": Face(lambda np, a: np.rollaxis(a, 2, 0), (_r(2, 3, 2),)),
    "atleast_1d": Face(lambda np, a: np.atleast_1d(a), (np.float64(0.3),)),
    "atleast_2d": Face(lambda np, a: np.atleast_2d(a), (V3,)),
    "atleast_3d": Face(lambda np, a: np.atleast_3d(a), (M23,)),
    "column_stack": Face(lambda np, a: np.column_stack([a, 2 * a]), (V3,)),
    "hstack_1d": Face(lambda np, a: np.hstack([a[0], a[1]]), (V3,)),
    "vstack_1d": Face(lambda np, a: np.vstack([a, a]), (V3,)),
    "dstack": Face(lambda np, a: np.dstack([a, a * a]), (M23,)),
    "block": Face(lambda np, a: np.block([[a, a], [a, a]]), (M23,)),
    "flipud": Face(lambda np, a: np.flipud(a), (M23,)),
    "fliplr": Face(lambda np, a: np.fliplr(a), (M23,)),
    "rot90": Face(lambda np, a: np.rot90(a, 3), (M23,)),
    "fmax": Face(lambda np, a, b: np.fmax(a, b), (V4, V4[::-1] + 0.1), (0, 1)),
    "fmin": Face(lambda np, a, b: np.fmin(a, b), (V4, V4[::-1] + 0.1), (0, 1)),
    "logaddexp2": Face(lambda np, a, b: np.logaddexp2(a, b), (V3, V3 * 2), (0, 1)),
    "deg2rad": Face(lambda np, a: np.deg2rad(a), (V3,)),
    "rad2deg": Face(lambda np, a: np.rad2deg(a), (V3,)),
    "degrees": Face(lambda np, a: np.degrees(a), (V3,)),
    "radians": Face(lambda np, a: np.radians(a), (V3,)),
    "cbrt": Face(lambda np, a: np.cbrt(a), (V3 + 2.0,)),
    "angle": Face(lambda np, a: np.angle(a + 0.5j * a[::-1]), (V3,)),
    "real_if_close": Face(lambda np, a: np.real_if_close(a + 0j), (V3,), skip=_READS_VALUES),
    "nan_to_num": Face(lambda np, a: np.nan_to_num(a, nan=1.0, posinf=2.0), (V4,)),
    "linspace": Face(lambda np, a, b: np.linspace(a, b, 5), (np.float64(0.2), np.float64(1.7)), (0, 1)),
    "linspace_vec": Face(lambda np, a, b: np.linspace(a, b, 4, axis=1), (V3, V3 + 1), (0, 1)),
    "cov": Face(lambda np, a: np.cov(a), (M34,)),
    "cov_rowvar": Face(lambda np, a: np.cov(a, rowvar=False, ddof=0), (_r(4, 2),)),
    "corrcoef": Face(lambda np, a: np.corrcoef(a), (M34,)),
    "average": Face(lambda np, a, w: np.average(a, axis=1, weights=w), (M34, P4), (0, 1)),
    "ptp": Face(lambda np, a: np.ptp(a, axis=0), (M34,)),
    "trapezoid": Face(lambda np, a: np.trapezoid(a, dx=0.5), (M34,)),
    "trapezoid_x": Face(lambda np, a, x: np.trapezoid(a, x, axis=0), (M34, np.array([0.0, 0.5, 1.5])), (0, 1)),
    "float_power": Face(lambda np, a, b: np.float_power(a, b), (P4, V4), (0, 1)),
    "fabs": Face(lambda np, a: np.fabs(a), (V4,)),
    "heaviside": Face(lambda np, a, b: np.heaviside(a, b), (np.array([-1.0, 0.0, 2.0, 0.0]), V4), (1,)),
    "ldexp": Face(lambda np, a, e: np.ldexp(a, e), (V4, np.array([0, 1, -2, 3])), (0,)),
    "nansum": Face(lambda np, a: np.nansum(a, axis=0), (M23,)),
    "sinc": Face(lambda np, a: np.sinc(a), (V3 + 0.1,)),
    "svd_values": Face(lambda np, a: np.linalg.svd(a, compute_uv=False), (M23,)),
    "eigh_lower": Face(lambda np, a: np.linalg.eigh(a)[0], (SQ,)),
    "eigh_upper_vectors": Face(lambda np, a: np.abs(np.linalg.eigh(a, "U")[1]) ** 2, (SQ,)),
    "eigvalsh_upper_complex": Face(lambda np, a: np.linalg.eigvalsh(a + 0.3j * a.T, "U"), (SQ,)),
    "eigvalsh_upper": Face(lambda np, a: np.linalg.eigvalsh(a, "U"), (SQ,)),
    "fft_axis": Face(lambda np, a: np.abs(np.fft.fft(a, axis=0)), (M23,)),
    "rfftn_axes": Face(lambda np, a: np.fft.irfftn(np.fft.rfftn(a, axes=(0, 1)), axes=(0, 1), s=(2, 4)), (_r(2, 4),)),
    "fftshift": Face(lambda np, a: np.fft.fftshift(a, axes=1), (M23,)),
    "ndarray_methods": Face(lambda np, a: a.ravel().astype("float64").copy().dot(a.ravel()), (M23,)),
    "median": Face(lambda np, a: np.median(a, axis=1), (M34,)),
    "quantile": Face(lambda np, a: np.quantile(a, [0.25, 0.6], axis=0, keepdims=True), (M34,)),
    "percentile": Face(lambda np, a: np.percentile(a, 40), (M34,)),
    "nanmax": Face(lambda np, a: np.nanmax(a, axis=0), (M34,)),
    "nanvar": Face(lambda np, a: np.nanvar(a, axis=1, ddof=1), (M34,)),
    "nanstd": Face(lambda np, a: np.nanstd(a), (M34,)),
    "nanprod": Face(lambda np, a: np.nanprod(a, axis=1), (M34,)),
    "nancumsum": Face(lambda np, a: np.nancumsum(a, axis=0), (M34,)),
    "convolve_1d": Face(lambda np, a, v: np.convolve(a, v, "same"), (V4, V3), (0, 1)),
    "correlate_1d": Face(lambda np, a, v: np.correlate(a, v, "full"), (V3, V4), (0, 1)),
    "interp": Face(
        lambda np, x, fp: np.interp(x, [0.0, 0.5, 1.0, 2.0], fp),
        (_r(5, lo=-0.5, hi=2.5), P4),
        (0, 1),
        skip=_READS_VALUES,
    ),
    "polyval": Face(lambda np, p, x: np.polyval(p, x), (V4, V3), (0, 1)),
    "polymul": Face(lambda np, a, b: np.polymul(a, b), (V3, V4), (0, 1)),
    "polyadd": Face(lambda np, a, b: np.polyadd(a, b), (V3, V4), (0, 1)),
    "polyder": Face(lambda np, p: np.polyder(p, 2), (V4,)),
    "polyint": Face(lambda np, p: np.polyint(p, 2, [0.5, 1.0]), (V4,)),
    "polyfit": Face(lambda np, y: np.polyfit(np.array([0.0, 1.0, 2.0, 3.5]), y, 2), (V4,)),
    "poly": Face(lambda np, z: np.poly(z), (V3,)),
    "vander": Face(lambda np, x: np.vander(x, 3), (V4,)),
    "logspace": Face(lambda np, a, b: np.logspace(a, b, 4), (np.float64(0.2), np.float64(1.1)), (0, 1)),
    "geomspace": Face(lambda np, a, b: np.geomspace(a, b, 4), (np.float64(0.5), np.float64(3.0)), (0, 1)),
    "unwrap": Face(lambda np, p: np.unwrap(p), (np.array([0.1, 2.5, 5.9, 9.0, 12.2]),), skip=_READS_VALUES),
    "take": Face(lambda np, a: np.take(a, [[2, 0], [1, 1]], axis=1), (M34,)),
    "take_flat": Face(lambda np, a: np.take(a, [5, 0, 11]), (M34,)),
    "take_along_axis": Face(lambda np, a: np.take_along_axis(a, np.array([[0, 2, 1, 0]]), 0), (M34,)),
    "choose": Face(lambda np, a, b: np.choose(np.array([0, 1, 1, 0]), [a, b]), (V4, V4 * 3), (0, 1)),
    "delete": Face(lambda np, a: np.delete(a, [0, 2], axis=1), (M34,)),
    "broadcast_arrays": Face(lambda np, a, b: np.broadcast_arrays(a, b), (V4, _r(3, 1)), (0, 1)),
    "meshgrid": Face(lambda np, a, b: np.meshgrid(a, b), (V3, V4), (0, 1)),
    "meshgrid_ij": Face(lambda np, a, b: np.meshgrid(a, b, indexing="ij", sparse=True), (V3, V4), (0, 1)),
    "resize": Face(lambda np, a: np.resize(a, (3, 3)), (V4,)),
    "unstack": Face(lambda np, a: np.unstack(a, axis=1), (M23,)),
    "cumulative_sum": Face(lambda np, a: np.cumulative_sum(a, axis=1, include_initial=True), (M23,)),
    "cumulative_prod": Face(lambda np, a: np.cumulative_prod(a), (V4,)),
    "ediff1d": Face(lambda np, a: np.ediff1d(a, to_begin=[1.0], to_end=[2.0, 3.0]), (M23,)),
    "apply_along_axis": Face(lambda np, a: np.apply_along_axis(lambda r: r * r[0], 1, a), (M23,)),
    "piecewise": Face(lambda np, a: np.piecewise(a, [a < 0, a >= 0], [lambda v: v * v, lambda v: 2 * v]), (V4,)),
    "i0": Face(lambda np, a: np.i0(a), (V4,)),
    "vecdot": Face(lambda np, a, b: np.vecdot(a, b), (M34, V4), (0, 1)),
    "matvec": Face(lambda np, a, b: np.matvec(a, b), (M34, V4), (0, 1)),
    "linalg_vecdot": Face(lambda np, a, b: np.linalg.vecdot(a, b), (M34, V4), (0, 1)),
    "tensorsolve": Face(lambda np, a, b: np.linalg.tensorsolve(a, b), (SPD.reshape(3, 3), V3), (0, 1)),
    "matrix_norm": Face(lambda np, a: np.linalg.matrix_norm(a), (M34,)),
    "array_of_tensors": Face(lambda np, a: np.array([a, 2 * a]) ** 2, (V3,), dispatch=False),
    "mean_of_list": Face(lambda np, a: np.mean([a, a * a], axis=0), (V3,), dispatch=False),
    "max_of_list": Face(lambda np, a: np.max([a[0], a[1] + 1.0, a[2]]), (V3,), dispatch=False),
    "r_": Face(lambda np, a: np.r_[a, 2 * a, 1.0], (V3,), dispatch=False),
    "c_": Face(lambda np, a: np.c_[a, a * a], (V3,), dispatch=False),
}


def _mvn(sp: Any, x: Any, m: Any, c: Any) -> Any:
    return sp.stats.multivariate_normal.logpdf(x, m, 0.5 * (c + c.T))


_X4, _A4, _B4 = _r(4, lo=0.1, hi=0.9), _r(4, lo=1.2, hi=3.0), _r(4, lo=1.2, hi=3.0)
_POS = _r(4, lo=0.5, hi=3.0)

SCIPY_FACES: dict[str, Face] = {
    **{
        n: Face(lambda sp, x, n=n: getattr(sp.special, n)(x), (_POS,))
        for n in [
            "gamma",
            "gammaln",
            "rgamma",
            "digamma",
            "psi",
            "erf",
            "erfc",
            "expit",
            "i0",
            "i1",
            "i0e",
            "i1e",
            "j0",
            "j1",
            "y0",
            "y1",
            "k0",
            "k1",
            "erfcx",
            "ndtr",
            "log_ndtr",
            "entr",
        ]
    },
    "erfinv": Face(lambda sp, x: sp.special.erfinv(x), (_X4,)),
    "erfcinv": Face(lambda sp, x: sp.special.erfcinv(x), (_X4 + 0.5,)),
    "logit": Face(lambda sp, x: sp.special.logit(x), (_X4,)),
    "ndtri": Face(lambda sp, x: sp.special.ndtri(x), (_X4,)),
    "polygamma": Face(lambda sp, x: sp.special.polygamma(1, x), (_POS,)),
    "multigammaln": Face(lambda sp, x: sp.special.multigammaln(x, 3), (_POS + 2,)),
    "beta": Face(lambda sp, a, b: sp.special.beta(a, b), (_A4, _B4), (0, 1)),
    "betaln": Face(lambda sp, a, b: sp.special.betaln(a, b), (_A4, _B4), (0, 1)),
    "betainc": Face(lambda sp, x: sp.special.betainc(1.5, 2.5, x), (_X4,)),
    "gammainc": Face(lambda sp, x: sp.special.gammainc(1.5, x), (_POS,)),
    "gammaincc": Face(lambda sp, x: sp.special.gammaincc(1.5, x), (_POS,)),
    "iv": Face(lambda sp, x: sp.special.iv(1.5, x), (_POS,)),
    "ive": Face(lambda sp, x: sp.special.ive(2.0, x), (_POS,)),
    "jv": Face(lambda sp, x: sp.special.jv(0.5, x), (_POS,)),
    "jn": Face(lambda sp, x: sp.special.jn(2, x), (_POS,)),
    "yn": Face(lambda sp, x: sp.special.yn(1, x), (_POS,)),
    "xlogy": Face(lambda sp, x, y: sp.special.xlogy(x, y), (_POS, _A4), (0, 1)),
    "xlog1py": Face(lambda sp, x, y: sp.special.xlog1py(x, y), (_POS, _A4), (0, 1)),
    "rel_entr": Face(lambda sp, x, y: sp.special.rel_entr(x, y), (_POS, _A4), (0, 1)),
    "kl_div": Face(lambda sp, x, y: sp.special.kl_div(x, y), (_POS, _A4), (0, 1)),
    "huber": Face(lambda sp, d, r: sp.special.huber(d, r), (_A4, np.array([-3.5, 0.4, 2.9, -1.0])), (0, 1)),
    "pseudo_huber": Face(
        lambda sp, d, r: sp.special.pseudo_huber(d, r), (_A4, np.array([-3.5, 0.4, 2.9, -1.0])), (0, 1)
    ),
    "boxcox": Face(lambda sp, x, lm: sp.special.boxcox(x, lm), (_POS, np.array([-0.8, 0.0, 0.3, 1.7])), (0, 1)),
    "boxcox1p": Face(lambda sp, x, lm: sp.special.boxcox1p(x, lm), (_POS, np.array([-0.8, 0.0, 0.3, 1.7])), (0, 1)),
    "cbrt": Face(lambda sp, x: sp.special.cbrt(x), (np.array([-2.5, -0.3, 0.4, 3.0]),)),
    **{
        n: Face(lambda sp, x, n=n: getattr(sp.special, n)(x), (np.array([-400.0, -20.0, 33.0, 100.0]),))
        for n in ["sindg", "cosdg", "tandg", "cotdg"]
    },
    "radian": Face(lambda sp, d, m, s: sp.special.radian(d, m, s), (V4, V4[::-1], P4), (0, 1, 2)),
    "cosm1": Face(lambda sp, x: sp.special.cosm1(x), (np.array([-2.0, 1e-9, 0.3, 1.5]),)),
    "exprel": Face(lambda sp, x: sp.special.exprel(x), (np.array([-2.0, 1e-9, 2e-5, 1.5]),)),
    "inv_boxcox": Face(lambda sp, y, lm: sp.special.inv_boxcox(y, lm), (_X4, np.array([-0.8, 0.0, 0.3, 1.7])), (0, 1)),
    "inv_boxcox1p": Face(
        lambda sp, y, lm: sp.special.inv_boxcox1p(y, lm), (_X4, np.array([-0.8, 0.0, 0.3, 1.7])), (0, 1)
    ),
    "poch": Face(lambda sp, z, m: sp.special.poch(z, m), (np.array([-1.5, 0.5, 1.2, 2.5]), V4), (0, 1)),
    "binom": Face(lambda sp, n, k: sp.special.binom(n, k), (_POS + 3, _POS), (0, 1)),
    "exp1": Face(lambda sp, x: sp.special.exp1(x), (_POS,)),
    "expi": Face(lambda sp, x: sp.special.expi(x), (np.array([-2.0, -0.5, 0.7, 2.0]),)),
    "expn": Face(lambda sp, x: sp.special.expn(np.array([0.0, 1.0, 2.0, 5.0]), x), (_POS,)),
    "spence": Face(lambda sp, z: sp.special.spence(z), (np.array([0.3, 1.0, 1.0004, 2.5]),)),
    "ellipk": Face(lambda sp, m: sp.special.ellipk(m), (np.array([-1.5, 0.0, 0.0005, 0.7]),)),
    "ellipe": Face(lambda sp, m: sp.special.ellipe(m), (np.array([-1.5, 0.0, -0.0005, 0.7]),)),
    "ellipkm1": Face(lambda sp, p: sp.special.ellipkm1(p), (_X4,)),
    "lpmv": Face(lambda sp, x: sp.special.lpmv(1.0, 2.5, x), (np.array([-0.7, -0.1, 0.3, 0.8]),)),
    "hyp1f1": Face(lambda sp, x: sp.special.hyp1f1(1.5, 2.5, x), (V4,)),
    "hyp2f1": Face(lambda sp, z: sp.special.hyp2f1(1.5, 0.5, 2.5, z), (np.array([-2.0, -0.3, 0.2, 0.8]),)),
    "gammaincinv": Face(lambda sp, y: sp.special.gammaincinv(1.5, y), (_X4,)),
    "gammainccinv": Face(lambda sp, y: sp.special.gammainccinv(1.5, y), (_X4,)),
    "betaincinv": Face(lambda sp, y: sp.special.betaincinv(1.5, 2.5, y), (_X4,)),
    **{
        n: Face(lambda sp, p, n=n: getattr(sp.special, n)(np.array([0.0, 1.0, 2.0, 4.0]), 5.0, p), (_X4,))
        for n in ["bdtr", "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri"]
    },
    "pdtr": Face(lambda sp, m: sp.special.pdtr(np.array([0.0, 1.0, 2.0, 4.0]), m), (_POS,)),
    "pdtrc": Face(lambda sp, m: sp.special.pdtrc(np.array([0.0, 1.0, 2.0, 4.0]), m), (_POS,)),
    "pdtri": Face(lambda sp, y: sp.special.pdtri(np.array([0.0, 1.0, 2.0, 4.0]), y), (_X4,)),
    "gdtr": Face(lambda sp, a, x: sp.special.gdtr(a, 2.5, x), (_A4, _POS), (0, 1)),
    "gdtrc": Face(lambda sp, a, x: sp.special.gdtrc(a, 2.5, x), (_A4, _POS), (0, 1)),
    "fdtr": Face(lambda sp, x: sp.special.fdtr(3.0, 4.5, x), (_POS,)),
    "fdtrc": Face(lambda sp, x: sp.special.fdtrc(3.0, 4.5, x), (_POS,)),
    "fdtri": Face(lambda sp, p: sp.special.fdtri(3.0, 4.5, p), (_X4,)),
    "chdtri": Face(lambda sp, p: sp.special.chdtri(3.0, p), (_X4,)),
    "logsumexp": Face(lambda sp, x: sp.special.logsumexp(x, axis=1, keepdims=True), (M34,)),
    "logsumexp_b": Face(lambda sp, x, b: sp.special.logsumexp(x, b=b), (V4, P4), (0, 1)),
    "softmax": Face(lambda sp, x: sp.special.softmax(x, axis=0), (M34,)),
    "norm_logpdf": Face(lambda sp, x, m, s: sp.stats.norm.logpdf(x, m, s), (V4, V4[::-1], P4), (0, 1, 2)),
    "norm_cdf": Face(lambda sp, x, m, s: sp.stats.norm.cdf(x, m, s), (V4, V4[::-1], P4), (0, 1, 2)),
    "norm_logcdf": Face(lambda sp, x: sp.stats.norm.logcdf(x), (V4,)),
    "norm_sf": Face(lambda sp, x: sp.stats.norm.sf(x, 0.5, 2.0), (V4,)),
    "norm_logsf": Face(lambda sp, x: sp.stats.norm.logsf(x), (V4,)),
    "norm_pdf": Face(lambda sp, x: sp.stats.norm.pdf(x), (V4,)),
    "t_logpdf": Face(lambda sp, x, df: sp.stats.t.logpdf(x, df, 0.2, 1.5), (V4, _A4), (0, 1)),
    "t_cdf": Face(lambda sp, x, loc: sp.stats.t.cdf(x, 3.5, loc), (V4, V4[::-1]), (0, 1)),
    "t_logcdf": Face(lambda sp, x: sp.stats.t.logcdf(x, 2.5), (V4,)),
    "chi2_logpdf": Face(lambda sp, x, k: sp.stats.chi2.logpdf(x, k), (_POS, _A4), (0, 1)),
    "chi2_cdf": Face(lambda sp, x: sp.stats.chi2.cdf(x, 3), (_POS,)),
    "beta_logpdf": Face(lambda sp, x, a, b: sp.stats.beta.logpdf(x, a, b), (_X4, _A4, _B4), (0, 1, 2)),
    "beta_cdf": Face(lambda sp, x: sp.stats.beta.cdf(x, 2.0, 3.0), (_X4,)),
    "gamma_logpdf": Face(lambda sp, x, a: sp.stats.gamma.logpdf(x, a, scale=2.0), (_POS, _A4), (0, 1)),
    "gamma_cdf": Face(lambda sp, x: sp.stats.gamma.cdf(x, 2.0), (_POS,)),
    "poisson_logpmf": Face(lambda sp, mu: sp.stats.poisson.logpmf(np.array([0.0, 1, 3, 2]), mu), (_POS,)),
    "poisson_cdf": Face(lambda sp, mu: sp.stats.poisson.cdf(np.array([0.0, 1, 3, 2]), mu), (_POS,)),
    "dirichlet_logpdf": Face(lambda sp, a: sp.stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a), (_A4[:3],)),
    "mvn_logpdf": Face(_mvn, (_r(2, 3), V3, SPD), (0, 1, 2), skip=_LINALG_COMPOSITE),
    "mvn_entropy": Face(lambda sp, c: sp.stats.multivariate_normal.entropy(np.zeros(3), 0.5 * (c + c.T)), (SPD,)),
    "convolve_full": Face(lambda sp, a, b: sp.signal.convolve(a, b), (V4, V3), (0, 1)),
    "convolve_valid_2d": Face(lambda sp, a, b: sp.signal.convolve(a, b, mode="valid"), (M34, _r(2, 2)), (0, 1)),
    "convolve_same": Face(lambda sp, a, b: sp.signal.convolve(a, b, mode="same"), (V4, V3), (0, 1)),
    "solve_triangular": Face(lambda sp, a, b: sp.linalg.solve_triangular(a, b, lower=True), (np.tril(SPD), V3), (0, 1)),
    "cho_solve": Face(lambda sp, a, b: sp.linalg.cho_solve(sp.linalg.cho_factor(a), b), (SPD, V3), (1,)),
    "sqrtm_spd": Face(lambda sp, a: sp.linalg.sqrtm(a @ a.T + np.eye(3)), (SQ,), skip=_READS_VALUES),
    "expm": Face(lambda sp, a: sp.linalg.expm(a), (SQ * 0.5,)),
    "solve_sylvester": Face(lambda sp, a, b, q: sp.linalg.solve_sylvester(a, b, q), (SPD, SPD, SQ), (0, 1, 2)),
    "odeint": Face(
        lambda sp, y0, p: sp.integrate.odeint(lambda y, t, p: -p * y + 0.5 * t, y0, np.array([0.0, 0.5]), args=(p,)),
        (V3[:2], P4[:2]),
        (0, 1),
        gradgrad=False,
        tol=1e-7,
        skip={
            c: "an adaptive solver: its steps are chosen from the values" for c in ("vmap", "jet", "compile", "dask")
        },
    ),
    "solve_banded": Face(
        lambda sp, ab, b: sp.linalg.solve_banded((1, 1), ab, b), (_r(3, 4) + [[0], [3], [0]], V4), (0, 1)
    ),
}


def _namespaces(name: str) -> tuple:
    if name.startswith("scipy."):
        return SCIPY_FACES[name[6:]], scipy, [pscipy]
    face = NUMPY_FACES[name[3:]]
    return face, np, ([np] if face.dispatch else []) + [pnumpy]


def check_face(name: str, fast: bool = False) -> dict:
    """gradcheck (reverse and forward) and gradgradcheck of one face in every namespace it runs in,
    and its values against NumPy/SciPy: the result row of `pushforward check --faces`."""
    face, ref_ns, namespaces = _namespaces(name)
    res = {"backward": True, "forward": True, "fwd_over_rev": None, "kind": "face", "error": None}
    try:
        want = [np.asarray(v) for v in leaves(face.fn(ref_ns, *face.inputs))]
        for ns in namespaces:
            got = [v.detach().numpy() for v in leaves(face.fn(ns, *face_inputs(face)))]
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
            f = face_function(face, ns)
            xs = [t for i, t in enumerate(face_inputs(face)) if i in face.argnums]
            res["backward"] = res["backward"] and gradcheck(f, xs, fast_mode=fast)
            res["forward"] = res["forward"] and gradcheck(
                f, xs, check_forward_ad=True, check_backward_ad=False, fast_mode=fast
            )
            if face.gradgrad:
                res["fwd_over_rev"] = gradgradcheck(f, xs, fast_mode=fast) and res["fwd_over_rev"] is not False
    except Exception as e:  # noqa: BLE001 - a failing check is this face's failure, reported in its row
        res.update(backward=False, error=f"{type(e).__name__}: {e}")
    return res


def faces_database() -> tuple[dict, Callable]:
    """(every face by its name, "np.<name>" or "scipy.<name>"; check_face): `pushforward check --faces`."""
    faces = {f"np.{n}": f for n, f in NUMPY_FACES.items()}
    faces.update({f"scipy.{n}": f for n, f in SCIPY_FACES.items()})
    return faces, check_face
