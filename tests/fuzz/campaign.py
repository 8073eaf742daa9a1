"""A fuzzing campaign: generate, check, group the failures into classes, shrink one per class."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from .check import check
from .program import generate
from .table import OPS
from .shrink import reproducer, shrink

PROGRAMS_PER_SEED = 1_000_000  # program i of seed s is generate(s * PROGRAMS_PER_SEED + i)


@dataclass
class FailureClass:
    key: tuple  # (mode, what, normalized message)
    verdict: str  # "pf" or "torch" (a torch bug FD confirms) or "unresolved"
    ops: frozenset  # op names of the shrunk program
    count: int = 0
    seed: int | None = None  # the first program that showed it
    repro: str = ""
    n_stmts: int = 0

    def title(self) -> str:
        mode, what, msg = self.key
        return f"[{self.verdict}] {mode} {what}: {' '.join(sorted(self.ops)) or '(no ops)'}" + (
            f" -- {msg[:120]}" if msg else ""
        )


@dataclass
class Report:
    programs: int = 0
    generated_none: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # CPU time of the worker(s): the per-core rate on a shared machine
    failing_programs: int = 0
    counts: Counter = field(default_factory=Counter)  # (verdict, mode, what) -> findings
    classes: dict = field(default_factory=dict)  # (verdict, key, ops) -> FailureClass

    def merge(self, other: "Report") -> None:
        self.programs += other.programs
        self.generated_none += other.generated_none
        self.seconds = max(self.seconds, other.seconds)
        self.cpu_seconds += other.cpu_seconds
        self.failing_programs += other.failing_programs
        self.counts.update(other.counts)
        for k, c in other.classes.items():
            if k in self.classes:
                self.classes[k].count += c.count
            else:
                self.classes[k] = c

    def failures(self) -> list:
        return [c for c in self.classes.values() if c.verdict == "pf"]


def _classify(report: Report, prog, f, shrink_budget: int, max_shrinks: int, shrunk_per_key: Counter) -> None:
    ops = set(prog.ops())
    # a crash is one class per message; a wrong number one class per set of ops of its shrunk program
    known = [
        c
        for c in report.classes.values()
        if c.key == f.key() and c.verdict == f.verdict and (f.what == "crash" or c.ops <= ops)
    ]
    if known:
        min(known, key=lambda c: len(c.ops)).count += 1
        return
    if shrunk_per_key[(f.verdict, f.key())] >= max_shrinks:
        # too many distinct shapes of this failure already: lump it with the smallest class
        same = [c for c in report.classes.values() if c.key == f.key() and c.verdict == f.verdict]
        min(same, key=lambda c: len(c.ops)).count += 1
        return
    shrunk_per_key[(f.verdict, f.key())] += 1
    small, g = shrink(prog, f, budget=shrink_budget) if shrink_budget else (prog, f)
    cls = FailureClass(f.key(), f.verdict, frozenset(small.ops()), 1, prog.seed, reproducer(small, g), len(small.stmts))
    k = (cls.verdict, cls.key, cls.ops)
    if k in report.classes:
        report.classes[k].count += 1
    else:
        report.classes[k] = cls


def run_campaign(
    seed: int,
    *,
    n_programs: int | None = None,
    seconds: float | None = None,
    worker: int = 0,
    jobs: int = 1,
    shrink_budget: int = 150,
    max_shrinks: int = 12,
    progress=None,
    exclude=(),
    modes=None,
) -> Report:
    """Run programs worker, worker + jobs, ... of seed until n_programs or seconds run out."""
    pool = [op for op in OPS if op.name not in set(exclude)]
    rep = Report()
    shrunk = Counter()
    t0 = time.perf_counter()
    c0 = time.process_time()
    i = worker
    while True:
        if n_programs is not None and rep.programs + rep.generated_none >= n_programs:
            break
        if seconds is not None and time.perf_counter() - t0 >= seconds:
            break
        pseed = seed * PROGRAMS_PER_SEED + i
        i += jobs
        prog = generate(pseed, ops=pool)
        if prog is None:
            rep.generated_none += 1
            continue
        rep.programs += 1
        findings = check(prog) if modes is None else check(prog, modes=tuple(modes))
        failing = False
        seen = set()
        for f in findings:
            rep.counts[(f.verdict, f.mode, f.what)] += 1
            if f.verdict in ("pf", "torch", "unresolved") and (f.verdict, f.key()) not in seen:
                seen.add((f.verdict, f.key()))
                failing |= f.verdict == "pf"
                if f.verdict == "unresolved":
                    continue  # FD could not decide (a kink near the point): counted, not shrunk
                _classify(rep, prog, f, shrink_budget, max_shrinks, shrunk)
        rep.failing_programs += failing
        if progress is not None and (failing or rep.programs % 500 == 0):
            progress(rep, time.perf_counter() - t0, pseed if failing else None)
    rep.seconds = time.perf_counter() - t0
    rep.cpu_seconds = time.process_time() - c0
    return rep


def format_report(rep: Report, jobs: int = 1) -> str:
    lines = [
        f"programs run: {rep.programs} (+{rep.generated_none} not generated) in {rep.seconds:.1f} s "
        f"on {jobs} job(s): {rep.programs / max(rep.seconds, 1e-9) * jobs:.1f} programs/s "
        f"({rep.programs / max(rep.seconds, 1e-9):.1f} per job incl. shrinking; "
        f"{rep.programs / max(rep.cpu_seconds, 1e-9):.1f} per CPU-second)",
        f"programs with a pushforward failure: {rep.failing_programs}",
        "findings by (verdict, mode, what):",
    ]
    for k, v in sorted(rep.counts.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {k}: {v}")
    by_label: dict = {}
    for c in rep.classes.values():
        lab = f"[{c.verdict}] " + (label(c) or "UNLABELLED (candidate new class: read its reproducer)")
        n_cls, n_find = by_label.get(lab, (0, 0))
        by_label[lab] = (n_cls + 1, n_find + c.count)
    lines.append("classes by label (classes, findings):")
    for lab, (n_cls, n_find) in sorted(by_label.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"  {lab}: {n_cls}, {n_find}")
    for verdict, head in (
        ("pf", "PUSHFORWARD FAILURES"),
        ("torch", "TORCH BUGS (finite differences side with pushforward)"),
    ):
        cls = sorted((c for c in rep.classes.values() if c.verdict == verdict), key=lambda c: -c.count)
        lines.append(f"\n===== {head}: {len(cls)} classes")
        for c in cls:
            lines.append(f"\n--- {c.title()}  x{c.count}  (first seed {c.seed})  <{label(c) or 'UNLABELLED'}>")
            lines.append(c.repro)
    return "\n".join(lines)


# ------------------------------------------------------------------ labels for the known classes
# A heuristic first sorting of the classes for the findings file: which known class (_CRASH_LABELS, ...) a
# shrunk failure most likely belongs to. An unlabelled class is a candidate NEW class (read its
# reproducer); a label is a hint, not a proof.
_CRASH_LABELS = [
    ("modified by an inplace operation", "known: saved tensors the formula does not need"),
    ("read-only", "known: expand without broadcasting is read-only"),
    ("repeated index", "known: einsum backward with a repeated index"),
    ("zero-size array", "known: reductions on empty inputs"),
    ("non-empty tensor", "known: reductions on empty inputs"),
    ("view size is not compatible", "known: non-contiguous results, .view fails"),
    ("does not require grad", "known: copysign(constant, x) / requires_grad lost"),
    ("Mismatch in shape", "known: gather broadcasts its index"),
    ("could not be broadcast", "known: gather broadcasts its index"),
]
_SHARED = {
    "add_s",
    "radd_s",
    "sub_s",
    "rsub_s",
    "const",
    "zeros_like",
    "fmod_s",
    "remainder_s",
    "fmod",
    "remainder",
    "min_dim",
    "max_dim",
    "prod_dim",
    "min",
    "max",
    "prod",
}
_ADDS = {"add", "add_m", "add_alpha", "sub", "sub_alpha"}
_ZERO_TANGENT = {"floor", "ceil", "trunc", "round", "sign", "detach", "const"}
_ALIAS = {"contiguous", "to_same", "to_f64", "double", "einsum"}
_SINGULAR = {"sqrt", "sqrt_", "pow_s", "pow_s_", "asin", "acos", "acosh", "hypot"}
_CASTS = {"long_double", "bool_double", "to_long", "cdouble_of_int"}
_WRITES = {op.name for op in OPS if op.inplace}


def label(c: FailureClass) -> str:
    mode, what, msg = c.key
    if c.verdict == "torch":
        if "kron" in c.ops and c.ops & _WRITES and not mode.endswith("jvp"):
            # torch's kron multiplies views of its inputs that its version counters do not track: an
            # in-place write into an input after kron goes unseen, and torch's gradient silently uses
            # the new values (finite differences side with pushforward, which keeps the saved values)
            return "torch bug: kron's backward reads its inputs after an in-place write it does not see"
        if c.ops & {"mul_", "imul", "self_mul_", "view_inplace"}:
            return "torch bug: forward AD of an in-place op whose operand aliases its output (y.mul_(y))"
        if c.ops & {"remainder_s", "fmod_s", "remainder", "fmod"}:
            return "torch bug: remainder/fmod(x, s) shares x's tangent object (torch's own class 1)"
        if c.ops & {"pow", "pow_r0"}:
            return "torch bug: forward AD of complex ** real tensor"
        if "cholesky_inverse" in c.ops:
            return "torch bug: forward AD (and double backward) of cholesky_inverse"
        if "scatter_reduce" in c.ops:
            return "torch bug: scatter_reduce 'prod' where src is self (include_self)"
        if c.ops & _SINGULAR:
            return "torch's nan: 0 * inf where a zero cotangent meets an infinite derivative (sqrt at 0)"
        if mode == "jvp2":
            return "torch's jvp slightly wrong (below first-order tolerance): its difference quotient is off"
        return ""
    if "gather" in c.ops:
        return "known 2: gather broadcasts its index"
    if what == "crash":
        if mode == "fhvp" and ("NoneType" in msg or "tri()" in msg):
            return "NEW-2: functional.hvp, a zero tangent reaches a deferred formula"
        if "flatten" in msg and "newaxis" in msg:
            return "NEW-3: flatten(d, d) of an empty tensor"
        return next((lab for pat, lab in _CRASH_LABELS if pat in msg), "")
    if what == "int-tangent" or c.ops & _CASTS:
        return "known 5: integer/bool casts keep tangents"
    if "gather" in c.ops:
        return "known 2: gather broadcasts its index"
    if c.ops & {"conj", "mH", "H"} and mode.endswith("primal"):
        return "NEW-1: conj() is a copy (torch: a view)"
    if mode in ("rrhvp", "bjvp") and c.ops & _ADDS:
        return "known 4: add's backward returns one object for both inputs (repeated outputs)"
    if c.ops & _SHARED or (c.ops & _ADDS and (c.ops & _ZERO_TANGENT or mode == "jvp2")):
        return "known 1: a result shares its input's tangent object"
    if c.ops & _ALIAS:
        return "known 3/4: shared memory autograd does not know / repeated outputs"
    return ""
