"""Breadth entries of the fuzzer's op table: the linalg, fft, special, nn, sort and scatter ops that torch also has.

Each entry has a group (``linalg``, ``fft``, ``special``, ``nn``, ``sort``, ``scatter``,
``misc``) that ``run.py --only`` selects. Domains keep samples away from kinks, ties and
degenerate spectra: well-conditioned matrices for inv/solve, SPD matrices (A Aᴴ) for
cholesky, separated eigen/singular values with gauge-invariant uses of the vectors
(V f(Λ) Vᴴ, |V|², U f(S) Vᴴ), distinct values for sort/topk/median, no duplicate indices
for writes whose result torch leaves unspecified (scatter, index_copy, put).

Left out on purpose (torch has no derivative, so there is no reference): special.zeta,
gammainc/gammaincc, the bessel_* / modified_bessel_* / airy_ai family; matrix_rank and
other integer-valued results are covered only as primal values through argsort/sort indices.
"""

from __future__ import annotations

import math

import torch

from .table import M, Op, _re, add, binary_gen, no_ties, real_interval, unary_gen


def op(group, name, render, gen, dom=None, weight=0.35, tags=()):
    add(Op(name, render, gen, dom, weight=weight, tags=tags, group=group))


def u(group, name, render, kinds="f", dom=None, params=None, weight=0.35, tags=()):
    op(group, name, render, unary_gen(kinds, params=params), dom, weight, tags)


def _all(t) -> bool:
    return bool(t.all())


# ------------------------------------------------------------------ matrix predicates
def _sq(m):
    return len(m.shape) >= 2 and m.shape[-1] == m.shape[-2] and m.shape[-1] > 0


def _mat(m):
    return len(m.shape) >= 2 and 0 not in m.shape


def sq_params(ctx, meta):
    return {} if _sq(meta) else None


def mat_params(ctx, meta):
    return {} if _mat(meta) else None


def _svals(x):
    return torch.linalg.svdvals(x)


def well_cond(limit=15.0, smin=0.15):
    def dom(a, p):
        s = _svals(a[0])
        return _all(s[..., -1] > smin) and _all(s[..., 0] / s[..., -1] < limit)

    return dom


def _gaps(v, m=0.15):
    if v.shape[-1] < 2:
        return True
    v = v.sort(-1).values if not v.is_complex() else v
    return _all((v[..., 1:] - v[..., :-1]).abs() > m)


def _herm(x):
    return x + x.mH


def eig_sep(a, p):  # separated, nonzero eigenvalues of a general matrix (complex pairs included)
    e = torch.linalg.eigvals(a[0])
    d = (e.unsqueeze(-1) - e.unsqueeze(-2)).abs() + torch.eye(e.shape[-1], dtype=torch.float64) * 9
    return _all(d > 0.2) and _all(e.abs() > 0.1) and well_cond(30)(a, p)


def svd_sep(a, p):
    s = _svals(a[0])
    return _all(s > 0.15) and _gaps(s, 0.15)


# ------------------------------------------------------------------ linalg
L_ = "linalg"
u(L_, "det", "L.linalg.det({0})", "fc", well_cond(30, 0.05), sq_params)
u(L_, "slogdet", "L.linalg.slogdet({0})", "fc", well_cond(30, 0.05), sq_params, tags=("multi",))
u(
    L_,
    "logdet",
    "L.logdet({0})",
    "f",
    lambda a, p: _all(torch.linalg.det(a[0]) > 0.1) and well_cond(30)(a, p),
    sq_params,
)
u(L_, "inv", "L.linalg.inv({0})", "fc", well_cond(), sq_params)
u(L_, "inverse", "L.inverse({0})", "fc", well_cond(), sq_params, weight=0.15)
u(L_, "pinv", "L.linalg.pinv({0})", "fc", svd_sep, mat_params)
u(L_, "pinverse", "L.pinverse({0})", "fc", svd_sep, mat_params, weight=0.15)
u(L_, "matrix_exp", "L.linalg.matrix_exp({0})", "fc", lambda a, p: _all(a[0].abs().sum((-2, -1)) < 4), sq_params)
u(
    L_,
    "matrix_power",
    "L.linalg.matrix_power({0}, {n!r})",
    "fc",
    well_cond(),
    lambda c, m: {"n": c.rng.choice([0, 1, 2, 3, -1, -2])} if _sq(m) else None,
)
u(L_, "cholesky", "L.linalg.cholesky({0} @ {0}.mH)", "fc", well_cond(8, 0.3), sq_params)
u(
    L_,
    "cholesky_inverse",
    "L.cholesky_inverse(L.linalg.cholesky({0} @ {0}.mH))",
    "fc",
    well_cond(8, 0.3),
    lambda c, m: {} if _sq(m) and len(m.shape) == 2 else None,
    weight=0.8,
)
u(
    L_,
    "eigvalsh",
    "L.linalg.eigvalsh({0} + {0}.mH)",
    "fc",
    lambda a, p: _gaps(torch.linalg.eigvalsh(_herm(a[0]))),
    sq_params,
)
u(
    L_,
    "eigh_fun",
    "(lambda r: (r[1] * r[0].exp().unsqueeze(-2)) @ r[1].mH)(L.linalg.eigh({0} + {0}.mH))",
    "fc",
    lambda a, p: _gaps(torch.linalg.eigvalsh(_herm(a[0]))) and _all(torch.linalg.eigvalsh(_herm(a[0])) < 4),
    sq_params,
)
u(
    L_,
    "eigh_abs2",
    "(lambda V: (V * V.conj()).real)(L.linalg.eigh({0} + {0}.mH)[1])",
    "fc",
    lambda a, p: _gaps(torch.linalg.eigvalsh(_herm(a[0]))),
    sq_params,
)
u(
    L_,
    "eigvals_sums",
    "(lambda e: L.stack([e.sum(), (e * e).sum(), (e ** 3).sum()]))(L.linalg.eigvals({0}))",
    "fc",
    eig_sep,
    sq_params,
)
u(
    L_,
    "eig_fun",
    "(lambda r: (r[1] * r[0].sin().unsqueeze(-2)) @ L.linalg.inv(r[1]))(L.linalg.eig({0}))",
    "fc",
    eig_sep,
    sq_params,
)
u(L_, "svdvals", "L.linalg.svdvals({0})", "fc", svd_sep, mat_params)
u(
    L_,
    "svd_fun",
    "(lambda r: (r[0] * r[1].sin().unsqueeze(-2)) @ r[2])(L.linalg.svd({0}, full_matrices=False))",
    "fc",
    svd_sep,
    mat_params,
)
u(
    L_,
    "svd_abs2",
    "(lambda r: (r[0] * r[0].conj()).real)(L.linalg.svd({0}, full_matrices=False))",
    "fc",
    svd_sep,
    mat_params,
    weight=0.2,
)
# Complex: only tall matrices. LAPACK's complex Householder step leaves a column alone (Q gets +1)
# exactly when nothing is below the diagonal AND the diagonal entry is real, and reflects it (Q
# gets -1) when its imaginary part is any tiny nonzero: a square complex matrix whose last pivot is
# real up to rounding (e.g. solve(a, a)) sits on that discontinuity of the convention, not of math.
u(
    L_,
    "qr",
    "L.linalg.qr({0})",
    "fc",
    svd_sep,
    lambda c, m: (
        {} if _mat(m) and (m.shape[-2] > m.shape[-1] or m.shape[-2] == m.shape[-1] and m.kind == "f") else None
    ),
    tags=("multi",),
)
u(L_, "matrix_norm_fro", "L.linalg.matrix_norm({0})", "fc", lambda a, p: _all(a[0].abs() > M), mat_params)
u(L_, "matrix_norm_nuc", "L.linalg.matrix_norm({0}, 'nuc')", "fc", svd_sep, mat_params)
u(L_, "matrix_norm_2", "L.linalg.matrix_norm({0}, 2)", "fc", svd_sep, mat_params)
u(L_, "cond", "L.linalg.cond({0})", "fc", svd_sep, mat_params, weight=0.2)
u(
    L_,
    "vector_norm",
    "L.linalg.vector_norm({0}, {o!r})",
    "fc",
    lambda a, p: _all(a[0].abs() > M) and (p["o"] != float("inf") or no_ties(a[0].abs())),
    lambda c, m: {"o": c.rng.choice([1, 2, 3, 0.5, float("inf")])},
)
u(L_, "vander", "L.linalg.vander({0})", "fc", None, lambda c, m: {} if len(m.shape) == 1 else None, weight=0.2)
u(L_, "trace", "L.trace({0})", "fc", None, lambda c, m: {} if len(m.shape) == 2 else None)
u(
    L_,
    "diag",
    "L.diag({0}, {k!r})",
    "fc",
    None,
    lambda c, m: {"k": c.rng.choice([0, 1, -1])} if 1 <= len(m.shape) <= 2 else None,
)
u(L_, "diag_embed", "L.diag_embed({0})", "fc", None, lambda c, m: {} if len(m.shape) >= 1 else None, weight=0.2)
u(L_, "diagflat", "L.diagflat({0})", "fc", weight=0.15)


def _two(pred_a, pred_b):
    """Operands (a, b) with pred_b(meta_a, meta_b)."""

    def gen(ctx):
        a = ctx.pick("fc", pred=pred_a)
        if a is None:
            return None
        ma = ctx.meta(a)
        b = ctx.choose(lambda m: m.kind in "fc" and pred_b(ma, m))
        return None if b is None else ([a, b], {})

    return gen


def _dom_a(dom):
    return lambda a, p: dom([a[0]], p)


op(
    L_,
    "solve",
    "L.linalg.solve({0}, {1})",
    _two(
        _sq,
        lambda ma, m: len(m.shape) == len(ma.shape) and m.shape[-2] == ma.shape[-1] and m.shape[:-2] == ma.shape[:-2],
    ),
    _dom_a(well_cond()),
)
op(
    L_,
    "solve_vec",
    "L.linalg.solve({0}, {1})",
    _two(lambda m: _sq(m) and len(m.shape) == 2, lambda ma, m: m.shape == ma.shape[-1:]),
    _dom_a(well_cond()),
    weight=0.2,
)
# (same kind only: torch 2.13's solve_triangular of a real A and a complex B silently returns
# the real part of the solution, a torch bug; pushforward promotes as for every other op)
op(
    L_,
    "solve_triangular",
    "L.linalg.solve_triangular({0}, {1}, upper={up!r})",
    lambda ctx: (lambda r: None if r is None else (r[0], {"up": ctx.rng.random() < 0.5}))(
        _two(
            _sq,
            lambda ma, m: (
                len(m.shape) == len(ma.shape)
                and m.shape[-2] == ma.shape[-1]
                and m.shape[:-2] == ma.shape[:-2]
                and m.kind == ma.kind
            ),
        )(ctx)
    ),
    lambda a, p: well_cond(20, 0.2)([a[0].triu() if p["up"] else a[0].tril()], p),
)
op(
    L_,
    "cholesky_solve",
    "L.cholesky_solve({1}, L.linalg.cholesky({0} @ {0}.mH))",
    _two(lambda m: _sq(m) and len(m.shape) == 2, lambda ma, m: len(m.shape) == 2 and m.shape[0] == ma.shape[0]),
    _dom_a(well_cond(8, 0.3)),
    weight=0.2,
)
op(
    L_,
    "lstsq",
    "L.linalg.lstsq({0}, {1}).solution",
    _two(
        lambda m: len(m.shape) == 2 and m.shape[0] >= m.shape[1] > 0,
        lambda ma, m: len(m.shape) == 2 and m.shape[0] == ma.shape[0],
    ),
    _dom_a(svd_sep),
    weight=0.2,
)
op(
    L_,
    "multi_dot",
    "L.linalg.multi_dot([{0}, {1}, {0}])",
    _two(lambda m: _sq(m) and len(m.shape) == 2, lambda ma, m: m.shape == ma.shape),
    weight=0.2,
)
op(
    L_,
    "cross",
    "L.linalg.cross({0}, {1})",
    _two(lambda m: len(m.shape) >= 1 and m.shape[-1] == 3, lambda ma, m: m.shape == ma.shape),
)
op(L_, "vecdot", "L.linalg.vecdot({0}, {1})", _two(lambda m: len(m.shape) >= 1, lambda ma, m: m.shape == ma.shape))
op(L_, "vdot", "L.vdot({0}, {1})", _two(lambda m: len(m.shape) == 1, lambda ma, m: m.shape == ma.shape), weight=0.2)
op(
    L_,
    "inner",
    "L.inner({0}, {1})",
    _two(lambda m: len(m.shape) >= 1, lambda ma, m: len(m.shape) >= 1 and m.shape[-1] == ma.shape[-1]),
    weight=0.2,
)
op(L_, "mv", "L.mv({0}, {1})", _two(lambda m: len(m.shape) == 2, lambda ma, m: m.shape == ma.shape[1:]), weight=0.3)
op(
    L_,
    "kron",
    "L.kron({0}, {1})",
    _two(
        lambda m: 1 <= len(m.shape) <= 2 and math.prod(m.shape) <= 6,
        lambda ma, m: len(m.shape) == len(ma.shape) and math.prod(m.shape) <= 6,
    ),
)
op(
    L_,
    "tensordot",
    "L.tensordot({0}, {1}, dims=1)",
    _two(lambda m: len(m.shape) >= 1, lambda ma, m: len(m.shape) >= 1 and m.shape[0] == ma.shape[-1]),
)
op(
    L_,
    "block_diag",
    "L.block_diag({0}, {1})",
    _two(lambda m: len(m.shape) == 2, lambda ma, m: len(m.shape) == 2),
    weight=0.2,
)
op(
    L_,
    "addmm",
    "L.addmm({0}, {1}, {1}.mT, beta={b!r}, alpha={s!r})",
    lambda ctx: (lambda r: None if r is None else (r[0], {"b": 0.7, "s": -1.3}))(
        _two(lambda m: len(m.shape) <= 2, lambda ma, m: len(m.shape) == 2 and _bc(ma.shape, (m.shape[0],) * 2))(ctx)
    ),
)
op(
    L_,
    "addmv",
    "L.addmv({0}, {1}, {1}[0], alpha=0.5)",
    _two(
        lambda m: len(m.shape) <= 1,
        lambda ma, m: len(m.shape) == 2 and m.shape[0] == m.shape[1] and _bc(ma.shape, m.shape[:1]),
    ),
    weight=0.2,
)
op(
    L_,
    "addr",
    "L.addr({0}, {1}, {1})",
    _two(lambda m: len(m.shape) == 2 and m.shape[0] == m.shape[1], lambda ma, m: m.shape == ma.shape[:1]),
    weight=0.2,
)
op(
    L_,
    "baddbmm",
    "L.baddbmm({0}, {1}.mT, {1}, beta=0.5)",
    _two(
        lambda m: len(m.shape) <= 3,
        lambda ma, m: len(m.shape) == 3 and _bc(ma.shape, (m.shape[0], m.shape[2], m.shape[2])),
    ),
    weight=0.8,
)
op(
    L_,
    "addbmm",
    "L.addbmm({0}, {1}.mT, {1})",
    _two(lambda m: len(m.shape) <= 2, lambda ma, m: len(m.shape) == 3 and _bc(ma.shape, (m.shape[2], m.shape[2]))),
    weight=0.3,
)
op(
    L_,
    "cdist",
    "L.cdist({0}, {1}, p={pp!r})",
    lambda ctx: (lambda r: None if r is None else (r[0], {"pp": ctx.rng.choice([2.0, 1.0, 3.0])}))(
        _two(
            lambda m: len(m.shape) >= 2 and m.kind == "f",
            lambda ma, m: (
                m.kind == "f"
                and len(m.shape) == len(ma.shape)
                and m.shape[-1] == ma.shape[-1]
                and m.shape[:-2] == ma.shape[:-2]
            ),
        )(ctx)
    ),
    lambda a, p: _all((a[0].unsqueeze(-2) - a[1].unsqueeze(-3)).abs() > M),
)
op(
    L_,
    "dist",
    "L.dist({0}, {1})",
    _two(lambda m: True, lambda ma, m: m.shape == ma.shape),
    lambda a, p: bool((a[0] - a[1]).norm() > 0.1),
    weight=0.2,
)


def _bc(src, dst):
    return len(src) <= len(dst) and all(x == y or x == 1 for x, y in zip(reversed(src), reversed(dst)))


# ------------------------------------------------------------------ fft
F_ = "fft"


def _fft_params(nd_max=1, real_len=False):
    def params(ctx, m):
        if not m.shape or 0 in m.shape:
            return None
        nd = len(m.shape)
        p = {"norm": ctx.rng.choice([None, "ortho", "forward", "backward"]), "dim": ctx.rng.randrange(-nd, nd)}
        if real_len:
            p["n"] = ctx.rng.choice([None, 2, 3, 4])
        return p

    return params


for _n in ("fft", "ifft"):
    u(F_, _n, "L.fft.%s({0}, dim={dim!r}, norm={norm!r})" % _n, "fc", None, _fft_params())
u(F_, "fft_n", "L.fft.fft({0}, n={n!r}, dim={dim!r})", "fc", None, _fft_params(real_len=True), weight=0.2)
u(F_, "rfft", "L.fft.rfft({0}, dim={dim!r}, norm={norm!r})", "f", None, _fft_params())
u(F_, "ihfft", "L.fft.ihfft({0}, dim={dim!r}, norm={norm!r})", "f", None, _fft_params())
for _n in ("irfft", "hfft"):
    u(F_, _n, "L.fft.%s({0}, n={n!r}, dim={dim!r}, norm={norm!r})" % _n, "fc", None, _fft_params(real_len=True))
for _n in ("fft2", "ifft2", "fftn", "ifftn"):
    u(
        F_,
        _n,
        "L.fft.%s({0}, norm={norm!r})" % _n,
        "fc",
        None,
        lambda c, m: (
            {"norm": c.rng.choice([None, "ortho", "forward"])} if len(m.shape) >= 2 and 0 not in m.shape else None
        ),
        weight=0.25,
    )
u(F_, "rfft2", "L.fft.rfft2({0})", "f", None, mat_params, weight=0.25)
u(F_, "rfftn", "L.fft.rfftn({0})", "f", None, mat_params, weight=0.2)
u(F_, "irfft2", "L.fft.irfft2({0})", "fc", None, mat_params, weight=0.25)
u(F_, "irfftn", "L.fft.irfftn({0})", "fc", None, mat_params, weight=0.2)
u(F_, "fftshift", "L.fft.fftshift({0})", "fc", weight=0.2)
u(
    F_,
    "ifftshift",
    "L.fft.ifftshift({0}, dim={dim!r})",
    "fc",
    None,
    lambda c, m: {"dim": c.rng.randrange(len(m.shape))} if m.shape else None,
    weight=0.2,
)

# ------------------------------------------------------------------ special
S_ = "special"
_pos = real_interval(0.1, 20)
for _n in ("i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr", "expit", "erfcx"):
    u(S_, _n, "L.special.%s({0})" % _n, dom=lambda a, p: _all(a[0].abs() < 5))
u(S_, "i0_top", "L.i0({0})", weight=0.15)
u(S_, "ndtri", "L.special.ndtri({0})", dom=real_interval(0.05, 0.95))
u(S_, "entr", "L.special.entr({0})", dom=_pos)
u(S_, "sinc", "L.sinc({0})", "fc", lambda a, p: _all(a[0].abs() > 0.1) and _all(_re(a[0]).abs() < 3))
u(S_, "special_sinc", "L.special.sinc({0})", "f", weight=0.15)
u(S_, "gammaln", "L.special.gammaln({0})", dom=_pos)
u(S_, "psi", "L.special.psi({0})", dom=_pos)
u(
    S_,
    "multigammaln",
    "L.special.multigammaln({0}, {p!r})",
    dom=lambda a, p: _all(a[0] > (p["p"] - 1) / 2 + 0.2),
    params=lambda c, m: {"p": c.rng.choice([1, 2, 3])},
)
u(S_, "mvlgamma", "L.mvlgamma({0}, 2)", dom=lambda a, p: _all(a[0] > 0.7), weight=0.15)
u(
    S_,
    "special_polygamma",
    "L.special.polygamma({n!r}, {0})",
    dom=_pos,
    params=lambda c, m: {"n": c.rng.choice([0, 1, 2])},
)
u(S_, "special_logit", "L.special.logit({0})", dom=real_interval(0.1, 0.9), weight=0.2)
u(S_, "special_exp2", "L.special.exp2({0})", dom=lambda a, p: _all(a[0] < 5), weight=0.15)
u(S_, "special_expm1", "L.special.expm1({0})", dom=lambda a, p: _all(a[0] < 4), weight=0.15)
u(S_, "special_log1p", "L.special.log1p({0})", dom=lambda a, p: _all(a[0] > -0.9), weight=0.15)
u(S_, "special_erfinv", "L.special.erfinv({0})", dom=real_interval(-0.9, 0.9), weight=0.15)
u(
    S_,
    "special_logsumexp",
    "L.special.logsumexp({0}, {dim!r})",
    "f",
    None,
    lambda c, m: {"dim": c.rng.randrange(len(m.shape))} if m.shape else None,
    weight=0.2,
)
u(
    S_,
    "special_softmax",
    "L.special.softmax({0}, {dim!r})",
    "f",
    None,
    lambda c, m: {"dim": c.rng.randrange(len(m.shape))} if m.shape else None,
    weight=0.2,
)
op(S_, "xlog1py", "L.special.xlog1py({0}, {1})", binary_gen("f"), lambda a, p: _all(a[1] > -0.9))
op(S_, "special_xlogy", "L.special.xlogy({0}, {1})", binary_gen("f"), lambda a, p: _all(a[1] > 0.1), weight=0.2)

# ------------------------------------------------------------------ nn.functional
N_ = "nn"


def away(*pts, m=M):
    return lambda a, p: all(_all((a[0] - q).abs() > m) for q in pts)


for _n, _dom in (
    ("gelu", None),
    ("silu", None),
    ("mish", None),
    ("elu", away(0)),
    ("celu", away(0)),
    ("selu", away(0)),
    ("softplus", None),
    ("softsign", away(0)),
    ("logsigmoid", None),
    ("hardtanh", away(-1, 1)),
    ("relu6", away(0, 6)),
    ("hardsigmoid", away(-3, 3)),
    ("hardswish", away(-3, 3)),
    ("softshrink", away(-0.5, 0.5)),
    ("hardshrink", away(-0.5, 0.5)),
    ("tanhshrink", None),
    ("tanh", None),
    ("sigmoid", None),
):
    u(N_, "F." + _n, "L.nn.functional.%s({0})" % _n, dom=_dom)
u(N_, "F.gelu_tanh", "L.nn.functional.gelu({0}, approximate='tanh')")
u(N_, "F.leaky_relu", "L.nn.functional.leaky_relu({0}, 0.2)", dom=away(0))
u(N_, "F.elu_a", "L.nn.functional.elu({0}, alpha=0.7)", dom=away(0), weight=0.15)
u(N_, "F.softplus_b", "L.nn.functional.softplus({0}, beta=2.0, threshold=1.0)", dom=away(0.5), weight=0.2)
u(N_, "F.threshold", "L.nn.functional.threshold({0}, 0.1, -0.5)", dom=away(0.1), weight=0.2)
_dimp = lambda c, m: {"dim": c.rng.randrange(-len(m.shape), len(m.shape))} if m.shape else None  # noqa: E731
u(N_, "F.softmin", "L.nn.functional.softmin({0}, {dim!r})", params=_dimp)
u(N_, "F.softmax", "L.nn.functional.softmax({0}, {dim!r})", params=_dimp, weight=0.2)
u(N_, "F.log_softmax", "L.nn.functional.log_softmax({0}, {dim!r})", params=_dimp, weight=0.2)
u(
    N_,
    "F.glu",
    "L.nn.functional.glu({0}, {dim!r})",
    params=lambda c, m: (lambda ds: {"dim": c.rng.choice(ds)} if ds else None)(
        [d for d, n in enumerate(m.shape) if n % 2 == 0 and n > 0]
    ),
)
u(
    N_,
    "F.normalize",
    "L.nn.functional.normalize({0}, dim={dim!r})",
    "fc",
    lambda a, p: _all(a[0].norm(dim=p["dim"]) > 0.2),
    _dimp,
)
u(
    N_,
    "F.layer_norm",
    "L.nn.functional.layer_norm({0}, {0}.shape[-1:])",
    "f",
    lambda a, p: a[0].shape[-1] > 1 and _all(a[0].var(-1) > 0.05),
    lambda c, m: {} if m.shape else None,
)
u(
    N_,
    "F.rms_norm",
    "L.nn.functional.rms_norm({0}, {0}.shape[-1:])",
    "f",
    None,
    lambda c, m: {} if m.shape else None,
    weight=0.2,
)
u(
    N_,
    "F.pad",
    "L.nn.functional.pad({0}, ({a!r}, {b!r}), mode={mode!r})",
    "f",
    None,
    lambda c, m: (
        {"a": 1, "b": c.rng.choice([0, 1]), "mode": c.rng.choice(["constant", "replicate", "reflect"])}
        if 2 <= len(m.shape) <= 3 and m.shape[-1] >= 2 and 0 not in m.shape
        else None
    ),
)
u(
    N_,
    "F.avg_pool1d",
    "L.nn.functional.avg_pool1d({0}, 2)",
    "f",
    None,
    lambda c, m: {} if len(m.shape) == 3 and m.shape[-1] >= 2 else None,
    weight=0.8,
)
u(
    N_,
    "F.max_pool1d",
    "L.nn.functional.max_pool1d({0}, 2)",
    "f",
    lambda a, p: no_ties(a[0], -1),
    lambda c, m: {} if len(m.shape) == 3 and m.shape[-1] >= 2 else None,
    weight=0.8,
)
u(
    N_,
    "F.pdist",
    "L.nn.functional.pdist({0})",
    "f",
    lambda a, p: _all(torch.nn.functional.pdist(a[0]) > 0.1),
    # (torch 2.13's backward of pdist segfaults on an empty input: only >= 2 rows)
    lambda c, m: {} if len(m.shape) == 2 and m.shape[0] >= 2 and m.shape[1] > 0 else None,
    weight=0.8,
)
op(
    N_,
    "F.linear",
    "L.nn.functional.linear({0}, {1})",
    _two(
        lambda m: len(m.shape) >= 1 and m.kind == "f",
        lambda ma, m: m.kind == "f" and len(m.shape) == 2 and m.shape[-1] == ma.shape[-1],
    ),
)
op(
    N_,
    "F.cosine_similarity",
    "L.nn.functional.cosine_similarity({0}, {1}, dim=-1)",
    _two(lambda m: len(m.shape) >= 1 and m.kind == "f", lambda ma, m: m.kind == "f" and m.shape == ma.shape),
    lambda a, p: _all(a[0].norm(dim=-1) > 0.2) and _all(a[1].norm(dim=-1) > 0.2),
)
op(
    N_,
    "F.pairwise_distance",
    "L.nn.functional.pairwise_distance({0}, {1})",
    _two(lambda m: len(m.shape) >= 1 and m.kind == "f", lambda ma, m: m.kind == "f" and m.shape == ma.shape),
    lambda a, p: _all((a[0] - a[1]).norm(dim=-1) > 0.2),
    weight=0.2,
)
_red = lambda c, m: {"red": c.rng.choice(["mean", "sum", "none"])}  # noqa: E731
_same_f = lambda m: m.kind == "f"  # noqa: E731


def loss(name, render, dom=None, weight=0.3):
    op(
        N_,
        name,
        render,
        lambda ctx: (lambda r: None if r is None else (r[0], _red(ctx, None)))(
            _two(_same_f, lambda ma, m: m.kind == "f" and m.shape == ma.shape)(ctx)
        ),
        dom,
        weight,
    )


loss("F.mse_loss", "L.nn.functional.mse_loss({0}, {1}, reduction={red!r})")
loss("F.l1_loss", "L.nn.functional.l1_loss({0}, {1}, reduction={red!r})", lambda a, p: _all((a[0] - a[1]).abs() > M))
loss(
    "F.smooth_l1_loss",
    "L.nn.functional.smooth_l1_loss({0}, {1}, reduction={red!r})",
    lambda a, p: _all(((a[0] - a[1]).abs() - 1).abs() > M) and _all((a[0] - a[1]).abs() > M),
)
loss(
    "F.huber_loss",
    "L.nn.functional.huber_loss({0}, {1}, reduction={red!r}, delta=0.5)",
    lambda a, p: _all(((a[0] - a[1]).abs() - 0.5).abs() > M) and _all((a[0] - a[1]).abs() > M),
)
loss("F.soft_margin_loss", "L.nn.functional.soft_margin_loss({0}, {1}, reduction={red!r})")
loss("F.bce_logits", "L.nn.functional.binary_cross_entropy_with_logits({0}, {1}.sigmoid(), reduction={red!r})")
loss(
    "F.bce",
    "L.nn.functional.binary_cross_entropy({0}.sigmoid(), {1}.sigmoid(), reduction={red!r})",
    lambda a, p: _all(a[0].abs() < 3),
)
# (exp(target) of a large target makes second derivatives cancel terms of size e^target: their
# rounding, which differs between the libraries' formula orders, is then amplified past any tolerance)
loss("F.kl_div", "L.nn.functional.kl_div({0}, {1}, reduction={red!r}, log_target=True)", lambda a, p: _all(a[1] < 3))
loss(
    "F.poisson_nll", "L.nn.functional.poisson_nll_loss({0}, {1}.exp(), reduction={red!r})", lambda a, p: _all(a[0] < 3)
)
loss(
    "F.gaussian_nll",
    "L.nn.functional.gaussian_nll_loss({0}, {1}, {0}.exp(), reduction={red!r})",
    lambda a, p: _all(a[0].abs() < 3) and _all(a[0].exp() > 1e-6 + 0.05),
    weight=0.2,
)

# ------------------------------------------------------------------ sort, selection, scans
O_ = "sort"
_distinct = lambda a, p: no_ties(a[0], p.get("dim"), m=0.05)  # noqa: E731
u(
    O_,
    "sort",
    "L.sort({0}, {dim!r}, descending={desc!r})",
    dom=_distinct,
    tags=("multi",),
    params=lambda c, m: {
        "dim": c.rng.randrange(-len(m.shape), len(m.shape)) if m.shape else 0,
        "desc": c.rng.random() < 0.5,
    },
)
u(O_, "argsort", "L.argsort({0}, {dim!r})", dom=_distinct, params=_dimp, weight=0.2)


def _off_sequence(a, p):  # no value within a margin of a sequence element (a tie picks a side)
    s = a[0].reshape(-1)
    return s.numel() == 0 or bool(((a[1].reshape(-1, 1) - s).abs() > M).all())


op(
    O_,
    "searchsorted",
    "L.searchsorted(L.sort({0}.flatten()).values, {1}, right={r!r})",
    binary_gen("f", params=lambda c, m: {"r": c.rng.random() < 0.5}),
    _off_sequence,
    weight=0.25,
)
op(
    O_,
    "searchsorted_side",
    "L.searchsorted(L.sort({0}.flatten()).values, {1}, side='right')",
    lambda ctx: (lambda i: None if i is None else (lambda j: None if j is None else ([i, j], {}))(ctx.pick("f")))(
        ctx.pick("f")
    ),
    _off_sequence,
    weight=0.15,
)


u(
    O_,
    "msort",
    "L.sort({0}, 0).values",
    dom=lambda a, p: no_ties(a[0], 0),
    params=lambda c, m: {} if m.shape else None,
    weight=0.2,
)


def _k_params(ctx, m):
    if not m.shape or 0 in m.shape:
        return None
    d = ctx.rng.randrange(len(m.shape))
    return {"dim": d, "k": ctx.rng.randint(1, m.shape[d]), "lg": ctx.rng.random() < 0.5}


u(O_, "topk", "L.topk({0}, {k!r}, {dim!r}, largest={lg!r})", dom=_distinct, params=_k_params, tags=("multi",))
u(O_, "kthvalue", "L.kthvalue({0}, {k!r}, {dim!r})", dom=_distinct, params=_k_params, tags=("multi",))
u(O_, "median", "L.median({0})", dom=lambda a, p: no_ties(a[0]), params=lambda c, m: {} if 0 not in m.shape else None)
u(
    O_,
    "median_dim",
    "L.median({0}, {dim!r})",
    dom=_distinct,
    params=lambda c, m: _dimp(c, m) if 0 not in m.shape else None,
    tags=("multi",),
)
u(
    O_,
    "nanmedian",
    "L.nanmedian({0}, {dim!r})",
    dom=_distinct,
    params=lambda c, m: _dimp(c, m) if 0 not in m.shape else None,
    tags=("multi",),
    weight=0.2,
)
u(
    O_,
    "mode",
    "L.mode({0}, {dim!r})",
    dom=_distinct,
    params=lambda c, m: _dimp(c, m) if 0 not in m.shape else None,
    tags=("multi",),
    weight=0.2,
)
u(
    O_,
    "quantile",
    "L.quantile({0}, {q!r}, dim={dim!r}, interpolation={ip!r})",
    dom=_distinct,
    params=lambda c, m: (
        None
        if not m.shape or 0 in m.shape
        else {
            "dim": c.rng.randrange(len(m.shape)),
            "q": c.rng.choice([0.3, 0.5, 0.77, [0.2, 0.9]]),
            "ip": c.rng.choice(["linear", "linear", "midpoint", "lower", "higher", "nearest"]),
        }
    ),
)
u(
    O_,
    "nanquantile",
    "L.nanquantile({0}, 0.4)",
    dom=lambda a, p: no_ties(a[0]),
    params=lambda c, m: {} if 0 not in m.shape else None,
    weight=0.2,
)
u(O_, "cummax", "L.cummax({0}, {dim!r})", dom=_distinct, params=_dimp, tags=("multi",))
u(O_, "cummin", "L.cummin({0}, {dim!r})", dom=_distinct, params=_dimp, tags=("multi",), weight=0.2)
u(O_, "logcumsumexp", "L.logcumsumexp({0}, {dim!r})", params=_dimp)
u(O_, "aminmax", "L.aminmax({0}, dim={dim!r})", dom=_distinct, params=_dimp, tags=("multi",), weight=0.2)

# ------------------------------------------------------------------ scatter, index writes, takes
C_ = "scatter"


def _perm_index(ctx, shape, dim, n_src):
    """An index of shape `shape` whose entries along dim are distinct (no position written twice)."""
    idx = torch.empty(shape, dtype=torch.long)
    for pos in (
        torch.cartesian_prod(*[torch.arange(s) for s in shape[:dim] + shape[dim + 1 :]])
        .reshape(-1, len(shape) - 1)
        .tolist()
        if len(shape) > 1
        else [[]]
    ):
        perm = ctx.rng.sample(range(n_src), shape[dim])
        for j, v in enumerate(perm):
            full = list(pos[:dim]) + [j] + list(pos[dim:])
            idx[tuple(full)] = v
    return idx


def _scatter_gen(kind, unique):
    def gen(ctx):
        a = ctx.pick("fc" if kind != "reduce" else "f", pred=lambda m: len(m.shape) >= 1 and 0 not in m.shape)
        if a is None:
            return None
        sh = ctx.meta(a).shape
        d = ctx.rng.randrange(len(sh))
        ish = [ctx.rng.randint(1, n) for n in sh]
        src = ctx.choose(
            lambda m: (
                m.kind in ("f" if ctx.meta(a).kind == "f" else "fc")
                and len(m.shape) == len(sh)
                and all(x >= y for x, y in zip(m.shape, ish))
            )
        )
        if src is None:
            return None
        ish = [min(x, y) for x, y in zip(ish, ctx.meta(src).shape)]
        if unique:
            idx = _perm_index(ctx, ish, d, sh[d])
        else:
            idx = torch.tensor([ctx.rng.randrange(sh[d]) for _ in range(math.prod(ish))]).reshape(ish)
        p = {"dim": d, "idx": repr(idx.tolist())}
        if kind == "reduce":
            p["red"] = ctx.rng.choice(["sum", "prod", "mean", "amax", "amin"])
            p["inc"] = ctx.rng.random() < 0.5
        return [a, src], p

    return gen


def _scatter_red_dom(a, p):
    if p["red"] in ("amax", "amin"):  # no ties among the values meeting at one position
        return no_ties(torch.cat([a[0].reshape(-1), a[1].reshape(-1)]), None, m=0.05)
    if p["red"] == "prod":
        return _all(a[1].abs() > 0.2) and _all(a[0].abs() > 0.2)
    return True


op(C_, "scatter", "L.scatter({0}, {dim!r}, L.tensor({idx}), {1})", _scatter_gen("plain", True))
op(C_, "scatter_add", "L.scatter_add({0}, {dim!r}, L.tensor({idx}), {1})", _scatter_gen("plain", False))
op(
    C_,
    "scatter_reduce",
    "L.scatter_reduce({0}, {dim!r}, L.tensor({idx}), {1}, {red!r}, include_self={inc!r})",
    _scatter_gen("reduce", False),
    _scatter_red_dom,
)
op(
    C_,
    "scatter_s",
    "L.scatter({0}, {dim!r}, L.tensor({idx}), 0.5)",
    lambda ctx: (lambda r: None if r is None else ([r[0][0]], r[1]))(_scatter_gen("plain", True)(ctx)),
    weight=0.2,
)


def _index_gen(unique, with_src=True):
    def gen(ctx):
        a = ctx.pick("fc", pred=lambda m: len(m.shape) >= 1 and 0 not in m.shape)
        if a is None:
            return None
        sh = ctx.meta(a).shape
        d = ctx.rng.randrange(len(sh))
        k = ctx.rng.randint(1, sh[d])
        idx = ctx.rng.sample(range(sh[d]), k) if unique else [ctx.rng.randrange(sh[d]) for _ in range(k)]
        p = {"dim": d, "idx": idx}
        if not with_src:
            return [a], p
        ssh = tuple(k if j == d else n for j, n in enumerate(sh))
        kinds = "fc" if ctx.meta(a).kind == "c" else "f"
        b = ctx.choose(lambda m: m.kind in kinds and m.shape == ssh)
        return None if b is None else ([a, b], p)

    return gen


op(C_, "index_add", "L.index_add({0}, {dim!r}, L.tensor({idx!r}), {1}, alpha=0.7)", _index_gen(False))
op(C_, "index_copy", "L.index_copy({0}, {dim!r}, L.tensor({idx!r}), {1})", _index_gen(True))
op(C_, "index_fill", "L.index_fill({0}, {dim!r}, L.tensor({idx!r}), -0.3)", _index_gen(False, False))


def _take_gen(ctx):
    a = ctx.pick("fc", pred=lambda m: 0 not in m.shape and len(m.shape) >= 1)
    if a is None:
        return None
    n = math.prod(ctx.meta(a).shape)
    return [a], {"idx": [ctx.rng.randrange(-n, n) for _ in range(ctx.rng.randint(1, 5))]}


op(C_, "take", "L.take({0}, L.tensor({idx!r}))", _take_gen)
op(
    C_,
    "put",
    "{0}.put(L.tensor({idx!r}), {0}.flatten()[:{k}] * 2)",
    lambda ctx: (
        lambda r: (
            None
            if r is None
            else (r[0], {"idx": sorted({i % 10**6 for i in r[1]["idx"]}), "k": len({i % 10**6 for i in r[1]["idx"]})})
        )
    )(_take_gen(ctx)),
    weight=0.2,
)


def _tad_gen(ctx):
    a = ctx.pick("fc", pred=lambda m: 0 not in m.shape and len(m.shape) >= 1)
    if a is None:
        return None
    sh = ctx.meta(a).shape
    d = ctx.rng.randrange(len(sh))
    ish = [1 if ctx.rng.random() < 0.3 else n for n in sh]
    ish[d] = ctx.rng.randint(1, 3)
    vals = [ctx.rng.randrange(sh[d]) for _ in range(math.prod(ish))]
    return [a], {"dim": d, "idx": repr(torch.tensor(vals).reshape(ish).tolist())}


op(C_, "take_along_dim", "L.take_along_dim({0}, L.tensor({idx}), {dim!r})", _tad_gen)
# an index computed from the data (batched under vmap, not a constant): the indexing composites
# must take it as a tensor, not read its array
u(C_, "take_along_argsort", "L.take_along_dim({0}, L.argsort({0}, {dim!r}), {dim!r})", dom=_distinct, params=_dimp)
u(C_, "take_argsort", "L.take({0}, L.argsort({0}.reshape(-1), 0))", dom=lambda a, p: no_ties(a[0], None, m=0.05))
u(C_, "gather_argsort", "L.gather({0}, {dim!r}, L.argsort({0}, {dim!r}))", dom=_distinct, params=_dimp)


def _masked_gen(kind):
    def gen(ctx):
        m = ctx.pick("b")
        if m is None:
            return None
        a = ctx.choose(lambda v: v.kind in "fc" and v.shape == ctx.meta(m).shape)
        if a is None:
            return None
        if kind == "scatter":
            b = ctx.choose(lambda v: v.kind == ctx.meta(a).kind and math.prod(v.shape) >= math.prod(ctx.meta(a).shape))
            return None if b is None else ([a, m, b], {})
        return [a, m], {}

    return gen


op(C_, "masked_select", "L.masked_select({0}, {1})", _masked_gen("select"))
op(C_, "masked_scatter", "L.masked_scatter({0}, {1}, {2})", _masked_gen("scatter"))

# ------------------------------------------------------------------ misc element-wise and shape ops
X_ = "misc"


def _three_same(ctx, kinds="fc"):
    a = ctx.pick(kinds)
    if a is None:
        return None
    b = ctx.partner(a, kinds)
    c = ctx.partner(a, kinds) if b is not None else None
    return None if c is None else [a, b, c]


op(X_, "addcmul", "L.addcmul({0}, {1}, {2}, value=0.6)", lambda ctx: (lambda r: r and (r, {}))(_three_same(ctx)))
op(
    X_,
    "addcdiv",
    "L.addcdiv({0}, {1}, {2}, value=-0.6)",
    lambda ctx: (lambda r: r and (r, {}))(_three_same(ctx)),
    lambda a, p: _all(a[2].abs() > 0.2),
)
op(X_, "lerp", "L.lerp({0}, {1}, {2})", lambda ctx: (lambda r: r and (r, {}))(_three_same(ctx, "f")))
op(X_, "lerp_s", "L.lerp({0}, {1}, 0.3)", binary_gen("fc"), weight=0.2)
u(
    X_,
    "repeat",
    "{0}.repeat({reps})",
    "fc",
    None,
    lambda c, m: {
        "reps": ", ".join(str(c.rng.choice([1, 2])) for _ in range(len(m.shape) + c.rng.choice([0, 1]))) or "2"
    },
)
u(X_, "tile", "L.tile({0}, ({r!r},))", "fc", None, lambda c, m: {"r": c.rng.choice([1, 2])}, weight=0.2)
u(
    X_,
    "repeat_interleave",
    "L.repeat_interleave({0}, 2, dim={dim!r})",
    "fc",
    None,
    lambda c, m: {"dim": c.rng.randrange(len(m.shape))} if m.shape else None,
    weight=0.2,
)
u(
    X_,
    "movedim",
    "L.movedim({0}, {a!r}, {b!r})",
    "fc",
    None,
    lambda c, m: {"a": c.rng.randrange(len(m.shape)), "b": c.rng.randrange(len(m.shape))} if m.shape else None,
)
u(X_, "moveaxis", "L.moveaxis({0}, 0, -1)", "fc", None, lambda c, m: {} if m.shape else None, weight=0.15)
u(
    X_,
    "rot90",
    "L.rot90({0}, {k!r}, [0, 1])",
    "fc",
    None,
    lambda c, m: {"k": c.rng.choice([1, 2, 3, -1])} if len(m.shape) >= 2 else None,
)
u(
    X_,
    "diff",
    "L.diff({0}, dim={dim!r})",
    "fc",
    None,
    lambda c, m: {"dim": c.rng.randrange(len(m.shape))} if m.shape else None,
)
u(
    X_,
    "tensor_split",
    "L.tensor_split({0}, {n!r}, dim={dim!r})",
    "fc",
    None,
    lambda c, m: {"n": c.rng.choice([2, 3]), "dim": c.rng.randrange(len(m.shape))} if m.shape else None,
    tags=("multi",),
    weight=0.2,
)
u(X_, "unflatten", "{0}.unflatten(-1, (1, -1))", "fc", None, lambda c, m: {} if m.shape else None, weight=0.2)
u(X_, "atleast_2d", "L.atleast_2d({0})", "fc", weight=0.15)
u(
    X_,
    "std_mean",
    "L.std_mean({0}, {dim!r})",
    "fc",
    lambda a, p: a[0].shape[p["dim"]] > 1 and _all(a[0].var(p["dim"]) > 0.01),
    _dimp,
    tags=("multi",),
    weight=0.2,
)
u(
    X_,
    "var_mean",
    "L.var_mean({0}, {dim!r})",
    "fc",
    lambda a, p: a[0].shape[p["dim"]] > 1 and _all(a[0].var(p["dim"]) > 0.01),
    _dimp,
    tags=("multi",),
    weight=0.2,
)
u(
    X_,
    "trapezoid",
    "L.trapezoid({0}, dim={dim!r})",
    "fc",
    None,
    lambda c, m: {"dim": c.rng.randrange(-len(m.shape), len(m.shape))} if m.shape else None,
    weight=0.25,
)
u(
    X_,
    "trapezoid_dx",
    "L.trapezoid({0}, dx={s!r}, dim=0)",
    "fc",
    None,
    lambda c, m: {"s": round(c.rng.uniform(0.2, 2), 2)} if m.shape else None,
    weight=0.15,
)
op(
    X_,
    "trapezoid_x",
    "L.trapezoid({0}, {1})",
    _two(
        lambda m: len(m.shape) >= 1,
        lambda ma, m: m.kind == "f" and (m.shape == ma.shape or m.shape == ma.shape[-1:]),
    ),
    weight=0.25,
)


def _count_dims(ctx, m):
    if not m.shape or ctx.rng.random() < 0.3:
        return {"dim": None}
    return {"dim": tuple(sorted(ctx.rng.sample(range(len(m.shape)), ctx.rng.randint(1, len(m.shape)))))}


# (a computed zero may be a rounding-level nonzero in the other library, e.g. logaddexp2(-1, -1):
# numbers away from zero; exact zeros come from masks and relu)
_off_zero = lambda a, p: a[0].dtype == torch.bool or _all(a[0].abs() > M)  # noqa: E731
u(X_, "count_nonzero", "L.count_nonzero({0}, dim={dim!r})", "fcb", _off_zero, _count_dims, weight=0.2)
u(X_, "count_nonzero_relu", "{0}.relu().count_nonzero()", "f", _off_zero, None, weight=0.15)
u(X_, "nansum", "L.nansum({0})", "fc", weight=0.15)
u(X_, "nanmean", "L.nanmean({0})", "f", weight=0.15)
op(X_, "true_divide", "L.true_divide({0}, {1})", binary_gen("fc"), lambda a, p: _all(a[1].abs() > 0.2), weight=0.15)
op(X_, "broadcast_tensors", "L.broadcast_tensors({0}, {1})", binary_gen("fc"), tags=("multi",), weight=0.2)

# ------------------------------------------------------------------ second batch: convolutions, pools, norms, losses
op(
    N_,
    "F.conv1d",
    "L.nn.functional.conv1d({0}, {1}, padding={pad!r})",
    lambda ctx: (lambda r: None if r is None else (r[0], {"pad": ctx.rng.choice([0, 1])}))(
        _two(
            lambda m: len(m.shape) == 3 and m.kind == "f" and 0 not in m.shape,
            lambda ma, m: (
                m.kind == "f" and len(m.shape) == 3 and m.shape[1] == ma.shape[1] and m.shape[2] <= ma.shape[2]
            ),
        )(ctx)
    ),
    weight=0.8,
)
op(
    N_,
    "F.conv2d_dw",
    "L.nn.functional.conv2d({0}.unsqueeze(0), {1}.unsqueeze(1), padding=1, groups={0}.shape[0])",
    _two(
        lambda m: len(m.shape) == 3 and m.kind == "f" and 0 not in m.shape,
        lambda ma, m: (
            m.kind == "f"
            and len(m.shape) == 3
            and m.shape[0] == ma.shape[0]
            and m.shape[1] <= ma.shape[1] + 2
            and m.shape[2] <= ma.shape[2] + 2
        ),
    ),
    weight=0.8,
)
op(
    N_,
    "F.conv_transpose1d",
    "L.nn.functional.conv_transpose1d({0}, {1})",
    _two(
        lambda m: len(m.shape) == 3 and m.kind == "f" and 0 not in m.shape,
        lambda ma, m: m.kind == "f" and len(m.shape) == 3 and m.shape[0] == ma.shape[1],
    ),
    weight=0.8,
)
_3d = lambda c, m: {} if len(m.shape) == 3 and 0 not in m.shape else None  # noqa: E731
u(N_, "F.adaptive_avg_pool1d", "L.nn.functional.adaptive_avg_pool1d({0}, 1)", params=_3d, weight=0.8)
u(
    N_,
    "F.adaptive_max_pool1d",
    "L.nn.functional.adaptive_max_pool1d({0}, 1)",
    dom=lambda a, p: no_ties(a[0], -1),
    params=_3d,
    weight=0.8,
)
u(N_, "F.avg_pool2d", "L.nn.functional.avg_pool2d({0}, 2, padding=1)", params=_3d, weight=0.8)
u(
    N_,
    "F.max_pool2d",
    "L.nn.functional.max_pool2d({0}, 2)",
    dom=lambda a, p: no_ties(a[0], (-2, -1)),
    params=lambda c, m: {} if len(m.shape) == 3 and min(m.shape[1:]) >= 2 else None,
    weight=0.8,
)
u(
    N_,
    "F.batch_norm",
    "L.nn.functional.batch_norm({0}, None, None, training=True)",
    dom=lambda a, p: _all(a[0].transpose(0, 1).reshape(a[0].shape[1], -1).var(1) > 0.05),
    params=lambda c, m: (
        {}
        if len(m.shape) in (2, 3) and m.shape[0] * (m.shape[2] if len(m.shape) == 3 else 1) > 1 and 0 not in m.shape
        else None
    ),
    weight=0.25,
)
u(
    N_,
    "F.group_norm",
    "L.nn.functional.group_norm({0}, 1)",
    dom=lambda a, p: _all(a[0].reshape(a[0].shape[0], -1).var(1) > 0.05),
    params=lambda c, m: {} if len(m.shape) == 3 and 0 not in m.shape else None,
    weight=0.8,
)
u(
    N_,
    "F.instance_norm",
    "L.nn.functional.instance_norm({0})",
    dom=lambda a, p: _all(a[0].var(-1) > 0.05),
    params=lambda c, m: {} if len(m.shape) == 3 and m.shape[-1] > 1 else None,
    weight=0.8,
)
u(N_, "F.interpolate_linear", "L.nn.functional.interpolate({0}, scale_factor=2, mode='linear')", params=_3d, weight=0.8)
u(N_, "F.interpolate_nearest", "L.nn.functional.interpolate({0}, size=3)", params=_3d, weight=0.8)
u(
    N_,
    "F.pixel_shuffle",
    "L.nn.functional.pixel_shuffle({0}.flatten()[:4].reshape(1, 4, 1, 1), 2)",
    params=lambda c, m: {} if math.prod(m.shape) >= 4 else None,
    weight=0.2,
)
u(
    N_,
    "F.unfold",
    "L.nn.functional.unfold({0}.unsqueeze(0), 2)",
    params=lambda c, m: {} if len(m.shape) == 3 and min(m.shape[1:]) >= 2 else None,
    weight=0.8,
)
u(N_, "F.dropout_eval", "L.nn.functional.dropout({0}, 0.5, training=False)", "fc", weight=0.1)
u(N_, "F.celu_a", "L.nn.functional.celu({0}, 0.5)", dom=away(0), weight=0.1)
op(N_, "F.prelu", "L.nn.functional.prelu({0}, L.tensor([0.25], dtype=L.float64))", unary_gen("f"), away(0), weight=0.2)
op(
    N_,
    "F.bilinear",
    "L.nn.functional.bilinear({0}, {0}, {1}.unsqueeze(0))",
    _two(
        lambda m: len(m.shape) == 2 and m.kind == "f",
        lambda ma, m: m.kind == "f" and len(m.shape) == 2 and m.shape == (ma.shape[1], ma.shape[1]),
    ),
    weight=0.8,
)


def _target_gen(ctx):
    a = ctx.pick("f", pred=lambda m: len(m.shape) == 2 and 0 not in m.shape and m.shape[1] > 1)
    if a is None:
        return None
    n, c = ctx.meta(a).shape
    return [a], {"t": [ctx.rng.randrange(c) for _ in range(n)], "red": ctx.rng.choice(["mean", "sum", "none"])}


op(N_, "F.cross_entropy", "L.nn.functional.cross_entropy({0}, L.tensor({t!r}), reduction={red!r})", _target_gen)
op(
    N_,
    "F.cross_entropy_ls",
    "L.nn.functional.cross_entropy({0}, L.tensor({t!r}), label_smoothing=0.1)",
    _target_gen,
    weight=0.15,
)
op(N_, "F.nll_loss", "L.nn.functional.nll_loss({0}, L.tensor({t!r}), reduction={red!r})", _target_gen, weight=0.25)
op(
    N_,
    "F.cross_entropy_prob",
    "L.nn.functional.cross_entropy({0}, {1}.softmax(-1))",
    _two(lambda m: len(m.shape) == 2 and m.kind == "f", lambda ma, m: m.kind == "f" and m.shape == ma.shape),
    weight=0.2,
)
op(
    N_,
    "F.multilabel_soft_margin",
    "L.nn.functional.multilabel_soft_margin_loss({0}, ({1} > 0).double())",
    _two(lambda m: len(m.shape) == 2 and m.kind == "f", lambda ma, m: m.kind == "f" and m.shape == ma.shape),
    lambda a, p: _all(a[1].abs() > M),  # the target thresholds {1} at 0
    weight=0.8,
)
op(
    N_,
    "F.margin_ranking",
    "L.nn.functional.margin_ranking_loss({0}, {1}, ({0} * 0 + 1), margin=0.1)",
    _two(lambda m: len(m.shape) == 1 and m.kind == "f", lambda ma, m: m.kind == "f" and m.shape == ma.shape),
    lambda a, p: _all((a[1] - a[0] + 0.1).abs() > M),
    weight=0.15,
)
op(
    N_,
    "F.cosine_embedding",
    "L.nn.functional.cosine_embedding_loss({0}, {1}, L.ones({0}.shape[0]), margin=0.1)",
    _two(lambda m: len(m.shape) == 2 and m.kind == "f", lambda ma, m: m.kind == "f" and m.shape == ma.shape),
    lambda a, p: _all(a[0].norm(dim=-1) > 0.2) and _all(a[1].norm(dim=-1) > 0.2),
    weight=0.15,
)
op(
    N_,
    "F.triplet_margin",
    "L.nn.functional.triplet_margin_loss({0}, {1}, {1}.flip(0))",
    _two(lambda m: len(m.shape) == 2 and m.kind == "f", lambda ma, m: m.kind == "f" and m.shape == ma.shape),
    lambda a, p: (
        _all(((a[0] - a[1]).norm(dim=-1) - (a[0] - a[1].flip(0)).norm(dim=-1) + 1).abs() > M)
        and _all((a[0] - a[1]).norm(dim=-1) > 0.1)
        and _all((a[0] - a[1].flip(0)).norm(dim=-1) > 0.1)
    ),
    weight=0.8,
)
op(
    N_,
    "F.sdpa",
    "L.nn.functional.scaled_dot_product_attention({0}, {1}, {1})",
    _two(
        lambda m: len(m.shape) >= 2 and m.kind == "f",
        lambda ma, m: (
            m.kind == "f"
            and len(m.shape) == len(ma.shape)
            and m.shape[-1] == ma.shape[-1]
            and m.shape[:-2] == ma.shape[:-2]
        ),
    ),
)
op(
    N_,
    "F.embedding",
    "L.nn.functional.embedding(L.tensor({idx!r}), {0})",
    lambda ctx: (
        lambda a: None if a is None else ([a], {"idx": [ctx.rng.randrange(ctx.meta(a).shape[0]) for _ in range(3)]})
    )(ctx.pick("fc", pred=lambda m: len(m.shape) == 2 and m.shape[0] > 0)),
    weight=0.25,
)

op(
    L_,
    "lu_solve",
    "(lambda f: L.linalg.lu_solve(f[0], f[1], {1}))(L.linalg.lu_factor({0}))",
    _two(lambda m: _sq(m) and len(m.shape) == 2, lambda ma, m: len(m.shape) == 2 and m.shape[0] == ma.shape[0]),
    lambda a, p: well_cond()(a, p) and _lu_pivots_clear(a[0]),
    weight=0.8,
)
u(
    L_,
    "lu",
    "L.linalg.lu({0})",
    "fc",
    lambda a, p: well_cond()(a, p) and _lu_pivots_clear(a[0]),
    mat_params,
    tags=("multi",),
    weight=0.25,
)
u(L_, "linalg_norm", "L.linalg.norm({0})", "fc", lambda a, p: bool(a[0].norm() > 0.1), weight=0.15)
u(L_, "linalg_diagonal", "L.linalg.diagonal({0})", "fc", None, mat_params, weight=0.1)
u(
    L_,
    "tensorinv",
    "L.linalg.tensorinv({0}, 1)",
    "fc",
    well_cond(),
    lambda c, m: {} if len(m.shape) == 2 and m.shape[0] == m.shape[1] > 0 else None,
    weight=0.1,
)
u(F_, "hfft2", "L.fft.hfft2({0})", "fc", None, mat_params, weight=0.15)
u(F_, "ihfft2", "L.fft.ihfft2({0})", "f", None, mat_params, weight=0.15)
u(
    X_,
    "hsplit",
    "L.hsplit({0}, 1)",
    "fc",
    None,
    lambda c, m: {} if len(m.shape) >= 1 and m.shape[-1 if len(m.shape) == 1 else 1] > 0 else None,
    tags=("multi",),
    weight=0.15,
)
op(
    X_,
    "meshgrid",
    "L.meshgrid({0}, {1}, indexing='ij')",
    _two(lambda m: len(m.shape) == 1, lambda ma, m: len(m.shape) == 1),
    tags=("multi",),
    weight=0.15,
)
u(X_, "atleast_3d", "L.atleast_3d({0})", "fc", weight=0.1)


def _lu_pivots_clear(x):
    """Partial pivoting picks a clear winner at every step (a tie would be a kink)."""
    if x.ndim != 2:
        return all(_lu_pivots_clear(y) for y in x.reshape(-1, *x.shape[-2:]))
    a = x.clone()
    n = min(a.shape)
    for k in range(n):
        col = a[k:, k].abs().sort(descending=True).values
        if col.numel() > 1 and float(col[0] - col[1]) < 0.1:
            return False
        piv = k + int(a[k:, k].abs().argmax())
        a[[k, piv]] = a[[piv, k]]
        if abs(complex(a[k, k])) < 0.1:
            return False
        a[k + 1 :] -= a[k + 1 :, k : k + 1] / a[k, k] * a[k]
    return True
