"""The package's layers point one way, checked by reading the source with `ast`.

1. No function-local imports: an import inside a function body costs ~0.7 us on every call and
   hides an import cycle. Allowed only for optional dependencies (ALLOWED_LOCAL).
2. Every module belongs to its folder's layer (layer_of) and imports, at module level, only from its own
   layer or lower ones; and the module-level imports between pushforward's modules form no cycle.
3. No function is longer than MAX_FUNCTION_LINES lines that start a statement.

Violations in files being rewritten by another branch are listed, commented, in KNOWN_VIOLATIONS
and LONG_FUNCTIONS; those sets only shrink (a listed violation that is gone fails the test too,
so the list stays true).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "pushforward"

# The layers, lowest first: a module's layer is its folder's (docs/design.md, "Layers").
CORE, KERNELS, ENGINE, DISPATCH, OPS, METHODS, FACES, PUBLIC = range(8)
FOLDER_LAYERS = {
    "core": CORE,  # the Tensor and its data, creation, the array backend, pytrees
    "codegen": CORE,  # the YAML compiler: a build-time tool importing nothing of the runtime
    "kernels": KERNELS,  # NumPy/SciPy kernels: arrays in, arrays out
    "engine": ENGINE,  # levels and the tangent store, the tape, the backward walk, grad mode
    "dispatch": DISPATCH,  # how one op call runs: the op record, the classifier, the executors
    "ops": OPS,  # derivatives.yaml's generated module, formulas/ and composites/
    "methods": METHODS,  # binds the ops onto Tensor and fills the registries the lower layers read
    "numpy": FACES,  # NumPy's API and protocols on tensors, over the ops and the tensor's methods
    "scipy": FACES,  # SciPy's API on tensors, likewise
}
# Modules at the top of the package: public faces, except the errors every layer raises and torch's
# op namespaces (names over the generated ops), which the faces call.
TOP_LEVEL_LAYERS = {
    "pushforward.errors": CORE,
    "pushforward.linalg": METHODS,
    "pushforward.fft": METHODS,
    "pushforward.special": METHODS,
}


def layer_of(module: str) -> int:
    """A module's layer, from its folder (the public faces: autograd/, func/, nn/, testing/, top level)."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in FOLDER_LAYERS:
        return FOLDER_LAYERS[parts[1]]
    return TOP_LEVEL_LAYERS.get(module, PUBLIC)


# Third-party packages that are optional (test extras, not runtime dependencies): importing them
# inside the function that needs them is the point.
OPTIONAL_PACKAGES = {"torch", "yaml", "mpmath", "hypothesis", "matplotlib", "jax", "dask", "distributed"}
# (module, imported name) pairs allowed inside functions, and why.
ALLOWED_LOCAL = {
    # reads derivatives.yaml, which needs PyYAML (a test extra); falls back to the generated records
    ("pushforward.testing.opdb", "pushforward.codegen.load.load"),
    # `pushforward check` loads the op database on demand and reports a missing one (test_cli)
    ("pushforward.cli", "pushforward.testing.opdb.OPS"),
    ("pushforward.cli", "pushforward.testing.opdb.check_op"),
    # `pushforward check --faces` loads the NumPy/SciPy faces database on demand
    ("pushforward.cli", "pushforward.testing.facedb.faces_database"),
    # ... with the lazy column (Dask-backed inputs); `pushforward ops` probes which ops run lazily
    ("pushforward.cli", "pushforward.testing.lazycheck.OPS"),
    ("pushforward.cli", "pushforward.testing.lazycheck.check_lazy"),
    ("pushforward.cli", "pushforward.testing.lazycheck.dask_installed"),
    ("pushforward.cli", "pushforward.testing.lazycheck.runs_lazily"),
}
# Function-local imports allowed for now (none: the set stays empty).
KNOWN_VIOLATIONS: set = set()

MAX_FUNCTION_LINES = 60
# Functions over MAX_FUNCTION_LINES allowed for now (none: a new entry needs a reason in a comment).
LONG_FUNCTIONS: set = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _trees() -> dict:
    return {m: ast.parse(p.read_text(), str(p)) for m, p in MODULES.items()}


TREES = _trees()


def _imports(mod: str, tree: ast.Module):
    """(imported names, in function?, line) of every import: for `from x import y`, 'x.y' for each y
    (x.y is either a submodule or a name of x); for `import x.y`, 'x.y'."""
    is_pkg = MODULES[mod].name == "__init__.py"

    def visit(node, in_function):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, ast.ImportFrom):
                if ch.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[: len(base) - (ch.level - 1)]
                    origin = ".".join(base + ([ch.module] if ch.module else []))
                else:
                    origin = ch.module
                yield [f"{origin}.{a.name}" if a.name != "*" else origin for a in ch.names], in_function, ch.lineno
            elif isinstance(ch, ast.Import):
                yield [a.name for a in ch.names], in_function, ch.lineno
            yield from visit(ch, in_function or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    yield from visit(tree, False)


def _target_module(name: str) -> str | None:
    """The pushforward module an imported name lives in (the longest module prefix), or None."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in MODULES:
            return cand
    return None


def test_the_top_level_is_short():
    # a newcomer reads the package at a glance: folders are layers, the rest are public faces
    entries = [p.name for p in PKG.iterdir() if not p.name.startswith((".", "__pycache__"))]
    assert len(entries) <= 24, sorted(entries)


def test_no_function_local_imports():
    found = set()
    bad = []
    for mod, tree in TREES.items():
        for names, in_function, line in _imports(mod, tree):
            if not in_function:
                continue
            for name in names:
                if name.split(".")[0] in OPTIONAL_PACKAGES or (mod, name) in ALLOWED_LOCAL:
                    continue
                if (mod, name) in KNOWN_VIOLATIONS:
                    found.add((mod, name))
                    continue
                bad.append(f"{MODULES[mod].relative_to(SRC)}:{line}: import of {name} inside a function")
    assert not bad, (
        "function-local imports (move them to the top of the module; break a cycle with the "
        "registry in autograd/registry.py or by moving code to its layer):\n" + "\n".join(bad)
    )
    fixed = KNOWN_VIOLATIONS - found
    assert not fixed, f"these KNOWN_VIOLATIONS are gone: remove them from the list: {sorted(fixed)}"


def _module_edges() -> dict:
    """Module-level imports between pushforward modules: {module: {(target module, line), ...}}."""
    edges: dict = {m: set() for m in MODULES}
    for mod, tree in TREES.items():
        for names, in_function, line in _imports(mod, tree):
            if in_function:
                continue
            for name in names:
                target = _target_module(name) if name.split(".")[0] == "pushforward" else None
                if target is not None and target != mod:
                    edges[mod].add((target, line))
    return edges


def test_layers_point_one_way():
    bad = []
    for mod, targets in _module_edges().items():
        for target, line in sorted(targets):
            if layer_of(target) > layer_of(mod):
                bad.append(
                    f"{MODULES[mod].relative_to(SRC)}:{line}: {mod} (layer {layer_of(mod)}) imports "
                    f"{target} (layer {layer_of(target)})"
                )
    assert not bad, "imports from a higher layer:\n" + "\n".join(bad)


def test_no_module_level_import_cycles():
    # (the implicit import of a package's __init__ when one of its modules is imported is not an
    # edge here: pushforward/__init__ imports everything, by design)
    edges = {m: {t for t, _ in ts} for m, ts in _module_edges().items()}
    state: dict = {}
    cycles = []

    def dfs(m, path):
        state[m] = 1
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycles.append(path[path.index(t) :] + [t])
            elif t not in state:
                dfs(t, path + [t])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            dfs(m, [m])
    assert not cycles, "module-level import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _statement_lines(fn: ast.AST) -> int:
    """A function's length in lines that start a statement: independent of how the formatter
    wraps a long call or a table literal over several lines."""
    return len({n.lineno for n in ast.walk(fn) if isinstance(n, ast.stmt)})


def _long_functions():
    for mod, tree in TREES.items():
        if mod == "pushforward.ops.generated":
            continue  # generated (one function per formula; tests/test_codegen.py checks it)

        def visit(node, prefix):
            for ch in ast.iter_child_nodes(node):
                if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield mod, prefix + ch.name, _statement_lines(ch)
                    yield from visit(ch, prefix + ch.name + ".")
                elif isinstance(ch, ast.ClassDef):
                    yield from visit(ch, prefix + ch.name + ".")
                else:
                    yield from visit(ch, prefix)

        yield from visit(tree, "")


def test_no_function_is_too_long():
    long = {(m, f): n for m, f, n in _long_functions() if n > MAX_FUNCTION_LINES}
    bad = sorted(f"{m}.{f}: {n} lines" for (m, f), n in long.items() if (m, f) not in LONG_FUNCTIONS)
    assert not bad, f"functions over {MAX_FUNCTION_LINES} lines (split them):\n" + "\n".join(bad)
    fixed = sorted(LONG_FUNCTIONS - set(long))
    assert not fixed, f"these LONG_FUNCTIONS are short now: remove them from the list: {fixed}"


@pytest.mark.parametrize(
    "mod", sorted(m for m in MODULES if layer_of(m) == CORE and not m.startswith("pushforward.codegen"))
)
def test_core_modules_import_only_core(mod):
    """A direct statement of the bottom layer's rule, module by module (the same check as above)."""
    targets = {t for t, _ in _module_edges()[mod]}
    assert all(layer_of(t) == CORE for t in targets), sorted(targets)


def test_the_registry_holds_the_generated_ops():
    """Lower layers call the ops through autograd.registry.OPS, filled by methods.py at import."""
    import pushforward as pf
    from pushforward.ops import generated as ops
    from pushforward.engine.registry import DISPATCH, OPS, Registry

    assert OPS.sin is pf.sin and OPS._VIEW_SCATTER is ops._VIEW_SCATTER and OPS._view_embed is ops._view_embed
    assert callable(DISPATCH.prim_at)
    with pytest.raises(AttributeError, match="no 'not_an_op'"):
        OPS.not_an_op
    empty = Registry("a test registry")
    with pytest.raises(AttributeError, match="a test registry has no 'x'.*fills this registry"):
        empty.x
