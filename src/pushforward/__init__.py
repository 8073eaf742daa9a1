"""pushforward: NumPy tensors with forward-mode (RFC-0007) and reverse-mode autodiff.

>>> import pushforward as pf
>>> import pushforward.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     y = pf.sin(fwAD.make_dual(pf.tensor(0.0), pf.tensor(1.0)))
...     float(fwAD.unpack_dual(y).tangent)
1.0
"""

import importlib as _importlib
import sys as _sys
import types as _types

import numpy as _np

from .core.tensor import Tensor
from .errors import OpError
from .methods import bind as _methods
from .ops import generated as _ops
from .core.creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from .engine.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from . import autograd
from . import linalg
from . import fft, special  # noqa: F401 - torch.fft and torch.special names
from . import memory
from .methods.lazy import compute  # lazy (Dask-backed) tensors: docs/dask.md

_methods.bind()
globals().update(_ops.FUNCTIONS)

float32 = _np.dtype(_np.float32)
float64 = _np.dtype(_np.float64)
complex64 = _np.dtype(_np.complex64)
complex128 = _np.dtype(_np.complex128)
int32 = _np.dtype(_np.int32)
int64 = _np.dtype(_np.int64)
bool = _np.dtype(_np.bool_)  # noqa: A001 - torch's name
float = float32  # noqa: A001 - torch's: pf.float == t.float().dtype
double = float64
cfloat = complex64
cdouble = complex128
long = int64
dtype = _np.dtype

__version__ = "0.1.0"


def is_tensor(obj: object) -> bool:
    """True if obj is a pushforward Tensor.

    >>> is_tensor(tensor([1.0])), is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


# ---- porting from torch, NumPy protocols
from .errors import OpIndexError, OpTypeError, OpValueError, PushforwardError  # noqa: E402
from .core.creation import (
    Generator,
    default_generator,
    get_default_dtype,
    initial_seed,
    randperm,
    seed,
    set_default_dtype,
)
from .methods.logic import all, allclose, any, equal, isclose  # noqa: E402,A004 - torch's names
from .core.tensor import device  # noqa: E402
from .numpy import _api as _numpy_api  # noqa: E402
from .core.namespace import public_dir as _public_dir

_methods.bind_numpy_protocols(_numpy_api.array_ufunc, _numpy_api.array_function, _numpy_api.array, _numpy_api.METHODS)
half = float16 = _np.dtype(_np.float16)
short = int16 = _np.dtype(_np.int16)
int = int32  # noqa: A001 - torch's name
int8 = _np.dtype(_np.int8)
uint8 = _np.dtype(_np.uint8)


from .compiler import compile  # noqa: E402,A004 - torch's name (shadows the builtin in this namespace only)

_LAZY_MODULES = ("func", "testing", "nn", "array_api")


def __getattr__(name: str) -> object:
    # Submodules loaded on first use (they import the whole package themselves).
    if name in _LAZY_MODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'pushforward' has no attribute {name!r}")


# ---- namespace hygiene: the public names are those not starting with "_", minus
# the package's internal modules (importing pushforward.dispatch.classifier, say, makes `dispatch` an
# attribute of the package; it is not part of the API).
_PUBLIC_MODULES = frozenset({"autograd", "linalg", "fft", "special", "memory", *_LAZY_MODULES})


def _public_names() -> list:
    return sorted(n for n, v in globals().items() if not n.startswith("_") and not isinstance(v, _types.ModuleType))


__dir__ = _public_dir(globals(), _PUBLIC_MODULES)


__all__ = _public_names()
