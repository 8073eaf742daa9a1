"""The classifier (dispatch.apply) sends each kind of call to its executor, and every array
executor gives what the general executor gives for the same call (values, tangents, tape)."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.dispatch import classifier as dispatch
from pushforward.dispatch import general
from pushforward.dispatch.interpret import Interpreter
from pushforward.bench.timing import python_calls
from pushforward.ops.generated import MUL, SIN, STACK, UNSQUEEZE

EXECUTORS = ("run_tape", "run_arrays", "run_combined", "run_deferred", "run_vector", "run_view", "run_general")


@pytest.fixture
def seen(monkeypatch):
    """The names of the executors apply hands calls to, in order."""
    calls = []
    for name in EXECUTORS:
        fn = getattr(dispatch, name)

        def spy(*a, _fn=fn, _name=name):
            calls.append(_name)
            return _fn(*a)

        monkeypatch.setattr(dispatch, name, spy)
    return calls


def _x(n=4, seed=0, **kw):
    return pf.tensor(np.random.default_rng(seed).random(n), **kw)


def test_tape_case_without_a_level(seen):
    x = _x(requires_grad=True)
    y = dispatch.apply(MUL, (x, 2.0), ())
    assert seen == ["run_tape"] and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0)


def test_tape_case_inside_levels_for_inputs_without_tangents(seen):
    x = _x(requires_grad=True)
    with fwAD.dual_level(), fwAD.dual_level():  # two live levels: nothing to nest when x has no tangent
        y = dispatch.apply(SIN, (x,), ())
        assert fwAD.unpack_dual(y).tangent is None
    assert seen == ["run_tape"] and y.grad_fn is not None


def test_arrays_case(seen):
    with fwAD.dual_level():
        d = fwAD.make_dual(_x(), _x(seed=1))
        y = dispatch.apply(MUL, (d, 3.0), ())
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), 3.0 * _x(seed=1).numpy())
    assert seen == ["run_arrays"]


def test_deferred_case(seen):
    x = _x(requires_grad=True)
    with fwAD.untracked_level():
        d = fwAD.make_dual(x, _x(seed=1))
        y = dispatch.apply(SIN, (d,), ())
        assert type(y._fw[next(iter(y._fw))]).__name__ == "Pending"
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), np.cos(_x().numpy()) * _x(seed=1).numpy())
    assert seen == ["run_deferred"] and y.grad_fn is not None


def test_combined_case(seen):
    """A tangent and requires-grad on one tracked level: the tangent formula goes on the tape, run
    by run_combined, whose formula ops (on a primal without the tangent) take the bare path's tape
    case (bare.run1 / run2), not the classifier."""
    x = _x(requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, _x(seed=1))
        y = dispatch.apply(SIN, (d,), ())
        t = fwAD.unpack_dual(y).tangent
        np.testing.assert_allclose(t.detach().numpy(), np.cos(_x().numpy()) * _x(seed=1).numpy())
    assert seen == ["run_combined"] and y.grad_fn is not None
    (g,) = pf.autograd.grad(t.sum(), x)  # reverse over forward: d/dx (cos(x) v) = -sin(x) v
    np.testing.assert_allclose(g.numpy(), -np.sin(_x().numpy()) * _x(seed=1).numpy())


def test_vector_case(seen):
    with fwAD.dual_level(batch=3):
        d = fwAD.make_dual(_x(3), pf.eye(3))
        y = dispatch.apply(SIN, (d,), ())
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), np.diag(np.cos(_x(3).numpy())))
    assert seen == ["run_vector"]


@pytest.mark.parametrize("case", ["nested", "list"])
def test_general_cases(seen, case):
    with fwAD.dual_level():
        if case == "nested":
            with fwAD.dual_level():
                d = fwAD.make_dual(fwAD.make_dual(_x(), _x(seed=1), level=0), _x(seed=2), level=1)
                dispatch.apply(SIN, (d,), ())
        elif case == "recorded_tangent":  # the tangent formula goes on the tape
            d = fwAD.make_dual(_x(requires_grad=True), _x(seed=1))
            dispatch.apply(SIN, (d,), ())
        else:
            dispatch.apply(STACK, ([fwAD.make_dual(_x(), _x(seed=1)), _x()],), (0,))
    assert seen[0] == "run_general"


def test_view_case(seen):
    """A view op on one tensor goes to run_view, whatever the tensor carries."""
    with fwAD.dual_level():
        for x in (_x(), _x(requires_grad=True), fwAD.make_dual(_x(), _x(seed=1))):
            dispatch.apply(UNSQUEEZE, (x,), (0,))
    assert seen == ["run_view"] * 3


LEVELS = {
    "run_arrays": (fwAD.dual_level, None),
    "run_deferred": (fwAD.untracked_level, None),
    "run_vector": (fwAD.dual_level, 2),
    "run_combined": (fwAD.dual_level, None),
}


@pytest.mark.parametrize("executor", sorted(LEVELS))
@pytest.mark.parametrize("inputs", ["tensor_scalar", "scalar_tensor", "two_tensors", "broadcast", "int_scalar"])
def test_array_executors_agree_with_the_general_one(seen, executor, inputs):
    """The same call by apply (an array executor) and by the general executor: same value and
    tangent (and, on an untracked level, where the primal op is recorded, the same gradient)."""
    a, b = _x(), _x(seed=1)
    pairs = {
        "tensor_scalar": (a, 2.5),
        "scalar_tensor": (2.5, a),
        "two_tensors": (a, b),
        "broadcast": (a, pf.tensor(3.0)),
        "int_scalar": (a, 3),
    }[inputs]
    enter, batch = LEVELS[executor]
    recorded = executor in ("run_deferred", "run_combined")
    got = []
    for run in (dispatch.apply, general.run_general):
        with enter(batch=batch) if batch else enter() as lvl:
            ins = []
            for k, v in enumerate(pairs):
                if isinstance(v, pf.Tensor):
                    p = v.detach().requires_grad_(recorded)
                    t = _x(4 * batch, seed=5 + k).reshape(batch, 4) if batch else _x(seed=5 + k)
                    ins.append((p, fwAD.make_dual(p, t, level=lvl) if p.dim() else p))
                else:
                    ins.append((None, v))
            seen.clear()
            y = run(MUL, tuple(v for _, v in ins), ())
            if run is dispatch.apply:
                assert seen[0] == executor
            tangent = fwAD.unpack_dual(y).tangent
            tan = tangent.detach().numpy().copy()  # (batch, 4) at a vector-mode level
            if recorded:  # (on a tracked level, through the tangent too: reverse over forward)
                (y.sum() + tangent.sum() * 0.5 if executor == "run_combined" else y.sum()).backward()
            grads = [None if p is None or p.grad is None else p.grad.numpy().copy() for p, _ in ins]
            got.append((y.detach().numpy().copy(), tan, grads))
    (v1, t1, g1), (v2, t2, g2) = got
    np.testing.assert_allclose(v1, v2)
    np.testing.assert_allclose(t1, t2)
    assert [g is None for g in g1] == [g is None for g in g2]
    for x, y in zip(g1, g2):
        if x is not None:
            np.testing.assert_allclose(x, y)


# ---- interpreted tensors: a Tensor subclass whose ops run by rules of its own


class _Recorder(Interpreter):
    """Runs each op on the plain tensors underneath and records its name."""

    def __init__(self):
        self.seen = []

    def run(self, op, inputs, args):
        self.seen.append(op.name)
        plain = [pf.as_tensor(v._data) if isinstance(v, _Traced) else v for v in inputs]
        return _Traced.of(dispatch.apply(op, tuple(plain), args))


class _Traced(pf.Tensor):
    _ad = True
    _interpreter = _Recorder()

    @staticmethod
    def of(t):
        out = _Traced.__new__(_Traced)
        out.__dict__.update(t.__dict__) if hasattr(t, "__dict__") else None
        out._data = t._data
        return out


def test_an_interpreted_tensor_hands_every_op_to_its_interpreter():
    rec = _Traced._interpreter
    rec.seen.clear()
    x = _Traced.of(pf.tensor([0.5, 1.0]))
    y = (x.sin() * 2.0 + x).sum()
    assert rec.seen == ["sin", "mul", "add", "sum"]
    assert np.allclose(y._data, (np.sin([0.5, 1.0]) * 2 + [0.5, 1.0]).sum())
    with pytest.raises(pf.errors.OpError, match="add_: in-place ops are not supported by _Recorder"):
        x.add_(1.0)


def test_the_combined_case_takes_few_python_calls(monkeypatch):
    """An op on a tensor that carries a tangent and requires grad (reverse-over-forward on a tracked
    level): the op's fast path reads the call (bare.py) and hands its reading to run_combined, which
    reads nothing again, and the tangent formula's ops (on a primal without the tangent) take the
    fast path's tape case, not the classifier. Everything, the formula's two recorded ops
    included, stays within a bound (was 79 calls when the general executor re-read the call and
    the formula's ops took it too, 35 when they went through the classifier). What remains: three
    recorded ops (sin, and the formula's cos and mul) at three to six calls each, the primal's alias
    and attaching the tangent."""
    with fwAD.dual_level():
        x = fwAD.make_dual(_x().requires_grad_(), _x(seed=1))
        x.sin()  # (warm: first-use work stays out of the count)
        calls = python_calls(lambda: x.sin())
    assert "run_general" not in calls and "levels_of" not in calls and "apply" not in calls
    assert calls.count("run_combined") == 1 and calls.count("record_plain") == 3
    # (the lambda included; one call puts the tangent the formula reads on the tangent's storage, so
    # that a node keeping it sees a later in-place write into it; one per recorded op notes the
    # value it saves, a primal on a shared storage: core.tensor.note_value)
    assert len(calls) <= 23, calls
