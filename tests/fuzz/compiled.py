"""The `compiled` mode: each program run through pf.compile, compared with eager pushforward.

Five functions of plain tensors are built from a program (primal; jvp at one dual level; vjp by
autograd.grad with fixed cotangents; forward-over-reverse, the gradient's tangent; vector-mode
jvp with B tangents), each run eagerly and through `pf.compile` (twice: the trace call and a
replay on other values of the same signature), and compared to 1e-12. The compiled primal is also
differentiated from outside (pf.func.jvp and vjp of the compiled function). A compiled call that
falls back to eager (data-dependent control flow, an untraceable construct) is counted, not a
finding: it runs fn itself.

    PYTHONPATH=src python tests/fuzz/run.py --programs 2000 --modes compiled
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as pfw
from pushforward.engine.state import STATE

from .program import Program, compile_body
from .vector import batch_size

COMPILED_MODES = ("compiled",)
TOL = 1e-12
STATS: Counter = Counter()  # compiled / eager fallback counts, per transform


def _float(a) -> bool:
    return isinstance(a, pf.Tensor) and a.dtype.kind in "fc"


def _transforms(prog: Program) -> dict:
    fn = compile_body(prog)
    n = prog.n_inputs

    def primal(*xs):
        return tuple(fn(pf, *xs))

    def jvp(*a):
        xs, ts = a[:n], a[n:]
        with pfw.dual_level():
            ins = [pfw.make_dual(x, t) if _float(x) else x for x, t in zip(xs, ts)]
            outs = fn(pf, *ins)
            return tuple(pfw.unpack_dual(o).primal for o in outs) + tuple(pfw.unpack_dual(o).tangent for o in outs)

    def vjp(*a):
        xs, cots = a[:n], a[n:]
        ins = [x.detach().requires_grad_() if _float(x) else x for x in xs]
        outs = fn(pf, *ins)
        loss = _loss(outs, cots)
        outs = tuple(o.detach() if isinstance(o, pf.Tensor) else o for o in outs)
        if loss is None:
            return outs
        wrt = [x for x in ins if _float(x)]
        return outs + tuple(pf.autograd.grad(loss, wrt, allow_unused=True))

    def fwd_over_rev(*a):
        xs, ts, cots = a[:n], a[n : 2 * n], a[2 * n :]
        with pfw.dual_level():
            ins = [pfw.make_dual(x.detach().requires_grad_(), t) if _float(x) else x for x, t in zip(xs, ts)]
            outs = fn(pf, *ins)
            loss = _loss(outs, cots)
            if loss is None:
                return tuple(pfw.unpack_dual(o).primal.detach() for o in outs)
            wrt = [x for x in ins if _float(x)]
            gs = pf.autograd.grad(loss, wrt, allow_unused=True)
            return tuple(g if g is None else pfw.unpack_dual(g).tangent for g in gs)

    def vector(*a):
        xs, ts = a[:n], a[n:]
        B = ts[0].shape[0] if ts else 1
        with pfw.dual_level(batch=B):
            ins = [pfw.make_dual(x, t) if _float(x) else x for x, t in zip(xs, ts)]
            outs = fn(pf, *ins)
            return tuple(pfw.unpack_dual(o).tangent for o in outs)

    return {"primal": primal, "jvp": jvp, "vjp": vjp, "fwd_over_rev": fwd_over_rev, "vector": vector}


def _loss(outs, cots):
    loss = None
    for o, c in zip(outs, cots):
        if _float(o) and o.requires_grad:
            term = (o * c.to(o.dtype) if o.dtype.kind == "c" else o * c.real.to(o.dtype)).sum()
            term = term.real if term.dtype.kind == "c" else term
            loss = term if loss is None else loss + term
    return loss


def _args(prog: Program, kind: str, scale: float = 1.0) -> list:
    rng = np.random.default_rng([abs(prog.seed or 0), 29, int(scale * 10)])
    xs = [pf.tensor(np.asarray(a * scale if a.dtype.kind in "fc" else a, a.dtype)) for a in prog.inputs]
    ts = [pf.tensor(np.asarray(t, a.dtype)) for t, a in zip(prog.tangents, prog.inputs)]
    if kind == "primal":
        return xs
    if kind in ("jvp",):
        return xs + ts
    outs = _transforms(prog)["primal"](*xs)
    cots = [pf.tensor(rng.uniform(-1, 1, tuple(o.shape)) + 0j) if isinstance(o, pf.Tensor) else None for o in outs]
    if kind == "vjp":
        return xs + cots
    if kind == "fwd_over_rev":
        return xs + ts + cots
    B = batch_size(prog)
    vts = [pf.tensor(np.asarray(rng.uniform(-1, 1, (B,) + a.shape), a.dtype)) for a in prog.inputs]
    return xs + vts


def _flat(out) -> list:
    return [None if o is None else np.array(o.detach().numpy() if isinstance(o, pf.Tensor) else o) for o in out]


def _same(a, b) -> str | None:
    for k, (x, y) in enumerate(zip(a, b)):
        if (x is None) != (y is None):
            return f"result {k}: None on one side"
        if x is None:
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"result {k}: {y.shape} {y.dtype} compiled vs {x.shape} {x.dtype} eager"
        if x.dtype.kind in "fc":
            if not np.allclose(y, x, rtol=TOL, atol=TOL, equal_nan=True):
                return f"result {k}: max |diff| {np.nanmax(np.abs(y - x))}"
        elif not np.array_equal(x, y):
            return f"result {k}: differs"
    return None if len(a) == len(b) else f"{len(b)} results compiled vs {len(a)} eager"


def _guarded(f, args):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return _flat(f(*args)), None
    except Exception as e:  # noqa: BLE001 - a crash is a finding (when eager runs)
        return None, e
    finally:
        while STATE.levels:
            pfw.exit_dual_level()
        pf.set_grad_enabled(True)


def _outside(prog: Program, c) -> list:
    """jvp and vjp of the compiled primal vs of the eager one (composition from outside)."""
    n = prog.n_inputs
    xs = _args(prog, "primal")
    ts = _args(prog, "jvp")[n:]
    fl = [i for i, x in enumerate(xs) if _float(x)]
    if not fl:
        return []
    eager_fn = _transforms(prog)["primal"]

    def via(g):
        def f(*d):
            a = list(xs)
            for i, v in zip(fl, d):
                a[i] = v
            return tuple(o for o in g(*a) if _float(o))

        tan = pf.func.jvp(f, tuple(xs[i] for i in fl), tuple(ts[i] for i in fl))[1]
        return list(tan)

    want, e = _guarded(lambda: via(eager_fn), ())
    if e is not None:
        return []  # eager fails: the eager modes report it
    got, e = _guarded(lambda: via(c), ())
    if e is not None:
        raise e
    return [("outside jvp", want, got)]


def check_compiled(prog: Program, mode: str = "compiled") -> list:
    """Findings (check.Finding) of the compiled runs of prog that disagree with eager or crash."""
    from .check import Finding, _fmt

    findings: list = []
    for name, f in _transforms(prog).items():
        try:
            args = _args(prog, name)
        except Exception:  # noqa: BLE001 - the eager primal fails: other modes report it
            return findings
        want, e = _guarded(f, args)
        if e is not None:
            continue  # eager fails: the eager modes report it
        c = pf.compile(f)
        for rep, a in enumerate((args, _args(prog, name, 1.1) if name == "primal" else args)):
            want_a, e_want = (want, None) if rep == 0 else _guarded(f, a)
            got, e = _guarded(c, a)
            if e_want is not None:  # eager refuses these inputs (a domain, a factorisation): so must compiled
                if e is None or type(e) is not type(e_want) or str(e) != str(e_want):
                    what = "no error" if e is None else f"{type(e).__name__}: {e}"
                    findings.append(
                        Finding(
                            f"{mode}:{name}",
                            "pf",
                            "wrong",
                            f"eager raised {type(e_want).__name__}: {e_want}; compiled: {what}",
                        )
                    )
                break
            if e is not None:
                findings.append(Finding(f"{mode}:{name}", "pf", "crash", f"{type(e).__name__}: {e}"))
                break
            bad = None if want_a is None else _same(want_a, got)
            if bad is not None:
                findings.append(Finding(f"{mode}:{name}", "pf", "wrong", bad, None, _fmt(got), _fmt(want_a)))
                break
        eager = any(not hasattr(v, "run") for v in c._cache.values())
        STATS[(name, "eager" if eager else "compiled")] += 1
        if name == "primal":
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    for what, a, b in _outside(prog, c):
                        bad = _same(a, b)
                        if bad is not None:
                            findings.append(Finding(f"{mode}:{what}", "pf", "wrong", bad))
            except Exception as e:  # noqa: BLE001
                findings.append(Finding(f"{mode}:outside", "pf", "crash", f"{type(e).__name__}: {e}"))
            finally:
                while STATE.levels:
                    pfw.exit_dual_level()
    return findings
