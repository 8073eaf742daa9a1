"""High-level autodiff API: jvp, vjp, jacobian, hessian, hvp, vhp (as torch.autograd.functional).

Inputs are a Tensor or a tuple of Tensors; results follow the same shape conventions as
PyTorch (a Tensor where the input/output was a Tensor, a tuple where it was a tuple, a
tuple of tuples ``jac[i][j]`` for output i and input j). ``create_graph=True`` makes the
results differentiable (with respect to the inputs and to ``v``); otherwise they are cut
from the tape. ``strict=True`` raises when an output is independent of an input.

Unlike PyTorch, forward-mode AD is available behind ``fw_mode`` (RFC-0007's goal):

* ``jvp(..., fw_mode=True)`` makes the inputs dual and reads the output tangents;
  ``fw_mode=False`` uses the double-backward trick. Both give the same numbers.
* ``hvp``/``vhp(..., fw_mode=True)`` are forward-over-reverse: the inputs are made dual
  with tangent ``v``, the gradient is taken by reverse mode (whose formulas carry tangents),
  and the gradient's tangent is ``H v``. ``fw_mode=False`` is reverse-over-reverse.
* ``jacobian(..., strategy="forward-mode")`` needs one forward pass per input element,
  ``"reverse-mode"`` one backward pass per output element. With ``vectorize=True`` either
  takes one batched pass: all basis tangents at once (a dual level of batch N), or all
  output cotangents through one backward pass.

Tangents of enclosing dual levels are kept on the inputs and on the results, so these
functions can be used inside forward AD (``hessian(..., outer_jacobian_strategy=
"forward-mode")`` relies on it).

>>> import pushforward as pf
>>> from pushforward.autograd.functional import jacobian, hvp
>>> jacobian(lambda x: x ** 2, pf.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
>>> hvp(lambda x: (x ** 3).sum(), pf.tensor([1.0, 2.0]), pf.tensor([1.0, 1.0]))[1]
tensor([ 6., 12.])
"""

from __future__ import annotations

from typing import Any, Callable


from . import forward_ad as fwAD
from ..engine.state import STATE
from ..engine.tangents import discard_pending, levels_of, tangent_of
from ..engine.graph import grad as _autograd_grad
from ..engine.graph import tape_free
from ..engine.grad_mode import enable_grad
from .jacobian_util import (
    basis_rows,
    check_not_interpreted,
    forward_block,
    forward_columns,
    onehot,
    reverse_block,
    split_columns,
    split_rows,
    unbatch,
    zero_forward_block,
)
from ..core.batched import BatchedTensor, batched_in, new_batch_level, physical_in
from ..errors import OpError
from ..core.creation import ones_like, zeros, zeros_like
from ..core.tensor import Tensor
from ..core.namespace import public_dir as _public_dir
from ..func.vmapping import ACTIVE as VMAP_ACTIVE

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

TensorOrTensors = Any  # Tensor | tuple[Tensor, ...]


# -- argument handling ----------------------------------------------------------------------------


def _as_tuple(x: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(was it a tuple, the tensors as a tuple); anything but Tensors is a TypeError."""
    is_tuple = isinstance(x, (tuple, list))
    tup = tuple(x) if is_tuple else (x,)
    for i, el in enumerate(tup):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                    f"but the value at index {i} has type {type(el).__name__}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the given {arg_name} has type {type(el).__name__}."
            )
    return is_tuple, tup


def _outputs(x: Any, fn_name: str) -> tuple[bool, tuple]:
    """_as_tuple of the user function's outputs, which the tape must be able to see through."""
    res = _as_tuple(x, "outputs of the user-provided function", fn_name)
    check_not_interpreted(list(res[1]), fn_name)
    return res


def _tuple_post(res: Any, is_tuple: bool | tuple) -> Any:
    """Undo _as_tuple on results: is_tuple is a flag, or (outputs flag, inputs flag) for Jacobians."""
    if isinstance(is_tuple, tuple):
        out_t, in_t = is_tuple
        if not in_t:
            res = tuple(r[0] for r in res)
        return res if out_t else res[0]
    return res if is_tuple else res[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple[tuple, tuple]:
    """(tensors handed to func, tensors to differentiate with respect to).

    With create_graph, an input that requires grad is replaced by a differentiable alias, so
    the results depend on it; otherwise by a fresh leaf (requiring grad if `need_graph`).
    Tangents of enclosing dual levels are put back on the fresh leaf with make_dual.
    """
    fin, tgt = [], []
    vm = list(VMAP_ACTIVE)
    for i, x in enumerate(inputs):
        if need_graph and x.dtype.kind not in "fc":
            raise OpError(f"input {i} has dtype {x.dtype}; only floating point or complex inputs can be differentiated")
        # inside vmap the tape and the tangents are on the physical tensors: the leaves are made
        # there and batched again, so each element of the batch gets its own derivatives
        px = physical_in(x, vm) if vm else x
        if create_graph and px._requires_grad:
            a = leaf = px.alias()
        else:
            a = leaf = px.detach()
            if need_graph:
                leaf.requires_grad_()
            if STATE.levels:
                for lv in sorted(levels_of(px)):
                    a = fwAD.make_dual(a, tangent_of(px, lv), level=STATE.by_uid[lv].index)
        fin.append(batched_in(a, vm) if vm else a)
        tgt.append(batched_in(leaf, vm) if vm else leaf)
    return tuple(fin), tuple(tgt)


def _leaf(x: Tensor) -> Tensor:
    """A fresh leaf with x's values (inside vmap a physical one, batched again: see _prepare)."""
    if not VMAP_ACTIVE:
        return x.detach().requires_grad_()
    return batched_in(physical_in(x, VMAP_ACTIVE).detach().requires_grad_(), VMAP_ACTIVE)


def _v_arg(v, other: tuple, is_other_tuple: bool, fn_name: str, kind: str, create_graph: bool) -> tuple:
    """The `v` argument as a tuple matching `other` (the inputs or the outputs), or its default."""
    if v is None:
        return _default_v(other, fn_name, kind)
    _, v = _as_tuple(v, "v", fn_name)
    v = _prepare_v(v, create_graph)
    _validate_v(v, other, is_other_tuple)
    return v


def _prepare_v(v: tuple, create_graph: bool) -> tuple:
    return tuple(x.alias() if (create_graph and x.requires_grad) else x.detach() for x in v)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(v) != len(other):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            extra = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{extra}v has invalid size: should be {tuple(b.shape)} but got {tuple(a.shape)}.")


def _default_v(inputs: tuple, fn_name: str, what: str) -> tuple:
    if len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError(
            f"The vector v can only be None if the {what} of the user-provided function given to "
            f"{fn_name} is a single Tensor with a single element."
        )
    return (ones_like(inputs[0].detach()),)


def _post(tensors: tuple, create_graph: bool) -> tuple:
    """Results: kept as they are with create_graph, otherwise cut from the tape (tangents kept)."""
    if create_graph:
        return tuple(tensors)
    return tuple(tape_free(t) for t in tensors)


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if not t.requires_grad:
            if kind == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i} is "
                    "independent of the input. This is not allowed in strict mode."
                )
            if kind == "jacobian":
                raise RuntimeError(
                    f"While computing the hessian, found that the jacobian of the user-provided "
                    f"function with respect to input {i} is independent of the input. This is not "
                    "allowed in strict mode (a linear function has a constant jacobian)."
                )
            if kind == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."
                )
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The outputs "
                "must be computed in a differentiable manner from the input when running in strict "
                "mode."
            )


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Replace None (independent) gradients by zeros, or raise in strict mode."""
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                if stage == "back":
                    msg = (
                        f"The output of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode."
                    )
                elif stage == "back_trick":
                    msg = (
                        f"The gradient with respect to the input is independent of entry {i} in the "
                        "grad_outputs when using the double backward trick to compute forward mode "
                        "gradients. This is not allowed in strict mode."
                    )
                elif stage == "double_back":
                    msg = (
                        f"The jacobian of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode."
                    )
                else:
                    msg = (
                        f"The output of the user-provided function is independent of input {i} "
                        "(it has no tangent). This is not allowed in strict mode."
                    )
                raise RuntimeError(msg)
            g = zeros_like(ref.detach())
        elif strict and create_graph and stage != "forward" and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _grad(
    outputs: tuple, inputs: tuple, grad_outputs: tuple | None, *, create_graph: bool, retain_graph: bool | None = None
) -> tuple:
    """autograd.grad that skips outputs not requiring grad and returns None for unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    vm = list(VMAP_ACTIVE)
    if vm:  # (the tape of batched tensors is on their physical tensors: see _prepare)
        outputs = tuple(None if o is None else physical_in(o, vm) for o in outputs)
        inputs = tuple(physical_in(x, vm) for x in inputs)
        grad_outputs = tuple(
            None if o is None else ones_like(o) if g is None else physical_in(g, vm)
            for o, g in zip(outputs, grad_outputs)
        )
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o._requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    gs = _autograd_grad(
        [p[0] for p in pairs],
        list(inputs),
        grad_outputs=[p[1] for p in pairs],
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )
    return tuple(g if g is None or not vm else batched_in(g, vm) for g in gs)


# -- vjp / jvp ------------------------------------------------------------------------------------


def vjp(
    func: Callable,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product by one backward pass.

    `v` has the shape of func's output (may be None for a single-element output).

    >>> import pushforward as pf
    >>> vjp(lambda x: x * 2, pf.tensor([1.0, 2.0]), pf.tensor([1.0, 0.5]))[1]
    tensor([2., 1.])
    """
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        fin, tgt = _prepare(inputs, create_graph, need_graph=True)
        outputs = func(*fin)
        is_out_tuple, outputs = _outputs(outputs, "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_arg(v, outputs, is_out_tuple, "vjp", "output", create_graph)
        grads = _grad(outputs, tgt, v, create_graph=create_graph, retain_graph=True)
        res = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return _tuple_post(_post(outputs, create_graph), is_out_tuple), _tuple_post(_post(res, create_graph), is_in_tuple)


def jvp(
    func: Callable,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
    fw_mode: bool = True,
) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product.

    ``fw_mode=True`` (default): forward AD at a new dual level (one pass of func).
    ``fw_mode=False``: the double-backward trick (two backward passes), as PyTorch does.

    >>> import pushforward as pf
    >>> jvp(lambda x: x.exp(), pf.tensor([0.0, 1.0]), pf.tensor([1.0, 1.0]))[1]
    tensor([1.        , 2.71828183])
    """
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        v = _v_arg(v, inputs, is_in_tuple, "jvp", "input", create_graph)
        if fw_mode:
            fin, _ = _prepare(inputs, create_graph, need_graph=False)
            for i, x in enumerate(fin):  # as torch: an integer input has no tangent to carry
                if x.dtype.kind not in "fc":
                    raise OpError(
                        f"jvp: input {i} has dtype {x.dtype}; only floating point or complex inputs "
                        "can be differentiated"
                    )
            with fwAD.dual_level() as level:
                duals = tuple(fwAD.make_dual(x, t, level=level) for x, t in zip(fin, v))
                outputs = func(*duals)
                is_out_tuple, outputs = _outputs(outputs, "jvp")
                unpacked = [fwAD.unpack_dual(o, level=level) for o in outputs]
                prims = tuple(u.primal for u in unpacked)
                tans = _fill_in_zeros(tuple(u.tangent for u in unpacked), prims, strict, create_graph, "forward")
        else:
            fin, tgt = _prepare(inputs, create_graph, need_graph=True)
            outputs = func(*fin)
            is_out_tuple, outputs = _outputs(outputs, "jvp")
            _check_requires_grad(outputs, "outputs", strict)
            # u -> J^T u is linear, so the value of u does not matter; zeros are safe (no inf/nan)
            us = tuple(_leaf(zeros_like(o.detach())) for o in outputs)
            grad_inputs = _grad(outputs, tgt, us, create_graph=True, retain_graph=True)
            _check_requires_grad(grad_inputs, "grad_inputs", strict)
            pairs = [(g, t) for g, t in zip(grad_inputs, v) if g is not None]
            if pairs:
                back = _grad(
                    tuple(p[0] for p in pairs),
                    us,
                    tuple(p[1] for p in pairs),
                    create_graph=create_graph,
                    retain_graph=True,
                )
            else:
                back = (None,) * len(us)
            prims = outputs
            tans = _fill_in_zeros(back, outputs, strict, create_graph, "back_trick")
    return _tuple_post(_post(prims, create_graph), is_out_tuple), _tuple_post(_post(tans, create_graph), is_out_tuple)


# -- Jacobian and Hessian ---------------------------------------------------------------------


def jacobian(
    func: Callable,
    inputs: TensorOrTensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of func at inputs; block `[i][j]` has shape `outputs[i].shape + inputs[j].shape`.

    ``strategy="reverse-mode"``: one backward pass per output element;
    ``"forward-mode"``: one forward-AD pass per input element (better for wide outputs).

    >>> import pushforward as pf
    >>> jacobian(lambda x, y: x * y, (pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0])), strategy="forward-mode")[1]
    tensor([[1., 0.],
            [0., 2.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            f'Expected strategy to be either "forward-mode" or "reverse-mode", got {strategy!r}. '
            'Hint: "forward-mode" is better for functions with more outputs than inputs, '
            '"reverse-mode" for more inputs than outputs.'
        )
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        if strategy == "forward-mode":
            if vectorize:
                if strict:
                    raise RuntimeError(
                        "jacobian: `strict=True` and `vectorize=True` are not supported together "
                        "(as torch); use vectorize=False for strict mode"
                    )
                return _jacobian_vector_mode(func, inputs, is_in_tuple, create_graph)
            return _jacobian_fwd(func, inputs, is_in_tuple, create_graph, strict)
        fin, tgt = _prepare(inputs, create_graph, need_graph=True)
        outputs = func(*fin)
        is_out_tuple, outputs = _outputs(outputs, "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "jacobian: `strict=True` and `vectorize=True` are not supported together "
                    "(as torch); use vectorize=False for strict mode"
                )
            jac = _jacobian_batched_reverse(outputs, inputs, tgt, create_graph)
            return _tuple_post(jac, (is_out_tuple, is_in_tuple))
        jac = []
        for i, out in enumerate(outputs):
            rows: list = [[] for _ in inputs]
            for k in range(out.numel()):
                gs = _grad(
                    (out,),
                    tgt,
                    (onehot(tuple(out.shape), out.dtype, k),),
                    create_graph=create_graph,
                    retain_graph=True,
                )
                for j, (g, x) in enumerate(zip(gs, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode."
                            )
                        g = zeros_like(x.detach())
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            f"The jacobian of the user-provided function is independent of input "
                            f"{j}. This is not allowed in strict mode when create_graph=True."
                        )
                    rows[j].append(g)
            blocks = [reverse_block(rows[j], out, x) for j, x in enumerate(inputs)]
            jac.append(tuple(_post(tuple(blocks), create_graph)))
    return _tuple_post(tuple(jac), (is_out_tuple, is_in_tuple))


def _jacobian_batched_reverse(outputs: tuple, inputs: tuple, tgt: tuple, create_graph: bool) -> tuple:
    """Reverse-mode Jacobian in one backward pass: every output element's cotangent at once, as
    a batch (the engine runs the backward formulas on batched gradients)."""
    sizes = [o.numel() for o in outputs]
    total = sum(sizes)
    level = new_batch_level()
    cts = basis_rows(list(outputs), sizes, 0, total)
    pairs = [(o, BatchedTensor(cts[i], level)) for i, o in enumerate(outputs) if i in cts and o.requires_grad]
    gs = [None] * len(inputs)
    if pairs:
        gs = _grad(
            tuple(o for o, _ in pairs), tgt, tuple(c for _, c in pairs), create_graph=create_graph, retain_graph=True
        )
    cols = [
        split_rows(None if g is None else unbatch(g, level, total), list(outputs), sizes, x) for g, x in zip(gs, inputs)
    ]
    return tuple(tuple(_post(tuple(c[i] for c in cols), create_graph)) for i in range(len(outputs)))


def _jacobian_fwd(func: Callable, inputs: tuple, is_in_tuple: bool, create_graph: bool, strict: bool) -> Any:
    fin, _ = _prepare(inputs, create_graph, need_graph=False)
    for j, x in enumerate(inputs):
        if x.dtype.kind not in "fc":
            raise OpError(
                f"jacobian: input {j} has dtype {x.dtype}; only floating point or complex inputs can be differentiated"
            )

    def run(j: int | None, k: int):
        with fwAD.dual_level() as level:
            args = list(fin)
            if j is not None:
                args[j] = fwAD.make_dual(fin[j], onehot(tuple(fin[j].shape), fin[j].dtype, k), level=level)
            outputs = func(*args)
            is_out_tuple, outputs = _outputs(outputs, "jacobian")
            unpacked = [fwAD.unpack_dual(o, level=level) for o in outputs]
        return (is_out_tuple, [u.primal for u in unpacked]), [u.tangent for u in unpacked]

    (is_out_tuple, prims), cols = forward_columns(run, [x.numel() for x in inputs])
    jac = []
    for i, out in enumerate(prims):
        blocks = []
        for j, x in enumerate(inputs):
            blk = forward_block([c[i] for c in cols[j]], out, x)
            if blk is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is independent of input {j}. "
                        "This is not allowed in strict mode."
                    )
                blk = zero_forward_block(out, x)
            blocks.append(blk)
        jac.append(tuple(_post(tuple(blocks), create_graph)))
    return _tuple_post(tuple(jac), (is_out_tuple, is_in_tuple))


def _jacobian_vector_mode(func: Callable, inputs: tuple, is_in_tuple: bool, create_graph: bool) -> Any:
    """Forward-mode Jacobian in one vector-mode pass (a dual level of batch: every input element)."""
    fin, _ = _prepare(inputs, create_graph, need_graph=False)
    for j, x in enumerate(inputs):
        if x.dtype.kind not in "fc":
            raise OpError(
                f"jacobian: input {j} has dtype {x.dtype}; only floating point or complex inputs can be differentiated"
            )
    sizes = [x.numel() for x in inputs]
    batch = sum(sizes)
    with fwAD.dual_level(batch=max(batch, 1)) as level:
        args = list(fin)
        for j, t in basis_rows(fin, sizes, 0, batch).items():
            args[j] = fwAD.make_dual(fin[j], t, level=level)
        outputs = func(*args)
        is_out_tuple, outputs = _outputs(outputs, "jacobian")
        unpacked = [fwAD.unpack_dual(o, level=level) for o in outputs]
    jac = []
    for u in unpacked:
        tan = u.tangent if u.tangent is not None else zeros((batch,) + tuple(u.primal.shape), dtype=u.primal.dtype)
        jac.append(tuple(_post(tuple(split_columns(tan[:batch], u.primal, list(inputs), sizes)), create_graph)))
    return _tuple_post(tuple(jac), (is_out_tuple, is_in_tuple))


def _single_output(func: Callable, fn_name: str, strict: bool) -> Callable:
    def f(*inp):
        out = func(*inp)
        is_tuple, t_out = _outputs(out, fn_name)
        _check_requires_grad(t_out, "outputs", strict)
        if is_tuple:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                f"The Tensor returned by the function given to {fn_name} should contain a single "
                f"element (it has shape {tuple(out.shape)})"
            )
        return out if out.ndim == 0 else out.reshape(())

    return f


def hessian(
    func: Callable,
    inputs: TensorOrTensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar function: the Jacobian of its (reverse-mode) gradient.

    ``outer_jacobian_strategy="forward-mode"`` makes it forward-over-reverse (one forward
    pass of the gradient per input element); ``"reverse-mode"`` is reverse-over-reverse.
    With a tuple of inputs the result is a tuple of tuples ``H[i][j]``.

    >>> import pushforward as pf
    >>> hessian(lambda x: (x ** 3).sum(), pf.tensor([1.0, 2.0]), outer_jacobian_strategy="forward-mode")
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            f'Expected outer_jacobian_strategy to be "forward-mode" or "reverse-mode", got {outer_jacobian_strategy!r}'
        )
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    single = _single_output(func, "hessian", strict)

    def jac_func(*inp):
        jac = jacobian(single, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _tuple_post(res, (is_in_tuple, is_in_tuple))


def _hessian_product(
    func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool, fw_mode: bool, fn_name: str
) -> tuple[Any, Any]:
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        v = _v_arg(v, inputs, is_in_tuple, fn_name, "input", create_graph)
        single = _single_output(func, fn_name, strict)
        fin, tgt = _prepare(inputs, create_graph, need_graph=True)
        if fw_mode:
            # Without create_graph nothing differentiates the tangents: keep them off the tape.
            with fwAD.dual_level() if create_graph else fwAD.untracked_level() as level:
                duals = tuple(fwAD.make_dual(x, t, level=level) for x, t in zip(fin, v))
                out = single(*duals)
                # out's own tangent is never read (leaving the level drops it): unless dropped now,
                # its deferred formula would keep the forward's arrays alive through the backward.
                discard_pending(out, level)
                jac = _grad((out,), tgt, None, create_graph=create_graph, retain_graph=create_graph)
                res = []
                for i, g in enumerate(jac):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"The output of the user-provided function is independent of input "
                                f"{i}. This is not allowed in strict mode."
                            )
                        res.append(None)
                        continue
                    t = fwAD.unpack_dual(g, level=level).tangent
                    if t is None and strict:
                        raise RuntimeError(
                            f"While computing the hessian, found that the jacobian of the "
                            f"user-provided function with respect to input {i} is independent of "
                            "the input. This is not allowed in strict mode."
                        )
                    res.append(t)
            res = _fill_in_zeros(tuple(res), inputs, strict, create_graph, "double_back")
        else:
            out = single(*fin)
            jac = _grad((out,), tgt, None, create_graph=True, retain_graph=True)
            _check_requires_grad(jac, "jacobian", strict)
            pairs = [(g, t) for g, t in zip(jac, v) if g is not None and g.requires_grad]
            if pairs:
                res = _grad(
                    tuple(p[0] for p in pairs),
                    tgt,
                    tuple(p[1] for p in pairs),
                    create_graph=create_graph,
                    retain_graph=True,
                )
            else:
                res = (None,) * len(tgt)
            res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back")
    return _post((out,), create_graph)[0], _tuple_post(_post(res, create_graph), is_in_tuple)


def hvp(
    func: Callable,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
    fw_mode: bool = True,
) -> tuple[Any, Any]:
    """(func(inputs), H v) for a scalar func.

    ``fw_mode=True``: forward-over-reverse (inputs dual with tangent v, reverse gradient,
    read the gradient's tangent): one forward and one backward pass, both carrying tangents.
    ``fw_mode=False``: reverse-over-reverse (gradient with create_graph, then a second
    backward with v).

    >>> import pushforward as pf
    >>> hvp(lambda x: (x.sin()).sum(), pf.tensor([0.0, 1.0]), pf.tensor([1.0, 1.0]))[1]
    tensor([-0.        , -0.84147098])
    """
    return _hessian_product(func, inputs, v, create_graph, strict, fw_mode, "hvp")


def vhp(
    func: Callable,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
    fw_mode: bool = True,
) -> tuple[Any, Any]:
    """(func(inputs), v^T H) for a scalar func (equal to H v since the Hessian is symmetric).

    ``fw_mode`` as in :func:`hvp`.

    >>> import pushforward as pf
    >>> vhp(lambda x: (x ** 3).sum(), pf.tensor([1.0, 2.0]), pf.tensor([1.0, 0.0]))[1]
    tensor([6., 0.])
    """
    return _hessian_product(func, inputs, v, create_graph, strict, fw_mode, "vhp")


__dir__ = _public_dir(globals())
