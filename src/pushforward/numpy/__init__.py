"""pushforward.numpy: NumPy's API on tensors, for `import pushforward.numpy as np`.

Every NumPy function keeps its name, signature and NumPy semantics (axis, keepdims, np.max
returning values); given tensors (or lists holding tensors) it returns tensors that carry
tangents and record the tape, given only arrays it is NumPy's. The values come from the same
handlers as NumPy's own dispatch on tensors (`pushforward.numpy._api`): one rule decides both.
The creation functions (`np.zeros`, `np.empty`, `np.eye`, `np.arange`, `np.array` of numbers,
`np.random.*`, ...) return tensors, so a program that allocates a buffer and fills it with values
that carry derivatives differentiates as written; `np.array`/`np.asarray` of lists of tensors stack
them, `np.r_`/`np.c_` join them; constants, dtypes and scalar types are NumPy's.

>>> import pushforward as pf
>>> import pushforward.numpy as np
>>> pf.func.grad(lambda x: np.sum(np.array([x, 2.0 * x]) ** 2))(pf.tensor(1.0))
tensor(10.)
"""

from __future__ import annotations

from typing import Any

import numpy as _onp

from ._creation import CREATION as _CREATION
from ._values import as_t as _as_t, has_tensor as _has_tensor
from . import fft, linalg, random  # noqa: F401 - NumPy's submodules
from .wrapping import wrap_namespace as _wrap_namespace

_SKIP = {"r_", "c_", "fft", "linalg", "random"}
globals().update(_wrap_namespace(_onp, [n for n in dir(_onp) if not n.startswith("_") and n not in _SKIP]))
globals().update(_CREATION)  # allocate, then fill: the creation functions make tensors


class _Concatenator:
    """np.r_ / np.c_ of items that may be tensors (slices and strings are NumPy's)."""

    def __init__(self, numpy_obj: Any, columns: bool) -> None:
        self._np = numpy_obj
        self._columns = columns

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        if not any(_has_tensor(i) for i in items):
            return self._np[key]
        parts = [_as_t(self._np[i] if isinstance(i, slice) else i) for i in items]
        if self._columns:
            parts = [p.reshape(-1, 1) if p.ndim < 2 else p for p in parts]
            return concatenate(parts, axis=-1)  # noqa: F821 - NumPy's concatenate, wrapped above
        return concatenate([p.reshape(1) if p.ndim == 0 else p for p in parts], axis=0)  # noqa: F821

    def __len__(self) -> int:
        return 0


__version__ = _onp.__version__
r_ = _Concatenator(_onp.r_, False)
c_ = _Concatenator(_onp.c_, True)

__all__ = sorted({n for n in globals() if not n.startswith("_")} - {"annotations", "Any"})
