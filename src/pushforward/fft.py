"""pushforward.fft: torch.fft's transforms, differentiable in both modes.

All transforms are linear, so tangents are the transforms of the tangents; gradients are
the adjoint transforms (conjugate-Wirtinger convention). rfft's adjoint zero-pads the
one-sided spectrum and keeps the real part of an inverse transform; irfft's adjoint is an
rfft whose bins counted twice in the Hermitian extension (all but DC and, for even n,
Nyquist) are doubled. irfft ignores the imaginary parts of the DC and Nyquist bins, and
so does its derivative.

>>> import pushforward as pf
>>> pf.fft.fft(pf.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=pushforward.complex128)
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING, Any

if _TYPE_CHECKING:
    from .core.tensor import Tensor

import numpy as np

from .ops import generated as ops
from .core.creation import tensor
from .core.namespace import public_dir as _public_dir


# torch.fft's names of the ops: their `fft.<name>` aliases in derivatives.yaml
globals().update(ops.NAMESPACES["fft"])
__all__ = sorted(ops.NAMESPACES["fft"]) + ["fftfreq", "rfftfreq"]


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of an n-point DFT with spacing d. Example: pf.fft.fftfreq(4)"""
    return tensor(np.fft.fftfreq(n, d), dtype=dtype, requires_grad=requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of rfft (non-negative only). Example: pf.fft.rfftfreq(4)"""
    return tensor(np.fft.rfftfreq(n, d), dtype=dtype, requires_grad=requires_grad)


__dir__ = _public_dir(globals())
