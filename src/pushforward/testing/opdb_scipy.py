"""Op-database entries of the ops behind the NumPy and SciPy faces: SciPy's special functions of an
order and an argument (iv, ive, jv, yv and betainc, differentiable in their argument: each sample's
input, the order a constant argument), and NumPy's joining functions and covariance under torch's
names (hstack, vstack, dstack, column_stack, cov, corrcoef). `register(add)` is called by opdb._build.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.special as sp

from ..ops import generated as ops
from .opdb_linalg import _unary_samples
from .opinfo import REAL, REAL_COMPLEX, OpInfo, SampleInput

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
    for name, ref in (("special_betainc", sp.betainc), ("_special_betaincinv", sp.betaincinv)):  # (x last)
        op = getattr(ops, name)
        add(OpInfo(name, lambda x, a, b, op=op: op(a, b, x), _betainc, lambda x, a, b, ref=ref: ref(a, b, x), REAL))

    # (with the points where a derivative formula switches to its series: spence at 1, ellipk and ellipe at 0)
    unary = {
        "special_exp1": (sp.exp1, 0.2, 3.0, []),
        "special_expi": (sp.expi, 0.2, 3.0, []),
        "special_spence": (sp.spence, 0.2, 3.0, [1.0, 1.0003]),
        "special_ellipk": (sp.ellipk, -2.0, 0.9, [0.0, -0.0004]),
        "special_ellipe": (sp.ellipe, -2.0, 0.9, [0.0, 0.0004]),
    }
    for name, (ref, lo, hi, at) in unary.items():
        add(
            OpInfo(
                name,
                getattr(ops, name),
                lambda m, lo=lo, hi=hi, at=at: (
                    _unary_samples(m, lo, hi) + ([SampleInput(m.tensor(at), name="series")] if at else [])
                ),
                ref,
                REAL,
            )
        )
    add(
        OpInfo(
            "special_expn",
            lambda x, n: ops.special_expn(n, x),
            lambda m: [
                SampleInput(m((4,), low=0.3, high=3.0), (0.0,), name="n=0"),
                SampleInput(m((4,), low=0.3, high=3.0), (1.0,), name="n=1"),
                SampleInput(m((2, 3), low=0.3, high=3.0), (3.0,), name="n=3"),
            ],
            lambda x, n: sp.expn(n, x),
            REAL,
        )
    )
    add(
        OpInfo(
            "special_hyp1f1",
            lambda x, a, b: ops.special_hyp1f1(a, b, x),
            lambda m: [
                SampleInput(m((4,)), (1.5, 2.5), name="a=1.5 b=2.5"),
                SampleInput(m((2, 3)), (-0.5, 1.5), name="a<0"),
            ],
            lambda x, a, b: sp.hyp1f1(a, b, x),
            REAL,
        )
    )
    add(
        OpInfo(
            "special_lpmv",
            lambda x, m, v: ops.special_lpmv(m, v, x),
            lambda m: [
                SampleInput(m((4,), low=-0.9, high=0.9), (1.0, 2.5), name="m=1 v=2.5"),
                SampleInput(m((2, 3), low=-0.9, high=0.9), (0.0, 3.0), name="m=0 v=3"),
            ],
            lambda x, m, v: sp.lpmv(m, v, x),
            REAL,
        )
    )
    add(
        OpInfo(
            "special_hyp2f1",
            lambda z, a, b, c: ops.special_hyp2f1(a, b, c, z),
            lambda m: [SampleInput(m((4,), low=-2.0, high=0.8), (1.5, 0.5, 2.5), name="a=1.5 b=0.5 c=2.5")],
            lambda z, a, b, c: sp.hyp2f1(a, b, c, z),
            REAL,
        )
    )
    add(
        OpInfo(
            "_special_gammaincinv",
            lambda y, a, upper: ops._special_gammaincinv(a, y, upper),
            lambda m: [
                SampleInput(m((4,), low=0.1, high=0.9), (1.5, False), name="P"),
                SampleInput(m((2, 3), low=0.1, high=0.9), (0.7, True), name="Q"),
            ],
            lambda y, a, upper: (sp.gammainccinv if upper else sp.gammaincinv)(a, y),
            REAL,
        )
    )

    def joins(m):
        return [
            SampleInput(m((2,)), (m((3,)),), name="1-d"),
            SampleInput(m((2, 3)), (m((2, 3)),), name="2-d"),
            SampleInput(m(()), (m(()), m(())), name="0-d"),
        ]

    def stacks(m):
        return [
            SampleInput(m((3,)), (m((3,)),), name="1-d"),
            SampleInput(m((2, 3)), (m((1, 3)),), name="2-d"),
            SampleInput(m(()), (m(()), m(())), name="0-d"),
        ]

    def depth(m):
        return [SampleInput(m((2, 3)), (m((2, 3)),), name="2-d"), SampleInput(m((3,)), (m((3,)),), name="1-d")]

    for name, ref, samples in (
        ("hstack", np.hstack, joins),
        ("vstack", np.vstack, stacks),
        ("dstack", np.dstack, depth),
    ):
        op = getattr(ops, name)
        add(OpInfo(name, lambda *a, op=op: op(list(a)), samples, lambda *a, ref=ref: ref(a), REAL, composite=True))
    add(
        OpInfo(
            "column_stack",
            lambda *a: ops.column_stack(list(a)),
            lambda m: [SampleInput(m((3,)), (m((3, 2)),)), SampleInput(m((2, 2)), (m((2,)),))],
            lambda *a: np.column_stack(a),
            REAL,
            composite=True,
        )
    )

    # torch's cov and corrcoef keep a float32 input's dtype, NumPy's compute in float64
    def _r_cov(x, correction=1, fweights=None, aweights=None):
        return np.cov(x, ddof=correction, fweights=fweights, aweights=aweights).astype(x.dtype)

    def _r_corrcoef(x):
        return np.corrcoef(x).astype(x.dtype)

    add(
        OpInfo(
            "cov",
            ops.cov,
            lambda m: [
                SampleInput(m((3, 5))),
                SampleInput(m((4,)), name="1-d"),
                SampleInput(m((2, 4)), kwargs={"correction": 0}),
                SampleInput(
                    m((2, 4)),
                    kwargs={
                        "fweights": m.tensor([1, 2, 1, 3], dtype=np.int64),
                        "aweights": m.tensor([0.5, 1.0, 2.0, 1.5]),
                    },
                    name="weights",
                ),
            ],
            _r_cov,
            REAL_COMPLEX,
            composite=True,
        )
    )
    add(
        OpInfo(
            "corrcoef",
            ops.corrcoef,
            lambda m: [SampleInput(m((3, 5))), SampleInput(m((2, 4)))],
            _r_corrcoef,
            REAL_COMPLEX,
            composite=True,
        )
    )
