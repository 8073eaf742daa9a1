"""Derivative formulas of the linear-algebra, FFT and special-function ops.

Every helper is written over pushforward's own differentiable ops, so forward-over-reverse
and higher orders come from nesting. Notation: X^H = X.mT.conj(); <X, Y> = Re tr(X^H Y),
the inner product of PyTorch's conjugate-Wirtinger convention (a backward formula is the
adjoint of the forward one under it).

Decisions (also in docs/linalg.md):
- Eigen- and singular-vector derivatives divide by eigenvalue (singular value) gaps, as
  torch's do: degenerate spectra give non-finite derivatives for losses that depend on the
  vectors. When the loss depends on eigen/singular *values* only, the vector terms are
  skipped, so `eigvalsh`/`svdvals` (and `eigh`/`svd` used for values only) stay finite.
- Gauge: eigenvectors and singular vectors are defined up to a phase (a sign for real
  input). A loss that depends on that phase has no derivative; for complex inputs the
  backward detects it (as torch) and raises.
- Multi-output factorisations are packed into one flat output per matrix (kernels_linalg).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...errors import OpError
from ...core.backend import opaque
from ...core.batched import BatchedTensor, unbatched, values_of
from ...core.lazy import is_lazy_array
from ...core.tensor import Tensor, wrap
from ...engine.grad_mode import is_grad_enabled
from ...engine.registry import OPS
from ..composites.util import merges_to_view, scale
from ...core.creation import arange, eye, ones_like, zeros, zeros_like
from ...dispatch.batching import loop_batched

__all__ = [
    "mH",
    "adjugate",
    "det_backward",
    "det_jvp",
    "eigh_unpack",
    "eigh_pack",
    "eigh_backward",
    "eigh_jvp",
    "eigvalsh_backward",
    "eigvalsh_jvp",
    "svd_unpack",
    "svd_backward",
    "svd_jvp",
    "c_svdvals",
    "qr_unpack",
    "qr_backward",
    "qr_jvp",
    "eig_unpack",
    "eig_backward",
    "eig_jvp",
    "c_eigvals",
    "cholesky_backward",
    "cholesky_jvp",
    "solve_triangular_backward",
    "solve_triangular_jvp",
    "matrix_exp_frechet",
    "pinv_backward",
    "pinv_jvp",
    "slogdet_sign_backward",
    "slogdet_sign_jvp",
    "lu_unpack",
    "lu_backward",
    "lu_jvp",
    "swap_norm",
    "fft_r2c_backward",
    "fft_c2r_backward",
    "fft_resize",
    "c_slogdet",
    "c_solve",
    "eye_like_matrix",
    "c_cholesky_solve",
    "c_eigh",
    "c_hermitian_from_triangle",
    "c_eig",
    "c_svd",
    "c_qr",
    "c_lu",
    "c_lu_factor",
    "c_lu_solve",
    "c_matrix_power",
    "c_lstsq",
    "c_trace",
    "c_diag",
    "c_tensordot",
    "c_kron",
    "c_cross",
    "c_multi_dot",
    "c_matrix_norm",
    "c_cond",
    "c_fft",
    "fft_shift",
    "bessel_ratio",
    "sinc_derivative",
    "c_zeta",
    "c_mvlgamma",
    "spherical_j0_derivative",
    "gammainc_density",
    "betainc_density",
    "expn_slope",
    "series_near",
    "spence_slope",
    "ellipk_slope",
    "ellipe_slope",
    "c_gammainc",
    "c_inner",
    "add_product",
    "c_vander",
    "c_tensorinv",
    "c_tensorsolve",
    "first_dim_of_size3",
    "svd_legacy",
    "c_lu_unpack",
    "c_triangular_solve",
    "c_matmul",
]


def _ops():
    return OPS


def mH(x):
    """Conjugate transpose of the last two dims."""
    return x.mT.conj() if x.dtype.kind == "c" else x.mT


def _eye_like(x, n):
    return eye(n, dtype=x.dtype)


def _gap_inverse(values):
    """F[..., i, j] = 1 / (values[j] - values[i]) off the diagonal, 0 on it (torch's E^-1)."""
    o = _ops()
    n = values.shape[-1]
    diag = eye(n, dtype=bool)
    e = values.unsqueeze(-2) - values.unsqueeze(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return o.where(diag, 0.0, 1.0 / o.where(diag, 1.0, e))


def _flat_last2(x):
    """x with its last two dims flattened into one (explicit size: -1 cannot be inferred when empty)."""
    return x.reshape(*x.shape[:-2], x.shape[-2] * x.shape[-1])


def _is_zero(t) -> bool:
    """t is absent, or zero and constant. A zero cotangent that is itself differentiated (the
    double-backward trick of autograd.functional.jvp(fw_mode=False) differentiates the backward
    with respect to a zero cotangent) is not zero for this purpose: skipping its terms would
    drop their derivative."""
    if t is None:
        return True
    v = values_of(t)  # (a lazy cotangent's values are unknown: not known to be zero)
    return type(v) is np.ndarray and not _differentiated(t) and not bool(np.any(v != 0))


def _diag(x):
    return x.diagonal(0, -2, -1)


# -- determinants ----------------------------------------------------------------------------------
def adjugate(a):
    """adj(A), with A adj(A) = det(A) I. det(A) inv(A) when A is well conditioned; cofactors
    (determinants of the (n-1)x(n-1) minors) when A is singular or nearly so."""
    o = _ops()
    n = a.shape[-1]
    if n == 0:
        return a
    with np.errstate(all="ignore"):
        cond = np.linalg.cond(a._data) if a._data.size else np.zeros(1)
    if np.all(np.isfinite(cond)) and np.all(cond < 1e8):
        return o.det(a).unsqueeze(-1).unsqueeze(-1) * o.inverse(a)
    if n == 1:
        return ones_like(a)
    rows = []
    for j in range(n):  # adj(A)[j, i] = (-1)^(i+j) det(minor(A, i, j))
        row = []
        for i in range(n):
            keep_r = wrap(np.array([r for r in range(n) if r != i]))
            keep_c = wrap(np.array([c for c in range(n) if c != j]))
            minor = a.index_select(-2, keep_r).index_select(-1, keep_c)
            row.append(o.det(minor) * (-1.0) ** (i + j))
        rows.append(o.stack(row, -1))
    return o.stack(rows, -2)


def det_backward(grad, a):
    return grad.unsqueeze(-1).unsqueeze(-1) * mH(adjugate(a))


def det_jvp(a_p, a_t):
    return (adjugate(a_p) * a_t.mT).sum((-2, -1))


def slogdet_sign_backward(grad, a, sign):
    """sign = exp(i theta), theta = Im log det A: d theta = Im tr(A^-1 dA). Zero for real A."""
    if a.dtype.kind != "c":
        return None
    g_theta = (grad.conj() * sign * 1j).real
    return g_theta.unsqueeze(-1).unsqueeze(-1) * mH(_ops().inverse(a)) * 1j


def slogdet_sign_jvp(a_p, a_t, sign):
    if a_p.dtype.kind != "c":
        return None
    dtheta = (_ops().inverse(a_p) * a_t.mT).sum((-2, -1)).imag
    return sign * dtheta * 1j


# -- triangular solve, Cholesky --------------------------------------------------------------------
def _tri(x, upper, unitriangular):
    if upper:
        return x.triu(1 if unitriangular else 0)
    return x.tril(-1 if unitriangular else 0)


def solve_triangular_backward(grad, a, result, upper, left, unitriangular):
    """The gradient for A (X = A^-1 B if left else B A^-1): -(A^-H gX) X^H, on A's triangle."""
    o = _ops()
    gb = o.linalg_solve_triangular(mH(a), grad, upper=not upper, left=left, unitriangular=unitriangular)
    ga = -(gb @ mH(result)) if left else -(mH(result) @ gb)
    return _tri(ga, upper, unitriangular)


def solve_triangular_jvp(a_p, a_t, b_t, result, upper, left, unitriangular):
    o = _ops()
    rhs = b_t
    if a_t is not None:
        da = _tri(a_t, upper, unitriangular)
        term = da @ result if left else result @ da
        rhs = -term if rhs is None else rhs - term
    return o.linalg_solve_triangular(a_p, rhs, upper=upper, left=left, unitriangular=unitriangular)


def _phi_lower(x):
    """Lower triangle with the diagonal halved."""
    return x.tril(-1) + _ops().diag_embed(_diag(x) * 0.5)


# Order of the diagonal blocks of the blocked Cholesky tangent (measured at n = 200-1000 on one core:
# 64-128 are within a few percent; smaller blocks pay the per-op cost, larger ones the dense blocks').
CHOLESKY_BLOCK = 96


def cholesky_jvp(a_t, result, upper):
    """dL = L Phi(L^-1 S L^-H), S = (dA + dA^H) / 2 (lower factor; upper: the conjugate transpose).

    The derivative is that of the Hermitian matrix (docs/linalg.md, "Hermitian inputs"): a tangent
    enters through its Hermitian part, so that this is the adjoint of cholesky_backward's
    Hermitian gradient (jacfwd and jacrev agree) and equals torch's on Hermitian tangents.
    """
    low = mH(result) if upper else result
    dl = _cholesky_tangent(low, a_t, not upper)
    return mH(dl) if upper else dl


def _cholesky_tangent(low, da, column_major):
    """dL of cholesky_jvp, by diagonal blocks of CHOLESKY_BLOCK as the left-looking blocked
    factorisation computes L. With L = [L11 0; L21 L22] and S11, S21 the first block column of S:
    X11 = L11^-1 S11 L11^-H, dL11 = L11 Phi(X11), dL21 = S21 L11^-H - L21 Phi(X11)^H, and L22's
    tangent is the same for S22 - dL21 L21^H - L21 dL21^H. Each block column of that updated S is
    formed when it is reached, from the columns of dL before it: 2 n^3 / 3 flops of matrix products
    in all, where the two n x n triangular solves and the product of the dense formula take 4 n^3.
    With column_major, dL is laid out so (the factor's layout: the tangent is not copied into it)."""
    o = _ops()
    n = low.shape[-1]
    if n <= CHOLESKY_BLOCK:
        x = o.linalg_solve_triangular(low, (da + mH(da)) * 0.5, upper=False)
        x = o.linalg_solve_triangular(mH(low), x, upper=True, left=False)
        return low @ _phi_lower(x)
    cols, before = [], None  # before: dL[k:, :k]
    for k, end in _cholesky_blocks(n):
        w, m = end - k, n - end
        s = (da.narrow(-2, k, n - k).narrow(-1, k, w) + mH(da.narrow(-2, k, w).narrow(-1, k, n - k))) * 0.5
        if k:
            s = s - before @ mH(low.narrow(-2, k, w).narrow(-1, 0, k))
            s = s - low.narrow(-2, k, n - k).narrow(-1, 0, k) @ mH(before.narrow(-2, 0, w))
        l11 = low.narrow(-2, k, w).narrow(-1, k, w)
        # (L11^-1 explicitly: the block's solves become matrix products, which take their operands
        # in the layout they have; a triangular solve copies each right-hand side twice)
        inv = o.linalg_solve_triangular(l11, _eye_like(l11, w), upper=False)
        phi = _phi_lower(inv @ s.narrow(-2, 0, w) @ mH(inv))
        col = [l11 @ phi]
        if m:
            d21 = s.narrow(-2, w, m) @ mH(inv) - low.narrow(-2, end, m).narrow(-1, k, w) @ mH(phi)
            col.append(d21)
            before = d21 if before is None else o.cat([before.narrow(-2, w, m), d21], -1)
        if k:
            col.insert(0, zeros_like(low.narrow(-2, 0, k).narrow(-1, 0, w)))
        cols.append(o.cat(col, -2))
    return o.cat([c.mT for c in cols], -2).mT if column_major else o.cat(cols, -1)


def cholesky_backward(grad, result, upper):
    """Adjoint of cholesky_jvp, Hermitian (torch's): L^-H Phi*(L^H gL) L^-1, symmetrised. Above
    CHOLESKY_BLOCK, the blocked tangent's steps transposed, last block first (_cholesky_cotangent)."""
    o = _ops()
    low = mH(result) if upper else result
    gl = mH(grad) if upper else grad
    if low.shape[-1] > CHOLESKY_BLOCK:
        return _cholesky_cotangent(low, gl)
    p = _phi_lower(mH(low) @ gl)
    p = (p + mH(p)) * 0.5
    x = o.linalg_solve_triangular(mH(low), p, upper=True)
    return o.linalg_solve_triangular(low, x, upper=False, left=False)


def _cholesky_blocks(n):
    """(start, end) of _cholesky_tangent's diagonal blocks: equal sizes, no thin last block."""
    blocks = -(-n // CHOLESKY_BLOCK)
    edges = [n * i // blocks for i in range(blocks + 1)]
    return list(zip(edges, edges[1:]))


def _cholesky_cotangent(low, gl):
    """The gradient of _cholesky_tangent's dL (lower) with respect to dA. Its step for a block takes
    dL11 and dL21 from X11 and S21; transposed: with gS the gradients of the updated block columns
    of S found so far (blocks after this one) and Q = gS + gS^H there, gdL21 = gL21 - Q L21 (the
    updates of the later columns read dL21), gPhi = L11^H gL11 - gdL21^H L21, gS21 = gdL21 L11^-1,
    gS11 = L11^-H Phi(gPhi) L11^-1. The gradient of dA is Q / 2 for all blocks (S is dA's Hermitian
    part). 2 n^3 / 3 flops of matrix products, as the tangent's."""
    o = _ops()
    n = low.shape[-1]
    q = None  # gS + gS^H for the rows and columns after the block
    for k, end in reversed(_cholesky_blocks(n)):
        w, m = end - k, n - end
        l11 = low.narrow(-2, k, w).narrow(-1, k, w)
        inv = o.linalg_solve_triangular(l11, _eye_like(l11, w), upper=False)
        gphi = mH(l11) @ gl.narrow(-2, k, w).narrow(-1, k, w)
        if m:
            l21 = low.narrow(-2, end, m).narrow(-1, k, w)
            g21 = gl.narrow(-2, end, m).narrow(-1, k, w) - q @ l21
            gphi = gphi - mH(g21) @ l21
            gs21 = g21 @ inv
        gs11 = mH(inv) @ _phi_lower(gphi) @ inv
        q11 = gs11 + mH(gs11)
        q = o.cat([o.cat([q11, mH(gs21)], -1), o.cat([gs21, q], -1)], -2) if m else q11
    return q * 0.5


# -- eigh -----------------------------------------------------------------------------------------
def eigh_unpack(packed, n):
    """(eigenvalues (real), eigenvectors) from eigh's packed output."""
    lam = packed.narrow(-1, 0, n)
    lam = lam.real if lam.dtype.kind == "c" else lam
    vec = packed.narrow(-1, n, n * n).reshape(*packed.shape[:-1], n, n)
    return lam, vec


def eigh_pack(lam, vec):
    o = _ops()
    if vec.dtype.kind == "c" and lam.dtype.kind != "c":
        lam = lam * (1 + 0j)
    return o.cat([lam, _flat_last2(vec)], -1)


def _gauge_check(name, vhgv):
    if vhgv.dtype.kind != "c":
        return
    im = np.imag(np.diagonal(values_of(vhgv), 0, -2, -1))
    if not np.allclose(im, 0.0, rtol=1e-2, atol=1e-2):
        raise OpError(
            f"{name}: the function being differentiated depends on the phase of the "
            "eigen/singular vectors, which is arbitrary: the derivative is not well defined"
        )


def eigh_jvp(a_p, a_t, result):
    n = a_p.shape[-1]
    lam, v = eigh_unpack(result, n)
    x = mH(v) @ a_t @ v
    dlam = _diag(x)
    dlam = dlam.real if dlam.dtype.kind == "c" else dlam
    dv = v @ (_gap_inverse(lam) * x)
    return eigh_pack(dlam, dv)


def eigh_backward(grad, shape, result):
    o = _ops()
    n = shape[-1]
    glam, gv = eigh_unpack(grad, n)
    lam, v = eigh_unpack(result, n)
    inner = o.diag_embed(glam)
    if not _is_zero(gv):  # the vector terms divide by eigenvalue gaps: only when the loss uses the vectors
        vhgv = mH(v) @ gv
        _gauge_check("linalg.eigh", vhgv)
        skew = (vhgv - mH(vhgv)) * 0.5
        inner = inner + _gap_inverse(lam) * skew
    return v @ (inner if v.dtype == inner.dtype or v.dtype.kind != "c" else inner * (1 + 0j)) @ mH(v)


def eigvalsh_jvp(a_p, a_t, UPLO):
    n = a_p.shape[-1]
    _, v = eigh_unpack(_ops()._linalg_eigh(a_p, UPLO), n)
    d = _diag(mH(v) @ a_t @ v)
    return d.real if d.dtype.kind == "c" else d


def eigvalsh_backward(grad, a, UPLO):
    o = _ops()
    _, v = eigh_unpack(o._linalg_eigh(a, UPLO), a.shape[-1])
    g = o.diag_embed(grad)
    return v @ (g * (1 + 0j) if v.dtype.kind == "c" else g) @ mH(v)


# -- svd ------------------------------------------------------------------------------------------
def svd_unpack(packed, m, n):
    k = min(m, n)
    batch = packed.shape[:-1]
    u = packed.narrow(-1, 0, m * k).reshape(*batch, m, k)
    s = packed.narrow(-1, m * k, k)
    s = s.real if s.dtype.kind == "c" else s
    vh = packed.narrow(-1, m * k + k, k * n).reshape(*batch, k, n)
    return u, s, vh


def _svd_pack(u, s, vh):
    if u.dtype.kind == "c" and s.dtype.kind != "c":
        s = s * (1 + 0j)
    return _ops().cat([_flat_last2(u), s, _flat_last2(vh)], -1)


def svd_jvp(a_p, a_t, result):
    m, n = a_p.shape[-2:]
    k = min(m, n)
    u, s, vh = svd_unpack(result, m, n)
    v = mH(vh)
    dp = mH(u) @ a_t @ v
    ds = _diag(dp)
    ds = ds.real if ds.dtype.kind == "c" else ds
    f = _gap_inverse(s * s)
    s_col = s.unsqueeze(-2)  # scales columns: X * s_col = X S
    s_row = s.unsqueeze(-1)  # scales rows: s_row * X = S X
    du = u @ (f * (dp * s_col + s_row * mH(dp)))
    dv = v @ (f * (s_row * dp + mH(dp) * s_col))
    if dp.dtype.kind == "c":  # the phase of U's columns follows Im diag(dP) (V's is kept)
        du = du + u * (_diag(dp).imag / s * 1j).unsqueeze(-2)
    if m > k:
        av = a_t @ v
        du = du + (av - u @ (mH(u) @ av)) / s_col
    if n > k:
        ahu = mH(a_t) @ u
        dv = dv + (ahu - v @ (mH(v) @ ahu)) / s_col
    return _svd_pack(du, ds, mH(dv))


def svd_backward(grad, shape, result):
    o = _ops()
    m, n = shape[-2:]
    k = min(m, n)
    gu, gs, gvh = svd_unpack(grad, m, n)
    u, s, vh = svd_unpack(result, m, n)
    v = mH(vh)
    gv = mH(gvh)
    inner = o.diag_embed(gs)
    if u.dtype.kind == "c":
        inner = inner * (1 + 0j)
    if _is_zero(gu) and _is_zero(gv):
        return u @ inner @ vh
    uhgu = mH(u) @ gu
    vhgv = mH(v) @ gv
    if u.dtype.kind == "c":
        _gauge_check("linalg.svd", uhgu + vhgv)
    f = _gap_inverse(s * s)
    s_col = s.unsqueeze(-2)
    s_row = s.unsqueeze(-1)
    inner = inner + f * ((uhgu - mH(uhgu)) * s_col + s_row * (vhgv - mH(vhgv)))
    if u.dtype.kind == "c":
        inner = inner + o.diag_embed(_diag(uhgu).imag / s * 1j)
    ga = u @ inner @ vh
    if m > k:
        ga = ga + ((gu - u @ uhgu) / s_col) @ vh
    if n > k:
        ga = ga + u @ mH((gv - v @ vhgv) / s_col)
    return ga


def c_svdvals(a):
    """Singular values. When anything may differentiate them, they come from the packed SVD, as
    torch's do (its svdvals computes U and V then): the tape keeps the factors (fresh memory),
    not the input, so a later in-place write into the input is no error; the backward
    U diag(g) Vh skips the vector terms, so repeated values stay finite."""
    _need_matrix("linalg.svdvals", a)
    if _differentiated(a):
        return svd_unpack(_ops()._linalg_svd(a), *a.shape[-2:])[1].contiguous()  # as torch's
    return _ops()._linalg_svdvals(a)


# -- qr -------------------------------------------------------------------------------------------
def qr_unpack(packed, m, n):
    k = min(m, n)
    batch = packed.shape[:-1]
    q = packed.narrow(-1, 0, m * k).reshape(*batch, m, k)
    r = packed.narrow(-1, m * k, k * n).reshape(*batch, k, n)
    return q, r


def _qr_need_tall(m, n):
    if m < n:
        raise OpError(f"_linalg_qr: derivatives need m >= n (got {m}x{n}); linalg.qr handles wide inputs")


def qr_jvp(a_p, a_t, result):
    """A = QR (m >= n, diag(R) real): C = Q^H dA R^-1, Omega = skew part of C fixing diag(R) real,
    dR = (C - Omega) R, dQ = dA R^-1 - Q (C - Omega)."""
    o = _ops()
    m, n = a_p.shape[-2:]
    _qr_need_tall(m, n)
    q, r = qr_unpack(result, m, n)
    ar = o.linalg_solve_triangular(r, a_t, upper=True, left=False)
    c = mH(q) @ ar
    low = c.tril(-1)
    omega = low - mH(low)
    if c.dtype.kind == "c":
        omega = omega + o.diag_embed(_diag(c).imag * 1j)
    cr = c - omega
    return o.cat([_flat_last2(ar - q @ cr), _flat_last2(cr @ r)], -1)


def qr_backward(grad, shape, result):
    """gA = (gQ + Q N) R^-H, N = triu(M, 1) + tril(M^H, -1) + Re diag(M), M = gR R^H - Q^H gQ."""
    o = _ops()
    m, n = shape[-2:]
    _qr_need_tall(m, n)
    gq, gr = qr_unpack(grad, m, n)
    q, r = qr_unpack(result, m, n)
    mm = gr @ mH(r) - mH(q) @ gq
    d = _diag(mm)
    nn = mm.triu(1) + mH(mm).tril(-1) + o.diag_embed(d.real if d.dtype.kind == "c" else d)
    if q.dtype.kind == "c" and nn.dtype.kind != "c":
        nn = nn * (1 + 0j)
    return o.linalg_solve_triangular(mH(r), gq + q @ nn, upper=False, left=False)


# -- eig (general) --------------------------------------------------------------------------------
def eig_unpack(packed, n):
    lam = packed.narrow(-1, 0, n)
    vec = packed.narrow(-1, n, n * n).reshape(*packed.shape[:-1], n, n)
    return lam, vec


def eig_jvp(a_p, a_t, result):
    """dL = diag(V^-1 dA V); dV = V (F o V^-1 dA V), minus V Re diag(V^H dV) (unit-norm columns)."""
    o = _ops()
    n = a_p.shape[-1]
    lam, v = eig_unpack(result, n)
    x = o.linalg_solve(v, a_t @ v)
    dlam = _diag(x)
    dv = v @ (_gap_inverse(lam) * x)
    dv = dv - v * _diag(mH(v) @ dv).real.unsqueeze(-2)
    return o.cat([dlam, _flat_last2(dv)], -1)


def eig_backward(grad, shape, result):
    """torch's: gA = V^-H (diag(gL) + conj(F) o (V^H gV - V^H V Re diag(V^H gV))) V^H."""
    o = _ops()
    n = shape[-1]
    glam, gv = eig_unpack(grad, n)
    lam, v = eig_unpack(result, n)
    inner = o.diag_embed(glam)
    if not _is_zero(gv):
        vhgv = mH(v) @ gv
        _gauge_check("linalg.eig", vhgv)
        vhgv = vhgv - (mH(v) @ v) * _diag(vhgv).real.unsqueeze(-2)
        inner = inner + _gap_inverse(lam).conj() * vhgv
    return o.linalg_solve(mH(v), inner @ mH(v))


def c_eigvals(a):
    """Eigenvalues; from the packed eigendecomposition when anything may differentiate them (as
    torch's): the tape keeps the eigenvectors, not the input."""
    _need_matrix("linalg.eigvals", a, square=True)
    if _differentiated(a):
        return eig_unpack(_ops()._linalg_eig(a), a.shape[-1])[0].contiguous()  # as torch's
    return _ops()._linalg_eigvals(a)


# -- lu -------------------------------------------------------------------------------------------
def lu_unpack(packed, m, n):
    k = min(m, n)
    batch = packed.shape[:-1]
    p = packed.narrow(-1, 0, m * m).reshape(*batch, m, m)
    low = packed.narrow(-1, m * m, m * k).reshape(*batch, m, k)
    up = packed.narrow(-1, m * m + m * k, k * n).reshape(*batch, k, n)
    return p, low, up


def _lu_square_jvp(low, up, b):
    """A square block P^T dA = B: X = L^-1 B U^-1, dL = L tril(X, -1), dU = triu(X) U."""
    o = _ops()
    x = o.linalg_solve_triangular(low, b, upper=False, unitriangular=True)
    x = o.linalg_solve_triangular(up, x, upper=True, left=False)
    return low @ x.tril(-1), x.triu() @ up


def _lu_square_backward(low, up, gl, gu):
    """Adjoint of _lu_square_jvp: L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H."""
    o = _ops()
    inner = (mH(low) @ gl).tril(-1) + (gu @ mH(up)).triu()
    x = o.linalg_solve_triangular(mH(low), inner, upper=True, unitriangular=True)
    return o.linalg_solve_triangular(mH(up), x, upper=False, left=False)


def lu_jvp(a_p, a_t, result):
    """A = P L U, P constant. Square: see _lu_square_jvp. Tall (m > n): the top n rows as square,
    dL2 = (B2 - L2 dU) U^-1. Wide (m < n): the left m columns as square, dU2 = L^-1 (B2 - dL U2)."""
    o = _ops()
    m, n = a_p.shape[-2:]
    k = min(m, n)
    p, low, up = lu_unpack(result, m, n)
    b = p.mT @ a_t
    if m > n:
        l1, l2 = low.narrow(-2, 0, k), low.narrow(-2, k, m - k)
        dl1, du = _lu_square_jvp(l1, up, b.narrow(-2, 0, k))
        dl2 = o.linalg_solve_triangular(up, b.narrow(-2, k, m - k) - l2 @ du, upper=True, left=False)
        dl = o.cat([dl1, dl2], -2)
    elif m < n:
        u1, u2 = up.narrow(-1, 0, k), up.narrow(-1, k, n - k)
        dl, du1 = _lu_square_jvp(low, u1, b.narrow(-1, 0, k))
        du2 = o.linalg_solve_triangular(low, b.narrow(-1, k, n - k) - dl @ u2, upper=False, unitriangular=True)
        du = o.cat([du1, du2], -1)
    else:
        dl, du = _lu_square_jvp(low, up, b)
    return o.cat([_flat_last2(p * 0), _flat_last2(dl), _flat_last2(du)], -1)


def lu_backward(grad, shape, result):
    o = _ops()
    m, n = shape[-2:]
    k = min(m, n)
    _, gl, gu = lu_unpack(grad, m, n)
    p, low, up = lu_unpack(result, m, n)
    if m > n:
        l1, l2 = low.narrow(-2, 0, k), low.narrow(-2, k, m - k)
        gl2 = gl.narrow(-2, k, m - k)
        gb2 = o.linalg_solve_triangular(mH(up), gl2, upper=False, left=False)  # gL2 U^-H
        gb1 = _lu_square_backward(l1, up, gl.narrow(-2, 0, k), gu - mH(l2) @ gb2)
        gb = o.cat([gb1, gb2], -2)
    elif m < n:
        u1, u2 = up.narrow(-1, 0, k), up.narrow(-1, k, n - k)
        gu2 = gu.narrow(-1, k, n - k)
        gb2 = o.linalg_solve_triangular(mH(low), gu2, upper=True, unitriangular=True)  # L^-H gU2
        gb1 = _lu_square_backward(low, u1, gl - gb2 @ mH(u2), gu.narrow(-1, 0, k))
        gb = o.cat([gb1, gb2], -1)
    else:
        gb = _lu_square_backward(low, up, gl, gu)
    return p @ gb


# -- matrix functions -----------------------------------------------------------------------------
def matrix_exp_frechet(a, e):
    """The Frechet derivative L(A, E) of exp at A: the top-right block of exp([[A, E], [0, A]])."""
    o = _ops()
    n = a.shape[-1]
    batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(e.shape[:-2]))
    a = a.expand(*batch, n, n)
    e = e.expand(*batch, n, n)
    z = zeros(*batch, n, n, dtype=np.result_type(a.dtype, e.dtype))
    big = o.cat([o.cat([a, e], -1), o.cat([z, a], -1)], -2)
    return o.matrix_exp(big).narrow(-2, 0, n).narrow(-1, n, n)


def pinv_jvp(a_p, a_t, result):
    """dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P (constant rank)."""
    m, n = a_p.shape[-2:]
    p = result
    ph = mH(p)
    ath = mH(a_t)
    return -(p @ a_t @ p) + p @ (ph @ ath) @ (_eye_like(p, m) - a_p @ p) + (_eye_like(p, n) - p @ a_p) @ (ath @ ph) @ p


def pinv_backward(grad, a, result):
    m, n = a.shape[-2:]
    p = result
    ph = mH(p)
    gh = mH(grad)
    return -(ph @ grad @ ph) + (_eye_like(p, m) - a @ p) @ gh @ (p @ ph) + (ph @ p) @ gh @ (_eye_like(p, n) - p @ a)


# -- fft ------------------------------------------------------------------------------------------
def swap_norm(norm):
    """The norm of the adjoint transform: 'backward' <-> 'forward', 'ortho' stays."""
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def fft_resize(x, dims, sizes):
    """Crop or zero-pad x at the end of each dim in dims to the given sizes (torch.fft's n/s)."""
    o = _ops()
    for d, s in zip(dims, sizes):
        d = d % x.ndim
        cur = x.shape[d]
        if s < 1:
            raise OpError(f"fft: invalid number of data points ({s}) specified")
        if s < cur:
            x = x.narrow(d, 0, s)
        elif s > cur:
            shape = list(x.shape)
            shape[d] = s - cur
            x = o.cat([x, zeros(*shape, dtype=x.dtype)], d)
    return x


def fft_r2c_backward(grad, shape, dim, norm):
    """rfftn's adjoint: zero-pad the one-sided bins to the full length, inverse c2c, real part."""
    o = _ops()
    last = dim[-1] % len(shape)
    g = fft_resize(grad, [last], [shape[last]])
    return o._fft_c2c(g, dim, swap_norm(norm), False).real


def fft_c2r_backward(grad, shape, dim, norm, last_dim_size):
    """irfftn's adjoint: rfftn of grad (adjoint norm), bins counted twice in the Hermitian
    extension (all but DC and, for even sizes, Nyquist) doubled."""
    o = _ops()
    g = o._fft_r2c(grad, dim, swap_norm(norm))
    last = dim[-1] % len(shape)
    nb = g.shape[last]
    w = np.full(nb, 2.0)
    w[0] = 1.0
    if last_dim_size % 2 == 0:
        w[-1] = 1.0
    wshape = [1] * g.ndim
    wshape[last] = nb
    g = g * wrap(w.reshape(wshape).astype(np.finfo(g.dtype).dtype))
    return fft_resize(g, [last], [shape[last]])


# -- composites (public multi-output and convenience ops) ----------------------------------------------
_SLOGDET = namedtuple("slogdet", ["sign", "logabsdet"])
_EIGH = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_EIG = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
_SVD = namedtuple("linalg_svd", ["U", "S", "Vh"])
_QR = namedtuple("linalg_qr", ["Q", "R"])
_LU = namedtuple("linalg_lu", ["P", "L", "U"])
_LU_FACTOR = namedtuple("linalg_lu_factor", ["LU", "pivots"])
_LSTSQ = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _wrap(arr):
    return wrap(np.asarray(arr))


def _differentiated(t) -> bool:
    """Could anything differentiate t (a tape or a tangent)? Under vmap, its physical tensor's
    (grad inside or around vmap: the wrapper itself carries neither)."""
    t = unbatched(t)
    return bool((t._requires_grad and is_grad_enabled()) or t._fw is not None or t._st.dual)


def _need_matrix(name, a, square=False):
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        what = "a batch of square matrices" if square else "at least 2 dimensions"
        raise OpError(f"{name}: expected {what}, got shape {tuple(a.shape)}")


def c_slogdet(a):
    o = _ops()
    return _SLOGDET(o._slogdet_sign(a), o._slogdet_logabs(a))


def c_solve(a, b, left):
    o = _ops()
    _need_matrix("linalg.solve", a, square=True)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    if vector:
        b = b.unsqueeze(-1) if left else b.unsqueeze(-2)
    x = o._linalg_solve(a, b) if left else o._linalg_solve(a.mT, b.mT).mT
    if vector:
        x = x.squeeze(-1) if left else x.squeeze(-2)
    return x


def eye_like_matrix(a):
    return eye(a.shape[-1], dtype=a.dtype)


def c_cholesky_solve(b, factor, upper):
    o = _ops()
    _need_matrix("cholesky_solve", factor, square=True)
    if upper:  # A = U^H U
        y = o.linalg_solve_triangular(mH(factor), b, upper=False)
        return o.linalg_solve_triangular(factor, y, upper=True)
    y = o.linalg_solve_triangular(factor, b, upper=False)
    return o.linalg_solve_triangular(mH(factor), y, upper=True)


def _column_major(x):
    """x (differentiably) with each matrix laid out column-major, as torch's LAPACK-backed results
    (K.column_major, docs/design.md "Memory layout"): a view of the packed output would not be."""
    if type(x) is Tensor and (not isinstance(x._data, np.ndarray) or x._data.ndim < 2):
        return x  # (a Dask array has chunks, no memory layout)
    xt = x.mT
    return x if type(x) is Tensor and xt._data.flags.c_contiguous else xt.contiguous().mT


def c_eigh(a, UPLO):
    _need_matrix("linalg.eigh", a, square=True)
    lam, vec = eigh_unpack(_ops()._linalg_eigh(a, UPLO), a.shape[-1])
    return _EIGH(lam.contiguous(), _column_major(vec))  # values contiguous as torch's


def c_hermitian_from_triangle(a, UPLO):
    """The Hermitian matrix LAPACK reads from one triangle of a (UPLO 'L': the lower, 'U': the
    upper; the diagonal's real part), so that differentiating eigh of it differentiates with
    respect to that triangle only, as NumPy's eigh reads it: the other triangle does not matter."""
    o = _ops()
    if UPLO not in ("L", "U"):
        raise OpError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    _need_matrix("eigh", a, square=True)
    # (one select, where the triangle's copy, the Hermitian sum and the diagonal's took five passes
    # over the matrix: np.linalg.cholesky and eigh of a tensor run this on the value and the tangent)
    i = arange(a.shape[-1])
    read = i.unsqueeze(-1) > i if UPLO == "L" else i.unsqueeze(-1) < i  # (strictly inside the triangle)
    if a.dtype.kind != "c":
        return o.where(read | eye(a.shape[-1], dtype=bool), a, a.mT)
    h = o.where(read, a, mH(a))
    return (h + mH(h)) * 0.5  # (the diagonal's real part: (conj(d) + d) / 2; elsewhere exactly h)


def c_eig(a):
    _need_matrix("linalg.eig", a, square=True)
    lam, vec = eig_unpack(_ops()._linalg_eig(a), a.shape[-1])
    return _EIG(lam.contiguous(), _column_major(vec))  # values contiguous as torch's


def c_svd(a, full_matrices):
    """Reduced SVD from the differentiable primitive; with full_matrices the extra columns of U
    (rows of Vh) complete the bases and are constants for differentiation (torch ignores their
    gradients too: any orthonormal completion is valid)."""
    o = _ops()
    _need_matrix("linalg.svd", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vh = svd_unpack(o._linalg_svd(a), m, n)
    if full_matrices and m != n:
        uf, _, vhf = np.linalg.svd(a._data, full_matrices=True)
        if m > k:
            u = o.cat([u, _wrap(uf[..., :, k:])], -1)
        if n > k:
            vh = o.cat([vh, _wrap(vhf[..., k:, :])], -2)
    return _SVD(_column_major(u), s.contiguous(), _column_major(vh))  # values contiguous as torch's


def c_qr(a, mode):
    """Wide inputs (m < n): Q, R1 = qr(A[:, :m]) and R2 = Q^H A[:, m:], so one square
    primitive serves. mode='complete' with m > n extends Q by constant columns, which has no
    derivative (as in torch): differentiating it is an error."""
    o = _ops()
    _need_matrix("linalg.qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise OpError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    m, n = a.shape[-2:]
    if m >= n:
        q, r = qr_unpack(o._linalg_qr(a), m, n)
    else:
        q, r1 = qr_unpack(o._linalg_qr(a.narrow(-1, 0, m)), m, m)
        r = o.cat([r1, mH(q) @ a.narrow(-1, m, n - m)], -1)
    if mode == "complete" and m > n:
        if _differentiated(a):
            raise OpError(
                "linalg.qr: the QR decomposition is not differentiable when mode='complete' and "
                f"nrows > ncols (got {m}x{n})"
            )
        qc = np.linalg.qr(a._data, mode="complete")[0]
        q = o.cat([q, _wrap(qc[..., :, n:])], -1)
        r = o.cat([r, zeros(*a.shape[:-2], m - n, n, dtype=r.dtype)], -2)
    if mode == "r":
        return _QR(zeros(0, dtype=a.dtype), _column_major(r))
    return _QR(_column_major(q), _column_major(r))


def c_lu(a, pivot):
    _need_matrix("linalg.lu", a)
    if not pivot:
        raise NotImplementedError("linalg.lu: LU without pivoting is not implemented")
    m, n = a.shape[-2:]
    p, low, up = lu_unpack(_ops()._linalg_lu(a), m, n)
    # P, L and U contiguous as torch's (of a batch each is a strided slice of the packed result;
    # fuzzer: .view failed, first on P, then on U)
    return _LU(p.detach().contiguous(), low.contiguous(), up.contiguous())


@opaque  # (a Python loop over the permutation's values: one recorded call under pf.compile)
def _pivots_from_p(p):
    """LAPACK's 1-based row interchanges (ipiv) for a permutation matrix P with A = P L U."""
    m = p.shape[-2]
    if m == 0:
        return np.zeros(p.shape[:-2] + (0,), np.int32)
    perm = np.argmax(p, axis=-2)  # perm[..., i]: the row of A that is row i of L U
    flat = perm.reshape(-1, m)
    out = np.empty((flat.shape[0], m), np.int32)
    for b in range(flat.shape[0]):
        order = list(range(m))  # order[i]: the row of A now at position i
        where = {r: r for r in range(m)}
        for i in range(m):
            j = where[flat[b, i]]
            out[b, i] = j + 1
            order[i], order[j] = order[j], order[i]
            where[order[i]], where[order[j]] = i, j
    return out.reshape(perm.shape)


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_lu_factor(a, pivot):
    o = _ops()
    p, low, up = c_lu(a, pivot)
    m, n = a.shape[-2:]
    if m >= n:
        lu = low.tril(-1) + (o.cat([up, zeros(*up.shape[:-2], m - n, n, dtype=up.dtype)], -2) if m > n else up)
    else:
        lu = o.cat([low.tril(-1), zeros(*low.shape[:-2], m, n - m, dtype=low.dtype)], -1) + up
    piv = _pivots_from_p(p._data)[..., : min(m, n)]
    return _LU_FACTOR(lu, _wrap(piv))


def _perm_matrix(pivots, n, dtype):
    """P with A = P L U from LAPACK pivots (1-based)."""
    piv = np.asarray(pivots._data).astype(np.int64) - 1
    flat = piv.reshape(-1, piv.shape[-1])
    out = np.zeros((flat.shape[0], n, n), dtype)
    for b in range(flat.shape[0]):
        order = list(range(n))
        for i, j in enumerate(flat[b]):
            order[i], order[j] = order[j], order[i]
        out[b, order, range(n)] = 1  # row order[i] of A is row i of L U
    return _wrap(out.reshape(piv.shape[:-1] + (n, n)))


def c_lu_solve(lu, pivots, b, left, adjoint):
    o = _ops()
    _need_matrix("linalg.lu_solve", lu, square=True)
    n = lu.shape[-1]
    p = _perm_matrix(pivots, n, lu.dtype)
    if not left:  # X A = B  <=>  A^H X^H = B^H ;  X A^H = B  <=>  A X^H = B^H
        return mH(c_lu_solve(lu, pivots, mH(b), True, not adjoint))
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        y = o.linalg_solve_triangular(lu, p.mT @ b, upper=False, unitriangular=True)
        return o.linalg_solve_triangular(lu, y, upper=True)
    # A^H = U^H L^H P^T: X = P L^-H U^-H B
    y = o.linalg_solve_triangular(mH(lu), b, upper=False)
    return p @ o.linalg_solve_triangular(mH(lu), y, upper=True, unitriangular=True)


def c_matrix_power(a, n):
    o = _ops()
    _need_matrix("matrix_power", a, square=True)
    if not isinstance(n, (int, np.integer)):
        raise OpError(f"matrix_power: the exponent must be an integer, got {n!r}")
    if n == 0:
        return eye(a.shape[-1], dtype=a.dtype).expand(*a.shape) + a * 0
    if n < 0:
        a, n = o.inverse(a), -n
    result, base = None, a
    while n:  # binary powering
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _ops().clone(result) if result is a else result  # A^1 is a new tensor, as in torch


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_lstsq(a, b, rcond, driver):
    """solution = pinv(A) B (differentiable in A and B); residuals, rank and singular values are
    not differentiable. Follows torch's default driver 'gelsy': residuals when m > n and A has
    full rank, the rank, no singular values."""
    o = _ops()
    _need_matrix("linalg.lstsq", a)
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise OpError(f"linalg.lstsq: unknown driver {driver!r}")
    vector = b.ndim == a.ndim - 1
    bb = b.unsqueeze(-1) if vector else b
    if bb.shape[-2] != a.shape[-2]:
        raise OpError(f"linalg.lstsq: incompatible shapes of A {tuple(a.shape)} and B {tuple(b.shape)}")
    x = o.linalg_pinv(a, rtol=rcond) @ bb
    m, n = a.shape[-2:]
    rank = o.linalg_matrix_rank(a, rtol=rcond)
    if m > n and bool(np.all(rank._data == n)) and driver not in (None, "gelsy"):
        res = ((a @ x - bb).abs() ** 2).sum(-2)
    else:
        res = zeros(0, dtype=np.finfo(a.dtype).dtype)
    if driver in ("gelsd", "gelss"):
        sv = o.linalg_svdvals(a).detach()
    else:
        sv = zeros(0, dtype=np.finfo(a.dtype).dtype)
    if driver == "gels":
        rank = zeros(0, dtype=np.int64)
    return _LSTSQ(x.squeeze(-1) if vector else x, res, rank, sv)


def c_trace(x):
    if x.ndim != 2:
        raise OpError(f"trace: expected a matrix (2-D), got shape {tuple(x.shape)}")
    return x.diagonal().sum()


def c_diag(x, diagonal):
    o = _ops()
    if x.ndim == 1:
        return o.diag_embed(x, diagonal)
    if x.ndim == 2:
        return o.clone(x.diagonal(diagonal))
    raise OpError(f"diag: expected a 1-D or 2-D input, got shape {tuple(x.shape)}")


def c_tensordot(a, b, dims):
    if isinstance(dims, (int, np.integer)):
        if dims < 0 or dims > min(a.ndim, b.ndim):
            raise OpError(f"tensordot: dims must be in [0, {min(a.ndim, b.ndim)}], got {dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, (int, np.integer)) else list(d) for d in dims)
        da = [d % a.ndim for d in da]
        db = [d % b.ndim for d in db]
    if len(da) != len(db) or any(
        a.shape[i] != b.shape[j] and 1 not in (a.shape[i], b.shape[j]) for i, j in zip(da, db)
    ):
        raise OpError(
            f"tensordot: contracted dims {da} of shape {tuple(a.shape)} and {db} of {tuple(b.shape)} do not match"
        )
    for i, j in zip(da, db):
        # torch's rule: a contracted dim of size 1 on one side broadcasts, so the other side is
        # summed over it first (a fresh tensor, which is what the product's backward keeps;
        # fuzzer: inner of (1,)-vectors, then an in-place write into one of them)
        if b.shape[j] == 1:
            a = a.sum(i, keepdim=True)
        elif a.shape[i] == 1:
            b = b.sum(j, keepdim=True)
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da]))
    # explicit sizes: -1 cannot be inferred for empty operands
    am = a.permute(*(fa + da)).reshape(int(np.prod([a.shape[d] for d in fa])), k)
    bm = b.permute(*(db + fb)).reshape(k, int(np.prod([b.shape[d] for d in fb])))
    return (am @ bm).reshape(*[a.shape[d] for d in fa], *[b.shape[d] for d in fb])


def c_kron(a, b):
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    ia = [s for d in sa for s in (d, 1)]
    ib = [s for d in sb for s in (1, d)]
    # clones: the product must not keep views of the inputs (in-place writes to them stay legal)
    o = _ops()
    return (o.clone(a).reshape(*ia) * o.clone(b).reshape(*ib)).reshape(*[x * y for x, y in zip(sa, sb)])


def c_cross(a, b, dim):
    o = _ops()
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    d = dim % len(shape)
    if shape[d] != 3:
        raise OpError(
            f"linalg.cross: inputs must have size 3 along dim {dim} (shapes {tuple(a.shape)}, {tuple(b.shape)})"
        )
    a = a.expand(*shape)
    b = b.expand(*shape)
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    return o.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def c_multi_dot(tensors):
    ts = list(tensors)
    if len(ts) < 2:
        raise OpError(f"linalg.multi_dot: expected at least 2 tensors, got {len(ts)}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.ndim != 2:
            raise OpError(
                f"linalg.multi_dot: tensor {i} must be 2-D (1-D allowed first and last), got shape {tuple(t.shape)}"
            )
    out = ts[0]
    for t in ts[1:]:
        out = out @ t
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def c_matrix_norm(a, ord, dim, keepdim):
    o = _ops()
    _need_matrix("linalg.matrix_norm", a)
    d0, d1 = (d % a.ndim for d in dim)
    if d0 == d1:
        raise OpError(f"linalg.matrix_norm: dims must be different, got {tuple(dim)}")
    rest = [d for d in range(a.ndim) if d not in (d0, d1)]
    x = a.permute(*rest, d0, d1)
    if ord == "fro":
        r = o.norm(x, 2, (-2, -1))
    elif ord == "nuc":
        r = o.linalg_svdvals(x).sum(-1)
    elif ord in (2, -2):
        s = o.linalg_svdvals(x)
        r = o.amax(s, -1) if ord == 2 else o.amin(s, -1)
    elif ord in (1, -1, np.inf, -np.inf):
        sums = x.abs().sum(-2 if ord in (1, -1) else -1)
        r = o.amax(sums, -1) if ord > 0 else o.amin(sums, -1)
    else:
        raise OpError(f"linalg.matrix_norm: order {ord!r} not supported (use 'fro', 'nuc', 1, -1, 2, -2, inf, -inf)")
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def c_cond(a, p):
    o = _ops()
    _need_matrix("linalg.cond", a)
    if p is None or p in (2, -2):
        s = o.linalg_svdvals(a)
        hi, lo = s.narrow(-1, 0, 1).squeeze(-1), s.narrow(-1, s.shape[-1] - 1, 1).squeeze(-1)
        return lo / hi if p == -2 else hi / lo
    _need_matrix("linalg.cond", a, square=True)
    return c_matrix_norm(a, p, (-2, -1), False) * c_matrix_norm(o.inverse(a), p, (-2, -1), False)


def _fft_dims(x, s, dim):
    if dim is None:
        dims = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        dims = [d % max(x.ndim, 1) for d in ([dim] if isinstance(dim, (int, np.integer)) else dim)]
    if len(set(dims)) != len(dims):
        raise OpError(f"fft: dims must be unique, got {list(dim)}")
    if s is not None and len(s) != len(dims):
        raise OpError(f"fft: s ({list(s)}) and dim ({dims}) must have the same length")
    return dims, (list(s) if s is not None else [None] * len(dims))


def c_fft(x, s, dim, norm, kind):
    """torch.fft's transforms from the three primitives: crop/zero-pad to s, then transform."""
    o = _ops()
    if x.ndim == 0:
        raise OpError("fft: expected an input with at least one dimension (got a 0-d tensor)")
    if kind == "hfft":  # a Hermitian signal's DFT is the inverse real DFT of its conjugate
        return c_fft(x.conj(), s, dim, swap_norm(norm), "irfft")
    dims, sizes = _fft_dims(x, s, dim)
    if kind == "ihfft":  # torch's order: one-sided over the last dim, then inverse over the others
        half = c_fft(x, sizes[-1:], dims[-1:], swap_norm(norm), "rfft").conj()
        return half if len(dims) == 1 else c_fft(half, sizes[:-1], dims[:-1], norm, "ifft")
    if kind == "irfft":
        last = sizes[-1] if sizes[-1] is not None and sizes[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
        if last < 1:
            raise OpError(f"fft: invalid number of data points ({last}) specified")
        full = [x.shape[d] if n is None or n == -1 else n for d, n in zip(dims[:-1], sizes[:-1])]
        x = fft_resize(x, dims, full + [last // 2 + 1])
        return o._fft_c2r(x, dims, norm, last)
    x = fft_resize(x, dims, [x.shape[d] if n is None or n == -1 else n for d, n in zip(dims, sizes)])
    if kind == "rfft":
        return o._fft_r2c(x, dims, norm)
    return o._fft_c2c(x, dims, norm, kind == "fft")


def fft_shift(x, dim, inverse):
    o = _ops()
    dims = (
        list(range(x.ndim))
        if dim is None
        else [d % x.ndim for d in ([dim] if isinstance(dim, (int, np.integer)) else dim)]
    )
    shifts = [-(x.shape[d] // 2) if inverse else x.shape[d] // 2 for d in dims]
    return o.roll(x, shifts, dims)


# -- special functions ------------------------------------------------------------------------------
def bessel_ratio(x, i1x):
    """i1(x) / x (or i1e(x) / x), with its limit 1/2 at x = 0."""
    o = _ops()
    zero = x == 0
    return o.where(zero, 0.5, i1x / o.where(zero, 1.0, x))


def sinc_derivative(x, result):
    """d sinc / dx = (cos(pi x) - sinc(x)) / x, 0 at x = 0."""
    o = _ops()
    zero = x == 0
    return o.where(zero, 0.0, ((x * np.pi).cos() - result) / o.where(zero, 1.0, x))


def c_zeta(x, q):
    if isinstance(x, Tensor) and _differentiated(x):
        raise NotImplementedError(
            "special_zeta: the derivative with respect to x (the first argument) is not "
            "implemented (as in torch); only q is differentiable"
        )
    return _ops()._special_zeta(x, q)


def c_mvlgamma(a, p):
    o = _ops()
    if p < 1:
        raise OpError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    if bool(np.any(values_of(a) <= (p - 1) / 2)):  # (every batch element's, under vmap)
        raise OpError(f"mvlgamma: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    total = None
    for j in range(p):
        t = o.lgamma(a - j / 2)
        total = t if total is None else total + t
    return total + p * (p - 1) / 4 * float(np.log(np.pi))


def spherical_j0_derivative(x, result):
    """d/dx sin(x)/x = (cos x - j0(x)) / x, 0 at x = 0."""
    o = _ops()
    zero = x == 0
    return o.where(zero, 0.0, (x.cos() - result) / o.where(zero, 1.0, x))


def gammainc_density(a, x, upper):
    """d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a) (minus that for Q)."""
    d = ((a - 1) * x.log() - x - _ops().lgamma(a)).exp()
    return -d if upper else d


def betainc_density(a, b, x):
    """d/dx I_x(a, b) = x^(a-1) (1 - x)^(b-1) / B(a, b)."""
    o = _ops()
    return (o.xlogy(a - 1, x) + o.special_xlog1py(b - 1, -x) - o.special_betaln(a, b)).exp()


def expn_slope(n, x):
    """d/dx E_n(x) = -E_(n-1)(x); for n = 0 the same recurrence's E_(-1)(x) = exp(-x) (1 + x) / x^2,
    written out, since SciPy's expn is NaN for a negative order (the other branch's order is
    clamped so it stays finite: a NaN on the branch where does not take poisons its derivative)."""
    o = _ops()
    if not isinstance(n, Tensor):  # one order, a number
        return -o.special_expn(n - 1, x) if n > 0 else -((-x).exp() * (1 + x) / (x * x))
    below = o.special_expn((n - 1).clamp(min=0), x)
    return -o.where(n > 0, below, (-x).exp() * (1 + x) / (x * x))


def series_near(x, at, width, series, exact):
    """exact(x) away from `at`, series(x) within `width` of it, where exact is 0 / 0 or loses digits;
    exact's operand is moved away on the series' side, so no NaN reaches a derivative through where,
    and the series carries the higher derivatives at the point itself."""
    o = _ops()
    small = (x - at).abs() < width
    return o.where(small, series(x), exact(o.where(small, at + 0.5, x)))


def spence_slope(z):
    """d/dz spence(z) = log(z) / (1 - z) (spence(z) is the integral from 1 to z of log t / (1 - t)),
    near z = 1 the series of log(1 + u) / -u, u = z - 1."""
    return series_near(
        z, 1.0, 1e-3, lambda z: -(1 - (z - 1) / 2 + (z - 1) ** 2 / 3 - (z - 1) ** 3 / 4), lambda z: z.log() / (1 - z)
    )


def ellipk_slope(m):
    """d/dm K(m) = (E(m) - (1 - m) K(m)) / (2 m (1 - m)); near m = 0 the derivative of
    K(m) = pi/2 (1 + m/4 + 9 m^2/64 + 25 m^3/256 + 1225 m^4/16384 + ...)."""
    o = _ops()
    return series_near(
        m,
        0.0,
        1e-3,
        lambda m: float(np.pi / 2) * (1 / 4 + 9 / 32 * m + 75 / 256 * m**2 + 1225 / 4096 * m**3),
        lambda m: (o.special_ellipe(m) - (1 - m) * o.special_ellipk(m)) / (2 * m * (1 - m)),
    )


def ellipe_slope(m):
    """d/dm E(m) = (E(m) - K(m)) / (2 m); near m = 0 the derivative of
    E(m) = pi/2 (1 - m/4 - 3 m^2/64 - 5 m^3/256 - 175 m^4/16384 - ...)."""
    o = _ops()
    return series_near(
        m,
        0.0,
        1e-3,
        lambda m: float(-np.pi / 2) * (1 / 4 + 3 / 32 * m + 15 / 256 * m**2 + 175 / 4096 * m**3),
        lambda m: (o.special_ellipe(m) - o.special_ellipk(m)) / (2 * m),
    )


def c_gammainc(a, x, upper):
    if isinstance(a, Tensor) and _differentiated(a):
        raise NotImplementedError(
            "special_gammainc: the derivative with respect to a (the first argument) is not "
            "implemented (as in torch); only x is differentiable"
        )
    return _ops()._special_gammainc(a, x, upper)


# -- BLAS-style products and tensor solves -----------------------------------------------------------
def c_inner(a, b):
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return c_tensordot(a, b, ([-1], [-1]))


def add_product(self, prod, beta, alpha):
    """beta * self + alpha * prod; with beta == 0 self is ignored (nan and inf too), as torch."""
    if beta == 0:
        shape = np.broadcast_shapes(tuple(self.shape), tuple(prod.shape))
        return scale(prod, alpha) + zeros(*shape, dtype=prod.dtype)
    return scale(self, beta) + scale(prod, alpha)


def c_vander(x, n):
    if x.ndim == 0:
        raise OpError("linalg.vander: expected an input with at least one dimension")
    n = x.shape[-1] if n is None else n
    if n < 0:
        raise OpError(f"linalg.vander: N must be non-negative, got {n}")
    if n <= 1:
        return x.unsqueeze(-1) ** arange(n, dtype=x.dtype)
    # successive products, as torch's cumprod, not x ** k: exact derivatives of every order where x
    # is 0 (k x^(k-1) at k = 0 would be 0 * inf), in both modes and in Taylor mode
    cols = [ones_like(x), x]
    for _ in range(2, n):
        cols.append(cols[-1] * x)
    return _ops().stack(cols, -1)


def c_tensorinv(a, ind):
    o = _ops()
    if ind <= 0:
        raise OpError(f"linalg.tensorinv: ind must be a positive integer, got {ind}")
    out_shape, in_shape = tuple(a.shape[ind:]), tuple(a.shape[:ind])
    p, q = int(np.prod(in_shape)), int(np.prod(out_shape))
    if p != q:
        raise OpError(
            f"linalg.tensorinv: prod(shape[:ind]) = {p} must equal prod(shape[ind:]) = {q} "
            f"(shape {tuple(a.shape)}, ind={ind})"
        )
    return o.inverse(a.reshape(p, q)).reshape(*out_shape, *in_shape)


def c_tensorsolve(a, b, dims):
    o = _ops()
    if dims is not None:
        dims = [d % a.ndim for d in dims]
        a = a.permute(*[d for d in range(a.ndim) if d not in dims], *dims)
    x_shape = tuple(a.shape[b.ndim :])
    if tuple(a.shape[: b.ndim]) != tuple(b.shape) or int(np.prod(x_shape)) != b.numel():
        raise OpError(f"linalg.tensorsolve: A of shape {tuple(a.shape)} does not match B of shape {tuple(b.shape)}")
    return o.linalg_solve(a.reshape(b.numel(), -1), b.reshape(-1)).reshape(*x_shape)


# -- torch's older top-level names ----------------------------------------------------------------------
_SVD_LEGACY = namedtuple("svd", ["U", "S", "V"])
_QR_LEGACY = namedtuple("qr", ["Q", "R"])
_LU_UNPACK = namedtuple("lu_unpack", ["P", "L", "U"])
_TRI_SOLVE = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def first_dim_of_size3(a, b):
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    for d, n in enumerate(shape):
        if n == 3:
            return d
    raise OpError(f"cross: no dimension of size 3 in input (shapes {tuple(a.shape)}, {tuple(b.shape)})")


def svd_legacy(a, some, compute_uv):
    o = _ops()
    u, s, vh = o.linalg_svd(a, full_matrices=not some)
    if not compute_uv:  # torch: zero-filled U (m x m) and V (n x n)
        m, n = a.shape[-2:]
        return _SVD_LEGACY(zeros(*a.shape[:-2], m, m, dtype=a.dtype), s, zeros(*a.shape[:-2], n, n, dtype=a.dtype))
    return _SVD_LEGACY(u, s, mH(vh))


def c_lu_unpack(lu, pivots, unpack_data, unpack_pivots):
    m, n = lu.shape[-2:]
    k = min(m, n)
    if unpack_data:
        low = lu.narrow(-1, 0, k).tril(-1) + eye(m, k, dtype=lu.dtype)
        up = lu.narrow(-2, 0, k).triu()
    else:
        low, up = zeros(0, dtype=lu.dtype), zeros(0, dtype=lu.dtype)
    p = _perm_matrix(pivots, m, lu.dtype) if unpack_pivots else zeros(0, dtype=lu.dtype)
    return _LU_UNPACK(p, low, up)


def c_triangular_solve(b, a, upper, transpose, unitriangular):
    o = _ops()
    coef = a.mT if transpose else a
    x = o.linalg_solve_triangular(coef, b, upper=upper != transpose, unitriangular=unitriangular)
    batch = np.broadcast_shapes(tuple(b.shape[:-2]), tuple(a.shape[:-2]))
    return _TRI_SOLVE(x, o.clone(a.expand(*batch, *a.shape[-2:])))  # torch broadcasts the copy too


# -- matmul ---------------------------------------------------------------------------------------
_PRIMITIVE_MATMUL = []  # ops.generated._matmul, looked up once (matmul is hot; a lookup per call costs)


def c_matmul(a, b):
    """a @ b. torch's kernel reshapes or expands an operand into memory of its own in some cases,
    and its backward then reads that copy, so a later in-place write into the operand is no error;
    the tape here keeps a copy in the same cases (see _matmul_operands_to_keep). Otherwise the tape
    keeps the operands."""
    if not _PRIMITIVE_MATMUL:
        _PRIMITIVE_MATMUL.append(_ops()._matmul)
    # (an operand may be an ndarray or a scalar: NumPy's @ on a Tensor comes here; _matmul converts it)
    if getattr(a, "_requires_grad", False) or getattr(b, "_requires_grad", False):
        if _numel(a) == 0 or _numel(b) == 0:
            # an empty operand: torch's kernel keeps nothing that a later in-place write could change
            # (fuzzer: inner and sdpa with an empty dim); empty copies cost nothing
            a, b = _copy(a), _copy(b)
        elif np.ndim(a) >= 3 or np.ndim(b) >= 3:
            a, b = _matmul_operands_to_keep(a, b)
    return _PRIMITIVE_MATMUL[0](a, b)


def _numel(x) -> int:
    return x.numel() if isinstance(x, Tensor) else int(np.size(x))


def _copy(x):
    """A differentiable copy of a Tensor operand; an ndarray or scalar operand as it is (nothing can
    write into it through the tape)."""
    return x.clone() if isinstance(x, Tensor) else x


def _flattens_to_view(x, dims, shape: tuple | None = None) -> bool:
    """Whether x (broadcast to `shape`, when given) has its dims `dims`, in this order, merge into a
    view. A NumPy operand counts as one: nothing writes into it through the tape. Under vmap the
    layout is the physical tensor's, not the example's: there a broadcast operand counts as a copy,
    any other as a view."""
    if not isinstance(x, Tensor):
        return True
    if isinstance(x, BatchedTensor):
        return shape is None or tuple(x.shape) == tuple(shape)
    if type(x._data) is not np.ndarray and is_lazy_array(x._data):  # a Dask array: no layout to follow
        return False
    arr = x._data if shape is None else np.broadcast_to(x._data, shape)
    return merges_to_view([arr.shape[d] for d in dims], [arr.strides[d] for d in dims])


def _matrix_like(x, other) -> bool:
    """A vector, a matrix, or a batch of one matrix times another 3-D batch: torch's matmul treats
    the last as a matrix (as found by comparing the graphs; a 4-D batch of one it does not)."""
    return x.ndim <= 2 or (x.ndim == 3 and other.ndim == 3 and x.shape[0] == 1)


def _matmul_operands_to_keep(a, b):
    """The operands as torch's matmul keeps them for backward: a copy where its kernel reshapes an
    operand (broadcast to the common batch) whose dims do not merge into a view. Compared with
    torch's graph (grad_fn._saved_self / _saved_mat2) over layouts and shapes; fuzzer: rfft over
    dim 0, .imag, @ a vector, then .diagonal().neg_() on the operand."""
    if not is_grad_enabled() or np.ndim(a) == 0 or np.ndim(b) == 0:
        return a, b
    a_matrix, b_matrix = _matrix_like(a, b), _matrix_like(b, a)
    if a_matrix and b_matrix:  # mm, mv or dot on views of the operands
        return a, b
    if b_matrix:  # a's batch folds into its rows when b requires grad
        if getattr(b, "_requires_grad", False) and not _flattens_to_view(a, range(a.ndim - 1)):
            a = _copy(a)
        return a, b
    if a_matrix:  # b's batch folds into its columns (b.mT) when a requires grad
        # (b.mT's leading dims: b's batch, then its last dim)
        if getattr(a, "_requires_grad", False) and not _flattens_to_view(b, [*range(b.ndim - 2), b.ndim - 1]):
            b = _copy(b)
        return a, b
    try:
        batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:  # the primitive names the shapes
        return a, b
    # bmm: each operand broadcast to the common batch, which is flattened into one dim
    if not _flattens_to_view(a, range(len(batch)), batch + tuple(a.shape[-2:])):
        a = _copy(a)
    if not _flattens_to_view(b, range(len(batch)), batch + tuple(b.shape[-2:])):
        b = _copy(b)
    return a, b
