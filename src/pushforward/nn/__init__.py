"""pushforward.nn: neural-network functions. See `pushforward.nn.functional`."""

from __future__ import annotations

from . import functional

__all__ = ["functional"]


def __dir__() -> list:
    # public names only: what the module imports is not part of its API
    return sorted(set(__all__))
