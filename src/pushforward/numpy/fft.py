"""pushforward.numpy.fft: NumPy's fft on tensors (see pushforward.numpy).

>>> import pushforward as pf
>>> import pushforward.numpy as np
>>> np.fft.fft(pf.tensor([1.0, 0.0])).shape
(2,)
"""

import numpy as _onp

from ._creation import making as _making
from .wrapping import wrap_namespace as _wrap_namespace

globals().update(_wrap_namespace(_onp.fft, [n for n in dir(_onp.fft) if not n.startswith("_")]))
# the sample frequencies are new arrays: tensors, as the drop-in's other creation functions make
fftfreq = _making(_onp.fft.fftfreq)
rfftfreq = _making(_onp.fft.rfftfreq)

__all__ = sorted(n for n in globals() if not n.startswith("_"))
