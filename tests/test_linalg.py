"""Linear algebra: values against torch on the op-database samples, the decided
hard cases (degenerate spectra, gauge, singular det, qr complete, pinv, svd full_matrices)
and error messages. Derivatives are checked by the op database (test_ops.py)."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from helpers import close, needs_torch, tangent, torch
from pushforward.errors import OpError
from pushforward.testing.opdb import OPS  # noqa: F401 - builds the database (imports opdb_linalg)
from pushforward.testing import opdb_linalg as L
from pushforward.testing.opdb import check_op
from pushforward.ops.formulas import linalg as FL

# op-database name -> the torch call taking the same sample arguments
TORCH = {
    "inverse": lambda a: torch.linalg.inv(a),
    "det": lambda a: torch.linalg.det(a),
    "logdet": lambda a: torch.logdet(a),
    "slogdet": lambda a: tuple(torch.linalg.slogdet(a)),
    "_slogdet_sign": lambda a: torch.linalg.slogdet(a).sign,
    "_slogdet_logabs": lambda a: torch.linalg.slogdet(a).logabsdet,
    "_linalg_solve": lambda a, b: torch.linalg.solve(a, b),
    "linalg_solve": lambda a, b, left=True: torch.linalg.solve(a, b, left=left),
    "linalg_solve_triangular": lambda a, b, **kw: torch.linalg.solve_triangular(a, b, **kw),
    "linalg_cholesky": lambda a, upper=False: torch.linalg.cholesky((a + a.mH) / 2, upper=upper),
    "cholesky_solve": lambda b, f, upper=False: torch.cholesky_solve(b, f, upper),
    "cholesky_inverse": lambda f, upper=False: torch.cholesky_inverse(f, upper),
    "_linalg_eigh": lambda a, uplo="L": _eigh_gauge(torch.linalg.eigh((a + a.mH) / 2, uplo)),
    "linalg_eigh": lambda a, uplo="L": _eigh_rebuild(torch.linalg.eigh((a + a.mH) / 2, uplo)),
    "linalg_eigvalsh": lambda a, uplo="L": torch.linalg.eigvalsh((a + a.mH) / 2, uplo),
    "_linalg_svd": lambda a: _svd_gauge(*torch.linalg.svd(a, full_matrices=False)),
    "linalg_svd": lambda a, full=True: _svd_gauge_full(*torch.linalg.svd(a, full_matrices=full)),
    "linalg_svdvals": lambda a: torch.linalg.svdvals(a),
    "_linalg_svdvals": lambda a: torch.linalg.svdvals(a),  # linalg_svdvals without derivatives
    "_linalg_qr": lambda a: tuple(torch.linalg.qr(a)),
    "linalg_qr": lambda a, mode="reduced": tuple(torch.linalg.qr(a, mode)),
    "_linalg_eig": lambda a: _eig_gauge(*torch.linalg.eig(a)),
    "linalg_eig": lambda a: _eig_gauge(*torch.linalg.eig(a)),
    "linalg_eigvals": lambda a: torch.linalg.eigvals(a),
    "_linalg_eigvals": lambda a: torch.linalg.eigvals(a),  # linalg_eigvals without derivatives
    "_linalg_lu": lambda a: tuple(torch.linalg.lu(a))[1:],
    "linalg_lu": lambda a: tuple(torch.linalg.lu(a)),
    "linalg_lu_factor": lambda a: tuple(torch.linalg.lu_factor(a)),
    "linalg_lu_solve": lambda lu, piv, b, **kw: torch.linalg.lu_solve(lu, piv, b, **kw),
    "matrix_exp": lambda a: torch.linalg.matrix_exp(a),
    "matrix_power": lambda a, n: torch.linalg.matrix_power(a, n),
    "linalg_pinv": lambda a: torch.linalg.pinv(a),
    "linalg_lstsq": lambda a, b, rcond=None: torch.linalg.lstsq(a, b, rcond).solution,
    "linalg_matrix_rank": lambda a, **kw: torch.linalg.matrix_rank(a, **kw),
    "diag_embed": lambda a, *args: torch.diag_embed(a, *args),
    "trace": lambda a: torch.trace(a),
    "diag": lambda a, k=0: torch.diag(a, k),
    "tensordot": lambda a, b, dims=2: torch.tensordot(
        a, b, [list(d) for d in dims] if isinstance(dims, tuple) else dims
    ),
    "kron": lambda a, b: torch.kron(a, b),
    "linalg_cross": lambda a, b, dim=-1: torch.linalg.cross(a, b, dim=dim),
    "linalg_vecdot": lambda a, b, dim=-1: torch.linalg.vecdot(a, b, dim=dim),
    "linalg_multi_dot": lambda ts: torch.linalg.multi_dot(ts),
    "linalg_matrix_norm": lambda a, o="fro", dim=(-2, -1), keepdim=False: torch.linalg.matrix_norm(a, o, dim, keepdim),
    "linalg_cond": lambda a, p=None: torch.linalg.cond(a, p),
    "inner": lambda a, b: torch.inner(a, b),
    "addr": lambda s, a, b, **kw: torch.addr(s, a, b, **kw),
    "linalg_vander": lambda x, N=None: torch.linalg.vander(x, N=N),
    "linalg_tensorinv": lambda a, ind=2: torch.linalg.tensorinv(a, ind),
    "linalg_tensorsolve": lambda a, b, dims=None: torch.linalg.tensorsolve(a, b, dims),
    "pinverse": lambda a, rcond=1e-15: torch.pinverse(a, rcond),
    "cross": lambda a, b, dim=None: torch.cross(a, b, dim=dim),
    "svd": lambda a, some=True, uv=True: _svd_legacy(torch.svd(a, some, uv), uv),
    "qr": lambda a, some=True: tuple(torch.qr(a, some)),
    "lu_unpack": lambda lu, piv: tuple(torch.lu_unpack(lu, piv)),
    "triangular_solve": lambda b, a, *args: tuple(torch.triangular_solve(b, a, *args)),
    "vander": lambda x, N=None, inc=False: torch.vander(x, N, inc),
    "diagflat": lambda x, k=0: torch.diagflat(x, k),
}


def _svd_legacy(r, uv):
    if not uv:
        return tuple(r)
    k = r.S.shape[-1]
    return r.U[..., :k] @ r.V[..., :k].mH, r.S


def _abs2(x):
    return (x * x.conj()).real


def _eigh_gauge(r):
    return r.eigenvalues, _abs2(r.eigenvectors)


def _eigh_rebuild(r):
    lam, v = r
    return lam, v @ torch.diag_embed(lam.to(v.dtype)) @ v.mH


def _svd_gauge(u, s, vh):
    return u @ vh, s


def _svd_gauge_full(u, s, vh):
    k = s.shape[-1]
    return u[..., :k] @ vh[..., :k, :], s, _abs2(u[..., :k])


def _eig_gauge(lam, v):
    return lam, _abs2(v)


@needs_torch
@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's deprecation notes for cross, qr, svd, ...
@pytest.mark.parametrize("name", sorted(TORCH))
def test_values_match_torch(name):
    from torch_oracle import check_against_torch

    assert check_against_torch(name, TORCH[name], torch) > 0


def test_every_linalg_op_is_compared_with_torch():
    linalg_ops = {
        n
        for n, i in pf.testing.opdb.OPS.items()
        if i.sample_fn.__module__ == L.__name__
        and not n.startswith(("fft_", "_fft", "special_", "_special", "sinc", "mvlgamma"))
    }
    assert linalg_ops <= set(TORCH), sorted(linalg_ops - set(TORCH))


# -- hard cases --------------------------------------------------------------------------------------


def test_det_gradient_of_singular_matrix_is_the_adjugate():
    """d det = tr(adj(A) dA) holds at singular A too; we return the adjugate (cofactors).
    (torch 2.13 returns zeros for this exactly singular matrix; finite differences agree with us.)"""
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2, det 0
    x = pf.tensor(a, requires_grad=True)
    pf.det(x).backward()
    h = 1e-6
    fd = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e = np.zeros((3, 3))
            e[i, j] = h
            fd[i, j] = (np.linalg.det(a + e) - np.linalg.det(a - e)) / (2 * h)
    close(x.grad, fd, 1e-7)
    assert np.abs(x.grad.numpy()).max() > 0.1


def test_det_of_rank_deficient_by_two_has_zero_gradient():
    x = pf.tensor(np.ones((3, 3)), requires_grad=True)
    pf.det(x).backward()
    close(x.grad, np.zeros((3, 3)))


def test_eigvalsh_and_svdvals_finite_at_degenerate_spectra():
    x = pf.eye(3).requires_grad_()
    (pf.linalg.eigvalsh(x) * pf.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    close(np.trace(x.grad.numpy()), 6.0)  # V diag(w) V^T for some orthonormal V
    y = pf.eye(3).requires_grad_()
    pf.linalg.svdvals(y).sum().backward()
    close(y.grad, np.eye(3))
    z = pf.eye(3).requires_grad_()
    lam, _ = pf.linalg.eigh(z)  # eigh used for its values only: no gap division
    lam.sum().backward()
    close(z.grad, np.eye(3))


def test_eigenvector_loss_at_degenerate_spectrum_is_not_finite():
    """Documented: vector derivatives divide by eigenvalue gaps (torch's behaviour)."""
    z = pf.eye(3).requires_grad_()
    _, v = pf.linalg.eigh(z)
    with np.errstate(all="ignore"):
        (v[0, 0] * v[1, 0]).backward()
    assert not np.all(np.isfinite(z.grad.numpy()))


def test_gauge_dependent_loss_raises_for_complex_eigh_svd_eig():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    h = pf.tensor(a + a.conj().T, requires_grad=True)
    _, v = pf.linalg.eigh(h)
    with pytest.raises(OpError, match="phase"):
        v[:, 0].real.sum().backward()  # depends on the arbitrary phase of the first eigenvector
    x = pf.tensor(a, requires_grad=True)
    u, _, _ = pf.linalg.svd(x)
    with pytest.raises(OpError, match="phase"):
        u[:, 0].imag.sum().backward()
    _, w = pf.linalg.eig(pf.tensor(a, requires_grad=True))
    with pytest.raises(OpError, match="phase"):
        w[:, 1].real.sum().backward()


def test_gauge_invariant_loss_is_fine_for_complex_eigh():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    h = pf.tensor(a + a.conj().T, requires_grad=True)
    _, v = pf.linalg.eigh(h)
    (v[0, 0] * v[0, 0].conj()).real.backward()
    assert np.all(np.isfinite(h.grad.numpy()))


def test_eig_of_real_input_is_complex_with_real_gradient():
    a = pf.tensor([[0.0, 1.0], [-2.0, -3.0]], requires_grad=True)
    lam, v = pf.linalg.eig(a)
    assert lam.dtype == pf.complex128 and v.dtype == pf.complex128
    (lam * lam.conj()).real.sum().backward()
    assert a.grad.dtype == pf.float64
    with fwAD.dual_level():
        d = fwAD.make_dual(a.detach(), pf.tensor([[1.0, 0.0], [0.0, 0.0]]))
        t = tangent(pf.linalg.eigvals(d))
        assert t.dtype == pf.complex128


def test_qr_complete_tall_is_not_differentiable_but_computes():
    a = pf.tensor(np.random.default_rng(2).standard_normal((4, 2)))
    q, r = pf.linalg.qr(a, mode="complete")
    assert q.shape == (4, 4) and r.shape == (4, 2)
    close(q @ r, a)
    close(q.mT @ q, np.eye(4))
    with pytest.raises(OpError, match="not differentiable when mode='complete'"):
        pf.linalg.qr(a.requires_grad_(), mode="complete")


def test_qr_mode_r_is_differentiable():
    a = pf.tensor(np.random.default_rng(3).standard_normal((3, 2)), requires_grad=True)
    q, r = pf.linalg.qr(a, mode="r")
    assert q.shape == (0,)
    r.sum().backward()
    assert a.grad.shape == (3, 2)


def test_svd_full_matrices_gradient_ignores_extra_columns():
    a = np.random.default_rng(4).standard_normal((4, 2))
    x = pf.tensor(a, requires_grad=True)
    u, s, vh = pf.linalg.svd(x, full_matrices=True)
    assert u.shape == (4, 4)
    close(u[:, :2] * s @ vh, a)
    (u[:, :2] @ vh).sum().backward()
    y = pf.tensor(a, requires_grad=True)
    u2, _, vh2 = pf.linalg.svd(y, full_matrices=False)
    (u2 @ vh2).sum().backward()
    close(x.grad, y.grad)


def test_pinv_constant_rank_derivative_and_rank_change():
    """At a rank change pinv jumps; the derivative returned is that of the constant-rank
    branch (the formula at the current rank), never nan."""
    a = pf.tensor([[1.0, 0.0], [0.0, 0.0]], requires_grad=True)
    p = pf.linalg.pinv(a)
    close(p, [[1.0, 0.0], [0.0, 0.0]])
    p.sum().backward()
    assert np.all(np.isfinite(a.grad.numpy()))


# -- broadcasting and signatures ---------------------------------------------------------------------


def test_solve_broadcasts_and_gradient_unbroadcasts():
    rng = np.random.default_rng(5)
    a = pf.tensor(rng.standard_normal((3, 3)) + 3 * np.eye(3), requires_grad=True)
    b = pf.tensor(rng.standard_normal((2, 3, 1)), requires_grad=True)
    x = pf.linalg.solve(a, b)
    assert x.shape == (2, 3, 1)
    x.sum().backward()
    assert a.grad.shape == (3, 3) and b.grad.shape == (2, 3, 1)


def test_linalg_norm_matrix_orders():
    a = pf.tensor([[1.0, -2.0], [3.0, 4.0]])
    for o in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf):
        close(pf.linalg.norm(a, o), np.linalg.norm(a.numpy(), o))
    close(pf.linalg.norm(a), np.linalg.norm(a.numpy()))
    close(pf.linalg.norm(pf.ones(2, 2, 2), 2, dim=(1, 2)), [2.0, 2.0])
    with pytest.raises(OpError, match="1-D or 2-D"):
        pf.linalg.norm(pf.ones(2, 2, 2), 2)


def test_hvp_through_cholesky_matches_torch():
    """Forward-over-reverse through cholesky and triangular solves (what the GP example needs)."""
    if torch is None:
        pytest.skip("torch not installed")
    rng = np.random.default_rng(6)
    x0 = rng.standard_normal((3, 3))
    a0 = x0 @ x0.T + 3 * np.eye(3)
    v = rng.standard_normal((3, 3))
    v = v + v.T

    def f(L, a):
        c = L.linalg.cholesky(a)
        return c.diagonal().log().sum() * 2 + L.cholesky_solve(L.ones(3, 1, dtype=a.dtype), c).sum()

    from pushforward.autograd.functional import hvp

    _, got = hvp(lambda a: f(pf, a), pf.tensor(a0), pf.tensor(v))
    _, exp = torch.autograd.functional.hvp(lambda a: f(torch, a), torch.tensor(a0), torch.tensor(v))
    close(got, exp.numpy(), 1e-9)


def _cholesky_tangent_reference(a, da, upper):
    """L Phi(L^-1 S L^-H), S the Hermitian part of dA, in NumPy and SciPy, matrix by matrix."""
    import scipy.linalg as sla

    if a.ndim > 2:
        return np.stack([_cholesky_tangent_reference(x, d, upper) for x, d in zip(a, da)])
    low = np.linalg.cholesky(a)
    x = sla.solve_triangular(low, (da + da.conj().T) / 2, lower=True)
    x = sla.solve_triangular(low, x.conj().T, lower=True).conj().T
    dl = low @ (np.tril(x, -1) + np.diag(np.diag(x) / 2))
    return dl.conj().T if upper else dl


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(FL.CHOLESKY_BLOCK + 1,), (2, 2 * FL.CHOLESKY_BLOCK + 7)])
def test_blocked_cholesky_tangent_is_the_dense_formula(dtype, upper, shape):
    """Above CHOLESKY_BLOCK the tangent of cholesky is computed by blocks (a remainder block, a
    batch, a tangent that is not Hermitian, complex, the upper factor)."""
    rng = np.random.default_rng(3)
    *batch, n = shape
    x, da = rng.standard_normal((2, *batch, n, n)) + (
        1j * rng.standard_normal((2, *batch, n, n)) if dtype is np.complex128 else 0
    )
    a = x @ np.swapaxes(x.conj(), -1, -2) + n * np.eye(n)
    with fwAD.dual_level():
        got = fwAD.unpack_dual(pf.linalg.cholesky(fwAD.make_dual(pf.tensor(a), pf.tensor(da)), upper=upper))[1]
    close(got, _cholesky_tangent_reference(a, da, upper), 1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(FL.CHOLESKY_BLOCK + 1,), (2, 2 * FL.CHOLESKY_BLOCK + 7)])
def test_blocked_cholesky_gradient_is_the_dense_formula(dtype, upper, shape):
    """Above CHOLESKY_BLOCK the gradient of cholesky is computed by blocks too:
    L^-H Sym(Phi(L^H gL)) L^-1, Sym(P) = (P + P^H) / 2, as below it."""
    import scipy.linalg as sla

    rng = np.random.default_rng(4)
    *batch, n = shape
    x, g = rng.standard_normal((2, *batch, n, n)) + (
        1j * rng.standard_normal((2, *batch, n, n)) if dtype is np.complex128 else 0
    )
    a = x @ np.swapaxes(x.conj(), -1, -2) + n * np.eye(n)
    t = pf.tensor(a).requires_grad_()
    pf.linalg.cholesky(t, upper=upper).backward(pf.tensor(g))
    a2, g2 = a.reshape(-1, n, n), g.reshape(-1, n, n)
    want = []
    for ai, gi in zip(a2, g2):
        low = np.linalg.cholesky(ai)
        gl = gi.conj().T if upper else gi
        p = low.conj().T @ gl
        p = np.tril(p, -1) + np.diag(np.diag(p) / 2)
        p = (p + p.conj().T) / 2
        y = sla.solve_triangular(low, p, lower=True, trans="C")  # L^-H P
        want.append(sla.solve_triangular(low, y.conj().T, lower=True, trans="C").conj().T)  # (L^-H Y^H)^H
    close(t.grad, np.reshape(want, a.shape), 1e-12)


@pytest.mark.parametrize("block", [1, 2])
def test_blocked_cholesky_tangent_passes_the_op_database(monkeypatch, block):
    """The op database's 3 x 3 samples through the blocked tangent and gradient, blocks of 1 and of 2
    (a remainder): numerical Jacobians forward and backward, forward-over-reverse, complex, vector
    mode, pf.compile, jet."""
    monkeypatch.setattr(FL, "CHOLESKY_BLOCK", block)
    r = check_op("linalg_cholesky", compiled=True)
    assert r["error"] is None, r["error"]
    assert all(r[k] for k in ("backward", "forward", "fwd_over_rev", "complex", "batched", "compiled", "taylor")), r


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_jacobians_forward_and_reverse_agree(upper):
    """The gradient of cholesky is Hermitian (the derivative of the Hermitian matrix), and its tangent
    takes a non-Hermitian tangent through its Hermitian part, so the two Jacobians are one (the
    tangent used to take the whole of it: jacfwd and jacrev differed by 0.24 here)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 4))
    a = pf.tensor(x @ x.T + 4 * np.eye(4))
    f = lambda a: pf.linalg.cholesky(a, upper=upper)  # noqa: E731
    close(pf.func.jacfwd(f)(a), pf.func.jacrev(f)(a), 1e-12)


# -- errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: pf.linalg.inv(pf.ones(2, 3)), r"inverse: .*square.*\(2, 3\)"),
        (lambda: pf.linalg.inv(pf.zeros(2, 2)), r"inverse: .*singular"),
        (lambda: pf.linalg.det(pf.ones(3)), r"det: .*at least 2 dimensions"),
        (lambda: pf.linalg.cholesky(-pf.eye(2)), r"linalg_cholesky: .*positive-definite"),
        (lambda: pf.linalg.solve(pf.eye(2), pf.ones(3, 1)), r"_linalg_solve: incompatible shapes"),
        (lambda: pf.linalg.inv(pf.tensor([[1, 2], [3, 4]])), r"inverse: .*floating point or complex.*int64"),
        (lambda: pf.linalg.solve_triangular(pf.zeros(2, 2), pf.ones(2, 1), upper=True), r"singular"),
        (lambda: pf.linalg.qr(pf.eye(2), mode="full"), r"mode must be"),
        (lambda: pf.linalg.matrix_norm(pf.eye(2), "bad"), r"order 'bad' not supported"),
        (lambda: pf.trace(pf.ones(2, 2, 2)), r"trace: expected a matrix"),
        (lambda: pf.linalg.cross(pf.ones(2), pf.ones(2)), r"size 3"),
        (lambda: pf.linalg.matrix_power(pf.ones(2, 3), 2), r"square"),
    ],
)
def test_bad_input_errors_name_op_and_shapes(call, match):
    with pytest.raises(OpError, match=match):
        call()


def test_docs_example_runs():
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "linalg.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    env: dict = {}
    exec(compile(code, "docs/linalg.md", "exec"), env)
    close(env["A"].grad, np.linalg.inv(env["A"].detach().numpy()))


@pytest.mark.parametrize(
    "fn",
    [
        pf.linalg.eigh,
        pf.linalg.svd,
        pf.linalg.qr,
        pf.linalg.eigvalsh,
        pf.linalg.svdvals,
        pf.linalg.eig,
        pf.linalg.lu,
        pf.linalg.lu_factor,
        pf.linalg.inv,
        pf.linalg.det,
        pf.linalg.cholesky,
    ],
)
@pytest.mark.parametrize("shape", [(0, 3, 3), (0, 0)])
def test_empty_inputs(fn, shape):
    """Regression: packing the outputs of an empty batch failed (reshape with -1 of size 0)."""
    x = pf.zeros(*shape, requires_grad=True)
    r = fn(x)
    outs = [o for o in (r if isinstance(r, tuple) else (r,)) if o.dtype.kind in "fc"]
    total = sum((o.sum() for o in outs), pf.tensor(0.0))
    (total.real if total.dtype.kind == "c" else total).backward()
    assert x.grad.shape == shape


@needs_torch
def test_qr_of_a_column_of_signed_zeros_follows_torch():
    """A zero pivot's Householder sign followed the zero's sign bit in NumPy's LAPACK and not in
    torch's; -0.0 (after relu and neg) gave Q and R of the opposite sign (fuzzer, seed 20261207)."""
    a = np.array([[-0.0, -0.0], [-0.46821235, -0.53137252], [-0.41429663, -0.0]])
    q, r = pf.linalg.qr(pf.tensor(a))
    tq, tr = torch.linalg.qr(torch.tensor(a))
    assert np.allclose(q.numpy(), tq.numpy()) and np.allclose(r.numpy(), tr.numpy())


def test_lu_factors_and_matrix_exp_tangent_are_contiguous():
    """torch's L and U (of a batch too) and matrix_exp's tangent are C-contiguous, so `.view(-1)`
    works on them (fuzzer: U of a batched lu, then .view(8); matrix_exp under jvp, then .view(-1))."""
    a = pf.tensor(np.random.default_rng(0).standard_normal((2, 2, 2)))
    _, low, up = pf.linalg.lu(a)
    assert low.view(8).shape == (8,) and up.view(8).shape == (8,)
    with fwAD.dual_level():
        x = fwAD.make_dual(pf.tensor([[0.1, 0.2], [0.3, 0.4]]), pf.ones(2, 2))
        t = fwAD.unpack_dual(pf.linalg.matrix_exp(x).view(-1)).tangent
        assert t.shape == (4,) and t.is_contiguous()


@needs_torch
def test_solve_triangular_substitutes_exactly_as_torch():
    """Substitution, not an LU solve of the triangle: exact zeros where torch has them, so a QR of
    the result picks torch's Householder signs (fuzzer, seed 20261210: qr(solve_triangular(x, x)))."""
    x = np.array(
        [
            [0.97063158, 0.572065, 1.00996875],
            [0.93860909, 1.48170898, 0.37056885],
            [-1.16253026, 0.31036322, -0.54140357],
        ]
    )
    got = pf.linalg.solve_triangular(pf.tensor(x), pf.tensor(x), upper=False).numpy()
    want = torch.linalg.solve_triangular(torch.tensor(x), torch.tensor(x), upper=False).numpy()
    assert got[1, 0] == 0.0 and np.allclose(got, want)
    assert np.allclose(pf.linalg.qr(pf.tensor(got))[0].numpy(), torch.linalg.qr(torch.tensor(want))[0].numpy())
    # batched and broadcast, left and right, upper and unit diagonal, against torch
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2))
    for kw in (dict(upper=True), dict(upper=False, unitriangular=True), dict(upper=True, left=False)):
        bb = b.T if kw.get("left") is False else b
        got = pf.linalg.solve_triangular(pf.tensor(a), pf.tensor(bb), **kw).numpy()
        want = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(bb), **kw).numpy()
        assert np.allclose(got, want)


@needs_torch
def test_tensordot_sums_a_size_one_contracted_dim_first_as_torch():
    """torch's tensordot broadcasts a contracted dim of size 1 (the other side is summed over it
    first): values, and the product's backward keeps the sum, not the operand (fuzzer: inner of
    (1,)-vectors, then an in-place write into one of them)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 1))
    assert np.allclose(
        pf.tensordot(pf.tensor(a), pf.tensor(b), ([1], [1])).numpy(),
        torch.tensordot(torch.tensor(a), torch.tensor(b), ([1], [1])).numpy(),
    )
    x = pf.tensor([0.7], requires_grad=True)
    v = x.lgamma()
    y = pf.inner(v, x)
    v.div_(0.5)
    (g,) = pf.autograd.grad(y, x)
    assert np.allclose(
        g.numpy(), torch.lgamma(torch.tensor(0.7)).item() + 0.7 * torch.digamma(torch.tensor(0.7)).item()
    )


def test_addbmm_of_an_empty_batch_has_self_dtype():
    """torch: an empty batch sums to zeros of self's dtype (fuzzer: a complex empty batch, a real self)."""
    out = pf.addbmm(pf.ones(1, 1), pf.zeros(0, 1, 3, dtype=pf.complex128), pf.zeros(0, 3, 1, dtype=pf.complex128))
    assert out.dtype == np.float64 and np.allclose(out.numpy(), [[1.0]])


# ---- memory layout: LAPACK's column-major results, as torch's (docs/design.md, "Memory layout")
_A = np.random.default_rng(11).standard_normal((2, 4, 3)) + 0.1
_S = _A[..., :3, :3] @ _A[..., :3, :3].swapaxes(-1, -2) + 3 * np.eye(3)
_B = np.random.default_rng(12).standard_normal((2, 3, 4))
_LAYOUT_CASES = {
    "inv": lambda m: (m.linalg.inv(m.tensor(_S)),),
    "solve": lambda m: (m.linalg.solve(m.tensor(_S), m.tensor(_B)),),
    "solve_right": lambda m: (m.linalg.solve(m.tensor(_S), m.tensor(_B.swapaxes(-1, -2)), left=False),),
    "solve_triangular": lambda m: (m.linalg.solve_triangular(m.tensor(_S), m.tensor(_B), upper=True),),
    "solve_triangular_right": lambda m: (
        m.linalg.solve_triangular(m.tensor(_S), m.tensor(_B.swapaxes(-1, -2)), upper=False, left=False),
    ),
    "cholesky": lambda m: (m.linalg.cholesky(m.tensor(_S)),),
    "cholesky_upper": lambda m: (m.linalg.cholesky(m.tensor(_S), upper=True),),
    "cholesky_inverse": lambda m: (m.cholesky_inverse(m.tensor(np.linalg.cholesky(_S))),),
    "svd": lambda m: m.linalg.svd(m.tensor(_A), full_matrices=False),
    "svd_full": lambda m: m.linalg.svd(m.tensor(_A)),
    "svd_complex": lambda m: m.linalg.svd(m.tensor(_A + 1j * _A[..., ::-1, :]), full_matrices=False),
    "svd_one_matrix": lambda m: m.linalg.svd(m.tensor(_A[0]), full_matrices=False),
    "qr": lambda m: m.linalg.qr(m.tensor(_A)),
    "qr_wide": lambda m: m.linalg.qr(m.tensor(_B)),
    "qr_complete": lambda m: m.linalg.qr(m.tensor(_A), mode="complete"),
    "eigh": lambda m: m.linalg.eigh(m.tensor(_S)),
    "eig": lambda m: m.linalg.eig(m.tensor(_S)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(_LAYOUT_CASES))
def test_lapack_results_are_laid_out_as_torch(name):
    """Each result matrix has torch's strides, so a later reshape is a view or a copy as in torch."""
    for got, want in zip(_LAYOUT_CASES[name](pf), _LAYOUT_CASES[name](torch)):
        if want.dim() >= 2:
            assert got.stride() == want.stride(), (name, got.stride(), want.stride())


@pytest.mark.parametrize("name", ["inv", "solve", "solve_triangular", "cholesky", "svd", "qr", "eigh"])
def test_tangents_of_lapack_results_are_laid_out_as_their_primals(name):
    """A view the column-major result allows (`.mT.view(...)`) works on its tangent too, and on a
    batch of tangents (vector mode)."""
    x, v = _S, np.random.default_rng(13).standard_normal(_S.shape)
    for batch in (None, 2):
        with fwAD.dual_level(batch=batch):
            t = v if batch is None else np.stack([v, 2 * v])
            outs = {
                "inv": lambda a: (pf.linalg.inv(a),),
                "solve": lambda a: (pf.linalg.solve(a, pf.tensor(_B)),),
                "solve_triangular": lambda a: (pf.linalg.solve_triangular(a, pf.tensor(_B), upper=True),),
                "cholesky": lambda a: (pf.linalg.cholesky(a @ a.mT),),
                "svd": lambda a: pf.linalg.svd(a),
                "qr": lambda a: pf.linalg.qr(a),
                "eigh": lambda a: pf.linalg.eigh(a + a.mT),
            }[name](fwAD.make_dual(pf.tensor(x), pf.tensor(t)))
            for y in outs:
                if y.dim() < 3:  # (eigenvalues, singular values: a batch of vectors)
                    continue
                flat = y.mT.view(y.shape[0], -1)
                tan = fwAD.unpack_dual(flat).tangent
                assert tan is not None and tuple(tan.shape)[-2:] == tuple(flat.shape), name
                if batch is None:
                    assert fwAD.unpack_dual(y).tangent.stride() == y.stride()


@needs_torch
def test_an_elementwise_result_of_svd_u_views_as_torch():
    """The fuzzer's program: U of a complex SVD is column-major in torch, so (U * U.conj()).real is
    too and its transpose views as a vector; it failed with "view size is not compatible"."""
    a = np.random.default_rng(14).standard_normal((3, 3)) + 1j * np.random.default_rng(15).standard_normal((3, 3))
    outs = []
    for m in (pf, torch):
        x = m.tensor(a, requires_grad=True)
        u = m.linalg.svd(x, full_matrices=False)[0]
        y = (u * u.conj()).real.mT.view(9)
        (g,) = (pf.autograd.grad if m is pf else torch.autograd.grad)((y * m.arange(9.0)).sum(), x)
        outs.append((y.detach().numpy(), g.detach().numpy()))
    assert np.allclose(outs[0][0], outs[1][0]) and np.allclose(outs[0][1], outs[1][1])
