"""Regression tests for issue 9 (op semantics): results that alias their inputs' tangents or
memory, index shapes, integer casts, 0-d and empty inputs. PyTorch (installed for tests only)
is the oracle where its behaviour is the contract."""
from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.autograd.functional import hvp
from pushforward.errors import OpError

torch = pytest.importorskip("torch")


def _tan(t):
    return fwAD.unpack_dual(t).tangent


# ---- 1. a result never shares its input's tangent (only a view and its base do) --------------

UNARY_ALIASING = {
    "add scalar": lambda x: x + 1,
    "sub scalar": lambda x: x - 1,
    "radd": lambda x: 1 + x,
    "add no-tangent tensor": lambda x: x + pf.tensor([3.0, 4.0]),
    "fmod no-tangent tensor": lambda x: pf.fmod(x, pf.tensor([5.0, 5.0])),
    "remainder no-tangent tensor": lambda x: pf.remainder(x, pf.tensor([5.0, 5.0])),
    "mul by one-ish": lambda x: x * pf.tensor([1.0, 1.0]),
    "clone": lambda x: x.clone(),
}


@pytest.mark.parametrize("name", sorted(UNARY_ALIASING))
@pytest.mark.parametrize("where", ["result", "input"])
def test_inplace_on_result_or_input_keeps_the_other_tangent(name, where):
    f = UNARY_ALIASING[name]
    with fwAD.dual_level():
        x = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.ones(2))
        y = f(x)
        before = _tan(y).numpy().copy()
        if where == "result":
            y.mul_(3)
            assert np.allclose(_tan(x).numpy(), [1.0, 1.0])
            assert np.allclose(_tan(2 * x).numpy(), [2.0, 2.0])
        else:
            x.mul_(3)
            assert np.allclose(_tan(y).numpy(), before)


def test_issue_repro_add_then_mul_():
    with fwAD.dual_level():
        x = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.ones(2))
        y = x + 1
        y.mul_(3)
        z = 2 * x
        assert np.allclose(_tan(z).numpy(), [2.0, 2.0])
        assert np.allclose(_tan(y).numpy(), [3.0, 3.0])


@pytest.mark.parametrize("fn", ["amax", "amin", "prod", "max", "min", "sum", "mean", "cumsum", "logsumexp"])
def test_zero_d_reductions_do_not_alias_the_tangent(fn):
    with fwAD.dual_level():
        x = fwAD.make_dual(pf.tensor(2.0), pf.tensor(1.0))
        out = getattr(x, fn)(0)
        y = out[0] if isinstance(out, tuple) else out
        y.mul_(5)
        assert float(_tan(x)) == 1.0


def test_nested_level_tensor_path_does_not_alias():
    # the Tensor formulas (another level live) obey the same rule
    with fwAD.dual_level():
        x = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.ones(2))
        with fwAD.dual_level():
            x2 = fwAD.make_dual(x, pf.full((2,), 2.0))
            y = x2 + 1
            y.mul_(3)
            assert np.allclose(_tan(x2).numpy(), [2.0, 2.0])
        assert np.allclose(_tan(x).numpy(), [1.0, 1.0])


def test_requires_grad_path_does_not_alias():
    xp = pf.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        x = fwAD.make_dual(xp, pf.ones(2))
        y = x + 1
        y.mul_(3)
        assert np.allclose(_tan(x).numpy(), [1.0, 1.0])


def test_hvp_not_corrupted_by_inplace_on_alias():
    def f(x):
        s = x.sin()
        w = x + 1
        w.zero_()
        return (s * s).sum() + w.sum()

    x = pf.tensor([0.3, 0.7])
    v = pf.tensor([1.0, -1.0])
    got = hvp(f, x, v)[1]
    xt = torch.tensor([0.3, 0.7], dtype=torch.float64)
    vt = torch.tensor([1.0, -1.0], dtype=torch.float64)
    want = torch.autograd.functional.hvp(lambda x: (x.sin() ** 2).sum(), xt, vt)[1]
    assert np.allclose(got.numpy(), want.numpy())


# ---- 2. gather does not broadcast its index -----------------------------------------------------

GATHER_CASES = [((2, 3), 0, [[1]]), ((2, 3), 1, [[1]]), ((2, 3), 1, [[0, 1, 1, 0]]), ((2, 3), 0, [[0], [1], [1]]),
                ((3, 4), 1, [[3, 0], [1, 2]]), ((), 0, 0), ((), 0, [0, 0])]


@pytest.mark.parametrize("shape,dim,index", GATHER_CASES)
def test_gather_matches_torch_primal_backward_forward(shape, dim, index):
    a = np.arange(float(np.prod(shape))).reshape(shape) + 0.5
    g = np.random.default_rng(0).standard_normal(np.shape(index))
    x = pf.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    y = pf.gather(x, dim, pf.tensor(index))
    yt = torch.gather(xt, dim, torch.tensor(index))
    assert y.shape == tuple(yt.shape)
    assert np.allclose(y.detach().numpy(), yt.detach().numpy())
    y.backward(pf.tensor(g))
    yt.backward(torch.tensor(g))
    assert np.allclose(x.grad.numpy(), xt.grad.numpy())
    with fwAD.dual_level():
        v = np.cos(a)
        d = fwAD.make_dual(pf.tensor(a), pf.tensor(v))
        t = _tan(pf.gather(d, dim, pf.tensor(index)))
    assert np.allclose(t.numpy(), torch.gather(torch.tensor(v), dim, torch.tensor(index)).numpy())


@pytest.mark.parametrize("dim,index,msg", [(0, [[2]], "out of bounds"), (1, [[-1]], "out of bounds"),
                                           (0, [[0, 1, 1, 0]], "no larger than"), (0, [1], "same number of dim"),
                                           (0, [[1.0]], "dtype")])
def test_gather_bad_index_is_a_clear_error(dim, index, msg):
    with pytest.raises(OpError, match=msg):
        pf.gather(pf.arange(6.0).view(2, 3), dim, pf.tensor(index))
    with pytest.raises(RuntimeError):
        torch.gather(torch.arange(6.0).view(2, 3), dim, torch.tensor(index))


# ---- 3. every op returns a tracked view or fresh memory -------------------------------------------

from pushforward.tensor import Tensor  # noqa: E402
from pushforward.testing.opdb import OPS  # noqa: E402


def _tensors(obj) -> list:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in _tensors(v)]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tensors(v)]
    return []


def _dtypes(info):
    return [d for d in info.dtypes if np.dtype(d) in (np.dtype(np.float64), np.dtype(np.complex128))] or \
        list(info.dtypes)[:1]


@pytest.mark.parametrize("name", sorted(OPS))
def test_result_is_a_tracked_view_or_fresh_memory(name):
    """A result sharing memory with an input, unknown to autograd, makes an in-place op on it
    change the input behind the tape's back (y.double().mul_(3) with y float64)."""
    info = OPS[name]
    for dt in _dtypes(info):
        for s in info.samples(dt):
            ins = _tensors((s.input, s.args, s.kwargs))
            try:
                out = info(s)
            except Exception:  # noqa: BLE001 - samples that raise on purpose are tested elsewhere
                continue
            for o in _tensors(out):
                for x in ins:
                    if o._data.size and np.may_share_memory(o._data, x._data):
                        root = x._base if x._base is not None else x
                        assert o._base is root or o is x, \
                            f"{name} {s!r}: result shares memory with an input but is not a tracked view of it"


NO_COPY = {
    "double": lambda y: y.double(), "to": lambda y: y.to(pf.float64), "to kw": lambda y: y.to(dtype=pf.float64),
    "einsum ij->ji": lambda y: pf.einsum("ij->ji", y), "einsum ij": lambda y: pf.einsum("ij", y),
    "real": lambda y: y.real, "conj": lambda y: y.conj(), "contiguous": lambda y: y.contiguous(),
    "reshape": lambda y: y.reshape(4), "flatten": lambda y: y.flatten(), "to None": lambda y: y.to(),
}


@pytest.mark.parametrize("name", sorted(NO_COPY))
def test_write_into_a_result_is_seen_by_the_gradient_iff_it_reaches_the_input(name):
    x = pf.ones(2, 2, dtype=pf.float64, requires_grad=True)
    y = 2 * x
    NO_COPY[name](y).mul_(3)
    (g,) = pf.autograd.grad(y.sum(), x)
    changed = not np.allclose(y.detach().numpy(), 2.0)
    assert np.allclose(g.numpy(), 6.0 if changed else 2.0)


@pytest.mark.parametrize("name", ["double", "to", "to kw"])
def test_to_with_nothing_to_change_is_self_like_torch(name):
    x = pf.ones(2, dtype=pf.float64, requires_grad=True)
    xt = torch.ones(2, dtype=torch.float64, requires_grad=True)
    y, yt = 2 * x, 2 * xt
    NO_COPY[name](y).mul_(3)
    {"double": lambda t: t.double(), "to": lambda t: t.to(torch.float64),
     "to kw": lambda t: t.to(dtype=torch.float64)}[name](yt).mul_(3)
    (g,) = pf.autograd.grad(y.sum(), x)
    (gt,) = torch.autograd.grad(yt.sum(), xt)
    assert np.allclose(g.numpy(), gt.numpy())


# ---- 4. integer and bool results carry no tangent and require no grad -------------------------

CASTS = {"long": lambda t: t.long(), "int": lambda t: t.int(), "bool": lambda t: t.bool(),
         "to int64": lambda t: t.to(pf.int64), "long double": lambda t: t.long().double(),
         "bool double": lambda t: t.bool().to(pf.float64)}


@pytest.mark.parametrize("name", sorted(CASTS))
@pytest.mark.parametrize("mode", ["array", "tensor", "untracked"])
def test_integer_casts_drop_the_tangent(name, mode):
    p = pf.tensor([1.7, -2.2])
    v = pf.tensor([1.5, -2.5])
    if mode == "untracked":
        from pushforward.autograd.forward_ad import untracked_level
        ctx = untracked_level()
    else:
        ctx = fwAD.dual_level()
    with ctx:
        if mode == "tensor":
            p = p.clone().requires_grad_()
        d = fwAD.make_dual(p, v)
        out = CASTS[name](d)
        t = _tan(out)
        assert t is None or np.all(t.numpy() == 0)
        assert out.dtype.kind in "fc" or not out.requires_grad


def test_cast_jacfwd_matches_jacrev():
    f = lambda x: x.long().double() * x  # noqa: E731
    x = pf.tensor([1.7, -2.2])
    assert np.allclose(pf.func.jacfwd(f)(x).numpy(), pf.func.jacrev(f)(x).numpy())


def test_copy_dual_into_integer_tensor_gives_no_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.7, -2.2]), pf.tensor([1.5, -2.5]))
        a = pf.zeros(2, dtype=pf.int64)
        a.copy_(d)
        assert _tan(a) is None and a.tolist() == [1, -2]
