"""The standard's fft extension: NumPy's fft (pushforward.numpy.fft, over our differentiable FFT
ops), checked by `strict`; fftfreq and rfftfreq take the standard's dtype and device and make tensors.

>>> import pushforward.array_api as xp
>>> xp.fft.rfft(xp.asarray([1.0, 1.0, 1.0, 1.0]))
tensor([4.+0.j, 0.+0.j, 0.+0.j], dtype=pushforward.complex128)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as pnp
from ..core.namespace import public_dir as _public_dir
from ..core.tensor import Tensor
from ._common import constant, strict

TRANSFORMS = "fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftshift ifftshift"
SAME = {n: strict(n, getattr(pnp.fft, n), module=__name__) for n in TRANSFORMS.split()}
globals().update(SAME)

__all__ = [*SAME, "fftfreq", "rfftfreq"]


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """The sample frequencies of an n-point DFT with sample spacing d (NumPy's, in dtype).

    >>> import pushforward.array_api as xp
    >>> xp.fft.fftfreq(4)
    tensor([ 0.  ,  0.25, -0.5 , -0.25])
    """
    return _freq("fftfreq", np.fft.fftfreq, n, d, dtype, device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """The non-negative sample frequencies of an n-point real DFT (NumPy's, in dtype).

    >>> import pushforward.array_api as xp
    >>> xp.fft.rfftfreq(4)
    tensor([0.  , 0.25, 0.5 ])
    """
    return _freq("rfftfreq", np.fft.rfftfreq, n, d, dtype, device)


def _freq(name: str, fn: Any, n: int, d: float, dtype: Any, device: Any) -> Tensor:
    # NumPy's takes no dtype: its float64 values, cast
    out = strict(name, lambda *, dtype=None: fn(n, d).astype(dtype or np.float64), arrays=0)(dtype=dtype, device=device)
    return out if isinstance(out, Tensor) else constant(out)


__dir__ = _public_dir(globals())
