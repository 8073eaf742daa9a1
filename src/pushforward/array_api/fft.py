"""The standard's fft extension, over our differentiable FFT ops (pushforward.fft).

>>> import pushforward.array_api as xp
>>> xp.fft.rfft(xp.asarray([1.0, 1.0, 1.0, 1.0]))
tensor([4.+0.j, 0.+0.j, 0.+0.j], dtype=pushforward.complex128)
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.creation import as_tensor
from ..core.tensor import Tensor, device as _device
from ..errors import OpValueError
from .. import fft as _fft
from ..core.namespace import public_dir as _public_dir
from ._common import check_array
from ._dtypes import _dtype

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")


def _one(name: str, op: Callable, real_in: bool) -> Callable:
    def fn(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
        check_array(name, x)
        if norm not in _NORMS:
            raise OpValueError(f"array_api.fft.{name}(): norm must be one of {_NORMS}, got {norm!r}")
        return op(x, n, axis, norm)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's fft.{name} along axis (n points): pushforward's differentiable fft.{name}."
    return fn


def _many(name: str, op: Callable) -> Callable:
    def fn(x: Tensor, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Tensor:
        check_array(name, x)
        if norm not in _NORMS:
            raise OpValueError(f"array_api.fft.{name}(): norm must be one of {_NORMS}, got {norm!r}")
        if s is not None and axes is None:
            axes = tuple(range(-len(s), 0))
        return op(x, None if s is None else tuple(s), None if axes is None else tuple(axes), norm)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The standard's fft.{name} over axes (sizes s): pushforward's differentiable fft.{name}."
    return fn


fft = _one("fft", _fft.fft, False)
ifft = _one("ifft", _fft.ifft, False)
rfft = _one("rfft", _fft.rfft, True)
irfft = _one("irfft", _fft.irfft, False)
hfft = _one("hfft", _fft.hfft, False)
ihfft = _one("ihfft", _fft.ihfft, True)
fftn = _many("fftn", _fft.fftn)
ifftn = _many("ifftn", _fft.ifftn)
rfftn = _many("rfftn", _fft.rfftn)
irfftn = _many("irfftn", _fft.irfftn)


def _freq(name: str, a: np.ndarray, dtype: Any, device: Any) -> Tensor:
    if device is not None:
        _device(device)
    return as_tensor(a.astype(np.float64 if dtype is None else _dtype(name, dtype)))


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """The sample frequencies of an n-point DFT with sample spacing d.

    >>> import pushforward.array_api as xp
    >>> xp.fft.fftfreq(4)
    tensor([ 0.  ,  0.25, -0.5 , -0.25])
    """
    return _freq("fftfreq", np.fft.fftfreq(n, d), dtype, device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """The non-negative sample frequencies of an n-point real DFT.

    >>> import pushforward.array_api as xp
    >>> xp.fft.rfftfreq(4)
    tensor([0.  , 0.25, 0.5 ])
    """
    return _freq("rfftfreq", np.fft.rfftfreq(n, d), dtype, device)


def fftshift(x: Tensor, /, *, axes: Any = None) -> Tensor:
    """x with the zero frequency moved to the centre (along axes; all when None).

    >>> import pushforward.array_api as xp
    >>> xp.fft.fftshift(xp.asarray([0.0, 1.0, 2.0, 3.0]))
    tensor([2., 3., 0., 1.])
    """
    return _fft.fftshift(check_array("fftshift", x), axes)


def ifftshift(x: Tensor, /, *, axes: Any = None) -> Tensor:
    """fftshift's inverse.

    >>> import pushforward.array_api as xp
    >>> xp.fft.ifftshift(xp.asarray([2.0, 3.0, 0.0, 1.0]))
    tensor([0., 1., 2., 3.])
    """
    return _fft.ifftshift(check_array("ifftshift", x), axes)


__dir__ = _public_dir(globals())
