"""pushforward.nn: neural-network functions (issue 13). See `pushforward.nn.functional`."""
from __future__ import annotations

from . import functional

__all__ = ["functional"]
