"""gradcheck / gradgradcheck: compare analytical derivatives with finite differences.

Every derivative formula in pushforward (backward, forward, and the ones of custom
`Function`s) is checked against a numerical Jacobian built by central differences on the
raw ndarray data:

* the **backward** check compares the numerical Jacobian row by row with vjps
  (`autograd.grad` with one-hot `grad_outputs`);
* the **forward** check compares it column by column with jvps (`forward_ad.make_dual` with
  one-hot tangents, `unpack_dual` of the outputs; a missing tangent counts as zero).

Complex numbers follow PyTorch's gradcheck. Internally every complex entry is split into
its real and imaginary part, so a function between complex tensors is a real map and its
Jacobian is an ordinary real matrix; the numbers shown in failure messages are re-packed
the way PyTorch shows them:

* backward mode, complex input ``z = x + iy``: for a real-valued output coordinate ``s`` the
  vjp returns ``ds/dx + i ds/dy`` (conjugate-Wirtinger convention, ``2 ds/dz*``), which is
  compared with the same combination of the two finite differences; a complex output is
  checked as its real part (``grad_output = 1``) and its imaginary part (``grad_output = 1j``)
  separately.
* forward mode: a complex input is checked as its real part (tangent ``1``) and its
  imaginary part (tangent ``1j``) separately; a complex output tangent is compared whole.

>>> import pushforward as pf
>>> from pushforward.autograd.gradcheck import gradcheck
>>> x = pf.tensor([0.3, -1.2, 2.0], requires_grad=True)
>>> gradcheck(pf.sin, (x,))
True
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence, Union

import numpy as np

from ..core.batched import BatchedTensor, new_batch_level
from . import forward_ad as fwAD
from ..engine.grad_mode import enable_grad
from ..engine.graph import grad
from ..core.tensor import Tensor, wrap

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` and `gradgradcheck` when a derivative does not match."""


# The public functions accept one Tensor or a sequence of them (plus pass-through values).
TensorOrTensors = Union[Any, Sequence[Any]]

# A fixed seed: fast-mode projections (and gradgradcheck's grad_outputs) are then the same
# on every run, so a failure can be reproduced.
_SEED = 0


# -- small helpers ---------------------------------------------------------------------------


def _wrap(arr: np.ndarray, requires_grad: bool = False):
    """A fresh Tensor around `arr` (no copy)."""
    t = wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_diff_tensor(x) -> bool:
    """Tensors gradcheck differentiates with respect to: floating/complex and requiring grad."""
    return isinstance(x, Tensor) and x._data.dtype.kind in "fc" and x.requires_grad


def _is_float_tensor(x) -> bool:
    return isinstance(x, Tensor) and x._data.dtype.kind in "fc"


def _ncoords(arr: np.ndarray) -> int:
    """Number of real coordinates of an array: complex entries count twice (re, im)."""
    return arr.size * (2 if arr.dtype.kind == "c" else 1)


def _to_coords(arr: np.ndarray, complex_layout: bool) -> np.ndarray:
    """Flatten to real coordinates: [real parts..., imaginary parts...] when complex_layout."""
    flat = np.asarray(arr).reshape(-1)
    if complex_layout:
        return np.concatenate([flat.real, flat.imag]).astype(np.float64)
    return flat.real.astype(np.float64)


def _from_coords(vec: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Inverse of `_to_coords`: a real-coordinate vector as an array shaped and typed like `like`."""
    n = like.size
    if like.dtype.kind == "c":
        out = vec[:n] + 1j * vec[n:]
    else:
        out = vec[:n]
    return np.asarray(out, dtype=like.dtype).reshape(like.shape)


def _unit(coord: int, like: np.ndarray) -> np.ndarray:
    """The one-hot array for real coordinate `coord` of `like` (1 or 1j at one element)."""
    e = np.zeros(like.shape, dtype=like.dtype)
    n = like.size
    if coord < n:
        e.reshape(-1)[coord] = 1
    else:
        e.reshape(-1)[coord - n] = 1j
    return e


def _fmt(a: np.ndarray) -> str:
    return np.array2string(np.asarray(a), precision=6, suppress_small=True, max_line_width=120)


def _describe(fn: Callable) -> str:
    """A short name for fn in messages: the op name for ops, Class.apply for custom Functions."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, type):  # a classmethod such as MyFunction.apply
        return f"{owner.__name__}.{fn.__name__}"
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


class _Problem:
    """The function and inputs under test, in the form the checks need."""

    def __init__(self, fn: Callable, inputs: tuple) -> None:
        self.fn = fn
        self.inputs = inputs
        # Indices of the inputs we differentiate with respect to.
        self.diff_idx = [i for i, x in enumerate(inputs) if _is_diff_tensor(x)]
        self.base = {i: np.array(inputs[i]._data, copy=True) for i in self.diff_idx}

    # -- evaluation on raw arrays (numerical Jacobian) --------------------------------------
    def eval_arrays(self, i: int, arr: np.ndarray) -> list:
        """Outputs (copied arrays; None for non-floating outputs) with input i's data = arr."""
        args = []
        for k, x in enumerate(self.inputs):
            if k in self.base:
                # Fresh tensors that still require grad: fn may itself differentiate its
                # inputs (gradgradcheck's function does).
                args.append(_wrap(arr if k == i else self.base[k].copy(), requires_grad=True))
            else:
                args.append(x)
        outs = _as_tuple(self.fn(*args))
        # Copy: an output may alias an input array that the next perturbation changes.
        return [np.array(o._data, copy=True) if _is_float_tensor(o) else None for o in outs]

    def outputs(self) -> tuple:
        """fn applied to the original inputs, recorded on the tape."""
        with enable_grad():
            return _as_tuple(self.fn(*self.inputs))

    def directional(self, i: int, direction: np.ndarray, eps: float) -> list:
        """Central difference (f(x + eps d) - f(x - eps d)) / 2 eps for every output."""
        x0 = self.base[i]
        # Cast back: a float32 input must stay float32 (NumPy would promote to float64).
        plus = self.eval_arrays(i, (x0 + eps * direction).astype(x0.dtype))
        minus = self.eval_arrays(i, (x0 - eps * direction).astype(x0.dtype))
        return [None if p is None else (p - m) / (2 * eps) for p, m in zip(plus, minus)]

    # -- forward mode (jvp) -------------------------------------------------------------------
    def jvp(self, tangents: dict, batch: int | None = None) -> list:
        """Output tangents (arrays; None where no tangent) for input tangents {index: array}; with
        `batch=B` the tangents are batches (B, *shape) propagated in one vector-mode pass."""
        with fwAD.dual_level(batch=batch):
            args = []
            for k, x in enumerate(self.inputs):
                if k in self.base:
                    # Detached: forward AD must not depend on the tape (PyTorch does the same).
                    p = x.detach()
                    if k in tangents:
                        p = fwAD.make_dual(p, _wrap(np.array(tangents[k], copy=True)))
                    args.append(p)
                else:
                    args.append(x)
            outs = _as_tuple(self.fn(*args))
            res = []
            for o in outs:
                if not _is_float_tensor(o):
                    res.append(None)
                    continue
                t = fwAD.unpack_dual(o).tangent
                res.append(None if t is None else np.array(t._data, copy=True))
            return res


def _check_tangent(t, out: np.ndarray, o: int, i: int) -> np.ndarray:
    """A forward-mode output tangent as an array of the output's shape (None -> zeros)."""
    if t is None:
        return np.zeros(out.shape, dtype=out.dtype)
    if t.shape != out.shape:
        raise GradcheckError(
            f"gradcheck (forward mode): the tangent of output {o} with respect to input {i} has shape "
            f"{t.shape} but the output has shape {out.shape}"
        )
    if t.dtype.kind == "c" and out.dtype.kind != "c":
        raise GradcheckError(
            f"gradcheck (forward mode): the tangent of real output {o} with respect to input {i} is complex ({t.dtype})"
        )
    return t


def _grads(outs: tuple, o: int, diff_inputs: list, grad_output: np.ndarray, create_graph: bool = False) -> list:
    """vjp of output o: gradients (arrays or None) for each differentiable input (with
    `create_graph` the backward formulas run as recorded Tensor ops, else over arrays where an op
    has that form)."""
    gs = grad(outs[o], diff_inputs, _wrap(grad_output), retain_graph=True, allow_unused=True, create_graph=create_graph)
    res = []
    for g, x in zip(gs, diff_inputs):
        if g is None:
            res.append(None)
            continue
        if g._data.shape != x._data.shape:
            raise GradcheckError(
                f"gradcheck (backward mode): the gradient has shape {g._data.shape} but the input has shape "
                f"{x._data.shape}"
            )
        res.append(np.array(g._data, copy=True))
    return res


# -- Jacobians in real coordinates ------------------------------------------------------------
# J[(o, i)] has shape (coords of input i, coords of output o): entry [c, r] is the derivative
# of real coordinate r of output o with respect to real coordinate c of input i.


def _column_jacobian(prob: _Problem, out0: list, column, only: tuple | None = None) -> dict:
    """Jacobian blocks built column by column: column(i, c) gives every output's derivative
    along real coordinate c of input i (a central difference, or a jvp)."""
    J = {}
    for i in prob.diff_idx:
        if only is not None and i != only[1]:
            continue
        x0 = prob.base[i]
        nin = _ncoords(x0)
        for o, y in enumerate(out0):
            if y is not None:
                J[(o, i)] = np.zeros((nin, _ncoords(y)))
        for c in range(nin):
            d = column(i, c)
            for o, y in enumerate(out0):
                if y is not None:
                    J[(o, i)][c] = _to_coords(d[o], y.dtype.kind == "c")
    return J


def _numerical_jacobian(prob: _Problem, out0: list, eps: float, only: tuple | None = None) -> dict:
    return _column_jacobian(prob, out0, lambda i, c: prob.directional(i, _unit(c, prob.base[i]), eps), only)


def _backward_jacobian(
    prob: _Problem, outs: tuple, out0: list, nondet_tol: float, only: tuple | None = None, create_graph: bool = False
) -> dict:
    """Rows of the Jacobian from vjps; every vjp is run twice to check reentrancy."""
    diff_inputs = [prob.inputs[i] for i in prob.diff_idx]
    J = {}
    for o, y in enumerate(out0):
        if y is None or (only is not None and o != only[0]):
            continue
        nout = _ncoords(y)
        for i in prob.diff_idx:
            J[(o, i)] = np.zeros((_ncoords(prob.base[i]), nout))
        if not outs[o].requires_grad:
            continue  # nothing depends on the inputs: the analytical Jacobian is zero
        for r in range(nout):
            go = _unit(r, y)
            g1 = _grads(outs, o, diff_inputs, go, create_graph)
            g2 = _grads(outs, o, diff_inputs, go, create_graph)
            for i, a, b in zip(prob.diff_idx, g1, g2):
                if (a is None) != (b is None) or (a is not None and np.max(np.abs(a - b), initial=0.0) > nondet_tol):
                    raise GradcheckError(
                        f"gradcheck (backward mode): backward is not reentrant: running backward twice with the "
                        f"same input and grad_output gave different values for output {o}, input {i} (tolerance "
                        f"for nondeterminism nondet_tol={nondet_tol})."
                    )
                if a is not None:
                    J[(o, i)][:, r] = _to_coords(a, prob.base[i].dtype.kind == "c")
    return J


def _forward_jacobian(prob: _Problem, out0: list, only: tuple | None = None) -> dict:
    def column(i, c):
        ts = prob.jvp({i: _unit(c, prob.base[i])})
        return [None if y is None else _check_tangent(ts[o], y, o, i) for o, y in enumerate(out0)]

    return _column_jacobian(prob, out0, column, only)


def _views(J: np.ndarray, in_c: bool, out_c: bool, nin: int, nout: int, mode: str) -> list:
    """PyTorch's presentation of a real-coordinate Jacobian block: [(qualifier, matrix)].

    Matrices have shape (input numel, output numel). Backward mode packs a complex input's
    two rows into ds/dx + i ds/dy (conjugate Wirtinger) and splits complex outputs into real
    and imaginary parts; forward mode splits complex inputs and packs complex outputs.
    """

    def pack_in(M):
        return M[:nin] + 1j * M[nin:] if in_c else M

    def pack_out(M):
        return M[:, :nout] + 1j * M[:, nout:] if out_c else M

    if mode == "backward":
        if not out_c:
            return [("", pack_in(J))]
        return [
            (", considering the real part of the complex output", pack_in(J[:, :nout])),
            (", considering the imaginary part of the complex output", pack_in(J[:, nout:])),
        ]
    if not in_c:
        return [("", pack_out(J))]
    return [
        (", considering the real part of the complex input (tangent 1)", pack_out(J[:nin])),
        (", considering the imaginary part of the complex input (tangent 1j)", pack_out(J[nin:])),
    ]


def _mismatch(mode: str) -> str:
    # torch's wording, which names the mode for forward-mode failures
    return "Jacobian mismatch" if mode == "backward" else "Jacobian computed with forward mode mismatch"


def _compare(num: dict, ana: dict, prob: _Problem, out0: list, mode: str, atol: float, rtol: float) -> str | None:
    """None when every block matches (|a - n| <= atol + rtol |n|), else the failure message."""
    for (o, i), N in num.items():
        A = ana[(o, i)]
        x0, y = prob.base[i], out0[o]
        for (qual, n), (_, a) in zip(
            _views(N, x0.dtype.kind == "c", y.dtype.kind == "c", x0.size, y.size, mode),
            _views(A, x0.dtype.kind == "c", y.dtype.kind == "c", x0.size, y.size, mode),
        ):
            if not np.all(np.abs(a - n) <= atol + rtol * np.abs(n)):
                how = "vjp, reverse mode" if mode == "backward" else "jvp, forward-mode AD"
                return (
                    f"gradcheck failed in {mode} mode ({how}): {_mismatch(mode)} for output {o} with respect to "
                    f"input {i}{qual}.\n"
                    f"Jacobians have shape (input numel, output numel) = {n.shape}; atol={atol}, rtol={rtol}, "
                    f"max |analytical - numerical| = {np.max(np.abs(a - n)):.3g}\n"
                    f"numerical:\n{_fmt(n)}\nanalytical:\n{_fmt(a)}\n"
                )
    return None


# -- fast mode --------------------------------------------------------------------------------


def _random_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    # Positive entries, unit norm, as PyTorch: the tolerance is rescaled with their sums.
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def _fast_check(
    prob: _Problem,
    outs: tuple,
    out0: list,
    eps: float,
    atol: float,
    rtol: float,
    check_forward: bool,
    check_backward: bool,
    create_graph: bool = False,
) -> str | None:
    """Compare u^T J v for random u (per output) and v (per input) instead of whole Jacobians
    (`create_graph`: the vjps as when something differentiates them, see _grads)."""
    rng = np.random.default_rng(_SEED)
    vs = {i: _random_unit(rng, _ncoords(prob.base[i])) for i in prob.diff_idx}
    us = {o: _random_unit(rng, _ncoords(y)) for o, y in enumerate(out0) if y is not None}
    numerical = {}
    for i, v in vs.items():
        d = prob.directional(i, _from_coords(v, prob.base[i]), eps)
        for o, u in us.items():
            numerical[(o, i)] = float(u @ _to_coords(d[o], out0[o].dtype.kind == "c"))
    checks = []
    if check_backward:
        diff_inputs = [prob.inputs[i] for i in prob.diff_idx]
        ana = {}
        for o, u in us.items():
            gs = (
                _grads(outs, o, diff_inputs, _from_coords(u, out0[o]), create_graph)
                if outs[o].requires_grad
                else [None] * len(diff_inputs)
            )
            for i, g in zip(prob.diff_idx, gs):
                ana[(o, i)] = 0.0 if g is None else float(_to_coords(g, prob.base[i].dtype.kind == "c") @ vs[i])
        checks.append(("backward", ana))
    if check_forward:
        ana = {}
        for i, v in vs.items():
            ts = prob.jvp({i: _from_coords(v, prob.base[i])})
            for o, u in us.items():
                t = _check_tangent(ts[o], out0[o], o, i)
                ana[(o, i)] = float(u @ _to_coords(t, out0[o].dtype.kind == "c"))
        checks.append(("forward", ana))
    for mode, ana in checks:
        for (o, i), n in numerical.items():
            a = ana[(o, i)]
            # Entry-wise |a - n| <= atol + ... becomes |u^T (A - N) v| <= atol * sum(u) * sum(v) + ...
            tol = atol * float(us[o].sum()) * float(vs[i].sum()) + rtol * abs(n)
            if abs(a - n) > tol:
                return _fast_message(prob, outs, out0, mode, o, i, n, a, eps, atol, rtol)
    return None


def _fast_message(
    prob: _Problem,
    outs: tuple,
    out0: list,
    mode: str,
    o: int,
    i: int,
    n: float,
    a: float,
    eps: float,
    atol: float,
    rtol: float,
) -> str:
    how = "vjp, reverse mode" if mode == "backward" else "jvp, forward-mode AD"
    msg = (
        f"gradcheck failed in {mode} mode ({how}, fast_mode=True): {_mismatch(mode)} for output {o} with "
        f"respect to input {i}.\n"
        f"fast mode compares u^T J v for random unit vectors u, v:\nnumerical:  {n!r}\nanalytical: {a!r}\n"
    )
    # Whole Jacobians make the message useful; compute them only when that is cheap.
    if _ncoords(prob.base[i]) * _ncoords(out0[o]) <= 10_000:
        pair = (o, i)
        N = _numerical_jacobian(prob, out0, eps, only=pair)
        A = (
            _backward_jacobian(prob, outs, out0, float("inf"), only=pair)
            if mode == "backward"
            else _forward_jacobian(prob, out0, only=pair)
        )
        slow = _compare({pair: N[pair]}, {pair: A[pair]}, prob, out0, mode, atol, rtol)
        if slow is not None:
            msg += "\nThe full Jacobians (slow mode) for this pair:\n" + slow
        else:
            msg += "\n(The full Jacobians of this pair agree element-wise; the projection exceeds its tolerance.)\n"
    return msg


# -- extra checks ---------------------------------------------------------------------------


def _check_undefined_backward(prob: _Problem) -> str | None:
    """Backward fed all-zero grad_outputs (and, with several outputs, no grad for one of them)
    must return None or zeros, not crash."""
    diff_inputs = [prob.inputs[i] for i in prob.diff_idx]
    outs = [o for o in prob.outputs() if _is_float_tensor(o) and o.requires_grad]
    if not outs:
        return None
    subsets = [outs]
    if len(outs) > 1:
        # Leaving one output out means its grad never arrives: the engine hands the node an
        # undefined (None) gradient for that slot.
        subsets += [outs[:k] + outs[k + 1 :] for k in range(len(outs))]
    for sub in subsets:
        zeros = [_wrap(np.zeros_like(o._data)) for o in sub]
        try:
            gs = grad(sub, diff_inputs, zeros, retain_graph=True, allow_unused=True)
        except Exception as e:  # any crash is the failure being checked for
            return (
                f"gradcheck failed in backward mode (undefined grad check): backward raised "
                f"{type(e).__name__}: {e}\nwhen all output grads were zero or undefined; backward "
                "formulas must handle undefined/zero grad_outputs."
            )
        for i, g in zip(prob.diff_idx, gs):
            if g is not None and np.any(g._data != 0):
                return (
                    f"gradcheck failed in backward mode (undefined grad check): with all output grads zero "
                    f"or undefined, the gradient of input {i} should be None or zero, got:\n{_fmt(g._data)}"
                )
    return None


def _check_undefined_forward(prob: _Problem, out0: list) -> str | None:
    """A missing tangent must act exactly like a zero tangent (docs/design.md, "Tangents")."""
    rng = np.random.default_rng(_SEED + 1)
    # No tangent anywhere: every output tangent must be None or zero.
    for o, t in enumerate(prob.jvp({})):
        if t is not None and np.any(t != 0):
            return (
                f"gradcheck failed in forward mode (undefined tangent check): output {o} has a non-zero "
                f"tangent although no input has one:\n{_fmt(t)}"
            )
    if len(prob.diff_idx) < 2:
        return None
    for i in prob.diff_idx:
        v = _from_coords(rng.standard_normal(_ncoords(prob.base[i])), prob.base[i])
        missing = prob.jvp({i: v})
        zeros = {k: np.zeros_like(prob.base[k]) for k in prob.diff_idx}
        zeros[i] = v
        explicit = prob.jvp(zeros)
        for o, y in enumerate(out0):
            if y is None:
                continue
            a = _check_tangent(missing[o], y, o, i)
            b = _check_tangent(explicit[o], y, o, i)
            if not np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True):
                return (
                    f"gradcheck failed in forward mode (undefined tangent check): output {o}'s tangent "
                    f"differs when the inputs other than input {i} have no tangent instead of a zero one\n"
                    f"without tangents:\n{_fmt(a)}\nwith zero tangents:\n{_fmt(b)}"
                )
    return None


def _check_batched_forward(prob: _Problem, out0: list, atol: float, rtol: float) -> str | None:
    """Vector mode against the ordinary jvp: B tangents propagated in one batched pass
    (`dual_level(batch=B)`) must give, row by row, the jvps of the tangents one at a time. B runs
    over 1, 7 and a size equal to one of the input's own dims (where a rule that mixed the batch
    dim with a logical dim would go unnoticed otherwise)."""
    rng = np.random.default_rng(_SEED + 2)
    for i in prob.diff_idx:
        x0 = prob.base[i]
        sizes = [1, 7] + [n for n in x0.shape[:1] if n not in (0, 1, 7)]
        for B in sizes:
            vs = [_from_coords(rng.standard_normal(_ncoords(x0)), x0) for _ in range(B)]
            try:
                batched = prob.jvp({i: np.stack(vs)}, batch=B)
            except Exception as e:  # a batching rule that cannot run is what this check reports
                return (
                    f"gradcheck failed in forward mode (batched forward grad check): with a batch of {B} "
                    f"tangents of input {i} the batched pass raised {type(e).__name__}: {e}"
                )
            for b, v in enumerate(vs):
                single = prob.jvp({i: v})
                for o, y in enumerate(out0):
                    if y is None:
                        continue
                    expect = _check_tangent(single[o], y, o, i)
                    got = np.zeros_like(expect) if batched[o] is None else batched[o][b]
                    if not np.allclose(got, expect, rtol=rtol, atol=atol, equal_nan=True):
                        return (
                            f"gradcheck failed in forward mode (batched forward grad check): with a batch of "
                            f"{B} tangents of input {i}, row {b} of output {o}'s tangent differs from the jvp "
                            f"of that tangent alone\nbatched:\n{_fmt(got)}\nalone:\n{_fmt(expect)}"
                        )
    return None


def _check_batched_backward(prob: _Problem, atol: float, rtol: float) -> str | None:
    """Batched cotangents against the vjp: B cotangents per output (B in 1, 7 and the size of an
    output's first dim, where a rule that swapped the batch dim with a logical one would otherwise
    go unnoticed) through one
    backward pass (the engine runs the backward formulas on batched gradients, as jacrev and
    vmap over a vjp do) must give, row by row, the vjps of each alone (torch's check_batched_grad)."""
    rng = np.random.default_rng(_SEED + 3)
    outs = [o for o in prob.outputs() if _is_float_tensor(o) and o.requires_grad]
    diff_inputs = [prob.inputs[i] for i in prob.diff_idx]
    if not outs:
        return None
    for B in [1, 7] + sorted({o.shape[0] for o in outs if o.ndim and o.shape[0] not in (0, 1, 7)})[:1]:
        cts = [
            _from_coords(rng.standard_normal(B * _ncoords(o._data)), np.zeros((B,) + o._data.shape, o._data.dtype))
            for o in outs
        ]
        level = new_batch_level()
        try:
            batched = grad(
                outs, diff_inputs, [BatchedTensor(_wrap(c), level) for c in cts], retain_graph=True, allow_unused=True
            )
        except Exception as e:  # a batching rule that cannot run is what this check reports
            return (
                f"gradcheck failed in backward mode (batched grad check): a batch of {B} cotangents through "
                f"one backward pass raised {type(e).__name__}: {e}"
            )
        for b in range(B):
            single = grad(outs, diff_inputs, [_wrap(np.array(c[b])) for c in cts], retain_graph=True, allow_unused=True)
            for k, (g, one) in enumerate(zip(batched, single)):
                expect = np.zeros(diff_inputs[k]._data.shape, diff_inputs[k]._data.dtype) if one is None else one._data
                got = expect * 0 if g is None else (g._phys._data[b] if type(g) is BatchedTensor else g._data)
                if not np.allclose(got, expect, rtol=rtol, atol=atol, equal_nan=True):
                    return (
                        f"gradcheck failed in backward mode (batched grad check): with a batch of {B} "
                        f"cotangents, row {b} of the gradient of input {prob.diff_idx[k]} differs from the vjp "
                        f"of that cotangent alone\nbatched:\n{_fmt(got)}\nalone:\n{_fmt(expect)}"
                    )
    return None


def batched_backward_error(
    fn: Callable[..., Any], inputs: TensorOrTensors, *, atol: float = 1e-5, rtol: float = 1e-3
) -> str | None:
    """The batched grad check alone: the failure's message, or None (the op database runs it)."""
    return _check_batched_backward(_Problem(fn, _as_tuple(inputs)), atol, rtol)


def batched_forward_error(
    fn: Callable[..., Any], inputs: TensorOrTensors, *, atol: float = 1e-5, rtol: float = 1e-3
) -> str | None:
    """The batched forward grad check alone (vector mode against the jvp, row by row): the
    failure's message, or None. The op database runs it on every sample of every op."""
    prob = _Problem(fn, _as_tuple(inputs))
    out0 = [np.array(o._data, copy=True) if _is_float_tensor(o) else None for o in prob.outputs()]
    return _check_batched_forward(prob, out0, atol, rtol)


def _run_checks(
    prob: _Problem,
    *,
    eps: float,
    atol: float,
    rtol: float,
    check_forward_ad: bool,
    check_backward_ad: bool,
    check_undefined_grad: bool,
    check_batched_forward_grad: bool,
    fast_mode: bool,
    nondet_tol: float,
    check_batched_grad: bool = False,
) -> str | None:
    """All of gradcheck's checks in order; the first failure's message, or None."""
    outs = prob.outputs()
    out0 = [np.array(o._data, copy=True) if _is_float_tensor(o) else None for o in outs]
    if fast_mode:
        msg = _fast_check(prob, outs, out0, eps, atol, rtol, check_forward_ad, check_backward_ad)
        if msg is not None:
            return msg
    else:
        numerical = _numerical_jacobian(prob, out0, eps)
        if check_backward_ad:
            msg = _compare(
                numerical, _backward_jacobian(prob, outs, out0, nondet_tol), prob, out0, "backward", atol, rtol
            )
            if msg is not None:
                return msg
        if check_forward_ad:
            msg = _compare(numerical, _forward_jacobian(prob, out0), prob, out0, "forward", atol, rtol)
            if msg is not None:
                return msg
    if check_undefined_grad:
        msg = _check_undefined_backward(prob) if check_backward_ad else None
        if msg is None and check_forward_ad:
            msg = _check_undefined_forward(prob, out0)
        if msg is not None:
            return msg
    if check_batched_grad and check_backward_ad:
        msg = _check_batched_backward(prob, atol, rtol)
        if msg is not None:
            return msg
    if check_batched_forward_grad and check_forward_ad:
        return _check_batched_forward(prob, out0, atol, rtol)
    return None


# -- public API -----------------------------------------------------------------------------


def gradcheck(
    fn: Callable[..., Any],
    inputs: TensorOrTensors,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    check_undefined_grad: bool = True,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    fast_mode: bool = False,
    nondet_tol: float = 0.0,
) -> bool:
    """Check fn's backward (vjp) and, with ``check_forward_ad=True``, forward (jvp) derivatives
    against central differences.

    The defaults are torch's (forward formulas are checked only when asked; ``pushforward
    check`` and the op database always ask), so code ported from torch behaves as it did there
    (docs/design.md, "Deviations").
    ``check_batched_grad`` / ``check_batched_forward_grad``: B cotangents (tangents) in one batched
    pass must give, row by row, the vjps (jvps) of each alone (vmap's batching rules).
    Differentiates with respect to the floating/complex tensors in `inputs` that require
    grad; other entries are passed through. Returns True, or raises `GradcheckError`
    (returns False when ``raise_exception=False``) naming the mode, the output and input
    index and showing both Jacobians. Use float64/complex128 inputs: float32 is too coarse
    for ``eps=1e-6`` (a UserWarning says so).

    >>> import pushforward as pf
    >>> x = pf.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = pf.tensor([[0.5], [-1.0]], requires_grad=True)
    >>> gradcheck(lambda a, b: a @ b, (x, y))
    True
    """
    if not check_forward_ad and not check_backward_ad:
        # as torch: a check of nothing must not pass silently (e.g. check_backward_ad=False relying
        # on a forward check that is off by default)
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    tupled = _as_tuple(inputs)
    prob = _Problem(fn, tupled)
    if not prob.diff_idx:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True."
        )
    for i in prob.diff_idx:
        if tupled[i]._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex "
                f"(dtype {tupled[i]._data.dtype}): its precision is too low for finite differences with "
                f"eps={eps}, so this check will likely fail. Use float64 or complex128 inputs.",
                UserWarning,
                stacklevel=2,
            )

    try:
        msg = _run_checks(
            prob,
            eps=eps,
            atol=atol,
            rtol=rtol,
            check_forward_ad=check_forward_ad,
            check_backward_ad=check_backward_ad,
            check_undefined_grad=check_undefined_grad,
            check_batched_forward_grad=check_batched_forward_grad,
            fast_mode=fast_mode,
            nondet_tol=nondet_tol,
            check_batched_grad=check_batched_grad,
        )
    except GradcheckError as e:  # raised deep inside (shape/dtype/reentrancy problems)
        msg = str(e)
    if msg is not None:
        return _fail(_named(msg, fn), raise_exception)
    return True


def _named(msg: str, fn: Callable) -> str:
    """Name the function (for the op database: the op) in the first line."""
    name = _describe(fn)
    msg = msg.replace("gradcheck failed in", f"gradcheck failed for {name} in", 1)
    return msg.replace("gradcheck (", f"gradcheck for {name} (", 1)


def gradcheck_forms(
    fn: Callable[..., Any],
    inputs: TensorOrTensors,
    forms: Sequence[Callable],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    backward_forms: Sequence[str] = ("array",),
) -> None:
    """gradcheck of fn's backward and of several forms of its forward derivative, against one
    numerical Jacobian (for the op database, which checks every compiled form of a formula).

    Each form is a context manager factory yielding a function with fn's values whose jvps
    are checked inside that context. The backward is checked in each of `backward_forms`:
    "array" (a plain backward pass: the array form of a formula where one exists) and "tensor"
    (with create_graph, as when something differentiates the gradient: the Tensor form).
    Raises GradcheckError naming the failing form.
    """
    tupled = _as_tuple(inputs)
    if fast_mode:  # random projections: one gradcheck per form
        if check_backward_ad:
            gradcheck(fn, tupled, eps=eps, atol=atol, rtol=rtol, check_forward_ad=False, fast_mode=True)
            if "tensor" in backward_forms:
                prob = _Problem(fn, tupled)
                outs = prob.outputs()
                out0 = [np.array(o._data, copy=True) if _is_float_tensor(o) else None for o in outs]
                msg = _fast_check(prob, outs, out0, eps, atol, rtol, False, True, create_graph=True)
                if msg is not None:
                    raise GradcheckError(_named(msg, _tensor_backward_form(fn)))
        for form in forms:
            with form() as g:
                gradcheck(
                    g,
                    tupled,
                    eps=eps,
                    atol=atol,
                    rtol=rtol,
                    check_forward_ad=True,
                    check_backward_ad=False,
                    fast_mode=True,
                )
        return
    prob = _Problem(fn, tupled)
    outs = prob.outputs()
    out0 = [np.array(o._data, copy=True) if _is_float_tensor(o) else None for o in outs]
    numerical = _numerical_jacobian(prob, out0, eps)
    for form in backward_forms if check_backward_ad else ():
        tensor_form = form == "tensor"
        try:
            J = _backward_jacobian(prob, outs, out0, 0.0, create_graph=tensor_form)
            msg = _compare(numerical, J, prob, out0, "backward", atol, rtol)
            msg = msg or (None if tensor_form else _check_undefined_backward(prob))
        except GradcheckError as e:
            msg = str(e)
        if msg is not None:
            raise GradcheckError(_named(msg, _tensor_backward_form(fn) if tensor_form else fn))
    for form in forms:
        with form() as g:
            fprob = _Problem(g, tupled)
            try:
                msg = _compare(numerical, _forward_jacobian(fprob, out0), fprob, out0, "forward", atol, rtol)
                msg = msg or _check_undefined_forward(fprob, out0)
            except GradcheckError as e:
                msg = str(e)
        if msg is not None:
            raise GradcheckError(_named(msg, g))


def _tensor_backward_form(fn: Callable) -> Callable:
    """fn, named as checked with the Tensor form of its backward formulas (create_graph=True)."""

    def g(*xs):
        return fn(*xs)

    g.__qualname__ = g.__name__ = f"{getattr(fn, '__name__', 'fn')} (tensor form of the backward formula)"
    return g


def _random_grad_output(rng: np.random.Generator, like: np.ndarray, non_contiguous: bool) -> np.ndarray:
    """Uniform values in [-1, 1) shaped and typed like `like` (complex: both parts random)."""

    def draw():
        a = rng.uniform(-1, 1, like.shape)
        if like.dtype.kind == "c":
            a = a + 1j * rng.uniform(-1, 1, like.shape)
        return a.astype(like.dtype)

    if not non_contiguous or like.ndim == 0:
        return draw()
    # A strided view into a larger buffer: every other element of the last dimension.
    buf = np.zeros(like.shape[:-1] + (2 * like.shape[-1],), dtype=like.dtype)
    view = buf[..., ::2]
    view[...] = draw()
    return view


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: TensorOrTensors,
    grad_outputs: TensorOrTensors | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    check_fwd_over_rev: bool = True,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    gen_non_contig_grad_outputs: bool = False,
    check_undefined_grad: bool = True,
    check_batched_grad: bool = False,
    nondet_tol: float = 0.0,
) -> bool:
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> vjp of fn.

    ``check_rev_over_rev`` checks that vjp with reverse mode (backward of backward),
    ``check_fwd_over_rev`` with forward mode (jvp of the vjp: Hessian-vector products).
    Random grad_outputs (requiring grad) are made when `grad_outputs` is None.

    >>> import pushforward as pf
    >>> x = pf.tensor([0.1, 0.7, -2.0], requires_grad=True)
    >>> gradgradcheck(pf.tanh, (x,))
    True
    """
    tupled_inputs = _as_tuple(inputs)
    rg_inputs = {i for i, x in enumerate(tupled_inputs) if _is_diff_tensor(x)}
    if grad_outputs is None:
        with enable_grad():
            outs = _as_tuple(fn(*tupled_inputs))
        rng = np.random.default_rng(_SEED)
        tupled_grad_outputs = tuple(
            _wrap(_random_grad_output(rng, o._data, gen_non_contig_grad_outputs), requires_grad=True)
            for o in outs
            if _is_float_tensor(o) and o.requires_grad
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    n_in = len(tupled_inputs)
    rg_grads = {n_in + k for k, g in enumerate(tupled_grad_outputs) if _is_diff_tensor(g)}
    restore = rg_inputs | rg_grads

    def vjp_fn(*args):
        # gradcheck hands us detached (possibly dual) tensors in forward mode and fresh
        # tensors for finite differences: give back requires_grad so we can differentiate.
        args = tuple(
            a.requires_grad_(True) if k in restore and isinstance(a, Tensor) and not a.requires_grad else a
            for k, a in enumerate(args)
        )
        with enable_grad():
            outs = [o for o in _as_tuple(fn(*args[:n_in])) if _is_float_tensor(o) and o.requires_grad]
            diff_in = [a for a in args[:n_in] if _is_diff_tensor(a)]
            if not outs:
                return ()
            grads = grad(outs, diff_in, list(args[n_in:]), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    vjp_fn.__qualname__ = f"vjp of {_describe(fn)}"
    return gradcheck(
        vjp_fn,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        check_undefined_grad=check_undefined_grad,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        nondet_tol=nondet_tol,
    )
