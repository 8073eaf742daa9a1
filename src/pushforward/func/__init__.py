"""Composable function transforms: jvp, vjp, grad, jacfwd, jacrev, hessian, linearize, vmap.

The names and conventions follow ``torch.func`` (and JAX); see ``transforms`` for the details.

>>> import pushforward as pf
>>> float(pf.func.grad(lambda x: (x ** 3).sum())(pf.tensor([2.0]))[0])
12.0
"""

from ..core.pytree import TreeSpec, tree_flatten, tree_unflatten
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmapping import vmap
from ..core.namespace import public_dir as _public_dir
from .sparsity import hessian_sparsity, jacobian_sparsity
from .coloring import column_coloring, row_coloring, star_coloring
from .sparse_jacobians import sparse_hessian, sparse_jacfwd, sparse_jacrev
from .jet import jet

__all__ = [
    "jvp",
    "vjp",
    "grad",
    "grad_and_value",
    "jacfwd",
    "jacrev",
    "hessian",
    "linearize",
    "vmap",
    "tree_flatten",
    "tree_unflatten",
    "TreeSpec",
    "jacobian_sparsity",
    "hessian_sparsity",
    "column_coloring",
    "row_coloring",
    "star_coloring",
    "sparse_jacfwd",
    "sparse_jacrev",
    "sparse_hessian",
    "jet",
]


__dir__ = _public_dir(globals())
