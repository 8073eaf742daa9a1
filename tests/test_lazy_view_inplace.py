"""An in-place op on a view of a dual tensor that holds no tangent of its own, and the write-back
of its augmented assignment (`a[i, j] += v` is a read, the op and `a[i, j] = a[i, j]`): by arrays
(dispatch.inplace._write_lazy_view, dispatch.bare.rewritten_lazy), with the values, tangents,
versions, saved values and errors of the paths they shortcut (the reference: those two turned
off, the views still lazy; and the general path, every view with a tangent of its own)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.dispatch import inplace
from pushforward.methods import indexing

from helpers import fast_paths_off


@pytest.fixture(autouse=True)
def _no_level(no_level):
    yield


def _dual(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.standard_normal(shape) + 3.0
    t = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        p, t = p + 1j * rng.standard_normal(shape), t - 2j * rng.standard_normal(shape)
    return fwAD.make_dual(pf.tensor(p.astype(dtype)), pf.tensor(t.astype(dtype)))


def _outcome(program, shape, dtype=np.float64) -> tuple:
    """program(d) at one level: d's values, tangent, versions (d's and its tangent's), or the error."""
    with fwAD.dual_level():
        d = _dual(shape, dtype)
        t0 = fwAD.unpack_dual(d).tangent
        try:
            program(d)
        except Exception as e:
            return type(e).__name__, str(e)
        p, t = fwAD.unpack_dual(d)
        return p.numpy().tolist(), t.numpy().tolist(), d._version, t0._version, t is t0


def _rows(d):
    row = d[2]  # (a lazy view; its views share its holder)
    row[1:3] *= 2.0
    row[1] += row[0]
    row[3] /= row[1]
    row[0:2] -= row[2:4]


PROGRAMS = {
    "element +=, /=": lambda d: [
        d.__setitem__((1, j), d[1, j].__iadd__(d[1, j - 1]).__itruediv__(9.0)) for j in (1, 2, 3)
    ],
    "a[i, j] += a[i, j - 1]; a[i, j] /= 9.0": lambda d: _seidel_row(d, 2),
    "slice += sum of shifted slices": lambda d: d.__setitem__(
        (1, slice(1, -1)), d[1, 1:-1].__iadd__(d[0, :-2] + d[0, 1:-1] + d[2, 2:])
    ),
    "element *= element, -= number": lambda d: [
        d.__setitem__((2, 1), d[2, 1].__imul__(d[0, 3])),
        d.__setitem__((2, 1), d[2, 1].__isub__(2)),
    ],
    "NumPy scalars": lambda d: [
        d.__setitem__((1, 1), d[1, 1].__imul__(np.float64(1.5))),
        d.__setitem__((1, 2), d[1, 2].__iadd__(np.int32(3))),
        d.__setitem__((1, slice(0, 3)), d[1, 0:3].__itruediv__(np.float32(4.0))),
    ],
    "x += x": lambda d: [v := d[1, 1:3], v.__iadd__(v), d.__setitem__((1, 1), d[1, 1].__imul__(d[1, 1]))],
    "overlapping slices": lambda d: d.__setitem__((1, slice(1, 4)), d[1, 1:4].__iadd__(d[1, 0:3])),
    "broadcast row": lambda d: [
        d.__setitem__((1, slice(1, 4)), d[1, 1:4].__iadd__(d[2, 1:2])),
        d[1:3, 1:4].__imul__(d[0, 1:4]),
    ],
    "an element by a 0-d tensor of another dtype": lambda d: d[1, 1].__iadd__(
        fwAD.make_dual(pf.tensor(np.float32(2.0)), pf.tensor(np.float32(0.5)))
    ),
    "an element by a plain tensor": lambda d: d[1, 1].__imul__(pf.tensor(3.0)),
    "a broadcast that does not fit": lambda d: d[1, 1:4].__iadd__(d[1:3, 1:4]),
    "a complex number into a real view": lambda d: d[1, 1].__iadd__(1j),
    "a division by zero": lambda d: d[1, 1].__itruediv__(0.0),
    "views of views": _rows,
    "a write-back into another tensor's region": lambda d: d.__setitem__((1, 1), d[2, 2]),
    "a write-back of a view of another index": lambda d: d.__setitem__((1, 1), d[(1, 1)]),
    "a lazy view of another view op written": lambda d: [
        d.__setitem__(0, d.t()[1]),
        d[:4, :4].__setitem__(..., d[:4, :4].t()),
    ],
    "a write-back through a view": lambda d: [r := d[1:], r.__setitem__((0, 1), r[0, 1].__iadd__(1.0))],
}


def _seidel_row(d, i):
    for j in range(1, d.shape[1] - 1):
        d[i, j] += d[i, j - 1]
        d[i, j] /= 9.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_lean_paths_are_the_paths_they_shortcut(name, dtype, monkeypatch):
    program = PROGRAMS[name]
    with np.errstate(divide="ignore", invalid="ignore"):
        got = _outcome(program, (4, 5), dtype)
        with fast_paths_off(monkeypatch, every=False):
            ref = _outcome(program, (4, 5), dtype)
        with fast_paths_off(monkeypatch):
            general_ref = _outcome(program, (4, 5), dtype)
    assert got == ref
    assert got == general_ref
    if name in ("a broadcast that does not fit",) or (name.startswith("a complex") and dtype is not np.complex128):
        assert type(got[0]) is str  # (the error, as before)


def test_the_element_statement_takes_the_lean_paths(monkeypatch):
    seen = []
    for module, name in ((inplace, "_write_lazy_view"), (indexing, "rewritten_lazy")):
        fn = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, fn=fn, name=name: seen.append((name, fn(*a))) or seen[-1][1])
    with fwAD.dual_level():
        d = _dual((3, 3))
        d[1, 2] += d[1, 1]
        d[1, 2] /= 9.0
    assert seen == [("_write_lazy_view", True), ("rewritten_lazy", True)] * 2


def test_an_int_tensor_plus_a_float_raises_as_before():
    x = pf.tensor(np.arange(6).reshape(2, 3))
    v = x[1, 1:]
    with pytest.raises(pf.errors.OpError, match="can't be cast"):
        v += 1.5
    assert x.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("allowed", [True, False])
def test_a_saved_element_written_by_the_lean_path(allowed, monkeypatch):
    """y = w * d[1, 2] saves the element's value; d[1, 2] += 1 by arrays keeps it (the gradient is
    the old value's), or, with mutation of saved values forbidden, backward raises torch's error."""

    def program():
        with fwAD.dual_level():
            d = _dual((3, 3))
            w = pf.tensor(2.0, requires_grad=True)
            old = float(fwAD.unpack_dual(d[1, 2]).primal)
            with contextlib.nullcontext() if allowed else pf.autograd.forbid_mutation_on_saved_tensors():
                y = w * fwAD.unpack_dual(d[1, 2]).primal
                d[1, 2] += 1.0
            try:
                (g,) = pf.autograd.grad(y, w)
            except pf.errors.SavedTensorModifiedError as e:
                return "raised", type(e).__name__, old
            return float(g), old

    got = program()
    with fast_paths_off(monkeypatch, every=False):
        assert program() == got
    if allowed:
        assert got[0] == got[1]
    else:
        assert got[0] == "raised"


def test_nested_levels_are_the_general_paths(monkeypatch):
    def program():
        with fwAD.dual_level():
            d = _dual((3, 4))
            with fwAD.dual_level():
                e = fwAD.make_dual(pf.tensor(np.arange(12.0).reshape(3, 4)), pf.ones(3, 4))
                for j in (1, 2):
                    d[1, j] += d[1, j - 1]  # (two levels live: the general path's)
                    e[1, j] *= d[0, j]
                inner = fwAD.unpack_dual(e).tangent.numpy().tolist()
            d[2, 1:] /= 3.0
            p, t = fwAD.unpack_dual(d)
            return p.numpy().tolist(), t.numpy().tolist(), inner, d._version

    got = program()
    with fast_paths_off(monkeypatch):
        assert program() == got


def test_a_lazy_view_written_after_its_holder_got_a_new_tangent_takes_the_general_path(monkeypatch):
    """The view keeps the array of its holder's tangent when it was made; once the level exits and
    a new one gives the holder another tangent, the lean path leaves the view to the general path."""
    with fwAD.dual_level():
        d = _dual((3, 3))
        v = d[1, 1:]
    with fwAD.dual_level():
        d2 = fwAD.make_dual(fwAD.unpack_dual(d).primal, pf.ones(3, 3))
        w = d2[1, 1:]
        w += 1.0
        d2[1, 1:] = w
        assert fwAD.unpack_dual(d2).tangent.numpy().tolist() == [[1.0] * 3] * 3
    v *= 2.0  # (no level live: the values only)
    assert fwAD.unpack_dual(d).primal.numpy()[1, 1:].tolist() == v.numpy().tolist()
