"""pushforward.scipy: SciPy's API on tensors, for `import pushforward.scipy as scipy` (with
`pushforward.numpy` as NumPy): special, stats, signal.convolve, linalg (solve_triangular,
cho_factor/cho_solve, sqrtm, expm, ...), integrate.odeint, each differentiable in both modes.

>>> import pushforward as pf
>>> from pushforward.scipy import special
>>> special.expit(pf.tensor(0.0))
tensor(0.5)
"""

import importlib as _importlib

__all__ = ["integrate", "linalg", "signal", "special", "stats"]


def __getattr__(name: str) -> object:
    # The submodules load on first use, as SciPy's own: NumPy's dispatch on tensors reads the
    # special functions (scipy/_special.py) whenever pushforward is imported, and SciPy's stats,
    # signal and integrate would add a second to that import.
    if name in __all__:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'pushforward.scipy' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(__all__)
