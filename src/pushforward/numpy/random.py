"""pushforward.numpy.random: NumPy's random module, its arrays as tensors (constants: random
numbers carry no derivative); `shuffle` permutes a tensor in place by our semantics.

>>> import pushforward.numpy as np
>>> np.random.seed(0); np.random.randn(2).shape
(2,)
"""

from typing import Any

import numpy.random as _npr

from ..core.tensor import Tensor as _Tensor
from ._creation import making as _making

_CLASSES = {n for n in dir(_npr) if isinstance(getattr(_npr, n), type)}
globals().update(
    {
        n: _making(getattr(_npr, n)) if callable(getattr(_npr, n)) and n not in _CLASSES else getattr(_npr, n)
        for n in dir(_npr)
        if not n.startswith("_")
    }
)
for _n in ("seed", "get_state", "set_state", "default_rng", "get_bit_generator", "set_bit_generator"):
    if hasattr(_npr, _n):
        globals()[_n] = getattr(_npr, _n)


def shuffle(x: Any) -> None:
    """Permute x along its first axis in place (a tensor: a recorded write)."""
    if not isinstance(x, _Tensor):
        _npr.shuffle(x)
        return
    x[:] = x[_npr.permutation(len(x))]


def permutation(x: Any) -> Any:
    """A permuted range (x a number) or a permuted copy of x along its first axis."""
    if isinstance(x, _Tensor):
        return x[_npr.permutation(len(x))]
    return _making(_npr.permutation)(x)


__all__ = sorted(n for n in dir(_npr) if not n.startswith("_"))
