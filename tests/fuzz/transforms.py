"""The `transforms` mode: a program under 2-3 nested function transforms whose inner functions close
over the outer transforms' variables.

From a program and its seed, a *nest* is drawn: K = 2 or 3 levels, each a transform (grad,
grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize, vmap, jet, functional.jacobian and
functional.hvp with create_graph, a compiled grad; outermost only: pf.compile of the whole nest and
the sparse Jacobians). The program's real inputs are shared out among the levels; a level without
one gets a scalar variable of its own. The innermost function runs the program on its own
variables and on every outer level's, closed over; each level's function reduces the inner
transform's result to a vector (fixed random weights), multiplies it by a function of one of its
own variables again (``x * grad(...)``), and moves the inner transform's point by a function of an
outer variable (the inner input depends on the outer one). Every name is the same in pushforward
and torch, so the nest runs in both: torch.func (and torch.autograd.functional) is the reference
where torch runs the combination; jet (not in torch) is compared with two nested jvps.

When the two libraries disagree, or torch refuses, finite differences of the outermost level's
function decide: pushforward's outermost transform must agree with them; if it does and the
functions' values differ between the libraries, the nest one level in is checked the same way
(the wrong inner level is reported, with its depth). A program pushforward refuses with a clear
error that torch refuses too is counted, not a failure.

    PYTHONPATH=src python tests/fuzz/run.py --programs 2000 --modes transforms
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

import pushforward as pf
from pushforward.func.sparsity import ValueDependentError

from .oracle import TORCH as ORACLE
from .program import Program, compile_body

TRANSFORM_MODES = ("transforms",)
INNER = (
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "linearize",
    "vmap",
    "jet",
    "fjacobian",
    "fhvp",
    "cgrad",
)
OUTER_ONLY = ("compile", "sparse_jacfwd", "sparse_jacrev", "sparse_hessian")
SCALAR = {"grad", "grad_and_value", "hessian", "fhvp", "cgrad", "sparse_hessian"}
RTOL, ATOL = 1e-6, 1e-8
FD_H = 1e-5


@dataclass
class Level:
    kind: str
    names: list  # variable names of this level: "x<i>" (a program input) or "s<level>" (a scalar)
    again: str | None = None  # a variable of this level used again on the inner result
    mix: str | None = None  # an outer variable the point of this level's transform moves with
    wrap: str | None = None  # "compile": the outermost transform is compiled


@dataclass
class Nest:
    prog: Program
    levels: list
    base: dict = field(default_factory=dict)  # variable name -> numpy value
    consts: dict = field(default_factory=dict)  # program input index -> numpy value (not differentiated)

    def describe(self, start: int = 0) -> str:
        return " o ".join(
            (lv.wrap + "(" if lv.wrap else "")
            + f"{lv.kind}[{','.join(lv.names)}]"
            + (f"(mix {lv.mix})" if lv.mix else "")
            + (f"*{lv.again}" if lv.again else "")
            + (")" if lv.wrap else "")
            for lv in self.levels[start:]
        )


def draw_nest(prog: Program) -> Nest | None:
    """The nest of a program (deterministic in its seed); None when it has no real input."""
    rng = random.Random(f"transforms {prog.seed}")  # (a str seed is hashed the same in every process)
    real = [i for i, a in enumerate(prog.inputs) if a.dtype.kind == "f" and a.size]
    if not real:
        return None
    k = rng.choice((2, 2, 3))
    owner = {i: rng.randrange(k) for i in real}
    nest = Nest(prog, [])
    for i, a in enumerate(prog.inputs):
        if i not in owner:
            nest.consts[i] = a
    for d in range(k):
        names = [f"x{i}" for i in real if owner[i] == d]
        if not names or rng.random() < 0.15:
            names.append(f"s{d}")
            nest.base[f"s{d}"] = np.array(rng.uniform(0.3, 0.9))
        kinds = INNER + (OUTER_ONLY if d == 0 else ())
        kind = rng.choice(kinds)
        if kind.startswith("sparse") and len(names) != 1:
            kind = "jacfwd"
        lv = Level(kind, names)
        if kind == "compile":
            lv.kind, lv.wrap = rng.choice(("grad", "jacrev", "jvp", "vjp", "hessian")), "compile"
        if rng.random() < 0.5:
            lv.again = rng.choice(names)
        if d and rng.random() < 0.6:
            outer = [n for lv2 in nest.levels for n in lv2.names]
            lv.mix = rng.choice(outer)
        nest.levels.append(lv)
    for i in real:
        nest.base[f"x{i}"] = prog.inputs[i]
    return nest


# ------------------------------------------------------------------ running a nest in one library


class _Lib:
    """The names a nest calls, in pushforward or in torch."""

    def __init__(self, L):
        self.L = L
        self.is_torch = L is torch
        # the programs' calls see torch as the eager modes do (oracle.py: torch, with its known wrong
        # derivatives and inaccurate values replaced), so a torch bug finite differences decided
        # there is not blamed or reported unlabelled here
        self.ops = ORACLE if self.is_torch else L
        self.func = torch.func if self.is_torch else pf.func
        self.functional = torch.autograd.functional if self.is_torch else pf.autograd.functional

    def tensor(self, a: np.ndarray):
        return torch.tensor(np.asarray(a)) if self.is_torch else pf.tensor(np.asarray(a))


def _rng(seed, *key) -> np.random.Generator:
    return np.random.default_rng([abs(seed or 0) % (2**32), *key])


def _leaves(res) -> list:
    if isinstance(res, (tuple, list)):
        return [x for r in res for x in _leaves(r)]
    return [res]


def _reduce(lib: _Lib, nest: Nest, depth: int, leaves: list):
    """A vector: one weighted sum per leaf (the weights fixed by the seed, the depth and the leaf)."""
    parts = []
    for j, t in enumerate(leaves):
        if t is None:
            continue
        shape = tuple(t.shape)
        w = _rng(nest.prog.seed, depth, j).uniform(-1, 1, shape)
        if _is_complex(lib, t):
            w = w + 1j * _rng(nest.prog.seed, depth, j, 1).uniform(-1, 1, shape)
        parts.append((t * lib.tensor(w)).real.sum() if _is_complex(lib, t) else (t * lib.tensor(w)).sum())
    if not parts:
        return None
    return lib.L.stack(parts)


def _is_complex(lib: _Lib, t) -> bool:
    return t.dtype.is_complex if lib.is_torch else t.dtype.kind == "c"


def _is_float(lib: _Lib, t) -> bool:
    return (t.dtype.is_floating_point or t.dtype.is_complex) if lib.is_torch else t.dtype.kind in "fc"


def level_fn(lib: _Lib, nest: Nest, depth: int, outer: dict):
    """The function of level `depth`'s variables, closing over `outer` (name -> tensor)."""
    lv = nest.levels[depth]
    prog = nest.prog
    body = compile_body(prog)

    def f(*vs):
        env = dict(outer)
        env.update(zip(lv.names, vs))
        if depth == len(nest.levels) - 1:
            xs = [env.get(f"x{i}") if f"x{i}" in env else lib.tensor(nest.consts[i]) for i in range(prog.n_inputs)]
            scal = [env[n] for n in env if n.startswith("s")]
            if scal:  # a level's scalar enters the program through its first input
                k = min(i for i in range(prog.n_inputs) if i not in nest.consts)
                factor = 1
                for s in scal:
                    factor = factor * (1 + 0.3 * lib.L.sin(s))
                xs[k] = xs[k] * factor
            outs = [o for o in body(lib.ops, *xs) if _is_float(lib, o)]
            r = _reduce(lib, nest, 100, outs)
        else:
            res = apply(lib, nest, depth + 1, level_fn(lib, nest, depth + 1, env), point(lib, nest, depth + 1, env))
            r = _reduce(lib, nest, depth + 1, _leaves(res))
        if r is None:
            raise _Empty()
        if lv.again is not None:
            r = r * (1 + 0.2 * lib.L.tanh(env[lv.again]).mean())
        return r.sum() if lv.kind in SCALAR else r

    return f


class _Empty(Exception):
    """The program has no floating output: nothing to differentiate."""


def point(lib: _Lib, nest: Nest, depth: int, env: dict) -> tuple:
    """The point at which level `depth`'s transform is taken (moved by an outer variable)."""
    lv = nest.levels[depth]
    pts = []
    for n in lv.names:
        p = lib.tensor(nest.base[n])
        if lv.mix is not None:
            p = p + 0.1 * lib.L.tanh(env[lv.mix]).mean()
        pts.append(p)
    return tuple(pts)


def directions(nest: Nest, depth: int, key: int = 0) -> list:
    lv = nest.levels[depth]
    return [
        _rng(nest.prog.seed, depth, 50 + key, j).uniform(-1, 1, np.shape(nest.base[n])) for j, n in enumerate(lv.names)
    ]


def _vjp_cotangent(nest: Nest, depth: int, out_shape: tuple) -> np.ndarray:
    return _rng(nest.prog.seed, depth, 77).uniform(-1, 1, out_shape)


def apply(lib: _Lib, nest: Nest, depth: int, f, pts: tuple):
    """Level `depth`'s transform of f at pts, in lib (torch: its equivalent)."""
    lv = nest.levels[depth]
    F = lib.func
    n = len(pts)
    argnums = tuple(range(n))
    ts = tuple(lib.tensor(d) for d in directions(nest, depth))
    kind = lv.kind
    if lib.is_torch:
        kind = {"cgrad": "grad", "sparse_jacfwd": "jacfwd", "sparse_jacrev": "jacrev", "sparse_hessian": "hessian"}.get(
            kind, kind
        )
    if kind == "grad":
        return F.grad(f, argnums=argnums)(*pts)
    if kind == "cgrad":
        return pf.compile(F.grad(f, argnums=argnums))(*pts)
    if kind == "grad_and_value":
        return F.grad_and_value(f, argnums=argnums)(*pts)
    if kind == "vjp":
        out, fn = F.vjp(f, *pts)
        return out, fn(lib.tensor(_vjp_cotangent(nest, depth, tuple(out.shape))))
    if kind == "jvp":
        return F.jvp(f, pts, ts)
    if kind in ("jacrev", "jacfwd", "hessian"):
        return getattr(F, kind)(f, argnums=argnums)(*pts)
    if kind == "linearize" and lib.is_torch:
        return F.jvp(f, pts, ts)  # (torch.func.linearize traces with make_fx: the same numbers, 100x slower)
    if kind == "linearize":
        out, fn = F.linearize(f, *pts)
        return out, fn(*ts)
    if kind == "vmap":
        batched = tuple(lib.L.stack([p, p * 1.05 + 0.01]) for p in pts)
        return F.vmap(f)(*batched)
    if kind == "jet":
        return _jet(lib, f, pts, ts)
    if kind == "fjacobian":
        return lib.functional.jacobian(f, pts, create_graph=True)
    if kind == "fhvp":
        return lib.functional.hvp(f, pts, ts, create_graph=True)
    if kind.startswith("sparse"):
        flat = getattr(pf.func, kind)(f)(pts[0])
        return pf.tensor(flat.toarray()).reshape(_sparse_shape(f, pts[0], kind))
    raise AssertionError(kind)


def _sparse_shape(f, x, kind: str) -> tuple:
    if kind == "sparse_hessian":
        return tuple(x.shape) * 2
    return tuple(f(x).shape) + tuple(x.shape)


def _jet(lib: _Lib, f, pts: tuple, ts: tuple):
    """(value, first and second derivative along ts): pf.func.jet, or two nested jvps in torch."""
    if not lib.is_torch:
        zeros = tuple(pf.zeros_like(t) for t in ts)
        out, series = pf.func.jet(f, pts, tuple([t, z] for t, z in zip(ts, zeros)))
        return out, series[0], series[1]

    def d1(*p):
        return torch.func.jvp(f, p, ts)[1]

    out, t1 = torch.func.jvp(f, pts, ts)
    return out, t1, torch.func.jvp(d1, pts, ts)[1]


def run_nest(lib: _Lib, nest: Nest, start: int = 0) -> list:
    """The nest's result from level `start` in (outer levels at their base points), as numpy leaves."""
    env = {n: lib.tensor(nest.base[n]) for lv in nest.levels[:start] for n in lv.names}
    lv = nest.levels[start]
    pts = point(lib, nest, start, env)
    if lv.wrap == "compile" and not lib.is_torch:
        out = pf.compile(lambda *p: apply(lib, nest, start, level_fn(lib, nest, start, env), p))(*pts)
    else:
        out = apply(lib, nest, start, level_fn(lib, nest, start, env), pts)
    return [_np(x) for x in _leaves(out)]


def _np(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy().copy()
    return np.array(t.detach().numpy(), copy=True)


def value_at(lib: _Lib, nest: Nest, depth: int, vals: list) -> np.ndarray:
    """Level `depth`'s function at its variables' values `vals` (outer levels at their base points)."""
    env = {n: lib.tensor(nest.base[n]) for lv in nest.levels[:depth] for n in lv.names}
    f = level_fn(lib, nest, depth, env)
    return _np(f(*[lib.tensor(v) for v in vals]))


# ------------------------------------------------------------------ finite differences


def _fd_jac(g, xs: list, h: float) -> list:
    """Per variable, the Jacobian of g (numpy in, numpy out) by central differences: out + in shape."""
    y0 = np.asarray(g(xs))
    jacs = []
    for j, x in enumerate(xs):
        cols = []
        for idx in np.ndindex(*np.shape(x)) if np.ndim(x) else [()]:
            e = np.zeros(np.shape(x))
            e[idx] = h
            xp = list(xs)
            xm = list(xs)
            xp[j] = x + e
            xm[j] = x - e
            cols.append((np.asarray(g(xp)) - np.asarray(g(xm))) / (2 * h))
        jac = np.stack(cols, axis=-1).reshape(y0.shape + np.shape(x)) if cols else np.zeros(y0.shape + np.shape(x))
        jacs.append(jac)
    return jacs


def _fd_dir(g, xs: list, ts: list, h: float, order: int = 1) -> np.ndarray:
    def at(e):
        return np.asarray(g([x + e * t for x, t in zip(xs, ts)]))

    if order == 1:
        return (at(h) - at(-h)) / (2 * h)
    return (at(h) - 2 * at(0.0) + at(-h)) / (h * h)


def fd_reference(nest: Nest, depth: int, g, pts: list, h: float) -> list | None:
    """What level `depth`'s transform should give, by central differences of g at pts (numpy)."""
    lv = nest.levels[depth]
    kind = lv.kind
    ts = directions(nest, depth)
    val = np.asarray(g(pts))
    if kind in ("grad", "cgrad"):
        return _fd_jac(g, pts, h)
    if kind == "grad_and_value":
        return _fd_jac(g, pts, h) + [val]
    if kind == "vjp":
        ct = _vjp_cotangent(nest, depth, val.shape)
        return [val] + [np.tensordot(ct, J, axes=ct.ndim) for J in _fd_jac(g, pts, h)]
    if kind in ("jvp", "linearize"):
        return [val, _fd_dir(g, pts, ts, h)]
    if kind in ("jacrev", "jacfwd", "fjacobian") or kind.startswith("sparse_jac"):
        return _fd_jac(g, pts, h)
    if kind in ("hessian", "sparse_hessian"):
        h2 = max(10 * h, 1e-4)  # (10x h, so that the check's two step sizes differ here too)
        return [hij for gi in range(len(pts)) for hij in _fd_jac(lambda p, gi=gi: _fd_jac(g, p, h2)[gi], pts, h2)]
    if kind == "fhvp":
        h2 = max(10 * h, 1e-4)
        grad_dir = [_fd_dir(lambda p, gi=gi: _fd_jac(g, p, h2)[gi], pts, ts, h2) for gi in range(len(pts))]
        return [val] + grad_dir
    if kind == "jet":
        h2 = max(10 * h, 1e-4)
        return [val, _fd_dir(g, pts, ts, h), _fd_dir(g, pts, ts, h2, order=2)]
    if kind == "vmap":
        return [np.stack([np.asarray(g(pts)), np.asarray(g([p * 1.05 + 0.01 for p in pts]))])]
    return None


# ------------------------------------------------------------------ the check

PF, TORCH = _Lib(pf), _Lib(torch)
FD_BUDGET = 8  # variable elements above which a second-order finite difference is not attempted


def _same(a: list, b: list, loosen: float = 1.0) -> int | None:
    """The index of the first leaf where a and b differ (None: they agree)."""
    from .check import _close

    if len(a) != len(b):
        return 0
    for k, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape or not _close(np.asarray(x, np.complex128), np.asarray(y, np.complex128), loosen):
            return k
    return None


def _finite(ref: list | None) -> bool:
    return ref is None or all(np.all(np.isfinite(r)) for r in ref)


def _points(nest: Nest, depth: int) -> list:
    env = {n: PF.tensor(nest.base[n]) for lv in nest.levels[:depth] for n in lv.names}
    return [_np(p) for p in point(PF, nest, depth, env)]


def _run(lib: _Lib, nest: Nest, start: int):
    try:
        return run_nest(lib, nest, start), None
    except _Empty:
        raise
    except Exception as e:  # noqa: BLE001 - every pushforward crash is a finding; torch's a refusal
        return None, e


def check_transforms(prog: Program, mode: str = "transforms") -> list:
    """The findings of the transforms mode for prog (a list of check.Finding)."""
    nest = draw_nest(prog)
    if nest is None:
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's vmap fallbacks, arithmetic warnings at FD points)
        try:
            return _check_from(nest, 0)
        except _Empty:
            return []


def _check_from(nest: Nest, start: int) -> list:
    from .check import Finding, _fmt

    where = f"depth {start} of {nest.describe()}"
    got, err = _run(PF, nest, start)
    ref, terr = _run(TORCH, nest, start)
    # torch refuses because a value its tape saved was written in place: pushforward keeps it
    # (docs/design.md, "Overwritten saved values"); finite differences check its result
    saved = terr is not None and "modified by an inplace operation" in str(terr)
    if err is not None:
        if terr is not None:
            what = "saved-modified" if saved and "modified by an inplace operation" in str(err) else "refused"
            return [Finding("transforms", "refused", what, f"{type(err).__name__}: {err}"[:200])]
        if isinstance(err, pf.errors.SavedTensorModifiedError):
            # an in-place write into a value a recorded formula kept: torch raises the same error where
            # its formula keeps that value too (y = x.exp(); y.sin_() under grad of jvp), and computes
            # where its formula recomputes it instead (erfinv): which values a formula keeps is a
            # choice, not a derivative
            return [Finding("transforms", "refused", "saved-modified", f"{err} ({where})"[:200])]
        if "would write a batched value into a tensor that is not batched" in str(err):
            # documented deviation (docs/design.md, "Deviations"): under vmap a reverse transform's
            # inputs and a dual with a batched tangent are batched; written in place into a tensor
            # the function made, that tensor is promoted, but a view or a tensor with a derivative
            # is refused with an error that says so, where torch.func computes
            return [Finding("transforms", "refused", "batched-write", f"{err} ({where})"[:200])]
        if "mvlgamma: all elements must be greater than" in str(err):
            # the nest moved mvlgamma's argument out of its domain (x > (p-1)/2): pushforward raises, as
            # SciPy's multigammaln does; torch 2.13 no longer checks and extends the formula with log|Gamma|
            return [Finding("transforms", "refused", "domain", f"{err} ({where})"[:200])]
        if "singular or not invertible" in str(err) and ref is not None and not _finite(ref):
            # the nest met an exactly singular matrix (logit's clamp makes equal entries): no
            # derivative exists there; torch's is inf or nan, pushforward names the op and refuses
            return [Finding("transforms", "refused", "singular", f"{err} ({where})"[:200])]
        if isinstance(err, ValueDependentError) and nest.levels[start].kind.startswith("sparse"):
            # documented (docs/sparse.md): an index computed from the input has no sparsity pattern
            # that holds for every x; the dense transforms (torch's here) compute at one point
            return [Finding("transforms", "refused", "value-dependent", f"{err} ({where})"[:200])]
        return [Finding("transforms", "pf", "crash", f"{type(err).__name__}: {err} ({where})")]
    if ref is not None and _same(got, ref) is None:
        return []
    fd, stable = _fd(nest, start)
    if fd is None:
        if saved:
            return [Finding("transforms", "unchecked", "saved-modified", f"no finite differences ({where})")]
        return [] if ref is None else [Finding("transforms", "unresolved", "wrong", f"no reference ({where})")]
    k = _same(got, fd, 1e4 if stable else 1e5)
    if k is None:
        if ref is None:
            return [Finding("transforms", "checked", "saved-modified", where)] if saved else []
        if start + 1 < len(nest.levels) and _values_differ(nest, start):
            inner = _check_from(nest, start + 1)
            return inner or [Finding("transforms", "unresolved", "wrong", f"values differ ({where})")]
        return [Finding("transforms", "torch", "wrong", where, 0, None, None, None)]
    if not stable:
        return [Finding("transforms", "unresolved", "wrong", f"finite differences unstable ({where})")]
    if "detach" in nest.prog.ops() and (ref is None or _same(ref, fd, 1e4) is not None):
        # detach pins a value that a finite difference moves: only where torch.func (same rule) agrees
        # with the finite differences are they a reference
        return [Finding("transforms", "unresolved", "wrong", f"detach: no reference ({where})")]
    detail = f"result {k} disagrees with finite differences ({where})"
    return [
        Finding(
            "transforms",
            "pf",
            "wrong",
            detail,
            k,
            _fmt(got[k]),
            None if ref is None or k >= len(ref) else _fmt(ref[k]),
            _fmt(fd[k]) if k < len(fd) else None,
        )
    ]


def _values_differ(nest: Nest, start: int) -> bool:
    from .check import _close

    pts = _points(nest, start)
    a = value_at(PF, nest, start, pts)
    try:
        b = value_at(TORCH, nest, start, pts)
    except Exception:  # noqa: BLE001 - torch refuses: no comparison
        return False
    return not _close(np.asarray(a, np.complex128), np.asarray(b, np.complex128))


def _fd(nest: Nest, start: int) -> tuple:
    """(finite-difference reference of level `start`'s transform over pushforward's function, whether
    two step sizes agree); (None, False) when too costly or the function raises at a nearby point."""
    lv = nest.levels[start]
    pts = _points(nest, start)
    size = sum(int(np.size(p)) for p in pts)
    if lv.kind in ("hessian", "sparse_hessian", "fhvp") and size > FD_BUDGET:
        return None, False

    def g(vals):
        return value_at(PF, nest, start, vals)

    try:
        if not np.all(np.isfinite(g(pts))):
            # the nest's scalars moved a value out of an op's domain (the program is sane at its own
            # inputs only): a function that is not finite has no derivative to compare with
            return None, False
        a = fd_reference(nest, start, g, pts, FD_H)
        b = fd_reference(nest, start, g, pts, FD_H * 10)
    except Exception:  # noqa: BLE001 - a point outside the domain
        return None, False
    return a, a is not None and _same(a, b, 1e4) is None


def reproducer(prog: Program, f) -> str:
    """The program, its nest and how to replay it (the nest is drawn from the program's seed)."""
    from .program import source

    nest = draw_nest(prog)
    lits = "\n".join(f"# x{i} = {np.asarray(a).tolist()!r}" for i, a in enumerate(prog.inputs))
    return (
        f"# transforms mode, program {prog.seed}: {nest.describe() if nest else '(no nest)'}\n"
        f"# replay: PYTHONPATH=src python tests/fuzz/run.py --replay {prog.seed} --modes transforms\n"
        f"{lits}\n{source(prog)}\n# {f.detail[:300]}"
    )
