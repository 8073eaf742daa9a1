"""pushforward.scipy.special: SciPy's special functions on tensors, differentiable in both modes.

Names and argument orders are SciPy's. Functions of an order and an argument (iv, jv, yn,
gammainc, betainc, ...) are differentiable in the argument; differentiating the order raises
NotImplementedError naming it. The same functions run when a scipy.special ufunc is called on a
tensor (`scipy.special.erf(t)`).

>>> import pushforward as pf
>>> from pushforward.scipy import special
>>> pf.func.grad(lambda x: special.gammaln(x))(pf.tensor(3.0))
tensor(0.92278434)
"""

from . import _special as _impl

globals().update({n: getattr(_impl, n) for n in _impl.NAMES})

__all__ = list(_impl.NAMES)
