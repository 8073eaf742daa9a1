"""Run a program in pushforward and torch, compare, and let finite differences arbitrate.

Modes (pushforward runs each separately, since each takes a different code path):
  primal  plain tensors
  jvp     one dual level, nothing requires grad (forward formulas on arrays)
  vjp     inputs require grad, autograd.grad with random cotangents
  hvp     inputs require grad and are dual: primal, jvp, vjp and the gradient's tangent
          (forward-over-reverse) of one run, reported as hvp:primal, hvp:jvp, hvp:vjp, hvp
  fhvp    autograd.functional.hvp(loss, x, t), fw_mode=True (the deferred untracked level),
          loss = sum_k Re<c_k, out_k>; rrhvp: the same with fw_mode=False (reverse-over-reverse)
  bjvp    autograd.functional.jvp(f, x, t, fw_mode=False): the double-backward trick
          (fhvp, rrhvp, bjvp: real inputs and outputs only)
  jvp2    nested dual levels (forward-over-forward): the outer-level tangent (direction s) of
          the inner-level tangent (direction t); torch has no nested levels, so the reference
          is the central difference of torch's jvp along s (reported as jvp2; the inner
          tangent itself as jvp2:jvp)
torch runs the jvp and vjp configurations and is the reference for primal, jvp and vjp; the
reference for the gradient's tangent is the central difference of torch's gradient (torch's
own forward-over-reverse runs only to confirm a disagreement). When a derivative disagrees,
central differences of torch's primal (jvp, vjp) or of torch's gradient (hvp) decide which
side is wrong.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import torch
import torch.autograd.forward_ad as tfw

import pushforward as pf
import pushforward.autograd.forward_ad as pfw
from pushforward.engine.state import STATE
from pushforward.core.tensor import needs_ad

from .program import Program, compile_body
from .vector import VECTOR_MODES, check_vector
from .compiled import COMPILED_MODES, check_compiled
from .jet import JET_MODES, check_jet_mode
from .transforms import TRANSFORM_MODES, check_transforms
from .oracle import TORCH

MODES = ("primal", "jvp", "vjp", "hvp", "fhvp", "rrhvp", "bjvp", "jvp2")
RTOL, ATOL = 1e-6, 1e-8  # agreement between the two libraries
FD_H = 1e-6
torch.set_num_threads(1)  # tiny tensors: threads only add latency


@dataclass
class Finding:
    mode: str  # primal, jvp, vjp, hvp, hvp:primal, hvp:jvp, hvp:vjp
    verdict: str  # "pf" (pushforward wrong / crashes), "torch" (torch bug confirmed by FD),
    #                    "unresolved" (FD agrees with neither, or unstable), "torch_rejects"
    what: str  # "wrong", "crash", "shape", "dtype", "int-tangent"
    detail: str
    out: int | None = None  # index into prog.outputs (wrong values)
    pf_val: object = None
    torch_val: object = None
    fd_val: object = None
    diff: list | None = None  # indices of the outputs differentiated (those torch says require grad)

    @property
    def is_failure(self) -> bool:
        return self.verdict == "pf"

    def key(self) -> tuple:
        return (self.mode, self.what, normalize(self.detail) if self.what == "crash" else "")


def normalize(msg: str) -> str:
    msg = re.sub(r"0x[0-9a-f]+", "A", msg)
    msg = re.sub(r"[-+]?\d+(\.\d*)?(e[-+]?\d+)?", "N", msg)
    return msg[:160]


# ------------------------------------------------------------------ running one library


def _np(t, L):
    if t is None:
        return None
    if L is torch:
        return t.detach().resolve_conj().resolve_neg().numpy().copy()
    return np.array(t.detach().numpy(), copy=True)


def _tensor(L, a: np.ndarray, requires_grad=False):
    a = np.asarray(a)  # a 0-d array plus a number is a NumPy scalar
    if L is torch:
        t = torch.from_numpy(a.copy())
    else:
        t = pf.tensor(a.copy())
    return t.requires_grad_() if requires_grad else t


def run_lib(L, prog: Program, mode: str, diff=None, xs_np=None) -> dict:
    """Run prog in library L in one mode; numpy results: out, tan, grad, gtan, diff."""
    fw = tfw if L is torch else pfw
    fn = compile_body(prog)
    xs_np = prog.inputs if xs_np is None else xs_np
    rg = mode in ("vjp", "hvp")
    xs = [_tensor(L, a, rg) for a in xs_np]
    res: dict = {}
    if mode in ("jvp", "hvp"):
        with fw.dual_level():
            ins = [fw.make_dual(x, _tensor(L, t)) for x, t in zip(xs, prog.tangents)]
            outs = fn(TORCH if L is torch else L, *ins)
            _check_ad_bits(L, list(outs) + xs + ins)
            res["out"] = [_np(fw.unpack_dual(o).primal, L) for o in outs]
            res["tan"] = [_np(fw.unpack_dual(o).tangent, L) for o in outs]
            if mode == "hvp":
                _grads(L, prog, outs, xs, diff, res, fw)
    else:
        outs = fn(TORCH if L is torch else L, *xs)
        _check_ad_bits(L, list(outs) + xs)
        res["out"] = [_np(o, L) for o in outs]
        if mode == "vjp":
            _grads(L, prog, outs, xs, diff, res, None)
    return res


def _check_ad_bits(L, tensors) -> None:
    """The dispatcher's cached "needs autodiff" bit is never False where the precise test holds
    (a stale False would skip a tangent or the tape: silently wrong derivatives)."""
    if L is not pf:
        return
    for t in tensors:
        if type(t) is pf.Tensor and not t._ad and needs_ad(t):
            raise AssertionError(
                f"stale _ad bit on a tensor of shape {tuple(t.shape)} "
                f"(requires_grad={t._requires_grad}, tangents={t._fw is not None}, "
                f"dual storage={t._st.dual})"
            )


def _grads(L, prog, outs, xs, diff, res, fw):
    if diff is None:
        diff = [k for k, o in enumerate(outs) if o.requires_grad]
    res["diff"] = diff
    if not diff:
        res["grad"] = [None] * len(xs)
        res["gtan"] = [None] * len(xs)
        return
    cots = [_tensor(L, prog.cotangents[prog.outputs[k]]) for k in diff]
    gs = L.autograd.grad([outs[k] for k in diff], xs, cots, allow_unused=True)
    if fw is None:
        res["grad"] = [_np(g, L) for g in gs]
    else:
        res["grad"] = [_np(None if g is None else fw.unpack_dual(g).primal, L) for g in gs]
        res["gtan"] = [_np(None if g is None else fw.unpack_dual(g).tangent, L) for g in gs]


def run_functional_hvp(prog, diff, fw_mode):
    """pushforward's autograd.functional.hvp of the loss; numpy H t per input in res['gtan']."""
    fn = compile_body(prog)
    cots = {k: pf.tensor(prog.cotangents[prog.outputs[k]].copy()) for k in diff}

    def loss(*xs):
        outs = fn(pf, *xs)
        total = None
        for k in diff:
            term = (cots[k].conj() * outs[k]).real.sum() if outs[k].is_complex() else (cots[k] * outs[k]).sum()
            total = term if total is None else total + term
        return total

    xs = tuple(pf.tensor(a.copy()) for a in prog.inputs)
    ts = tuple(pf.tensor(t.copy()) for t in prog.tangents)
    _, hv = pf.autograd.functional.hvp(loss, xs, ts, fw_mode=fw_mode)
    return {"gtan": [_np(h, pf) for h in hv]}


def run_functional_jvp(prog, diff):
    """pushforward's autograd.functional.jvp by the double-backward trick, for the outputs in diff."""
    fn = compile_body(prog)

    def f(*xs):
        outs = fn(pf, *xs)
        return tuple(outs[k] for k in diff)

    xs = tuple(pf.tensor(a.copy()) for a in prog.inputs)
    ts = tuple(pf.tensor(t.copy()) for t in prog.tangents)
    _, jv = pf.autograd.functional.jvp(f, xs, ts, fw_mode=False)
    return {k: _np(t, pf) for k, t in zip(diff, jv)}


def second_direction(prog) -> list:
    """The outer-level tangent s of mode jvp2 (deterministic, different from t)."""
    return [np.asarray(np.flip(t) * 0.5 + 0.3, dtype=t.dtype).reshape(t.shape) for t in prog.tangents]


def run_nested_jvp(prog):
    fn = compile_body(prog)
    xs = [pf.tensor(a.copy()) for a in prog.inputs]
    with pfw.dual_level():
        outer = [pfw.make_dual(x, pf.tensor(s)) for x, s in zip(xs, second_direction(prog))]
        with pfw.dual_level():
            inner = [pfw.make_dual(x, pf.tensor(t.copy())) for x, t in zip(outer, prog.tangents)]
            outs = fn(pf, *inner)
            prim = [pfw.unpack_dual(o).primal for o in outs]
            tans = [pfw.unpack_dual(o).tangent for o in outs]
        res = {
            "out": [_np(pfw.unpack_dual(p).primal, pf) for p in prim],
            "tan": [None if t is None else _np(pfw.unpack_dual(t).primal, pf) for t in tans],
            "tan2": [None if t is None else _np(pfw.unpack_dual(t).tangent, pf) for t in tans],
        }
    return res


def _fd_tan2(prog, h=FD_H):
    s = second_direction(prog)
    p, e1 = run_torch(prog, "jvp", xs_np=[a + h * d for a, d in zip(prog.inputs, s)])
    m, e2 = run_torch(prog, "jvp", xs_np=[a - h * d for a, d in zip(prog.inputs, s)])
    if e1 is not None or e2 is not None:
        raise e1 or e2
    return [None if a is None or b is None else (a - b) / (2 * h) for a, b in zip(p["tan"], m["tan"])]


def _primal_verdict(prog, k, pf_out, t_out) -> str:
    """A primal value that differs: pushforward's fault, unless the program amplifies rounding at
    this point so much that a few-ulp change of the inputs moves torch's own result by as much
    (e.g. rms_norm of log(cosine_similarity(v, v)), rounding noise normalised to size 1): then
    the two libraries' different but equally valid roundings decide it ("unresolved")."""
    gap = np.abs(np.asarray(pf_out, np.complex128) - np.asarray(t_out, np.complex128))
    gap = float(np.max(gap, where=np.isfinite(gap), initial=0.0))
    if not gap:
        return "pf"
    rng = np.random.default_rng(0)
    spread = 0.0
    for _ in range(3):
        xs = [a * (1 + 1e-13 * rng.choice([-1.0, 1.0], a.shape)) for a in prog.inputs]
        try:
            o = _torch_outs(prog, xs)[k]
        except Exception:  # noqa: BLE001 - torch refuses a perturbed point
            return "pf"
        d = np.abs(np.asarray(o, np.complex128) - np.asarray(t_out, np.complex128))
        spread = max(spread, float(np.max(d, where=np.isfinite(d), initial=0.0)))
    return "unresolved" if spread >= 0.1 * gap else "pf"


def _fd2_primal(prog, h):
    """Mixed second central difference of torch's primal along (s, t): the arbiter of last resort
    for jvp2, independent of torch's forward AD (a slightly wrong torch jvp, below the first-order
    tolerance, has a difference quotient that is wrong at second order)."""
    s = second_direction(prog)

    def at(a, b):
        return _torch_outs(prog, [x + a * h * u + b * h * v for x, u, v in zip(prog.inputs, s, prog.tangents)])

    pp, pm, mp, mm = at(1, 1), at(1, -1), at(-1, 1), at(-1, -1)
    return [
        None if a is None or a.dtype.kind not in "fc" else (a - b - c + d) / (4 * h * h)
        for a, b, c, d in zip(pp, pm, mp, mm)
    ]


def run_pf(prog, mode, diff=None):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if mode in ("fhvp", "rrhvp"):
                return run_functional_hvp(prog, diff, mode == "fhvp"), None
            if mode == "bjvp":
                return run_functional_jvp(prog, diff), None
            if mode == "jvp2":
                return run_nested_jvp(prog), None
            return run_lib(pf, prog, mode, diff), None
    except Exception as e:  # noqa: BLE001 - every pushforward error is a finding
        return None, e
    finally:
        while STATE.levels:  # a crash inside a level must not leak it into the next run
            pfw.exit_dual_level()
        pf.set_grad_enabled(True)


def run_torch(prog, mode, diff=None, xs_np=None):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run_lib(torch, prog, mode, diff, xs_np), None
    except Exception as e:  # noqa: BLE001
        return None, e


# ------------------------------------------------------------------ comparing


def _kind(a):
    return None if a is None else a.dtype.kind


def _zeros_like_out(t, o):
    if t is not None:
        return t
    return None if o is None else np.zeros(o.shape, o.dtype if o.dtype.kind in "fc" else np.float64)


def _close(a, b, loosen: float = 1.0) -> bool:
    """Equal up to rounding (loosen x the tolerances: a finite-difference reference)."""
    if a.shape != b.shape:
        return False
    if a.size == 0:
        return True
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        fin = np.isfinite(b)
        scale = float(np.max(np.abs(b), where=fin, initial=0.0))
        d = np.abs(a - b)
        atol, rtol = ATOL * loosen * (1 + scale), RTOL * loosen
        if bool((d <= atol + rtol * np.abs(b)).all()):
            return True
        # equal infinities and nans count as equal
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    return bool(np.array_equal(a, b))


def _first_mismatch(pfl, tl, loose=False):
    for k, (a, b) in enumerate(zip(pfl, tl)):
        if a is None and b is None:
            continue
        if a is None or b is None:
            return k, "missing" if a is None else "extra"
        if a.shape != b.shape:
            return k, "shape"
        if not _close(a, b, 100.0 if loose else 1.0):
            return k, "wrong"
    return None


def _flat(lst, like):
    parts = []
    for a, o in zip(lst, like):
        if o is None or o.dtype.kind not in "fc":
            continue
        a = np.zeros(o.shape) if a is None else a
        parts.append(np.asarray(a, np.complex128).ravel())
    return np.concatenate(parts) if parts else np.zeros(0, np.complex128)


def _verdict(pfv, tv, fd, fd2):
    # judge only the entries where the two libraries disagree (elsewhere FD may be noisy, e.g.
    # at an unrelated kink of another output)
    sel = ~np.isclose(pfv, tv, rtol=RTOL, atol=ATOL * (1 + np.max(np.abs(tv), initial=0.0)))
    if sel.any():
        pfv, tv, fd, fd2 = pfv[sel], tv[sel], fd[sel], fd2[sel]
    gap = np.linalg.norm(pfv - tv)
    if not np.isfinite(gap) and np.all(np.isfinite(pfv)):
        # torch's nan where a zero cotangent (or tangent) meets an infinite local derivative
        # (0 * inf); pushforward's rule gives a finite value (docs/design.md, "Zero cotangents at
        # singular points"), checked against finite differences alone
        return _fd_decides(pfv, fd, fd2)
    if not np.isfinite(gap) or gap == 0:
        return "unresolved"
    ep, et = np.linalg.norm(pfv - fd), np.linalg.norm(tv - fd)
    if not np.isfinite(np.linalg.norm(fd)) or np.linalg.norm(fd - fd2) > 0.2 * gap:
        return "unresolved"
    if et <= 0.1 * gap and ep >= 0.5 * gap:
        return "pf"
    if ep <= 0.1 * gap and et >= 0.5 * gap:
        return "torch"
    return "unresolved"


def _fd_decides(pfv, fd, fd2) -> str:
    """ "torch" when pushforward's value is the finite differences' (stable at two steps), "pf"
    when it is far from them, else "unresolved"."""
    scale = 1.0 + float(np.linalg.norm(fd))
    if not np.isfinite(scale) or np.linalg.norm(fd - fd2) > 1e-4 * scale:
        return "unresolved"
    err = float(np.linalg.norm(pfv - fd))
    return "torch" if err <= 1e-4 * scale else "pf" if err > 1e-2 * scale else "unresolved"


def _torch_outs(prog, xs_np):
    r, e = run_torch(prog, "primal", xs_np=xs_np)
    if e is not None:
        raise e
    return r["out"]


def fd_jvp(prog, h):
    plus = _torch_outs(prog, [a + h * t for a, t in zip(prog.inputs, prog.tangents)])
    minus = _torch_outs(prog, [a - h * t for a, t in zip(prog.inputs, prog.tangents)])
    return [None if p is None or p.dtype.kind not in "fc" else (p - m) / (2 * h) for p, m in zip(plus, minus)]


def _loss(prog, outs, diff):
    s = 0.0
    for k in diff:
        c = prog.cotangents[prog.outputs[k]]
        s += float(np.real(np.sum(np.conj(c) * outs[k])))
    return s


def _torch_grad(prog, xs_np, diff):
    r, e = run_torch(prog, "vjp", diff, xs_np=xs_np)
    if e is not None:
        raise e
    return [np.zeros(a.shape, a.dtype) if g is None else g for g, a in zip(r["grad"], prog.inputs)]


def fd_grad(prog, diff, h=FD_H):
    """The whole gradient of the loss sum_k Re<c_k, out_k> by central differences (for reproducers)."""
    grads = []
    for i, a in enumerate(prog.inputs):
        g = np.zeros(a.shape, a.dtype)
        for idx in np.ndindex(a.shape):
            for unit in (1.0, 1j) if a.dtype.kind == "c" else (1.0,):
                xs_p = [x.copy() for x in prog.inputs]
                xs_m = [x.copy() for x in prog.inputs]
                xs_p[i][idx] += h * unit
                xs_m[i][idx] -= h * unit
                dl = (_loss(prog, _torch_outs(prog, xs_p), diff) - _loss(prog, _torch_outs(prog, xs_m), diff)) / (2 * h)
                g[idx] += dl * unit
        grads.append(g)
    return grads


def arbitrate(prog, quantity, pf_list, t_list, diff):
    """'pf' / 'torch' / 'unresolved' for a disagreement on quantity ('tan', 'grad' or 'gtan')."""
    try:
        if quantity == "tan":
            ref = _torch_outs(prog, prog.inputs)
            fd, fd2 = fd_jvp(prog, FD_H), fd_jvp(prog, 4 * FD_H)
            return _verdict(_flat(pf_list, ref), _flat(t_list, ref), _flat(fd, ref), _flat(fd2, ref)), fd
        if quantity == "grad":
            # the directional derivative of the loss along d = g_pf - g_torch separates them
            gp = [np.zeros(a.shape, a.dtype) if g is None else g for g, a in zip(pf_list, prog.inputs)]
            gt = [np.zeros(a.shape, a.dtype) if g is None else g for g, a in zip(t_list, prog.inputs)]
            if not all(np.all(np.isfinite(x)) for x in gt) and all(np.all(np.isfinite(x)) for x in gp):
                # torch's 0 * inf (a nan direction): the whole gradient by finite differences
                fd, fd2 = fd_grad(prog, diff, FD_H), fd_grad(prog, diff, 4 * FD_H)
                like = prog.inputs
                return _verdict(_flat(gp, like), _flat(gt, like), _flat(fd, like), _flat(fd2, like)), fd
            d = [p - t for p, t in zip(gp, gt)]
            nd = np.sqrt(sum(float(np.sum(np.abs(x) ** 2)) for x in d))
            d = [x / nd for x in d]

            def dd(h):
                lp = _loss(prog, _torch_outs(prog, [a + h * x for a, x in zip(prog.inputs, d)]), diff)
                lm = _loss(prog, _torch_outs(prog, [a - h * x for a, x in zip(prog.inputs, d)]), diff)
                return (lp - lm) / (2 * h)

            def dot(g):
                return sum(float(np.real(np.sum(np.conj(gi) * di))) for gi, di in zip(g, d))

            fd, fd2 = dd(FD_H), dd(4 * FD_H)
            v = _verdict(np.array([dot(gp)]), np.array([dot(gt)]), np.array([fd]), np.array([fd2]))
            return v, fd
        if quantity == "gtan":
            fd, fd2 = _fd_gtan(prog, diff, FD_H), _fd_gtan(prog, diff, 4 * FD_H)
            like = prog.inputs
            return _verdict(_flat(pf_list, like), _flat(t_list, like), _flat(fd, like), _flat(fd2, like)), fd
    except Exception as e:  # noqa: BLE001 - FD at a perturbed point torch refuses
        return "unresolved", repr(e)
    raise ValueError(quantity)


def _fmt(a):
    if a is None:
        return "None"
    if isinstance(a, list):
        return "[" + ", ".join(_fmt(x) for x in a) + "]"
    if isinstance(a, np.generic):
        a = a.item()
    if isinstance(a, float):
        return f"{a:.6g}"
    if isinstance(a, np.ndarray):
        return np.array2string(a, precision=6, separator=", ", threshold=30).replace("\n", "")
    return repr(a)


def _compare_tan2(prog, pr, tr, findings):
    """Second-order tangents of nested levels against central differences of torch's jvp."""
    like = tr["out"]
    try:
        fd = _fd_tan2(prog)
    except Exception:  # noqa: BLE001 - torch refuses a perturbed point
        return
    pl = [None if o is None or o.dtype.kind not in "fc" else _zeros_like_out(t, o) for t, o in zip(pr["tan2"], like)]
    fl = [None if o is None or o.dtype.kind not in "fc" else _zeros_like_out(t, o) for t, o in zip(fd, like)]
    mm = _first_mismatch(pl, fl, loose=True)
    if mm is None:
        return
    k, what = mm
    if what != "wrong":
        findings.append(Finding("jvp2", "pf", "shape", f"second-order tangent {k}", k, _fmt(pl[k]), _fmt(fl[k])))
        return
    fd2 = _fd_tan2(prog, 4 * FD_H)
    f2 = [None if o is None or o.dtype.kind not in "fc" else _zeros_like_out(t, o) for t, o in zip(fd2, like)]
    # no torch value (torch has no nested levels): FD at two steps must agree with each other
    v = _verdict(_flat(pl, like), _flat(fl, like), _flat(fl, like), _flat(f2, like))
    if v == "pf":
        # confirm with the primal's own second differences (steps where truncation, ~h^2, and
        # rounding, ~eps/h^2, are both far below the tolerance): torch's jvp may be the wrong one
        try:
            p1, p2 = _fd2_primal(prog, 2e-4), _fd2_primal(prog, 4e-4)
        except Exception:  # noqa: BLE001 - torch refuses a perturbed point
            p1 = None
        if p1 is not None:
            q1 = [None if o is None or o.dtype.kind not in "fc" else _zeros_like_out(t, o) for t, o in zip(p1, like)]
            q2 = [None if o is None or o.dtype.kind not in "fc" else _zeros_like_out(t, o) for t, o in zip(p2, like)]
            v = _verdict(_flat(pl, like), _flat(fl, like), _flat(q1, like), _flat(q2, like))
    findings.append(
        Finding(
            "jvp2",
            v,
            "wrong",
            f"second-order tangent of output {k}",
            k,
            _fmt(pl[k]),
            "n/a (no nested levels)",
            _fmt(fl[k]),
        )
    )


def _compare_quantity(prog, mode, q, pr, tr, diff, findings):
    pl, tl = pr.get(q), tr.get(q)
    if tl is None or pl is None:
        return
    if q == "tan":
        # an integer or bool result never carries a tangent
        for k, (o, t) in enumerate(zip(tr["out"], pl)):
            if o is not None and o.dtype.kind not in "fc" and t is not None:
                findings.append(
                    Finding(mode, "pf", "int-tangent", f"output {k} ({o.dtype}) has a tangent", k, _fmt(t), "None")
                )
                return
        pl = [None if o is None or o.dtype.kind not in "fc" else _zeros_like_out(t, o) for t, o in zip(pl, tr["out"])]
        tl = [None if o is None or o.dtype.kind not in "fc" else _zeros_like_out(t, o) for t, o in zip(tl, tr["out"])]
    else:
        pl = [_zeros_like_out(g, a) for g, a in zip(pl, prog.inputs)]
        tl = [_zeros_like_out(g, a) for g, a in zip(tl, prog.inputs)]
    mm = _first_mismatch(pl, tl, loose=q == "gtan" and tr.get("fd", False))
    if mm is None:
        return
    if q == "gtan" and tr.get("fd", False) and mm[1] == "wrong":
        # the reference was a finite difference: get torch's own forward-over-reverse to compare
        th, _ = run_torch(prog, "hvp", diff)
        if th is not None:
            tl = [_zeros_like_out(g, a) for g, a in zip(th["gtan"], prog.inputs)]
            mm = _first_mismatch(pl, tl)
            if mm is None:
                return
    k, what = mm
    if what != "wrong":
        findings.append(
            Finding(
                mode,
                "pf",
                "shape",
                f"{q} {k}: pushforward shape "
                f"{None if pl[k] is None else pl[k].shape}, torch {tl[k].shape if tl[k] is not None else None}",
                k,
                _fmt(pl[k]),
                _fmt(tl[k]),
            )
        )
        return
    verdict, fd = arbitrate(prog, q, pl, tl, diff)
    fdk = fd[k] if isinstance(fd, list) else fd
    findings.append(
        Finding(
            mode,
            verdict,
            "wrong",
            f"{q} of {'output' if q == 'tan' else 'input'} {k}",
            k,
            _fmt(pl[k]),
            _fmt(tl[k]),
            _fmt(fdk),
        )
    )


_HVP_MODES = ("hvp", "fhvp", "rrhvp")
SAVED_MODIFIED = "modified by an inplace operation"


def check_saved_modified(prog, mode: str) -> list:
    """torch refuses the gradient: its tape saved a value the program then wrote in place.
    pushforward keeps the saved values (docs/design.md, "Overwritten saved values"), so its result is
    checked without torch: the gradient (mode vjp) by the adjoint identity against pushforward's jvp
    (<J v, u> == <v, J^T u>; the jvp is checked against torch's in jvp mode) and by finite
    differences of the loss along the gradient; the gradient's tangent (mode hvp) by finite
    differences of that gradient along the tangent. One finding: "checked", "refused" (pushforward
    raises the same error), "unresolved" (finite differences unstable) or a failure."""
    pr, perr = run_pf(prog, mode)
    if perr is not None:
        verdict, what = ("refused", "saved-modified") if SAVED_MODIFIED in str(perr) else ("pf", "crash")
        return [Finding(mode, verdict, what, f"{type(perr).__name__}: {perr}"[:300])]
    diff = pr["diff"]
    if not diff:
        return []
    if not all(np.all(np.isfinite(pr["out"][k])) for k in diff):
        # (an output is infinite or nan, as log of a value written to 0: a function that is not
        # finite at its point has no derivative to check by identities or finite differences)
        return [Finding(mode, "unresolved", "saved-modified", "the function is not finite at its point")]
    g = [np.zeros(a.shape, a.dtype) if x is None else x for x, a in zip(pr["grad"], prog.inputs)]
    if not all(np.all(np.isfinite(x)) for x in g):
        # a zero cotangent meeting an op whose value is infinite at its point (log or 1/x of a
        # value written to 0, its result then dropped): 0 / 0 = nan, as torch's and JAX's backward
        # give; the rule for finite values (sqrt of 0: docs/design.md, "Zero cotangents at
        # singular points") does not cover it, so such a program is counted, not checked
        return [Finding(mode, "unresolved", "saved-modified", "nan gradient: 0 / 0 at an infinite value")]
    # detach pins a value the derivatives do not see, while a finite difference perturbs it: then
    # the adjoint identity alone checks the gradient, and the gradient's tangent has no reference
    pinned = "detach" in prog.ops()
    try:
        if mode == "vjp":
            ok = _adjoint_holds(prog, diff, g) and (pinned or _gradient_matches_fd(prog, diff, g))
        elif pinned:
            ok = _gradient_tangent_matches_double_backward(prog, diff, pr["gtan"])
        else:
            ok = _gradient_tangent_matches_fd(prog, diff, pr["gtan"])
    except _Unresolved as e:
        return [Finding(mode, "unresolved", "saved-modified", str(e)[:300])]
    except AssertionError as e:
        return [Finding(mode, "pf", "wrong", f"torch refuses ({SAVED_MODIFIED}); {e}"[:300])]
    return [Finding(mode, "checked", "saved-modified", "gradient checked without torch")] if ok else []


class _Unresolved(Exception):
    """Finite differences cannot decide (unstable, or the function raises nearby)."""


def _inner(a, b) -> float:
    return sum(float(np.real(np.sum(np.conj(x) * y))) for x, y in zip(a, b))


def _adjoint_holds(prog, diff, g) -> bool:
    pj, err = run_pf(prog, "jvp")
    if err is not None:
        raise _Unresolved(f"no jvp: {err}")
    cots = [prog.cotangents[prog.outputs[k]] for k in diff]
    lhs = _inner(cots, [np.zeros_like(pj["out"][k]) if pj["tan"][k] is None else pj["tan"][k] for k in diff])
    rhs = _inner(g, prog.tangents)
    scale = 1.0 + max(abs(lhs), abs(rhs))
    assert abs(lhs - rhs) <= 1e-6 * scale, f"adjoint identity: <J v, u> = {lhs!r}, <v, J^T u> = {rhs!r}"
    return True


def _stable_fd(dd):
    """dd at two step sizes: the finer one, if they agree."""
    try:
        a, b = np.asarray(dd(FD_H)), np.asarray(dd(4 * FD_H))
    except Exception as e:  # noqa: BLE001 - a perturbed point outside the domain
        raise _Unresolved(repr(e)) from e
    scale = 1.0 + np.max(np.abs(a), initial=0.0)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or np.max(np.abs(a - b), initial=0.0) > 1e-4 * scale:
        raise _Unresolved("finite differences unstable")
    return a


def _gradient_matches_fd(prog, diff, g) -> bool:
    norm = np.sqrt(_inner(g, g))
    if norm == 0 or not np.isfinite(norm):
        return True  # (a zero gradient: the adjoint identity checked it against the jvp)
    d = [x / norm for x in g]

    def dd(h):
        lp = _loss(prog, _torch_outs(prog, [a + h * x for a, x in zip(prog.inputs, d)]), diff)
        lm = _loss(prog, _torch_outs(prog, [a - h * x for a, x in zip(prog.inputs, d)]), diff)
        return (lp - lm) / (2 * h)

    fd = float(_stable_fd(dd))
    assert abs(fd - norm) <= 1e-4 * (1.0 + norm), f"gradient along itself {norm!r}, finite differences {fd!r}"
    return True


def _gradient_tangent_matches_fd(prog, diff, gtan) -> bool:
    def grad_at(xs):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = run_lib(pf, prog, "vjp", diff, xs)
        return [np.zeros(a.shape, a.dtype) if x is None else x for x, a in zip(r["grad"], prog.inputs)]

    def dd(h):
        gp = grad_at([a + h * t for a, t in zip(prog.inputs, prog.tangents)])
        gm = grad_at([a - h * t for a, t in zip(prog.inputs, prog.tangents)])
        return np.concatenate([np.ravel((p - m) / (2 * h)) for p, m in zip(gp, gm)] or [np.zeros(0)])

    fd = _stable_fd(dd)
    got = np.concatenate(
        [np.ravel(np.zeros(a.shape) if t is None else t) for t, a in zip(gtan, prog.inputs)] or [np.zeros(0)]
    )
    scale = 1.0 + np.max(np.abs(fd), initial=0.0)
    assert np.max(np.abs(got - fd), initial=0.0) <= 1e-4 * scale, (
        "the gradient's tangent disagrees with finite differences"
    )
    return True


def _gradient_tangent_matches_double_backward(prog, diff, gtan) -> bool:
    """detach pins a value that finite differences of the gradient would move: the gradient's
    tangent (forward-over-reverse) is checked against reverse-over-reverse instead, the
    double-backward trick of functional.hvp (the vjp of the vjp, a different path through the saved
    values; both follow detach's rule). Real inputs and outputs only, as that mode."""
    if any(a.dtype.kind == "c" for a in prog.inputs) or not all(
        np.asarray(prog.cotangents[prog.outputs[k]]).dtype.kind == "f" for k in diff
    ):
        raise _Unresolved("detach pins a value finite differences would move; complex: no reverse-over-reverse")
    rr, err = run_pf(prog, "rrhvp", diff)
    if err is not None:
        raise _Unresolved(f"no reverse-over-reverse: {err}")
    for k, (t, r, a) in enumerate(zip(gtan, rr["gtan"], prog.inputs)):
        t = np.zeros(a.shape) if t is None else t
        r = np.zeros(a.shape) if r is None else r
        assert _close(np.asarray(t), np.asarray(r)), f"input {k}: forward-over-reverse {t}, reverse-over-reverse {r}"
    return True


def _fd_gtan(prog, diff, h=FD_H):
    gp = _torch_grad(prog, [a + h * t for a, t in zip(prog.inputs, prog.tangents)], diff)
    gm = _torch_grad(prog, [a - h * t for a, t in zip(prog.inputs, prog.tangents)], diff)
    return [(p - m) / (2 * h) for p, m in zip(gp, gm)]


def check(prog: Program, modes=MODES) -> list:
    """Every finding for prog (an empty list: both libraries agree everywhere).

    torch runs the program twice (jvp, vjp); the reference for the gradient's tangent is the
    central difference of torch's gradient along the tangent (two more torch vjps: much cheaper
    than torch's own forward-over-reverse, which runs only to confirm a disagreement).
    """
    findings: list = []
    tj, _ = run_torch(prog, "jvp")
    tv, tverr = run_torch(prog, "vjp")
    tp = tj or tv
    if tp is None:
        tp, ep = run_torch(prog, "primal")
        if ep is not None:
            return [Finding("primal", "torch_rejects", "crash", repr(ep))]
    diff = (tv or {}).get("diff")
    href = None

    def hvp_ref():
        nonlocal href
        if href is None:
            href = False
            if tj is not None and tv is not None and diff and "detach" in prog.ops():
                # detach pins a value: a finite difference of the gradient perturbs it anyway, so only
                # torch's own forward-over-reverse (same detach rule) can be the reference here
                th, _ = run_torch(prog, "hvp", diff)
                href = (
                    False
                    if th is None
                    else {"out": tj["out"], "tan": tj["tan"], "grad": tv["grad"], "gtan": th["gtan"], "fd": False}
                )
            elif tj is not None and tv is not None and diff:
                try:
                    href = {
                        "out": tj["out"],
                        "tan": tj["tan"],
                        "grad": tv["grad"],
                        "gtan": _fd_gtan(prog, diff),
                        "fd": True,
                    }
                except Exception:  # noqa: BLE001 - torch refuses a perturbed point
                    href = False
        return href or None

    for mode in modes:
        if mode in VECTOR_MODES:  # pushforward's own unbatched runs are the reference (vector.py)
            findings += check_vector(prog, mode)
            continue
        if mode in COMPILED_MODES:  # eager pushforward is the reference (compiled.py)
            findings += check_compiled(prog, mode)
            continue
        if mode in JET_MODES:  # pushforward's own nested dual levels are the reference (jet.py)
            findings += check_jet_mode(prog)
            continue
        if mode in TRANSFORM_MODES:  # nested transforms: torch.func, finite differences decide (transforms.py)
            findings += check_transforms(prog, mode)
            continue
        ref = (
            {"primal": tp, "jvp": tj, "vjp": tv, "bjvp": tj, "jvp2": tj}[mode] if mode not in _HVP_MODES else hvp_ref()
        )
        if ref is None:
            if mode in ("vjp", "hvp") and tj is not None and SAVED_MODIFIED in str(tverr):
                findings += check_saved_modified(prog, mode)
            continue
        if mode == "jvp2" and "detach" in prog.ops():
            # detach cuts every level; a finite difference of a one-level jvp cannot tell that
            # from a cut of the inner level only, so it is no reference here
            continue
        if mode in _HVP_MODES and any(f.mode in ("vjp", "hvp:vjp") and f.verdict == "torch" for f in findings):
            # the hvp reference is the finite difference of torch's gradient: no reference when
            # that gradient is itself wrong (a torch bug already reported in vjp mode)
            continue
        if mode in ("fhvp", "rrhvp", "bjvp") and (
            not diff
            or any(a.dtype.kind == "c" for a in prog.inputs)
            or not all(ref["out"][k].dtype.kind == "f" for k in diff)
        ):
            continue  # functional.hvp of a real loss of real inputs only
        pr, perr = run_pf(prog, mode, diff)
        if perr is not None:
            if mode in _HVP_MODES and run_torch(prog, "hvp")[1] is not None:
                continue  # torch refuses forward-over-reverse of this program too
            findings.append(Finding(mode, "pf", "crash", f"{type(perr).__name__}: {perr}"))
            continue
        if mode in ("fhvp", "rrhvp"):
            _compare_quantity(prog, mode, "gtan", pr, ref, diff, findings)
            continue
        if mode == "bjvp":
            # outputs outside diff are not part of f: give them torch's tangents
            pr = {"tan": [pr.get(k, t) for k, t in enumerate(ref["tan"])], "out": ref["out"]}
            _compare_quantity(prog, mode, "tan", pr, ref, diff, findings)
            continue
        mm = _first_mismatch(pr["out"], ref["out"])
        pmode = "primal" if mode == "primal" else f"{mode}:primal"
        if mm is None:
            for k, (a, b) in enumerate(zip(pr["out"], ref["out"])):
                # (an empty result's dtype is moot: torch's einsum of empty complex and real gives real)
                if _kind(a) != _kind(b) and not (_kind(a) in "iu" and _kind(b) in "iu") and a.size:
                    findings.append(Finding(pmode, "pf", "dtype", f"output {k}: {a.dtype} vs torch {b.dtype}", k))
                    break
        else:
            k, what = mm
            v = "pf" if what != "wrong" else _primal_verdict(prog, k, pr["out"][k], ref["out"][k])
            findings.append(
                Finding(
                    pmode,
                    v,
                    "wrong" if what == "wrong" else "shape",
                    f"output {k}",
                    k,
                    _fmt(pr["out"][k]),
                    _fmt(ref["out"][k]),
                )
            )
            continue
        if mode in ("jvp", "hvp", "jvp2"):
            _compare_quantity(prog, mode if mode == "jvp" else f"{mode}:jvp", "tan", pr, ref, diff, findings)
        if mode == "jvp2" and not any(f.mode.startswith("jvp2") for f in findings):
            _compare_tan2(prog, pr, ref, findings)
        if mode in ("vjp", "hvp") and diff:
            _compare_quantity(prog, mode if mode == "vjp" else "hvp:vjp", "grad", pr, ref, diff, findings)
        if mode == "hvp" and diff:
            _compare_quantity(prog, "hvp", "gtan", pr, ref, diff, findings)
    for f in findings:
        f.diff = diff
    return findings
