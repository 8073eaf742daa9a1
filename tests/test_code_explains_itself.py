"""The code explains itself: no pointer to a tracker or to a design file outside the repository
(the rules live in docs/design.md and are referred to by the name of their section), and every
such reference names a section that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACES = ["src", "tests", "docs", "examples", "README.md"]
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg"}
# a tracker number (the word "issue" and a number) or the outside design file; written in pieces
# so that this file does not match itself
TRACKER = re.compile(r"\b[Ii]ssues?[ -]" + r"[0-9]+|DESIGN" + r" rule|DESIGN" + r"\.md")
DESIGN_REF = re.compile(r'docs/design\.md,\s+((?:"[^"]+"(?:,\s*)?)+)')


def _files():
    for place in PLACES:
        path = ROOT / place
        paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in paths:
            if p.suffix in SUFFIXES and "__pycache__" not in p.parts:
                yield p


def test_no_tracker_references():
    hits = []
    for p in _files():
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if TRACKER.search(line):
                hits.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "say what the code relies on instead of pointing at a tracker:\n" + "\n".join(hits)


def test_design_references_name_existing_sections():
    headings = {
        m.group(1).strip() for m in re.finditer(r"^#+\s+(.*)$", (ROOT / "docs" / "design.md").read_text(), re.M)
    }
    # a heading may carry a number ("3. Tangents"): its name is what follows
    names = headings | {re.sub(r"^[0-9.]+\s+", "", h) for h in headings}
    missing = []
    for p in _files():
        text = p.read_text(errors="replace")
        for m in DESIGN_REF.finditer(text):
            for quoted in re.findall(r'"([^"]+)"', m.group(1)):
                # a name wrapped over lines of a comment or docstring is the same name
                name = " ".join(quoted.replace("#", " ").split())
                if name not in names:
                    missing.append(f"{p.relative_to(ROOT)}: {name!r}")
    assert not missing, "references to sections docs/design.md does not have:\n" + "\n".join(missing)


def test_the_pattern_finds_what_it_forbids():
    samples = ["see issue " + "9", "issues " + "12 and 13", "DESIGN" + " rule 3", "DESIGN" + ".md section 2"]
    assert all(TRACKER.search(s) for s in samples)
    assert not TRACKER.search('docs/design.md, "Tangents"')
