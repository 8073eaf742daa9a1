"""Activations, normalization layers, losses and attention for pf.nn.functional.

Each is a composition of differentiable ops (so both derivative modes and higher orders come
for free); branches that could overflow in the unselected side of a `where` are clamped first,
so no inf * 0 reaches a gradient. Reductions follow torch ('none', 'mean', 'sum', and
'batchmean' for kl_div; the legacy size_average/reduce arguments are mapped as torch does).

>>> import pushforward as pf
>>> import pushforward.nn.functional as F
>>> float(F.mse_loss(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 4.0])))
2.0
"""

from __future__ import annotations

import math

import numpy as np

from .util import const as _t
from .util import not_differentiable
from .util import ops as _ops
from ...errors import OpError
from ...engine.grad_mode import no_grad
from ...core.batched import values_of
from ...dispatch.batching import loop_batched
from ...core.creation import ones, rand

__all__ = [
    "c_inplace",
    "c_linear",
    "c_bilinear",
    "c_elu",
    "c_celu",
    "c_gelu",
    "c_softplus",
    "c_leaky_relu",
    "c_glu",
    "c_prelu",
    "c_hardshrink",
    "c_softshrink",
    "c_layer_norm",
    "c_rms_norm",
    "c_group_norm",
    "c_batch_norm",
    "c_instance_norm",
    "c_dropout",
    "c_embedding",
    "c_one_hot",
    "c_normalize",
    "c_cosine_similarity",
    "c_pairwise_distance",
    "c_reduce",
    "c_pointwise_loss",
    "c_nll_loss",
    "c_cross_entropy",
    "c_bce",
    "c_bce_with_logits",
    "c_kl_div",
    "c_sdpa",
    "SELU_ALPHA",
    "SELU_SCALE",
    "c_soft_margin_loss",
    "c_margin_ranking_loss",
    "c_hinge_embedding_loss",
    "c_poisson_nll_loss",
    "c_gaussian_nll_loss",
    "c_cosine_embedding_loss",
    "c_triplet_margin_loss",
    "c_multilabel_soft_margin_loss",
    "c_pdist",
    "c_channel_dropout",
    "c_channel_shuffle",
]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def c_inplace(input, out, inplace):
    """torch's `inplace=True`: the result written into input (values, history and tangents)."""
    return input.copy_(out) if inplace else out


# -- linear layers ---------------------------------------------------------------------------------------


def c_linear(input, weight, bias=None):
    if weight.ndim not in (1, 2) or input.shape[-1:] != weight.shape[-1:]:
        raise OpError(
            f"linear: input of shape {tuple(input.shape)} and weight of shape {tuple(weight.shape)} "
            "don't fit (the last dims must agree)"
        )
    out = input @ (weight.mT if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def c_bilinear(input1, input2, weight, bias=None):
    if (
        weight.ndim != 3
        or input1.shape[-1] != weight.shape[1]
        or input2.shape[-1] != weight.shape[2]
        or input1.shape[:-1] != input2.shape[:-1]
    ):
        raise OpError(
            f"bilinear: inputs {tuple(input1.shape)}, {tuple(input2.shape)} and weight "
            f"{tuple(weight.shape)} don't fit (weight is (out, in1, in2))"
        )
    lead = tuple(input1.shape[:-1])
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    # (a W_o) . b for every output o, by matmul and mul: each keeps only what its gradients read
    out = ((a.unsqueeze(0) @ weight) * b.unsqueeze(0)).sum(-1).mT.reshape(lead + (weight.shape[0],))
    return out if bias is None else out + bias


# -- activations ----------------------------------------------------------------------------------------


def c_elu(input, alpha=1.0, scale=1.0, input_scale=1.0):
    o = _ops()
    neg = (input.clamp(max=0.0) * input_scale).expm1() * alpha  # clamped: no overflow on the unused side
    out = o.where(input > 0, input, neg)
    return out if scale == 1.0 else out * scale


def c_celu(input, alpha=1.0):
    if alpha == 0:
        raise OpError("celu: ZeroDivisionError, alpha cannot be 0")
    return c_elu(input, alpha, 1.0, 1.0 / alpha)


def c_gelu(input, approximate="none"):
    if approximate == "none":
        return 0.5 * input * (1 + (input * (1 / math.sqrt(2))).erf())
    if approximate == "tanh":
        return 0.5 * input * (1 + (math.sqrt(2 / math.pi) * (input + 0.044715 * input * input * input)).tanh())
    raise OpError(f"gelu: approximate argument must be either none or tanh, got {approximate!r}")


def c_softplus(input, beta=1.0, threshold=20.0):
    o = _ops()
    bx = input * beta
    soft = bx.clamp(max=threshold).exp().log1p() / beta
    return o.where(bx > threshold, input, soft)


def c_leaky_relu(input, negative_slope=0.01):
    return _ops().where(input > 0, input, input * negative_slope)


def c_glu(input, dim=-1):
    if input.ndim == 0 or input.shape[dim] % 2:
        raise OpError(
            f"glu: Halving dimension must be even, but dimension {dim} is size "
            f"{input.shape[dim] if input.ndim else 0} (shape {tuple(input.shape)})"
        )
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def c_prelu(input, weight):
    o = _ops()
    if weight.numel() != 1:
        c = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim == 1 else 1)
        if weight.ndim != 1 or weight.shape[0] != c:
            raise OpError(
                f"prelu: mismatch of parameter numbers and input channel size: weight {tuple(weight.shape)}, "
                f"input {tuple(input.shape)}"
            )
        if input.ndim >= 2:
            weight = weight.reshape((c,) + (1,) * (input.ndim - 2))
    elif weight.ndim:
        weight = weight.reshape(())
    return o.where(input > 0, input, weight * input)


def c_hardshrink(input, lambd=0.5):
    return _ops().where(input.abs() > lambd, input, 0.0)


def c_softshrink(input, lambd=0.5):
    o = _ops()
    return o.where(input > lambd, input - lambd, o.where(input < -lambd, input + lambd, 0.0))


# -- normalization --------------------------------------------------------------------------------------


def _affine(x, weight, bias, shape):
    if weight is not None:
        x = x * weight.reshape(shape)
    if bias is not None:
        x = x + bias.reshape(shape)
    return x


def c_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(ns) :]) != ns or len(ns) > input.ndim:
        raise OpError(
            f"layer_norm: normalized_shape {ns} does not match the trailing dims of the input {tuple(input.shape)}"
        )
    dims = tuple(range(input.ndim - len(ns), input.ndim))
    mu = input.mean(dims, keepdim=True)
    var = input.var(dims, correction=0, keepdim=True)
    # torch's normalisation layers return contiguous results whatever the input's layout (a later
    # .view works as in torch; fuzzer: rms_norm of a transposed input, then .view(-1))
    return _affine((input - mu) * (var + eps).rsqrt(), weight, bias, ns).contiguous()


def c_rms_norm(input, normalized_shape, weight=None, eps=None):
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(ns) :]) != ns or len(ns) > input.ndim:
        raise OpError(
            f"rms_norm: normalized_shape {ns} does not match the trailing dims of the input {tuple(input.shape)}"
        )
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    dims = tuple(range(input.ndim - len(ns), input.ndim))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return (out if weight is None else out * weight).contiguous()  # as layer_norm


def _channel_shape(x):
    return (x.shape[1],) + (1,) * (x.ndim - 2)


def c_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise OpError(
            f"group_norm: Expected number of channels in input ({input.shape[1] if input.ndim > 1 else 0}) "
            f"to be divisible by num_groups ({num_groups}), input shape {tuple(input.shape)}"
        )
    n = input.shape[0]
    # torch's group_norm normalises input.contiguous(): a non-contiguous input is copied first, so
    # a later in-place write into it leaves the backward computable (fuzzer: irfft over dim 0,
    # laid out as torch's, then group_norm, then sin_ on the irfft result)
    x = input.contiguous().reshape(n, num_groups, -1)
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, correction=0, keepdim=True)
    x = ((x - mu) * (var + eps).rsqrt()).reshape(input.shape)
    return _affine(x, weight, bias, _channel_shape(input))


def _update_running(running, batch_value, momentum):
    if running is None:
        return
    with no_grad():
        new = running.detach() * (1 - momentum) + batch_value.detach() * momentum
        running._data[...] = np.asarray(new._data, dtype=running._data.dtype)


def c_batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if input.ndim < 2:
        raise OpError(f"batch_norm: expected an input with at least 2 dims (N, C, ...), got shape {tuple(input.shape)}")
    shape = _channel_shape(input)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise OpError(
                f"batch_norm: Expected more than 1 value per channel when training, got input size {tuple(input.shape)}"
            )
        mu = input.mean(dims, keepdim=True)
        var = input.var(dims, correction=0, keepdim=True)
        _update_running(running_mean, mu.reshape(-1), momentum)
        _update_running(running_var, var.reshape(-1) * (n / (n - 1)), momentum)  # running var is unbiased
    else:
        if running_mean is None or running_var is None:
            raise OpError("batch_norm: running_mean and running_var must be given when training=False")
        mu = running_mean.detach().reshape(shape)
        var = running_var.detach().reshape(shape)
    return _affine((input - mu) * (var + eps).rsqrt(), weight, bias, shape).contiguous()  # as layer_norm


def c_instance_norm(
    input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, eps=1e-5
):
    if input.ndim < 3:
        raise OpError(f"instance_norm: expected an input (N, C, *spatial), got shape {tuple(input.shape)}")
    shape = _channel_shape(input)
    # torch's instance_norm normalises input.contiguous() (a copy of a non-contiguous input, which
    # is what its backward keeps; fuzzer: instance_norm of a .real view, then += into it)
    input = input.contiguous()
    if not use_input_stats:
        return c_batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = tuple(range(2, input.ndim))
    mu = input.mean(dims, keepdim=True)
    var = input.var(dims, correction=0, keepdim=True)
    n = math.prod(input.shape[2:])
    _update_running(running_mean, mu.mean(0).reshape(-1), momentum)
    if n > 1:
        _update_running(running_var, var.mean(0).reshape(-1) * (n / (n - 1)), momentum)
    return _affine((input - mu) * (var + eps).rsqrt(), weight, bias, shape)


# -- dropout, embedding, one_hot, distances ---------------------------------------------------------------


def c_dropout(input, p=0.5, training=True, inplace=False):
    if not 0 <= p <= 1:
        raise OpError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        out = input * 0.0
    else:
        # the mask is a constant: the tangent (and gradient) is masked and scaled exactly like the primal
        keep = rand(*input.shape, dtype=input.dtype) >= p
        out = input * keep * (1.0 / (1 - p))
    return input.copy_(out) if inplace else out


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    o = _ops()
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not implemented")
    idx = np.asarray(input._data if hasattr(input, "_data") else input)
    if idx.dtype.kind not in "iu":
        raise OpError(f"embedding: Expected tensor for argument #1 'indices' to have an integer dtype, got {idx.dtype}")
    n = weight.shape[0]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise OpError(f"embedding: index out of range in self (indices {idx.min()}..{idx.max()} for {n} rows)")
    rows = o.index_select(weight, 0, _t(idx.reshape(-1))).reshape(idx.shape + tuple(weight.shape[1:]))
    if padding_idx is None:
        return rows
    pad = padding_idx % n
    mask = _t((idx == pad)[(...,) + (None,) * (weight.ndim - 1)])
    return o.where(mask, rows.detach(), rows)  # the padding row gets no gradient, as torch


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_one_hot(tensor, num_classes=-1):
    idx = np.asarray(tensor._data if hasattr(tensor, "_data") else tensor)
    if idx.dtype.kind not in "iu":
        raise OpError(f"one_hot is only applicable to index tensor, got dtype {idx.dtype}")
    if idx.size and idx.min() < 0:
        raise OpError("one_hot: Class values must be non-negative")
    k = int(idx.max()) + 1 if num_classes == -1 and idx.size else num_classes
    if idx.size and idx.max() >= k:
        raise OpError(f"one_hot: Class values must be smaller than num_classes ({k}), got {int(idx.max())}")
    return _t((idx[..., None] == np.arange(k)).astype(np.int64))


def c_normalize(input, p=2.0, dim=1, eps=1e-12):
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


def c_cosine_similarity(x1, x2, dim=1, eps=1e-8):
    o = _ops()
    a, b = o.broadcast_tensors(x1, x2)
    na = a.norm(2, dim, keepdim=True).clamp(min=eps)
    nb = b.norm(2, dim, keepdim=True).clamp(min=eps)
    return ((a / na) * (b / nb)).sum(dim)


def c_pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = x1 - x2 + eps
    return d.norm(p, -1, keepdim=keepdim) if d.ndim else d.abs()


# -- losses ---------------------------------------------------------------------------------------------


def c_reduce(loss, reduction, size_average=None, reduce=None):
    """Apply a reduction; the legacy size_average/reduce arguments override it, as in torch."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise OpError(f"{reduction!r} is not a valid value for reduction (none, mean, sum)")


def c_pointwise_loss(kind, input, target, reduction="mean", size_average=None, reduce=None, beta=1.0, weight=None):
    o = _ops()
    if tuple(input.shape) != tuple(getattr(target, "shape", ())):
        try:
            np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
        except ValueError:
            raise OpError(
                f"{kind}: input of shape {tuple(input.shape)} and target of shape {tuple(target.shape)} "
                "can't be broadcast together"
            ) from None
    d = input - target
    if kind == "mse_loss":
        loss = d * d
    elif kind == "l1_loss":
        loss = d.abs()
    elif kind == "smooth_l1_loss":
        if beta < 0:
            raise OpError(f"smooth_l1_loss does not support negative values for beta, got {beta}")
        a = d.abs()
        loss = a if beta == 0 else o.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)
    elif kind == "huber_loss":
        if beta <= 0:
            raise OpError(f"huber_loss does not support non-positive values for delta, got {beta}")
        a = d.abs()
        loss = o.where(a < beta, 0.5 * d * d, beta * (a - 0.5 * beta))
    else:
        raise OpError(f"unknown loss {kind!r}")
    if weight is not None:
        loss = loss * weight
        if kind in ("mse_loss", "l1_loss") and reduction == "mean" and size_average is None and reduce is None:
            return loss.sum() / weight.expand(loss.shape).sum()  # torch's weighted mean for these two
    return c_reduce(loss, reduction, size_average, reduce)


def _class_dim(input):
    return 0 if input.ndim == 1 else 1


def _targets(name, input, target, ignore_index):
    tgt = np.asarray(target._data)
    if tgt.dtype.kind not in "iu":
        raise OpError(f"{name}: expected class-index targets of an integer dtype, got {tgt.dtype}")
    c = input.shape[_class_dim(input)]
    want = tuple(input.shape[:1]) + tuple(input.shape[2:]) if input.ndim > 1 else ()
    if tgt.shape != want:
        raise OpError(
            f"{name}: expected target of shape {want} for input of shape {tuple(input.shape)}, got {tgt.shape}"
        )
    ignored = tgt == ignore_index
    bad = (~ignored) & ((tgt < 0) | (tgt >= c))
    if bad.any():
        raise OpError(f"{name}: Target {int(tgt[bad].reshape(-1)[0])} is out of bounds for {c} classes")
    return np.where(ignored, 0, tgt), ignored


@loop_batched  # (reads its inputs' arrays: once per batch element under vmap)
def c_nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", _name="nll_loss"
):
    if input.ndim < 1:
        raise OpError(f"{_name}: input must have at least 1 dim (classes)")
    safe, ignored = _targets(_name, input, target, ignore_index)
    cd = _class_dim(input)
    picked = input.gather(cd, _t(np.expand_dims(safe, cd))).squeeze(cd)
    w = np.where(ignored, 0.0, 1.0).astype(input.dtype)
    wt = _t(w)
    if weight is not None:
        wt = not_differentiable(weight, _name, "weight").index_select(0, _t(safe.reshape(-1))).reshape(safe.shape) * wt
    loss = -picked * wt
    if size_average is not None or reduce is not None or reduction != "mean":
        return c_reduce(loss, reduction, size_average, reduce)
    return loss.sum() / wt.sum()


def c_cross_entropy(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0
):
    o = _ops()
    if not 0.0 <= label_smoothing <= 1.0:
        raise OpError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cd = _class_dim(input)
    c = input.shape[cd]
    logp = o.log_softmax(input, cd)
    weight = None if weight is None else not_differentiable(weight, "cross_entropy", "weight")
    wshape = (c,) + (1,) * (input.ndim - cd - 1)
    if target.dtype.kind == "f":  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise OpError(
                f"cross_entropy: probability targets must have the input's shape {tuple(input.shape)}, got "
                f"{tuple(target.shape)}"
            )
        t = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing else target
        lw = logp * weight.reshape(wshape) if weight is not None else logp
        loss = -(lw * t).sum(cd)
        return c_reduce(loss, reduction, size_average, reduce)
    nll = c_nll_loss(logp, target, weight, size_average, ignore_index, reduce, reduction, "cross_entropy")
    if not label_smoothing:
        return nll
    safe, ignored = _targets("cross_entropy", input, target, ignore_index)
    lw = logp * weight.reshape(wshape) if weight is not None else logp
    smooth = -lw.sum(cd) * _t(np.where(ignored, 0.0, 1.0).astype(input.dtype))
    if size_average is not None or reduce is not None:
        raise OpError("cross_entropy: label_smoothing with the legacy size_average/reduce arguments is not supported")
    if reduction == "mean":
        if weight is not None:
            denom = weight.detach().index_select(0, _t(safe[~ignored].reshape(-1))).sum()
        else:
            denom = float((~ignored).sum())
        smooth = smooth.sum() / denom
    else:
        smooth = c_reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def c_bce(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if tuple(input.shape) != tuple(target.shape):
        raise OpError(
            f"binary_cross_entropy: Using a target size ({tuple(target.shape)}) that is different to the "
            f"input size ({tuple(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    data = np.asarray(values_of(input))  # (every batch element's, under vmap: a check over all values)
    if data.size and ((data < 0) | (data > 1)).any():
        raise OpError("binary_cross_entropy: all elements of input should be between 0 and 1")
    # logs clamped at -100, as torch, so a 0 or 1 input gives a finite loss
    loss = -(target * input.log().clamp(min=-100.0) + (1 - target) * (1 - input).log().clamp(min=-100.0))
    if weight is not None:
        loss = loss * not_differentiable(weight, "binary_cross_entropy", "weight")
    return c_reduce(loss, reduction, size_average, reduce)


def c_bce_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
    o = _ops()
    pos_weight = (
        None if pos_weight is None else not_differentiable(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
    )
    if tuple(input.shape) != tuple(target.shape):
        raise OpError(
            f"binary_cross_entropy_with_logits: Target size ({tuple(target.shape)}) must be the same as "
            f"input size ({tuple(input.shape)})"
        )
    softplus_neg = o.logaddexp(o.zeros_like(input), -input)  # -log(sigmoid(x)), smooth and stable
    if pos_weight is not None:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return c_reduce(loss, reduction, size_average, reduce)


def c_kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    o = _ops()
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = o.xlogy(target, target) - target * input
    if reduction == "batchmean" and size_average is None and reduce is None:
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return c_reduce(loss, reduction, size_average, reduce)


# -- attention -----------------------------------------------------------------------------------------


def c_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    o = _ops()
    if (
        query.ndim < 2
        or key.ndim < 2
        or value.ndim < 2
        or query.shape[-1] != key.shape[-1]
        or key.shape[-2] != value.shape[-2]
    ):
        raise OpError(
            f"scaled_dot_product_attention: query {tuple(query.shape)}, key {tuple(key.shape)} and value "
            f"{tuple(value.shape)} don't fit (..., L, E), (..., S, E), (..., S, Ev)"
        )
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, -3)
        value = value.repeat_interleave(rep, -3)
    L, S = query.shape[-2], key.shape[-2]
    # (an empty embedding dim: the scores are empty sums, 0, whatever the scale; torch attends uniformly)
    s = (1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0) if scale is None else scale
    # q and k are each scaled by sqrt|s| before the product (torch's math path): the product then
    # keeps these scaled copies for its backward, not query itself, so a later in-place write into
    # query is no error (as in torch)
    r = math.sqrt(abs(s))
    att = (query * (-r if s < 0 else r)) @ (key.mT * r)
    if is_causal:
        if attn_mask is not None:
            raise OpError("scaled_dot_product_attention: attn_mask and is_causal can't both be set")
        attn_mask = ones(L, S, dtype=bool).tril()
    if attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            att = att.masked_fill(o.logical_not(attn_mask), -math.inf)
        else:
            att = att + attn_mask
    att = o.softmax(att, -1)
    if dropout_p > 0:
        att = c_dropout(att, dropout_p, True)
    return att @ value


# -- more losses and distances ------------------------------------------------------------------------


def c_soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    o = _ops()
    target = not_differentiable(target, "soft_margin_loss", "target")
    return c_reduce(o.logaddexp(o.zeros_like(input), -target * input), reduction, size_average, reduce)


def c_margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    return c_reduce((-target * (input1 - input2) + margin).clamp(min=0.0), reduction, size_average, reduce)


def c_hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    o = _ops()
    loss = o.where(target != 1, (margin - input).clamp(min=0.0), 0.0) + o.where(target != -1, input, 0.0)
    return c_reduce(loss, reduction, size_average, reduce)


def c_poisson_nll_loss(
    input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"
):
    o = _ops()
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:  # Stirling's term for targets above 1
        safe = o.where(target > 1, target, 1.0)
        loss = loss + o.where(target > 1, safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log(), 0.0)
    return c_reduce(loss, reduction, size_average, reduce)


def c_gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if var.ndim == input.ndim - 1 and tuple(var.shape) == tuple(input.shape[:-1]):
        var = var.unsqueeze(-1)  # one variance per sample (homoscedastic over the last dim)
    if (np.asarray(values_of(var)) < 0).any():
        raise OpError("gaussian_nll_loss: var has negative entry/entries")
    # clamped at eps without changing the gradient (torch clamps under no_grad)
    var = var + (var.detach().clamp(min=eps) - var.detach())
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return c_reduce(loss, reduction)


def c_cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    o = _ops()
    eps = 1e-12  # torch's: inside the square roots
    d = input1.ndim - 1
    cos = (input1 * input2).sum(d) / ((input1 * input1).sum(d) + eps).sqrt() / ((input2 * input2).sum(d) + eps).sqrt()
    loss = o.where(target == 1, 1 - cos, 0.0) + o.where(target == -1, (cos - margin).clamp(min=0.0), 0.0)
    return c_reduce(loss, reduction, size_average, reduce)


def c_triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2.0,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    o = _ops()
    d_ap = c_pairwise_distance(anchor, positive, p, eps)
    d_an = c_pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = o.minimum(d_an, c_pairwise_distance(positive, negative, p, eps))
    return c_reduce((margin + d_ap - d_an).clamp(min=0.0), reduction, size_average, reduce)


def c_multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    o = _ops()
    logsig = -o.logaddexp(o.zeros_like(input), -input)
    logsig_neg = -o.logaddexp(o.zeros_like(input), input)
    loss = -(target * logsig + (1 - target) * logsig_neg)
    if weight is not None:
        loss = loss * weight
    return c_reduce(loss.mean(-1), reduction, size_average, reduce)


def c_pdist(input, p=2.0):
    if input.ndim != 2:
        raise OpError(f"pdist only supports 2D tensors, got: {input.ndim}D (shape {tuple(input.shape)})")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    return (input.index_select(0, _t(i.astype(np.int64))) - input.index_select(0, _t(j.astype(np.int64)))).norm(p, -1)


def c_channel_dropout(input, p=0.5, training=True, inplace=False, nd=2):
    """dropout1d/2d/3d: whole channels zeroed (one mask entry per (N, C)), the rest scaled by 1/(1-p)."""
    if not 0 <= p <= 1:
        raise OpError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (nd + 1, nd + 2):
        raise OpError(
            f"dropout{nd}d: Expected {nd + 1}D or {nd + 2}D input, but received a {input.ndim}D input "
            f"(shape {tuple(input.shape)})"
        )
    if not training or p == 0:
        return input
    lead = input.ndim - nd
    shape = tuple(input.shape[:lead]) + (1,) * nd
    out = input * 0.0 if p == 1 else input * (rand(*shape, dtype=input.dtype) >= p) * (1.0 / (1 - p))
    return input.copy_(out) if inplace else out


def c_channel_shuffle(input, groups):
    if input.ndim < 3 or input.shape[1] % groups:
        raise OpError(
            f"channel_shuffle: number of channels must be divisible by groups ({groups}), got input of "
            f"shape {tuple(input.shape)}"
        )
    n, c = input.shape[:2]
    rest = tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape((n, c) + rest)
