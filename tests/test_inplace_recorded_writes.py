"""x[index] = value on a tensor on the tape takes a short path (dispatch/bare.py, _write_recorded):
the root's history becomes one view_scatter node of value. Its gradients, versions, saved values
and errors are the general path's (the reference: the short path turned off)."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
from pushforward.dispatch import bare


def _grads(write, seed=0):
    rng = np.random.default_rng(seed)
    a = pf.tensor(rng.standard_normal((5, 6)), requires_grad=True)
    b = pf.tensor(rng.standard_normal(4), requires_grad=True)
    x = a.sin()
    write(x, b)
    w = pf.tensor(rng.standard_normal((5, 6)))
    (x * x * w).sum().backward()
    return x.detach().numpy().copy(), a.grad.numpy().copy(), None if b.grad is None else b.grad.numpy().copy()


def _general(write, monkeypatch):
    """The same write by the general path (view tensor, copy_'s node, rebase_history)."""
    with monkeypatch.context() as m:
        m.setattr(bare, "_write_recorded", lambda *a: False)
        return _grads(write)


@pytest.mark.parametrize(
    "write",
    [
        lambda x, b: x.__setitem__((3, slice(1, -1)), b),  # a row's slice
        lambda x, b: x.__setitem__((slice(1, None), 2), b),  # a column's slice
        lambda x, b: x[1:].__setitem__((1, slice(2, None)), b),  # through a view of the root
        lambda x, b: x.__setitem__((2, slice(0, 4)), x[1, 2:6] * b),  # value on the tape
    ],
)
def test_slice_write_gradients_are_the_general_paths(write, monkeypatch):
    got, ref = _grads(write), _general(write, monkeypatch)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12)


def test_a_region_written_from_an_overlapping_region_of_itself(monkeypatch):
    def write(x, b):
        x[1:, 0] = x[:-1, 0]  # (NumPy buffers the overlap; the gradient of the old values)

    got, ref = _grads(write), _general(write, monkeypatch)
    for g, r in zip(got[:2], ref[:2]):
        np.testing.assert_allclose(g, r, rtol=1e-12)


def test_number_written_cuts_the_region_from_the_gradient():
    a = pf.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x = a * 2.0
    x[1, 1] = 7.0
    x[0, :2] = 0
    assert x.grad_fn.name() == "ViewScatterBackward0"
    x.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[0.0, 0.0, 2.0], [2.0, 0.0, 2.0]])
    np.testing.assert_array_equal(x.detach().numpy(), [[0.0, 0.0, 4.0], [6.0, 7.0, 10.0]])


def test_versions_and_saved_values_hold():
    a = pf.tensor(np.linspace(0.1, 1.0, 6), requires_grad=True)
    x = a.exp()  # (exp keeps its output: the write must make it keep the old values)
    y = x.exp()
    v0 = x._version
    x[2:4] = pf.tensor([5.0, 6.0])
    assert x._version == v0 + 1
    y.sum().backward()
    e = np.exp(np.linspace(0.1, 1.0, 6))
    np.testing.assert_allclose(a.grad.numpy(), np.exp(e) * e, rtol=1e-12)


def test_an_input_saved_by_a_node_then_overwritten_is_kept():
    """docs/design.md, "Overwritten saved values": the node keeps the old values."""
    a = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = a * 1.0
    y = x * x  # (keeps x)
    x[0] = 5.0
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 4.0, 6.0])


def test_a_leaf_and_its_views_refuse():
    a = pf.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(Exception, match="leaf Variable"):
        a[0] = 2.0
    with pytest.raises(Exception, match="leaf Variable"):
        a[1:][0] = 2.0


def test_augmented_element_writes_through_a_loop(monkeypatch):
    """seidel's statement on the tape: a[i, j] += a[i, j - 1]; a[i, j] /= 9.0."""
    rng = np.random.default_rng(3)
    a0 = rng.standard_normal((4, 5))

    def f(a, xp_loop):
        a = a * 1.0
        for i in range(1, 3):
            for j in range(1, 4):
                xp_loop(a, i, j)
        return (a * a).sum()

    def stmt(a, i, j):
        a[i, j] += a[i, j - 1]
        a[i, j] /= 9.0

    grads = []
    for short in (True, False):
        with monkeypatch.context() as m:
            if not short:
                m.setattr(bare, "_write_recorded", lambda *a: False)
            x = pf.tensor(a0, requires_grad=True)
            f(x, stmt).backward()
            grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
