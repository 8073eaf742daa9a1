"""Op-database entries of SciPy's special functions of an order and an argument (pushforward.scipy):
iv, ive, jv, yv and betainc, differentiable in their argument. `register(add)` is called by
opdb._build. The argument is each sample's input (the order is a constant argument).
"""

from __future__ import annotations

from typing import Callable

import scipy.special as sp

from ..ops import generated as ops
from .opinfo import REAL, OpInfo, SampleInput

__all__ = ["register"]


def _orders(m):
    return [
        SampleInput(m((4,), low=0.5, high=3.0), (1.5,), name="v=1.5"),
        SampleInput(m((2, 3), low=0.5, high=3.0), (2.0,), name="v=2"),
        SampleInput(m((3,), low=0.5, high=3.0), (0.0,), name="v=0"),
    ]


def _betainc(m):
    return [
        SampleInput(m((4,), low=0.1, high=0.9), (1.5, 2.5), name="a=1.5 b=2.5"),
        SampleInput(m((2, 3), low=0.1, high=0.9), (3.0, 0.5), name="a=3 b=0.5"),
    ]


def register(add: Callable) -> None:
    for name, ref in (("special_iv", sp.iv), ("special_ive", sp.ive), ("special_jv", sp.jv), ("special_yv", sp.yv)):
        op = getattr(ops, name)
        add(OpInfo(name, lambda x, v, op=op: op(v, x), _orders, lambda x, v, ref=ref: ref(v, x), REAL))
    add(
        OpInfo(
            "special_betainc",
            lambda x, a, b: ops.special_betainc(a, b, x),
            _betainc,
            lambda x, a, b: sp.betainc(a, b, x),
            REAL,
        )
    )
