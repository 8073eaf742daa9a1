"""Autodiff: reverse mode (grad, backward), forward mode (forward_ad), custom Functions, checks."""

import importlib

from . import forward_ad
from .function import Function, once_differentiable
from ..engine.graph import autograd_backward as backward, grad
from ..engine.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ..engine.saved import (
    forbid_mutation_on_saved_tensors,
    is_mutation_on_saved_tensors_allowed,
    set_mutation_on_saved_tensors_allowed,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from ..core.namespace import public_dir as _public_dir

__all__ = [
    "forward_ad",
    "Function",
    "once_differentiable",
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "forbid_mutation_on_saved_tensors",
    "set_mutation_on_saved_tensors_allowed",
    "is_mutation_on_saved_tensors_allowed",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "functional",
]


def __getattr__(name: str) -> object:
    # functional imports the ops; load it on first use to keep imports acyclic.
    if name == "functional":
        return importlib.import_module(__name__ + ".functional")
    raise AttributeError(name)


__dir__ = _public_dir(globals())
