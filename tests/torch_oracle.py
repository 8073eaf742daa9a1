"""Compare op-database samples with torch: the same call on torch tensors."""

from __future__ import annotations

import numpy as np

import pushforward as pf
from pushforward.testing.opdb import C128, F64, OPS


def to_torch(v, torch):
    if isinstance(v, pf.Tensor):
        return torch.from_numpy(np.array(v.numpy(), copy=True))
    if isinstance(v, list):
        return [to_torch(x, torch) for x in v]
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return tuple(to_torch(x, torch) for x in v)
    if isinstance(v, dict):
        return {k: to_torch(x, torch) for k, x in v.items()}
    return v


def outputs(r) -> list:
    if isinstance(r, (list, tuple)):
        return [x for y in r for x in outputs(y)]
    return [r]


def as_array(x) -> np.ndarray:
    if isinstance(x, pf.Tensor):
        return np.asarray(x.numpy())
    if hasattr(x, "detach"):
        return x.detach().resolve_conj().resolve_neg().numpy()
    return np.asarray(x)


def check_against_torch(name: str, torch_fn, torch, tol: float = 1e-10) -> int:
    """Every float64/complex128 sample of op `name`: pf values equal torch_fn's to tol. Returns the count."""
    info = OPS[name]
    n = 0
    for dt in (F64, C128):
        for s in info.samples(dt):
            got = outputs(info(s))
            exp = outputs(torch_fn(to_torch(s.input, torch), *to_torch(s.args, torch), **to_torch(s.kwargs, torch)))
            assert len(got) == len(exp), f"{name} {s!r}: {len(got)} outputs, torch has {len(exp)}"
            for g, e in zip(got, exp):
                g, e = as_array(g), as_array(e)
                assert g.shape == e.shape, f"{name} {s!r}: shape {g.shape}, torch {e.shape}"
                np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True, err_msg=f"{name} {s!r}")
            n += 1
    return n
