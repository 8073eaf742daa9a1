"""pushforward.scipy: SciPy's API on tensors, for `import pushforward.scipy as scipy` (with
`pushforward.numpy` as NumPy): special, stats, signal.convolve, linalg (solve_triangular,
cho_factor/cho_solve, sqrtm, expm, ...), integrate.odeint, each differentiable in both modes.

>>> import pushforward as pf
>>> from pushforward.scipy import special
>>> special.expit(pf.tensor(0.0))
tensor(0.5)
"""

from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
