"""The resolver (dispatch/interpret.py): one function decides which machinery runs an op call, and
no other module reads a tensor's kind to decide it."""

from __future__ import annotations

import ast
import importlib.util
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


def test_no_other_module_reads_a_tensors_kind():
    """Outside the resolver and the kinds' own modules, nothing probes a call's inputs for their kind
    (has_batched, any_lazy, _interpreter, ...) and no module reads a process-wide lazy flag."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in KIND_MODULES or rel.startswith(("func/", "autograd/", "testing/", "methods/indexing")):
            # (the transforms make and unwrap their own tensors; indexing loops over a batched index)
            continue
        hits = _names(path) & (PROBES | {"Seen.lazy"})
        if hits:
            bad.append(f"{rel}: {sorted(hits)}")
    assert not bad, "modules reading a tensor's kind outside the resolver:\n" + "\n".join(bad)


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
