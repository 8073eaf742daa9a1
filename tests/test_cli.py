"""The `pushforward` command: demo, check (with a fake and the real op database), ops."""

from __future__ import annotations

import io
import multiprocessing
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import pushforward
from pushforward import cli

SRC = Path(pushforward.__file__).resolve().parent.parent


def _res(backward=True, forward=True, fwd_over_rev=True, complex=None, kind="explicit", error=None, batched=True):
    return {
        "backward": backward,
        "forward": forward,
        "fwd_over_rev": fwd_over_rev,
        "complex": complex,
        "batched": batched,
        "kind": kind,
        "error": error,
    }


class FakeDB:
    """Stands in for pushforward.testing.opdb: OPS and check_op(name, *, fast, ...)."""

    def __init__(self, results: dict) -> None:
        self.results = results
        self.OPS = {name: object() for name in results}
        self.calls: list[tuple[str, bool]] = []

    def check_op(self, name, *, fast=False, **columns):
        self.calls.append((name, fast))
        self.columns = columns
        r = self.results[name]
        if isinstance(r, BaseException):
            raise r
        return r


@pytest.fixture
def fake_db(monkeypatch):
    def install(results):
        db = FakeDB(results)
        monkeypatch.setattr(cli, "_load_opdb", lambda: (db.OPS, db.check_op))
        return db

    return install


def _rows(out: str) -> dict:
    rows = {}
    for line in out.splitlines()[2:]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = cells
    return rows


# ----------------------------------------------------------------------------- check (fake db)


def test_check_all_pass(fake_db, capsys):
    db = fake_db({"sin": _res(kind="auto_element_wise", complex=True), "view": _res(kind="auto_linear")})
    assert cli.main(["check", "--complex"]) == 0
    out, err = capsys.readouterr()
    rows = _rows(out)
    assert rows["sin"][:7] == ["sin", "ok", "ok", "auto_element_wise", "ok", "ok", "ok"]
    assert rows["view"][:7] == ["view", "ok", "ok", "auto_linear", "ok", "-", "ok"]
    assert out.splitlines()[0].split()[:8] == [
        "op",
        "backward",
        "forward",
        "forward",
        "kind",
        "fwd-over-rev",
        "complex",
        "batched",
    ]
    assert "2 op(s) checked" in out and "2 passed, 0 failed" in out
    assert db.calls == [("sin", False), ("view", False)]
    assert "[" in err and "2/2" in err  # the progress bar is on stderr ...
    assert "2/2" not in out  # ... never in the table


def test_check_failure_gives_exit_code_1_and_message(fake_db, capsys):
    fake_db(
        {
            "sin": _res(),
            "mul": _res(forward=False, error="[forward] sample(...): Jacobian mismatch\nnumerical: 1\nanalytical: 2"),
        }
    )
    assert cli.main(["check", "--no-progress"]) == 1
    out, err = capsys.readouterr()
    rows = _rows(out)
    assert rows["mul"][2] == "FAIL" and rows["mul"][-1] == "FAIL"
    assert rows["sin"][-1] == "ok"
    assert "[mul]" in out and "Jacobian mismatch" in out and "analytical: 2" in out
    assert "1 passed, 1 failed" in out
    assert err == ""


@pytest.mark.parametrize("key", ["backward", "forward", "fwd_over_rev", "complex", "batched"])
def test_any_false_check_fails(fake_db, capsys, key):
    fake_db({"op": _res(**{key: False})})
    assert cli.main(["check", "--no-progress"]) == 1


def test_error_alone_fails_and_none_is_not_applicable(fake_db, capsys):
    fake_db({"a": _res(None, None, None, None, kind="not differentiable"), "b": _res(error="something went wrong")})
    assert cli.main(["check", "--no-progress"]) == 1
    rows = _rows(capsys.readouterr().out)
    assert rows["a"][1:3] == ["-", "-"] and rows["a"][-1] == "ok"
    assert rows["b"][-1] == "FAIL"


def test_check_op_raising_is_a_failure_of_that_op(fake_db, capsys):
    fake_db({"boom": RuntimeError("kaput"), "fine": _res()})
    assert cli.main(["check", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "RuntimeError: kaput" in out and _rows(out)["fine"][-1] == "ok"


def test_ops_selection_fast_and_order(fake_db, capsys):
    db = fake_db({"sin": _res(), "mul": _res(), "cos": _res()})
    assert cli.main(["check", "--ops", "mul, sin", "--fast", "--no-progress"]) == 0
    assert db.calls == [("mul", True), ("sin", True)]
    out = capsys.readouterr().out
    assert "cos" not in out and "fast mode" in out


def test_unknown_op_is_a_usage_error(fake_db, capsys):
    db = fake_db({"sin": _res(), "mul": _res()})
    assert cli.main(["check", "--ops", "sine"]) == 2
    err = capsys.readouterr().err
    assert "unknown op 'sine'" in err and "did you mean sin" in err
    assert db.calls == []


def test_long_failure_messages_are_cut_unless_verbose(fake_db, capsys):
    msg = "\n".join(f"line {i}" for i in range(40))
    fake_db({"op": _res(backward=False, error=msg)})
    assert cli.main(["check", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "line 39" not in out and "--verbose" in out
    assert cli.main(["check", "--no-progress", "-v"]) == 1
    assert "line 39" in capsys.readouterr().out


def test_slow_columns_are_opt_in(fake_db, capsys):
    """By default every op's backward, forward, forward-over-reverse, batched and Taylor checks run; the
    complex samples, pf.compile and Dask are columns asked for (`--all` adds every one)."""
    db = fake_db({"sin": _res(complex=True)})
    assert cli.main(["check", "--no-progress"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert "complex" not in header and "compiled" not in header and "lazy" not in header
    assert "fwd-over-rev" in header and "batched" in header and "taylor" in header
    assert db.columns == {"with_complex": False, "fast_second": True} and "--all" in out
    assert cli.main(["check", "--no-progress", "--all"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert "complex" in header and "compiled" in header
    assert db.columns == {"compiled": True, "fast_second": False}


def _slow_check(name, *, fast=False, **columns):
    time.sleep(0.05)
    return dict(_res(), kind=f"pid{os.getpid()}")


def test_ops_are_checked_in_several_processes_in_order(monkeypatch, capsys):
    """`--jobs 2` spreads the ops over two forked processes; the table keeps the op database's order."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform: check runs in one process")
    names = [f"op{i:02d}" for i in range(12)]
    monkeypatch.setattr(cli, "_load_opdb", lambda: (dict.fromkeys(names), _slow_check))
    assert cli.main(["check", "--no-progress", "--jobs", "2"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert list(rows) == names
    pids = {cells[3] for cells in rows.values()}
    assert len(pids) == 2 and f"pid{os.getpid()}" not in pids
    assert cli.main(["check", "--no-progress", "--jobs", "0"]) == 2


def test_missing_op_database(monkeypatch, capsys):
    def boom():
        raise ImportError("No module named 'pushforward.testing.opdb'")

    monkeypatch.setattr(cli, "_load_opdb", boom)
    assert cli.main(["check"]) == 2
    assert "op database is not available" in capsys.readouterr().err


def test_the_interface_is_imported_from_its_module(monkeypatch, capsys):
    """`check` uses `from pushforward.testing.opdb import OPS, check_op`."""
    fake = types.ModuleType("pushforward.testing.opdb")
    fake.OPS = {"only": None}
    fake.check_op = lambda name, *, fast=False, **columns: _res()
    monkeypatch.setitem(sys.modules, "pushforward.testing.opdb", fake)
    assert cli.main(["check", "--no-progress"]) == 0
    assert "only" in capsys.readouterr().out


def test_progress_bar_on_a_terminal_redraws_in_place():
    class TTY(io.StringIO):
        def isatty(self):
            return True

    s = TTY()
    bar = cli.Progress(3, s)
    for i in range(4):
        bar.update(i, f"op{i}")
    bar.close()
    text = s.getvalue()
    assert text.count("\r") >= 4 and "\n" not in text and "3/3" in text


def test_progress_bar_in_a_log_prints_few_lines():
    s = io.StringIO()
    bar = cli.Progress(200, s)
    for i in range(201):
        bar.update(i, "x")
    bar.close()
    lines = s.getvalue().splitlines()
    assert 2 <= len(lines) <= 12 and "200/200" in lines[-1]


# ----------------------------------------------------------------------------- check (real db)


def _opdb_or_skip():
    try:
        from pushforward.testing.opdb import OPS, check_op  # noqa: F401
    except ImportError as e:  # pragma: no cover - the op database is written separately
        pytest.skip(f"op database not available: {e}")


def test_real_check_passes_for_correct_ops(capsys):
    _opdb_or_skip()
    assert cli.main(["check", "--ops", "sin,mul,transpose", "--no-progress"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["sin"][:6] == ["sin", "ok", "ok", "auto_element_wise", "ok", "ok"]
    assert rows["mul"][3] == "explicit"
    assert rows["transpose"][3] == "auto_linear"


def test_real_check_fails_on_a_corrupted_formula(monkeypatch, capsys):
    """The command bites: a forward formula off by 1% makes `check` exit 1 with forward FAIL."""
    _opdb_or_skip()
    from pushforward.ops import generated as ops

    good, good_np = ops.SIN.jvp, ops.SIN.jvp_np
    monkeypatch.setattr(ops.SIN, "jvp", lambda *a: good(*a) * 1.01)
    monkeypatch.setattr(ops.SIN, "jvp_np", None if good_np is None else (lambda *a: good_np(*a) * 1.01))
    assert cli.main(["check", "--ops", "sin", "--no-progress"]) == 1
    out = capsys.readouterr().out
    row = _rows(out)["sin"]
    assert row[1] == "ok" and row[2] == "FAIL" and row[-1] == "FAIL"
    assert "forward" in out.split("failure(s):")[1]


# ----------------------------------------------------------------------------- demo, ops, main


def test_demo(capsys):
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count("  ok") == 3 and "MISMATCH" not in out
    for what in ("jvp", "Hessian-vector product", "third derivative"):
        assert what in out


def test_ops_table(capsys):
    assert cli.main(["ops"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    lazy = ["yes"] if rows["sin"][-1] != "-" else ["-"]  # (the lazy column: "-" without Dask)
    assert rows["sin"] == ["sin", "yes", "auto_element_wise", "sin_", "no", "elementwise"] + lazy
    assert rows["mul"][:4] == ["mul", "yes", "explicit", "mul_"]
    assert rows["transpose"] == ["transpose", "yes", "auto_linear", "-", "yes", "swap(dim0,dim1)"] + lazy
    if lazy == ["yes"]:
        assert rows["det"][-1] == "no" and rows["reshape"][-1] == "yes"
    assert rows["reshape"][4] == "maybe"
    assert rows["split"][1:3] == ["composite", "composite"]
    from pushforward.ops import generated as ops
    from pushforward.dispatch.oprecord import Op

    for rec in (v for v in vars(ops).values() if isinstance(v, Op)):
        assert rec.name in rows
    assert "op(s):" in out.splitlines()[-1]


def test_ops_selection(capsys):
    assert cli.main(["ops", "--ops", "sin,cos"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert set(rows) == {"sin", "cos"}
    assert cli.main(["ops", "--ops", "nope"]) == 2


def test_bare_command_prints_help(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "demo" in out and "check" in out and "ops" in out


def test_console_script_entry_point():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    data = (
        tomllib.loads((SRC.parent / "pyproject.toml").read_text()) if (SRC.parent / "pyproject.toml").exists() else None
    )
    if data is None:
        pytest.skip("not running from a source checkout")
    assert data["project"]["scripts"]["pushforward"] == "pushforward.cli:main"


def test_module_runs_as_a_command_without_stdin():
    env = dict(os.environ, PYTHONPATH=str(SRC))
    r = subprocess.run(
        [sys.executable, "-m", "pushforward.cli", "ops", "--ops", "sin"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr
    assert "auto_element_wise" in r.stdout
