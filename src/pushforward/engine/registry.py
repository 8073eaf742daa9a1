"""Names that lower layers call but may not import: filled once, at import time, from above.

The layers point one way (tests/test_layering.py): the autodiff engine and the derivative
formulas sit below the generated ops module that imports them, yet the engine needs a few ops
(``_view_embed``, ``_VIEW_SCATTER``, ...) and the formulas are expressions over all of them.
They reach the ops through `OPS`, which `pushforward.methods.bind` fills with the generated module's
names as soon as that module is imported; deferred tangents reach dispatch's tangent fitting
through `DISPATCH` the same way. A lookup is a plain attribute read (no import on the hot path).

>>> from pushforward.engine.registry import OPS
>>> import pushforward as pf
>>> OPS.sin is pf.sin
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["Registry", "OPS", "DISPATCH"]


class Registry:
    """A namespace of late-bound names; reading one before it is filled is a clear error."""

    def __init__(self, what: str) -> None:
        object.__setattr__(self, "_what", what)

    def fill(self, names: dict[str, Any]) -> None:
        """Add (or replace) the given names."""
        self.__dict__.update(names)

    def __getattr__(self, name: str) -> Any:
        # only reached for a missing name (a filled name is an ordinary instance attribute)
        raise AttributeError(
            f"{self._what} has no {name!r} (is pushforward fully imported? "
            "pushforward.methods.bind fills this registry)"
        )


OPS = Registry("the registry of generated ops")
DISPATCH = Registry("the registry of dispatch helpers")
