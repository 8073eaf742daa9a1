"""The resolver (dispatch/interpret.py): one function decides which machinery runs an op call, and
no other module reads a tensor's kind to decide it."""

from __future__ import annotations

import ast
import importlib.util
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pushforward as pf
from pushforward.core.batched import BatchedTensor, new_batch_level
from pushforward.dispatch import interpret
from pushforward.dispatch.interpret import BATCHING, LAZY, TRACE_LEVELS, Interpreter, resolve
from pushforward.ops.generated import ADD, MUL

SRC = Path(pf.__file__).resolve().parent

# the modules that may read a tensor's kind: the resolver, and each kind's own module
KIND_MODULES = {
    "dispatch/interpret.py",  # the resolver
    "dispatch/batching.py",  # the batch interpreter's rules (has_batched: loop_batched's composites)
    "dispatch/lazyops.py",  # the lazy interpreter's guard
    "core/batched.py",  # BatchedTensor itself
    "core/lazy.py",  # the Dask predicates (any_lazy)
    "methods/lazy.py",  # computing lazy tensors, guarding composites
    "core/creation.py",  # zeros_like & co. of an interpreted tensor (`_like_of`, below the dispatch layer)
    "core/tensor.py",  # Tensor's `_interpreter = None`: the plain kind
}
# names that probe a call's inputs for their kind
PROBES = {"has_batched", "any_lazy", "interpreter_of", "_interpreter", "lazy_ready"}
# where the machinery is chosen: these modules decide by the resolver alone
EXECUTORS = ["dispatch/general.py", "dispatch/inplace.py", "dispatch/classifier.py", "dispatch/bare.py"]


def _batched(x, level=None):
    return BatchedTensor(pf.tensor(x), new_batch_level() if level is None else level)


class _Series(pf.Tensor):
    """A stand-in interpreted tensor (as func.jet's series)."""


class _Echo(Interpreter):
    def run(self, op, inputs, args):
        return ("echo", op.name)


_Series._interpreter = _Echo()


def _series():
    t = pf.Tensor.__new__(_Series)
    t.__dict__.update(pf.tensor([1.0]).__dict__)
    t._ad = True
    return t


def test_plain_inputs_go_to_the_engine():
    assert resolve((pf.tensor([1.0]), 2.0, None, [pf.tensor([1.0])])) is None
    assert resolve(()) is None


def test_each_kind_has_its_interpreter():
    assert resolve((pf.tensor([1.0]), _batched(np.ones((2, 1))))) is BATCHING
    assert resolve(([pf.tensor([1.0]), _batched(np.ones((2, 1)))],)) is BATCHING  # (a list input)
    assert resolve((_series(),)) is _Series._interpreter
    assert TRACE_LEVELS == ("interpreted", "lazy", "batch")


def test_the_first_trace_level_runs_first_and_hands_on_to_the_next():
    mixed = (_batched(np.ones((2, 1))), _series())
    assert resolve(mixed) is _Series._interpreter
    assert resolve(mixed, after="interpreted") is BATCHING
    assert resolve(mixed, after="batch") is None


def test_every_entry_starts_with_the_resolver():
    """apply (the classifier), run_general and apply_inplace hand an interpreted call over."""
    from pushforward.dispatch.classifier import apply
    from pushforward.dispatch.general import run_general
    from pushforward.dispatch.inplace import apply_inplace

    s = _series()
    assert apply(MUL, (s, 2.0), ()) == ("echo", "mul")
    assert run_general(ADD, (pf.tensor([1.0]), s), ()) == ("echo", "add")
    with pytest.raises(pf.errors.OpError, match="add_: in-place ops are not supported by _Echo"):
        apply_inplace(ADD, s, (s, 1.0), ())


def test_lazy_tensors_are_an_interpreter_without_a_global_flag():
    da = pytest.importorskip("dask.array", reason="Dask-backed tensors need pushforward[dask]")
    lazy = pf.as_tensor(da.ones(4, chunks=2))
    assert resolve((lazy,)) is LAZY and resolve((pf.tensor([1.0]), [lazy])) is LAZY
    # a batch of lazy tensors: the compute guard first, then the batching rule
    b = BatchedTensor(pf.as_tensor(da.ones((2, 3), chunks=1)), new_batch_level())
    assert resolve((b,)) is LAZY and resolve((b,), after="lazy") is BATCHING
    assert not hasattr(pf.core.lazy.Seen, "lazy")
    with pytest.raises(pf.errors.OpError, match="det is not supported on Dask-backed tensors"):
        pf.linalg.det(pf.as_tensor(da.ones((2, 2), chunks=1)))
    with pytest.raises(pf.errors.OpError, match="immutable"):
        lazy.add_(1.0)
    (v,) = pf.compute(pf.sin(lazy) * 2)  # (a tuple, as dask.compute)
    assert np.allclose(v.numpy(), 2 * np.sin(np.ones(4)))


def _names(path: Path) -> set:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
            if isinstance(node.value, ast.Name) and node.value.id == "Seen" and node.attr == "lazy":
                found.add("Seen.lazy")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in PROBES:
            found.add(node.value)  # getattr(type(x), "_interpreter")
    return found


# the tensor kinds an interpreter runs (each class's own module is in KIND_MODULES)
KINDS = {"BatchedTensor", "Series", "PatternTensor"}
KIND_MODULES |= {"func/series.py", "func/sparsity.py"}  # (Series', PatternTensor's own)
# the Dask test of the array level and the batch level of a call's inputs count as kind tests too
KIND_PROBES = PROBES | {"is_lazy_array", "blevel_of", "Seen.lazy"}


def _kind_names(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def kind_tests(source: str) -> list[tuple[int, str]]:
    """(line, what) of every kind test in the source: `isinstance(x, K)` / `issubclass` and
    `type(x) is K` / `is not` / `in (...)` for a kind class K, and every use of a probe
    (has_batched, any_lazy, is_lazy_array, _interpreter, ...; imports aside)."""
    tree = ast.parse(source)
    imports = {n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))}
    hits = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in imports:
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
        ):
            for k in _kind_names(node.args[1]) & KINDS if len(node.args) == 2 else ():
                hits.add((node.lineno, k))
        elif (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Call)
            and getattr(node.left.func, "id", "") == "type"
        ):
            for c in node.comparators:
                for k in _kind_names(c) & KINDS:
                    hits.add((node.lineno, k))
        elif isinstance(node, ast.Name) and node.id in KIND_PROBES:
            hits.add((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in KIND_PROBES:
            hits.add((node.lineno, node.attr))
        elif isinstance(node, ast.Attribute) and node.attr == "lazy" and getattr(node.value, "id", "") == "Seen":
            hits.add((node.lineno, "Seen.lazy"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in KIND_PROBES:
            hits.add((node.lineno, node.value))  # getattr(type(x), "_interpreter")
    return sorted(hits)


_TRANSFORM = "a transform makes and unwraps its own tensors of that kind"
_VECTOR_MODE = (
    "vector mode: a batch of tangents or cotangents is forward and reverse mode's own kind of derivative "
    "(docs/vector-mode.md), built, stored and unwrapped where the derivative is"
)
_DASK_KERNEL = (
    "an array kernel choosing Dask's routine (or refusing) for a Dask array: the array level, where no tensor "
    "kind exists"
)
_NO_LAYOUT = "a Dask array has no memory layout to follow (the layout rules of results and formulas)"
# (module, kind or probe) -> (lines at most, why the test is there and not in the resolver). A
# module testing a kind more often than allowed, or an entry no longer needed, fails the guard.
KIND_TESTS_ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("autograd/forward_ad.py", "BatchedTensor"): (9, _VECTOR_MODE + ": make_dual/unpack_dual of a batched tangent"),
    ("autograd/forward_ad.py", "_interpreter"): (
        1,
        "make_dual refuses an interpreted primal (its interpreter owns it)",
    ),
    ("autograd/function.py", "BatchedTensor"): (1, _VECTOR_MODE + ": a custom Function's jvp once per batched tangent"),
    ("autograd/gradcheck.py", "BatchedTensor"): (
        1,
        "the batched gradcheck reads row b of the batched gradient it made",
    ),
    ("autograd/jacobian_util.py", "BatchedTensor"): (1, _VECTOR_MODE + ": jacobian's one-row pass runs unbatched"),
    ("dispatch/general.py", "BatchedTensor"): (1, _VECTOR_MODE + ": a batched tangent is never a bare array"),
    ("dispatch/oprecord.py", "is_lazy_array"): (
        1,
        "an op's error names Dask's refusal (LazyUnsupportedError) when a lazy input's array raised it",
    ),
    ("engine/accumulate.py", "BatchedTensor"): (
        1,
        _VECTOR_MODE + ": batched cotangents are summed by ops, not in place",
    ),
    ("engine/graph.py", "BatchedTensor"): (
        2,
        _VECTOR_MODE + ": a zero cotangent batched as the one beside it; a saved batch kept before a write",
    ),
    ("engine/outputs.py", "BatchedTensor"): (3, _VECTOR_MODE + ": each member of a batch of tangents laid out"),
    ("engine/outputs.py", "is_lazy_array"): (1, _NO_LAYOUT),
    ("func/jet.py", "Series"): (2, _TRANSFORM),
    ("func/transforms.py", "BatchedTensor"): (2, _TRANSFORM),
    ("func/vmapping.py", "BatchedTensor"): (1, _TRANSFORM),
    ("methods/indexing.py", "has_batched"): (2, "an index varying across a vmap batch: a NumPy index holds no batch"),
    ("methods/indexing.py", "BatchedTensor"): (3, "an index varying across a vmap batch: once per batch element"),
    ("methods/indexing.py", "blevel_of"): (1, "an index varying across a vmap batch: the level it varies at"),
    ("ops/composites/shape.py", "BatchedTensor"): (
        1,
        "new_zeros & co. inside vmap: one tensor per batch element, as torch",
    ),
    ("ops/composites/strided.py", "BatchedTensor"): (
        2,
        "as_strided inside vmap: each batch element's own storage, as torch",
    ),
    ("ops/formulas/common.py", "is_lazy_array"): (1, _NO_LAYOUT),
    ("ops/formulas/linalg.py", "BatchedTensor"): (
        1,
        "the layout a formula follows is the batch's physical one under vmap",
    ),
    ("ops/formulas/linalg.py", "is_lazy_array"): (1, _NO_LAYOUT),
    ("kernels/basic.py", "is_lazy_array"): (13, _DASK_KERNEL),
    ("kernels/linalg.py", "is_lazy_array"): (12, _DASK_KERNEL),
    ("kernels/window.py", "is_lazy_array"): (2, _DASK_KERNEL),
}


def kind_test_report() -> tuple[dict, int]:
    """{(module, kind or probe): lines} of every kind test outside the kinds' own modules, and the
    number of lines holding one."""
    found: dict[tuple[str, str], set] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in KIND_MODULES:
            continue
        for line, what in kind_tests(path.read_text()):
            found.setdefault((rel, what), set()).add(line)
    lines = {(rel, line) for (rel, _), ls in found.items() for line in ls}
    return {k: len(v) for k, v in found.items()}, len(lines)


def test_no_other_module_reads_a_tensors_kind():
    """Outside the resolver and the kinds' own modules, every kind test (isinstance / type checks of
    BatchedTensor, Series, PatternTensor; has_batched, any_lazy, is_lazy_array, _interpreter, ...) in
    every module is one the allow-list justifies, no more often than it says."""
    found, _ = kind_test_report()
    bad = [
        f"{rel}: {n} line(s) test {what}"
        + (f" (allowed: {KIND_TESTS_ALLOWED[rel, what][0]})" if (rel, what) in KIND_TESTS_ALLOWED else "")
        for (rel, what), n in sorted(found.items())
        if n > KIND_TESTS_ALLOWED.get((rel, what), (0, ""))[0]
    ]
    assert not bad, (
        "modules reading a tensor's kind outside the resolver (move it there, or justify it):\n" + "\n".join(bad)
    )
    stale = sorted(k for k in KIND_TESTS_ALLOWED if k not in found)
    assert not stale, f"allow-list entries no module needs any more: {stale}"
    assert all(why for _, why in KIND_TESTS_ALLOWED.values())


def test_the_kind_test_reader_finds_every_form():
    src = textwrap.dedent(
        """
        from x import has_batched
        def f(a, b):
            if isinstance(a, (int, BatchedTensor)):
                pass
            if type(b) is Series or type(a) in (PatternTensor, Tensor):
                pass
            if has_batched(a) or is_lazy_array(b) or getattr(type(a), "_interpreter", None):
                pass
            if type(a) is Tensor and isinstance(b, Tensor):  # (not a kind test)
                pass
        """
    )
    assert kind_tests(src) == [
        (4, "BatchedTensor"),
        (6, "PatternTensor"),
        (6, "Series"),
        (8, "_interpreter"),
        (8, "has_batched"),
        (8, "is_lazy_array"),
    ]


@pytest.mark.parametrize("rel", EXECUTORS)
def test_the_executors_decide_by_the_resolver_alone(rel):
    """The executors never ask which library an array comes from, nor test for a batched input."""
    names = _names(SRC / rel)
    assert not names & {"is_lazy_array", "any_lazy", "has_batched", "Seen", "run_batched", "run_lazy"}, rel
    if rel != "dispatch/bare.py":  # (bare's paths take plain tensors only: type(x) is Tensor)
        assert "resolve" in names, rel


def test_the_import_graph_has_the_resolver_below_the_executors():
    spec = importlib.util.find_spec("pushforward.dispatch.interpret")
    text = Path(spec.origin).read_text()
    for above in ("general", "inplace", "classifier", "bare"):
        assert f"from .{above} import" not in text
    assert interpret.__all__
