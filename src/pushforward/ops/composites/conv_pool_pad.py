"""Convolution, pooling, resampling and padding for pf.nn.functional.

All are built on `_im2col` / `_col2im` (windows of the input and their adjoint, kernels in
kernels/window.py) and on matmul, gather and index ops, so their backward and forward
derivatives come from those ops. Max pooling sends the gradient to the first maximum of a
window (torch's choice); avg pooling divides as torch does (count_include_pad, ceil_mode).

>>> import pushforward as pf
>>> import pushforward.nn.functional as F
>>> F.conv2d(pf.ones(1, 1, 3, 3), pf.ones(1, 1, 2, 2)).shape
(1, 1, 2, 2)
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .util import const as _t
from .util import ops as _ops
from ...errors import OpError
from ...kernels import basic as K
from ...core.creation import full

__all__ = [
    "c_conv",
    "c_conv_transpose",
    "c_unfold",
    "c_fold",
    "c_max_pool",
    "c_avg_pool",
    "c_adaptive_avg_pool",
    "c_adaptive_max_pool",
    "c_interpolate",
    "c_pad",
    "c_pixel_shuffle",
    "c_pixel_unshuffle",
]


def _tuple(v, nd, name, what):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise OpError(f"{name}: expected {what} to be a single integer value or a list of {nd} values, got {v}")
    return v


def _batched(name, x, nd):
    """(input with a batch dim, whether one was added); checks the rank."""
    if x.ndim == nd + 1:
        return x.unsqueeze(0), True
    if x.ndim != nd + 2:
        raise OpError(
            f"{name}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, got shape {tuple(x.shape)}"
        )
    return x, False


# -- convolution --------------------------------------------------------------------------------------


def c_conv(input, weight, bias, stride, padding, dilation, groups, nd):
    o = _ops()
    name = f"conv{nd}d"
    x, unbatched = _batched(name, input, nd)
    if weight.ndim != nd + 2:
        raise OpError(
            f"{name}: expected a {nd + 2}-D weight (out_channels, in_channels/groups, *kernel), got shape "
            f"{tuple(weight.shape)}"
        )
    n, c = x.shape[:2]
    cout, cg = weight.shape[:2]
    if c != cg * groups or cout % groups:
        raise OpError(
            f"{name}: input of shape {tuple(input.shape)} (C={c}) and weight of shape {tuple(weight.shape)} "
            f"don't fit groups={groups} (expected C = weight.shape[1] * groups and out_channels divisible "
            f"by groups)"
        )
    k = tuple(weight.shape[2:])
    s = _tuple(stride, nd, name, "stride")
    d = _tuple(dilation, nd, name, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0,) * (2 * nd)
        elif padding == "same":
            if any(v != 1 for v in s):
                raise OpError(f"{name}: padding='same' is not supported for strided convolutions (stride {s})")
            pads = ()
            for i in range(nd):
                total = d[i] * (k[i] - 1)
                pads += (total // 2, total - total // 2)  # the odd pixel goes on the right, as torch
        else:
            raise OpError(f"{name}: invalid padding string {padding!r}, expected 'valid' or 'same'")
    else:
        pads = _tuple(padding, nd, name, "padding")
    cols = o._im2col(x, k, d, pads, s)  # (N, C, *K, *O)
    outs = tuple(cols.shape[2 + nd :])
    kk = math.prod(k)
    cols = cols.reshape(n, groups, cg * kk, math.prod(outs))
    w = weight.reshape(groups, cout // groups, cg * kk)
    out = (w @ cols).reshape((n, cout) + outs)
    if bias is not None:
        out = out + bias.reshape((cout,) + (1,) * nd)
    return out.squeeze(0) if unbatched else out


def c_conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd):
    o = _ops()
    name = f"conv_transpose{nd}d"
    x, unbatched = _batched(name, input, nd)
    if weight.ndim != nd + 2:
        raise OpError(
            f"{name}: expected a {nd + 2}-D weight (in_channels, out_channels/groups, *kernel), got shape "
            f"{tuple(weight.shape)}"
        )
    n, cin = x.shape[:2]
    if weight.shape[0] != cin or cin % groups:
        raise OpError(
            f"{name}: input of shape {tuple(input.shape)} and weight of shape {tuple(weight.shape)} don't "
            f"fit groups={groups} (expected weight.shape[0] = in_channels, divisible by groups)"
        )
    cog = weight.shape[1]
    k = tuple(weight.shape[2:])
    s = _tuple(stride, nd, name, "stride")
    p = _tuple(padding, nd, name, "padding")
    op = _tuple(output_padding, nd, name, "output_padding")
    d = _tuple(dilation, nd, name, "dilation")
    if any(op[i] >= max(s[i], d[i]) for i in range(nd)):
        raise OpError(f"{name}: output_padding {op} must be smaller than either stride {s} or dilation {d}")
    sp = tuple(x.shape[2:])
    size = tuple((sp[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(nd))
    kk = math.prod(k)
    w = weight.reshape(groups, cin // groups, cog * kk).mT  # (g, Cout/g * K, Cin/g)
    cols = w @ x.reshape(n, groups, cin // groups, math.prod(sp))  # (N, g, Cout/g * K, S)
    cols = cols.reshape((n, groups * cog) + k + sp)
    out = o._col2im(cols, size, k, d, p, s)
    if bias is not None:
        out = out + bias.reshape((groups * cog,) + (1,) * nd)
    return out.squeeze(0) if unbatched else out


def c_unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch's F.unfold: (N, C, H, W) -> (N, C * kh * kw, L)."""
    o = _ops()
    if input.ndim not in (3, 4):
        raise OpError(f"unfold: expected a 3-D or 4-D input, got shape {tuple(input.shape)}")
    x, unbatched = _batched("unfold", input, 2)
    k = _tuple(kernel_size, 2, "unfold", "kernel_size")
    cols = o._im2col(
        x,
        k,
        _tuple(dilation, 2, "unfold", "dilation"),
        _tuple(padding, 2, "unfold", "padding"),
        _tuple(stride, 2, "unfold", "stride"),
    )
    n, c = x.shape[:2]
    out = cols.reshape(n, c * math.prod(k), -1)
    return out.squeeze(0) if unbatched else out


def c_fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch's F.fold (the adjoint of unfold): (N, C * kh * kw, L) -> (N, C, *output_size)."""
    o = _ops()
    if input.ndim not in (2, 3):
        raise OpError(f"fold: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    x = input.unsqueeze(0) if input.ndim == 2 else input
    k = _tuple(kernel_size, 2, "fold", "kernel_size")
    size = _tuple(output_size, 2, "fold", "output_size")
    d, p, s = (_tuple(v, 2, "fold", w) for v, w in ((dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    outs = tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))
    kk = math.prod(k)
    if x.shape[1] % kk or x.shape[2] != math.prod(outs):
        raise OpError(f"fold: input of shape {tuple(input.shape)} doesn't match kernel {k} and {outs} windows")
    cols = x.reshape((x.shape[0], x.shape[1] // kk) + k + outs)
    out = o._col2im(cols, size, k, d, p, s)
    return out.squeeze(0) if input.ndim == 2 else out


# -- pooling ---------------------------------------------------------------------------------------------


def _pool_geometry(name, x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    k = _tuple(kernel_size, nd, name, "kernel_size")
    s = (
        k
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _tuple(stride, nd, name, "stride")
    )
    p = _tuple(padding, nd, name, "padding")
    d = _tuple(dilation, nd, name, "dilation")
    if any(p[i] > k[i] // 2 for i in range(nd)):
        raise OpError(
            f"{name}: pad should be at most half of effective kernel size, but got pad={p} and kernel_size={k}"
        )
    sizes = tuple(x.shape[2:])
    outs, pads = [], []
    for i in range(nd):
        span = sizes[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1
        if span < 0:
            raise OpError(f"{name}: input of spatial size {sizes} is too small for kernel {k} (padding {p})")
        out = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
        if ceil_mode and (out - 1) * s[i] >= sizes[i] + p[i]:
            out -= 1  # the last window must start inside the input or its left padding
        extra = max(0, (out - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (sizes[i] + 2 * p[i]))
        outs.append(out)
        pads += [p[i], p[i] + extra]
    return k, s, p, d, tuple(outs), tuple(pads)


def c_max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):
    o = _ops()
    name = f"max_pool{nd}d"
    x, unbatched = _batched(name, input, nd)
    k, s, p, d, outs, pads = _pool_geometry(name, x, nd, kernel_size, stride, padding, dilation, ceil_mode)
    cols = o._im2col(x, k, d, pads, s, -math.inf)  # (N, C, *K, *O)
    n, c = x.shape[:2]
    flat = cols.reshape((n, c, math.prod(k)) + outs)
    vals, win = o.max_dim(flat, 2)  # first maximum of each window, as torch
    if unbatched:
        vals = vals.squeeze(0)
    if not return_indices:
        return vals
    # flat input index of each chosen element: start of its window plus its offset in the window
    # (made of ops, not read from arrays, so that it runs under vmap and inside jet)
    grids = np.meshgrid(*[np.arange(v) for v in outs], indexing="ij")
    starts = [_t((grids[i] * s[i] - p[i]).astype(np.int64)) for i in range(nd)]
    idx = _flat_index(win, k, starts, d, tuple(x.shape[2:]))
    return vals, (idx.squeeze(0) if unbatched else idx)


def _flat_index(local, window: tuple, starts: list, step: tuple, sizes: tuple):
    """The flat index into an input of spatial size `sizes` of the element at flat offset `local`
    (an integer tensor) in a window of shape `window` that starts at `starts[i]` along dim i and
    steps by `step[i]` (a dilation)."""
    idx = None
    for i in range(len(window)):
        pos = (local // math.prod(window[i + 1 :])) % window[i] * step[i] + starts[i]
        term = pos * math.prod(sizes[i + 1 :])
        idx = term if idx is None else idx + term
    return idx


def c_avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    o = _ops()
    name = f"avg_pool{nd}d"
    x, unbatched = _batched(name, input, nd)
    k, s, p, d, outs, pads = _pool_geometry(name, x, nd, kernel_size, stride, padding, 1, ceil_mode)
    cols = o._im2col(x, k, d, pads, s)
    total = cols.sum(tuple(range(2, 2 + nd)))
    if divisor_override is not None:
        if divisor_override == 0:
            raise OpError(f"{name}: divisor must be not zero")
        out = total / divisor_override
    else:
        # how many window elements lie inside the input (or inside its padding, count_include_pad)
        sizes = tuple(x.shape[2:])
        ind = np.zeros(tuple(sizes[i] + pads[2 * i] + pads[2 * i + 1] for i in range(nd)), x.dtype)
        inner = tuple(
            slice(0 if count_include_pad else p[i], (sizes[i] + 2 * p[i]) if count_include_pad else p[i] + sizes[i])
            for i in range(nd)
        )
        ind[inner] = 1
        cnt = K.im2col(ind[None, None], k, d, (0,) * nd, s).sum(tuple(range(2, 2 + nd)))[0, 0]
        out = total / _t(cnt.astype(x.dtype))
    return out.squeeze(0) if unbatched else out


def _adaptive_bounds(size, out):
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _out_sizes(name, x, output_size, nd):
    outs = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(outs) == 1:
        outs = tuple(outs) * nd
    if len(outs) != nd:
        raise OpError(f"{name}: output_size must have {nd} entries, got {output_size}")
    return tuple(x.shape[2 + i] if v is None else int(v) for i, v in enumerate(outs))


def c_adaptive_avg_pool(input, output_size, nd):
    name = f"adaptive_avg_pool{nd}d"
    x, unbatched = _batched(name, input, nd)
    outs = _out_sizes(name, x, output_size, nd)
    for i in range(nd):
        size = x.shape[2 + i]
        a = np.zeros((outs[i], size), x.dtype)
        for j, (lo, hi) in enumerate(_adaptive_bounds(size, outs[i])):
            a[j, lo:hi] = 1.0 / (hi - lo)
        x = (x.movedim(2 + i, -1) @ _t(a.T)).movedim(-1, 2 + i)
    return x.squeeze(0) if unbatched else x


def c_adaptive_max_pool(input, output_size, return_indices, nd):
    o = _ops()
    name = f"adaptive_max_pool{nd}d"
    x, unbatched = _batched(name, input, nd)
    outs = _out_sizes(name, x, output_size, nd)
    sizes = tuple(x.shape[2:])
    bounds = [_adaptive_bounds(sizes[i], outs[i]) for i in range(nd)]
    vals, idxs = [], []
    for cell in itertools.product(*[range(v) for v in outs]):
        r = x
        for i, j in enumerate(cell):
            lo, hi = bounds[i][j]
            r = r.narrow(2 + i, lo, hi - lo)
        v, w = o.max_dim(r.flatten(2), 2)
        vals.append(v)
        starts = [bounds[i][cell[i]][0] for i in range(nd)]
        idxs.append(_flat_index(w, tuple(r.shape[2:]), starts, (1,) * nd, sizes))
    n, c = x.shape[:2]
    out = o.stack(vals, -1).reshape((n, c) + outs)
    if unbatched:
        out = out.squeeze(0)
    if not return_indices:
        return out
    idx = o.stack(idxs, -1).reshape((n, c) + outs)
    return out, (idx.squeeze(0) if unbatched else idx)


# -- resampling -----------------------------------------------------------------------------------------

_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}


def c_interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    o = _ops()
    nd = input.ndim - 2
    if nd < 1:
        raise OpError(f"interpolate: expected an input with a batch and a channel dim, got shape {tuple(input.shape)}")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not implemented")
    if (size is None) == (scale_factor is None):
        raise OpError("interpolate: only one of size or scale_factor should be defined")
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "area")
    if mode not in modes:
        raise OpError(f"interpolate: mode must be one of {', '.join(modes)}, got {mode!r}")
    if mode in _LINEAR and _LINEAR[mode] != nd:
        raise OpError(
            f"interpolate: mode {mode!r} expects a {_LINEAR[mode] + 2}-D input, got shape {tuple(input.shape)}"
        )
    if align_corners is not None and mode not in _LINEAR:
        raise OpError(
            "interpolate: align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | trilinear"
        )
    sizes = tuple(input.shape[2:])
    if size is not None:
        outs = _tuple(size, nd, "interpolate", "size")
        scales = [sizes[i] / outs[i] for i in range(nd)]
    else:
        sf = scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * nd
        if len(sf) != nd:
            raise OpError(f"interpolate: scale_factor must have {nd} entries, got {scale_factor}")
        outs = tuple(int(math.floor(sizes[i] * sf[i])) for i in range(nd))
        scales = [sizes[i] / outs[i] if recompute_scale_factor else 1.0 / sf[i] for i in range(nd)]
    if mode == "area":
        return c_adaptive_avg_pool(input, outs, nd)
    x = input
    for i in range(nd):
        n_in, n_out, sc = sizes[i], outs[i], scales[i]
        dst = np.arange(n_out, dtype=np.float64)
        if mode in ("nearest", "nearest-exact"):
            src = np.floor((dst + 0.5) * sc) if mode == "nearest-exact" else np.floor(dst * sc)
            x = o.index_select(x, 2 + i, _t(np.minimum(src, n_in - 1).astype(np.int64)))
            continue
        if align_corners:
            src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros_like(dst)
        else:
            src = np.maximum((dst + 0.5) * sc - 0.5, 0.0)
        lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        w = src - lo
        a = np.zeros((n_out, n_in), input.dtype)
        np.add.at(a, (np.arange(n_out), lo), 1 - w)
        np.add.at(a, (np.arange(n_out), hi), w)
        x = (x.movedim(2 + i, -1) @ _t(a.T)).movedim(-1, 2 + i)
    return x


# -- padding ---------------------------------------------------------------------------------------------


def c_pad(input, pad, mode="constant", value=None):
    o = _ops()
    pad = tuple(int(v) for v in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise OpError(
            f"pad: padding length must be even and at most twice the number of dims; got {len(pad)} "
            f"values for a tensor of shape {tuple(input.shape)}"
        )
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise OpError(f"pad: mode must be one of constant, reflect, replicate, circular, got {mode!r}")
    if mode != "constant" and value not in (None, 0, 0.0):
        raise OpError(f"pad: padding mode {mode!r} doesn't take in value argument")
    x = input
    for j in range(len(pad) // 2):
        d = input.ndim - 1 - j
        lo, hi = pad[2 * j], pad[2 * j + 1]
        n = x.shape[d]
        if mode == "constant":
            if lo < 0:
                x, lo = x.narrow(d, -lo, x.shape[d] + lo), 0
            if hi < 0:
                x, hi = x.narrow(d, 0, x.shape[d] + hi), 0
            parts = []
            for amount in (lo, hi):
                shape = list(x.shape)
                shape[d] = amount
                parts.append(full(tuple(shape), 0.0 if value is None else value, dtype=x.dtype) if amount else None)
            pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
            x = o.cat(pieces, d) if len(pieces) > 1 else x
            continue
        i = np.arange(-lo, n + hi)
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise OpError(
                    f"pad: padding size should be less than the corresponding input dimension, but got: "
                    f"padding ({lo}, {hi}) at dimension {d} of input {tuple(input.shape)}"
                )
            i = np.abs(i)
            i = np.where(i >= n, 2 * (n - 1) - i, i)
        elif mode == "replicate":
            i = np.clip(i, 0, n - 1)
        else:
            if lo > n or hi > n:
                raise OpError(
                    f"pad: padding value causes wrapping around more than once (padding ({lo}, {hi}) "
                    f"at dimension {d} of input {tuple(input.shape)})"
                )
            i = i % n
        x = o.index_select(x, d, _t(i.astype(np.int64)))
    return x


def c_pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise OpError(f"pixel_shuffle: expected input of shape (*, C * r^2, H, W) with r={r}, got {tuple(input.shape)}")
    *b, c, h, w = input.shape
    x = input.reshape(tuple(b) + (c // (r * r), r, r, h, w))
    nb = len(b)
    x = x.permute(tuple(range(nb)) + (nb, nb + 3, nb + 1, nb + 4, nb + 2))
    return x.reshape(tuple(b) + (c // (r * r), h * r, w * r)).clone()  # new memory, as torch (no view of input)


def c_pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    if input.ndim < 3 or input.shape[-1] % r or input.shape[-2] % r:
        raise OpError(
            f"pixel_unshuffle: expected input of shape (*, C, H, W) with H and W divisible by {r}, got "
            f"{tuple(input.shape)}"
        )
    *b, c, h, w = input.shape
    x = input.reshape(tuple(b) + (c, h // r, r, w // r, r))
    nb = len(b)
    x = x.permute(tuple(range(nb)) + (nb, nb + 2, nb + 4, nb + 1, nb + 3))
    return x.reshape(tuple(b) + (c * r * r, h // r, w // r)).clone()  # new memory, as torch (no view of input)
