"""What the function transforms accept, checked at their entry as torch.func checks it.

Each check raises a clear error naming the transform and the rule (torch's wording where torch
names the rule): primals given as a tuple, tangents with the primals' exact structure, at least
one Tensor among the primals, only Tensors in them; a function whose output is non-empty and made
of Tensors only; with ``has_aux`` a pair ``(output, aux)`` with Tensors in aux; ``argnums`` an int
or a non-empty tuple of distinct ints in range; jacfwd/jacrev of real inputs and outputs only.

The output checks wrap ``f`` (:func:`checked`): the wrapper validates each result before the
transform reads it, and keeps ``f``'s attributes (``functools.wraps``).

>>> import pushforward as pf
>>> try:
...     pf.func.jvp(pf.sin, (pf.tensor([1.0]),), [pf.tensor([1.0])])
... except RuntimeError as e:
...     print(str(e).split(".")[0])
jvp(f, primals, tangents): Expected primals and tangents to have the same python structure
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..core.pytree import tree_flatten
from ..core.tensor import Tensor
from ..errors import OpError

__all__ = ["check_jvp_inputs", "check_primals", "check_argnums", "check_real_inputs", "checked"]

JVP = "jvp(f, primals, tangents)"


def _only_tensors(leaves: list, who: str, what: str) -> None:
    if not leaves:
        raise OpError(f"{who}: Expected {what} to have at least one Tensor (got none: nothing to differentiate)")
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, Tensor):
            raise OpError(
                f"{who}: Expected {what} to only contain Tensors, got unsupported type {type(leaf).__name__} (leaf {i})"
            )


def check_jvp_inputs(primals: Any, tangents: Any) -> None:
    """jvp's primals and tangents: tuples of the same python structure (a list is not a tuple), of Tensors."""
    if not isinstance(primals, tuple):
        raise OpError(
            f"{JVP}: Expected primals to be a tuple, got {type(primals).__name__}. "
            "E.g. it should be valid to call f(*primals)"
        )
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if not isinstance(tangents, tuple) or p_spec != t_spec:
        raise OpError(
            f"{JVP}: Expected primals and tangents to have the same python structure. For example, if primals "
            f"is a tuple of 3 tensors, tangents also must be. Got primals {_shape(primals)} and tangents "
            f"{_shape(tangents)}"
        )
    _only_tensors(p_leaves, JVP, "primals")
    _only_tensors(t_leaves, JVP, "tangents")


def check_primals(primals: tuple, who: str) -> None:
    """vjp/linearize's primals: at least one Tensor, and only Tensors."""
    _only_tensors(tree_flatten(primals)[0], who, "primals")


def _shape(tree: Any) -> str:
    if isinstance(tree, (tuple, list)):
        inner = ", ".join(_shape(x) for x in tree)
        if isinstance(tree, list):
            return f"[{inner}]"
        return f"({inner},)" if len(tree) == 1 else f"({inner})"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_shape(v)}" for k, v in tree.items()) + "}"
    return "Tensor" if isinstance(tree, Tensor) else type(tree).__name__


def check_argnums(argnums: Any, nargs: int, who: str) -> None:
    """argnums: an int, or a non-empty tuple of distinct ints, each naming a positional argument."""
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple)):
        raise OpError(f"{who}: argnums must be int or Tuple[int, ...], got: {type(argnums).__name__}")
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not nums:
        raise OpError(f"{who}: argnums must be non-empty")
    for a in nums:
        if isinstance(a, bool) or not isinstance(a, int):
            raise OpError(f"{who}: argnum must be int, got: {type(a).__name__} in argnums={argnums!r}")
        if not -nargs <= a < nargs:
            raise OpError(
                f"{who}: Got argnum={a}, but only {nargs} positional inputs (argnums must index f's positional "
                "arguments)"
            )
    if len({a % nargs for a in nums}) != len(nums):
        raise OpError(f"{who}: argnums must be unique, got {argnums!r}")


def check_real_inputs(args: tuple, argnums: Any, who: str) -> None:
    """jacfwd/jacrev take real inputs only (torch's rule: a Jacobian of a complex function is not
    one matrix but depends on a convention, so both refuse rather than pick one)."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    leaves = [leaf for a in nums for leaf in tree_flatten(args[a])[0]]
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor) and leaf.dtype.kind == "c":
            raise OpError(
                f"{who}: Expected all inputs to be real but received complex tensor at flattened input idx: {i}"
            )


def _captured(f: Callable, args: tuple) -> list:
    """The Tensors f closes over (its closure cells, the globals its code names, a partial's bound
    arguments), one level into lists, tuples and dicts; not those also passed as arguments."""
    found: list = []
    fn = f
    while isinstance(fn, functools.partial):
        found += list(fn.args) + list(fn.keywords.values())
        fn = fn.func
    fn = getattr(fn, "__wrapped__", fn)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:  # (an empty cell)
            continue
    code, glob = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    if code is not None:
        found += [glob[n] for n in code.co_names if n in glob]
    flat: list = []
    for v in found:
        if isinstance(v, Tensor):
            flat.append(v)
        elif isinstance(v, (list, tuple)):
            flat += [x for x in v if isinstance(x, Tensor)]
        elif isinstance(v, dict):
            flat += [x for x in v.values() if isinstance(x, Tensor)]
    passed = {id(leaf) for leaf in tree_flatten(args)[0]}
    return [t for t in flat if id(t) not in passed and getattr(t, "_st", None) is not None]


def checked(
    f: Callable, who: str, has_aux: bool, real: bool = False, via: str | None = None, reverse: bool = False
) -> Callable:
    """f, with each result checked: non-empty and Tensors only (and real ones if `real`), with
    `has_aux` a pair (output, aux) whose aux holds Tensors only. `via` names the transform that
    runs f (jacfwd runs jvp) in the messages about the output's structure. For a reverse
    transform (`reverse`), a tensor f closes over and writes into in place, with a value taking
    part in the transform (it gets a history), is torch's error "mutate a captured Tensor"."""
    via = via or who

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        watched = _captured(f, args) if reverse else ()
        before = [(t._st.version, t._grad_fn) for t in watched]
        res = f(*args, **kwargs)
        for t, (version, grad_fn) in zip(watched, before):
            if t._st.version != version and t._grad_fn is not grad_fn and t._grad_fn is not None:
                raise OpError(
                    f"{who}: the function mutated a captured Tensor (shape {tuple(t.shape)}, closed over, not an "
                    "argument) in place with a value that depends on the transform's inputs. torch's rule: "
                    "a function under a transform may not call an in-place operation that would mutate a captured "
                    "Tensor; pass it as an argument, or write into a new tensor"
                )
        out = res
        if has_aux:
            if not (isinstance(res, tuple) and len(res) == 2):
                raise OpError(f"{via}: output of function f should be a tuple: a pair (output, aux) if has_aux is True")
            out, aux = res
            for leaf in tree_flatten(aux)[0]:
                if not isinstance(leaf, Tensor):
                    raise OpError(f"{who}: aux: Expected tensors, got unsupported type {type(leaf).__name__}")
        leaves = tree_flatten(out)[0]
        if not leaves or out is None:
            raise OpError(f"{via}: Expected f to be a function that has non-empty output (got {out!r})")
        for i, leaf in enumerate(leaves):
            if not isinstance(leaf, Tensor):
                # (torch.func's rule: a number returned is refused, not taken for a constant)
                raise OpError(
                    f"{via}: expected f(*primals) to return only tensors, got unsupported type "
                    f"{type(leaf).__name__} (output leaf {i})"
                )
            if real and leaf.dtype.kind == "c":
                raise OpError(
                    f"{who}: Expected all outputs to be real but received complex tensor at flattened output idx: {i}"
                )
        return res

    return run
