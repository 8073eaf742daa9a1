"""The `pushforward` command.

    pushforward demo                      differentiate a few things and compare with calculus
    pushforward check [--ops sin,mul] [--fast] [--jobs N] [--complex] [--compiled] [--lazy] [--all]
                                          run the op database through gradcheck (one process per
                                          core; --all adds the slow columns); table + exit code
    pushforward ops [--ops sin,mul]       the coverage table, read from the generated code (no checks)
    pushforward bench [--quick] [--plot FILE]
                                          time common workloads against NumPy by hand, PyTorch, JAX

`check` exits 0 when every check passed, 1 when any failed, 2 on a usage error (an unknown
op name, or no op database). `bench` exits 0, 1 when a library computed a different result (or
--plot could not draw: no matplotlib), 2 on a usage error, 130 after Ctrl-C (the tables of what
was measured are printed first).
"""

from __future__ import annotations

import argparse
import inspect
import difflib
import multiprocessing as mp
import os
import signal
import sys
import time
from typing import Callable, Sequence, TextIO

import numpy as np

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from .ops import generated as gen
from .dispatch.oprecord import Op
from . import bench
from .bench.plot import plot_format, plot_results, require_matplotlib
from .bench.report import summary as bench_summary, tables as bench_tables
from .bench.runner import cells as bench_cells

__all__ = [
    "main",
    "demo",
    "run_check",
    "run_ops",
    "run_bench",
    "ops_table",
    "coverage",
    "format_table",
    "build_parser",
    "Progress",
]

# ----------------------------------------------------------------------------- tables


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table with left-aligned columns and a rule under the header."""
    cols = list(zip(*([list(headers)] + [list(map(str, r)) for r in rows])))
    widths = [max(len(c) for c in col) for col in cols]

    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [line(headers), line("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def _cell(v) -> str:
    """A check result as a table cell: ok / FAIL / - (not applicable)."""
    if v is None:
        return "-"
    return "ok" if v else "FAIL"


# ----------------------------------------------------------------------------- progress bar


class Progress:
    """A progress bar on a stream (stderr). Redrawn in place on a terminal; on anything else
    (CI logs, pipes) one line per tenth of the work, so logs stay readable."""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = max(total, 1)
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self._last_decile = -1

    def _bar(self, done: int, label: str) -> str:
        width = 30
        filled = int(width * done / self.total)
        el = time.perf_counter() - self.t0
        return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} {el:5.1f}s {label}"

    def update(self, done: int, label: str = "") -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + self._bar(done, label)[:120] + "\x1b[K")
            self.stream.flush()
        else:
            decile = (10 * done) // self.total
            if decile != self._last_decile:
                self._last_decile = decile
                self.stream.write(self._bar(done, label) + "\n")
                self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


# ----------------------------------------------------------------------------- demo


def demo(out: TextIO | None = None) -> int:
    """Three derivatives computed by pushforward next to their closed forms; exit 1 on mismatch."""
    out = sys.stdout if out is None else out
    ok = True
    for example in (_demo_jvp, _demo_hvp, _demo_third_derivative):
        ok = _report(out, *example()) and ok
    print("demo: all derivatives agree with calculus" if ok else "demo: MISMATCH", file=out)
    return 0 if ok else 1


def _report(out: TextIO, title: str, got, want, tol: float = 1e-9) -> bool:
    """Print a result next to its closed form; True when they agree."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    good = err <= tol * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    fmt = lambda a: np.array2string(a, precision=8, separator=", ")  # noqa: E731
    print(
        f"{title}\n  pushforward: {fmt(got)}\n  analytic:    {fmt(want)}\n"
        f"  max error {err:.1e}  {'ok' if good else 'MISMATCH'}\n",
        file=out,
    )
    return good


def _demo_jvp() -> tuple:
    """1. A Jacobian-vector product in one forward pass (a dual level)."""
    x = np.array([0.0, 0.5, 1.0, 2.0])
    v = np.array([1.0, -1.0, 0.5, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor(x), pf.tensor(v))
        y = pf.sin(d) * pf.exp(d)
        jvp = fwAD.unpack_dual(y).tangent.numpy()
    return (
        "1. jvp of f(x) = sin(x) * exp(x), element-wise, along v:\n   f'(x) v = (cos x + sin x) exp(x) v",
        jvp,
        (np.cos(x) + np.sin(x)) * np.exp(x) * v,
    )


def _demo_hvp() -> tuple:
    """2. A Hessian-vector product by forward-over-reverse: the gradient of a dual input
    carries a tangent, and that tangent is H v."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    A = A + A.T
    x = rng.standard_normal(4)
    v = rng.standard_normal(4)
    At = pf.tensor(A)
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor(x).requires_grad_(), pf.tensor(v))
        f = 0.5 * (d @ (At @ d)) + d.exp().sum()
        (g,) = pf.autograd.grad(f, d)
        hv = fwAD.unpack_dual(g).tangent.numpy()
    return (
        "2. Hessian-vector product (forward-over-reverse) of f(x) = x.A.x / 2 + sum(exp(x)):\n"
        "   H v = (A + diag(exp(x))) v",
        hv,
        (A + np.diag(np.exp(x))) @ v,
    )


def _demo_third_derivative() -> tuple:
    """3. A third derivative from three nested dual levels (each level sees the outer
    ones as ordinary values, so perturbations never get confused)."""
    x0 = 0.7
    with fwAD.dual_level() as l0, fwAD.dual_level() as l1, fwAD.dual_level() as l2:
        d = pf.tensor(x0)
        for lvl in (l0, l1, l2):
            d = fwAD.make_dual(d, pf.tensor(1.0), level=lvl)
        y = pf.exp(d) * pf.sin(d)
        t = fwAD.unpack_dual(y, level=l2).tangent
        t = fwAD.unpack_dual(t, level=l1).tangent
        t = fwAD.unpack_dual(t, level=l0).tangent
        third = t.item()
    return (
        f"3. third derivative of f(x) = exp(x) sin(x) at x = {x0}, three nested levels:\n"
        "   f'''(x) = 2 exp(x) (cos x - sin x)",
        third,
        2 * np.exp(x0) * (np.cos(x0) - np.sin(x0)),
    )


# ----------------------------------------------------------------------------- check


def _load_opdb():
    # Imported on demand, the one function-local import here (allowed in tests/test_layering.py):
    # the op database is only needed by `check`, and `check` reports a missing one cleanly.
    from pushforward.testing.opdb import OPS, check_op

    return OPS, check_op


def _load_faces():
    # Imported on demand, as the op database: only `check --faces` needs the NumPy/SciPy faces.
    from pushforward.testing.facedb import faces_database

    return faces_database()


def _load_lazy(ops: dict) -> Callable | None:
    """check_lazy (testing/lazycheck.py: the op on Dask-backed inputs) for the lazy column, or None
    without Dask, or when `ops` is not the op database."""
    try:
        from pushforward.testing.lazycheck import OPS, check_lazy, dask_installed
    except ImportError:
        return None
    return check_lazy if ops is OPS and dask_installed() else None


def _select(names_arg: str | None, available: Sequence[str], err: TextIO) -> list[str] | None:
    """The op names chosen with --ops (in the order given), or all; None after a usage error."""
    if not names_arg:
        return list(available)
    chosen = [n.strip() for n in names_arg.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in available]
    for n in unknown:
        near = difflib.get_close_matches(n, list(available), n=3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        print(f"pushforward: unknown op '{n}'{hint}", file=err)
    if unknown or not chosen:
        if not chosen:
            print("pushforward: --ops names no op", file=err)
        return None
    return list(dict.fromkeys(chosen))


def _failed(res: dict) -> bool:
    if res.get("error"):
        return True
    return any(
        res.get(k) is False
        for k in ("backward", "forward", "fwd_over_rev", "complex", "batched", "compiled", "taylor", "lazy")
    )


def _lazy_result(lazy: dict, res: dict) -> dict:
    """The lazy check's verdict for the row (and its message, if it failed and nothing else did)."""
    out = {"lazy": lazy["lazy"]}
    if lazy["lazy"] is False and not res.get("error"):
        out["error"] = f"[lazy] {lazy['error']}"
    return out


def _lazy_cell(v) -> str:
    """The lazy column: ok (runs on Dask arrays and matches), no (not supported on them), FAIL,
    - (Dask not installed, or no samples)."""
    return {True: "ok", False: "FAIL", None: "no"}.get(v, "-")


def _check_one(name: str, check_op: Callable, lazy_check: Callable | None, fast: bool, extra: frozenset) -> tuple:
    """(name, result dict, seconds) of one op's checks (`extra`: the opt-in columns asked for, of
    "compiled", "complex"); a crash in them is a failure of this op."""
    t = time.perf_counter()
    try:
        kw = {"fast": fast, "fast_second": "full" not in extra}
        if "compiled" in extra:
            kw["compiled"] = True
        if "complex" not in extra:
            kw["with_complex"] = False
        takes = inspect.signature(check_op).parameters  # (the NumPy/SciPy faces' check takes fewer)
        if not any(p.kind is p.VAR_KEYWORD for p in takes.values()):
            kw = {k: v for k, v in kw.items() if k in takes}
        res = dict(check_op(name, **kw))
        if lazy_check is not None:
            res.update(_lazy_result(lazy_check(name), res))
    except Exception as e:  # noqa: BLE001 - every failure is reported, the command goes on
        res = {
            "backward": False,
            "forward": False,
            "fwd_over_rev": None,
            "complex": None,
            "batched": None,
            "kind": "?",
            "error": f"check_op raised {type(e).__name__}: {e}",
        }
    return name, res, time.perf_counter() - t


class _Job:
    """What a forked worker of `check` runs: set in the parent before the pool forks, inherited."""

    args: tuple = ()


def _worker_init() -> None:
    # Ctrl-C reaches every process of the group: the parent alone stops the pool and reports
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_job(name: str) -> tuple:
    return _check_one(name, *_Job.args)


def _pool_size(jobs: int | None, n: int) -> int:
    """How many worker processes check `n` ops: `jobs` (default: one per core), at most one per two
    ops (a pool pays off only with several ops per worker), 1 (this process) where fork is missing."""
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if "fork" not in mp.get_all_start_methods():
        return 1
    return max(1, min(jobs, n // 2))


def _results(selected: list, job: tuple, jobs: int, bar: Progress):
    """(name, result, seconds) per op in `selected`'s order, computed by `jobs` forked processes (the
    ops are independent), each result as soon as it and those before it are in. A pool is forked
    before any check runs here, so no thread (Dask's) exists to be copied half-way."""
    if jobs <= 1:
        for i, name in enumerate(selected):
            bar.update(i, name)
            yield _check_one(name, *job)
        return
    _Job.args = job
    pool = mp.get_context("fork").Pool(jobs, initializer=_worker_init)
    try:
        for i, r in enumerate(pool.imap(_run_job, selected, chunksize=1)):
            bar.update(i + 1, r[0])
            yield r
        pool.close()
    finally:
        pool.terminate()
        pool.join()
        _Job.args = ()


# the table's columns: (header, the result's key, how a value reads); opt-in ones only when asked for
_COLUMNS = (
    ("backward", "backward", _cell),
    ("forward", "forward", _cell),
    ("forward kind", "kind", lambda v: v or "-"),
    ("fwd-over-rev", "fwd_over_rev", _cell),
    ("complex", "complex", _cell),
    ("batched", "batched", _cell),
    ("compiled", "compiled", _cell),
    ("taylor", "taylor", _cell),
    ("lazy", "lazy", _lazy_cell),
)
OPT_IN = ("complex", "compiled", "lazy")  # the slow columns: `check --all` (or each by its flag) adds them


def _print_failures(out: TextIO, failures: list, verbose: bool) -> None:
    print(f"\n{len(failures)} failure(s):", file=out)
    for name, msg in failures:
        msg = str(msg)
        if not verbose:
            lines = msg.splitlines()
            msg = "\n".join(lines[:12]) + (
                f"\n    ... ({len(lines) - 12} more lines; --verbose shows all)" if len(lines) > 12 else ""
            )
        print(f"\n[{name}]\n" + "\n".join("    " + ln for ln in msg.splitlines()), file=out)


def run_check(
    names: str | None = None,
    fast: bool = False,
    progress: bool = True,
    verbose: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    loader: Callable | None = None,
    extra: Sequence[str] = (),
    jobs: int | None = None,
) -> int:
    """Run `check_op` for each selected op (in `jobs` processes, default one per core), print the table
    and the failures; return the exit code. `extra` names the opt-in columns to add (`OPT_IN`)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        OPS, check_op = (loader or _load_opdb)()
    except ImportError as e:
        print(f"pushforward: the op database is not available ({e})", file=err)
        return 2
    selected = _select(names, list(OPS), err)
    if selected is None:
        return 2
    if jobs is not None and jobs < 1:
        print("pushforward: --jobs must be at least 1", file=err)
        return 2
    lazy_check = _load_lazy(OPS) if "lazy" in extra else None
    shown = {k for k in OPT_IN if k in extra and (k != "lazy" or lazy_check is not None)}
    columns = [c for c in _COLUMNS if c[1] not in OPT_IN or c[1] in shown]
    bar = Progress(len(selected), err, enabled=progress)
    rows, failures = [], []
    t0 = time.perf_counter()
    interrupted = False
    try:
        job = (check_op, lazy_check, fast, frozenset(extra))
        for name, res, dt in _results(selected, job, _pool_size(jobs, len(selected)), bar):
            bad = _failed(res)
            cells = [read(res.get(key, "-")) for _, key, read in columns]
            rows.append((name, *cells, f"{dt:.2f}", "FAIL" if bad else "ok"))
            if bad:
                failures.append((name, res.get("error") or "a check returned False"))
    except KeyboardInterrupt:
        interrupted = True
    bar.update(len(rows), "")
    bar.close()
    total = time.perf_counter() - t0
    print(format_table(("op", *(h for h, _, _ in columns), "time(s)", "status"), rows), file=out)
    if failures:
        _print_failures(out, failures, verbose)
    mode = "fast mode" if fast else "full Jacobians" if "full" in extra else "full Jacobians, Hessians by projections"
    print(
        f"\n{len(rows)} op(s) checked ({mode}) in {total:.1f}s: {len(rows) - len(failures)} passed, "
        f"{len(failures)} failed",
        file=out,
    )
    if not set(OPT_IN) <= shown:
        print(
            f"(not run: {', '.join(k for k in OPT_IN if k not in shown)}; `pushforward check --all` adds them)",
            file=out,
        )
    if interrupted:
        print("pushforward: interrupted", file=err)
        return 130
    return 1 if failures else 0


# ----------------------------------------------------------------------------- ops


def coverage() -> list[dict]:
    """One record per public op, read from the generated module (nothing is run)."""
    consts = {k: v for k, v in vars(gen).items() if isinstance(v, Op)}
    by_const = {k: v.name for k, v in consts.items()}
    # in-place variants: generated functions (not an op's public function) whose code names an Op constant
    publics = {id(v.public) for v in consts.values()}
    inplace: dict[str, list[str]] = {}
    inplace_fns: set[int] = set()
    for mname, fn in vars(gen).items():
        if id(fn) in publics or not mname.endswith("_") or mname.startswith("_") or not callable(fn):
            continue
        for c in getattr(getattr(fn, "__code__", None), "co_names", ()):
            if c in by_const:
                inplace.setdefault(by_const[c], []).append(mname)
                inplace_fns.add(id(fn))
                break
    recs = []
    for op in consts.values():
        recs.append(
            {
                "op": op.name,
                "backward": op.backward is not None if op.differentiable else None,
                "forward": op.jvp_kind if op.differentiable else "not differentiable",
                "inplace": ",".join(inplace.get(op.name, [])) or "-",
                "view": {"op": "no", "view": "yes", "maybe_view": "maybe"}.get(op.kind, op.kind),
                "batched": op.batch.replace(" ", ""),  # one word: the table stays split-able
            }
        )
    # composite ops have no Op record: their derivatives come from the ops they are built from
    seen = publics | inplace_fns
    spaces = [(f, fn) for ns in getattr(gen, "NAMESPACES", {}).values() for f, fn in ns.items()]
    for fname, fn in list(gen.FUNCTIONS.items()) + list(gen.METHODS.items()) + spaces:
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        recs.append(
            {
                "op": fname,
                "backward": "composite",
                "forward": "composite",
                "inplace": "-",
                "view": "-",
                "batched": "composite",
            }
        )
    recs.sort(key=lambda r: r["op"])
    return recs


def _lazy_probe() -> Callable | None:
    """runs_lazily (each op's samples tried once on Dask arrays, testing/lazycheck.py), or None
    without Dask: the lazy column of `pushforward ops`."""
    from pushforward.testing.lazycheck import dask_installed, runs_lazily

    return runs_lazily if dask_installed() else None


def ops_table(names: Sequence[str] | None = None) -> tuple[list[str], list[tuple]]:
    """The coverage table `pushforward ops` prints, as (headers, rows); the docs' op page renders it too.

    >>> headers, rows = ops_table(["sin"])
    >>> dict(zip(headers, rows[0]))["forward kind"]
    'auto_element_wise'
    """
    keep = None if names is None else set(names)
    rows = []
    lazy = _lazy_probe()
    for r in coverage():
        if keep is not None and r["op"] not in keep:
            continue
        runs = None if lazy is None else lazy(r["op"])
        b = r["backward"]
        rows.append(
            (
                r["op"],
                "yes" if b is True else "no" if b is False else "-" if b is None else b,
                r["forward"],
                r["inplace"],
                r["view"],
                r["batched"],
                "-" if runs is None else "yes" if runs else "no",
            )
        )
    return ["op", "backward", "forward kind", "in-place", "view", "batched", "lazy"], rows


def run_ops(names: str | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    selected = _select(names, [r["op"] for r in coverage()], err)
    if selected is None:
        return 2
    headers, rows = ops_table(selected)
    print(format_table(headers, rows), file=out)
    kinds: dict[str, int] = {}
    for row in rows:
        kinds[row[2]] = kinds.get(row[2], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    if rows and rows[0][-1] != "-":
        print("\nlazy: the op's samples run on Dask-backed tensors without computing (docs/dask.md)", file=out)
    print(f"\n{len(rows)} op(s): {summary}", file=out)
    return 0


# ----------------------------------------------------------------------------- bench


def _bench_list(out: TextIO) -> int:
    rows = [(w.name, w.title, w.size_means) for w in bench.WORKLOADS]
    print(format_table(("workload", "measures", "size"), rows), file=out)
    print("\n" + format_table(("library", "what runs"), list(bench.LIBRARIES.items())), file=out)
    return 0


def _bench_plan(args: argparse.Namespace) -> tuple:
    """(workloads, sizes, libraries, settings) from the command line; ValueError on a bad value."""
    workloads = bench.select_workloads(args.workloads)
    libraries = bench.select_libraries(args.libs)
    if args.baseline not in bench.LIBRARIES:
        raise ValueError(f"unknown baseline '{args.baseline}' (choose from {', '.join(bench.LIBRARIES)})")
    sizes = bench.parse_sizes(args.sizes) if args.sizes else list(bench.QUICK_SIZES if args.quick else bench.SIZES)
    base = bench.QUICK if args.quick else bench.FULL
    rounds = base.rounds if args.rounds is None else args.rounds
    min_time = base.min_time if args.min_time is None else args.min_time
    if rounds < 1 or min_time < 0:
        raise ValueError("--rounds must be at least 1 and --min-time at least 0")
    if args.plot:
        plot_format(args.plot)
    return workloads, sizes, libraries, bench.Settings(rounds, min_time, "wall" if args.wall else "cpu")


def _plot_unavailable(path: str | None) -> str | None:
    """Why `--plot` cannot draw here (matplotlib missing), or None."""
    try:
        if path:
            require_matplotlib()
    except bench.Unavailable as e:
        return f"{e}; {path} is not written"
    return None


def run_bench(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """`pushforward bench`: measure, print the tables of ratios, plot; 130 after Ctrl-C, 1 on a wrong result or
    a plot that could not be drawn (no matplotlib: the tables are printed all the same)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if args.list:
        return _bench_list(out)
    try:
        workloads, sizes, libraries, settings = _bench_plan(args)
    except (ValueError, bench.Unavailable) as e:
        print(f"pushforward bench: {e}", file=err)
        return 2
    no_plot = _plot_unavailable(args.plot)
    if no_plot:  # said at once, not only after minutes of measuring (and again at the end)
        print(f"pushforward bench: {no_plot}", file=err)
    bar = Progress(len(bench_cells(workloads, sizes)), err, enabled=not args.no_progress)
    progress = lambda done, total, label: bar.update(done, label)  # noqa: E731
    results = bench.run(workloads, sizes, libraries, baseline=args.baseline, settings=settings, progress=progress)
    bar.close()
    for t in bench_tables(results):
        print(t.title + (f"\n{format_table(t.headers, t.rows)}" if t.rows else ""), file=out)
        print("".join(f"  {note}\n" for note in t.notes), file=out)
    print("\n".join(bench_summary(results)), file=out)
    if no_plot:
        print(f"pushforward bench: {no_plot}", file=err)
    elif args.plot and results.cells:
        try:
            plot_results(results, args.plot)
            print(f"plot written to {args.plot}", file=out)
        except ValueError as e:
            print(f"pushforward bench: {e}", file=err)
    if results.interrupted:
        return 130
    if no_plot:
        return 1
    wrong = any(note.startswith("WRONG") for c in results.cells for note in c.notes.values())
    return 1 if wrong else 0


def _add_bench_parser(sub) -> None:
    b = sub.add_parser(
        "bench",
        help="time common workloads against NumPy by hand, PyTorch and JAX; print paired ratios",
        description="Time the element-wise chain (primal, jvp, gradient, hvp), an MLP (jvp, gradient, "
        "per-example gradients), jacfwd/jacrev, a sparse Jacobian and a jet, in pushforward (eager and "
        "compiled), NumPy written by hand, PyTorch and JAX (when installed), alternating the libraries in "
        "this process. Prints each library's time as a ratio to the baseline's (lower is faster). Ctrl-C "
        "stops and prints what was measured.",
    )
    b.add_argument("--quick", action="store_true", help="sizes 16 and 4096, short timing: under a minute")
    b.add_argument("--workloads", metavar="NAMES", help="comma-separated names or families (chain, mlp); see --list")
    b.add_argument("--sizes", metavar="SIZES", help="comma-separated sizes, e.g. 16,4096,2^20 (default 16 to 2^20)")
    b.add_argument("--libs", metavar="NAMES", help="comma-separated: " + ",".join(bench.LIBRARIES) + " (default all)")
    b.add_argument("--baseline", default="numpy", metavar="LIB", help="the library ratios divide by (default numpy)")
    b.add_argument("--plot", metavar="FILE", help="draw time against size into FILE (.png or .svg; pushforward[plot])")
    b.add_argument("--rounds", type=int, help="alternating rounds per measurement (default 5; --quick 3)")
    b.add_argument("--min-time", type=float, metavar="SECONDS", help="length of one timed batch of calls")
    b.add_argument("--wall", action="store_true", help="wall-clock time instead of the process's CPU time")
    b.add_argument("--list", action="store_true", help="list the workloads and libraries; measure nothing")
    b.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


# ----------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pushforward",
        description="pushforward: NumPy tensors with forward-mode (RFC-0007) and reverse-mode autodiff.",
        epilog="The main job: `pushforward demo && pushforward check`.",
    )
    sub = p.add_subparsers(dest="command", metavar="{demo,check,ops,bench}")
    sub.add_parser("demo", help="differentiate a few functions and compare with closed forms")
    c = sub.add_parser(
        "check",
        help="run the op database through gradcheck and print a table",
        description="Check every op's backward, forward and forward-over-reverse formulas, vector mode "
        "and Taylor mode against numerical Jacobians, the ops spread over one process per core. The slower "
        "columns (complex samples, pf.compile, Dask) are opt-in: --all adds them. Exit code 1 on any failure.",
    )
    c.add_argument("--ops", metavar="NAMES", help="comma-separated op names, e.g. sin,mul (default: all)")
    c.add_argument("--fast", action="store_true", help="gradcheck fast_mode: random projections u^T J v")
    c.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    c.add_argument("-j", "--jobs", type=int, metavar="N", help="check the ops in N processes (default: one per core)")
    c.add_argument(
        "--compiled", action="store_true", help="add a column: gradcheck (forward and backward) through pf.compile"
    )
    c.add_argument("--complex", action="store_true", help="add a column: gradcheck of the complex samples")
    c.add_argument(
        "--lazy", action="store_true", help="add a column: the op on Dask-backed inputs (needs pushforward[dask])"
    )
    c.add_argument(
        "--full",
        action="store_true",
        help="forward-over-reverse against full Hessians too (default: full Jacobians for first order, random "
        "projections u^T H v for second order)",
    )
    c.add_argument("--all", action="store_true", help="every column: --complex, --compiled and --lazy; and --full")
    c.add_argument("-v", "--verbose", action="store_true", help="print failure messages in full")
    c.add_argument(
        "--faces",
        action="store_true",
        help="check the faces' database (pushforward.numpy, .scipy, .array_api) instead of the ops",
    )
    o = sub.add_parser("ops", help="the coverage table of the generated ops (no checks run)")
    o.add_argument("--ops", metavar="NAMES", help="comma-separated op names (default: all)")
    _add_bench_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "demo":
        return demo()
    if args.command == "check":
        return run_check(
            args.ops,
            fast=args.fast,
            progress=not args.no_progress,
            verbose=args.verbose,
            loader=_load_faces if args.faces else None,
            extra=[k for k in OPT_IN if args.all or getattr(args, k)] + (["full"] if args.full or args.all else []),
            jobs=args.jobs,
        )
    if args.command == "ops":
        return run_ops(args.ops)
    if args.command == "bench":
        return run_bench(args)
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
