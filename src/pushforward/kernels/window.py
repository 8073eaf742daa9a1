"""Sliding-window kernels: im2col and its adjoint col2im, over any number of spatial
dims. Convolutions and pooling are built on them (ops/composites/conv_pool_pad.py). Re-exported
by kernels/basic.py.

im2col(x (N, C, *S)) -> (N, C, *K, *O): every window of the padded input, K its kernel
positions (with dilation), O the output positions (with stride).
"""

from __future__ import annotations

import itertools

from ..core.backend import sliding_window_view, xp, zeros_for
from ..core.lazy import is_lazy_array
from ..errors import OpError

__all__ = ["im2col", "col2im", "window_pairs", "window_out_size"]


def window_pairs(padding, nd: int):
    """Padding as (low, high) per spatial dim: nd values (symmetric) or 2*nd (low0, high0, ...)."""
    padding = tuple(int(p) for p in padding)
    if len(padding) == nd:
        return tuple((p, p) for p in padding)
    if len(padding) == 2 * nd:
        return tuple((padding[2 * i], padding[2 * i + 1]) for i in range(nd))
    raise OpError(f"im2col: padding {padding} must have {nd} or {2 * nd} entries")


def window_out_size(size, k, d, lo, hi, s):
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def im2col(x, kernel_size, dilation, padding, stride, pad_value=0.0):
    nd = len(kernel_size)
    if x.ndim != nd + 2:
        raise OpError(f"im2col: expected a {nd + 2}-D input (N, C, *spatial), got shape {x.shape}")
    pads = window_pairs(padding, nd)
    outs = [window_out_size(x.shape[2 + i], kernel_size[i], dilation[i], *pads[i], stride[i]) for i in range(nd)]
    if any(o <= 0 for o in outs):
        raise OpError(
            f"im2col: the kernel {tuple(kernel_size)} (dilation {tuple(dilation)}) is larger than the "
            f"padded input {tuple(x.shape[2:])} with padding {pads}"
        )
    xpad = xp.pad(x, ((0, 0), (0, 0)) + pads, constant_values=pad_value) if any(map(any, pads)) else x
    span = [dilation[i] * (kernel_size[i] - 1) + 1 for i in range(nd)]
    # (an ndarray subclass stays one, compiler/recording.py; Dask's version takes no `subok`)
    keep = {} if is_lazy_array(xpad) else {"subok": True}
    win = sliding_window_view(xpad, span, axis=tuple(range(2, 2 + nd)), **keep)  # (N, C, *W, *span)
    sl = (
        (slice(None), slice(None))
        + tuple(slice(None, None, stride[i]) for i in range(nd))
        + tuple(slice(None, None, dilation[i]) for i in range(nd))
    )
    win = win[sl]  # (N, C, *O, *K)
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in outs)]
    perm = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    win = win.transpose(perm)
    return win if is_lazy_array(win) else xp.ascontiguousarray(win)


def col2im(cols, output_size, kernel_size, dilation, padding, stride):
    """The adjoint of im2col: each window's values added back at its positions (N, C, *output_size)."""
    nd = len(kernel_size)
    output_size = tuple(int(s) for s in output_size)
    if cols.ndim != 2 + 2 * nd or len(output_size) != nd:
        raise OpError(
            f"col2im: expected columns (N, C, *kernel, *out) for {nd} spatial dims and an output size "
            f"of {nd} entries, got shapes {cols.shape} and {output_size}"
        )
    pads = window_pairs(padding, nd)
    outs = cols.shape[2 + nd :]
    want = tuple(window_out_size(output_size[i], kernel_size[i], dilation[i], *pads[i], stride[i]) for i in range(nd))
    if tuple(outs) != want or tuple(cols.shape[2 : 2 + nd]) != tuple(kernel_size):
        raise OpError(
            f"col2im: columns of shape {cols.shape} don't match output size {output_size}, kernel "
            f"{tuple(kernel_size)} ({want} windows expected)"
        )
    padded = tuple(output_size[i] + pads[i][0] + pads[i][1] for i in range(nd))
    out = zeros_for(cols, cols.shape[:2] + padded)  # (through cols: pf.compile's tracer follows the sums)
    for kk in itertools.product(*[range(k) for k in kernel_size]):
        region = tuple(
            slice(kk[i] * dilation[i], kk[i] * dilation[i] + stride[i] * (outs[i] - 1) + 1, stride[i])
            for i in range(nd)
        )
        out[(slice(None), slice(None)) + region] += cols[(slice(None), slice(None)) + kk]
    crop = tuple(slice(pads[i][0], pads[i][0] + output_size[i]) for i in range(nd))
    return xp.ascontiguousarray(out[(slice(None), slice(None)) + crop])
