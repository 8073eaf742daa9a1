"""Testing utilities: `assert_close` (torch.testing's) and the op database (`pushforward.testing.opdb`).

>>> from pushforward.testing.opdb import OPS, check_op
>>> check_op("sin")["forward"]
True
"""

from .comparison import assert_close
from ..core.namespace import public_dir as _public_dir

__all__ = ["assert_close"]


__dir__ = _public_dir(globals())
