"""Testing utilities: `assert_close` (torch.testing's) and the op database (`pushforward.testing.opdb`).

>>> from pushforward.testing.opdb import OPS, check_op
>>> check_op("sin")["forward"]
True
"""

from .comparison import assert_close

__all__ = ["assert_close"]


def __dir__() -> list:
    # public names only: what the module imports is not part of its API
    return sorted(set(__all__))
