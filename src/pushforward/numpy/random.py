"""pushforward.numpy.random: NumPy's random module (random arrays are constants).

>>> import pushforward.numpy as np
>>> np.random.seed(0); np.random.randn(2).shape
(2,)
"""

import numpy.random as _npr

globals().update({n: getattr(_npr, n) for n in dir(_npr) if not n.startswith("_")})

__all__ = sorted(n for n in dir(_npr) if not n.startswith("_"))
