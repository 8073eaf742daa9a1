"""Module names in docstrings and comments stay true: every `pushforward.x.y` (or `dispatch.foo.bar`,
starting at a package folder) names a module or an attribute that exists, and every `folder/file.py`
or `file.py` names a file of the repository. (A folder move that leaves a comment pointing at a
module that is gone fails here.)"""

from __future__ import annotations

import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

import pushforward

SRC = Path(pushforward.__file__).resolve().parent
ROOT = SRC.parent.parent
# (pushforward.numpy and pushforward.scipy share their names with the libraries: `scipy.sparse` in a
# comment is SciPy's)
FOLDERS = sorted(
    p.name for p in SRC.iterdir() if p.is_dir() and not p.name.startswith("_") and p.name not in ("numpy", "scipy")
)
DOTTED = re.compile(r"\b((?:pushforward|" + "|".join(FOLDERS) + r")(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
PATH_REF = re.compile(r"\b((?:[a-z_]+/)+[a-z_0-9]+\.py)\b")
FILE_REF = re.compile(r"(?<![/\w.])([a-z_0-9]+\.py)\b")
NOT_MODULES = ("py", "md", "yaml", "svg", "png", "toml", "txt")


def _texts(path: Path):
    """(line, text) of each comment and string literal (docstrings included) of a module."""
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            yield tok.start[0], tok.string


def _resolves(ref: str) -> bool:
    parts = ref.split(".")
    if parts[0] != "pushforward":
        parts = ["pushforward", *parts]
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for name in parts[k:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def _files() -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py") if ".git" not in p.parts]


def _stale(path: Path, files: list[str]) -> list[str]:
    bad = []
    for line, text in _texts(path):
        for m in DOTTED.finditer(text):
            ref = m.group(1)
            if ref.rsplit(".", 1)[-1] not in NOT_MODULES and not _resolves(ref):
                bad.append(f"{line}: {ref}")
        for m in PATH_REF.finditer(text):
            if not any(f == m.group(1) or f.endswith("/" + m.group(1)) for f in files):
                bad.append(f"{line}: {m.group(1)}")
        for m in FILE_REF.finditer(text):
            if not any(f.endswith("/" + m.group(1)) for f in files):
                bad.append(f"{line}: {m.group(1)}")
    return bad


def test_module_names_in_docstrings_and_comments_exist():
    files = _files()
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        bad += [f"src/pushforward/{rel}:{b}" for b in _stale(path, files)]
    assert not bad, "references to modules that do not exist:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "text, stale",
    [
        ("# see dispatch.classifier.apply", False),
        ("# see pushforward.dispatch.interpret.resolve and core/lazy.py", False),
        ("# see dispatch.apply", True),  # (the module dispatch.py became a folder)
        ("# see autograd/pending.py", True),
        ("# moved from _tensor.py", True),
    ],
)
def test_the_check_bites(tmp_path, text, stale):
    f = tmp_path / "m.py"
    f.write_text(text + "\n")
    assert bool(_stale(f, _files())) is stale
