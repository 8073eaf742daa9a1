"""pushforward.numpy.linalg: NumPy's linalg on tensors (see pushforward.numpy).

>>> import pushforward as pf
>>> import pushforward.numpy as np
>>> np.linalg.det(pf.eye(2))
tensor(1.)
"""

import numpy as _onp

from .wrapping import wrap_namespace as _wrap_namespace

globals().update(_wrap_namespace(_onp.linalg, [n for n in dir(_onp.linalg) if not n.startswith("_")]))

__all__ = sorted(n for n in globals() if not n.startswith("_"))
