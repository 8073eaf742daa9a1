"""Grad mode: whether ops record the tape (thread-local). Tangents propagate regardless.

>>> import pushforward as pf
>>> x = pf.tensor([1.0], requires_grad=True)
>>> with pf.no_grad():
...     (x * 2).requires_grad
False
"""

from __future__ import annotations

import functools

from .state import STATE

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


def is_grad_enabled() -> bool:
    """Whether operations are recorded on the tape now (False inside `no_grad`).

    >>> import pushforward as pf
    >>> with pf.no_grad():
    ...     pf.is_grad_enabled()
    False
    """
    return STATE.grad_enabled


class _GradMode:
    """Base of the grad-mode context managers; each also works as a decorator."""

    mode: bool = True

    def __enter__(self) -> None:
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self.mode

    def __exit__(self, *exc) -> None:
        STATE.grad_enabled = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with type(self)() if type(self) is not set_grad_enabled else set_grad_enabled(self.mode):
                return fn(*a, **k)

        return wrapper


class no_grad(_GradMode):
    """Disable tape recording inside the block."""

    mode = False


class enable_grad(_GradMode):
    """Enable tape recording inside the block."""

    mode = True


class set_grad_enabled(_GradMode):
    """Set grad mode to `mode`; takes effect immediately and is undone on exit when used as a context."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = STATE.grad_enabled
        STATE.grad_enabled = self.mode

    def __enter__(self) -> None:
        pass

    def __call__(self, fn):
        STATE.grad_enabled = self._prev  # as a decorator it changes nothing until fn runs (torch's rule)
        return super().__call__(fn)
