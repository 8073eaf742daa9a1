"""A Griffe extension for the API reference: doctest examples in docstrings become code blocks.

pushforward's docstrings are plain text with runnable `>>>` examples (they run as doctests). Rendered
as Markdown, a `>>>` line would be a nested block quote; this extension fences each run of doctest
lines (the prompt lines, their continuations and the expected output up to a blank line) as
```pycon, before mkdocstrings renders the docstring. The docstring itself is left unchanged in the
package, so the doctests still run on it.
"""

from __future__ import annotations

import griffe

__all__ = ["DoctestFences", "fence_doctests"]


def fence_doctests(text: str) -> str:
    """Wrap every doctest run of `text` in a ```pycon fence (runs already in a fence are kept)."""
    out: list[str] = []
    in_doctest = in_fence = False
    indent = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not in_doctest and stripped.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and not in_doctest and stripped.startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            in_doctest = True
        elif in_doctest and not stripped:
            out.append(f"{indent}```")
            in_doctest = False
        out.append(line)
    if in_doctest:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctests of every object's docstring as it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
