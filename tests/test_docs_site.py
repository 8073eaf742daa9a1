"""The documentation site: `mkdocs build --strict` passes, every public name has a reference entry,
the op page is `pushforward ops`'s table, the nav lists every guide, the reference examples run."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from pushforward import cli
from test_namespace import PUBLIC_MODULES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# every public module of the API reference (the names are each module's __all__); pushforward.nn only
# re-exports nn.functional
REFERENCE_MODULES = [m for m in PUBLIC_MODULES if m != "pushforward.nn"] + ["pushforward.memory", "pushforward.errors"]


def _require_mkdocs() -> None:
    missing = [m for m in ("mkdocs", "mkdocstrings", "material", "mkdocstrings_handlers.python") if not _importable(m)]
    if missing:
        why = f"the docs extra is not installed (no {', '.join(missing)}): pip install '.[docs]'"
        if os.environ.get("CI"):
            pytest.fail(why)  # CI installs the test extras, which include the docs extra
        pytest.skip(why)


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built by `mkdocs build --strict` (any warning fails it) into a temporary directory."""
    _require_mkdocs()
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_MKDOCS_2_WARNING="1")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, "mkdocs build --strict failed:\n" + (r.stdout + r.stderr)[-6000:]
    return out


def _ids(site: Path) -> set[str]:
    ids: set[str] = set()
    for page in (site / "reference").glob("*/index.html"):
        ids |= set(re.findall(r'id="([^"]+)"', page.read_text()))
    return ids


@pytest.mark.parametrize("module", REFERENCE_MODULES)
def test_every_public_name_has_a_reference_entry(site, module):
    mod = importlib.import_module(module)
    ids = _ids(site)
    assert module in ids or module == "pushforward"
    missing = [name for name in mod.__all__ if f"{module}.{name}" not in ids]
    assert not missing, f"{module}: no reference entry for {missing}"


def test_reference_entries_show_docstrings_and_fenced_examples(site):
    page = (site / "reference" / "linalg" / "index.html").read_text()
    # the example of a docstring is a highlighted code block, not a block quote of '>>>' lines
    assert "&gt;&gt;&gt;" in page and "<blockquote>\n<blockquote>" not in page
    top = (site / "reference" / "pushforward" / "index.html").read_text()
    assert 'id="pushforward.sin"' in top and "Sine" in top  # a generated op, documented from the YAML


def test_ops_page_is_the_ops_table(site):
    html = (site / "reference" / "ops" / "index.html").read_text()
    headers, rows = cli.ops_table()
    head = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    assert re.findall(r"<th[^>]*>(.*?)</th>", head) == headers
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1)
    first_cells = re.findall(r"<tr>\s*<td[^>]*>(.*?)</td>", body)
    assert first_cells == [r[0] for r in rows]
    assert len(rows) > 300


def _nav_files(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [f for v in nav.values() for f in _nav_files(v)]
    return [f for item in nav for f in _nav_files(item)]


def test_nav_lists_existing_pages_and_every_guide():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_files(config["nav"])
    generated = {f"reference/{p.stem}.md" for p in DOCS.glob("reference/*.md")} | set(_hook_pages())
    for page in nav:
        assert (DOCS / page).exists() or page in generated, f"nav names {page}, which is neither in docs/ nor generated"
    guides = sorted(p.name for p in DOCS.glob("*.md"))
    assert not [g for g in guides if g not in nav], "a guide in docs/ is missing from mkdocs.yml's nav"
    assert len(nav) == len(set(nav))


def _hook_pages() -> list[str]:
    # the pages docs/hooks/reference.py generates, read from its source (importing it needs mkdocs)
    text = (DOCS / "hooks" / "reference.py").read_text()
    return re.findall(r'"(reference/\w+\.md)"', text)


def test_every_reference_module_has_a_page():
    text = (DOCS / "hooks" / "reference.py").read_text()
    for module in REFERENCE_MODULES[1:]:
        assert f'"{module}"' in text, f"{module} has no page in docs/hooks/reference.py"


def test_doctest_fences():
    if not _importable("griffe"):
        pytest.skip("griffe (from the docs extra) is not installed")
    spec = importlib.util.spec_from_file_location("doctest_fences", DOCS / "hooks" / "doctest_fences.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = "Sine.\n\n>>> pf.sin(x)\ntensor([0.])\n\nMore text.\n```python\n>>> kept\n```"
    assert mod.fence_doctests(text) == (
        "Sine.\n\n```pycon\n>>> pf.sin(x)\ntensor([0.])\n```\n\nMore text.\n```python\n>>> kept\n```"
    )


def _examples():
    """(name, DocTest) for every docstring with examples among the reference's names."""
    finder = doctest.DocTestFinder(recurse=False)
    seen: set[int] = set()
    for module in REFERENCE_MODULES:
        mod = importlib.import_module(module)
        for name, obj in [(module, mod)] + [(f"{module}.{n}", getattr(mod, n)) for n in mod.__all__]:
            if id(obj) in seen or (isinstance(obj, types.ModuleType) and name != module):
                continue
            seen.add(id(obj))
            # a module's examples import what they use; a function's may use its module's names
            home = obj if isinstance(obj, types.ModuleType) else sys.modules.get(getattr(obj, "__module__", ""), mod)
            globs = {} if isinstance(obj, types.ModuleType) else dict(vars(home))
            for test in finder.find(obj, name, globs=globs):
                if test.examples:
                    yield name, test


def test_reference_examples_run_as_doctests():
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failed, count = [], 0
    for name, test in _examples():
        out = io.StringIO()
        count += 1
        if runner.run(test, out=out.write).failed:
            failed.append(f"{name}:\n{out.getvalue()[:1500]}")
    assert count >= 30
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("module", REFERENCE_MODULES)
def test_every_public_function_and_class_has_a_docstring(module):
    mod = importlib.import_module(module)
    bare = [
        name
        for name in mod.__all__
        if callable(getattr(mod, name))
        and not isinstance(getattr(mod, name), type(mod))
        and getattr(mod, name).__module__ != "numpy"  # pf.dtype is NumPy's class
        and not (getattr(mod, name).__doc__ or "").strip()
    ]
    assert not bare, f"{module}: no docstring for {bare}"
