"""vmap: a function of one example made a function of a batch, by the ops' batching rules.

``vmap(f, in_dims=0, out_dims=0)(*args)`` calls f once with every batched argument replaced by
a BatchedTensor (the batch dim moved to the front of its physical tensor); each op f calls runs
once on the whole batch by its rule (batching.py), and the outputs' batch dims are moved to
`out_dims`. Composes with the autodiff transforms: ``vmap(grad(f))`` gives per-example
gradients, ``vmap(jvp(...))`` and ``jvp(vmap(...))`` work, as in torch.func.

>>> import pushforward as pf
>>> from pushforward.func import vmap
>>> vmap(lambda x, w: (x * w).sum(), in_dims=(0, None))(pf.ones(3, 2), pf.tensor([1.0, 2.0]))
tensor([3., 3., 3.])
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..core.batched import BatchedTensor, new_batch_level, physical
from ..core.tensor import Tensor
from ..dispatch.promotion import open_promotions, settle_promotions
from ..errors import OpError, OpValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..ops.generated import cat, movedim

__all__ = ["vmap"]

# (level, batch size) of the vmaps being run, innermost last (func.grad inside vmap reads it)
ACTIVE: list = []


def vmap(
    f: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "different", *, chunk_size: int | None = None
) -> Callable:
    """f mapped over a batch dimension of its arguments (torch.func.vmap).

    in_dims: an int or None for every argument, or a tuple with one entry per positional
    argument (an int, None for "not batched", or a nested structure matching a pytree
    argument). out_dims: an int, or one per output. chunk_size: run the batch in chunks of at
    most this many elements (bounds memory; results are concatenated). Random ops draw
    different values per element (randomness="different", torch's default wording).

    >>> import pushforward as pf
    >>> vmap(pf.dot)(pf.ones(4, 3), pf.ones(4, 3))
    tensor([3., 3., 3., 3.])
    """
    if randomness not in ("different", "error"):
        raise OpValueError(f"vmap: randomness={randomness!r} is not supported (use 'different' or 'error')")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise OpValueError(f"vmap: chunk_size must be a positive int or None, got {chunk_size!r}")

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        leaves, dims, spec = _flat_in_dims(args, in_dims)
        size = _batch_size(leaves, dims)
        if chunk_size is None or chunk_size >= size:
            return _run(f, leaves, dims, spec, kwargs, size, out_dims)
        parts = []
        for start in range(0, size, chunk_size):
            stop = min(size, start + chunk_size)
            chunk = [x if d is None else x.narrow(d, start, stop - start) for x, d in zip(leaves, dims)]
            parts.append(_run(f, chunk, dims, spec, kwargs, stop - start, out_dims))
        return _concat(parts, out_dims)

    return wrapper


def _flat_in_dims(args: tuple, in_dims: Any) -> tuple[list, list, Any]:
    """The argument leaves and one batch dim (or None) per leaf."""
    leaves, spec = tree_flatten(tuple(args))
    if isinstance(in_dims, int) or in_dims is None:
        return leaves, [in_dims if isinstance(x, Tensor) else None for x in leaves], spec
    if not isinstance(in_dims, (tuple, list)) or len(in_dims) != len(args):
        raise OpValueError(
            f"vmap: in_dims must be an int, None, or a tuple with one entry per positional argument "
            f"({len(args)}), got {in_dims!r}"
        )
    dims: list = []
    for a, d in zip(args, in_dims):
        sub, _ = tree_flatten(a)
        if isinstance(d, int) or d is None:
            dims.extend(d if isinstance(x, Tensor) else None for x in sub)
        else:
            d_leaves, _ = tree_flatten(d)
            if len(d_leaves) != len(sub):
                raise OpValueError(f"vmap: in_dims entry {d!r} does not match the structure of its argument")
            dims.extend(d_leaves)
    return leaves, dims, spec


def _batch_size(leaves: list, dims: list) -> int:
    sizes = {}
    for i, (x, d) in enumerate(zip(leaves, dims)):
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise OpValueError(
                f"vmap: in_dims gives a batch dim for argument leaf {i}, which is a {type(x).__name__}, not a Tensor"
            )
        if not -x.ndim <= d < x.ndim:
            raise OpValueError(f"vmap: in_dim {d} is out of range for an argument of shape {tuple(x.shape)}")
        sizes[i] = x.shape[d]
    if not sizes:
        raise OpValueError("vmap: at least one argument must be batched (in_dims are all None)")
    if len(set(sizes.values())) != 1:
        shown = ", ".join(f"leaf {i}: {n}" for i, n in sizes.items())
        raise OpValueError(f"vmap: the batched arguments have different batch sizes ({shown})")
    return next(iter(sizes.values()))


def _run(f: Callable, leaves: list, dims: list, spec: Any, kwargs: dict, size: int, out_dims: Any) -> Any:
    level = new_batch_level()
    wrapped = [x if d is None else BatchedTensor(movedim(x, d, 0), level) for x, d in zip(leaves, dims)]
    ACTIVE.append((level, size))
    open_promotions(level)
    try:
        try:
            out = f(*tree_unflatten(wrapped, spec), **kwargs)
        finally:
            ACTIVE.pop()
        o_leaves, o_spec = tree_flatten(out)
        if isinstance(out_dims, int):
            odims = [out_dims] * len(o_leaves)
        else:
            odims, _ = tree_flatten(out_dims)
            if len(odims) != len(o_leaves):
                raise OpValueError(f"vmap: out_dims {out_dims!r} does not match the {len(o_leaves)} outputs")
        result = tree_unflatten([_unbatch(o, level, size, d) for o, d in zip(o_leaves, odims)], o_spec)
    except BaseException:
        settle_promotions(level, failed=True)
        raise
    del out, o_leaves  # (the results are physical tensors: a promoted tensor still alive now was made outside)
    settle_promotions(level)
    return result


def _unbatch(o: Any, level: int, size: int, out_dim: int | None) -> Any:
    """An output's physical tensor at `level`, batch dim moved to out_dim (an output that does not
    depend on the batch is expanded to it, as torch does)."""
    if not isinstance(o, Tensor):
        raise OpError(f"vmap: the function must return Tensors (or pytrees of them), got a {type(o).__name__}")
    if out_dim is None:
        if type(o) is BatchedTensor and o._blevel == level:
            raise OpError("vmap: out_dims=None for an output that depends on the batch")
        return o
    p = physical(o, level, size)
    return p if out_dim == 0 else movedim(p, 0, out_dim)


def _concat(parts: list, out_dims: Any) -> Any:
    first, spec = tree_flatten(parts[0])
    cols = [tree_flatten(p)[0] for p in parts]
    odims = [out_dims] * len(first) if isinstance(out_dims, int) else tree_flatten(out_dims)[0]
    return tree_unflatten([cat([c[i] for c in cols], odims[i]) for i in range(len(first))], spec)
