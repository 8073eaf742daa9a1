"""What a public module lists: its `__dir__` shows the names of its `__all__` only (what the
module imports for its own use is not part of its API, and tab completion should not offer it).

>>> import pushforward.fft as fft
>>> "fft" in dir(fft) and "xp" not in dir(fft)
True
"""

from __future__ import annotations

from typing import Callable, Iterable

__all__ = ["public_dir"]


def public_dir(namespace: dict, extra: Iterable[str] = ()) -> Callable[[], list]:
    """A module's `__dir__`: the sorted names of its `__all__` (read when called, so `__all__` may
    be assigned later in the module) and `extra`. Use: ``__dir__ = public_dir(globals())``."""
    extra = frozenset(extra)

    def __dir__() -> list:
        return sorted(set(namespace["__all__"]) | extra)

    return __dir__
