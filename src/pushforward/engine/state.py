"""Thread-local autodiff state: grad mode, the stack of forward-AD levels, the saved-tensor switch.

Both live in one object so the hot path reads a single thread-local.
"""

from __future__ import annotations

import threading

__all__ = ["STATE"]


class _State(threading.local):
    def __init__(self) -> None:
        self.grad_enabled: bool = True
        # Stack of live forward-AD levels (innermost last) and the same levels by their unique id;
        # see forward_ad.py. Tangents are keyed by the id, so another thread's level 0 is never ours.
        self.levels: list = []
        self.by_uid: dict = {}
        # An in-place write into memory a live tape node saved makes the node keep the old values
        # (engine/saved.py); False: torch's SavedTensorModifiedError at backward instead
        self.saved_mutation_allowed: bool = True


STATE = _State()
