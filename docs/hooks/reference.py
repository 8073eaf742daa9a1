"""MkDocs hook: writes the API reference pages and the op support table at build time.

Nothing here is committed as Markdown: each build reads the package itself.

- One reference page per public module (REFERENCE_PAGES). The names documented are the module's
  `__all__`, each rendered by mkdocstrings from its docstring (`::: pushforward.linalg.solve`), so a
  name added to `__all__` appears on the next build, and `tests/test_docs_site.py` checks that every
  public name got an entry.
- The top-level `pushforward` page groups its names by where they are defined (TOP_LEVEL_GROUPS);
  the dtypes (NumPy dtype objects, no docstring of their own) form a table.
- `reference/ops.md`: the table `pushforward ops` prints (`pushforward.cli.ops_table`), so every
  column the command reports (features that add a column show up without a change here).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "src") not in sys.path:
    # build the docs of this checkout, not of whatever pushforward is installed
    sys.path.insert(0, str(ROOT / "src"))

import pushforward  # noqa: E402
import pushforward.array_api  # noqa: E402,F401
import pushforward.autograd.forward_ad  # noqa: E402,F401
import pushforward.autograd.functional  # noqa: E402,F401
import pushforward.cli  # noqa: E402
import pushforward.func  # noqa: E402,F401
import pushforward.nn.functional  # noqa: E402,F401
import pushforward.testing  # noqa: E402,F401

__all__ = ["REFERENCE_PAGES", "TOP_LEVEL_GROUPS", "on_files", "module_page", "top_level_page", "ops_page"]

# (page, module, one-line description)
REFERENCE_PAGES = [
    ("reference/autograd.md", "pushforward.autograd", "Reverse mode, custom Functions and gradcheck."),
    ("reference/forward_ad.md", "pushforward.autograd.forward_ad", "Dual levels and dual tensors."),
    ("reference/functional.md", "pushforward.autograd.functional", "jvp, vjp, Jacobians, Hessians."),
    ("reference/func.md", "pushforward.func", "Composable function transforms (torch.func)."),
    ("reference/linalg.md", "pushforward.linalg", "Linear algebra (torch.linalg)."),
    ("reference/fft.md", "pushforward.fft", "Discrete Fourier transforms (torch.fft)."),
    ("reference/special.md", "pushforward.special", "Special functions (torch.special)."),
    ("reference/nn_functional.md", "pushforward.nn.functional", "Neural-network functions."),
    ("reference/testing.md", "pushforward.testing", "Testing utilities."),
    ("reference/memory.md", "pushforward.memory", "Allocator settings."),
    ("reference/array_api.md", "pushforward.array_api", "The Array API standard's namespace (docs/array-api.md)."),
    ("reference/array_api_linalg.md", "pushforward.array_api.linalg", "The standard's linalg extension."),
    ("reference/array_api_fft.md", "pushforward.array_api.fft", "The standard's fft extension."),
    ("reference/array_api_special.md", "pushforward.array_api.special", "Special functions under SciPy's names."),
    ("reference/errors.md", "pushforward.errors", "The errors pushforward raises."),
]

# (heading, the defining modules' prefixes) for the names of the top-level package; first match wins,
# names matching none are listed under "Operations".
TOP_LEVEL_GROUPS = [
    ("Tensors", ("pushforward.core.tensor", "pushforward.core.batched")),
    ("Creation and random numbers", ("pushforward.core.creation",)),
    ("Gradient mode", ("pushforward.engine.grad_mode",)),
    ("Errors", ("pushforward.errors",)),
]

_OPTIONS = "    options:\n      show_root_heading: true\n      heading_level: {level}\n"


def _entry(path: str, level: int = 2) -> str:
    return f"::: {path}\n" + _OPTIONS.format(level=level)


def _module_intro(module: str) -> str:
    # the module's docstring, without a heading (the page title is the module's name) or its members
    return f"::: {module}\n    options:\n      show_root_heading: false\n      members: false\n"


def module_page(module: str, description: str) -> str:
    """A reference page: the module's docstring, then one entry per name of its `__all__`."""
    mod = sys.modules[module]
    parts = [f"# `{module}`\n\n{description}\n\n", _module_intro(module), "\n"]
    for name in mod.__all__:
        value = getattr(mod, name)
        if isinstance(value, types.ModuleType):
            # a public submodule has a page of its own: a heading with its id, and the link
            page = next(p for p, m, _ in REFERENCE_PAGES if m == value.__name__)
            rel = Path(page).name
            parts.append(f"## `{name}` {{ #{value.__name__} }}\n\nSee [`{value.__name__}`]({rel}).\n\n")
        elif not callable(value) or _is_dtype(value):
            # a constant or a dtype (the Array API's e, inf, nan, newaxis, float64...): its value
            parts.append(f"## `{name}` {{ #{module}.{name} }}\n\n`{name} = {value!r}`\n\n")
        else:
            parts.append(_entry(f"{module}.{name}") + "\n")
    return "".join(parts)


def _is_dtype(value: object) -> bool:
    return isinstance(value, np.dtype) or value is np.dtype


def _group_of(value: object) -> str:
    # where a function or class is defined; for any other object, where its type is
    where = getattr(value, "__module__", "") if callable(value) else type(value).__module__
    for heading, prefixes in TOP_LEVEL_GROUPS:
        if where.startswith(prefixes):
            return heading
    return "Operations"


def top_level_page() -> str:
    """The `pushforward` page: the package docstring, the dtypes table, then the names by group."""
    pkg = pushforward
    groups: dict[str, list[str]] = {heading: [] for heading, _ in TOP_LEVEL_GROUPS}
    groups["Operations"] = []
    dtypes = []
    for name in pkg.__all__:
        value = getattr(pkg, name)
        if _is_dtype(value):
            dtypes.append(name)
        else:
            groups[_group_of(value)].append(name)
    parts = [
        "# `pushforward`\n\nThe top-level package (`import pushforward as pf`): tensors, creation, "
        "gradient mode and the operations. Every operation's derivative support is in "
        "[the op table](ops.md).\n\n",
        _module_intro("pushforward"),
        "\n## Dtypes\n\nNumPy's dtype objects under torch's names (`pf.float64 is np.dtype('float64')`).\n\n",
        "| name | dtype |\n| --- | --- |\n",
    ]
    for name in dtypes:
        value = getattr(pkg, name)
        shown = "numpy.dtype (the class)" if value is np.dtype else f"`numpy.dtype('{value}')`"
        parts.append(f'| <span id="pushforward.{name}"></span>`pf.{name}` | {shown} |\n')
    parts.append("\n")
    for heading, names in groups.items():
        if names:
            parts.append(f"## {heading}\n\n")
            parts += [_entry(f"pushforward.{name}", level=3) + "\n" for name in sorted(names, key=str.lower)]
    return "".join(parts)


def _md_cell(value: object) -> str:
    return str(value).replace("|", "\\|") if str(value) else " "


# what each column of `pushforward ops` means; a column not described here is shown as reported
COLUMN_NOTES = {
    "backward": "a backward (vjp) formula: yes, no, or composite (built from other ops, which carry it)",
    "forward kind": "how the forward (jvp) formula is given: explicit, derived (auto_element_wise, "
    "auto_linear), composite, or not differentiable",
    "batched": "the op's batching rule under vmap and vector mode (`loop`: one call per batch element)",
    "in-place": "the in-place variants",
    "view": "whether the result is a view of an input",
    # columns that features add to `pushforward ops` (described here when they are present)
    "compiled": "runs inside `pf.compile`",
    "lazy": "runs lazily on Dask-backed tensors",
    "taylor": "has a Taylor-mode rule (`pf.func.jet`)",
}


def ops_page() -> str:
    """The op support table, as `pushforward ops` prints it."""
    headers, rows = pushforward.cli.ops_table()
    notes = "".join(f"- **{h}**: {COLUMN_NOTES[h.lower()]}\n" for h in headers if h.lower() in COLUMN_NOTES)
    parts = [
        "# Op support\n\n",
        f"Every op of pushforward ({len(rows)} in all) and what it supports, generated at build time from "
        "the op records of the generated module: the same table as `pushforward ops`. "
        "`pushforward check` verifies the formulas against numerical Jacobians.\n\n",
        notes,
        "\n| " + " | ".join(headers) + " |\n",
        "| " + " | ".join("---" for _ in headers) + " |\n",
    ]
    parts += ["| " + " | ".join(_md_cell(c) for c in row) + " |\n" for row in rows]
    return "".join(parts)


def on_files(files: Files, config) -> Files:
    """Add the generated pages to the build (mkdocs calls this before building the nav)."""
    pages = [(page, module_page(module, desc)) for page, module, desc in REFERENCE_PAGES]
    pages += [("reference/pushforward.md", top_level_page()), ("reference/ops.md", ops_page())]
    for page, text in pages:
        files.append(File.generated(config, page, content=text))
    return files
