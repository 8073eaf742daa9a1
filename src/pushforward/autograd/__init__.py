"""Autodiff: reverse mode (grad, backward), forward mode (forward_ad), custom Functions, checks."""
from . import forward_ad
from .function import Function, once_differentiable
from .graph import grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["forward_ad", "Function", "once_differentiable", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "gradcheck", "gradgradcheck", "GradcheckError", "functional"]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, grad_variables=None,
             inputs=None) -> None:
    """Accumulate the gradients of `tensors` (a tensor or a sequence) into the leaves' .grad, as
    torch.autograd.backward; ``grad_tensors`` holds one gradient per tensor (None for scalars).

    >>> import pushforward as pf
    >>> x = pf.tensor([1.0, 2.0], requires_grad=True)
    >>> pf.autograd.backward([(x * x).sum(), x.sum()]); x.grad
    tensor([3., 5.])
    """
    from .graph import backward as _backward
    if grad_variables is not None:  # torch's deprecated name
        grad_tensors = grad_variables
    _backward(tensors, grad_tensors, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


def __getattr__(name):
    # functional imports the ops; load it on first use to keep imports acyclic.
    if name == "functional":
        import importlib
        return importlib.import_module(__name__ + ".functional")
    raise AttributeError(name)
