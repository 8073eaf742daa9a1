"""Compare an op-database entry with PyTorch on its samples: values, a vjp and a jvp.

`compare(name, torch_fn)` runs every float64 sample of OPS[name] through pushforward and
through `torch_fn` (called with the same structure, Tensors converted), and checks the
outputs, the gradients of a random cotangent (reverse mode) and the tangents of random
input tangents (forward mode, torch.autograd.forward_ad) agree.
"""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.testing.opdb import OPS, diff_leaves

torch = pytest.importorskip("torch")
tfwAD = torch.autograd.forward_ad


def _conv(obj, leaf_map):
    """pushforward structure -> torch structure; float tensors become the leaves in leaf_map."""
    if isinstance(obj, pf.Tensor):
        if id(obj) in leaf_map:
            return leaf_map[id(obj)]
        return torch.from_numpy(np.array(obj._data, copy=True))
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(obj.copy())
    if isinstance(obj, list):
        return [_conv(v, leaf_map) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_conv(v, leaf_map) for v in obj)
    if isinstance(obj, dict):
        return {k: _conv(v, leaf_map) for k, v in obj.items()}
    if isinstance(obj, np.dtype) or obj in (np.float32, np.float64, np.complex128):
        return {
            np.dtype(np.float32): torch.float32,
            np.dtype(np.float64): torch.float64,
            np.dtype(np.complex128): torch.complex128,
        }[np.dtype(obj)]
    return obj


def _outs(out) -> list:
    if isinstance(out, (tuple, list)):
        return [o for o in out]
    return [out]


def _np(t):
    if isinstance(t, pf.Tensor):
        return np.asarray(t._data)
    return t.detach().numpy()


def _float_outs(outs):
    return [i for i, o in enumerate(outs) if _np(o).dtype.kind == "f"]


def compare(
    name: str,
    torch_fn,
    *,
    atol: float = 1e-8,
    rtol: float = 1e-6,
    derivatives: bool = True,
    samples=None,
    forward: bool = True,
) -> None:
    info = OPS[name]
    rng = np.random.default_rng(0)
    for s in samples if samples is not None else info.samples(np.float64):
        leaves = diff_leaves(s)
        tleaves = {id(t): torch.from_numpy(np.array(t._data, copy=True)) for t in leaves}
        targs = _conv((s.input, s.args, s.kwargs), tleaves)
        pouts = _outs(info(s))
        touts = _outs(torch_fn(targs[0], *targs[1], **targs[2]))
        assert len(pouts) == len(touts), f"{name} {s!r}: {len(pouts)} outputs, torch {len(touts)}"
        for k, (p, t) in enumerate(zip(pouts, touts)):
            pa, ta = _np(p), _np(t)
            assert pa.shape == ta.shape, f"{name} {s!r} output {k}: shape {pa.shape}, torch {ta.shape}"
            np.testing.assert_allclose(pa, ta, atol=atol, rtol=rtol, err_msg=f"{name} {s!r} output {k} value")
        if not (derivatives and info.differentiable and s.grad and leaves):
            continue
        fl = _float_outs(pouts)
        if not fl:
            continue
        # reverse mode: the gradient of sum(cotangent * output)
        cots = [rng.standard_normal(_np(pouts[i]).shape) for i in fl]
        pin = [t.detach().requires_grad_(True) for t in leaves]
        tin = [tleaves[id(t)].detach().clone().requires_grad_(True) for t in leaves]
        pmap = {id(a): b for a, b in zip(leaves, pin)}
        tmap = {id(a): b for a, b in zip(leaves, tin)}
        po = _outs(info.op(*_rebuild(s, pmap)[0], **_rebuild(s, pmap)[1]))
        ta2 = _conv((s.input, s.args, s.kwargs), tmap)
        to = _outs(torch_fn(ta2[0], *ta2[1], **ta2[2]))
        pl = sum(((po[i] * pf.tensor(c)).sum() for i, c in zip(fl, cots)), pf.tensor(0.0))
        tl = sum(
            ((to[i] * torch.from_numpy(c)).sum() for i, c in zip(fl, cots)), torch.tensor(0.0, dtype=torch.float64)
        )
        pg = pf.autograd.grad(pl, pin, allow_unused=True)
        tg = torch.autograd.grad(tl, tin, allow_unused=True)
        for j, (a, b) in enumerate(zip(pg, tg)):
            a = np.zeros(pin[j].shape) if a is None else _np(a)
            b = np.zeros(tuple(tin[j].shape)) if b is None else b.numpy()
            np.testing.assert_allclose(
                a, b, atol=atol * 10, rtol=rtol * 10, err_msg=f"{name} {s!r}: gradient of input {j}"
            )
        if not forward:
            continue
        # forward mode: tangents of random input directions
        dirs = [rng.standard_normal(t.shape) for t in leaves]
        with fwAD.dual_level():
            pmap = {id(a): fwAD.make_dual(a.detach(), pf.tensor(d)) for a, d in zip(leaves, dirs)}
            args, kwargs = _rebuild(s, pmap)
            po = _outs(info.op(*args, **kwargs))
            ptan = [fwAD.unpack_dual(po[i]).tangent for i in fl]
            ptan = [np.zeros(_np(po[i]).shape) if t is None else _np(t) for i, t in zip(fl, ptan)]
        with tfwAD.dual_level():
            tmap = {
                id(a): tfwAD.make_dual(tleaves[id(a)].detach().clone(), torch.from_numpy(d))
                for a, d in zip(leaves, dirs)
            }
            ta2 = _conv((s.input, s.args, s.kwargs), tmap)
            to = _outs(torch_fn(ta2[0], *ta2[1], **ta2[2]))
            ttan = [tfwAD.unpack_dual(to[i]).tangent for i in fl]
            ttan = [np.zeros(tuple(to[i].shape)) if t is None else t.numpy() for i, t in zip(fl, ttan)]
        for k, (a, b) in enumerate(zip(ptan, ttan)):
            np.testing.assert_allclose(
                a, b, atol=atol * 10, rtol=rtol * 10, err_msg=f"{name} {s!r}: tangent of output {fl[k]}"
            )


def _rebuild(s, mapping):
    def sub(obj):
        if isinstance(obj, pf.Tensor) and id(obj) in mapping:
            return mapping[id(obj)]
        if isinstance(obj, list):
            return [sub(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(sub(v) for v in obj)
        if isinstance(obj, dict):
            return {k: sub(v) for k, v in obj.items()}
        return obj

    return (sub(s.input),) + sub(s.args), sub(s.kwargs)
