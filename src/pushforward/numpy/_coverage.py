"""Which NumPy functions and ufuncs differentiate on tensors, read from the dispatch tables
themselves: the table in docs/differentiating-numpy.md is `coverage_markdown()` (a test checks it
is current; `write_docs(path)` rewrites it).

>>> rows = coverage_rows()
>>> ("np", "sin", "ufunc", "dispatches") in [r[:4] for r in rows]
True
"""

from __future__ import annotations

import re

import numpy as np

from . import _api as numpy_api, _histogram as numpy_histogram, _writes as numpy_writes
from ._math import NO_DERIVATIVE_UFUNCS, UFUNC_COMPOSITES
from ._table import NO_DERIVATIVE, VALUES_ONLY
from ..ops import generated as ops
from ..scipy._special import SCIPY_UFUNCS

__all__ = ["coverage_rows", "coverage_markdown", "write_docs"]

START, END = "<!-- numpy-coverage:start -->", "<!-- numpy-coverage:end -->"

# an op's name in pf (its first: torch's own name before the aliases), else its name in the YAML
_OP_NAMES = {id(op): name for name, op in reversed(list({**vars(ops), **ops.FUNCTIONS}.items()))}
_ON_VALUES = "; NumPy's values when no argument carries a derivative"


def _ufunc_status(name: str) -> tuple[str, str]:
    if name in numpy_api.UFUNCS:
        op = _OP_NAMES[id(numpy_api.UFUNCS[name])]
        return "dispatches", f"pf.{op}" if op in ops.FUNCTIONS else f"the op `{op}` (NumPy's semantics)"
    if name == "positive":
        return "dispatches", ""
    if name in NO_DERIVATIVE_UFUNCS:
        return "raises", "no derivative (piecewise constant or not real-analytic)" + _ON_VALUES
    if name in UFUNC_COMPOSITES:
        return "dispatches", "a composite of ops"
    why = "integer, bit or datetime ufunc: no derivative" if name in _INTEGER_UFUNCS else "no op"
    return "raises", why + _ON_VALUES


_INTEGER_UFUNCS = {"gcd", "lcm", "bitwise_count", "isnat"}


def _function_status(mod, name: str) -> tuple[str, str]:
    fn = getattr(mod, name)
    if numpy_api.handler(fn) is None:
        return "raises", "no pushforward op" + _ON_VALUES
    if fn in numpy_writes.FUNCTIONS and fn is not np.put_along_axis:
        return "dispatches", "writes into a tensor by our in-place semantics"
    if fn in numpy_histogram.FUNCTIONS:
        return "dispatches", "differentiable in the weights; counts are constants"
    if mod is np and name in NO_DERIVATIVE:
        return "raises", NO_DERIVATIVE[name] + _ON_VALUES
    if mod is np and name in VALUES_ONLY:
        return "values only", f"{VALUES_ONLY[name]}: no derivative to keep"
    return "dispatches", ""


def coverage_rows() -> list[tuple[str, str, str, str, str]]:
    """(namespace, name, kind, status, note) for every NumPy ufunc and array function of np,
    np.linalg and np.fft, and every scipy.special ufunc that dispatches."""
    rows = []
    for name in sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc)):
        uf = getattr(np, name)
        if uf.__name__ != name:  # an alias (np.abs of absolute): listed under its own name
            continue
        rows.append(("np", name, "ufunc", *_ufunc_status(name)))
    for prefix, mod in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
        for name in sorted(dir(mod)):
            if name.startswith("_") or not hasattr(getattr(mod, name), "_implementation"):
                continue
            rows.append((prefix, name, "function", *_function_status(mod, name)))
    for uf in sorted(SCIPY_UFUNCS, key=lambda u: u.__name__):
        rows.append(("scipy.special", uf.__name__, "ufunc", "dispatches", ""))
    return rows


def coverage_markdown() -> str:
    """The coverage table, as Markdown."""
    rows = coverage_rows()
    counts = {s: sum(r[3] == s for r in rows) for s in ("dispatches", "values only", "raises")}
    lines = [
        f"{counts['dispatches']} dispatch to pushforward ops, {counts['values only']} compute integer or "
        f"boolean results on the values, {counts['raises']} raise an error naming the function and why.",
        "",
        "| function | kind | on tensors | note |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{ns}.{name}` | {kind} | {status} | {note} |" for ns, name, kind, status, note in rows]
    return "\n".join(lines)


def write_docs(path: str) -> None:
    """Rewrite the table between the coverage markers of the Markdown file at path."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    block = f"{START}\n{coverage_markdown()}\n{END}"
    text = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
