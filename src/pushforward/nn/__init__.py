"""pushforward.nn: neural-network functions. See `pushforward.nn.functional`."""

from __future__ import annotations

from . import functional
from ..core.namespace import public_dir as _public_dir

__all__ = ["functional"]


__dir__ = _public_dir(globals())
