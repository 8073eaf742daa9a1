"""NumPy's names of the ops, read off derivatives.yaml: the faces' name tables come from here.

An op answers to NumPy's name when its name or one of its aliases is that name (`sin`, `arcsin`,
`multiply`) or when its `numpy:` key lists it (`power` for `pow`, `fabs` for `_fabs`). Only the
ufuncs are matched by name alone: an element-wise function computes NumPy's values under either
name, where a function of arrays (`sort`, `max`, `split`) takes other arguments and returns other
things in torch than in NumPy, so its face translates it by hand.

>>> import pushforward as pf
>>> from pushforward.ops.numpy_names import numpy_ufuncs
>>> numpy_ufuncs()["power"] is pf.pow, numpy_ufuncs()["arctan2"] is pf.atan2
(True, True)
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from . import generated as G

__all__ = ["numpy_ufuncs", "numpy_name"]


@functools.cache
def numpy_ufuncs() -> dict[str, Callable]:
    """NumPy ufunc name -> the op computing its values, for every ufunc an op answers to."""
    found = {}
    for name in dir(np):
        if not isinstance(getattr(np, name), np.ufunc):
            continue
        op = G.NUMPY_NAMES.get(name) or G.FUNCTIONS.get(name)
        if op is not None:
            found[name] = op
    return found


def numpy_name(name: str) -> Callable | None:
    """The op NumPy's `name` stands for: a `numpy:` name, an op's own name or an alias; None if none.

    >>> import pushforward as pf
    >>> numpy_name("invert") is pf.bitwise_not
    True
    """
    return G.NUMPY_NAMES.get(name) or G.FUNCTIONS.get(name)
