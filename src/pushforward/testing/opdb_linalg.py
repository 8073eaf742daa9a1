"""Op-database entries of the linear-algebra, FFT and special-function ops.

Samples are small (3x3, batches of 2) so the checks stay fast. Ops whose outputs have a
gauge (eigen/singular vectors, defined up to a phase) are checked through gauge-invariant
functions of their outputs (`|V|^2`, `U @ Vh`); Hermitian-input ops through `(A + A^H)/2`,
because they read one triangle only and their derivatives are those of the Hermitian input.
`pushforward.testing.opdb` registers these entries (its `_build` calls the `add_*_ops` functions).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.linalg as sla
import scipy.special as sp

from ..ops import generated as ops
from .opinfo import REAL, REAL_COMPLEX, OpInfo, SampleInput
from ..core.tensor import wrap
from ..ops.formulas.linalg import eig_unpack, eigh_unpack, lu_unpack, mH, qr_unpack, svd_unpack
from ..kernels.linalg import diag_embed

__all__ = ["add_linalg_ops", "add_fft_ops", "add_special_ops", "add_more_ops", "add_legacy_ops"]


def _h(x):
    return np.swapaxes(x, -1, -2).conj()


def _ph(x):
    return mH(x)


def _rand(m, shape):
    """Raw random values of the sampler's dtype (complex: both parts)."""
    a = m.rng.uniform(-1, 1, shape)
    if m.dtype.kind == "c":
        a = a + 1j * m.rng.uniform(-1, 1, shape)
    return a


def _wellcond(m, shape):
    n = shape[-1]
    return m.tensor(_rand(m, shape) + 3 * np.eye(n))


def _spd(m, shape):
    x = _rand(m, shape)
    return m.tensor(x @ _h(x) + shape[-1] * np.eye(shape[-1]))


def _sym(m, shape):
    """Hermitian with well separated eigenvalues."""
    n = shape[-1]
    q = np.linalg.qr(_rand(m, shape))[0]
    lam = np.arange(1.0, n + 1) * 1.5 - 2.0
    return m.tensor((q * lam[..., None, :]) @ _h(q))


def _gen(m, shape, complex_pair=False):
    """Non-symmetric with distinct real eigenvalues (or one complex pair)."""
    n = shape[-1]
    s = _rand(m, shape) + 2 * np.eye(n)
    d = np.diag(np.arange(1.0, n + 1))
    if complex_pair:
        d[:2, :2] = [[1.0, 1.5], [-1.5, 1.0]]
    return m.tensor(s @ d @ np.linalg.inv(s))


def _lower(m, shape, unit=False):
    """Lower triangular with a real diagonal (1, or about 2.5: a Cholesky factor)."""
    x = np.tril(_rand(m, shape), -1)
    n = shape[-1]
    diag = np.ones(shape[:-1]) if unit else 2.5 + m.rng.uniform(-0.5, 0.5, shape[:-1])
    return m.tensor(x + diag[..., None] * np.eye(n))


def _herm(x):
    return (x + _ph(x)) * 0.5


def _herm_np(x):
    return (x + _h(x)) / 2


def _abs2(x):
    return (x * x.conj()).real if x.dtype.kind == "c" else x * x


def _abs2_np(x):
    return np.abs(x) ** 2


# -- op wrappers (gauge-invariant where needed) ---------------------------------------------------------
def op_eigh(a, UPLO="L"):
    lam, v = eigh_unpack(ops._linalg_eigh(_herm(a), UPLO), a.shape[-1])
    return lam, _abs2(v)


def ref_eigh(a, UPLO="L"):
    lam, v = np.linalg.eigh(_herm_np(a), UPLO)
    return lam, _abs2_np(v)


def op_eigh_pub(a, UPLO="L"):
    lam, v = ops.linalg_eigh(_herm(a), UPLO)
    return lam, v @ ops.diag_embed(lam.to(v.dtype) if v.dtype.kind == "c" else lam) @ _ph(v)


def ref_eigh_pub(a, UPLO="L"):
    lam, v = np.linalg.eigh(_herm_np(a), UPLO)
    return lam, (v * lam[..., None, :]) @ _h(v)


def op_svd(a):
    u, s, vh = svd_unpack(ops._linalg_svd(a), *a.shape[-2:])
    return u @ vh, s


def ref_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u @ vh, s


def op_svd_pub(a, full_matrices=True):
    u, s, vh = ops.linalg_svd(a, full_matrices)
    k = s.shape[-1]
    return u.narrow(-1, 0, k) @ vh.narrow(-2, 0, k), s, _abs2(u.narrow(-1, 0, k))


def ref_svd_pub(a, full_matrices=True):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    return u[..., :k] @ vh[..., :k, :], s, _abs2_np(u[..., :k])


def op_qr(a):
    return qr_unpack(ops._linalg_qr(a), *a.shape[-2:])


def ref_qr(a):
    return tuple(np.linalg.qr(a))


def ref_qr_pub(a, mode="reduced"):
    m, n = a.shape[-2:]
    if mode == "r":
        return np.zeros(0, a.dtype), np.linalg.qr(a, mode="r")
    return tuple(np.linalg.qr(a, mode=mode))


def op_eig(a):
    lam, v = eig_unpack(ops._linalg_eig(a), a.shape[-1])
    return lam, _abs2(v)


def ref_eig(a):
    lam, v = np.linalg.eig(a)
    return lam.astype(np.result_type(a.dtype, np.complex64)), _abs2_np(v)


def op_eig_pub(a):
    lam, v = ops.linalg_eig(a)
    return lam, _abs2(v)


def op_lu(a):
    p, low, up = lu_unpack(ops._linalg_lu(a), *a.shape[-2:])
    return low, up


def ref_lu(a):
    out_l, out_u = [], []
    for x in a.reshape((-1,) + a.shape[-2:]):
        _, lo, up = sla.lu(x)
        out_l.append(lo)
        out_u.append(up)
    return (
        np.stack(out_l).reshape(a.shape[:-2] + out_l[0].shape),
        np.stack(out_u).reshape(a.shape[:-2] + out_u[0].shape),
    )


def op_lu_pub(a):
    p, low, up = ops.linalg_lu(a)
    return p, low, up


def ref_lu_pub(a):
    p, lo, up = sla.lu(a)
    return p.astype(a.dtype), lo, up  # torch's P has A's dtype


def op_lu_factor(a):
    return ops.linalg_lu_factor(a)


def ref_lu_factor(a):
    lu, piv = sla.lu_factor(a)
    return lu, (piv + 1).astype(np.int32)


def op_lstsq(a, b, rcond=None):
    return ops.linalg_lstsq(a, b, rcond).solution


def ref_lstsq(a, b, rcond=None):
    if a.ndim == 2:
        return np.linalg.lstsq(a, b, rcond=rcond)[0]
    return np.stack([ref_lstsq(x, y, rcond) for x, y in zip(a, b)])


def op_cholesky(a, upper=False):
    return ops.linalg_cholesky(_herm(a), upper=upper)


def ref_cholesky(a, upper=False):
    low = np.linalg.cholesky(_herm_np(a))
    return _h(low) if upper else low


def op_eigvalsh(a, UPLO="L"):
    return ops.linalg_eigvalsh(_herm(a), UPLO)


def ref_eigvalsh(a, UPLO="L"):
    return np.linalg.eigvalsh(_herm_np(a), UPLO)


# -- samples --------------------------------------------------------------------------------------------
def s_square(m):
    return [
        SampleInput(_wellcond(m, (3, 3)), name="3x3"),
        SampleInput(_wellcond(m, (2, 3, 3)), name="batch"),
        SampleInput(_wellcond(m, (1, 1)), name="1x1"),
    ]


def s_det(m):
    sing = _rand(m, (3, 3))
    sing[2] = sing[0] + 2 * sing[1]  # rank 2: the adjugate (cofactor) path
    return s_square(m) + [SampleInput(m.tensor(sing), name="singular")]


def s_spd(m):
    return [SampleInput(_spd(m, (3, 3)), name="3x3"), SampleInput(_spd(m, (2, 3, 3)), name="batch")]


def s_solve_prim(m):
    return [
        SampleInput(_wellcond(m, (3, 3)), (m.tensor(_rand(m, (3, 2))),), name="3x3"),
        SampleInput(_wellcond(m, (2, 3, 3)), (m.tensor(_rand(m, (3, 1))),), name="broadcast B"),
        SampleInput(_wellcond(m, (3, 3)), (m.tensor(_rand(m, (2, 3, 2))),), name="broadcast A"),
    ]


def s_solve(m):
    return s_solve_prim(m) + [
        SampleInput(_wellcond(m, (3, 3)), (m.tensor(_rand(m, (3,))),), name="vector"),
        SampleInput(_wellcond(m, (2, 3, 3)), (m.tensor(_rand(m, (2, 3))),), name="batched vector"),
        SampleInput(_wellcond(m, (3, 3)), (m.tensor(_rand(m, (2, 3))),), {"left": False}, "right"),
    ]


def ref_solve(a, b, left=True):
    if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):
        return np.linalg.solve(a, b[..., None])[..., 0] if left else np.linalg.solve(np.swapaxes(a, -1, -2), b)
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def s_solve_triangular(m):
    out = []
    for upper in (False, True):
        a = _lower(m, (3, 3))
        a = m.tensor(_h(a._data)) if upper else a
        out.append(SampleInput(a, (m.tensor(_rand(m, (3, 2))),), {"upper": upper}, f"upper={upper}"))
        out.append(SampleInput(a, (m.tensor(_rand(m, (2, 3))),), {"upper": upper, "left": False}, "right"))
    out.append(
        SampleInput(
            _lower(m, (2, 3, 3), unit=True),
            (m.tensor(_rand(m, (3, 1))),),
            {"upper": False, "unitriangular": True},
            "unit, batch",
        )
    )
    return out


def ref_solve_triangular(a, b, upper, left=True, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        eye = np.eye(n, dtype=a.dtype)
        t = t * (1 - eye) + eye
    if left:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def s_cholesky(m):
    return s_spd(m) + [SampleInput(_spd(m, (3, 3)), (), {"upper": True}, "upper")]


def s_cholesky_solve(m):
    return [
        SampleInput(m.tensor(_rand(m, (3, 2))), (_lower(m, (3, 3)),), name="lower"),
        SampleInput(m.tensor(_rand(m, (2, 3, 1))), (m.tensor(_h(_lower(m, (3, 3))._data)), True), name="upper"),
    ]


def s_cholesky_inverse(m):
    return [
        SampleInput(_lower(m, (3, 3)), name="lower"),
        SampleInput(m.tensor(_h(_lower(m, (2, 3, 3))._data)), (True,), name="upper"),
    ]


def s_eigh(m):
    return [
        SampleInput(_sym(m, (3, 3)), name="3x3"),
        SampleInput(_sym(m, (2, 3, 3)), name="batch"),
        SampleInput(_sym(m, (3, 3)), ("U",), name="UPLO=U"),
    ]


def s_eigvalsh(m):
    return s_eigh(m) + [
        SampleInput(m.tensor(np.diag([1.0, 1.0, 2.0])), name="degenerate (not differentiable)", grad=False)
    ]


def s_rect(m):
    return [
        SampleInput(m.tensor(_rand(m, (3, 3)) + 2 * np.diag([3.0, 2.0, 1.0])), name="3x3"),
        SampleInput(m.tensor(_rand(m, (4, 3)) + 2 * np.eye(4, 3) * [3.0, 2.0, 1.0]), name="tall"),
        SampleInput(m.tensor(_rand(m, (3, 4)) + 2 * np.eye(3, 4) * [[3.0], [2.0], [1.0]]), name="wide"),
        SampleInput(m.tensor(_rand(m, (2, 3, 2)) + 2 * np.eye(3, 2) * [2.0, 1.0]), name="batch"),
    ]


def s_svd_pub(m):
    return [SampleInput(s.input, (fm,), name=f"{s.name}, full={fm}") for s in s_rect(m) for fm in (False, True)]


def s_svdvals(m):
    return s_rect(m) + [SampleInput(m.tensor(np.eye(3)), name="repeated (not differentiable)", grad=False)]


def s_qr(m):
    return [s for s in s_rect(m) if s.name != "wide"]


def s_qr_pub(m):
    out = [SampleInput(s.input, (mode,), name=f"{s.name}, {mode}") for s in s_rect(m) for mode in ("reduced", "r")]
    out.append(SampleInput(_wellcond(m, (3, 3)), ("complete",), name="square, complete"))
    return out


def s_eig(m):
    out = [SampleInput(_gen(m, (3, 3)), name="real spectrum"), SampleInput(_gen(m, (2, 3, 3)), name="batch")]
    if m.dtype.kind == "f":
        out.append(SampleInput(_gen(m, (3, 3), complex_pair=True), name="complex pair"))
    return out


def s_lu(m):
    return [
        SampleInput(_wellcond(m, (3, 3)) * 1.0, name="3x3"),
        SampleInput(m.tensor(_rand(m, (2, 3, 3)) + np.diag([0.1, 2.0, 3.0])), name="pivoting batch"),
        SampleInput(m.tensor(_rand(m, (4, 3)) + np.eye(4, 3) * 2), name="tall"),
        SampleInput(m.tensor(_rand(m, (2, 3, 4)) + np.eye(3, 4) * 2), name="wide batch"),
    ]


def s_lu_solve(m):
    out = []
    for left in (True, False):
        for adjoint in (False, True):
            a = _rand(m, (3, 3)) + np.diag([0.2, 2.0, 3.0])
            lu, piv = sla.lu_factor(a)
            b = m.tensor(_rand(m, (3, 2) if left else (2, 3)))
            out.append(
                SampleInput(
                    m.tensor(lu),
                    (wrap((piv + 1).astype(np.int32)), b),
                    {"left": left, "adjoint": adjoint},
                    f"left={left}, adjoint={adjoint}",
                )
            )
    return out


def ref_lu_solve(lu, piv, b, left=True, adjoint=False):
    a_lu = (lu, piv - 1)
    if left:
        return sla.lu_solve(a_lu, b, trans=2 if adjoint else 0)
    return _h(sla.lu_solve(a_lu, _h(b), trans=0 if adjoint else 2))


def s_matrix_exp(m):
    return [
        SampleInput(m.tensor(_rand(m, (3, 3)) * 0.7), name="3x3"),
        SampleInput(m.tensor(_rand(m, (2, 2, 2))), name="batch"),
    ]


def s_matrix_power(m):
    return [SampleInput(_wellcond(m, (3, 3)) * 0.4, (n,), name=f"n={n}") for n in (0, 1, 2, 3, -2)] + [
        SampleInput(_wellcond(m, (2, 2, 2)) * 0.4, (5,), name="batch")
    ]


def s_pinv(m):
    return [
        SampleInput(m.tensor(_rand(m, (3, 2)) + np.eye(3, 2)), name="tall"),
        SampleInput(m.tensor(_rand(m, (2, 3)) + np.eye(2, 3)), name="wide"),
        SampleInput(_wellcond(m, (2, 3, 3)), name="square batch"),
    ]


def s_lstsq(m):
    return [
        SampleInput(m.tensor(_rand(m, (4, 3)) + np.eye(4, 3)), (m.tensor(_rand(m, (4, 2))),), name="tall"),
        SampleInput(m.tensor(_rand(m, (2, 4, 2)) + np.eye(4, 2)), (m.tensor(_rand(m, (2, 4, 1))),), name="batch"),
    ]


def s_matrix_rank(m):
    low = _rand(m, (4, 2)) @ _rand(m, (2, 3))
    return [
        SampleInput(m.tensor(low), name="rank 2"),
        SampleInput(_wellcond(m, (2, 3, 3)), name="full"),
        SampleInput(m.tensor(low), (), {"atol": 0.5}, "atol"),
        SampleInput(_spd(m, (3, 3)), (), {"hermitian": True}, "hermitian"),
    ]


def ref_matrix_rank(a, atol=None, rtol=None, hermitian=False):
    if atol is None and rtol is None:
        return np.asarray(np.linalg.matrix_rank(a, hermitian=hermitian), dtype=np.int64)
    s = np.linalg.svd(a, compute_uv=False)
    tol = max(atol or 0.0, (rtol or 0.0) * s.max(-1))
    return np.asarray((s > tol).sum(-1), dtype=np.int64)


def s_diag_embed(m):
    return [
        SampleInput(m((3,))),
        SampleInput(m((2, 3)), (1,), name="offset"),
        SampleInput(m((2, 3)), (-1, 0, 2), name="dims"),
    ]


def ref_diag_embed(a, offset=0, dim1=-2, dim2=-1):
    return diag_embed(a, offset, dim1, dim2)


def s_trace(m):
    return [SampleInput(m((3, 3))), SampleInput(m((2, 4)), name="rect")]


def s_diag(m):
    return [
        SampleInput(m((3,))),
        SampleInput(m((3,)), (1,), name="k=1"),
        SampleInput(m((3, 4))),
        SampleInput(m((3, 4)), (-1,), name="k=-1"),
    ]


def s_tensordot(m):
    return [
        SampleInput(m((2, 3, 4)), (m((3, 4, 2)),), name="dims=2"),
        SampleInput(m((2, 3)), (m((3, 2)), 1), name="dims=1"),
        SampleInput(m((2, 3, 4)), (m((4, 2, 3)), ([1, 2], [2, 0])), name="lists"),
        SampleInput(m((2,)), (m((3,)), 0), name="outer"),
    ]


def ref_tensordot(a, b, dims=2):
    return np.tensordot(a, b, dims)


def s_kron(m):
    return [
        SampleInput(m((2, 2)), (m((2, 3)),)),
        SampleInput(m((3,)), (m((2,)),), name="1-D"),
        SampleInput(m((2, 1, 2)), (m((2, 2)),), name="3-D by 2-D"),
    ]


def s_cross(m):
    return [
        SampleInput(m((3,)), (m((3,)),)),
        SampleInput(m((2, 3)), (m((1, 3)),), name="broadcast"),
        SampleInput(m((3, 2)), (m((3, 2)),), {"dim": 0}, "dim=0"),
    ]


def s_vecdot(m):
    return [
        SampleInput(m((3,)), (m((3,)),)),
        SampleInput(m((2, 3)), (m((3,)),), name="broadcast"),
        SampleInput(m((3, 2)), (m((3, 2)),), {"dim": 0}, "dim=0"),
    ]


def s_multi_dot(m):
    return [
        SampleInput([m((2, 3)), m((3, 4)), m((4, 2))]),
        SampleInput([m((3,)), m((3, 2)), m((2,))], name="vectors"),
        SampleInput([m((2, 3)), m((3,))], name="two"),
    ]


def s_matrix_norm(m):
    out = [
        SampleInput(m.tensor(_rand(m, (3, 3)) + 2 * np.diag([3.0, 2.0, 1.0])), (o,), name=f"ord={o}")
        for o in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)
    ]
    out.append(
        SampleInput(
            m.tensor(_rand(m, (2, 3, 2)) + 2 * np.eye(3, 2) * [2.0, 1.0]), ("nuc", (0, 1), True), name="dims, keepdim"
        )
    )
    return out


def ref_matrix_norm(a, ord="fro", dim=(-2, -1), keepdim=False):
    return np.linalg.norm(a, ord, axis=tuple(dim), keepdims=keepdim)


def s_cond(m):
    a = m.tensor(_rand(m, (3, 3)) + 2 * np.diag([3.0, 2.0, 1.0]))
    return [SampleInput(a, (p,), name=f"p={p}") for p in (None, 2, -2, "fro", "nuc", 1, np.inf)] + [
        SampleInput(m.tensor(_rand(m, (2, 3, 3)) + 2 * np.diag([3.0, 2.0, 1.0])), name="batch")
    ]


def s_slogdet(m):
    return s_square(m) + [SampleInput(m.tensor(-_spd(m, (3, 3))._data), name="negative det")]


def ref_slogdet(a):
    return tuple(np.linalg.slogdet(a))


def ref_logdet(a):
    sign, logabs = np.linalg.slogdet(a)
    if a.dtype.kind == "c":
        return np.log(sign) + logabs
    return np.where(sign < 0, np.nan, logabs)


def s_logdet(m):
    if m.dtype.kind == "c":
        return s_square(m)
    return s_spd(m) + [SampleInput(m.tensor(-_spd(m, (3, 3))._data), name="negative det (nan)", grad=False)]


def add_linalg_ops(add: Callable) -> None:
    """Register the linalg, fft and special ops (called at the end of opdb._build)."""
    add(OpInfo("inverse", ops.inverse, s_square, np.linalg.inv, REAL_COMPLEX))
    add(OpInfo("det", ops.det, s_det, np.linalg.det, REAL_COMPLEX))
    add(OpInfo("logdet", ops.logdet, s_logdet, ref_logdet, REAL_COMPLEX))
    add(OpInfo("_slogdet_sign", ops._slogdet_sign, s_slogdet, lambda a: np.linalg.slogdet(a)[0], REAL_COMPLEX))
    add(OpInfo("_slogdet_logabs", ops._slogdet_logabs, s_slogdet, lambda a: np.linalg.slogdet(a)[1], REAL_COMPLEX))
    add(OpInfo("slogdet", ops.slogdet, s_slogdet, ref_slogdet, REAL_COMPLEX, composite=True))
    add(OpInfo("_linalg_solve", ops._linalg_solve, s_solve_prim, np.linalg.solve, REAL_COMPLEX))
    add(OpInfo("linalg_solve", ops.linalg_solve, s_solve, ref_solve, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "linalg_solve_triangular",
            ops.linalg_solve_triangular,
            s_solve_triangular,
            ref_solve_triangular,
            REAL_COMPLEX,
        )
    )
    add(OpInfo("linalg_cholesky", op_cholesky, s_cholesky, ref_cholesky, REAL_COMPLEX))
    add(
        OpInfo(
            "cholesky_solve",
            ops.cholesky_solve,
            s_cholesky_solve,
            lambda b, f, upper=False: np.linalg.solve(_h(f) @ f if upper else f @ _h(f), b),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "cholesky_inverse",
            ops.cholesky_inverse,
            s_cholesky_inverse,
            lambda f, upper=False: np.linalg.inv(_h(f) @ f if upper else f @ _h(f)),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(OpInfo("_linalg_eigh", op_eigh, s_eigh, ref_eigh, REAL_COMPLEX))
    add(OpInfo("linalg_eigh", op_eigh_pub, s_eigh, ref_eigh_pub, REAL_COMPLEX, composite=True))
    add(OpInfo("linalg_eigvalsh", op_eigvalsh, s_eigvalsh, ref_eigvalsh, REAL_COMPLEX))
    add(OpInfo("_linalg_svd", op_svd, s_rect, ref_svd, REAL_COMPLEX))
    add(OpInfo("linalg_svd", op_svd_pub, s_svd_pub, ref_svd_pub, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "linalg_svdvals",
            ops.linalg_svdvals,
            s_svdvals,
            lambda a: np.linalg.svd(a, compute_uv=False),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(OpInfo("_linalg_qr", op_qr, s_qr, ref_qr, REAL_COMPLEX))
    add(OpInfo("linalg_qr", ops.linalg_qr, s_qr_pub, ref_qr_pub, REAL_COMPLEX, composite=True))
    add(OpInfo("_linalg_eig", op_eig, s_eig, ref_eig, REAL_COMPLEX))
    add(OpInfo("linalg_eig", op_eig_pub, s_eig, ref_eig, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "linalg_eigvals",
            ops.linalg_eigvals,
            s_eig,
            lambda a: np.linalg.eigvals(a).astype(np.result_type(a.dtype, np.complex64)),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(OpInfo("_linalg_lu", op_lu, s_lu, ref_lu, REAL_COMPLEX))
    add(OpInfo("linalg_lu", op_lu_pub, s_lu, ref_lu_pub, REAL_COMPLEX, composite=True))
    add(OpInfo("linalg_lu_factor", op_lu_factor, s_lu, ref_lu_factor, REAL_COMPLEX, composite=True))
    add(OpInfo("linalg_lu_solve", ops.linalg_lu_solve, s_lu_solve, ref_lu_solve, REAL_COMPLEX, composite=True))
    add(OpInfo("matrix_exp", ops.matrix_exp, s_matrix_exp, sla.expm, REAL_COMPLEX))
    add(OpInfo("matrix_power", ops.matrix_power, s_matrix_power, np.linalg.matrix_power, REAL_COMPLEX, composite=True))
    add(OpInfo("linalg_pinv", ops.linalg_pinv, s_pinv, np.linalg.pinv, REAL_COMPLEX))
    add(OpInfo("linalg_lstsq", op_lstsq, s_lstsq, ref_lstsq, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "linalg_matrix_rank",
            ops.linalg_matrix_rank,
            s_matrix_rank,
            ref_matrix_rank,
            REAL_COMPLEX,
            differentiable=False,
        )
    )
    add(OpInfo("diag_embed", ops.diag_embed, s_diag_embed, ref_diag_embed, REAL_COMPLEX))
    add(OpInfo("trace", ops.trace, s_trace, np.trace, REAL_COMPLEX, composite=True))
    add(OpInfo("diag", ops.diag, s_diag, lambda a, k=0: np.diag(a, k), REAL_COMPLEX, composite=True))
    add(OpInfo("tensordot", ops.tensordot, s_tensordot, ref_tensordot, REAL_COMPLEX, composite=True))
    add(OpInfo("kron", ops.kron, s_kron, np.kron, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "linalg_cross",
            ops.linalg_cross,
            s_cross,
            lambda a, b, dim=-1: np.cross(a, b, axis=dim),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "linalg_vecdot",
            ops.linalg_vecdot,
            s_vecdot,
            lambda a, b, dim=-1: (a.conj() * b).sum(dim),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "linalg_multi_dot",
            ops.linalg_multi_dot,
            s_multi_dot,
            lambda ts: np.linalg.multi_dot(ts),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "linalg_matrix_norm", ops.linalg_matrix_norm, s_matrix_norm, ref_matrix_norm, REAL_COMPLEX, composite=True
        )
    )
    add(
        OpInfo(
            "linalg_cond", ops.linalg_cond, s_cond, lambda a, p=None: np.linalg.cond(a, p), REAL_COMPLEX, composite=True
        )
    )


# -- fft --------------------------------------------------------------------------------------------------
def s_c2c(m):
    return [
        SampleInput(m((4,)), ([0], None, True), name="1-D"),
        SampleInput(m((2, 3)), ([0, 1], "ortho", False), name="2-D"),
        SampleInput(m((3, 2)), ([1], "forward", True), name="dim 1"),
        SampleInput(m((2, 3)), ([-1], "backward", False), name="inverse"),
    ]


def s_r2c(m):
    return [
        SampleInput(m((5,)), ([0], None), name="odd"),
        SampleInput(m((2, 4)), ([0, 1], "ortho"), name="2-D"),
        SampleInput(m((4, 3)), ([0], "forward"), name="dim 0"),
    ]


def s_c2r(m):
    return [
        SampleInput(m((3,)), ([0], None, 4), name="even"),
        SampleInput(m((3,)), ([0], "ortho", 5), name="odd"),
        SampleInput(m((2, 3)), ([0, 1], "forward", 4), name="2-D"),
        SampleInput(m((4,)), ([0], None, 4), name="extra bins"),
    ]


def ref_c2r(x, dim, norm, last):
    s = [x.shape[d] for d in dim[:-1]] + [last]
    return np.fft.irfftn(x, s=s, axes=dim, norm=norm)


def s_fft1(m):
    return [
        SampleInput(m((5,)), name="plain"),
        SampleInput(m((5,)), (3,), name="crop"),
        SampleInput(m((4,)), (6,), name="pad"),
        SampleInput(m((2, 3)), (None, 0, "ortho"), name="dim 0, ortho"),
        SampleInput(m((3,)), (), {"norm": "forward"}, "forward"),
    ]


def s_irfft1(m):
    return [
        SampleInput(m((3,)), name="plain"),
        SampleInput(m((3,)), (5,), name="odd n"),
        SampleInput(m((4,)), (4,), name="crop"),
        SampleInput(m((3, 2)), (None, 0, "ortho"), name="dim 0, ortho"),
        SampleInput(m((3,)), (), {"norm": "forward"}, "forward"),
    ]


def s_fft2(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3, 2)), ((3, 2),), name="s"),
        SampleInput(m((3, 2)), (None, (0, 1), "ortho"), name="dims, ortho"),
    ]


def s_irfft2(m):
    return [
        SampleInput(m((2, 3))),
        SampleInput(m((2, 3)), ((2, 5),), name="s odd"),
        SampleInput(m((3, 2)), (None, (1, 0), "ortho"), name="dims, ortho"),
    ]


def s_fftn(m):
    return s_fft2(m) + [SampleInput(m((2, 2, 3)), (None, None, "forward"), name="all dims")]


def s_irfftn(m):
    return s_irfft2(m) + [SampleInput(m((2, 2, 3)), (None, None, "forward"), name="all dims")]


def s_shift(m):
    return [SampleInput(m((5,))), SampleInput(m((2, 3))), SampleInput(m((2, 3)), ((1,),), name="dim")]


def _np1(f):
    return lambda x, n=None, dim=-1, norm=None: f(x, n, dim, norm)


def _npn(f, default):
    return lambda x, s=None, dim=default, norm=None: f(x, s, None if dim is None else tuple(dim), norm)


_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def add_fft_ops(add: Callable) -> None:
    add(
        OpInfo(
            "_fft_c2c",
            ops._fft_c2c,
            s_c2c,
            lambda x, dim, norm, fw: (np.fft.fftn if fw else np.fft.ifftn)(x, axes=dim, norm=norm),
            REAL_COMPLEX,
        )
    )
    add(OpInfo("_fft_r2c", ops._fft_r2c, s_r2c, lambda x, dim, norm: np.fft.rfftn(x, axes=dim, norm=norm), REAL))
    add(OpInfo("_fft_c2r", ops._fft_c2r, s_c2r, ref_c2r, REAL_COMPLEX))
    for name, f, sf, dts in [
        ("fft", np.fft.fft, s_fft1, REAL_COMPLEX),
        ("ifft", np.fft.ifft, s_fft1, REAL_COMPLEX),
        ("rfft", np.fft.rfft, s_fft1, REAL),
        ("irfft", np.fft.irfft, s_irfft1, REAL_COMPLEX),
        ("hfft", np.fft.hfft, s_irfft1, REAL_COMPLEX),
        ("ihfft", np.fft.ihfft, s_fft1, REAL),
    ]:
        add(OpInfo(f"fft_{name}", getattr(ops, f"fft_{name}"), sf, _np1(f), dts, composite=True))
    for name, f, sf, dts, default in [
        ("fft2", np.fft.fft2, s_fft2, REAL_COMPLEX, (-2, -1)),
        ("ifft2", np.fft.ifft2, s_fft2, REAL_COMPLEX, (-2, -1)),
        ("rfft2", np.fft.rfft2, s_fft2, REAL, (-2, -1)),
        ("irfft2", np.fft.irfft2, s_irfft2, REAL_COMPLEX, (-2, -1)),
        ("fftn", np.fft.fftn, s_fftn, REAL_COMPLEX, None),
        ("ifftn", np.fft.ifftn, s_fftn, REAL_COMPLEX, None),
        ("rfftn", np.fft.rfftn, s_fftn, REAL, None),
        ("irfftn", np.fft.irfftn, s_irfftn, REAL_COMPLEX, None),
    ]:
        add(OpInfo(f"fft_{name}", getattr(ops, f"fft_{name}"), sf, _npn(f, default), dts, composite=True))
    # no NumPy hfftn: references from the identities (torch is the independent oracle, tests/test_fft.py)
    hf = lambda x, s=None, dim=None, norm=None: np.fft.irfftn(np.conj(x), s, dim, _SWAP[norm])  # noqa: E731
    ihf = lambda x, s=None, dim=None, norm=None: np.conj(np.fft.rfftn(x, s, dim, _SWAP[norm]))  # noqa: E731
    for name, ref, sf, dts, default in [
        ("hfft2", hf, s_irfft2, REAL_COMPLEX, (-2, -1)),
        ("ihfft2", ihf, s_fft2, REAL, (-2, -1)),
        ("hfftn", hf, s_irfftn, REAL_COMPLEX, None),
        ("ihfftn", ihf, s_fftn, REAL, None),
    ]:
        add(
            OpInfo(
                f"fft_{name}",
                getattr(ops, f"fft_{name}"),
                sf,
                (lambda x, s=None, dim=default, norm=None, ref=ref: ref(x, s, dim, norm)),
                dts,
                composite=True,
            )
        )
    add(
        OpInfo(
            "fft_fftshift",
            ops.fft_fftshift,
            s_shift,
            lambda x, dim=None: np.fft.fftshift(x, dim),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "fft_ifftshift",
            ops.fft_ifftshift,
            s_shift,
            lambda x, dim=None: np.fft.ifftshift(x, dim),
            REAL_COMPLEX,
            composite=True,
        )
    )


# -- special functions ------------------------------------------------------------------------------------
def _unary_samples(m, low=-2.0, high=2.0):
    return [
        SampleInput(m((), low=low, high=high)),
        SampleInput(m((5,), low=low, high=high)),
        SampleInput(m((2, 3), low=low, high=high)),
        SampleInput(m((0,), low=low, high=high), name="empty"),
    ]


def s_zeta(m):
    return [
        SampleInput(m((4,), low=0.5, high=3.0), (2.5,), name="x=2.5"),
        SampleInput(m((2, 3), low=0.5, high=3.0), (4.0,), name="x=4"),
    ]


def s_mvlgamma(m):
    return [SampleInput(m((4,), low=2.0, high=4.0), (p,), name=f"p={p}") for p in (1, 2, 3)]


def add_special_ops(add: Callable) -> None:
    unary = {
        "special_i0": (sp.i0, None),
        "special_i0e": (sp.i0e, None),
        "special_i1": (sp.i1, None),
        "special_i1e": (sp.i1e, None),
        "special_ndtr": (sp.ndtr, None),
        "special_ndtri": (sp.ndtri, (0.05, 0.95)),
        "special_log_ndtr": (sp.log_ndtr, None),
        "special_erfcx": (sp.erfcx, None),
        "sinc": (np.sinc, None),
        "special_entr": (sp.entr, (0.1, 3.0)),
    }
    for name, (ref, dom) in unary.items():
        lo, hi = dom or (-2.0, 2.0)
        zero = name in ("special_i1", "special_i1e", "sinc")  # removable singularities of the formulas at 0
        add(
            OpInfo(
                name,
                getattr(ops, name),
                (
                    lambda m, lo=lo, hi=hi, zero=zero: (
                        _unary_samples(m, lo, hi) + ([SampleInput(m.tensor([0.0, 0.7]), name="at 0")] if zero else [])
                    )
                ),
                ref,
                REAL,
                composite=name == "special_ndtr",
            )
        )  # ndtr is a composite of erfc (the tape keeps what torch's does)
    add(
        OpInfo(
            "special_xlog1py",
            ops.special_xlog1py,
            lambda m: [
                SampleInput(m((3,)), (m((3,), low=-0.5, high=2.0),)),
                SampleInput(m((2, 3)), (m((3,), low=-0.5, high=2.0),), name="broadcast"),
            ],
            sp.xlog1py,
            REAL,
        )
    )
    add(OpInfo("_special_zeta", lambda q, x: ops._special_zeta(x, q), s_zeta, lambda q, x: sp.zeta(x, q), REAL))
    add(
        OpInfo(
            "special_zeta",
            lambda q, x: ops.special_zeta(x, q),
            s_zeta,
            lambda q, x: sp.zeta(x, q),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "mvlgamma",
            ops.mvlgamma,
            s_mvlgamma,
            lambda a, p: np.asarray(np.vectorize(lambda v: sp.multigammaln(v, p))(a), a.dtype),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "special_betaln",
            ops.special_betaln,
            lambda m: [
                SampleInput(m((3,), low=0.5, high=3.0), (m((3,), low=0.5, high=3.0),)),
                SampleInput(m((2, 3), low=0.5, high=3.0), (m((3,), low=0.5, high=3.0),), name="broadcast"),
            ],
            sp.betaln,
            REAL,
            composite=True,
        )
    )


# -- more special functions and products ------------------------------------------------------------------
def s_gammainc(m):
    return [
        SampleInput(m((4,), low=0.2, high=3.0), (1.5, False), name="P"),
        SampleInput(m((2, 3), low=0.2, high=3.0), (2.5, True), name="Q"),
    ]


def s_gammainc_pub(m):
    return [
        SampleInput(m((4,), low=0.2, high=3.0), (1.5,), name="a=1.5"),
        SampleInput(m((2, 3), low=0.2, high=3.0), (0.7,), name="a=0.7"),
    ]


def s_addr(m):
    return [
        SampleInput(m((2, 3)), (m((2,)), m((3,)))),
        SampleInput(m((3,)), (m((2,)), m((3,))), {"alpha": 0.5}, "alpha"),
    ]


def _ref_add(self, prod, beta=1, alpha=1):
    return alpha * prod + (0 if beta == 0 else beta * self)


def s_tensorinv(m):
    return [
        SampleInput(m.tensor((_rand(m, (4, 4)) + 3 * np.eye(4)).reshape(4, 2, 2)), (1,), name="ind=1"),
        SampleInput(m.tensor((_rand(m, (4, 4)) + 3 * np.eye(4)).reshape(2, 2, 2, 2)), name="ind=2"),
    ]


def s_tensorsolve(m):
    a = (_rand(m, (6, 6)) + 3 * np.eye(6)).reshape(2, 3, 6)
    return [
        SampleInput(m.tensor(a), (m.tensor(_rand(m, (2, 3))),), name="plain"),
        SampleInput(m.tensor(np.moveaxis(a, -1, 0)), (m.tensor(_rand(m, (2, 3))),), {"dims": (0,)}, "dims"),
    ]


def add_more_ops(add: Callable) -> None:
    unary = {
        "special_bessel_j0": (sp.j0, None, False),
        "special_bessel_j1": (sp.j1, None, True),
        "special_bessel_y0": (sp.y0, (0.5, 3.0), False),
        "special_bessel_y1": (sp.y1, (0.5, 3.0), False),
        "special_modified_bessel_k0": (sp.k0, (0.5, 3.0), False),
        "special_modified_bessel_k1": (sp.k1, (0.5, 3.0), False),
        "special_scaled_modified_bessel_k0": (sp.k0e, (0.5, 3.0), False),
        "special_scaled_modified_bessel_k1": (sp.k1e, (0.5, 3.0), False),
        "special_spherical_bessel_j0": (lambda x: sp.spherical_jn(0, x), None, True),
        "special_airy_ai": (lambda x: sp.airy(x)[0], None, False),
        "_special_airy_ai_prime": (lambda x: sp.airy(x)[1], None, False),
    }
    for name, (ref, dom, zero) in unary.items():
        lo, hi = dom or (-2.0, 2.0)
        add(
            OpInfo(
                name,
                getattr(ops, name),
                (
                    lambda m, lo=lo, hi=hi, zero=zero: (
                        _unary_samples(m, lo, hi) + ([SampleInput(m.tensor([0.0, 0.7]), name="at 0")] if zero else [])
                    )
                ),
                ref,
                REAL,
                composite=name == "special_ndtr",
            )
        )  # ndtr is a composite of erfc (the tape keeps what torch's does)
    add(
        OpInfo(
            "_special_gammainc",
            lambda x, a, upper: ops._special_gammainc(a, x, upper),
            s_gammainc,
            lambda x, a, upper: (sp.gammaincc if upper else sp.gammainc)(a, x),
            REAL,
        )
    )
    add(
        OpInfo(
            "special_gammainc",
            lambda x, a: ops.special_gammainc(a, x),
            s_gammainc_pub,
            lambda x, a: sp.gammainc(a, x),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "special_gammaincc",
            lambda x, a: ops.special_gammaincc(a, x),
            s_gammainc_pub,
            lambda x, a: sp.gammaincc(a, x),
            REAL,
            composite=True,
        )
    )
    add(
        OpInfo(
            "inner",
            ops.inner,
            lambda m: [
                SampleInput(m((2, 3)), (m((4, 3)),)),
                SampleInput(m((3,)), (m((3,)),)),
                SampleInput(m(()), (m((2,)),), name="0-d"),
            ],
            np.inner,
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "addr",
            ops.addr,
            s_addr,
            lambda s, a, b, **kw: _ref_add(s, np.outer(a, b), **kw),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "linalg_vander",
            ops.linalg_vander,
            lambda m: [SampleInput(m((3,))), SampleInput(m((2, 3)), (), {"N": 4}, "batch, N")],
            lambda x, N=None: x[..., None] ** np.arange(x.shape[-1] if N is None else N).astype(x.dtype),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "linalg_tensorinv",
            ops.linalg_tensorinv,
            s_tensorinv,
            lambda a, ind=2: np.linalg.tensorinv(a, ind),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "linalg_tensorsolve",
            ops.linalg_tensorsolve,
            s_tensorsolve,
            lambda a, b, dims=None: np.linalg.tensorsolve(a, b, dims),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "pinverse",
            ops.pinverse,
            lambda m: [
                SampleInput(m.tensor(_rand(m, (3, 2)) + np.eye(3, 2))),
                SampleInput(m.tensor(_rand(m, (2, 3)) + np.eye(2, 3)), (1e-3,), name="rcond"),
            ],
            lambda a, rcond=1e-15: np.linalg.pinv(a, rtol=rcond),
            REAL_COMPLEX,
            composite=True,
        )
    )


# -- torch's older top-level names -------------------------------------------------------------------------
def op_svd_legacy(a, some=True, compute_uv=True):
    u, s, v = ops.svd(a, some, compute_uv)
    if not compute_uv:
        return u, s, v
    k = s.shape[-1]
    return u.narrow(-1, 0, k) @ _ph(v.narrow(-1, 0, k)), s


def ref_svd_legacy(a, some=True, compute_uv=True):
    if not compute_uv:
        m, n = a.shape[-2:]
        s = np.linalg.svd(a, compute_uv=False)
        return np.zeros(a.shape[:-2] + (m, m), a.dtype), s, np.zeros(a.shape[:-2] + (n, n), a.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=not some)
    k = s.shape[-1]
    return u[..., :k] @ vh[..., :k, :], s


def s_svd_legacy(m):
    return [
        SampleInput(s.input, (some,), name=f"{s.name}, some={some}") for s in s_rect(m)[:3] for some in (True, False)
    ] + [SampleInput(s_rect(m)[1].input, (True, False), name="compute_uv=False")]


def s_lu_unpack(m):
    out = []
    for shape in ((3, 3), (4, 3), (3, 4)):
        d = np.zeros(shape)
        d[range(min(shape)), range(min(shape))] = [0.1, 2.0, 3.0]  # a small first pivot: rows get swapped
        lu, piv = sla.lu_factor(_rand(m, shape) + d)
        out.append(SampleInput(m.tensor(lu), (wrap((piv + 1).astype(np.int32)),), name=f"{shape}"))
    return out


def ref_lu_unpack(lu, piv, unpack_data=True, unpack_pivots=True):
    m, n = lu.shape
    k = min(m, n)
    rows = np.arange(m)
    for i, j in enumerate(piv - 1):  # LAPACK: row i was swapped with row j
        rows[[i, j]] = rows[[j, i]]
    p = np.zeros((m, m), lu.dtype)
    p[rows, np.arange(m)] = 1
    return p, np.tril(lu[:, :k], -1) + np.eye(m, k, dtype=lu.dtype), np.triu(lu[:k])


def s_triangular_solve(m):
    out = []
    for upper in (True, False):
        for transpose in (False, True):
            a = _lower(m, (3, 3))
            a = m.tensor(_h(a._data)) if upper else a
            out.append(
                SampleInput(m.tensor(_rand(m, (3, 2))), (a, upper, transpose), name=f"upper={upper}, T={transpose}")
            )
    out.append(
        SampleInput(
            m.tensor(_rand(m, (2, 3, 1))), (_lower(m, (3, 3), unit=True), False, False, True), name="unit, batch"
        )
    )
    return out


def ref_triangular_solve(b, a, upper=True, transpose=False, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        eye = np.eye(a.shape[-1], dtype=a.dtype)
        t = t * (1 - eye) + eye
    x = np.linalg.solve(np.swapaxes(t, -1, -2) if transpose else t, b)
    return x, np.broadcast_to(a, x.shape[:-2] + a.shape[-2:]).copy()


def ref_cross(a, b, dim=None):
    if dim is None:
        dim = [d for d, n in enumerate(np.broadcast_shapes(a.shape, b.shape)) if n == 3][0]
    return np.cross(a, b, axis=dim)


def add_legacy_ops(add: Callable) -> None:
    add(
        OpInfo(
            "cross",
            ops.cross,
            lambda m: [
                SampleInput(m((3,)), (m((3,)),)),
                SampleInput(m((2, 3)), (m((2, 3)), 1), name="dim=1"),
                SampleInput(m((3, 2)), (m((3, 2)),), name="first dim of size 3"),
            ],
            ref_cross,
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(OpInfo("svd", op_svd_legacy, s_svd_legacy, ref_svd_legacy, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "qr",
            ops.qr,
            lambda m: (
                [SampleInput(s.input, name=s.name) for s in s_qr(m)]
                + [SampleInput(_wellcond(m, (3, 3)), (False,), name="square, some=False")]
            ),
            lambda a, some=True: tuple(np.linalg.qr(a, "reduced" if some else "complete")),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(OpInfo("lu_unpack", ops.lu_unpack, s_lu_unpack, ref_lu_unpack, REAL_COMPLEX, composite=True))
    add(
        OpInfo(
            "triangular_solve",
            ops.triangular_solve,
            s_triangular_solve,
            ref_triangular_solve,
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "vander",
            ops.vander,
            lambda m: [SampleInput(m((3,))), SampleInput(m((4,)), (3, True), name="N, increasing")],
            lambda x, N=None, increasing=False: np.vander(x, N, increasing).astype(x.dtype),
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "diagflat",
            ops.diagflat,
            lambda m: [SampleInput(m((2, 2))), SampleInput(m((3,)), (1,), name="offset")],
            lambda x, k=0: np.diagflat(x, k),
            REAL_COMPLEX,
            composite=True,
        )
    )
