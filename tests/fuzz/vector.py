"""Vector-mode modes of the differential fuzzer: batched tangents and cotangents, and vmap.

  vjvp   the program at `dual_level(batch=B)`, B tangents per input in one pass; row b of every
         output tangent must equal pushforward's own unbatched jvp along tangent b
  vvjp   inputs require grad; B cotangents per output as one BatchedTensor each through one
         `autograd.grad`; row b of every gradient must equal the unbatched vjp of cotangent b
  vhvp   reverse-over-forward at a batched level: inputs require grad and carry B tangents;
         row b of each gradient's tangent must equal the unbatched forward-over-reverse along
         tangent b (one cotangent per output, unbatched)
  vmap   the program under `func.vmap` over a leading batch of B inputs vs a Python loop

The reference is pushforward's unbatched path, which the jvp/vjp/primal modes check against
torch: when the unbatched run itself raises, there is no reference and nothing is reported here
(those modes report it). B is drawn per program from {1, 2, 3, one of the inputs' dims}, so a
rule that swaps the batch dim with a logical dim of the same size cannot go unnoticed.
"""

from __future__ import annotations

import re
import traceback
import warnings

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as pfw
from pushforward.core.batched import BatchedTensor, new_batch_level
from pushforward.engine.state import STATE

from .program import Program, body_lines, compile_body

VECTOR_MODES = ("vjvp", "vvjp", "vhvp", "vmap")


def batch_size(prog: Program) -> int:
    """B for prog: from {1, 2, 3, a dim of an input}, a function of the seed and the input shapes."""
    rng = np.random.default_rng([abs(prog.seed or 0), 7])
    dims = sorted({d for a in prog.inputs for d in a.shape if d > 0})
    choices = [1, 2, 3] + ([int(rng.choice(dims))] if dims else [])
    return int(choices[rng.integers(len(choices))])


def _rand(rng, shape, like) -> np.ndarray:
    a = rng.uniform(-1.0, 1.0, shape)
    if like.dtype.kind == "c":
        a = a + 1j * rng.uniform(-1.0, 1.0, shape)
    return np.asarray(a, like.dtype)


def batched_tangents(prog: Program, B: int) -> list:
    rng = np.random.default_rng([abs(prog.seed or 0), 11, B])
    return [_rand(rng, (B,) + a.shape, a) for a in prog.inputs]


def batched_cotangents(prog: Program, B: int, diff: list, out_like: list) -> list:
    rng = np.random.default_rng([abs(prog.seed or 0), 13, B])
    return [_rand(rng, (B,) + out_like[k].shape, out_like[k]) for k in diff]


def batched_inputs(prog: Program, B: int) -> list:
    """Row 0 is the program's input; the others are nearby points (same signs, so the same branch)."""
    rng = np.random.default_rng([abs(prog.seed or 0), 17, B])
    return [
        np.stack([a] + [np.asarray(a * rng.uniform(0.8, 1.2, a.shape), a.dtype) for _ in range(B - 1)])
        for a in prog.inputs
    ]


def vmap_dims(prog: Program) -> tuple:
    """vmap's in_dims for prog: with two or more inputs, some (drawn from the seed) are left unbatched,
    so the batching rules' mixed cases (a batch times a constant) run; at least one is batched."""
    n = len(prog.inputs)
    rng = np.random.default_rng([abs(prog.seed or 0), 23])
    dims = [None if n > 1 and rng.random() < 0.3 else 0 for _ in range(n)]
    if n and all(d is None for d in dims):
        dims[int(rng.integers(n))] = 0
    return tuple(dims)


def vmap_inputs(prog: Program, B: int) -> tuple:
    """(the inputs vmap takes, in_dims): an unbatched input is the program's own."""
    dims = vmap_dims(prog)
    X = [x if d == 0 else a for x, a, d in zip(batched_inputs(prog, B), prog.inputs, dims)]
    return X, dims


def _np(t):
    return None if t is None else np.array(t.detach().numpy(), copy=True)


def _guard(fn):
    """fn() with warnings silenced; (result, exception); never leaks an open level."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # noqa: BLE001 - every pushforward error is a finding (or no reference)
        return None, e
    finally:
        while STATE.levels:
            pfw.exit_dual_level()
        pf.set_grad_enabled(True)


# ------------------------------------------------------------------ running


def run_jvp(prog: Program, tangents: list, B: int | None) -> dict:
    """Outputs and tangents of one pass at a dual level (batched when B is not None)."""
    fn = compile_body(prog)
    xs = [pf.tensor(a.copy()) for a in prog.inputs]
    with pfw.dual_level(**({} if B is None else {"batch": B})):
        outs = fn(pf, *[pfw.make_dual(x, pf.tensor(t.copy())) for x, t in zip(xs, tangents)])
        return {
            "out": [_np(pfw.unpack_dual(o).primal) for o in outs],
            "tan": [_np(pfw.unpack_dual(o).tangent) for o in outs],
        }


def run_vjp(prog: Program, cots: list | None, diff: list | None, level: int | None = None) -> dict:
    """Gradients for cotangents cots (one per output in diff; batched at `level` if given)."""
    fn = compile_body(prog)
    xs = [pf.tensor(a.copy()).requires_grad_() for a in prog.inputs]
    outs = fn(pf, *xs)
    if diff is None:
        diff = [k for k, o in enumerate(outs) if o.requires_grad and o.dtype.kind in "fc"]
    res = {"out": [_np(o) for o in outs], "diff": diff}
    if not diff or cots is None:
        return res
    gos = [pf.tensor(c.copy()) if level is None else BatchedTensor(pf.tensor(c.copy()), level) for c in cots]
    gs = pf.autograd.grad([outs[k] for k in diff], xs, gos, allow_unused=True)
    res["grad"] = [None if g is None else (_np(g._phys) if type(g) is BatchedTensor else _np(g)) for g in gs]
    return res


def run_hvp(prog: Program, tangents: list, B: int | None, cots: list, diff: list) -> list:
    """The tangents (batched when B is not None) of the gradients for cotangents cots."""
    fn = compile_body(prog)
    xs = [pf.tensor(a.copy()).requires_grad_() for a in prog.inputs]
    with pfw.dual_level(**({} if B is None else {"batch": B})):
        outs = fn(pf, *[pfw.make_dual(x, pf.tensor(t.copy())) for x, t in zip(xs, tangents)])
        gs = pf.autograd.grad([outs[k] for k in diff], xs, [pf.tensor(c.copy()) for c in cots], allow_unused=True)
        return [None if g is None else _np(pfw.unpack_dual(g).tangent) for g in gs]


def run_vmap(prog: Program, X: list, dims: tuple) -> list:
    fn = compile_body(prog)
    outs = pf.func.vmap(lambda *xs: tuple(fn(pf, *xs)), in_dims=dims)(*[pf.tensor(a.copy()) for a in X])
    return [_np(o) for o in outs]


def run_primal(prog: Program, xs: list) -> list:
    return [_np(o) for o in compile_body(prog)(pf, *[pf.tensor(a.copy()) for a in xs])]


# ------------------------------------------------------------------ comparing


def _rows_mismatch(batched, rows, shape, dtype, B) -> str | None:
    """Where batched (B, *shape) differs from the stacked rows (None entries: zero)."""
    from .check import _close

    zero = np.zeros(shape, dtype if np.dtype(dtype).kind in "fc" else np.float64)
    want = np.stack([zero if r is None else r for r in rows]) if B else np.zeros((0,) + shape)
    if batched is None:
        return None if not want.any() else "missing"
    if batched.shape != (B,) + tuple(shape):
        return f"shape {batched.shape}, expected {(B,) + tuple(shape)}"
    for b in range(B):
        if not _close(batched[b], want[b]):
            return f"row {b}"
    return None


def _unbatched_rows(B: int, run) -> list | None:
    """run(b) for every batch row b (the unbatched reference); None if one of them raises."""
    rows = []
    for b in range(B):
        r, e = _guard(lambda: run(b))
        if e is not None:
            return None
        rows.append(r)
    return rows


def _crash(e: Exception) -> str:
    """The error, and for an array read on a batched tensor the function that did it (so that
    each unbatchable spot is its own failure class, not one class for all)."""
    msg = f"{type(e).__name__}: {e}"
    if "reads a tensor's array directly" in msg:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.endswith("_batched.py")]
        if frames:
            msg = f"in {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].name}, {msg}"
    return msg


def check_vector(prog: Program, mode: str) -> list:
    """The findings of one vector mode for prog (a list of check.Finding)."""
    from .check import Finding, _fmt

    B = batch_size(prog)
    base, e0 = _guard(lambda: run_vjp(prog, None, None))
    if e0 is not None:
        return []  # the primal run fails: the primal mode reports it
    findings: list = []

    def fail(what, detail, k=None, got=None, want=None):
        findings.append(Finding(mode, "pf", what, detail, k, _fmt(got), _fmt(want), None))

    if mode == "vjvp":
        V = batched_tangents(prog, B)
        rows = _unbatched_rows(B, lambda b: run_jvp(prog, [v[b] for v in V], None))
        if rows is None:
            return []  # no reference: jvp mode reports the unbatched failure
        got, e = _guard(lambda: run_jvp(prog, V, B))
        if e is not None:
            fail("crash", _crash(e))
            return findings
        for k, o in enumerate(base["out"]):
            if o is None:
                continue
            if o.dtype.kind not in "fc":
                if got["tan"][k] is not None:
                    fail("int-tangent", f"output {k} ({o.dtype}) has a batched tangent", k, got["tan"][k], None)
                    break
                continue
            where = _rows_mismatch(got["tan"][k], [r["tan"][k] for r in rows], o.shape, o.dtype, B)
            if where is not None:
                fail(
                    "wrong" if where.startswith("row") else "shape",
                    f"tan of output {k}: {where}",
                    k,
                    got["tan"][k],
                    np.stack([np.zeros(o.shape) if r["tan"][k] is None else r["tan"][k] for r in rows]),
                )
                break
    elif mode == "vvjp":
        diff = base["diff"]
        if not diff:
            return []
        C = batched_cotangents(prog, B, diff, base["out"])
        rows = _unbatched_rows(B, lambda b: run_vjp(prog, [c[b] for c in C], diff))
        if rows is None:
            return []  # no reference: vjp mode reports the unbatched failure
        got, e = _guard(lambda: run_vjp(prog, C, diff, new_batch_level()))
        if e is not None:
            fail("crash", _crash(e))
            return findings
        for i, a in enumerate(prog.inputs):
            where = _rows_mismatch(got["grad"][i], [r["grad"][i] for r in rows], a.shape, a.dtype, B)
            if where is not None:
                fail(
                    "wrong" if where.startswith("row") else "shape",
                    f"grad of input {i}: {where}",
                    i,
                    got["grad"][i],
                    [r["grad"][i] for r in rows],
                )
                break
    elif mode == "vhvp":
        diff = base["diff"]
        if not diff:
            return []
        V = batched_tangents(prog, B)
        cots = [c[0] for c in batched_cotangents(prog, 1, diff, base["out"])]
        rows = _unbatched_rows(B, lambda b: run_hvp(prog, [v[b] for v in V], None, cots, diff))
        if rows is None:
            return []  # no reference: hvp mode reports the unbatched failure
        got, e = _guard(lambda: run_hvp(prog, V, B, cots, diff))
        if e is not None:
            fail("crash", _crash(e))
            return findings
        for i, a in enumerate(prog.inputs):
            where = _rows_mismatch(got[i], [r[i] for r in rows], a.shape, a.dtype, B)
            if where is not None:
                fail(
                    "wrong" if where.startswith("row") else "shape",
                    f"gradient's tangent of input {i}: {where}",
                    i,
                    got[i],
                    [r[i] for r in rows],
                )
                break
    elif mode == "vmap":
        X, dims = vmap_inputs(prog, B)
        rows = _unbatched_rows(B, lambda b: run_primal(prog, [x if d is None else x[b] for x, d in zip(X, dims)]))
        if rows is None:
            return []
        got, e = _guard(lambda: run_vmap(prog, X, dims))
        if e is not None and "would write a batched value into a tensor that is not batched" in str(e):
            return []  # documented: vmap refuses a batched write into a view or a tensor with a derivative
        if e is not None and "into a tensor made outside the vmapped function" in str(e):
            return []  # documented: vmap refuses a batched write into an unbatched input, as torch's does
        if e is not None and "the result's shape depends on the input's values" in str(e):
            return []  # documented: vmap refuses an op whose output shape varies across the batch
        if e is not None:
            fail("crash", _crash(e))
            return findings
        for k, o in enumerate(base["out"]):
            if o is None:
                continue
            where = _rows_mismatch(got[k], [r[k] for r in rows], o.shape, o.dtype, B)
            if where is not None:
                fail(
                    "wrong" if where.startswith("row") else "shape",
                    f"output {k}: {where}",
                    k,
                    got[k],
                    [r[k] for r in rows],
                )
                break
    return findings


# ------------------------------------------------------------------ reproducer


def _lit(a: np.ndarray) -> str:
    dt = "pf.complex128" if a.dtype.kind == "c" else "pf.float64"
    if a.size == 0:
        return f"pf.zeros({a.shape!r}, dtype={dt})"
    return f"pf.tensor({a.tolist()!r}, dtype={dt})"


def reproducer(prog: Program, f) -> str:
    """A standalone script printing the batched result next to the unbatched one it must equal."""
    n = prog.n_inputs
    B = batch_size(prog)
    name = {o: ("x" if o < n else "v") + str(o) for o in prog.outputs}
    outs = ", ".join(name[o] for o in prog.outputs)
    body = ["    " + re.sub(r"\bL\.", "pf.", ln) for ln in body_lines(prog)]
    args = ", ".join(f"x{i}" for i in range(n))
    lines = [
        "import numpy as np",
        "import pushforward as pf",
        "import pushforward.autograd.forward_ad as fwAD",
        "from pushforward.core.batched import BatchedTensor, new_batch_level",
        "",
        f"def f({args}):",
        *body,
        f"    return [{outs}]",
        "",
    ]
    k = f.out or 0
    crash = f"raises {f.detail[:300]}" if f.what == "crash" else f"batched: {f.pf_val}; row by row: {f.torch_val}"
    if f.mode == "vjvp":
        V = batched_tangents(prog, B)
        lines += [f"p{i} = {_lit(a)}" for i, a in enumerate(prog.inputs)]
        lines += [f"V{i} = {_lit(v)}" for i, v in enumerate(V)]
        lines += [
            f"with fwAD.dual_level(batch={B}):",
            f"    y = f({', '.join(f'fwAD.make_dual(p{i}, V{i})' for i in range(n))})",
            f"    print(fwAD.unpack_dual(y[{k}]).tangent)  # {crash}",
            f"for b in range({B}):",
            "    with fwAD.dual_level():",
            f"        y = f({', '.join(f'fwAD.make_dual(p{i}, V{i}[b])' for i in range(n))})",
            f"        print(fwAD.unpack_dual(y[{k}]).tangent)",
        ]
    elif f.mode == "vvjp":
        base = run_vjp(prog, None, None)
        diff = base["diff"]
        C = batched_cotangents(prog, B, diff, base["out"])
        lines += [f"p{i} = {_lit(a)}.requires_grad_()" for i, a in enumerate(prog.inputs)]
        lines += [f"C{j} = {_lit(c)}" for j, c in enumerate(C)]
        sel = ", ".join(f"y[{d}]" for d in diff)
        ps = ", ".join(f"p{i}" for i in range(n))
        lines += [
            "lv = new_batch_level()",
            f"y = f({ps})",
            f"g = pf.autograd.grad([{sel}], [{ps}], [{', '.join(f'BatchedTensor(C{j}, lv)' for j in range(len(C)))}],"
            " allow_unused=True)",
            f"print(g[{k}])  # {crash}",
            f"for b in range({B}):",
            f"    y = f({ps})",
            f"    print(pf.autograd.grad([{sel}], [{ps}], [{', '.join(f'C{j}[b]' for j in range(len(C)))}],"
            f" allow_unused=True)[{k}])",
        ]
    elif f.mode == "vhvp":
        base = run_vjp(prog, None, None)
        diff = base["diff"]
        V = batched_tangents(prog, B)
        cots = [c[0] for c in batched_cotangents(prog, 1, diff, base["out"])]
        ps = ", ".join(f"p{i}" for i in range(n))
        sel = ", ".join(f"y[{d}]" for d in diff)
        cl = ", ".join(_lit(c) for c in cots)
        lines += [f"p{i} = {_lit(a)}.requires_grad_()" for i, a in enumerate(prog.inputs)]
        lines += [f"V{i} = {_lit(v)}" for i, v in enumerate(V)]
        lines += [
            f"with fwAD.dual_level(batch={B}):",
            f"    y = f({', '.join(f'fwAD.make_dual(p{i}, V{i})' for i in range(n))})",
            f"    g = pf.autograd.grad([{sel}], [{ps}], [{cl}], allow_unused=True)",
            f"    print(fwAD.unpack_dual(g[{k}]).tangent)  # {crash}",
            f"for b in range({B}):",
            "    with fwAD.dual_level():",
            f"        y = f({', '.join(f'fwAD.make_dual(p{i}, V{i}[b])' for i in range(n))})",
            f"        g = pf.autograd.grad([{sel}], [{ps}], [{cl}], allow_unused=True)",
            f"        print(fwAD.unpack_dual(g[{k}]).tangent)",
        ]
    else:
        X, dims = vmap_inputs(prog, B)
        lines += [f"X{i} = {_lit(x)}" for i, x in enumerate(X)]
        xs = ", ".join(f"X{i}" for i in range(n))
        lines += [
            f"print(pf.func.vmap(lambda *a: tuple(f(*a)), in_dims={dims})({xs})[{k}])  # {crash}",
            f"for b in range({B}):",
            f"    print(f({', '.join(f'X{i}' if d is None else f'X{i}[b]' for i, d in enumerate(dims))})[{k}])",
        ]
    return "\n".join(lines)
