"""NumPy/SciPy kernels of the linear-algebra, FFT and special-function ops.

Matrix kernels are batched over leading dims (NumPy's linalg broadcasting). Factorisations
with several outputs return one flat *packed* array per matrix (the outputs' entries, one
after the other, in the output dtype): one op, one factorisation, one backward formula that
sees the gradients of every output. `formulas_linalg` unpacks them with views.

Errors say what is wrong (shapes, dtypes, singular input); dispatch prefixes the op's name
and its inputs' shapes.
"""

from __future__ import annotations

from ..core.backend import in_dim_order, opaque, sla, sp, xp, zeros_for
from ..core.lazy import as_array, is_lazy_array, unsupported
from ..errors import OpError

__all__ = [
    "blockwise",
    "column_major",
    "inverse",
    "det",
    "logdet",
    "slogdet_sign",
    "slogdet_logabs",
    "solve",
    "solve_triangular",
    "cholesky",
    "eigh_packed",
    "eigvalsh",
    "svd_packed",
    "svdvals",
    "qr_packed",
    "eig_packed",
    "eigvals",
    "matrix_exp",
    "pinv",
    "matrix_rank",
    "diag_embed",
    "lu_packed",
    "fft_c2c",
    "fft_r2c",
    "fft_c2r",
    "spherical_bessel_j0",
    "airy_ai",
    "airy_ai_prime",
    "gammainc",
    "gammaincinv",
    "hurwitz_zeta_complex",
]


# -- checks -----------------------------------------------------------------------------------------
def _float(a, what="input"):
    if a.dtype.kind not in "fc":
        raise OpError(f"expected a floating point or complex {what}, got dtype {a.dtype}")


def _matrix(a, what="input"):
    _float(a, what)
    if a.ndim < 2:
        raise OpError(f"the {what} must have at least 2 dimensions (got shape {a.shape})")


def _square(a, what="input"):
    _matrix(a, what)
    if a.shape[-1] != a.shape[-2]:
        raise OpError(f"the {what} must be a batch of square matrices, but got shape {a.shape}")


def _singular_error(e):
    return OpError(f"the input is singular or not invertible ({e})")


def _c(dtype):
    return xp.result_type(dtype, xp.complex64)


# -- inverse, determinants, solves -----------------------------------------------------------------


def column_major(a):
    """a with each matrix laid out column-major, the batch dims outermost: the layout LAPACK, and so
    torch, give the results of inverse, solve, solve_triangular and cholesky. A later reshape of
    the result is then a view or a copy as in torch (docs/design.md, "Memory layout").

    >>> import numpy as np
    >>> column_major(np.ones((2, 3, 3))).strides  # (per matrix: columns contiguous)
    (72, 8, 24)
    """
    if is_lazy_array(a) or a.ndim < 2:
        return a  # (a Dask array has chunks, no memory layout)
    if xp.swapaxes(a, -1, -2).flags.c_contiguous:
        return a
    return in_dim_order(a, [*range(a.ndim - 2), a.ndim - 1, a.ndim - 2])


def inverse(a):
    _square(a)
    try:
        return column_major(xp.linalg.inv(a))
    except xp.linalg.LinAlgError as e:
        raise _singular_error(e) from None


def det(a):
    _square(a)
    return xp.linalg.det(a)


def logdet(a):
    _square(a)
    sign, logabs = xp.linalg.slogdet(a)
    if a.dtype.kind == "c":
        return xp.log(sign) + logabs
    with xp.errstate(invalid="ignore", divide="ignore"):
        return xp.where(sign < 0, xp.nan, xp.where(sign == 0, -xp.inf, logabs)).astype(a.dtype)


def slogdet_sign(a):
    _square(a)
    return xp.linalg.slogdet(a)[0]


def slogdet_logabs(a):
    _square(a)
    return xp.linalg.slogdet(a)[1]


def solve(a, b):
    """A X = B for matrices B (..., n, k); batch dims broadcast."""
    _square(a, "coefficient matrix A")
    _matrix(b, "right-hand side B")
    if b.shape[-2] != a.shape[-1]:
        raise OpError(f"incompatible shapes: A is {a.shape}, B is {b.shape} (B.shape[-2] must be {a.shape[-1]})")
    if is_lazy_array(a) or is_lazy_array(b):
        a, b = _lazy_matrix(a, "solve"), _whole(b, (0, 1)) if b.ndim == 2 else b
    try:
        return column_major(xp.linalg.solve(a, b))
    except xp.linalg.LinAlgError as e:
        raise _singular_error(e) from None


def solve_triangular(a, b, upper, left=True, unitriangular=False):
    _square(a, "triangular matrix A")
    _matrix(b, "right-hand side B")
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise OpError(f"incompatible shapes: A is {a.shape}, B is {b.shape} (left={left})")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        x = solve_triangular(xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), not upper, True, unitriangular)
        return column_major(xp.swapaxes(x, -1, -2))
    t = xp.triu(a) if upper else xp.tril(a)
    if unitriangular:
        eye = xp.eye(n, dtype=t.dtype)
        t = t - xp.diagonal(t, 0, -2, -1)[..., None] * eye + eye
    if xp.any(xp.diagonal(t, 0, -2, -1) == 0):
        raise OpError("the triangular matrix is singular (a zero on its diagonal)")
    return column_major(_substitution(t, b, not upper))


@opaque  # (SciPy/LAPACK calls the tracer cannot follow: one recorded call)
def _substitution(t, b, lower: bool):
    """Forward/back substitution (LAPACK's trtrs), matrix by matrix: an LU solve of the triangle
    pivots and leaves rounding where substitution gives exact zeros as torch's (fuzzer: qr of
    solve_triangular(x, x) then picked the other Householder sign)."""
    dt = xp.result_type(t.dtype, b.dtype)
    if dt.kind not in "fc":
        dt = xp.dtype(xp.float64)
    batch = xp.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    out = xp.zeros(batch + b.shape[-2:], dtype=dt)
    if out.size == 0:
        return out
    tb = xp.broadcast_to(t.astype(dt, copy=False), batch + t.shape[-2:])
    bb = xp.broadcast_to(b.astype(dt, copy=False), batch + b.shape[-2:])
    for i in xp.ndindex(*batch):
        out[i] = sla.solve_triangular(tb[i], bb[i], lower=lower, check_finite=False)
    return out


def cholesky(a, upper=False):
    _square(a)
    if is_lazy_array(a):
        import dask.array as da

        # (np.linalg.cholesky would dispatch to Dask's, whose default factor is the upper one)
        low = da.linalg.cholesky(_lazy_matrix(a, "cholesky"), lower=True)
        return xp.swapaxes(low, -1, -2).conj() if upper else low
    try:
        low = xp.linalg.cholesky(a)
    except xp.linalg.LinAlgError:
        raise OpError("the input is not positive-definite (Cholesky factorisation failed)") from None
    return column_major(xp.swapaxes(low, -1, -2).conj() if upper else low)


# -- factorisations (packed) ----------------------------------------------------------------------
def _pack(parts, dtype, batch):
    nb = len(batch)
    flat = [as_array(p, dtype=dtype).reshape(batch + (int(xp.prod(p.shape[nb:])),)) for p in parts]
    return xp.concatenate(flat, axis=-1)


def eigh_packed(a, UPLO="L"):
    """[eigenvalues (n), eigenvectors (n*n, row-major)] per matrix."""
    _square(a)
    if UPLO not in ("L", "U"):
        raise OpError(f"UPLO must be 'L' or 'U', got {UPLO!r}")
    w, v = xp.linalg.eigh(a, UPLO)
    return _pack([w, v], v.dtype, a.shape[:-2])


def eigvalsh(a, UPLO="L"):
    _square(a)
    if UPLO not in ("L", "U"):
        raise OpError(f"UPLO must be 'L' or 'U', got {UPLO!r}")
    return xp.linalg.eigvalsh(a, UPLO)


def svd_packed(a):
    """[U (m*k), S (k), Vh (k*n)] per matrix, reduced SVD (k = min(m, n))."""
    _matrix(a)
    if is_lazy_array(a):
        u, s, vh = xp.linalg.svd(_lazy_matrix(a, "svd"))  # (Dask's is the reduced SVD)
        return _pack([u, s, vh], u.dtype, a.shape[:-2])
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    return _pack([u, s, vh], u.dtype, a.shape[:-2])


def svdvals(a):
    _matrix(a)
    if is_lazy_array(a):
        return xp.linalg.svd(_lazy_matrix(a, "svdvals"))[1]
    return xp.linalg.svd(a, compute_uv=False)


def qr_packed(a):
    """[Q (m*k), R (k*n)] per matrix, reduced QR."""
    _matrix(a)
    # + 0.0 turns -0.0 into +0.0: the Householder sign of a zero pivot follows the zero's sign bit in
    # OpenBLAS's LAPACK but not in torch's (MKL), so a column starting with -0.0 gave Q and R with
    # the opposite signs from torch's (fuzzer: qr after relu and neg). Both are valid QR; one convention.
    if is_lazy_array(a):
        q, r = xp.linalg.qr(_lazy_matrix(a, "qr") + 0.0)  # (Dask's is the reduced QR)
        return _pack([q, r], q.dtype, a.shape[:-2])
    q, r = xp.linalg.qr(a + 0.0, mode="reduced")
    return _pack([q, r], q.dtype, a.shape[:-2])


@opaque  # (np.linalg.eig makes its results with array methods the tracer does not record)
def eig_packed(a):
    """[eigenvalues (n), eigenvectors (n*n)] per matrix, always complex (torch's convention)."""
    _square(a)
    w, v = xp.linalg.eig(a)
    return _pack([w, v], _c(a.dtype), a.shape[:-2])


@opaque  # (np.linalg.eig makes its results with array methods the tracer does not record)
def eigvals(a):
    _square(a)
    return xp.linalg.eigvals(a).astype(_c(a.dtype))


@opaque  # (SciPy/LAPACK calls the tracer cannot follow: one recorded call)
def lu_packed(a):
    """[P (m*m), L (m*k), U (k*n)] per matrix (A = P L U, partial pivoting)."""
    _matrix(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    a2 = a.reshape((int(xp.prod(batch)), m, n))
    p = xp.empty((a2.shape[0], m, m), a.dtype)
    low = xp.empty((a2.shape[0], m, k), a.dtype)
    up = xp.empty((a2.shape[0], k, n), a.dtype)
    for i in range(a2.shape[0] if k else 0):
        p[i], low[i], up[i] = sla.lu(a2[i], check_finite=False)
    if not k:  # no pivots: P is the identity
        p[:] = xp.eye(m, dtype=a.dtype)
    return _pack([p.reshape(batch + (m, m)), low.reshape(batch + (m, k)), up.reshape(batch + (k, n))], a.dtype, batch)


@opaque  # (SciPy/LAPACK calls the tracer cannot follow: one recorded call)
def matrix_exp(a):
    _square(a)
    if a.shape[-1] == 0 or a.size == 0:
        return a.copy()
    return as_array(sla.expm(a), dtype=a.dtype)


def _rank_tol(s, a, atol, rtol):
    """torch's cut-off: max(atol, rtol * largest singular value); rtol = eps * max(m, n) by default."""
    if atol is None and rtol is None:
        rtol = xp.finfo(a.dtype).eps * max(a.shape[-2:])
    smax = s.max(-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), s.dtype)
    # a tolerance per matrix (an array over the batch) compares with that matrix's singular values
    atol, rtol = (xp.asarray(0.0 if t is None else t)[..., None] for t in (atol, rtol))
    return xp.maximum(atol, rtol * smax)


def pinv(a, atol=None, rtol=None, hermitian=False):
    _matrix(a)
    if hermitian:
        _square(a)
        w, v = xp.linalg.eigh(a)
        tol = _rank_tol(xp.abs(w), a, atol, rtol)
        with xp.errstate(divide="ignore"):
            inv = xp.where(xp.abs(w) > tol, 1.0 / xp.where(w == 0, 1.0, w), 0.0)
        return as_array((v * inv[..., None, :]) @ xp.swapaxes(v, -1, -2).conj(), dtype=a.dtype)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    tol = _rank_tol(s, a, atol, rtol)
    with xp.errstate(divide="ignore"):
        inv = xp.where(s > tol, 1.0 / xp.where(s == 0, 1.0, s), 0.0)
    return as_array(xp.swapaxes(vh, -1, -2).conj() @ (inv[..., :, None] * xp.swapaxes(u, -1, -2).conj()), dtype=a.dtype)


def matrix_rank(a, atol=None, rtol=None, hermitian=False):
    _matrix(a)
    s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
    return (s > _rank_tol(s, a, atol, rtol)).sum(-1).astype(xp.int64)


def diag_embed(a, offset=0, dim1=-2, dim2=-1):
    n = a.shape[-1] + abs(offset)
    nd = a.ndim + 1
    d1, d2 = dim1 % nd, dim2 % nd
    if d1 == d2:
        raise OpError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    idx = xp.arange(a.shape[-1])
    r, c = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    if is_lazy_array(a):  # no writes into a Dask array: a_i placed at (r_i, c_i) by two selections
        rows, cols = xp.zeros((len(idx), n), a.dtype), xp.zeros((len(idx), n), a.dtype)
        rows[idx, r] = 1
        cols[idx, c] = 1
        out = xp.einsum("...i,ir,ic->...rc", a, rows, cols)
    else:
        out = zeros_for(a, a.shape[:-1] + (n, n))
        xp.add.at(out, (Ellipsis, r, c), a)  # (into zeros: a write pf.compile's tracer records)
    # out has the new dims last; move them to (d1, d2)
    rest = [i for i in range(nd) if i not in (d1, d2)]
    order = [0] * nd
    for src, dst in enumerate(rest + [d1, d2]):
        order[dst] = src
    out = xp.transpose(out, order)
    return out if is_lazy_array(out) else xp.ascontiguousarray(out)


def _whole(a, dims):
    """a with each of `dims` in one chunk when it is a Dask array (Dask transforms, factorises and
    solves along a dim only when it is not split: the other dims keep their chunks)."""
    if not is_lazy_array(a):
        return a
    return a.rechunk({d % a.ndim: -1 for d in dims})


def _lazy_matrix(a, name: str):
    """A Dask matrix in one chunk for dask.array.linalg, which factorises 2-d arrays only."""
    if a.ndim != 2:
        raise unsupported(f"{name} of a {a.ndim}-d tensor", "dask.array.linalg has 2-d routines only")
    return _whole(a, (0, 1))


# -- FFT ------------------------------------------------------------------------------------------------
def _norm(norm):
    if norm not in (None, "backward", "forward", "ortho"):
        raise OpError(f"Invalid normalization mode: {norm!r} (expected None, 'backward', 'forward' or 'ortho')")
    return norm


def _torch_layout(out, order, dim, keep_last_dim: bool):
    """`out` laid out in memory as torch's FFTs lay out theirs: the dims not transformed outermost,
    then the transformed ones (each group in the input's memory order; for real transforms the
    halved/restored dim innermost). The layout decides which later reshapes are views, so whether
    a later in-place write into the result invalidates a saved tensor depends on it (fuzzer: rfft
    over dim 0, then matmul's fold kept a view where torch keeps a copy). `order`: the input's dims
    in memory order, outermost first (_input_order)."""
    if is_lazy_array(out):
        return out  # a Dask array has chunks, no memory layout
    nd = out.ndim
    moved = {d % nd for d in dim}
    inner = [dim[-1] % nd] if keep_last_dim else []
    perm = [d for d in order if d not in moved] + [d for d in order if d in moved and d not in inner] + inner
    if perm == list(range(nd)):
        return xp.ascontiguousarray(out)
    return in_dim_order(out, perm)


def _input_order(a, promoted: bool = False) -> list:
    """a's dims in memory order, outermost first, as torch's transforms see them. `promoted`: a
    complex transform converts a real input to complex first, which keeps a dense layout and makes
    an overlapping (expanded) one contiguous (fuzzer: ifft2 of a broadcast real vector, then .view)."""
    if is_lazy_array(a) or (promoted and a.dtype.kind != "c" and not _dense(a)):
        return list(range(a.ndim))
    return sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))


def _dense(a) -> bool:
    """Non-overlapping and dense: some order of the dims walks the memory without gaps."""
    size = a.itemsize
    for d in sorted(range(a.ndim), key=lambda d: abs(a.strides[d])):
        if a.shape[d] != 1:
            if abs(a.strides[d]) != size:
                return False
            size *= a.shape[d]
    return True


def fft_c2c(a, dim, norm=None, forward=True):
    """Complex-to-complex transform over dims (no resizing)."""
    _float(a)
    f = xp.fft.fftn if forward else xp.fft.ifftn
    out = f(_whole(a, dim), axes=tuple(dim), norm=_norm(norm))
    return _torch_layout(out.astype(_c(a.dtype), copy=False), _input_order(a, True), tuple(dim), False)


def fft_r2c(a, dim, norm=None):
    """Real-to-complex (one-sided) transform over dims, the last halved."""
    if a.dtype.kind != "f":
        raise OpError(f"expected a real floating input, got dtype {a.dtype}")
    out = xp.fft.rfftn(_whole(a, dim), axes=tuple(dim), norm=_norm(norm)).astype(_c(a.dtype), copy=False)
    return _torch_layout(out, _input_order(a), tuple(dim), True)


def fft_c2r(a, dim, norm=None, last_dim_size=None):
    """Complex (one-sided, Hermitian) to real: inverse of fft_r2c; the last dim gives `last_dim_size`."""
    _float(a)
    dim = tuple(dim)
    s = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = xp.fft.irfftn(_whole(a, dim), s=s, axes=dim, norm=_norm(norm))
    real = xp.finfo(a.dtype).dtype if a.dtype.kind in "fc" else xp.float64
    return _torch_layout(out.astype(real, copy=False), _input_order(a, True), dim, True)


# -- special functions without a bare SciPy function ---------------------------------------------
def blockwise(fn, n, a):
    """fn(n, a) for an element-wise SciPy function that is not a ufunc (it would convert a Dask
    array to NumPy): on each chunk of a Dask array."""
    if is_lazy_array(a):
        return a.map_blocks(lambda b: fn(n, b), dtype=fn(n, xp.zeros((), a.dtype)).dtype)
    return fn(n, a)


def spherical_bessel_j0(a):
    return blockwise(sp.spherical_jn, 0, a)


def airy_ai(a):
    return sp.airy(a)[0]


def airy_ai_prime(a):
    return sp.airy(a)[1]


def gammainc(a, x, upper=False):
    return sp.gammaincc(a, x) if upper else sp.gammainc(a, x)


def gammaincinv(a, y, upper=False):
    return sp.gammainccinv(a, y) if upper else sp.gammaincinv(a, y)


# Bernoulli numbers B_2, B_4, ..., B_20 (Euler-Maclaurin tail of the Hurwitz zeta function)
_BERNOULLI_EVEN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)


def hurwitz_zeta_complex(s: int, z):
    """zeta(s, z) = sum_k (z + k)^-s for an integer s >= 2 and complex z (SciPy's zeta is real only):
    the first terms summed until Re(z + N) >= 20, then the Euler-Maclaurin expansion
    w^(1-s)/(s-1) + w^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1) w^(-s-2j+1), accurate to ~1e-15."""
    z = as_array(z)
    out = xp.zeros(z.shape, xp.result_type(z.dtype, xp.complex64))
    lo = float(xp.min(z.real)) if z.size else 20.0
    shift = int(max(0.0, xp.ceil(20.0 - lo)))
    with xp.errstate(divide="ignore", invalid="ignore"):
        for k in range(shift):
            out += (z + k) ** (-s)
        w = z + shift
        acc = w ** (1 - s) / (s - 1) + 0.5 * w ** (-s)
        rising, fact, wp, w2 = float(s), 2.0, w ** (-s - 1), w**-2
        for j, b in enumerate(_BERNOULLI_EVEN, start=1):
            acc = acc + b / fact * rising * wp
            rising *= (s + 2 * j - 1) * (s + 2 * j)
            fact *= (2 * j + 1) * (2 * j + 2)
            wp = wp * w2
    return (out + acc).astype(out.dtype, copy=False)
