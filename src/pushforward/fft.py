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

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftshift",
    "ifftshift",
    "fftfreq",
    "rfftfreq",
]

fft = ops.fft_fft
ifft = ops.fft_ifft
rfft = ops.fft_rfft
irfft = ops.fft_irfft
hfft = ops.fft_hfft
ihfft = ops.fft_ihfft
fft2 = ops.fft_fft2
ifft2 = ops.fft_ifft2
rfft2 = ops.fft_rfft2
irfft2 = ops.fft_irfft2
fftn = ops.fft_fftn
ifftn = ops.fft_ifftn
rfftn = ops.fft_rfftn
irfftn = ops.fft_irfftn
hfft2 = ops.fft_hfft2
ihfft2 = ops.fft_ihfft2
hfftn = ops.fft_hfftn
ihfftn = ops.fft_ihfftn
fftshift = ops.fft_fftshift
ifftshift = ops.fft_ifftshift


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of an n-point DFT with spacing d. Example: pf.fft.fftfreq(4)"""
    return tensor(np.fft.fftfreq(n, d), dtype=dtype, requires_grad=requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of rfft (non-negative only). Example: pf.fft.rfftfreq(4)"""
    return tensor(np.fft.rfftfreq(n, d), dtype=dtype, requires_grad=requires_grad)


__dir__ = _public_dir(globals())
