"""Composite and shape ops against PyTorch (values, vjp and jvp on the op-database
samples), plus their Tensor methods and error messages."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
from pushforward.errors import OpError

from torch_compare import compare, torch

TORCH = {
    "addmm": torch.addmm,
    "addmv": torch.addmv,
    "addbmm": torch.addbmm,
    "baddbmm": torch.baddbmm,
    "addcmul": torch.addcmul,
    "addcdiv": torch.addcdiv,
    "lerp": torch.lerp,
    "mv": torch.mv,
    "vdot": torch.vdot,
    "repeat": lambda x, *r: x.repeat(*r),
    "tile": lambda x, *d: torch.tile(x, d[0] if len(d) == 1 else d),
    "repeat_interleave": torch.repeat_interleave,
    "movedim": torch.movedim,
    "unflatten": torch.unflatten,
    "meshgrid": lambda *a, indexing="ij": torch.meshgrid(*a, indexing=indexing),
    "broadcast_tensors": torch.broadcast_tensors,
    "tensor_split": torch.tensor_split,
    "hsplit": torch.hsplit,
    "vsplit": torch.vsplit,
    "rot90": torch.rot90,
    "block_diag": torch.block_diag,
    # torch.cdist has no forward-mode formula: its definition, over torch ops
    "cdist": lambda a, b, p=2.0: torch.linalg.vector_norm(a[..., :, None, :] - b[..., None, :, :], ord=p, dim=-1),
    "atleast_1d": torch.atleast_1d,
    "atleast_2d": torch.atleast_2d,
    "atleast_3d": torch.atleast_3d,
    "view_as": lambda x, o: x.view_as(o),
    "reshape_as": lambda x, o: x.reshape_as(o),
    "expand_as": lambda x, o: x.expand_as(o),
    "type_as": lambda x, o: x.type_as(o),
    "new_zeros": lambda x, *s, **k: x.new_zeros(*s, **k),
    "new_ones": lambda x, *s, **k: x.new_ones(*s, **k),
    "new_full": lambda x, *a, **k: x.new_full(*a, **k),
    "new_tensor": lambda x, *a, **k: x.new_tensor(*a, **k),
}


@pytest.mark.parametrize("name", sorted(TORCH))
def test_matches_torch(name):
    compare(name, TORCH[name])


def test_flip_dims_as_separate_arguments():
    x = pf.arange(24.0).reshape(2, 3, 4)
    t = torch.arange(24.0, dtype=torch.float64).reshape(2, 3, 4)
    np.testing.assert_array_equal(x.flip(0, 2).numpy(), t.flip(0, 2).numpy())
    np.testing.assert_array_equal(x.flip([1]).numpy(), t.flip([1]).numpy())
    np.testing.assert_array_equal(pf.flip(x, [0, 1]).numpy(), torch.flip(t, [0, 1]).numpy())


def test_meshgrid_default_is_ij():
    a, b = pf.meshgrid(pf.arange(2.0), pf.arange(3.0))
    assert a.shape == (2, 3) and b.shape == (2, 3)


def test_methods_exist():
    x = pf.ones(2, 3)
    assert x.repeat(2, 1).shape == (4, 3)
    assert x.tile(2).shape == (2, 6)
    assert x.movedim(0, 1).shape == (3, 2)
    assert x.addmm(pf.ones(2, 4), pf.ones(4, 3)).shape == (2, 3)
    assert x.new_ones(2).dtype == x.dtype


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pf.mv(pf.ones(2, 3), pf.ones(2)), r"mv: size mismatch.*\(2, 3\).*\(2,\)"),
        (lambda: pf.ones(2, 3).repeat(2), r"repeat: number of repeat dims \(1\).*\(2, 3\)"),
        (lambda: pf.hsplit(pf.ones(2, 3), 2), r"hsplit.*3 is not divisible"),
        (lambda: pf.rot90(pf.ones(3)), r"rot90.*\(3,\)"),
        (lambda: pf.block_diag(pf.ones(1, 1, 1)), r"block_diag.*\(1, 1, 1\)"),
        (lambda: pf.cdist(pf.ones(2, 3), pf.ones(2, 2)), r"cdist.*\(2, 3\) and \(2, 2\)"),
        (lambda: pf.repeat_interleave(pf.ones(3), pf.tensor([1, 2])), r"repeat_interleave.*shape \(3,\)"),
        (lambda: pf.broadcast_tensors(pf.ones(2), pf.ones(3)), r"broadcast_tensors.*\(2,\), \(3,\)"),
    ],
)
def test_bad_input_errors(call, match):
    with pytest.raises(OpError, match=match):
        call()
