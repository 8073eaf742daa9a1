"""docs/adding-an-op.md must not go stale: follow its steps for its example op in a
temporary copy of the package (YAML entry, regenerate, op-database line, `pushforward check`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pushforward

yaml = pytest.importorskip("yaml")

from pushforward.codegen.emit import emit  # noqa: E402
from pushforward.codegen.load import helper_names, load  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "adding-an-op.md"
PKG = Path(pushforward.__file__).resolve().parent


def _blocks(lang: str) -> list[str]:
    """The fenced code blocks of the doc in a language (indentation of nested fences removed)."""
    text = DOC.read_text()
    out = []
    for m in re.finditer(r"^( *)```" + lang + r"\n(.*?)^\1```", text, re.S | re.M):
        indent = len(m.group(1))
        out.append("".join(line[indent:] + "\n" for line in m.group(2).splitlines()))
    return out


def _entries() -> list[str]:
    """The doc's YAML entries for its example op (the main one first, then the variants)."""
    blocks = [b for b in _blocks("yaml") if b.lstrip().startswith("- name:")]
    assert blocks, "docs/adding-an-op.md has no ```yaml block with an entry"
    return blocks


def _example_name() -> str:
    m = re.match(r"\s*- name:\s*([A-Za-z_]\w*)\(", _entries()[0])
    assert m
    return m.group(1)


def _opdb_line() -> str:
    name = _example_name()
    lines = [b for b in _blocks("python") if b.strip().startswith(f'"{name}":')]
    assert len(lines) == 1, "the doc must show exactly one _UNARY line for its example op"
    return lines[0].rstrip("\n") + "\n"


def test_doc_example_is_not_already_an_op():
    name = _example_name()
    assert name not in {e.name for e in load()}, (
        f"'{name}' is now a real op: pick another (absent) op as the example of docs/adding-an-op.md"
    )


@pytest.mark.parametrize("variant", range(2))
def test_doc_yaml_entry_loads_emits_and_compiles(tmp_path, variant):
    entries = _entries()
    assert len(entries) >= 2, "the doc shows an auto_element_wise and an explicit forward formula"
    yml = tmp_path / "derivatives.yaml"
    yml.write_text((PKG / "ops" / "derivatives.yaml").read_text() + "\n" + entries[variant])
    loaded = load(yml)
    name = _example_name()
    new = [e for e in loaded if e.name == name]
    assert len(new) == 1 and new[0].backward and new[0].forward
    expected_kind = "auto_element_wise" if variant == 0 else "explicit"
    assert (dict(new[0].forward)["result"] == "auto_element_wise") == (expected_kind == "auto_element_wise")
    text = emit(loaded, helper_names())
    compile(text, "ops.py", "exec")
    assert f"def {name}(" in text and f"{name.upper()} = Op(" in text
    assert f"jvp_kind={expected_kind!r}" in text
    table = re.search(r'^FUNCTIONS = _table\("""(.*?)"""\)', text, re.S | re.M)
    assert table and name in table.group(1).split()


def _copy_package(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(PKG, src / "pushforward", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return src


def _run(src: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, *args],
        cwd=src.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _apply_doc_steps(src: Path, entry: str) -> None:
    pkg = src / "pushforward"
    # step 1: append the YAML entry
    with open(pkg / "ops" / "derivatives.yaml", "a") as f:
        f.write("\n" + entry)
    # step 3: the op-database line, into the _UNARY table
    opdb = pkg / "testing" / "opdb.py"
    text = opdb.read_text()
    m = re.search(r"^_UNARY = \{\n(?:\s*#.*\n)?", text, re.M)
    assert m, "opdb.py has no `_UNARY = {` table: update docs/adding-an-op.md, step 3"
    opdb.write_text(text[: m.end()] + _opdb_line() + text[m.end() :])


@pytest.mark.parametrize("variant", range(2))
def test_doc_steps_end_to_end(tmp_path, variant):
    name = _example_name()
    src = _copy_package(tmp_path)
    _apply_doc_steps(src, _entries()[variant])
    # step 2: regenerate
    r = _run(src, "-m", "pushforward.codegen")
    assert r.returncode == 0, r.stdout + r.stderr
    # the op exists, as a function and a method, with the value the doc shows
    r = _run(
        src,
        "-c",
        f"import pushforward as pf; x = pf.tensor([0.0, -800.0]); print(repr(pf.{name}(x))); print(repr(x.{name}()))",
    )
    assert r.returncode == 0, r.stderr
    shown = re.search(r">>> pf\.\w+\(.*\)\n(.*)\n", DOC.read_text()).group(1)
    assert r.stdout.splitlines() == [shown, shown]
    # step 4: pushforward check --ops NAME --complex
    r = _run(src, "-m", "pushforward.cli", "check", "--ops", name, "--complex", "--no-progress")
    assert r.returncode == 0, r.stdout + r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith(name + " "))
    kind = "auto_element_wise" if variant == 0 else "explicit"
    assert row.split()[:6] == [name, "ok", "ok", kind, "ok", "-"], r.stdout
    r = _run(src, "-m", "pushforward.cli", "ops", "--ops", name)
    assert r.returncode == 0 and kind in r.stdout, r.stdout + r.stderr


def test_doc_check_catches_a_wrong_formula(tmp_path):
    """The doc's `pushforward check` step really checks: a wrong backward formula fails it."""
    name = _example_name()
    entry = _entries()[0]
    bad = entry.replace("(-self).sigmoid()", "self.sigmoid()")
    assert bad != entry, "update this test: the doc's backward formula changed"
    src = _copy_package(tmp_path)
    _apply_doc_steps(src, bad)
    assert _run(src, "-m", "pushforward.codegen").returncode == 0
    r = _run(src, "-m", "pushforward.cli", "check", "--ops", name, "--complex", "--no-progress")
    assert r.returncode == 1, r.stdout + r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith(name + " "))
    assert row.split()[1:3] == ["FAIL", "FAIL"]  # backward, and forward (auto_element_wise derives from it)


def test_doc_commands_exist():
    text = DOC.read_text()
    for cmd in ("python -m pushforward.codegen", "pushforward check --ops", "python -m pytest"):
        assert cmd in text
    from pushforward.cli import build_parser

    args = build_parser().parse_args(["check", "--ops", _example_name()])
    assert args.command == "check" and args.ops == _example_name()


# ----------------------------------------------------------------------------- README

README = ROOT / "README.md"


def _readme_block(lang: str) -> list[str]:
    return re.findall(r"^```" + lang + r"\n(.*?)^```", README.read_text(), re.S | re.M)


def test_readme_example_runs_and_prints_what_it_says(capsys):
    if not README.exists():
        pytest.skip("not running from a source checkout")
    (code,) = _readme_block("python")
    assert len(code.strip().splitlines()) <= 14
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out.splitlines()
    promised = re.findall(r"#.*?(tensor\(\[.*?\]\))\s*$", code, re.M)
    assert printed == promised


def test_readme_set_up_commands():
    if not README.exists():
        pytest.skip("not running from a source checkout")
    blocks = [b.strip() for b in _readme_block("sh")]
    assert "pip install . && pushforward demo && pushforward check" in blocks
    test_cmd = "pip install -e '.[test]' && python -m pytest"
    assert test_cmd in blocks
    ci = ROOT / ".ci" / "run"
    assert test_cmd in ci.read_text(), ".ci/run must run exactly the README's test command"
    assert os.access(ci, os.X_OK)
    assert "python -m pushforward.codegen" in README.read_text()
