"""Vector mode: batched tangents, vmap, and Jacobians in one pass.

torch.func is the oracle where it has the feature; otherwise the unbatched jvp/vjp, column by
column, is (every op's rule is also checked by tests/test_ops.py::test_batched_forward_grad).
"""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.autograd.functional import hessian as f_hessian, jacobian as f_jacobian
from pushforward.core.batched import BatchedTensor, new_batch_level
from pushforward.errors import OpError
from pushforward.func import grad, hessian, jacfwd, jacrev, jvp, vmap


class _Missing:
    """Stands in for an optional test extra that is not installed: a test that uses it skips."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str):
        pytest.skip(f"needs {self.name} (the test oracle; pip install 'pushforward[test]')")


try:
    import torch
except ModuleNotFoundError:  # (a test extra: the tests that compare against torch skip)
    torch = _Missing("torch")

RNG = np.random.default_rng(11)


def arr(*shape):
    return RNG.standard_normal(shape)


def T(a):
    return pf.tensor(np.array(a))


def TT(a):
    return torch.tensor(np.array(a))


def close(a, b, tol=1e-10):
    a = a.numpy() if hasattr(a, "numpy") else np.asarray(a)
    b = (
        b.detach().numpy()
        if type(b).__module__.startswith("torch")
        else (b.numpy() if hasattr(b, "numpy") else np.asarray(b))
    )
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# -- batched dual levels ---------------------------------------------------------------------------


def test_batched_level_propagates_every_tangent_in_one_pass():
    x, V = arr(4), arr(3, 4)
    with fwAD.dual_level(batch=3):
        y = (fwAD.make_dual(T(x), T(V)).sin() * 2.0).exp().sum()
        t = fwAD.unpack_dual(y).tangent
    assert t.shape == (3,)
    for b in range(3):
        with fwAD.dual_level():
            one = fwAD.unpack_dual((fwAD.make_dual(T(x), T(V[b])).sin() * 2.0).exp().sum()).tangent
        close(t[b], one)


def test_batched_level_checks_the_tangent_shape():
    with fwAD.dual_level(batch=3):
        with pytest.raises(OpError, match=r"batch 3 .*\(3, 4\).*got \(4,\)"):
            fwAD.make_dual(pf.zeros(4), pf.zeros(4))
    with pytest.raises(ValueError, match="positive int"):
        with fwAD.dual_level(batch=0):
            pass


def test_matrix_times_a_batch_of_vectors_is_not_transposed():
    """A trap: B == n must not read the batch of vectors as a matrix."""
    A, x, V = arr(3, 3), arr(3), arr(3, 3)
    with fwAD.dual_level(batch=3):
        t = fwAD.unpack_dual(T(A) @ fwAD.make_dual(T(x), T(V))).tangent
    close(t, V @ A.T)


def test_views_and_inplace_with_batched_tangents():
    x, V = arr(2, 3), arr(4, 2, 3)
    with fwAD.dual_level(batch=4):
        base = pf.zeros(2, 3)
        view = base[0]  # a view of a non-dual tensor
        view.copy_(fwAD.make_dual(T(x[1]), T(V[:, 1])))  # writing a dual gives the base a batched tangent
        base.mul_(3.0)
        bt = fwAD.unpack_dual(base).tangent
        vt = fwAD.unpack_dual(view).tangent
    expect = np.zeros((4, 2, 3))
    expect[:, 0] = 3 * V[:, 1]
    close(bt, expect)
    close(vt, expect[:, 0])


def test_batched_level_nested_in_an_ordinary_level():
    x, u, V = arr(3), arr(3), arr(2, 3)
    with fwAD.dual_level() as outer:
        xo = fwAD.make_dual(T(x), T(u), level=outer)
        with fwAD.dual_level(batch=2) as inner:
            y = (fwAD.make_dual(xo, T(V), level=inner) ** 3).sum()
            t_inner = fwAD.unpack_dual(y, level=inner).tangent  # (2,): 3 x^2 . V[b]
        second = fwAD.unpack_dual(t_inner, level=outer).tangent  # d/dx along u: 6 x u . V[b]
    close(fwAD_free(t_inner), V @ (3 * x**2))
    close(second, V @ (6 * x * u))


def fwAD_free(t):
    return t.detach()


def test_reverse_over_batched_forward():
    """The batched tangents' computation is on the tape: their gradient is right."""
    x = T(arr(3)).requires_grad_()
    V = pf.eye(3)
    with fwAD.dual_level(batch=3):
        J = fwAD.unpack_dual((fwAD.make_dual(x, V) ** 3).sin()).tangent  # rows: diag Jacobian
        J.sum().backward()
    xt = TT(x.detach().numpy()).requires_grad_()
    torch.func.jacfwd(lambda v: (v**3).sin())(xt).sum().backward()
    close(x.grad, xt.grad)


# -- Jacobians in one pass -------------------------------------------------------------------------


def _tfn(x, A):
    return (A @ x).tanh() * x + x.sin()


def test_jacfwd_matches_torch_and_runs_one_pass(monkeypatch):
    A, x = arr(6, 6), arr(6)
    calls = []
    f = lambda v: (calls.append(1), _tfn(v, T(A)))[1]  # noqa: E731
    J = jacfwd(f)(T(x))
    assert len(calls) == 1
    close(J, torch.func.jacfwd(lambda v: _tfn(v, TT(A)))(TT(x)))
    calls.clear()
    close(jacfwd(f, chunk_size=4)(T(x)), J)
    assert len(calls) == 2


def test_jacfwd_several_inputs_and_outputs():
    a, b = arr(3), arr(2, 2)
    f = lambda x, y: (x * y.sum(), (x.exp()[:2] * y).sum(0))  # noqa: E731
    J = jacfwd(f, argnums=(0, 1))(T(a), T(b))
    Jt = torch.func.jacfwd(lambda x, y: (x * y.sum(), (x.exp()[:2] * y).sum(0)), argnums=(0, 1))(TT(a), TT(b))
    for r, rt in zip(J, Jt):
        for blk, blk_t in zip(r, rt):
            close(blk, blk_t)


def test_hessians_nest_vector_mode():
    x = arr(5)

    def rosen(v):
        return (100 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2).sum()

    H = torch.func.hessian(rosen)(TT(x))
    close(hessian(rosen)(T(x)), H, 1e-8)
    close(jacfwd(jacfwd(rosen))(T(x)), H, 1e-8)
    close(jacfwd(jacrev(rosen))(T(x)), H, 1e-8)
    close(f_hessian(rosen, T(x), vectorize=True, outer_jacobian_strategy="forward-mode"), H, 1e-8)


def test_functional_jacobian_vectorized_forward_mode():
    a, b = arr(4), arr(3)
    f = lambda x, y: (x.sin().sum() * y, x.exp())  # noqa: E731
    J1 = f_jacobian(f, (T(a), T(b)), strategy="forward-mode", vectorize=True)
    J2 = f_jacobian(f, (T(a), T(b)))
    for r1, r2 in zip(J1, J2):
        for x1, x2 in zip(r1, r2):
            close(x1, x2)
    with pytest.raises(RuntimeError, match="strict=True.*vectorize=True"):
        f_jacobian(f, (T(a), T(b)), strategy="forward-mode", vectorize=True, strict=True)


# -- vmap -------------------------------------------------------------------------------------------


def test_vmap_in_dims_out_dims_and_chunks():
    x, w = arr(5, 3), arr(3)
    out = vmap(lambda a, b: a * b, in_dims=(0, None))(T(x), T(w))
    close(out, x * w)
    out = vmap(lambda a: a.sum(), in_dims=1)(T(x))
    close(out, x.sum(0))
    out = vmap(lambda a: a * 2, out_dims=1)(T(x))
    close(out, (x * 2).T)
    close(vmap(lambda a: a @ a, chunk_size=2)(T(x)), (x * x).sum(1))
    nested = vmap(vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(T(arr(4)), T(arr(2)))
    assert nested.shape == (2, 4)


def test_vmap_matmul_matches_torch_for_every_operand_rank():
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3,))]:
        a, b = arr(4, *sa), arr(4, *sb)
        close(vmap(pf.matmul)(T(a), T(b)), torch.func.vmap(torch.matmul)(TT(a), TT(b)))
        close(
            vmap(pf.matmul, in_dims=(None, 0))(T(a[0]), T(b)),
            torch.func.vmap(torch.matmul, in_dims=(None, 0))(TT(a[0]), TT(b)),
        )


def test_vmap_errors_name_the_problem():
    with pytest.raises(ValueError, match="different batch sizes"):
        vmap(pf.add)(pf.zeros(3), pf.zeros(4))
    with pytest.raises(ValueError, match="in_dims"):
        vmap(pf.add, in_dims=(0,))(pf.zeros(3), pf.zeros(3))
    with pytest.raises(ValueError, match="at least one argument"):
        vmap(pf.sin, in_dims=None)(pf.zeros(3))
    with pytest.raises(OpError, match="data-dependent"):
        vmap(lambda x: x.sum().item())(pf.zeros(3, 2))
    with pytest.raises(OpError, match="not batched"):
        w = pf.zeros(2)
        vmap(lambda x: w.add_(x))(pf.zeros(3, 2))
    with pytest.raises(OpError, match="shape depends on the input's values"):
        vmap(lambda x: x[x > 0])(T([[1.0, -1.0], [1.0, 1.0]]))  # one element kept, then two
    with pytest.raises(OpError, match="c_svd: this operation does not support batched tensors"):
        # (full matrices of a non-square input complete the bases from the array: no batching yet)
        vmap(lambda x: pf.linalg.svd(x, full_matrices=True))(pf.ones(3, 4, 2))  # says where


def _outside(x: pf.Tensor) -> pf.Tensor:
    """x with one element of its second batch element set to -5 (out of a domain)."""
    bad = x.clone()
    bad[1, 2] = -5.0
    return bad


_VALUE_CHECKED = {  # name: (fn, inputs that break its check in one batch element, or None)
    "binary_cross_entropy": (lambda x, y: pf.nn.functional.binary_cross_entropy(x, y), lambda x, y: (_outside(x), y)),
    "gaussian_nll_loss": (lambda x, y: pf.nn.functional.gaussian_nll_loss(x, y, y), lambda x, y: (x, _outside(y))),
    "cross_entropy_probabilities": (
        lambda x, y: pf.nn.functional.cross_entropy(x.reshape(2, 2), y.reshape(2, 2).softmax(-1)),
        None,
    ),
    "mvlgamma": (lambda x, y: pf.mvlgamma(x + 2, 2), lambda x, y: (_outside(x), y)),
}


@pytest.mark.parametrize("name", sorted(_VALUE_CHECKED))
def test_vmap_of_composites_that_check_their_input_values(name):
    """Their checks read every batch element's values (values_of): vmap matches the loop, and a
    value outside the domain in one element still raises."""
    fn, breaking = _VALUE_CHECKED[name]
    x, y = T(RNG.random((3, 4)) * 0.8 + 0.1), T(RNG.random((3, 4)) * 0.8 + 0.1)
    close(vmap(fn)(x, y), pf.stack([fn(x[b], y[b]) for b in range(3)]))
    if breaking is not None:
        with pytest.raises(OpError):
            vmap(fn)(*breaking(x, y))


def test_vmap_loops_over_composites_that_read_integer_inputs_and_over_batched_indices():
    """Class targets, embedding indices, boolean masks that vary across the batch: the composite (or
    the indexing) runs once per batch element (loop_batched), results stacked, gradients through."""
    F = pf.nn.functional
    logp = T(RNG.standard_normal((3, 2, 4)))
    target = pf.tensor(np.array([[0, 1], [2, 3], [1, 1]]))
    close(vmap(F.nll_loss)(logp, target), pf.stack([F.nll_loss(logp[b], target[b]) for b in range(3)]))
    w = T(RNG.standard_normal((5, 2)))
    close(vmap(lambda i: F.embedding(i, w))(target), pf.stack([F.embedding(target[b], w) for b in range(3)]))
    x = T([[1.0, -2.0, 3.0], [-1.0, 2.0, 3.0]])
    close(vmap(lambda r: r[r > 0])(x), T([[1.0, 3.0], [2.0, 3.0]]))
    close(grad(lambda a: vmap(lambda r: r[r > 0].sum())(a).sum())(x), T([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))
    values, indices = vmap(lambda r: pf.median(r, 0))(x)  # a named tuple, batched field by field
    close(values, T([1.0, 2.0]))
    assert indices.tolist() == [0, 1]


def test_vmap_tensor_split_pieces_stay_views():
    """tensor_split's pieces are views under vmap too: a write into one reaches the split tensor
    (a per-element loop would have stacked copies)."""

    def f(r):
        _, piece = pf.tensor_split(r, 2)
        piece.add_(1.0)
        return r

    x = T(RNG.standard_normal((3, 4)))
    close(vmap(f)(x.clone()), pf.stack([f(x[b].clone()) for b in range(3)]))


def test_batched_cotangents_through_an_inplace_write_into_a_view_of_a_transposed_result():
    """The write's backward replays `.mT.view(-1)` on the batch's gradient buffer, which lacks the
    column-major layout the `.view` relied on: that call runs once per batch element (where the
    array kernels find the region by its elements' positions) instead of failing."""
    p = T(RNG.standard_normal((3, 3))).requires_grad_()

    def f():
        v = ((pf.ones_like(p.mT) + 0.5) * p.mT).mT.view(-1)
        v.tanh_()
        return v

    C = T(RNG.standard_normal((2, 9)))
    (g,) = pf.autograd.grad([f()], [p], [BatchedTensor(C, new_batch_level())])
    close(g._phys, pf.stack([pf.autograd.grad([f()], [p], [C[b]])[0] for b in range(2)]))


def test_vmap_inplace_on_batched_values():
    x = arr(3, 4)
    t = T(x)
    vmap(lambda a: a.mul_(2.0))(t)  # writes through to the argument, as torch
    close(t, 2 * x)


def test_per_sample_gradients_of_an_mlp():
    W1, b1, W2 = arr(5, 8), arr(8), arr(8)
    X, Y = arr(16, 5), arr(16)

    def loss(p, x, y):
        w1, c1, w2 = p
        return ((x @ w1 + c1).tanh() @ w2 - y) ** 2

    g = vmap(grad(loss), in_dims=(None, 0, 0))((T(W1), T(b1), T(W2)), T(X), T(Y))
    gt = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))((TT(W1), TT(b1), TT(W2)), TT(X), TT(Y))
    for a, b in zip(g, gt):
        close(a, b)


def test_vmap_composes_with_jvp_both_ways():
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    xs, vs = arr(3, 4), arr(3, 4)
    _, t1 = vmap(lambda x, v: jvp(f, (x,), (v,)))(T(xs), T(vs))
    _, t2 = jvp(vmap(f), (T(xs),), (T(vs),))
    _, tt = torch.func.vmap(lambda x, v: torch.func.jvp(f, (x,), (v,)))(TT(xs), TT(vs))
    close(t1, tt)
    close(t2, tt)
    hv = vmap(lambda x, v: jvp(grad(f), (x,), (v,))[1])(T(xs), T(vs))
    close(hv, torch.func.vmap(lambda x, v: torch.func.jvp(torch.func.grad(f), (x,), (v,))[1])(TT(xs), TT(vs)))


def test_grad_of_a_vmapped_function():
    w, X = arr(3), arr(4, 3)
    g = grad(lambda v: vmap(lambda x: (x * v).sin().sum())(T(X)).sum())(T(w))
    gt = torch.func.grad(lambda v: torch.func.vmap(lambda x: (x * v).sin().sum())(TT(X)).sum())(TT(w))
    close(g, gt)


def test_jacrev_runs_one_backward_pass_with_batched_cotangents(monkeypatch):
    import pushforward.engine.graph as graph

    A, x = arr(5, 4), arr(4)
    passes = []
    real = graph.run_backward
    monkeypatch.setattr(graph, "run_backward", lambda *a, **k: (passes.append(1), real(*a, **k))[1])
    f = lambda v: (T(A) @ v).tanh() * v.sum()  # noqa: E731
    J = jacrev(f)(T(x))
    assert len(passes) == 1
    close(J, torch.func.jacrev(lambda v: (TT(A) @ v).tanh() * v.sum())(TT(x)))
    passes.clear()
    close(jacrev(f, chunk_size=2)(T(x)), J)
    assert len(passes) == 3


def test_jacrev_several_outputs_and_nesting():
    a, b = arr(3), arr(2, 2)

    def f(x, y):
        return (x * y.sum(), (x.exp()[:2] * y).sum(0))

    J = jacrev(f, argnums=(0, 1))(T(a), T(b))
    Jt = torch.func.jacrev(f, argnums=(0, 1))(TT(a), TT(b))
    for r, rt in zip(J, Jt):
        for blk, blk_t in zip(r, rt):
            close(blk, blk_t)
    g = lambda v: (v.sin() * v.cumsum(0)).sum()  # noqa: E731
    H = torch.func.hessian(g)(TT(a))
    close(jacrev(jacrev(g))(T(a)), H)
    close(jacrev(jacfwd(g))(T(a)), H)


def test_functional_jacobian_vectorized_reverse_mode():
    a, b = arr(4), arr(3)
    f = lambda x, y: (x.sin().sum() * y, x.exp())  # noqa: E731
    J1 = f_jacobian(f, (T(a), T(b)), vectorize=True)
    J2 = f_jacobian(f, (T(a), T(b)))
    for r1, r2 in zip(J1, J2):
        for x1, x2 in zip(r1, r2):
            close(x1, x2)
    g = lambda x: (x**3).sum() * x.sin().sum()  # noqa: E731
    close(f_hessian(g, T(a), vectorize=True), f_hessian(g, T(a)))
    with pytest.raises(RuntimeError, match="strict=True.*vectorize=True"):
        f_jacobian(f, (T(a), T(b)), vectorize=True, strict=True)


def test_vmap_of_jacobians_and_hessians():
    """Batched Jacobians: the transforms' own batch levels nest inside vmap's."""

    def f(x):
        return (x.sin() * x.cumsum(0)).exp()

    def g(x):
        return f(x).sum()

    X = arr(4, 3)
    J = torch.func.vmap(torch.func.jacfwd(f))(TT(X))
    H = torch.func.vmap(torch.func.hessian(g))(TT(X))
    close(vmap(jacfwd(f))(T(X)), J)
    close(vmap(jacrev(f))(T(X)), J)
    close(vmap(hessian(g))(T(X)), H)
    close(vmap(jacrev(jacrev(g)))(T(X)), H)
    close(vmap(jacfwd(jacfwd(g)))(T(X)), H)


def test_batched_jvp_memory_is_at_most_batch_times_one():
    """Peak memory of a jvp with B tangents stays within B times that of one jvp."""
    import tracemalloc

    n, B = 20_000, 8
    x = T(arr(n))

    def f(v):
        return (pf.sin(v) * v + pf.tanh(v)).exp()

    def peak(run) -> int:
        tracemalloc.start()
        run()
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    def one():
        with fwAD.dual_level():
            fwAD.unpack_dual(f(fwAD.make_dual(x, pf.ones(n)))).tangent

    def batched():
        with fwAD.dual_level(batch=B):
            fwAD.unpack_dual(f(fwAD.make_dual(x, pf.ones(B, n)))).tangent

    assert peak(batched) <= B * peak(one)


# -- found by the fuzzer's vector modes (tests/fuzz/vector.py) ---------------------------------------


def test_setitem_and_copy_into_a_batched_view_broadcast_a_lower_rank_source():
    """copy_ broadcasts its source into the target's logical shape: a batched source of lower rank
    got no padding (setitem of a (1,) value into a (1, 1) window raised)."""
    X = T(arr(2, 3, 3))

    def f(x):
        v = x.clone()
        v[2:3, 2:3] = pf.ones(1)  # unbatched source
        v[0] = x[1, :1]  # batched source, lower rank
        v[1:, :2].copy_(x[0, :2] * 2)
        return v

    close(vmap(f)(X), pf.stack([f(X[b]) for b in range(2)]))


def test_matmul_rule_with_an_empty_dim():
    """The batch-as-rows matmul reshaped to (-1, 0), which is ambiguous for an empty operand."""
    W = T(arr(0, 3))
    X = pf.zeros(2, 3, 0)
    close(vmap(lambda a: a @ W)(X), pf.zeros(2, 3, 3))
    with fwAD.dual_level(batch=1):
        x = fwAD.make_dual(pf.zeros(0, 3), pf.zeros(1, 0, 3)).T
        y = pf.nn.functional.linear(x, x)
        close(fwAD.unpack_dual(y).tangent, pf.zeros(1, 3, 3))


@pytest.mark.parametrize(
    "view",
    [
        lambda v: v.unsqueeze(-1),
        lambda v: v.unsqueeze(0).real,
        lambda v: v.squeeze(0),
        lambda v: v.squeeze(-1),
        lambda v: v.transpose(0, -1),
        lambda v: v.flatten(),
    ],
)
def test_views_of_a_0d_batched_tensor_stay_views(view):
    """A view op on a 0-d logical tensor looped (stacking copies): an in-place op on the view then
    did not reach its base, silently, in vmap and at a batched dual level."""

    def f(x):
        v = x.sigmoid()
        view(v).neg_()
        return v

    X = T(arr(3))
    close(vmap(f)(X), pf.stack([f(X[b]) for b in range(3)]))
    V = T(arr(2))
    with fwAD.dual_level(batch=2):
        got = fwAD.unpack_dual(f(fwAD.make_dual(T(-0.5), V))).tangent
    for b in range(2):
        with fwAD.dual_level():
            close(got[b], fwAD.unpack_dual(f(fwAD.make_dual(T(-0.5), V[b]))).tangent)


def test_broadcast_tensors_after_squeeze_of_a_0d_batched_tensor():
    """squeeze(-1) of a 0-d tensor at a batched level raised (dim shifted out of range)."""

    def f(x):
        a, b = pf.broadcast_tensors(x, x.squeeze(-1))
        return a * b

    X = T(arr(2))
    close(vmap(f)(X), X * X)
    with fwAD.dual_level(batch=1):
        y = f(fwAD.make_dual(T(-0.9), T([0.5])))
        close(fwAD.unpack_dual(y).tangent, T([-0.9]))


def test_batched_cotangents_through_an_inplace_op_on_a_flattened_0d_view():
    """The backward of an in-place op on a view replays the view chain on the batched gradient:
    flatten of a 0-d tensor looped there too, so the batched vjp lost the in-place op's factor."""

    def f(x):
        v = x * x
        v.flatten().sigmoid_()
        return v

    x = T(-1.2 - 0.5j).requires_grad_()
    C = T(arr(3) + 1j * arr(3))
    g = pf.autograd.grad([f(x)], [x], [BatchedTensor(C, new_batch_level())])[0]
    for b in range(3):
        close(g._phys[b], pf.autograd.grad([f(x)], [x], [C[b]])[0])


def test_floor_division_tangent_at_a_batched_level_with_a_tape():
    """div with a rounding mode gave zeros_like(result) as its tangent: unbatched at a batched
    level (when recorded on the tape), so an in-place op on the result then raised."""
    p0, p1 = T(arr(2, 3) + 3).requires_grad_(), T(arr(2, 3) ** 2 + 0.5).requires_grad_()
    V, C = T(arr(2, 2, 3)), T(arr(2, 3))

    def run(B, V):
        with fwAD.dual_level(**({} if B is None else {"batch": B})):
            y = fwAD.make_dual(p0, V) // fwAD.make_dual(p1, V)
            y.div_(fwAD.make_dual(p1, V))
            g = pf.autograd.grad([y], [p0, p1], [C])
            ts = [fwAD.unpack_dual(x).tangent for x in g] + [fwAD.unpack_dual(y).tangent]
            return [None if t is None else t.detach() for t in ts]

    got = run(2, V)
    assert got[-1] is not None and got[-1].shape == (2, 2, 3)
    for b in range(2):
        for a, e in zip(got, run(None, V[b])):
            if a is None or e is None:  # no tangent: zero
                assert (a is None or not a.numpy().any()) and (e is None or not e.numpy().any())
                continue
            close(a[b], e)


def test_vmap_of_a_number_divided_by_x_and_of_repeat():
    """Regression (vector-mode fuzzer): `2.0 / x` and `x.repeat(...)` read the tensor's array
    directly and refused to run under vmap."""
    x = arr(3, 2) + 3.0
    close(vmap(lambda v: 2.0 / v)(T(x)), 2.0 / x)
    close(vmap(lambda v: v.repeat(2))(T(x)), np.tile(x, (1, 2)))


def test_contiguous_of_a_contiguous_example_is_an_alias_as_in_the_loop():
    """Fuzzer finding (vmap mode, seed 3009017042): narrow gives each example a contiguous (1,)
    slice of a non-contiguous batch; contiguous() must alias it, as it does row by row, so that
    a later in-place write shows through (it copied, and vmap disagreed with the loop)."""

    def f(x):
        v = x.log().narrow(0, 2, 1)
        c = v.contiguous()
        v.log_()
        return c

    x = pf.tensor(np.abs(arr(4, 4)) + 1.5)
    rows = pf.stack([f(x[b]) for b in range(4)])
    np.testing.assert_allclose(vmap(f)(x).numpy(), rows.numpy())
    np.testing.assert_allclose(rows.numpy()[:, 0], np.log(np.log(x.numpy()[:, 2])))

    def g(x):  # an example that is not contiguous is still copied
        c = x.t().contiguous()
        x.mul_(2.0)
        return c

    y = pf.tensor(arr(3, 2, 2))
    np.testing.assert_allclose(vmap(g)(y.clone()).numpy(), np.swapaxes(y.numpy(), 1, 2))


def test_batched_tangent_of_a_contiguous_result_op_is_contiguous_per_example():
    """Fuzzer finding (vjvp mode, seed 3013004684): matrix_exp returns contiguous results, so its
    tangents must be contiguous too; a batch of tangents was left in the formula's layout and a
    later .view of the result failed at a vector-mode level while it worked row by row."""
    a, b = pf.tensor(arr(2, 3, 2)), pf.tensor(arr(2, 3, 2))
    va, vb = pf.tensor(arr(2, 2, 3, 2)), pf.tensor(arr(2, 2, 3, 2))

    def f(x, y):
        e = pf.linalg.matrix_exp(x @ y.mT)
        return e.view(3, -1)

    with fwAD.dual_level(batch=2):
        batched = fwAD.unpack_dual(f(fwAD.make_dual(a, va), fwAD.make_dual(b, vb))).tangent
    rows = []
    for k in range(2):
        with fwAD.dual_level():
            rows.append(fwAD.unpack_dual(f(fwAD.make_dual(a, va[k]), fwAD.make_dual(b, vb[k]))).tangent.numpy())
    np.testing.assert_allclose(batched.numpy(), np.stack(rows), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", ["new_zeros", "new_ones", "new_empty", "new_full"])
def test_new_factories_of_a_batched_tensor_are_batched_and_take_a_copy(method):
    # as torch's: one new tensor per batch element, so copy_ of a batched value into it works
    n, c = 3, 5
    x, y = pf.randn(n), pf.randn(n, c)

    def make(x):
        return x.new_full((c,), 7.0) if method == "new_full" else getattr(x, method)((c,))

    def loss(y, x):
        r = make(x)
        r.copy_(y)
        return (r * r).sum()

    assert pf.allclose(pf.func.vmap(pf.func.grad(loss))(y, x), 2 * y)
    fresh = pf.func.vmap(make)(x)
    assert fresh.shape == (n, c) and fresh.dtype == x.dtype
    want = {"new_ones": 1.0, "new_full": 7.0}.get(method, 0.0)
    assert pf.allclose(fresh, pf.full((n, c), want))
    assert pf.func.vmap(pf.func.vmap(lambda a: getattr(a, "new_zeros")(2)))(pf.randn(2, 3)).shape == (2, 3, 2)


def test_vmap_over_jvp_tangents_with_the_primal_closed_over():
    # the standard way to get Jacobian-vector products for many tangents: x is not batched
    x = pf.tensor([0.3, -1.2, 2.0])
    T = pf.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    f = lambda a: a.sin() * a.sum()  # noqa: E731
    out, jv = vmap(lambda t: jvp(f, (x,), (t,)))(T)
    J = jacfwd(f)(x)
    assert pf.allclose(jv, T @ J.T)
    assert pf.allclose(out, f(x).expand(4, 3))
    # the same through make_dual directly, and nested in a second vmap
    with fwAD.dual_level():
        tan = vmap(lambda t: fwAD.unpack_dual(fwAD.make_dual(x, t)).tangent)(T)
    assert pf.allclose(tan, T)
    TT = T.reshape(2, 2, 3)
    jv2 = vmap(vmap(lambda t: jvp(f, (x,), (t,))[1]))(TT)
    assert pf.allclose(jv2, (T @ J.T).reshape(2, 2, 3))
    # reverse over it: the gradient of a batch of jvps with respect to the closed-over x
    g = grad(lambda x: vmap(lambda t: jvp(f, (x,), (t,))[1])(T).sum())(x)
    eps = 1e-6
    fd = [
        (
            vmap(lambda t: jvp(f, (x + eps * e,), (t,))[1])(T).sum()
            - vmap(lambda t: jvp(f, (x - eps * e,), (t,))[1])(T).sum()
        )
        / (2 * eps)
        for e in pf.eye(3)
    ]
    assert pf.allclose(g, pf.stack(fd), atol=1e-6)


def test_as_strided_under_vmap_views_each_elements_own_memory():
    xs = pf.tensor(np.arange(12.0).reshape(3, 4))
    got = vmap(lambda x: x.as_strided((2, 2), (1, 2), 0))(xs)
    want = pf.stack([pf.tensor(xs[i].numpy().copy()).as_strided((2, 2), (1, 2), 0) for i in range(3)])
    assert pf.allclose(got, want)
    with pytest.raises(RuntimeError, match="can access memory outside of `tensor`"):
        vmap(lambda x: x.as_strided((5,), (1,), 0))(xs)
    # gradients per example, as the loop over separate tensors gives them
    g = vmap(grad(lambda x: (x.as_strided((3, 2), (1, 1)) ** 2).sum()))(xs)
    want_g = pf.stack(
        [grad(lambda x: (x.as_strided((3, 2), (1, 1)) ** 2).sum())(pf.tensor(r.numpy().copy())) for r in xs]
    )
    assert pf.allclose(g, want_g)


def test_indexing_composites_take_an_index_computed_from_the_batch():
    # take, take_along_dim and the pools' indices read the index's array, which a batch does not have
    x = pf.tensor(np.random.default_rng(3).standard_normal((3, 4, 5)))
    fns = (
        lambda z: pf.take_along_dim(z, z.argsort(0), 0),
        lambda z: pf.take_along_dim(z, z.reshape(-1).argsort()[:3], None),
        lambda z: pf.take(z, z.reshape(-1).argsort()[:6].reshape(2, 3)),
    )
    for f in fns:
        got = pf.func.vmap(f)(x)
        np.testing.assert_array_equal(got.numpy(), np.stack([f(x[b]).numpy() for b in range(3)]))
        _, tan = pf.func.vmap(lambda z: pf.func.jvp(f, (z,), (z * 2,)))(x)
        np.testing.assert_allclose(tan.numpy(), 2 * got.numpy())


def test_setitem_with_an_index_computed_from_the_batch():
    # x[idx] = v with a batched idx read the index's array; torch.func computes it per element
    x = pf.tensor(np.random.default_rng(4).standard_normal((3, 5)))

    def f(z):
        o = pf.zeros(2, 5) + z
        o[1, z.argsort()[:2]] = z[:2] * 3
        o[0, z.argsort()[3:]] += 1.0
        return o

    got = pf.func.vmap(f)(x)
    np.testing.assert_array_equal(got.numpy(), np.stack([f(x[b]).numpy() for b in range(3)]))
    want = np.stack([pf.func.jacrev(f)(x[b]).numpy() for b in range(3)])
    np.testing.assert_array_equal(pf.func.vmap(pf.func.jacrev(f))(x).numpy(), want)
    np.testing.assert_array_equal(pf.func.vmap(pf.func.jacfwd(f))(x).numpy(), want)

    def into_fresh(z):  # (torch's vmap refuses this write; here the fresh tensor becomes a batch)
        o = pf.zeros(5)
        o[z.argsort()[:2]] = 1.0
        return o

    np.testing.assert_array_equal(
        pf.func.vmap(into_fresh)(x).numpy(), np.stack([into_fresh(x[b]).numpy() for b in range(3)])
    )
    outside = pf.zeros(5)
    with pytest.raises(OpError, match="made outside the vmapped function"):
        pf.func.vmap(lambda z: outside.__setitem__(z.argsort()[:2], 1.0) or z)(x)
    np.testing.assert_array_equal(outside.numpy(), np.zeros(5))
