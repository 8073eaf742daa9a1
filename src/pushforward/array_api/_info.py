"""The standard's inspection utilities: __array_namespace_info__ and what it reports.

>>> import pushforward.array_api as xp
>>> info = xp.__array_namespace_info__()
>>> info.default_dtypes()["real floating"], info.devices()
(dtype('float64'), [device(type='cpu')])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import device as _device
from ..errors import OpValueError
from ._common import DTYPES
from ._dtypes import KINDS as _KINDS, isdtype

__all__ = ["Info", "__array_namespace_info__"]


class Info:
    """The namespace's capabilities, devices and data types (the standard's inspection object)."""

    __module__ = "pushforward.array_api"

    def capabilities(self) -> dict:
        """Boolean indexing yes; value-dependent output shapes (nonzero, unique_*) yes; max rank none."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> Any:
        """The CPU, the only device."""
        return _device("cpu")

    def devices(self) -> list:
        """[the CPU]."""
        return [_device("cpu")]

    def default_dtypes(self, *, device: Any = None) -> dict:
        """float64, complex128, int64 and int64 (NumPy's defaults)."""
        self._check(device)
        return {
            "real floating": np.dtype(np.float64),
            "complex floating": np.dtype(np.complex128),
            "integral": np.dtype(np.int64),
            "indexing": np.dtype(np.int64),
        }

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict:
        """The data types (of a kind, or of any of a tuple of kinds), by name."""
        self._check(device)
        if kind is None:
            return dict(DTYPES)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if isinstance(k, str) and k not in _KINDS:
                raise OpValueError(f"dtypes(): unknown kind {k!r}; kinds are {sorted(_KINDS)}")
        return {n: d for n, d in DTYPES.items() if isdtype(d, kind)}

    @staticmethod
    def _check(device: Any) -> None:
        if device is not None:
            _device(device)


def __array_namespace_info__() -> Info:
    """The namespace's inspection object.

    >>> import pushforward.array_api as xp
    >>> sorted(xp.__array_namespace_info__().dtypes(kind="signed integer"))
    ['int16', 'int32', 'int64', 'int8']
    """
    return Info()
