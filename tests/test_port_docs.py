"""docs/coming-from-pytorch.md and docs/differentiating-numpy.md must not go stale: every
```python block runs, a ```text block right under it is exactly what it prints, and a torch
block is followed by its mechanical port (the same rewrite as tests/test_port_programs.py)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import pushforward as pf
from helpers import torch
from test_port_programs import port

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = ["coming-from-pytorch.md", "differentiating-numpy.md"]


def _blocks(page: str) -> list[tuple[str, str]]:
    """(language, code) of the page's fenced blocks, in order."""
    text = (DOCS / page).read_text()
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```\s*$", text, re.S | re.M)]


def _cases(page: str) -> list[tuple[int, str, str | None]]:
    """(index, python code, expected output or None) for the page's python blocks."""
    blocks = _blocks(page)
    out = []
    for i, (lang, code) in enumerate(blocks):
        if lang != "python":
            continue
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        out.append((i, code, nxt[1] if nxt and nxt[0] == "text" else None))
    return out


def _run(code: str, name: str) -> str:
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(code, name, "exec"), {"__name__": "doc_example"})
    finally:
        pf.set_default_dtype(pf.float64)
        if torch is not None:
            torch.set_default_dtype(torch.float32)
    return buf.getvalue()


ALL = [(page, i) for page in PAGES if (DOCS / page).exists() for i, _, _ in _cases(page)]


def test_pages_exist_and_have_examples():
    for page in PAGES:
        cases = _cases(page)
        assert len(cases) >= 4, page
        assert sum(expected is not None for _, _, expected in cases) >= 4, page


@pytest.mark.parametrize("page,index", ALL)
def test_doc_block_runs_and_prints_what_the_page_says(page, index):
    _, code, expected = next(c for c in _cases(page) if c[0] == index)
    if re.search(r"^import torch\b", code, re.M):
        nxt = _blocks(page)[index + 1]
        assert nxt[0] == "python" and port(code) == nxt[1], "a torch block must be followed by its port"
        if torch is None:
            pytest.skip("torch not installed")
        _run(code, f"{page}[{index}]")
        return
    printed = _run(code, f"{page}[{index}]")
    if expected is not None:
        assert printed == expected, f"{page} block {index} printed:\n{printed}"
