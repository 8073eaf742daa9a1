"""Regression tests for the failure classes the fuzzer's breadth ops (linalg, fft, special, nn, sort, scatter) found."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pushforward as pf  # noqa: E402

from fuzz.table import GROUPS, OPS, select  # noqa: E402


def _jvp_bwd(f, x, t):
    """autograd.functional.jvp(fw_mode=False): the double-backward trick (a zero cotangent)."""
    return pf.autograd.functional.jvp(f, (pf.tensor(x),), (pf.tensor(t),), fw_mode=False)[1].numpy()


def _torch_jvp(f, x, t):
    return torch.func.jvp(f, (torch.tensor(x),), (torch.tensor(t),))[1].numpy()


def test_sinc_complex_gradient_is_conjugated():
    # the backward of a holomorphic function is grad * conj(f'), as for sin, exp, ...
    z = np.array([0.7 - 0.3j, 1.2 + 0.5j, -0.8 + 1.1j])
    x = pf.tensor(z).requires_grad_()
    (g,) = pf.autograd.grad([pf.sinc(x)], [x], [pf.ones(3, dtype=pf.complex128)])
    xt = torch.tensor(z, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.sinc(xt), xt, torch.ones(3, dtype=torch.complex128))
    np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-10)


@pytest.mark.parametrize("which", ["eigh", "svd_u", "svd_fun"])
def test_decomposition_backward_is_differentiable_in_a_zero_cotangent(which):
    # the vector terms of eigh/svd backward were skipped when the vectors' cotangent was zero,
    # even when that zero cotangent is differentiated (double-backward jvp): the jvp came out 0
    if which == "eigh":
        x = np.array([[0.5, 0.5, -0.7], [0.4, -0.8, 1.3], [-0.8, 1.2, -1.4]])

        def f(L, a):
            v = L.linalg.eigh(a + a.mT)[1]
            return v * v
    elif which == "svd_u":
        x = np.array([[1.1, -1.2, 0.9], [-1.5, -1.5, -0.7]])

        def f(L, a):
            u = L.linalg.svd(a, full_matrices=False)[0]
            return u * u
    else:
        x = np.array([[[-0.3, 1.0], [0.8, -1.2], [0.9, -1.5]], [[-0.3, 1.2], [1.2, 1.5], [0.4, -0.5]]])

        def f(L, a):
            u, s, vh = L.linalg.svd(a, full_matrices=False)
            return (u * s.sin().unsqueeze(-2)) @ vh

    t = np.ones_like(x)
    got = _jvp_bwd(lambda a: f(pf, a), x, t)
    np.testing.assert_allclose(got, _torch_jvp(lambda a: f(torch, a), x, t), rtol=1e-7, atol=1e-9)
    assert np.abs(got).max() > 1e-3


def test_unflatten_of_an_empty_tensor_infers_minus_one_from_the_dim():
    x = pf.zeros(0, 3)
    assert x.unflatten(-1, (1, -1)).shape == (0, 1, 3)
    assert x.unflatten(1, (-1, 3)).shape == (0, 1, 3)


def test_fuzz_groups_select_ops():
    assert {"core", "linalg", "fft", "special", "nn", "sort", "scatter", "misc"} <= set(GROUPS)
    lin = select("linalg")
    assert "inv" in lin and "sin" not in lin
    assert select("sin,fft") == {"sin"} | {op.name for op in OPS if op.group == "fft"}
    with pytest.raises(SystemExit):
        select("nosuchgroup")


def test_inner_and_tensordot_of_empty_operands():
    # reshape(-1, 0) cannot infer -1 for an empty tensor: the contraction uses explicit sizes
    v = pf.zeros(0)
    assert float(pf.inner(v, v)) == 0.0
    assert pf.tensordot(pf.zeros(2, 0), pf.zeros(0, 3), dims=1).shape == (2, 3)


def test_decomposition_jvps_of_an_empty_batch():
    import pushforward.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        a = fwAD.make_dual(pf.zeros(0, 3, 3, dtype=pf.complex128), pf.zeros(0, 3, 3, dtype=pf.complex128))
        h = a + a.mH
        for out in (pf.linalg.eigh(h)[1], pf.linalg.qr(a)[0], pf.linalg.svd(a)[0]):
            assert fwAD.unpack_dual(out).tangent.shape == (0, 3, 3)


def test_hvp_is_not_judged_against_a_wrong_torch_gradient():
    # torch 2.13's gradient of scatter_reduce('prod', include_self=False) is wrong (finite
    # differences side with pushforward), so its finite-difference hvp reference is no reference
    from fuzz.check import check
    from fuzz.program import Program, Stmt

    x = np.array([[0.7, 1.3], [0.3, 0.5], [-0.4, 1.5]])
    prog = Program(
        [x],
        [Stmt("scatter_reduce", [0, 0], {"dim": 0, "idx": "[[1, 2]]", "red": "prod", "inc": False}, [1])],
        tangents=[np.ones_like(x)],
        outputs=[1],
        cotangents={1: np.ones_like(x)},
    )
    fs = check(prog, modes=("vjp", "hvp"))
    assert any(f.mode == "vjp" and f.verdict == "torch" for f in fs), fs
    assert not [f for f in fs if f.verdict == "pf"], fs


def test_sdpa_with_an_empty_embedding_dim_attends_uniformly():
    F = pf.nn.functional
    out = F.scaled_dot_product_attention(
        pf.zeros(2, 0), pf.zeros(3, 0), pf.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    )
    np.testing.assert_allclose(out.numpy(), [[3.0, 4.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.repeat(1, 1),
        lambda x: x.repeat(2, 1)[:1].repeat(1, 1),
        lambda x: pf.tile(x, (1,)),
        lambda x: x[:, :1].repeat(1, 3),
    ],
)
def test_repeat_and_tile_return_new_memory(make):
    x = pf.tensor([[1.0, 2.0, 3.0]])
    y = make(x)
    y.add_(1.0)  # was: a write through a view of x, or refused (overlapping memory)
    np.testing.assert_allclose(x.numpy(), [[1.0, 2.0, 3.0]])


def test_ndtr_backward_survives_an_inplace_op_on_its_input():
    # torch's ndtr is a composite (0.5 erfc(-x / sqrt 2)) whose tape keeps a scaled copy, not x
    x = pf.tensor(-0.6).requires_grad_()
    v = x + -0.79
    y = pf.special.ndtr(v)
    v.sigmoid_()
    (g,) = pf.autograd.grad([y], [x])
    assert float(g) == pytest.approx(np.exp(-0.5 * 1.39**2) / np.sqrt(2 * np.pi), rel=1e-12)


def test_logsumexp_of_an_empty_expanded_tensor():
    x = pf.zeros(0, 3).transpose(0, 1).expand(1, 3, 0)
    out = x.logsumexp((0, 1))
    ref = torch.zeros(0, 3, dtype=torch.float64).transpose(0, 1).expand(1, 3, 0).logsumexp((0, 1))
    assert out.shape == tuple(ref.shape)
    y = pf.zeros(2, 0).logsumexp(1)
    np.testing.assert_array_equal(y.numpy(), [-np.inf, -np.inf])
