"""Composable function transforms: jvp, vjp, grad, jacfwd, jacrev, hessian, linearize.

The names and conventions follow ``torch.func`` (and JAX). Arguments and results may be
*pytrees*: nested tuples, lists and dicts whose leaves are tensors.

Transforms compose by nesting, and perturbations never get confused:

* forward transforms (``jvp``, ``jacfwd``) open a new dual level and make the inputs dual
  at it with ``make_dual``, which keeps the tangents of enclosing levels and is
  differentiable in reverse mode;
* reverse transforms (``vjp``, ``grad``, ``jacrev``) give the function a fresh alias of
  each input: a fresh leaf (``x.detach().requires_grad_()``) when the input carries no
  tape (made dual again with the input's tangents, if it has any), otherwise ``x + z``
  with ``z`` a fresh zero leaf, so the tape and
  the tangents of enclosing transforms flow through while the gradient is taken with
  respect to this alias only. The backward pass records a graph (``create_graph``) only
  when the result can be differentiated further by an enclosing transform, that is when
  the recorded computation reaches a leaf that belongs elsewhere: an input or closed-over
  tensor that requires grad, or a leaf of an enclosing reverse transform
  (``reverse_levels``; docs/design.md, "Nested transforms").
  Tangents of enclosing dual levels propagate through backward formulas either way.
* ``jvp(grad(f))`` (and ``grad_and_value``) with no enclosing level and nothing requiring
  grad runs on an untracked level, as ``autograd.functional.hvp`` does: the tangents are
  computed on arrays, and only those the backward pass reads. If ``f`` turns out to need
  recorded tangents (it calls ``make_dual``/``unpack_dual`` at that level, or its result
  keeps a tape to tensors requiring grad), it runs again on an ordinary level.

>>> import pushforward as pf
>>> from pushforward.func import grad, jacfwd, jvp
>>> f = lambda x: (x.sin() * x).sum()
>>> x = pf.tensor([0.5, 1.0])
>>> jvp(grad(f), (x,), (pf.tensor([1.0, 0.0]),))[1]      # a Hessian-vector product
tensor([1.51545235, 0.        ])
>>> jacfwd(jacfwd(lambda x: x ** 3))(pf.tensor([2.0])).shape
(1, 1, 1)
"""

from __future__ import annotations

from typing import Any, Callable

from ..autograd import forward_ad as fwAD
from ..engine.tangents import _drop_tangent, _view_alias, levels_of, tangent_of, tangent_requires_grad
from ..engine.graph import AccumulateGrad, edge, tape_free
from ..engine.grad_mode import enable_grad
from ..autograd.jacobian_util import basis_rows, check_not_interpreted, split_columns, split_rows, unbatch
from ..engine.pending import Pending
from ..engine.graph import grad as _autograd_grad
from ..engine.state import STATE
from ..errors import OpError, OpRuntimeTypeError, OpValueError, SavedTensorModifiedError
from ..core.creation import ones_like, zeros, zeros_like
from ..ops.generated import cat
from ..core.pytree import TreeSpec, _reorder_like, _same_structure, tree_flatten, tree_unflatten
from ..core.tensor import Tensor
from .vmapping import ACTIVE as VMAP_ACTIVE
from .reverse_levels import belongs_elsewhere, claim, reverse_level
from .checks import check_argnums, check_jvp_inputs, check_primals, check_real_inputs, checked
from ..core.batched import BatchedTensor, batched_in, new_batch_level, physical_in

__all__ = ["jvp", "vjp", "grad", "grad_and_value", "jacfwd", "jacrev", "hessian", "linearize"]


def _is_diff(x: Any) -> bool:
    return isinstance(x, Tensor) and x.dtype.kind in "fc"


def _has_tangent(x: Tensor) -> bool:
    return bool(levels_of(x)) if STATE.levels else False


def _check_tensor_leaves(leaves: list, who: str, what: str) -> None:
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, Tensor):
            raise OpError(
                f"{who}: expected every leaf of {what} to be a Tensor, but leaf {i} is a {type(leaf).__name__}"
            )


def _check_diff_primal(p: Tensor, i: int, who: str) -> None:
    # torch raises here: an integer primal has no tangent space, and silently treating it as a
    # constant would drop the tangent the caller passed.
    if not _is_diff(p):
        raise OpValueError(f"{who}: Expected primal {i} to be floating point or complex, but got: {p.dtype}")


def _zeros_like(x: Tensor) -> Tensor:
    return zeros_like(x)


def _fresh(x: Tensor, uid: int) -> tuple[Tensor, Tensor]:
    """(the alias of x given to the function by the reverse level `uid`, the leaf the gradient is
    taken with respect to, claimed by that level); see the module docstring."""
    if not x._requires_grad and not _has_tangent(x):
        leaf = claim(x.detach().requires_grad_(), uid)
        return leaf, leaf
    if not x._requires_grad:
        # x carries tangents only: a fresh leaf made dual again with x's tangents (as
        # functional.hvp does) costs no extra op in the forward and backward passes, unlike x + z
        leaf = claim(x.detach().requires_grad_(), uid)
        # (make_dual's view step, without counting as a user call: see _untracked_ok)
        alias = _view_alias(leaf, {lv: tangent_of(x, lv) for lv in levels_of(x)})
        return alias, leaf
    z = claim(zeros_like(x).requires_grad_(), uid)
    return x + z, z


def _tangent_on_tape(x: Any) -> bool:
    """Does a tangent of x require grad (reverse-over-forward: a jvp whose tangent requires grad,
    around this transform)? Then the backward pass must be recorded, or the tangents it computes
    (Hessian-vector products in jvp(grad(f))) would lose their history."""
    return type(x) is Tensor and _has_tangent(x) and tangent_requires_grad(x)


def _reaches_outer(outputs: list, uid: int) -> bool:
    """True if the tape of `outputs` reaches a leaf that belongs elsewhere than the reverse level
    `uid`: a closed-over tensor or an input that requires grad, or a leaf of an enclosing
    transform. Its backward pass must then be recorded, or the enclosing transform would lose the
    dependence (docs/design.md, "Nested transforms")."""
    seen: set = set()
    stack = []
    for o in outputs:
        if isinstance(o, Tensor) and o._requires_grad:
            e = edge(o)
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    while stack:
        n = stack.pop()
        if isinstance(n, AccumulateGrad):
            if belongs_elsewhere(n.variable, uid):
                return True
            continue
        for e in n.next_edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    return False


def _strip(x: Any, create_graph: bool) -> Any:
    """A result handed back by a reverse transform: tape-free unless the tape is needed outside."""
    if isinstance(x, Tensor) and not create_graph:
        return tape_free(x)
    return x


def _primal(x: Any, level: int) -> Any:
    if isinstance(x, Tensor):
        return fwAD.unpack_dual(x, level=level).primal
    return x


def _normalize_argnums(argnums: int | tuple, nargs: int, who: str) -> tuple[tuple, bool]:
    if isinstance(argnums, int):
        nums, single = (argnums,), True
    elif isinstance(argnums, (tuple, list)) and argnums and all(isinstance(a, int) for a in argnums):
        nums, single = tuple(argnums), False
    else:
        raise OpError(f"{who}: argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise OpError(
                f"{who}: got argnums={argnums!r}, but the function was called with {nargs} positional argument(s)"
            )
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise OpError(f"{who}: argnums {argnums!r} contains duplicates")
    return tuple(out), single


def _split_aux(out: Any, has_aux: bool, who: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise OpError(
            f"{who}: with has_aux=True the function must return a pair (output, aux), got {type(out).__name__}"
        )
    return out[0], out[1]


class _Reverse:
    """One run of f with fresh aliases of selected argument leaves, ready for vjps.

    Inside vmap the tape is recorded on the physical tensors (one batch element per row), so the
    gradients are taken there: every selected leaf becomes a physical leaf of the batch (an
    unbatched one is expanded, so each element gets its own gradient: per-example gradients)
    and the results are batched again."""

    def __init__(self, f: Callable, args: tuple, kwargs: dict, argnums: tuple, has_aux: bool, who: str):
        self.vmapped = list(VMAP_ACTIVE)  # (batch level, size) of every vmap around, innermost last
        self.specs = []
        self.primal_leaves: list = []  # original leaves of the selected args, per arg
        self.targets: list = []  # tensors the gradient is taken with respect to
        with reverse_level() as uid:
            new_args, any_tape = self._fresh_args(args, argnums, uid, who)
            with enable_grad():
                out = f(*new_args, **kwargs)
            out, aux = _split_aux(out, has_aux, who)
            self.out_leaves, self.out_spec = tree_flatten(out)
            _check_tensor_leaves(self.out_leaves, who, "the function's output")
            check_not_interpreted(self.out_leaves, who)
            self.aux_leaves, self.aux_spec = tree_flatten(aux)
            # the backward pass is recorded only if an enclosing transform can see the graph
            results = [self._physical(a) for a in self.out_leaves + self.aux_leaves if isinstance(a, Tensor)]
            self.outer = STATE.grad_enabled and (any_tape or _reaches_outer(results, uid))

    def _fresh_args(self, args: tuple, argnums: tuple, uid: int, who: str) -> tuple[list, bool]:
        """The arguments with fresh aliases of the selected leaves (claimed by the level `uid`), and
        whether an input's tape or tangent can be seen by an enclosing transform."""
        new_args = list(args)
        any_tape = False
        for a in argnums:
            leaves, spec = tree_flatten(args[a])
            _check_tensor_leaves(leaves, who, f"argument {a}")
            self.specs.append(spec)
            fresh = []
            for i, leaf in enumerate(leaves):
                if not _is_diff(leaf):  # as torch: an integer leaf cannot require grad
                    raise OpError(
                        f"{who}: only Tensors of floating point or complex dtype can require gradients "
                        f"(argument {a}, leaf {i} has dtype {leaf.dtype})"
                    )
                with enable_grad():
                    alias, target = _fresh(self._physical(leaf), uid)
                any_tape = any_tape or self._physical(leaf)._requires_grad or _tangent_on_tape(leaf)
                fresh.append(self._batched(alias))
                self.targets.append(target)
                self.primal_leaves.append(leaf)
            new_args[a] = tree_unflatten(fresh, spec)
        return new_args, any_tape

    def _physical(self, x: Any) -> Any:
        """x as the tape sees it: inside vmaps, its physical tensor through every vmap's level."""
        if not self.vmapped or not isinstance(x, Tensor):
            return x
        return physical_in(x, self.vmapped)

    def _batched(self, x: Any) -> Any:
        return x if x is None else batched_in(x, self.vmapped)

    def output(self) -> Any:
        return tree_unflatten([self._stripped(o) for o in self.out_leaves], self.out_spec)

    def aux(self) -> Any:
        return tree_unflatten([self._stripped(a) for a in self.aux_leaves], self.aux_spec)

    def _stripped(self, x: Any) -> Any:
        levels = {level for level, _ in self.vmapped}
        if type(x) is BatchedTensor and x._blevel in levels:
            return BatchedTensor(self._stripped(x._phys), x._blevel)
        return _strip(x, self.outer)

    def pullback(self, outs: list, cts: list, *, create_graph: bool, retain_graph: bool = True) -> list:
        """Gradients of sum(<outs, cts>) w.r.t. the targets (zeros where independent).

        ``retain_graph=False`` (one pullback only) frees the saved arrays as the pass goes."""
        if self.vmapped:
            outs = [self._physical(o) for o in outs]
            cts = [self._physical(c) for c in cts]
        pairs = [(o, c) for o, c in zip(outs, cts) if o._requires_grad and c is not None]
        idx = [i for i, t in enumerate(self.targets) if t is not None]
        res: list = [None] * len(self.targets)
        if pairs and idx:
            gs = _autograd_grad(
                [p[0] for p in pairs],
                [self.targets[i] for i in idx],
                grad_outputs=[p[1] for p in pairs],
                retain_graph=retain_graph or create_graph,
                create_graph=create_graph,
                allow_unused=True,
            )
            for i, g in zip(idx, gs):
                res[i] = self._batched(g)
        out = []
        for leaf, g in zip(self.primal_leaves, res):
            if g is None:
                g = _zeros_like(leaf) if _is_diff(leaf) else None
            out.append(g)
        return out

    def per_arg(self, flat: list) -> list:
        trees = []
        k = 0
        for spec in self.specs:
            n = spec.num_leaves
            trees.append(tree_unflatten(flat[k : k + n], spec))
            k += n
        return trees


# -- jvp ---------------------------------------------------------------------------------------


def jvp(f: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False) -> tuple:
    """(f(*primals), J(primals) @ tangents) by forward AD at a new dual level.

    `primals` and `tangents` are tuples (of pytrees) of the same structure. Returns
    ``(output, jvp_out)``, or ``(output, jvp_out, aux)`` with ``has_aux=True``. With
    ``strict=True`` an output that does not depend on the primals is an error (otherwise
    its tangent is zero).

    >>> import pushforward as pf
    >>> jvp(lambda x: x * x, (pf.tensor([3.0]),), (pf.tensor([1.0]),))
    (tensor([9.]), tensor([6.]))
    """
    check_jvp_inputs(primals, tangents)
    f = checked(f, "jvp(f, primals, tangents)", has_aux)
    if not isinstance(primals, (tuple, list)):
        raise OpError(f"jvp: expected primals to be a tuple, got {type(primals).__name__}")
    if not isinstance(tangents, (tuple, list)):
        raise OpError(f"jvp: expected tangents to be a tuple, got {type(tangents).__name__}")
    p_leaves, p_spec = tree_flatten(tuple(primals))
    _check_tensor_leaves(p_leaves, "jvp", "primals")
    t_leaves = _tangent_leaves(tuple(tangents), p_leaves, p_spec, "jvp")
    for i, p in enumerate(p_leaves):
        _check_diff_primal(p, i, "jvp")
    if _untracked_ok(f, p_leaves, t_leaves):
        res = _jvp_run(f, p_leaves, t_leaves, p_spec, strict, has_aux, untracked=True)
        if res is not None:
            return res
    return _jvp_run(f, p_leaves, t_leaves, p_spec, strict, has_aux, untracked=False)


def _tangent_leaves(tangents: tuple, p_leaves: list, p_spec: TreeSpec, who: str) -> list:
    """The leaves of `tangents`, checked against the primals': same structure, Tensors, same shapes."""
    _, t_spec = tree_flatten(tangents)
    if not _same_structure(p_spec, t_spec):
        raise OpError(f"{who}: expected primals and tangents to have the same structure, got {p_spec} and {t_spec}")
    t_leaves = _reorder_like(tangents, p_spec)
    _check_tensor_leaves(t_leaves, who, "tangents")
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        if p.shape != t.shape:
            raise OpError(f"{who}: tangent {i} has shape {tuple(t.shape)} but its primal has shape {tuple(p.shape)}")
    return t_leaves


def _untracked_ok(f: Callable, p_leaves: list, t_leaves: list) -> bool:
    """May jvp run `f` on an untracked level (functional.hvp's fast forward-over-reverse)?

    Only for f made by :func:`grad` / :func:`grad_and_value` (the hvp spelling
    ``jvp(grad(f))``), with no enclosing dual level and no primal or tangent requiring grad:
    then nothing outside can differentiate the tangents. What f does inside is checked after
    the run (:func:`_jvp_run`); if that check fails, f runs a second time on an ordinary level.
    """
    if not getattr(f, "_pf_reverse", False) or STATE.levels:
        return False
    return not any(x._requires_grad for x in p_leaves) and not any(x._requires_grad for x in t_leaves)


def _jvp_run(
    f: Callable, p_leaves: list, t_leaves: list, p_spec: TreeSpec, strict: bool, has_aux: bool, untracked: bool
) -> tuple | None:
    """One run of jvp at a new level; None if an untracked run turns out unsafe (see below)."""
    with fwAD.untracked_level() if untracked else fwAD.dual_level() as level:
        duals = [fwAD.make_dual(p, t, level=level) for p, t in zip(p_leaves, t_leaves)]
        ran = _run_at_level(f, list(tree_unflatten(duals, p_spec)), {}, level, untracked, has_aux, "jvp")
        if ran is None:
            return None
        o_leaves, o_spec, a_leaves, a_spec = ran
        prim_out, tan_out = [], []
        for i, o in enumerate(o_leaves):
            p, t = fwAD.unpack_dual(o, level=level)
            if t is None:
                if strict:
                    raise OpError(
                        f"jvp: output {i} of the function does not depend on the primals; "
                        "this is not allowed with strict=True"
                    )
                t = _zeros_like(p)
            prim_out.append(p)
            tan_out.append(t)
        if has_aux:
            aux = tree_unflatten([_primal(a, level) for a in a_leaves], a_spec)
    res = (tree_unflatten(prim_out, o_spec), tree_unflatten(tan_out, o_spec))
    return res + (aux,) if has_aux else res


def _run_at_level(
    f: Callable, args: list, kwargs: dict, level: int, untracked: bool, has_aux: bool, who: str
) -> tuple | None:
    """f(*args) at the dual level `level`: (output leaves, spec, aux leaves, spec); None when the
    level is untracked and that turns out unsafe: f read or set tangents of this level itself, or
    its results keep a tape that reaches tensors requiring grad (f closes over them), so the
    tangents may be differentiated in reverse mode and must be recorded (the caller runs f again
    on an ordinary level)."""
    lvl = STATE.levels[level]
    calls = lvl.user_calls
    out, aux = _split_aux(f(*args, **kwargs), has_aux, who)
    o_leaves, o_spec = tree_flatten(out)
    _check_tensor_leaves(o_leaves, who, "the function's output")
    a_leaves, a_spec = tree_flatten(aux)
    if untracked and (
        lvl.user_calls != calls or any(isinstance(x, Tensor) and x.requires_grad for x in o_leaves + a_leaves)
    ):
        return None
    return o_leaves, o_spec, a_leaves, a_spec


# -- vjp ---------------------------------------------------------------------------------------


def vjp(f: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """(f(*primals), vjp_fn): vjp_fn(cotangents) returns a tuple of cotangent @ J per primal.

    `vjp_fn` may be called many times; each call runs one backward pass. With
    ``has_aux=True`` the result is ``(output, vjp_fn, aux)``.

    >>> import pushforward as pf
    >>> out, fn = vjp(lambda x: x.exp(), pf.tensor([0.0, 1.0]))
    >>> fn(pf.tensor([1.0, 1.0]))
    (tensor([1.        , 2.71828183]),)
    """
    check_primals(primals, "vjp(f, *primals)")
    f = checked(f, "vjp(f, *primals)", has_aux, reverse=True)
    if not primals:
        raise OpError("vjp: expected at least one primal")
    run = _Reverse(f, primals, {}, tuple(range(len(primals))), has_aux, "vjp")

    def vjp_fn(cotangents: Any) -> tuple:
        c_leaves, c_spec = tree_flatten(cotangents)
        if not _same_structure(run.out_spec, c_spec):
            raise OpError(f"vjp_fn: expected cotangents with the structure of the output {run.out_spec}, got {c_spec}")
        c_leaves = _reorder_like(cotangents, run.out_spec)
        _check_tensor_leaves(c_leaves, "vjp_fn", "cotangents")
        for i, (o, c) in enumerate(zip(run.out_leaves, c_leaves)):
            if o.shape != c.shape:
                raise OpError(
                    f"vjp_fn: cotangent {i} has shape {tuple(c.shape)} but output {i} has shape {tuple(o.shape)}"
                )
        cg = run.outer or (STATE.grad_enabled and any(c._requires_grad for c in c_leaves))
        grads = run.pullback(run.out_leaves, c_leaves, create_graph=cg)
        return tuple(run.per_arg(grads))

    res = (run.output(), vjp_fn)
    return res + (run.aux(),) if has_aux else res


# -- grad --------------------------------------------------------------------------------------


def _grad_call(f: Callable, argnums: int | tuple, has_aux: bool, args: tuple, kwargs: dict, want_value: bool) -> tuple:
    """(gradient, value or None, aux) of one call of a scalar-valued f."""
    check_argnums(argnums, len(args), "grad")
    f = checked(f, "grad_and_value(f)(*args)" if want_value else "grad(f)(*args)", has_aux, reverse=True)
    nums, single = _normalize_argnums(argnums, len(args), "grad")
    run = _Reverse(f, args, kwargs, nums, has_aux, "grad")
    if run.out_spec.kind != "leaf":
        raise OpError(
            "grad: expected f to return a single Tensor (with has_aux=True: a pair "
            f"(Tensor, aux)), got a {run.out_spec.kind}"
        )
    out = run.out_leaves[0]
    if out.numel() != 1:
        raise OpError(f"grad: expected f to return a scalar Tensor, got one of shape {tuple(out.shape)}")
    if not _is_diff(out):
        raise OpError(f"grad: f returned a Tensor of dtype {out.dtype}, which is not differentiable")
    if out.dtype.kind == "c":  # (torch's backward refuses it too; autograd raises TypeError)
        raise OpRuntimeTypeError(
            "grad: expected f to return a real scalar Tensor, got a complex one: differentiate its real part "
            "or abs(), or use vjp with a cotangent"
        )
    if (
        not want_value
        and type(out) is not BatchedTensor
        and out._fw is not None
        and not any(a is out or getattr(a, "_base", None) is out for a in run.aux_leaves)
    ):
        # Nobody reads the value's tangents: a deferred one (pending.py) is dropped now, or it
        # would keep the forward pass's arrays alive through the backward (as functional.hvp).
        for key in [k for k, t in out._fw.items() if type(t) is Pending]:
            _drop_tangent(out, key)
    ones = ones_like(out)
    # one backward pass: unless the graph is needed outside, free it as the pass goes
    grads = run.per_arg(run.pullback([out], [ones], create_graph=run.outer, retain_graph=False))
    g = grads[0] if single else tuple(grads)
    value = run.output() if want_value else None
    return g, value, (run.aux() if has_aux else None)


def grad_and_value(f: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """A function returning (gradient, value) of a scalar-valued f; (gradient, (value, aux)) with aux.

    >>> import pushforward as pf
    >>> grad_and_value(lambda x: (x * x).sum())(pf.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """

    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        g, value, aux = _grad_call(f, argnums, has_aux, args, kwargs, want_value=True)
        return (g, (value, aux)) if has_aux else (g, value)

    _name(wrapper, f, "grad_and_value")
    wrapper._pf_reverse = True  # type: ignore[attr-defined]  # see _untracked_ok
    return wrapper


def grad(f: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar-valued f with respect to argument(s) `argnums`.

    Returns the gradient (a pytree like the argument; a tuple for a tuple of argnums), or
    ``(gradient, aux)`` with ``has_aux=True``.

    >>> import pushforward as pf
    >>> grad(lambda x: (x ** 3).sum())(pf.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    """

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, _, aux = _grad_call(f, argnums, has_aux, args, kwargs, want_value=False)
        return (g, aux) if has_aux else g

    _name(wrapper, f, "grad")
    wrapper._pf_reverse = True  # type: ignore[attr-defined]  # see _untracked_ok
    return wrapper


def _name(wrapper: Callable, f: Callable, what: str) -> None:
    wrapper.__name__ = f"{what}({getattr(f, '__name__', 'f')})"
    wrapper.__qualname__ = wrapper.__name__
    wrapper.__doc__ = getattr(f, "__doc__", None)


# -- Jacobians ---------------------------------------------------------------------------------


def _assemble(blocks: list, out_leaves: list, out_spec: TreeSpec, arg_specs: list, single: bool) -> Any:
    """blocks[i][j]: Jacobian of output leaf i w.r.t. selected input leaf j -> nested result."""
    per_out = []
    for i in range(len(out_leaves)):
        trees = []
        k = 0
        for spec in arg_specs:
            n = spec.num_leaves
            trees.append(tree_unflatten(blocks[i][k : k + n], spec))
            k += n
        per_out.append(trees[0] if single else tuple(trees))
    return tree_unflatten(per_out, out_spec)


def jacrev(f: Callable, argnums: int | tuple = 0, *, has_aux: bool = False, chunk_size: int | None = None) -> Callable:
    """The Jacobian of f by reverse mode, in one backward pass: the cotangents of every output
    element go through the tape at once, as a batch (vmap over the vjp). ``chunk_size`` bounds the
    batch: ceil(M / chunk_size) backward passes for M output elements.

    For an output leaf of shape O and an input leaf of shape I the block has shape O + I.

    >>> import pushforward as pf
    >>> jacrev(lambda x: x * x)(pf.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise OpValueError(f"jacrev: chunk_size must be a positive int or None, got {chunk_size!r}")
    f = checked(f, "jacrev", has_aux, real=True, via="jacrev: vjp(f, *primals)", reverse=True)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_argnums(argnums, len(args), "jacrev"), check_real_inputs(args, argnums, "jacrev")
        nums, single = _normalize_argnums(argnums, len(args), "jacrev")
        run = _Reverse(f, args, kwargs, nums, has_aux, "jacrev")
        outs = run.out_leaves
        sizes = [o.numel() for o in outs]
        total = sum(sizes)
        step = total if chunk_size is None else min(chunk_size, total)
        per_leaf: list = [[] for _ in run.primal_leaves]  # rows (output elements) of each input's block
        for start in range(0, total, max(step, 1)):
            stop = min(total, start + step)
            level = new_batch_level()
            cts = basis_rows(outs, sizes, start, stop)
            # (one row, e.g. a scalar's gradient: an ordinary backward pass)
            cts = {i: (c[0] if stop - start == 1 else BatchedTensor(c, level)) for i, c in cts.items()}
            gs = run.pullback(outs, [cts.get(i) for i in range(len(outs))], create_graph=run.outer)
            for j, g in enumerate(gs):
                if g is not None:
                    per_leaf[j].append(unbatch(g, level, stop - start))
        cols = [
            split_rows(None if not rows else rows[0] if len(rows) == 1 else cat(rows, 0), outs, sizes, leaf)
            if _is_diff(leaf)
            else [None] * len(outs)
            for rows, leaf in zip(per_leaf, run.primal_leaves)
        ]
        jac = _assemble([[c[i] for c in cols] for i in range(len(outs))], outs, run.out_spec, run.specs, single)
        return (jac, run.aux()) if has_aux else jac

    _name(wrapper, f, "jacrev")
    wrapper._pf_reverse = True  # type: ignore[attr-defined]  # see _untracked_ok
    return wrapper


def jacfwd(f: Callable, argnums: int | tuple = 0, *, has_aux: bool = False, chunk_size: int | None = None) -> Callable:
    """The Jacobian of f by forward mode, in one vector-mode pass: a dual level of batch N (the
    number of input elements) carries every basis tangent at once. ``chunk_size`` bounds the
    batch (and memory): ceil(N / chunk_size) passes.

    Each pass opens a new dual level, so ``jacfwd(jacfwd(f))`` and ``jacfwd(jacrev(f))`` nest.
    Same result layout as :func:`jacrev`.

    >>> import pushforward as pf
    >>> jacfwd(lambda x: x.sin())(pf.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise OpValueError(f"jacfwd: chunk_size must be a positive int or None, got {chunk_size!r}")
    f = checked(f, "jacfwd", has_aux, real=True, via="jacfwd: jvp(f, primals, tangents)")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_argnums(argnums, len(args), "jacfwd"), check_real_inputs(args, argnums, "jacfwd")
        nums, single = _normalize_argnums(argnums, len(args), "jacfwd")
        specs, in_leaves = [], []
        for a in nums:
            leaves, spec = tree_flatten(args[a])
            _check_tensor_leaves(leaves, "jacfwd", f"argument {a}")
            for li, leaf in enumerate(leaves):
                _check_diff_primal(leaf, li, "jacfwd")
            specs.append(spec)
            in_leaves.extend((a, li, leaf) for li, leaf in enumerate(leaves))
        sizes = [leaf.numel() if _is_diff(leaf) else 0 for _, _, leaf in in_leaves]
        total = sum(sizes)
        step = total if chunk_size is None else min(chunk_size, total)
        # jacfwd(jacrev(f)) (a Hessian) with nothing requiring grad: an untracked level, as func.jvp
        untracked = _untracked_ok(f, [leaf for _, _, leaf in in_leaves], [])
        passes = []
        for start in range(0, max(total, 1), max(step, 1)):
            res = None
            if untracked:
                res = _jacfwd_pass(f, args, kwargs, in_leaves, sizes, start, min(total, start + step), has_aux, True)
                untracked = res is not None
            if res is None:
                res = _jacfwd_pass(f, args, kwargs, in_leaves, sizes, start, min(total, start + step), has_aux, False)
            passes.append(res)
        prims, o_spec, aux = passes[0][0]
        blocks = []
        for i, o in enumerate(prims):
            rows = [p[1][i] for p in passes]
            tan = rows[0] if len(rows) == 1 else cat(rows, 0)
            blocks.append(split_columns(tan, o, [leaf for _, _, leaf in in_leaves], sizes))
        jac = _assemble(blocks, prims, o_spec, specs, single)
        return (jac, aux) if has_aux else jac

    _name(wrapper, f, "jacfwd")
    return wrapper


def _jacfwd_pass(
    f: Callable,
    args: tuple,
    kwargs: dict,
    in_leaves: list,
    sizes: list,
    start: int,
    stop: int,
    has_aux: bool,
    untracked: bool,
) -> tuple | None:
    """One vector-mode run of f: the basis tangents start..stop-1 (over all input elements, input
    leaves in order) at once. Returns ((primal outputs, their spec, aux), per output its
    tangents, shape (stop - start, *output.shape)); None if an untracked run turns out unsafe
    (see _jvp_run)."""
    batch = stop - start
    level_cm = fwAD.untracked_level if untracked else fwAD.dual_level
    with level_cm(batch=max(batch, 1)) as level:
        new_args = list(args)
        flat = {a: tree_flatten(args[a]) for a in {a for a, _, _ in in_leaves}}
        for j, t in basis_rows([leaf for _, _, leaf in in_leaves], sizes, start, stop).items():
            a, li, leaf = in_leaves[j]
            flat[a][0][li] = fwAD.make_dual(leaf, t, level=level)
        for a, (leaves, spec) in flat.items():
            new_args[a] = tree_unflatten(leaves, spec)
        ran = _run_at_level(f, new_args, kwargs, level, untracked, has_aux, "jacfwd")
        if ran is None:
            return None
        o_leaves, o_spec, a_leaves, a_spec = ran
        prims, tans = [], []
        for o in o_leaves:
            p, t = fwAD.unpack_dual(o, level=level)
            prims.append(p)
            tans.append(t if t is not None else zeros((batch,) + tuple(o.shape), dtype=o.dtype))
        aux = tree_unflatten([_primal(x, level) for x in a_leaves], a_spec)
    return (prims, o_spec, aux), [t[:batch] for t in tans]


def hessian(f: Callable, argnums: int | tuple = 0) -> Callable:
    """The Hessian of a scalar-valued f: ``jacfwd(jacrev(f, argnums), argnums)`` (forward-over-reverse).

    >>> import pushforward as pf
    >>> hessian(lambda x: (x ** 3).sum())(pf.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    h = jacfwd(jacrev(f, argnums), argnums)
    _name(h, f, "hessian")
    return h


# -- linearize ---------------------------------------------------------------------------------


def linearize(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """(f(*primals), jvp_fn) where jvp_fn(*tangents) applies the Jacobian at `primals`.

    Method (transpose of the transpose): f runs once on fresh leaves; a backward pass with
    ``create_graph=True`` and a zero cotangent ``u`` that requires grad records the linear
    map ``u -> J^T u``. ``jvp_fn(t)`` is the gradient of ``<J^T u, t>`` with respect to ``u``,
    i.e. ``J t``: it runs backward through that recorded linear graph only (products with
    saved Jacobian factors), never the nonlinear parts of f (``jvp_fn`` stays differentiable
    with respect to the tangents). Inside another transform (an enclosing dual level, vmap or
    jet, a primal that requires grad, or f closing over a tensor an enclosing transform
    differentiates) the results must keep that dependence: then ``jvp_fn(t)`` is
    ``jvp(f, primals, t)`` (f runs again per call), which every transform nests around.

    >>> import pushforward as pf
    >>> out, jvp_fn = linearize(lambda x: x.sin(), pf.tensor([0.0, 1.0]))
    >>> jvp_fn(pf.tensor([1.0, 1.0]))
    tensor([1.        , 0.54030231])
    """
    if not primals:
        raise OpError("linearize: expected at least one primal")
    p_leaves, p_spec = tree_flatten(tuple(primals))
    _check_tensor_leaves(p_leaves, "linearize", "primals")
    for i, p in enumerate(p_leaves):
        _check_diff_primal(p, i, "linearize")
    rec = _transposed_map(f, p_leaves, p_spec) if _plain_context(p_leaves) else None
    if rec is None:
        return _linearize_by_jvp(f, primals, p_leaves, p_spec)
    o_leaves, o_spec, outs, us, lin = rec
    primal_out = tree_unflatten([o.detach() for o in o_leaves], o_spec)

    def jvp_fn(*tangents: Any) -> Any:
        t_leaves = _tangent_leaves(tuple(tangents), p_leaves, p_spec, "linearize: jvp_fn")
        res = [None] * len(outs)
        if lin:
            with enable_grad():
                cg = STATE.grad_enabled and any(t._requires_grad for t in t_leaves)
                rs = _autograd_grad(
                    [g for _, g in lin],
                    us,
                    grad_outputs=[t_leaves[i] for i, _ in lin],
                    retain_graph=True,
                    create_graph=cg,
                    allow_unused=True,
                )
            res = list(rs)
        it = iter(res)
        out_t = []
        for o in o_leaves:
            r = next(it) if o._requires_grad else None
            out_t.append(r if r is not None else zeros_like(o.detach()))
        return tree_unflatten(out_t, o_spec)

    return primal_out, jvp_fn


def _plain_context(p_leaves: list) -> bool:
    """No enclosing transform can see linearize's primals: no dual level, no vmap, nothing requiring grad."""
    return not STATE.levels and not VMAP_ACTIVE and not any(type(p) is not Tensor or p._requires_grad for p in p_leaves)


def _linearize_by_jvp(f: Callable, primals: tuple, p_leaves: list, p_spec: TreeSpec) -> tuple[Any, Callable]:
    """linearize inside another transform: the value f(*primals) as f gives it, and jvp_fn(t) = jvp(f, primals, t)."""
    primal_out = f(*primals)

    def jvp_fn(*tangents: Any) -> Any:
        _tangent_leaves(tuple(tangents), p_leaves, p_spec, "linearize: jvp_fn")
        return jvp(f, tuple(primals), tuple(tangents))[1]

    return primal_out, jvp_fn


def _transposed_map(f: Callable, p_leaves: list, p_spec: TreeSpec) -> tuple | None:
    """linearize's recording: f on fresh leaves, then a backward pass with zero cotangents u that
    require grad, recorded (create_graph). Returns (output leaves, their spec, the outputs that
    require grad, their u, [(primal index, J^T u)] for the parts that depend on u); None when f's
    results can be seen by an enclosing transform (they close over its variables), or f writes in
    place into a value its backward pass needs."""
    with enable_grad(), reverse_level() as uid:
        leaves = [claim(p.detach().requires_grad_(), uid) if _is_diff(p) else p for p in p_leaves]
        o_leaves, o_spec = tree_flatten(f(*tree_unflatten(leaves, p_spec)))
        _check_tensor_leaves(o_leaves, "linearize", "the function's output")
        if any(type(o) is not Tensor for o in o_leaves) or _reaches_outer(o_leaves, uid):
            return None
        outs = [o for o in o_leaves if o._requires_grad]
        us = [zeros_like(o).requires_grad_() for o in outs]
        targets = [i for i, p in enumerate(leaves) if _is_diff(p)]
        gs: list = []
        if outs and targets:
            try:
                gs = list(
                    _autograd_grad(
                        outs,
                        [leaves[i] for i in targets],
                        grad_outputs=us,
                        retain_graph=True,
                        create_graph=True,
                        allow_unused=True,
                    )
                )
            except SavedTensorModifiedError:
                return None  # f writes in place into values its backward needs: forward mode has no such limit
        # J^T u, restricted to the parts that depend on u (the others are identically zero)
        lin = [(targets[n], g) for n, g in enumerate(gs) if g is not None and g._requires_grad]
    return o_leaves, o_spec, outs, us, lin
