"""Helpers shared by the pushforward.scipy modules (their home: methods.scipy_common).

>>> as_float([1, 2]).dtype
dtype('float64')
"""

from ..methods.scipy_common import as_float, differentiated, refuse_derivative

__all__ = ["as_float", "differentiated", "refuse_derivative"]
