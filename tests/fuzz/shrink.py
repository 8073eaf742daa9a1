"""Shrink a failing program while the same failure persists, then print a runnable reproducer."""

from __future__ import annotations

import copy
import re

import numpy as np

from .check import Finding, _fmt, check, fd_grad, second_direction
from .program import Program, Stmt, body_lines, metas_of
from . import jet as jet_mode, transforms as transforms_mode, vector


def _same(f: Finding, g: Finding) -> bool:
    return f.mode == g.mode and f.verdict == g.verdict and f.key() == g.key()


def still_fails(prog: Program, target: Finding) -> Finding | None:
    mode = target.mode.split(":")[0]
    try:
        for f in check(prog, modes=(mode,)):
            if _same(f, target):
                return f
    except Exception:  # noqa: BLE001 - a candidate torch refuses, or the FD could not run
        return None
    return None


def _without_stmt(prog: Program, i: int) -> Program | None:
    """prog minus statement i and everything that reads what it made."""
    dead = set(prog.stmts[i].outs)
    keep = []
    for j, st in enumerate(prog.stmts):
        if j == i:
            continue
        if dead & set(st.args):
            dead |= set(st.outs)
            continue
        keep.append(st)
    p = copy.copy(prog)
    p.stmts = keep
    p.outputs = [o for o in prog.outputs if o not in dead]
    if not p.outputs:
        return None
    return p


def _bypass(prog: Program, i: int) -> Program | None:
    """prog minus statement i, its result replaced by its first operand wherever it is read."""
    st = prog.stmts[i]
    if len(st.outs) != 1 or not st.args:
        return None
    out, src = st.outs[0], st.args[0]
    p = copy.copy(prog)
    p.stmts = [
        s if out not in s.args else Stmt(s.op, [src if a == out else a for a in s.args], s.params, s.outs)
        for s in prog.stmts[:i] + prog.stmts[i + 1 :]
    ]
    p.outputs = list(dict.fromkeys(src if o == out else o for o in prog.outputs))
    p.cotangents = dict(prog.cotangents)
    if src in p.outputs and src not in prog.outputs and out in prog.cotangents:
        try:
            m = metas_of(p)[src]
        except Exception:  # noqa: BLE001 - torch refuses the candidate
            return None
        if m.kind in "fc":
            p.cotangents[src] = np.ones(m.shape, np.complex128 if m.kind == "c" else np.float64)
    return p


def _renumber(prog: Program) -> Program:
    """Drop unused inputs and number the variables consecutively."""
    used = {a for st in prog.stmts for a in st.args} | set(prog.outputs)
    live_inputs = [i for i in range(prog.n_inputs) if i in used] or [0]
    mapping = {old: new for new, old in enumerate(live_inputs)}
    nxt = len(live_inputs)
    stmts = []
    for st in prog.stmts:
        outs = []
        for o in st.outs:
            mapping[o] = nxt
            outs.append(nxt)
            nxt += 1
        stmts.append(Stmt(st.op, [mapping[a] for a in st.args], dict(st.params), outs))
    p = Program(
        [prog.inputs[i] for i in live_inputs],
        stmts,
        [prog.tangents[i] for i in live_inputs],
        [mapping[o] for o in prog.outputs],
        {mapping[o]: c for o, c in prog.cotangents.items() if o in mapping},
        prog.seed,
    )
    return p


def shrink(prog: Program, target: Finding, budget: int = 200) -> tuple:
    """The smallest program found (within budget checks) that still shows target, and its finding."""
    best, found = prog, target
    calls = 0

    def attempt(cand):
        nonlocal best, found, calls
        if cand is None or calls >= budget:
            return False
        calls += 1
        f = still_fails(cand, target)
        if f is not None:
            best, found = cand, f
            return True
        return False

    # 1. keep one output if we know which one mismatches
    if target.out is not None and target.mode.split(":")[-1] in ("primal", "jvp") and len(best.outputs) > 1:
        o = best.outputs[target.out] if target.out < len(best.outputs) else None
        if o is not None:
            c = copy.copy(best)
            c.outputs = [o]
            attempt(c)
    changed = True
    while changed and calls < budget:
        changed = False
        # 2. drop statements, last first
        i = len(best.stmts) - 1
        while i >= 0 and calls < budget:
            if i < len(best.stmts) and attempt(_without_stmt(best, i)):
                changed = True
            elif i < len(best.stmts) and attempt(_bypass(best, i)):
                changed = True
            i -= 1
        # 3. drop outputs
        k = len(best.outputs) - 1
        while k >= 0 and len(best.outputs) > 1 and calls < budget:
            c = copy.copy(best)
            c.outputs = best.outputs[:k] + best.outputs[k + 1 :]
            if attempt(c):
                changed = True
            k -= 1
    # 4. drop unused inputs, renumber; then simpler numbers
    attempt(_renumber(best))
    for simplify in (_round_inputs, _unit_tangents, _unit_cotangents):
        attempt(simplify(best))
    return best, found


def _round_inputs(prog):
    p = copy.copy(prog)
    p.inputs = [np.round(a, 1) for a in prog.inputs]
    if any(np.any(a == 0) for a in p.inputs):
        return None
    return p


def _unit_tangents(prog):
    p = copy.copy(prog)
    p.tangents = [np.ones_like(t) for t in prog.tangents]
    return p


def _unit_cotangents(prog):
    p = copy.copy(prog)
    p.cotangents = {o: np.ones_like(c) for o, c in prog.cotangents.items()}
    return p


# ------------------------------------------------------------------ reproducer text


def _lit(a: np.ndarray) -> str:
    dt = "pf.complex128" if a.dtype.kind == "c" else "pf.float64"
    if a.size == 0:  # tolist() would lose the shape
        return f"pf.zeros({a.shape!r}, dtype={dt})"
    return f"pf.tensor({a.tolist()!r}, dtype={dt})"


def reproducer(prog: Program, f: Finding) -> str:
    """A standalone script over pushforward that prints the wrong number (or raises)."""
    mode = f.mode.split(":")
    base = mode[0]
    n = prog.n_inputs
    outs = [("x" if o < n else "v") + str(o) for o in prog.outputs]
    body = [re.sub(r"\bL\.", "pf.", ln) for ln in body_lines(prog)]
    lines = ["import numpy as np", "import pushforward as pf", "import pushforward.autograd.forward_ad as fwAD", ""]
    if base in vector.VECTOR_MODES:
        return vector.reproducer(prog, f)
    if base == "jet":
        return jet_mode.reproducer(prog, f)
    if base in transforms_mode.TRANSFORM_MODES:
        return transforms_mode.reproducer(prog, f)
    if base in ("fhvp", "rrhvp"):
        return _functional_reproducer(prog, f, base == "fhvp")
    if base == "bjvp":
        return _bjvp_reproducer(prog, f)
    if base == "jvp2":
        return _nested_reproducer(prog, f)
    rg = base in ("vjp", "hvp")
    for i, a in enumerate(prog.inputs):
        lines.append(f"p{i} = {_lit(a)}" + (".requires_grad_()" if rg else ""))
    ind = ""
    if base in ("jvp", "hvp"):
        lines.append("with fwAD.dual_level():")
        ind = "    "
        for i, t in enumerate(prog.tangents):
            lines.append(f"{ind}x{i} = fwAD.make_dual(p{i}, {_lit(t)})")
    else:
        for i in range(n):
            lines.append(f"x{i} = p{i}")
    lines += [ind + ln for ln in body]
    expect = f"pushforward: {f.pf_val}; torch: {f.torch_val}" + (
        f"; finite differences: {f.fd_val}" if f.fd_val is not None else ""
    )
    last = mode[-1]
    if f.what == "wrong" and last == "vjp" and f.diff:
        try:
            g = fd_grad(prog, f.diff)
            expect = f"pushforward: {f.pf_val}; torch: {f.torch_val}; finite differences: {_fmt(g[f.out or 0])}"
        except Exception:  # noqa: BLE001
            pass
    k = f.out if f.out is not None else 0
    if f.what == "crash":
        expect = f"raises {f.detail[:300]}; torch computes it"
    if last == "primal" or (base == "primal"):
        o = outs[min(k, len(outs) - 1)]
        lines.append(f"{ind}print({o})  # {expect}")
    elif last == "jvp" or (base == "jvp"):
        o = outs[min(k, len(outs) - 1)]
        lines.append(f"{ind}print(fwAD.unpack_dual({o}).tangent)  # {expect}")
    else:
        diff = [prog.outputs[j] for j in (f.diff or []) if j < len(prog.outputs)]
        dnames = [("x" if o < n else "v") + str(o) for o in diff]
        cots = ", ".join(_lit(prog.cotangents[o]) for o in diff)
        lines.append(
            f"{ind}g = pf.autograd.grad([{', '.join(dnames)}], [{', '.join(f'p{i}' for i in range(n))}], "
            f"[{cots}], allow_unused=True)"
        )
        if last == "hvp" or (base == "hvp" and len(mode) == 1):
            lines.append(f"{ind}print(fwAD.unpack_dual(g[{k}]).tangent)  # {expect}")
        else:
            lines.append(f"{ind}print(g[{k}])  # {expect}")
    return "\n".join(lines)


def _expect(f: Finding, where: str = "") -> str:
    """The comment a reproducer's print line ends with: both libraries' values, or the crash."""
    if f.what == "crash":
        return f"raises {f.detail[:300]}; torch computes it{where}"
    return f"pushforward: {f.pf_val}; torch: {f.torch_val}; finite differences: {f.fd_val}"


def _input_lines(prog: Program) -> list:
    return [f"x = ({', '.join(_lit(a) for a in prog.inputs)},)", f"t = ({', '.join(_lit(t) for t in prog.tangents)},)"]


def _functional_reproducer(prog: Program, f: Finding, fw_mode: bool) -> str:
    n = prog.n_inputs
    diff = [prog.outputs[j] for j in (f.diff or []) if j < len(prog.outputs)]
    args = ", ".join(f"x{i}" for i in range(n))
    lines = ["import numpy as np", "import pushforward as pf", "", f"def loss({args}):"]
    lines += ["    " + re.sub(r"\bL\.", "pf.", ln) for ln in body_lines(prog)]
    terms = [f"({_lit(prog.cotangents[o])} * {('x' if o < n else 'v') + str(o)}).sum()" for o in diff]
    lines.append("    return " + " + ".join(terms))
    lines.append("")
    lines += _input_lines(prog)
    k = f.out or 0
    expect = _expect(f)
    lines.append(f"print(pf.autograd.functional.hvp(loss, x, t, fw_mode={fw_mode})[1][{k}])  # {expect}")
    return "\n".join(lines)


def _bjvp_reproducer(prog: Program, f: Finding) -> str:
    n = prog.n_inputs
    diff = [prog.outputs[j] for j in (f.diff or []) if j < len(prog.outputs)]
    args = ", ".join(f"x{i}" for i in range(n))
    lines = ["import numpy as np", "import pushforward as pf", "", f"def f({args}):"]
    lines += ["    " + re.sub(r"\bL\.", "pf.", ln) for ln in body_lines(prog)]
    lines.append("    return (" + ", ".join(("x" if o < n else "v") + str(o) for o in diff) + ",)")
    lines.append("")
    lines += _input_lines(prog)
    k = (f.diff or []).index(f.out) if f.out in (f.diff or []) else 0
    expect = _expect(f)
    lines.append(f"print(pf.autograd.functional.jvp(f, x, t, fw_mode=False)[1][{k}])  # {expect}")
    return "\n".join(lines)


def _nested_reproducer(prog: Program, f: Finding) -> str:
    n = prog.n_inputs
    outs = [("x" if o < n else "v") + str(o) for o in prog.outputs]
    o = outs[min(f.out or 0, len(outs) - 1)]
    lines = ["import numpy as np", "import pushforward as pf", "import pushforward.autograd.forward_ad as fwAD", ""]
    for i, a in enumerate(prog.inputs):
        lines.append(f"p{i} = {_lit(a)}")
    lines.append("with fwAD.dual_level():")
    for i, sd in enumerate(second_direction(prog)):
        lines.append(f"    q{i} = fwAD.make_dual(p{i}, {_lit(sd)})")
    lines.append("    with fwAD.dual_level():")
    for i, t in enumerate(prog.tangents):
        lines.append(f"        x{i} = fwAD.make_dual(q{i}, {_lit(t)})")
    lines += ["        " + re.sub(r"\bL\.", "pf.", ln) for ln in body_lines(prog)]
    lines.append(f"        t = fwAD.unpack_dual({o}).tangent")
    expect = _expect(f, " (one level)")
    if f.mode == "jvp2:jvp":
        lines.append(f"        print(fwAD.unpack_dual(t, level=0).primal if t is not None else t)  # {expect}")
    else:
        lines.append(f"    print(fwAD.unpack_dual(t).tangent)  # second order; {expect}")
    return "\n".join(lines)
