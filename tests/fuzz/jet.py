"""The jet mode of the differential fuzzer: Taylor mode against nested dual levels.

  jet    `func.jet` of the program to order 3 along its tangents (series [t, 0, 0]); every
         output's three derivatives must equal those of 3 nested dual levels along the same
         tangents (pushforward's own forward mode, which the jvp/jvp2 modes check against torch)

A program jet refuses with a clear error ("jet: ...", NotImplementedError: an op without a Taylor
rule) is counted as refused, not as a failure; so is a program whose nested reference raises (the
other modes report that).
"""

from __future__ import annotations

import re

import numpy as np

import pushforward as pf
from pushforward.func import jet
from pushforward.testing.taylor_check import nested_derivatives

from .program import Program, body_lines, compile_body

JET_MODES = ("jet",)
ORDER = 3


def _setup(prog: Program):
    """(function of the floating inputs, floating inputs, their tangents): integer inputs are
    closed over as constants (jet takes floating primals only)."""
    fn = compile_body(prog)
    xs = [pf.tensor(a.copy()) for a in prog.inputs]
    fl = [i for i, a in enumerate(prog.inputs) if a.dtype.kind in "fc"]

    def f(*floats):
        args = [x.clone() for x in xs]  # (integer inputs: fresh each run, the program may write them)
        for i, v in zip(fl, floats):
            args[i] = v
        return tuple(fn(pf, *args))

    return f, [xs[i] for i in fl], [pf.tensor(prog.tangents[i].copy()) for i in fl]


def _values(t) -> np.ndarray | None:
    return None if t is None else np.asarray(t.detach().numpy())


def check_jet_mode(prog: Program) -> list:
    """The findings of the jet mode for prog (a list of check.Finding)."""
    from .check import Finding, _close, _fmt

    f, xs, vs = _setup(prog)
    if not xs:
        return []
    try:
        want = nested_derivatives(f, xs, vs, ORDER)
    except Exception:  # noqa: BLE001 - no reference: the jvp modes report it
        return []
    try:
        _, terms = jet(f, tuple(x.clone() for x in xs), tuple([v] + [pf.zeros_like(v)] * (ORDER - 1) for v in vs))
    except NotImplementedError as e:
        if str(e).startswith("jet:"):
            return [Finding("jet", "refused", "refused", str(e)[:200])]
        return [Finding("jet", "pf", "crash", f"{type(e).__name__}: {e}")]
    except Exception as e:  # noqa: BLE001 - every crash is a finding
        return [Finding("jet", "pf", "crash", f"{type(e).__name__}: {e}")]
    for k in range(ORDER):
        for i, out in enumerate(terms):
            got, ref = _values(out[k]), _values(want[k][i])
            if ref.dtype.kind not in "fc":
                continue
            if got.shape != ref.shape or not _close(got, ref):
                detail = f"derivative {k + 1} of output {i}: jet and nested dual levels disagree"
                return [Finding("jet", "pf", "wrong", detail, i, _fmt(got), _fmt(ref), None)]
    return []


def reproducer(prog: Program, f) -> str:
    """A standalone script printing jet's derivatives next to the nested dual levels'."""
    n = prog.n_inputs
    name = {o: ("x" if o < n else "v") + str(o) for o in prog.outputs}
    outs = ", ".join(name[o] for o in prog.outputs)
    body = ["    " + re.sub(r"\bL\.", "pf.", ln) for ln in body_lines(prog)]
    args = ", ".join(f"x{i}" for i in range(n))
    lit = [np.asarray(a).tolist() for a in prog.inputs]
    tan = [np.asarray(t).tolist() for t in prog.tangents]
    return "\n".join(
        [
            "import numpy as np",
            "import pushforward as pf",
            "from pushforward.func import jet",
            "from pushforward.testing.taylor_check import nested_derivatives",
            "",
            f"def f({args}):",
            *body,
            f"    return ({outs},)",
            "",
            f"xs = [pf.tensor(a) for a in {lit!r}]",
            f"vs = [pf.tensor(t) for t in {tan!r}]",
            f"print(jet(f, tuple(xs), tuple([v, pf.zeros_like(v), pf.zeros_like(v)] for v in vs))[1])"
            f"  # {f.detail[:200]}",
            f"print(nested_derivatives(f, xs, vs, {ORDER}))",
        ]
    )
