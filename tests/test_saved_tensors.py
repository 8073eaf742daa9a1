"""What a tape node keeps is what the backward formulas that will run read.

An in-place write into a tensor the backward does not need must not break backward
(torch's rule); a write into one it does need keeps the saved values first, so the gradient is
that of the program as written (docs/design.md, "Overwritten saved values"), where torch raises;
`forbid_mutation_on_saved_tensors` restores torch's error (the version check).
PyTorch 2.13 is the oracle: for which programs differentiate, and for the gradients of the
programs torch refuses once the write is made out of place.
"""

from __future__ import annotations

import ast
import itertools
import warnings

import numpy as np
import pytest

import pushforward as pf
from pushforward.codegen.saves import Reads, plan
from pushforward.testing.opdb import C128, F64, OPS, _rebuild, diff_leaves

torch = pytest.importorskip("torch")

A = np.array([0.3, 0.5, 0.7])
B = np.array([1.2, 0.4, -0.9])


def _program(L, f, mutate: str, needs: tuple, functional: bool = False):
    """Run f on clones of two leaves, write into `mutate` ("out", "out1": the second output, "x"
    or "y") in place (`functional`: the same program with the write out of place), then
    differentiate the sum of the first output. Returns the gradients (arrays, zeros for None)
    or the error message."""
    leaves = []
    ins = []
    for arr, need in zip((A, B), needs):
        t = (
            (L.tensor if L is pf else torch.tensor)(arr.copy(), requires_grad=True)
            if need
            else (L.tensor if L is pf else torch.tensor)(arr.copy())
        )
        leaves.append(t)
        ins.append(t.clone() if need else t)
    try:
        out = f(L, *ins)
        first = out[0] if isinstance(out, tuple) else out
        if functional:
            first = first * 2 if mutate == "out" else first  # (the others do not change first)
        else:
            target = {"out": first, "x": ins[0], "y": ins[1]}[mutate] if mutate != "out1" else out[1]
            target.mul_(2)
        want = [t for t, n in zip(leaves, needs) if n]
        gs = (pf.autograd.grad if L is pf else torch.autograd.grad)(first.sum(), want, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - the message is compared
        return str(e)
    return [np.zeros(2) if g is None else np.array(g.detach().numpy() if L is torch else g.numpy()) for g in gs]


# Programs with saved tensors and in-place writes: torch differentiates each of them.
CASES = {
    "pow scalar, write into the result": (lambda L, x, y: x**3, "out", (True, False)),
    "sign, write into the result": (lambda L, x, y: L.sign(x), "out", (True, False)),
    "sign, write into the input": (lambda L, x, y: L.sign(x), "x", (True, False)),
    "erfinv, write into the result": (lambda L, x, y: L.erfinv(x), "out", (True, False)),
    "logaddexp, write into the result": (lambda L, x, y: L.logaddexp(x, y), "out", (True, True)),
    "max dim values, write into them": (lambda L, x, y: L.max(L.stack([x, y]), 0)[0], "out", (True, True)),
    "max dim indices, write into the input": (lambda L, x, y: L.max(L.stack([x, y]), 0), "x", (True, True)),
    "cat, write into an input": (lambda L, x, y: L.cat([x, y]), "x", (True, True)),
    "cat, write into the result": (lambda L, x, y: L.cat([x, y]), "out", (True, True)),
    "mul by a Python scalar, write into the input": (lambda L, x, y: x * 2, "x", (True, False)),
    "div by a Python scalar, write into the input": (lambda L, x, y: x / 2, "x", (True, False)),
    "mul by a constant, write into the input": (lambda L, x, y: x * y, "x", (True, False)),
    "hypot with a constant, write into the constant": (lambda L, x, y: L.hypot(x, y), "y", (True, False)),
    "remainder by a scalar, write into the input": (lambda L, x, y: L.remainder(x, 0.7), "x", (True, False)),
    "remainder by a constant, write into it": (lambda L, x, y: L.remainder(x, y), "y", (True, False)),
    "fmod by a constant, write into the input": (lambda L, x, y: L.fmod(x, y), "x", (True, False)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_inplace_after_op_differentiates_like_torch(case):
    f, mutate, needs = CASES[case]
    expect = _program(torch, f, mutate, needs)
    assert not isinstance(expect, str), f"torch refuses: {expect}"
    got = _program(pf, f, mutate, needs)
    assert not isinstance(got, str), f"pushforward refuses what torch differentiates: {got}"
    for g, e in zip(got, expect):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_a_branch_that_does_not_run_keeps_nothing():
    """div with a rounding mode has zero derivatives: its node keeps neither input (torch keeps
    both), decided by the formulas' static test `rounding_mode is None` when it is recorded."""
    f = lambda L, x, y: L.div(x, y, rounding_mode="floor")  # noqa: E731
    assert isinstance(_program(torch, f, "y", (True, True)), str)
    got = _program(pf, f, "y", (True, True))
    assert not isinstance(got, str), got
    assert not any(g.any() for g in got)
    assert not isinstance(_program(pf, lambda L, x, y: L.sign(x), "x", (True, False)), str)


# The backward reads the tensor that was written into: torch raises; pushforward keeps the saved
# values and differentiates the program as written, or raises torch's error under the switch.
STILL_NEEDED = {
    "sin reads its input": (lambda L, x, y: L.sin(x), "x", (True, False)),
    "exp reads its result": (lambda L, x, y: L.exp(x), "out", (True, False)),
    "mul reads the other factor": (lambda L, x, y: x * y, "y", (True, False)),
    "pow reads its result for the exponent's gradient": (lambda L, x, y: L.pow(x, y), "out", (False, True)),
    "hypot reads its result": (lambda L, x, y: L.hypot(x, y), "out", (True, False)),
    "erfinv reads its input": (lambda L, x, y: L.erfinv(x), "x", (True, False)),
    "max dim reads its indices": (lambda L, x, y: L.max(L.stack([x, y]), 0), "out1", (True, True)),
}


@pytest.mark.parametrize("case", list(STILL_NEEDED))
def test_writing_into_a_saved_tensor_keeps_its_values(case):
    f, mutate, needs = STILL_NEEDED[case]
    assert "modified by an inplace operation" in _program(torch, f, mutate, needs)
    got = _program(pf, f, mutate, needs)
    assert not isinstance(got, str), got
    expect = _program(torch, f, mutate, needs, functional=True)
    for g, e in zip(got, expect):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", list(STILL_NEEDED))
def test_the_switch_restores_torchs_error(case):
    f, mutate, needs = STILL_NEEDED[case]
    with pf.autograd.forbid_mutation_on_saved_tensors():
        got = _program(pf, f, mutate, needs)
    assert isinstance(got, str) and "modified by an inplace operation" in got, got
    assert pf.autograd.is_mutation_on_saved_tensors_allowed()
    pf.autograd.set_mutation_on_saved_tensors_allowed(False)
    try:
        assert "modified by an inplace operation" in _program(pf, f, mutate, needs)
    finally:
        pf.autograd.set_mutation_on_saved_tensors_allowed(True)


# -- generic: every op of the database, every pattern of inputs needing grad -------------------------


def _torch_call(name):
    fn = getattr(torch, name, None)
    return fn if callable(fn) else None


def _run_sample(L, info, sample, needs, mutate, functional=False):
    """The sample's op on clones of its float tensors (those with needs[k] require grad), an
    in-place `mul_(2)` on input k or output k (mutate = ("in"|"out", k) or None; `functional`:
    out of place), and the gradients of the sum of the float outputs."""
    leaves = diff_leaves(sample)
    if L is pf:
        fresh = [pf.from_numpy(np.array(t._data, copy=True)).requires_grad_(n) for t, n in zip(leaves, needs)]
    else:
        fresh = [torch.from_numpy(np.array(t._data, copy=True)).requires_grad_(n) for t, n in zip(leaves, needs)]
    ins = [t.clone() if n else t for t, n in zip(fresh, needs)]
    s = _rebuild(sample, ins)
    conv = (
        (lambda v: v)
        if L is pf
        else (lambda v: torch.from_numpy(np.array(v._data, copy=True)) if isinstance(v, pf.Tensor) else v)
    )
    args = [conv(a) if not isinstance(a, (list, tuple)) else type(a)(conv(x) for x in a) for a in s.args]
    kwargs = {k: conv(v) for k, v in s.kwargs.items()}
    inp = (
        s.input
        if L is pf
        else (conv(s.input) if not isinstance(s.input, (list, tuple)) else [conv(x) for x in s.input])
    )
    try:
        out = info.op(inp, *args, **kwargs) if L is pf else _torch_call(info.name)(inp, *args, **kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if mutate is not None:
            where, k = mutate
            if not functional:
                (ins if where == "in" else outs)[k].mul_(2)
            elif where == "out":
                outs[k] = outs[k] * 2
        floats = (
            [o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex]
            if L is torch
            else [o for o in outs if o.dtype.kind in "fc"]
        )
        total = sum(
            (o.real.sum() if (o.dtype.is_complex if L is torch else o.dtype.kind == "c") else o.sum()) for o in floats
        )
        want = [t for t, n in zip(fresh, needs) if n]
        gs = (pf.autograd.grad if L is pf else torch.autograd.grad)(total, want, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return str(e)
    return [None if g is None else np.array(g.detach().numpy(force=True) if L is torch else g.numpy()) for g in gs]


# einsum keeps all its operands whichever need grad: what is kept is decided per parameter, and
# its one list parameter holds them all (torch decomposes einsum into products that keep less).
# kron: torch reshapes its inputs with _unsafe_view, which does not share their version
# counter, so after an in-place write into an input torch's backward silently reads the new values;
# pushforward's kron multiplies copies and differentiates at the values the op saw.
GENERIC = sorted(
    n
    for n, info in OPS.items()
    if info.differentiable
    and not info.is_view
    and _torch_call(n)
    and not n.startswith("_")
    and n not in ("einsum", "kron")
)


@pytest.mark.parametrize("name", GENERIC)
def test_every_op_differentiates_after_inplace_writes_where_torch_does(name):
    """For each sample and pattern of inputs needing grad, write into each input and each output
    after the op: where torch differentiates, pushforward must, with torch's gradients; where
    torch refuses (a saved tensor), pushforward gives the gradients of the program as written
    (torch's of the same program with the write out of place)."""
    info = OPS[name]
    checked = 0
    for dtype in (F64, C128):
        for sample in [s for s in info.samples(dtype) if s.grad][:3]:
            leaves = diff_leaves(sample)
            if not leaves or len(leaves) > 3 or any(t.numel() == 0 for t in leaves):
                continue
            for needs in itertools.product((True, False), repeat=len(leaves)):
                if not any(needs):
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    plain_t = _run_sample(torch, info, sample, needs, None)
                    plain_p = _run_sample(pf, info, sample, needs, None)
                if (
                    isinstance(plain_t, str)
                    or isinstance(plain_p, str)
                    or not all(
                        (a is None and b is None)
                        or (
                            a is not None
                            and b is not None
                            and a.shape == b.shape
                            and np.allclose(a, b, rtol=1e-9, atol=1e-12)
                        )
                        for a, b in zip(plain_p, plain_t)
                    )
                ):
                    continue  # a different op or convention in torch: not this test's business
                n_out = len(info(sample)) if isinstance(info(sample), (tuple, list)) else 1
                targets = [("in", k) for k in range(len(leaves))] + [("out", k) for k in range(n_out)]
                for mutate in targets:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t = _run_sample(torch, info, sample, needs, mutate)
                        p = _run_sample(pf, info, sample, needs, mutate)
                    where = f"{sample!r}, needs={needs}, in-place write into {mutate}"
                    if isinstance(t, str):
                        if "modified by an inplace operation" not in t:
                            continue  # torch refuses the write itself (dtype, ...)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            t = _run_sample(torch, info, sample, needs, mutate, functional=True)
                        if isinstance(t, str):
                            continue
                    assert not isinstance(p, str), f"{name}: {where}: torch differentiates, pushforward: {p}"
                    for a, b in zip(p, t):
                        if a is None or b is None:
                            assert (a is None or not a.any()) and (b is None or not b.any()), where
                        else:
                            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=where)
                    checked += 1
    if not checked:
        pytest.skip("no sample that torch computes the same way")


# -- generic: what is kept is read ----------------------------------------------------------------------


class _Unreadable:
    """Array stand-in with a shape and dtype (metadata) whose values cannot be read."""

    def __init__(self, arr) -> None:
        self.shape, self.dtype, self.ndim, self.size = arr.shape, arr.dtype, arr.ndim, arr.size

    def __array__(self, *args, **kwargs):
        raise TypeError("a kept tensor's values were read")

    def __getattr__(self, name):
        raise TypeError(f"a kept tensor's .{name} was read")


def _unreadable(t):
    from pushforward.core.tensor import alias

    p = alias(t)  # same storage (version counter), values hidden
    p._data = _Unreadable(t._data)
    return p


def _unreadable_result(r):
    """A kept output (node.result entry: array, storage, tangents) with its values hidden."""
    data, st, fw = r
    return (_Unreadable(data), st, fw)


# Kept whole though a particular call does not read it: the formula reads it in general, the
# helper decides at run time.
READ_AT_RUN_TIME = {
    ("einsum", "in", 0): "one operand: its gradient does not need the operand",
    ("max_dim", "out", 1): "0-d input: the gradient is grad itself",
    ("min_dim", "out", 1): "0-d input: the gradient is grad itself",
    ("prod", "out", 0): "prod_backward takes the result and does not use it (as torch's prod keeps it)",
    ("cumprod", "in", 0): "0-d input: cumprod is the identity, its gradient is grad itself",
    ("cumprod", "out", 0): "0-d input: cumprod is the identity, its gradient is grad itself",
}


def test_every_kept_tensor_is_read_by_the_backward():
    """For every op, sample and pattern of inputs needing grad: hide the values of each tensor
    the node keeps whole; the backward must then fail (else it should keep less)."""
    from pushforward.engine.graph import OpNode
    from pushforward.testing.opdb import op_record

    kept_and_unread = []
    for name in sorted(OPS):
        info, rec = OPS[name], op_record(name)
        if rec is None or not info.differentiable:
            continue
        for dtype in (F64, C128):
            for sample in [s for s in info.samples(dtype) if s.grad][:4]:
                leaves = diff_leaves(sample)
                for needs in itertools.product((True, False), repeat=len(leaves)):
                    if not any(needs) or len(leaves) > 4:
                        continue
                    fresh = [
                        pf.from_numpy(np.array(t._data, copy=True)).requires_grad_(n) for t, n in zip(leaves, needs)
                    ]
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        out = info(_rebuild(sample, fresh))
                    outs = list(out) if isinstance(out, (tuple, list)) else [out]
                    first = next((o for o in outs if o.requires_grad), None)
                    if first is None or type(first.grad_fn) is not OpNode or first.grad_fn.op is not rec:
                        continue
                    node = first.grad_fn
                    grads = [None] * rec.n_out
                    grads[first._output_nr] = pf.ones_like(first)
                    slots = [("in", k) for k, v in enumerate(node.versions) if v is not None]
                    slots += [("out", k) for k, r in enumerate(getattr(node, "result", None) or []) if r is not None]
                    for where, k in slots:
                        attr = "saved" if where == "in" else "result"
                        kept = list(getattr(node, attr))
                        v = kept[k]
                        hidden = (
                            _unreadable_result(v)
                            if where == "out"
                            else [_unreadable(x) for x in v]
                            if isinstance(v, list)
                            else _unreadable(v)
                        )
                        setattr(node, attr, kept[:k] + [hidden] + kept[k + 1 :])
                        try:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                node.apply(list(grads))
                        except Exception:  # noqa: BLE001 - it read the values: right to keep them
                            pass
                        else:
                            if (name, where, k) not in READ_AT_RUN_TIME:
                                kept_and_unread.append(f"{name} {sample!r} needs={needs}: {where}put {k}")
                        finally:
                            setattr(node, attr, kept)
    assert not kept_and_unread, "kept whole but not read:\n" + "\n".join(kept_and_unread)


# -- the analysis itself ---------------------------------------------------------------------------------


def _reads(src, outcome=None, lists=()):
    r = Reads({"self", "other", "tensors"}, {"result"}, set(lists), {"dim", "rounding_mode"})
    return r.of(ast.parse(src, mode="eval").body, outcome or {})


def test_reads_values_metadata_and_list_elements():
    assert _reads("grad * other.conj()") == {"other": 2}
    assert _reads("grad.expand(self.shape) * self.ndim + self.numel() + self.size(0)") == {"self": 1}
    assert _reads("grad * self.shape[0] * self") == {"self": 2}
    assert _reads("split_like(grad, [t.shape for t in tensors], dim)", lists=("tensors",)) == {"tensors": 1}
    assert _reads("f(grad, [t for t in tensors])", lists=("tensors",)) == {"tensors": 2}
    assert _reads("len(tensors)", lists=("tensors",)) == {"tensors": 1}
    assert _reads("(lambda self: self * 2)(grad)") == {}  # a bound name is not the input


def test_static_tests_pick_the_branch_that_runs():
    f = "grad / other if rounding_mode is None else zeros_like(grad)"
    assert _reads(f, {"rounding_mode is None": True}) == {"other": 2}
    assert _reads(f, {"rounding_mode is None": False}) == {}
    assert _reads(f) == {"other": 2}  # outcome unknown: both branches
    g = "h(grad, self, result) if self.dtype.kind == 'c' else zeros_like(grad)"
    assert _reads(g, {"self.dtype.kind == 'c'": False}) == {"self": 1}  # the test reads the dtype
    r = Reads({"self"}, {"result"}, set(), set())
    assert not r.is_static(ast.parse("(self > 0).all()", mode="eval").body)  # reads values


def test_plan_by_needs():
    tests, tables = plan(
        [("self", "grad * other"), ("other", "grad * self")],
        ["self", "other"],
        ["self", "other"],
        ["result"],
        set(),
        set(),
    )
    assert tests == [] and tables[()][1:] == [((0, 2), (0,)), ((2, 0), (0,)), ((2, 2), (0,))]
    tests, tables = plan(
        [("self", "index_reduction_backward(grad, dim, result1, self.shape, keepdim)")],
        ["self"],
        ["self"],
        ["result0", "result1"],
        set(),
        {"dim", "keepdim"},
    )
    assert tables[()][1] == ((1,), (0, 2))  # values are not kept, indices are


def test_generated_records_keep_only_what_is_read():
    from pushforward.ops import generated as ops

    assert ops.MUL.save[1] == ((0, 2), None)  # self needs grad: keep other only
    assert ops.POW.save[1] == ((2, 2), None)  # the result only for the exponent's gradient
    assert ops.POW.save[2] == ((2, 2), (2,))
    assert ops.CAT.save[1] == ((1,), None)  # shapes
    assert ops.MAX_DIM.save[1] == ((1,), (0, 2))
    x = pf.tensor([1.0 + 1j])
    assert ops.SIGN.save_fn(x)[1] == ((2,), (2,)) and ops.SIGN.save_fn(pf.tensor([1.0]))[1] == ((1,), None)


def test_broadcast_view_kept_in_its_own_memory():
    """An expanded view a node keeps is kept as a copy: an in-place write into its base afterwards
    leaves the gradient computable, as in torch (whose matmul copies such an operand for bmm).
    Found by the fuzzer: `v2 = v1.expand(...); v3 = v2 @ x.mT; v1.mul_(0.7)` then grad."""
    import torch

    a = np.array([[[-1.4, -1.2], [1.2, -0.4], [0.5, 0.4]], [[-0.7, -1.2], [-0.8, -1.2], [-0.5, 1.2]]])
    x = pf.tensor(a, requires_grad=True)
    v1 = x.long().double()
    v3 = v1.expand(2, 2, 3, 2) @ x.mT
    v1.mul_(0.7)
    (g,) = pf.autograd.grad(v3, x, pf.ones(2, 2, 3, 3))
    t = torch.tensor(a, requires_grad=True)
    w1 = t.long().double()
    w3 = w1.expand(2, 2, 3, 2) @ t.mT
    w1.mul_(0.7)
    (tg,) = torch.autograd.grad(w3, t, torch.ones(2, 2, 3, 3))
    assert np.allclose(g.detach().numpy(), tg.numpy())
    # the copy stays differentiable: second derivatives through a kept expanded view
    y = pf.tensor([1.0, 2.0], requires_grad=True)
    b = y.view(1, 2).expand(3, 2)
    (gy,) = pf.autograd.grad((b * b).sum(), y, create_graph=True)
    assert np.allclose(gy.detach().numpy(), [6.0, 12.0])
    assert np.allclose(pf.autograd.grad(gy.sum(), y)[0].numpy(), [6.0, 6.0])


_MATMUL_SHAPES = [
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((4,), (2, 4, 3)),
    ((3, 4), (2, 4, 3)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 2, 3, 4), (2, 4, 5)),
    ((2, 2, 3, 4), (4, 5)),
    ((1, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (1, 4, 5)),
    ((2, 3, 4), (1, 1, 4, 5)),
    ((2, 1, 3, 4), (1, 4, 5)),
]


def _layouts(nd):
    """Memory orders: contiguous, last two swapped, first two swapped, reversed."""
    yield tuple(range(nd))
    if nd >= 2:
        yield tuple(range(nd - 2)) + (nd - 1, nd - 2)
    if nd >= 3:
        yield (1, 0) + tuple(range(2, nd))
        yield tuple(reversed(range(nd)))


def _matmul_then_write(L, arrays, perms, needs, target):
    """a @ b on operands laid out in memory in the given orders, then an in-place write into one
    operand, then grad: 'ok' or 'raise'."""
    leaves, ops = [], []
    for arr, perm, need in zip(arrays, perms, needs):
        leaf = (pf.tensor if L is pf else torch.tensor)(np.ascontiguousarray(np.transpose(arr, perm)))
        leaf.requires_grad_(need)
        x = (leaf * 1.0).permute(*np.argsort(perm).tolist())
        leaves.append(leaf)
        ops.append(x if need else x.detach())
    y = ops[0] @ ops[1]
    ops[target].mul_(2)
    try:
        (pf.autograd.grad if L is pf else torch.autograd.grad)(y.sum(), [t for t, n in zip(leaves, needs) if n])
    except Exception:  # noqa: BLE001 - the version check's error, in either library
        return "raise"
    return "ok"


@pytest.mark.parametrize("sa,sb", _MATMUL_SHAPES)
def test_matmul_keeps_operand_copies_where_torch_does(sa, sb):
    """torch's matmul folds or flattens an operand's batch with reshape, which copies when the dims
    do not merge into a view; its backward then reads the copy and a later in-place write into the
    operand is no error. Same outcome here for every layout (fuzzer: rfft over dim 0 laid out as
    torch's, .imag, @ a vector, then .diagonal().neg_()). Under torch's rule (the switch); by
    default every write differentiates."""
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal(sa), rng.standard_normal(sb))
    for perms in itertools.product(_layouts(len(sa)), _layouts(len(sb))):
        for needs in ((True, True), (True, False), (False, True)):
            for target in (0, 1):
                want = _matmul_then_write(torch, arrays, perms, needs, target)
                with pf.autograd.forbid_mutation_on_saved_tensors():  # (torch's rule: what is kept)
                    got = _matmul_then_write(pf, arrays, perms, needs, target)
                assert got == want, (sa, sb, perms, needs, target, got, want)
                assert _matmul_then_write(pf, arrays, perms, needs, target) == "ok"


def test_flip_keeps_its_input_layout_as_torch():
    """torch's flip keeps the input's memory layout, so a later reshape copies as in torch: einsum
    of a flipped permuted tensor, then an in-place write into it, still differentiates (fuzzer)."""
    a = np.random.default_rng(4).standard_normal((2, 3, 2))
    for L in (pf, torch):
        x = L.tensor(a, requires_grad=True)
        v1 = x.permute(1, 0, 2)
        v2 = v1.flip((1,))
        assert v2.stride() == (2, 6, 1)
        y = L.einsum("bij,bij->b", v2, v1)
        v2.add_(v2)
        (g,) = (pf.autograd.grad if L is pf else torch.autograd.grad)(y.sum(), x)
        assert g.shape == (2, 3, 2)


def test_flip_lays_out_its_result_as_torch_for_any_input():
    """Expanded, sliced, transposed and permuted inputs: flip's result has torch's strides (an
    expanded or size-1 dim keeps its place; fuzzer: flip of an expanded tensor, then .view)."""
    base = np.random.default_rng(7).standard_normal((2, 1, 2))
    makers = [
        lambda L: L.tensor(base).expand(2, 3, 2),
        lambda L: L.tensor(np.arange(24.0).reshape(4, 6))[:, ::2],
        lambda L: L.tensor(np.arange(24.0).reshape(4, 6)).t()[::2],
        lambda L: L.tensor(np.arange(24.0).reshape(2, 3, 4)).permute(2, 0, 1),
        lambda L: L.tensor(np.arange(6.0).reshape(1, 6)).expand(3, 6).t(),
    ]
    for make in makers:
        for dims in ((0,), (1,), (0, 1)):
            got, want = make(pf).flip(dims), make(torch).flip(dims)
            assert got.stride() == want.stride() and np.allclose(got.numpy(), want.numpy())
