"""pf.nn.functional against torch.nn.functional: values, vjp and jvp on every op-database
sample (float64), and the rules the samples can't show: dropout's tangent reuses the primal's
mask, embedding's padding row gets no gradient, batch_norm updates running stats like torch,
max pooling indices, and clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
import pushforward.nn.functional as F
from pushforward.errors import OpError
from pushforward.testing.opdb import OPS

from torch_compare import compare, torch

TF = torch.nn.functional
NN = sorted(n for n, info in OPS.items() if info.composite and info.ref is None and hasattr(F, n))


def _torch_fn(name):
    fn = getattr(TF, name)
    if name == "scaled_dot_product_attention":
        return lambda q, k, v, **kw: fn(q, k, v, **kw)
    return fn


def test_every_nn_op_is_compared():
    assert len(NN) >= 55, NN


@pytest.mark.parametrize("name", NN)
def test_matches_torch(name):
    samples = OPS[name].samples(np.float64)
    if name == "pdist":  # torch has no forward-mode formula for pdist (ours passes gradcheck)
        compare(name, _torch_fn(name), samples=samples, forward=False)
        return
    compare(name, _torch_fn(name), samples=samples)


def test_dropout_tangent_uses_the_primal_mask():
    pf.manual_seed(0)
    x = pf.ones(1000)
    t = pf.arange(1000.0)
    with fwAD.dual_level():
        y = F.dropout(fwAD.make_dual(x, t), 0.3)
        p, tan = fwAD.unpack_dual(y)
    keep = p.numpy() != 0
    assert 0.6 < keep.mean() < 0.8
    np.testing.assert_allclose(p.numpy(), keep / 0.7)
    np.testing.assert_allclose(tan.numpy(), np.arange(1000.0) * keep / 0.7)


def test_channel_dropout_zeroes_whole_channels_and_tangents():
    pf.manual_seed(1)
    x = pf.ones(4, 8, 3, 3)
    with fwAD.dual_level():
        y = F.dropout2d(fwAD.make_dual(x, pf.full((4, 8, 3, 3), 2.0)), 0.5)
        p, tan = fwAD.unpack_dual(y)
    per_channel = p.numpy().reshape(32, 9)
    assert all(len(set(row)) == 1 for row in per_channel.tolist())  # one mask entry per channel
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    np.testing.assert_array_equal(tan.numpy(), 2.0 * p.numpy())


def test_dropout_eval_and_inplace():
    x = pf.ones(3)
    assert F.dropout(x, 0.5, training=False) is x
    y = pf.ones(4)
    F.dropout(y, 1.0, inplace=True)
    np.testing.assert_array_equal(y.numpy(), np.zeros(4))


def test_embedding_padding_row_gets_no_gradient():
    w = pf.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    out = F.embedding(pf.tensor([1, 0, 1, 2]), w, padding_idx=1)
    (g,) = pf.autograd.grad(out.sum(), w)
    tw = torch.arange(6.0, dtype=torch.float64).reshape(3, 2).requires_grad_()
    TF.embedding(torch.tensor([1, 0, 1, 2]), tw, padding_idx=1).sum().backward()
    np.testing.assert_array_equal(g.numpy(), tw.grad.numpy())
    np.testing.assert_array_equal(out.detach().numpy(), np.arange(6.0).reshape(3, 2)[[1, 0, 1, 2]])


def test_batch_norm_running_stats_match_torch():
    x = np.random.default_rng(1).standard_normal((5, 3, 2))
    rm, rv = pf.zeros(3), pf.ones(3)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    F.batch_norm(pf.tensor(x), rm, rv, training=True, momentum=0.2)
    TF.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.2)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-12)


def test_max_pool_ties_go_to_the_first_maximum():
    x = pf.tensor([[[1.0, 3.0, 3.0, 0.0]]], requires_grad=True)
    v, i = F.max_pool1d(x, 2, 1, return_indices=True)
    (g,) = pf.autograd.grad(v.sum(), x)
    tx = torch.tensor([[[1.0, 3.0, 3.0, 0.0]]], requires_grad=True)
    tv, ti = TF.max_pool1d(tx, 2, 1, return_indices=True)
    tv.sum().backward()
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    np.testing.assert_array_equal(g.numpy(), tx.grad.numpy())


def test_conv2d_hessian_vector_product_matches_torch():
    """Forward-over-reverse through conv, pooling and a loss: H v against torch's double backward."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 1, 5, 5))
    w = rng.standard_normal((2, 1, 3, 3))
    v = rng.standard_normal(w.shape)
    target = np.array([1, 0])

    def loss_pf(w):
        h = F.max_pool2d(F.conv2d(pf.tensor(x), w, padding=1).tanh(), 2)
        return F.cross_entropy(h.flatten(1)[:, :3], pf.tensor(target))

    def loss_t(w):
        h = TF.max_pool2d(TF.conv2d(torch.tensor(x), w, padding=1).tanh(), 2)
        return TF.cross_entropy(h.flatten(1)[:, :3], torch.tensor(target))

    _, hv = pf.autograd.functional.hvp(loss_pf, pf.tensor(w), pf.tensor(v))
    _, thv = torch.autograd.functional.hvp(loss_t, torch.tensor(w), torch.tensor(v))
    np.testing.assert_allclose(hv.numpy(), thv.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: F.conv2d(pf.ones(1, 3, 4, 4), pf.ones(2, 2, 2, 2)),
            r"conv2d: input of shape \(1, 3, 4, 4\).*\(2, 2, 2, 2\)",
        ),
        (lambda: F.conv1d(pf.ones(4), pf.ones(1, 1, 2)), r"conv1d: expected a 2-D \(unbatched\) or 3-D.*\(4,\)"),
        (lambda: F.conv2d(pf.ones(1, 1, 4, 4), pf.ones(1, 1, 2, 2), stride=2, padding="same"), r"padding='same'"),
        (lambda: F.max_pool2d(pf.ones(1, 1, 4, 4), 2, padding=2), r"max_pool2d: pad should be at most half"),
        (lambda: F.pad(pf.ones(1, 3), (3, 0), mode="reflect"), r"pad: padding size should be less.*\(3, 0\)"),
        (
            lambda: F.interpolate(pf.ones(1, 1, 3), size=4, mode="bilinear"),
            r"interpolate: mode 'bilinear' expects a 4-D",
        ),
        (lambda: F.cross_entropy(pf.ones(2, 3), pf.tensor([0, 5])), r"cross_entropy.*Target 5 is out of bounds for 3"),
        (lambda: F.layer_norm(pf.ones(2, 3), (2,)), r"layer_norm: normalized_shape \(2,\).*\(2, 3\)"),
        (lambda: F.group_norm(pf.ones(2, 3, 2), 2), r"group_norm: Expected number of channels in input \(3\)"),
        (lambda: F.glu(pf.ones(3)), r"glu: Halving dimension must be even"),
        (lambda: F.binary_cross_entropy(pf.tensor([1.5]), pf.tensor([1.0])), r"between 0 and 1"),
        (lambda: F.mse_loss(pf.ones(2), pf.ones(3)), r"mse_loss: input of shape \(2,\) and target of shape \(3,\)"),
        (lambda: F.one_hot(pf.tensor([0, 3]), 2), r"one_hot: Class values must be smaller than num_classes \(2\)"),
        (lambda: F.dropout(pf.ones(2), 1.5), r"dropout probability has to be between 0 and 1, but got 1.5"),
    ],
)
def test_bad_input_errors(call, match):
    with pytest.raises(OpError, match=match):
        call()


@pytest.mark.parametrize("name", NN)
def test_float32_stays_float32(name):
    """No silent upcast: float32 samples give float32 results (constants are made in the input's dtype)."""
    for s in OPS[name].samples(np.float32):
        out = OPS[name](s)
        for o in out if isinstance(out, (tuple, list)) else [out]:
            if o.dtype.kind == "f":
                assert o.dtype == np.float32, f"{name} {s!r}: {o.dtype}"


def test_nn_namespace():
    assert pf.nn.functional is F
    assert F.relu is pf.relu and F.softmax is pf.softmax
    assert not hasattr(pf, "mse_loss")  # nn.functional functions stay out of the top level, as in torch


def test_pixel_shuffle_returns_new_memory():
    """Regression: a 1x1 pixel_shuffle was a view of its input, so a later in-place write into the
    input changed the output and doubled its gradient (torch returns new memory)."""
    x = pf.ones(8, 1, 1, requires_grad=True)
    xc = x.clone()
    y = F.pixel_shuffle(xc, 2)
    assert not np.shares_memory(y._data, xc._data)
    xc.mul_(3.0)
    (g,) = pf.autograd.grad(y.sum(), x)
    np.testing.assert_array_equal(y.detach().numpy(), np.ones((2, 2, 2)))
    np.testing.assert_array_equal(g.numpy(), np.ones((8, 1, 1)))


def test_group_norm_of_a_non_contiguous_input_keeps_its_own_copy():
    """torch normalises input.contiguous(): an in-place write into a non-contiguous input after
    group_norm leaves backward computable (fuzzer: irfft over dim 0, group_norm, sin_)."""
    x = pf.tensor(np.random.default_rng(0).standard_normal((3, 2, 2)), requires_grad=True)
    v = (x * 1.0).permute(2, 1, 0)
    y = F.group_norm(v, 1)
    v.sin_()
    (g,) = pf.autograd.grad((y * y).sum(), x)
    assert g.shape == (3, 2, 2)


def test_normalisation_layers_return_contiguous_results_as_torch():
    """torch's layer/rms/batch/instance/group norms return contiguous results for any input layout
    (fuzzer: rms_norm of a transposed input, then .view(-1)); instance_norm normalises
    input.contiguous(), so an in-place write into a non-contiguous input afterwards is no error."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(5).standard_normal((3, 2, 4))
    calls = [
        lambda L, x: L.nn.functional.layer_norm(x, (3,)),
        lambda L, x: L.nn.functional.rms_norm(x, (3,)),
        lambda L, x: L.nn.functional.batch_norm(x, None, None, training=True),
        lambda L, x: L.nn.functional.instance_norm(x),
        lambda L, x: L.nn.functional.group_norm(x, 1),
    ]
    for f in calls:
        got = f(pf, pf.tensor(a).permute(2, 1, 0))
        want = f(torch, torch.tensor(a).permute(2, 1, 0))
        assert got.stride() == want.stride() and np.allclose(got.numpy(), want.numpy())
    x = pf.tensor(a + 1j, requires_grad=True)
    v = (x * 1.0).real
    y = F.instance_norm(v)
    v[1:2] += -0.9
    (g,) = pf.autograd.grad((y * y).sum(), x)
    assert g.shape == (3, 2, 4)


def test_arguments_the_losses_do_not_differentiate_are_refused_when_differentiated():
    # torch raises "not differentiable with respect to argument ..."; a silent zero derivative would be
    # a wrong number (found by the fuzzer's transforms mode: finite differences of soft_margin_loss)
    x = pf.tensor([[0.2, -0.5, 1.0], [0.3, 0.1, -0.4]])
    y = pf.tensor([0, 2])
    w = pf.tensor([0.5, 1.0, 2.0])
    calls = {
        "soft_margin_loss": lambda a: F.soft_margin_loss(x, a[0]),
        "nll_loss": lambda a: F.nll_loss(x, y, weight=a[0]),
        "cross_entropy": lambda a: F.cross_entropy(x, y, weight=a[0]),
        "binary_cross_entropy": lambda a: F.binary_cross_entropy(x.sigmoid(), x.sigmoid() * 0.5, weight=a[1]),
        "binary_cross_entropy_with_logits": lambda a: F.binary_cross_entropy_with_logits(x, x * 0.5, pos_weight=a[0]),
    }
    for name, call in calls.items():
        args = (x * 0.5 if name == "soft_margin_loss" else w, pf.ones(2, 3))
        call(args)  # constants are fine
        with pytest.raises(pf.errors.OpError, match="not differentiable with respect to argument"):
            pf.func.grad(lambda a: call((a, a)).sum())(args[0] if name != "binary_cross_entropy" else args[1])
        # forward mode differentiates it (torch's forward mode drops the tangent: a wrong zero)
        a0 = args[0] if name != "binary_cross_entropy" else args[1]
        _, tan = pf.func.jvp(lambda a: call((a, a)), (a0,), (pf.ones_like(a0),))
        h = 1e-6
        fd = (call((a0 + h, a0 + h)) - call((a0 - h, a0 - h))) / (2 * h)
        np.testing.assert_allclose(tan.numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)
        _, (d1,) = pf.func.jet(lambda a: call((a, a)), (a0,), ([pf.ones_like(a0)],))
        np.testing.assert_allclose(d1.numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)
