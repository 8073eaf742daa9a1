"""`pushforward bench`: options, the report, missing libraries and features, plots, Ctrl-C."""

from __future__ import annotations

import doctest
import importlib
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import pushforward as pf
from pushforward import bench, cli
from pushforward.bench import runner
from pushforward.bench.libraries import unavailable
from pushforward.bench.workload import Workload, tensors

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# tiny and fast: one size, batches of one call, two rounds
TINY = ["--sizes", "16", "--min-time", "0", "--rounds", "2", "--no-progress"]


def bench_main(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["bench", *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def table_rows(out: str, workload: str) -> dict[str, list[str]]:
    """The rows of one workload's table, by size."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(workload + ":"))
    rows = {}
    for line in lines[start + 3 :]:
        if not line.strip() or line.startswith("  "):
            break
        rows[line.split()[0]] = line.split()
    return rows


def test_parser_options():
    a = cli.build_parser().parse_args(
        ["bench", "--quick", "--workloads", "chain", "--sizes", "16,2^10", "--libs", "numpy,torch"]
        + ["--baseline", "torch", "--plot", "x.svg", "--rounds", "2", "--min-time", "0.01", "--wall"]
    )
    assert (a.command, a.quick, a.workloads, a.sizes, a.libs) == ("bench", True, "chain", "16,2^10", "numpy,torch")
    assert (a.baseline, a.plot, a.rounds, a.min_time, a.wall) == ("torch", "x.svg", 2, 0.01, True)


def test_list_names_every_workload_and_library(capsys):
    code, out, _ = bench_main(capsys, "--list")
    assert code == 0
    for name in [w.name for w in bench.WORKLOADS] + list(bench.LIBRARIES):
        assert f"\n{name} " in out
    # the workloads the command promises
    names = {w.name for w in bench.WORKLOADS}
    assert {"chain-primal", "chain-jvp", "chain-grad", "chain-hvp", "mlp-jvp", "mlp-grad", "mlp-per-example"} <= names
    assert {"jacfwd", "jacrev", "sparse-jac", "jet"} <= names


@pytest.mark.parametrize(
    "args, message",
    [
        (["--workloads", "chian"], "unknown workload 'chian' (did you mean"),
        (["--libs", "tensorflow"], "unknown library 'tensorflow'"),
        (["--sizes", "16,big"], "size 'big' is not an integer"),
        (["--sizes", "0"], "out of range"),
        (["--baseline", "numba"], "unknown baseline 'numba'"),
        (["--plot", "out.pdf"], "must end in .png or .svg"),
        (["--rounds", "0"], "--rounds must be at least 1"),
    ],
)
def test_bad_options_are_usage_errors(capsys, args, message):
    code, out, err = bench_main(capsys, *args, "--no-progress")
    assert code == 2 and message in err and out == ""


def test_selection_helpers():
    assert [w.name for w in bench.select_workloads("mlp")] == ["mlp-jvp", "mlp-grad", "mlp-per-example"]
    assert [w.name for w in bench.select_workloads("jet,chain-jvp,jet")] == ["jet", "chain-jvp"]
    assert bench.parse_sizes("16, 2^20") == [16, 2**20]
    assert bench.select_libraries(None) == list(bench.LIBRARIES)
    assert min(bench.SIZES) == 16 and max(bench.SIZES) == 2**20


def test_tiny_run_prints_paired_ratios(capsys):
    code, out, err = bench_main(capsys, "--workloads", "chain-primal,mlp-grad", "--libs", "numpy,pushforward", *TINY)
    assert code == 0, out + err
    for w in ("chain-primal", "mlp-grad"):
        header = out.splitlines()[out.splitlines().index(next(ln for ln in out.splitlines() if ln.startswith(w)))]
        assert "(size:" in header
        (row,) = table_rows(out, w).values()
        size, base_time, ratio = row[0], " ".join(row[1:3]), row[3]
        assert size == "16" and base_time.endswith(("us", "ms", "s"))
        assert ratio.endswith("x") and float(ratio[:-1]) > 0
    assert "pushforward / numpy" in out
    assert "Ratios: the median over 2 alternating rounds" in out
    assert err == ""  # --no-progress


def test_progress_goes_to_stderr(capsys):
    code, out, err = bench_main(capsys, "--workloads", "chain-primal", "--libs", "numpy,pushforward", *TINY[:-1])
    assert code == 0
    assert "chain-primal n=16" in err and "[" in err and "chain-primal n=16" not in out


def test_baseline_option(capsys):
    code, out, _ = bench_main(
        capsys, "--workloads", "chain-jvp", "--libs", "numpy,pushforward", "--baseline", "pushforward", *TINY
    )
    assert code == 0 and "pushforward time" in out and "numpy / pushforward" in out


def test_results_of_the_runner():
    res = bench.run(bench.select_workloads("chain-grad"), [16, 64], ["numpy", "pushforward"], settings=bench.QUICK)
    assert [c.size for c in res.cells] == [16, 64] and res.planned == 2 and not res.interrupted
    for c in res.cells:
        assert c.baseline == "numpy" and c.ratios["numpy"] == 1.0
        assert c.times["pushforward"] > 0 and c.ratios["pushforward"] > 0


def test_sizes_outside_a_workload_are_skipped():
    res = bench.run(bench.select_workloads("mlp-jvp"), [4, 16], ["numpy", "pushforward"], settings=bench.QUICK)
    assert [c.size for c in res.cells] == [16]  # an MLP input has at least one example of 16 features


# ----------------------------------------------------------------------------- missing libraries


def test_missing_torch_and_jax_are_notes(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    monkeypatch.setitem(sys.modules, "jax", None)
    assert unavailable("torch") == "PyTorch is not installed (pip install torch)"
    assert unavailable("jax") == "JAX is not installed (pip install jax)"
    code, out, _ = bench_main(capsys, "--workloads", "chain-primal", "--libs", "numpy,pushforward,torch,jax", *TINY)
    assert code == 0
    assert "torch: not run: PyTorch is not installed (pip install torch)" in out
    assert "jax: not run: JAX is not installed (pip install jax)" in out
    assert "torch /" not in out and "jax /" not in out  # no empty columns for them


def test_torch_when_installed(capsys):
    pytest.importorskip("torch")
    code, out, _ = bench_main(capsys, "--workloads", "chain-jvp,mlp-per-example", "--libs", "numpy,torch", *TINY)
    assert code == 0, out
    for w in ("chain-jvp", "mlp-per-example"):
        (row,) = table_rows(out, w).values()
        assert row[-1].endswith("x")


def test_workload_without_a_torch_version_says_why(capsys, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.delattr(pf.func, "jet", raising=False)
    code, out, _ = bench_main(capsys, "--workloads", "jet", "--libs", "numpy,pushforward,torch", *TINY)
    assert code == 0
    assert "torch: PyTorch has no Taylor mode" in out
    assert "pushforward: pf.func.jet is not available in this build" in out
    assert "not measured: fewer than two libraries can run it here" in out


def test_missing_compile_is_a_note_and_a_present_one_is_measured(capsys, monkeypatch):
    monkeypatch.delattr(pf, "compile", raising=False)
    code, out, _ = bench_main(capsys, "--workloads", "chain-primal", "--libs", "numpy,pushforward,compiled", *TINY)
    assert code == 0 and "compiled: not run: pf.compile is not available in this build" in out
    # with a pf.compile (here one that returns the function itself) the column is measured
    monkeypatch.setattr(pf, "compile", lambda fn, **kwargs: fn, raising=False)
    code, out, _ = bench_main(capsys, "--workloads", "chain-primal", "--libs", "numpy,pushforward,compiled", *TINY)
    assert code == 0 and "compiled / numpy" in out
    (row,) = table_rows(out, "chain-primal").values()
    assert row[-1].endswith("x")


def test_sparse_workload_runs_with_the_sparse_api(monkeypatch):
    # stand-ins with the sparse API's signatures (dense Jacobian, then CSR): the workload's wiring and
    # the comparison of sparse results with the hand-written one
    monkeypatch.setattr(pf.func, "jacobian_sparsity", lambda f, x: None, raising=False)
    monkeypatch.setattr(
        pf.func,
        "sparse_jacfwd",
        lambda f, pattern=None: lambda x: sp.csr_array(pf.func.jacfwd(f)(x).numpy()),
        raising=False,
    )
    res = bench.run(bench.select_workloads("sparse-jac"), [16], ["numpy", "pushforward"], settings=bench.QUICK)
    (cell,) = res.cells
    assert cell.notes == {} and cell.ratios["pushforward"] > 0


def test_a_wrong_result_is_reported_not_timed(capsys, monkeypatch):
    wrong = Workload(
        "wrong",
        "a version that computes something else",
        "elements",
        lambda n: (lambda x: x * 2, tensors(np.ones(n))),
        lambda n: lambda: np.ones(n),
    )
    monkeypatch.setattr(bench, "WORKLOADS", [wrong])
    code, out, _ = bench_main(capsys, "--workloads", "wrong", "--libs", "numpy,pushforward", *TINY)
    assert code == 1
    assert "pushforward: WRONG RESULT (not timed): output 0 differs by 1" in out


def test_a_failing_version_is_a_note():
    def broken(n):
        raise RuntimeError("boom")

    w = Workload("broken", "a version that raises", "elements", broken, lambda n: lambda: np.ones(n))
    res = bench.run([w], [16], ["numpy", "pushforward"], settings=bench.QUICK)
    assert res.cells[0].notes == {"pushforward": "failed: RuntimeError: boom"}


def test_a_warning_is_a_note_and_the_version_is_still_timed():
    def warns(n):
        said = []

        def fn(x):
            if not said:  # once, as pf.compile says it
                said.append(warnings.warn("running eagerly", RuntimeWarning))
            return x * 1.0

        return fn, tensors(np.ones(n))

    w = Workload("warns", "a version that warns", "elements", warns, lambda n: lambda: np.ones(n))
    (cell,) = bench.run([w], [16], ["numpy", "pushforward"], settings=bench.QUICK).cells
    assert cell.notes == {"pushforward": "warning: running eagerly"} and cell.ratios["pushforward"] > 0


def test_disagreement():
    a = [np.ones(3)]
    assert runner.disagreement(a, [np.ones(3)]) is None
    assert "shape (3,)" in runner.disagreement(a, [np.ones(4)])
    assert runner.disagreement([sp.csr_array(np.eye(3))], [sp.csr_array(np.eye(3))]) is None
    assert "differs" in runner.disagreement([sp.csr_array(np.eye(3))], [sp.csr_array(2 * np.eye(3))])


# ----------------------------------------------------------------------------- plots


@pytest.mark.parametrize("ext, magic", [("png", b"\x89PNG"), ("svg", b"<svg")])
def test_plot(capsys, tmp_path, ext, magic):
    pytest.importorskip("matplotlib")
    path = tmp_path / f"bench.{ext}"
    args = ["--workloads", "chain-primal,chain-jvp", "--libs", "numpy,pushforward", "--sizes", "16,64"]
    code, out, _ = bench_main(capsys, *args, *TINY[2:], "--plot", str(path))
    assert code == 0, out
    data = path.read_bytes()
    assert data.startswith(magic) if ext == "png" else magic in data[:2000]
    assert f"plot written to {path}" in out


def test_plot_without_matplotlib_says_how_to_install(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path = tmp_path / "b.png"
    code, out, err = bench_main(
        capsys, "--workloads", "chain-primal", "--libs", "numpy,pushforward", *TINY, "--plot", str(path)
    )
    assert code == 1
    message = f"pushforward bench: plotting needs matplotlib: pip install 'pushforward[plot]'; {path} is not written"
    assert err.splitlines() == [message, message]  # at the start, and again under the tables
    assert table_rows(out, "chain-primal")  # the measurements are printed all the same
    assert not path.exists()


# ----------------------------------------------------------------------------- Ctrl-C, imports


def test_ctrl_c_prints_what_was_measured():
    env = dict(os.environ, PYTHONPATH=str(SRC))
    cmd = [sys.executable, "-m", "pushforward.cli", "bench", "--workloads", "chain", "--libs", "numpy,pushforward"]
    cmd += ["--sizes", "16,32,64,128,256,512,1024,2048", "--rounds", "50", "--min-time", "0.01"]
    # the child restores the default SIGINT action (a test runner's shell may ignore it in children)
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until the progress bar shows a finished cell
            line = proc.stderr.readline()
            if not line or "] 0/" not in line:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, out + err
    assert "interrupted:" in out and "of 32 measurements done" in out
    rows = table_rows(out, "chain-primal")
    assert rows and all(r[-1].endswith("x") for r in rows.values())
    assert "Traceback" not in err


def test_importing_pushforward_loads_no_optional_library():
    code = (
        "import sys, pushforward, pushforward.cli, pushforward.bench, pushforward.bench.plot; "
        "print(sorted(m for m in ('torch', 'jax', 'matplotlib') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(SRC)), capture_output=True)
    assert r.returncode == 0 and r.stdout.decode().strip() == "[]", r.stderr


@pytest.mark.parametrize(
    "module",
    [
        "bench",
        "timing",
        "libraries",
        "workload",
        "chain",
        "mlp",
        "jacobians",
        "jet",
        "loops",
        "runner",
        "report",
        "plot",
    ],
)
def test_module_examples_run(module):
    mod = importlib.import_module(f"pushforward.bench.{module}" if module != "bench" else "pushforward.bench")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0


def test_the_hand_written_numpy_versions_match_pushforward():
    """The "by hand" baselines are right: each agrees with pushforward's derivative at a size > 1."""
    for w in bench.WORKLOADS:
        if w.name in ("sparse-jac", "jet") or not w.fits(64):
            continue  # checked against their own references in test_sparse_* and the jet doctest
        got = bench.libraries.to_numpy(w.build("pushforward", 64)())
        want = bench.libraries.to_numpy(w.build("numpy", 64)())
        assert runner.disagreement(got, want, rtol=1e-9) is None, w.name


def test_loop_kernels_agree_across_libraries():
    """The loop workloads: eager, compiled and torch's jvp agree with the jvp by hand (NumPy), and
    the hand-written jvps with finite differences of the NumPy kernels."""
    loops = bench.select_workloads("loop")
    assert [w.name for w in loops] == ["loop-stencil", "loop-lu", "loop-recurrence", "loop-elements"]
    libs = ["pushforward", "compiled"] + (["torch"] if unavailable("torch") is None else [])
    for w in loops:
        want = bench.libraries.to_numpy(w.build("numpy", 8)())
        for lib in libs:
            got = bench.libraries.to_numpy(w.build(lib, 8)())
            assert runner.disagreement(got, want, rtol=1e-9) is None, (w.name, lib)
        name = w.name.split("-")[1]
        kernel, make = bench.loops._KERNELS[name]
        x, v, *rest = make(8)
        eps = 1e-6
        fd = (kernel(np, x + eps * v, *rest) - kernel(np, x - eps * v, *rest)) / (2 * eps)
        assert np.allclose(bench.loops.numpy_jvps[name](x, v, *rest), fd, rtol=1e-5, atol=1e-6), name


def test_summary_says_how_to_get_per_core_figures(monkeypatch):
    from pushforward.bench.report import summary

    res = bench.Results([], ["numpy"], bench.QUICK)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    assert any("OPENBLAS_NUM_THREADS=1" in line for line in summary(res))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert not any("OPENBLAS_NUM_THREADS=1" in line for line in summary(res))


def test_deprecation_warnings_are_not_notes():
    def warns(n):
        def fn(x):
            warnings.warn("old API", DeprecationWarning)
            return x * 1.0

        return fn, tensors(np.ones(n))

    w = Workload("deprecated", "a version that warns about itself", "elements", warns, lambda n: lambda: np.ones(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        (cell,) = bench.run([w], [16], ["numpy", "pushforward"], settings=bench.QUICK).cells
    assert cell.notes == {}
