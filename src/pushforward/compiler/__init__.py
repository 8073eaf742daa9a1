"""pf.compile: trace a function once per signature, run it as straight-line NumPy (docs/compile.md)."""

from .compiled import CompiledFunction, compile  # noqa: A004 - torch's name

__all__ = ["CompiledFunction", "compile"]
