"""Thread-local autodiff state: grad mode and the stack of forward-AD levels.

Both live in one object so the hot path reads a single thread-local.
"""
from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.grad_enabled: bool = True
        # Stack of live forward-AD levels (innermost last); see forward_ad.py.
        self.levels: list = []


STATE = _State()
