"""Port blockers: the torch API pieces a ported script needs, each compared with torch
where torch is installed."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from helpers import close, needs_torch, tangent, torch


@pytest.fixture
def default_float32():
    pf.set_default_dtype(pf.float32)
    try:
        yield
    finally:
        pf.set_default_dtype(pf.float64)


# -- dtypes ------------------------------------------------------------------------------------


def test_default_dtype_is_float64_and_settable(default_float32):
    assert pf.get_default_dtype() == pf.float32
    assert pf.tensor([1.0]).dtype == pf.float32 and pf.tensor(2.5).dtype == pf.float32
    assert pf.tensor([1 + 2j]).dtype == pf.complex64
    assert pf.tensor([1, 2]).dtype == pf.int64 and pf.tensor([True]).dtype == pf.bool
    assert pf.tensor(np.array([1.0])).dtype == pf.float64  # arrays keep their dtype, as torch
    assert pf.as_tensor([1.0]).dtype == pf.float32
    for t in (
        pf.zeros(2),
        pf.ones(2),
        pf.empty(2),
        pf.rand(2),
        pf.randn(2),
        pf.eye(2),
        pf.linspace(0, 1, 3),
        pf.arange(0.0, 1.0, 0.5),
        pf.full((2,), 1.5),
    ):
        assert t.dtype == pf.float32, t
    assert pf.arange(3).dtype == pf.int64 and pf.full((2,), 3).dtype == pf.int64
    assert (pf.tensor([1.0]) * 2.0).dtype == pf.float32


def test_default_dtype_starts_as_numpys_and_rejects_non_floats():
    assert pf.get_default_dtype() == pf.float64 and pf.tensor([1.0]).dtype == pf.float64
    with pytest.raises(TypeError, match="int64"):
        pf.set_default_dtype(pf.int64)
    assert pf.get_default_dtype() == pf.float64


def test_float_names_are_torchs():
    t = pf.tensor([1.0, 2.0])
    assert pf.float == pf.float32 == t.float().dtype
    assert pf.double == pf.float64 == t.double().dtype
    assert pf.half == pf.float16 and pf.long == pf.int64 and pf.cfloat == pf.complex64


@needs_torch
def test_float_names_agree_with_torch():
    for name in (
        "float",
        "double",
        "half",
        "long",
        "int",
        "short",
        "cfloat",
        "cdouble",
        "bool",
        "float32",
        "int8",
        "uint8",
    ):
        assert np.dtype(getattr(pf, name)).name == str(getattr(torch, name)).replace("torch.", "").replace(
            "complex64", "complex64"
        ), name


# -- devices, generators -----------------------------------------------------------------------


def test_to_accepts_the_cpu_device():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    assert x.to("cpu") is x and x.to(pf.device("cpu")) is x and x.to(device="cpu") is x and x.cpu() is x
    y = x.to("cpu", pf.float32)
    assert y.dtype == pf.float32 and y.grad_fn is not None
    assert x.to(device="cpu", dtype=pf.float32).dtype == pf.float32
    assert x.to(pf.zeros(1, dtype=pf.complex128)).dtype == pf.complex128
    z = x.to("cpu", copy=True)
    assert z is not x and not np.shares_memory(z.detach().numpy(), x.detach().numpy())
    assert x.device == "cpu" == pf.device("cpu") and x.device.type == "cpu"
    assert pf.zeros(2, device="cpu").device == "cpu" and pf.tensor([1.0], device=pf.device("cpu")).shape == (1,)
    with pytest.raises(RuntimeError, match="cuda"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        pf.zeros(2, device="cuda:0")


def test_generator_streams_are_reproducible_and_independent():
    g1, g2 = pf.Generator().manual_seed(7), pf.Generator().manual_seed(7)
    a = pf.randn(3, generator=g1)
    pf.manual_seed(123)
    pf.randn(5)  # the default stream does not touch g2
    close(pf.randn(3, generator=g2), a)
    close(pf.rand(2, 2, generator=g1), pf.rand(2, 2, generator=g2))
    close(pf.randint(0, 10, (4,), generator=g1), pf.randint(0, 10, (4,), generator=g2))
    close(pf.randperm(5, generator=g1), pf.randperm(5, generator=g2))
    assert g1.initial_seed() == 7
    assert isinstance(pf.manual_seed(3), pf.Generator)
    x = pf.randn(2)
    pf.manual_seed(3)
    close(pf.randn(2), x)
    state = g1.get_state()
    u = pf.rand(3, generator=g1)
    g1.set_state(state)
    close(pf.rand(3, generator=g1), u)
    with pytest.raises(TypeError, match="Generator"):
        pf.randn(2, generator=np.random.default_rng(0))


# -- comparisons -------------------------------------------------------------------------------


def test_allclose_isclose_equal_all_any():
    a = pf.tensor([1.0, 2.0, np.nan])
    b = pf.tensor([1.0, 2.0 + 1e-9, np.nan])
    assert not pf.allclose(a, b) and pf.allclose(a, b, equal_nan=True) and a.allclose(b, equal_nan=True)
    assert pf.isclose(a, b).tolist() == [True, True, False]
    assert pf.isclose(a, b, equal_nan=True).all().item()
    assert pf.equal(pf.tensor([1, 2]), pf.tensor([1, 2])) and not pf.equal(pf.tensor([1, 2]), pf.tensor([1]))
    m = pf.tensor([[1.0, 0.0], [2.0, 3.0]])
    assert m.all().item() is False and m.any().item() is True
    assert m.all(dim=1).tolist() == [False, True] and pf.any(m, 0, keepdim=True).shape == (1, 2)
    assert (m > -1).all() and pf.all(m > -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        m.all(dim=2)
    with fwAD.dual_level():  # booleans of duals and tensors requiring grad: primal values
        d = fwAD.make_dual(m, pf.ones_like(m))
        assert pf.allclose(d, m) and d.any().item()
        assert pf.allclose(pf.tensor([1.0], requires_grad=True) * 2, pf.tensor([2.0]))


@needs_torch
def test_comparisons_agree_with_torch():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.00001, 3.1])
    for kw in ({}, {"rtol": 1e-3, "atol": 0.0}, {"atol": 0.2}):
        assert pf.allclose(pf.tensor(a), pf.tensor(b), **kw) == torch.allclose(torch.tensor(a), torch.tensor(b), **kw)
        assert (
            pf.isclose(pf.tensor(a), pf.tensor(b), **kw).tolist()
            == torch.isclose(torch.tensor(a), torch.tensor(b), **kw).tolist()
        )
    m = np.array([[1.0, 0.0], [2.0, 3.0]])
    for dim in (None, 0, 1, -1):
        kw = {} if dim is None else {"dim": dim}
        assert pf.tensor(m).all(**kw).tolist() == torch.tensor(m).all(**kw).tolist()
        assert pf.tensor(m).any(**kw).tolist() == torch.tensor(m).any(**kw).tolist()


def test_assert_close():
    pf.testing.assert_close(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 2.0 + 1e-9]))
    pf.testing.assert_close(pf.tensor(1.0, requires_grad=True) * 2, 2.0)  # numbers: dtype not checked
    pf.testing.assert_close([pf.tensor([1.0]), {"a": pf.tensor(2)}], [pf.tensor([1.0]), {"a": pf.tensor(2)}])
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 2 \(50\.0%\)"):
        pf.testing.assert_close(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 2.1]))
    with pytest.raises(AssertionError, match="dtype"):
        pf.testing.assert_close(pf.tensor([1.0]), pf.tensor([1.0], dtype=pf.float32))
    pf.testing.assert_close(pf.tensor([1.0]), pf.tensor([1.0], dtype=pf.float32), check_dtype=False)
    with pytest.raises(AssertionError, match="shape"):
        pf.testing.assert_close(pf.zeros(2), pf.zeros(3))
    with pytest.raises(AssertionError, match="Scalars are not close"):
        pf.testing.assert_close(pf.tensor(1.0), pf.tensor(1.5))
    pf.testing.assert_close(pf.tensor([1.0]), pf.tensor([1.05]), rtol=0.1, atol=0.0)
    with pytest.raises(ValueError, match="rtol"):
        pf.testing.assert_close(pf.tensor([1.0]), pf.tensor([1.0]), atol=1.0)
    with pytest.raises(AssertionError):
        pf.testing.assert_close(pf.tensor([np.nan]), pf.tensor([np.nan]))
    pf.testing.assert_close(pf.tensor([np.nan]), pf.tensor([np.nan]), equal_nan=True)
    with pytest.raises(AssertionError, match="custom"):
        pf.testing.assert_close(pf.tensor([1.0]), pf.tensor([2.0]), msg="custom")


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_assert_close_default_tolerances_are_torchs(dtype):
    base = np.array([1.0, -2.0, 3.0], dtype=dtype)
    for rel in (1e-8, 1e-6, 2e-6, 1e-5, 1e-4):
        other = (base * (1 + rel)).astype(dtype)
        try:
            torch.testing.assert_close(torch.from_numpy(other), torch.from_numpy(base))
            want = True
        except AssertionError:
            want = False
        try:
            pf.testing.assert_close(pf.from_numpy(other), pf.from_numpy(base))
            got = True
        except AssertionError:
            got = False
        assert got == want, (dtype, rel)


# -- autograd entry points ---------------------------------------------------------------------


def test_autograd_backward_sequences_and_grad_tensors():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    pf.autograd.backward([(x * x).sum(), x.sum()])
    close(x.grad, [3.0, 5.0])
    y = pf.tensor([1.0, 2.0], requires_grad=True)
    pf.autograd.backward(y * 3, grad_tensors=pf.tensor([1.0, -1.0]))
    close(y.grad, [3.0, -3.0])
    z = pf.tensor([1.0, 2.0], requires_grad=True)
    pf.autograd.backward((z * z).sum(), inputs=[z], create_graph=True)
    assert z.grad.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        pf.autograd.backward(pf.tensor(1.0))


class CubeNew(pf.autograd.Function):
    """torch-2 style: forward without ctx, setup_context fills ctx."""

    @staticmethod
    def forward(x, k):
        return x**3 * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        ctx.k = k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * ctx.k * x**2 * g, None

    @staticmethod
    def jvp(ctx, x_t, k_t):
        (x,) = ctx.saved_tensors
        return 3 * ctx.k * x**2 * x_t


def test_function_torch2_style_reverse_forward_and_nested():
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    y = CubeNew.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeNewBackward"
    y.sum().backward()
    close(x.grad, [6.0, 24.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 0.5]))
        close(tangent(CubeNew.apply(d, 2.0)), [6.0, 12.0])
    assert pf.autograd.gradcheck(
        lambda a: CubeNew.apply(a, 1.5), (pf.tensor([0.3, -1.1], requires_grad=True),), check_forward_ad=True
    )
    assert pf.autograd.gradgradcheck(lambda a: CubeNew.apply(a, 1.5), (pf.tensor([0.3, -1.1], requires_grad=True),))


def test_set_materialize_grads_false_passes_none():
    seen = []

    class Two(pf.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return (g1 * 2 if g1 is not None else 0) + (g2 * 3 if g2 is not None else 0)

    x = pf.tensor([1.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen == [(False, True)]
    close(x.grad, [2.0])


def test_once_differentiable_runs_backward_and_forbids_double_backward():
    class Exp(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @pf.autograd.once_differentiable
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            assert not pf.is_grad_enabled()
            return g * y

    x = pf.tensor([0.0, 1.0], requires_grad=True)
    Exp.apply(x).sum().backward()
    close(x.grad, np.exp([0.0, 1.0]))
    x = pf.tensor([0.0, 1.0], requires_grad=True)
    v = pf.ones(2, requires_grad=True)
    (g,) = pf.autograd.grad(Exp.apply(x), x, v, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


# -- errors ------------------------------------------------------------------------------------


def test_error_classes_subclass_torchs_builtins():
    from pushforward.errors import OpError, OpIndexError, OpTypeError, OpValueError, PushforwardError

    for cls, builtin in (
        (OpError, RuntimeError),
        (OpTypeError, TypeError),
        (OpValueError, ValueError),
        (OpIndexError, IndexError),
    ):
        assert issubclass(cls, builtin) and issubclass(cls, PushforwardError)
    assert not issubclass(OpError, (TypeError, ValueError))
    assert pf.OpError is OpError and pf.PushforwardError is PushforwardError


# (what, call, builtin class torch raises) -- each compared with torch below
MISUSES = [
    ("shape mismatch", lambda m: m.ones(2) + m.ones(3), RuntimeError),
    ("matmul shapes", lambda m: m.ones(2, 3) @ m.ones(2, 3), RuntimeError),
    ("bad reshape", lambda m: m.ones(2).reshape(3), RuntimeError),
    ("dim out of range", lambda m: m.ones(2).sum(dim=3), IndexError),
    ("index out of range", lambda m: m.ones(2)[5], IndexError),
    ("float index tensor", lambda m: m.ones(2)[m.tensor([0.5])], IndexError),
    ("len of 0-d", lambda m: len(m.tensor(1.0)), TypeError),
    ("iterate 0-d", lambda m: iter(m.tensor(1.0)), TypeError),
    ("non-tensor argument", lambda m: m.sin("a"), TypeError),
    ("item of many", lambda m: m.ones(2).item(), RuntimeError),
    ("bool of many", lambda m: bool(m.ones(2)), RuntimeError),
    ("int requires grad", lambda m: m.tensor([1]).requires_grad_(), RuntimeError),
    ("numpy of requires grad", lambda m: m.ones(2, requires_grad=True).numpy(), RuntimeError),
    ("leaf in-place", lambda m: m.ones(2, requires_grad=True).add_(1), RuntimeError),
    ("grad of constant", lambda m: m.autograd.grad(m.ones(2).sum(), m.ones(2, requires_grad=True)), RuntimeError),
    ("backward of nonscalar", lambda m: (m.ones(2, requires_grad=True) * 2).backward(), RuntimeError),
    ("exit without level", lambda m: m.autograd.forward_ad.exit_dual_level(), RuntimeError),
    ("from_numpy of list", lambda m: m.from_numpy([1.0]), TypeError),
    ("cat of nothing", lambda m: m.cat([]), ValueError),
    (
        "jvp of int primal",
        lambda m: m.func.jvp(lambda a: a * 2, (m.tensor([1, 2]),), (m.tensor([1.0, 1.0]),)),
        ValueError,
    ),
    ("jacfwd of int primal", lambda m: m.func.jacfwd(lambda a: a * 2)(m.tensor([1, 2])), ValueError),
    ("jvp primals not a tuple", lambda m: m.func.jvp(lambda a: a, m.ones(1), m.ones(1)), RuntimeError),
    ("grad of int", lambda m: m.func.grad(lambda a: (a * 2).sum())(m.tensor([1, 2])), RuntimeError),
    ("jacrev of int", lambda m: m.func.jacrev(lambda a: a * 2)(m.tensor([1, 2])), RuntimeError),
    ("vjp of int", lambda m: m.func.vjp(lambda a: a * 2, m.tensor([1, 2])), RuntimeError),
    ("hessian of int", lambda m: m.func.hessian(lambda a: (a * 2).sum())(m.tensor([1, 2])), ValueError),
    ("linearize of int", lambda m: m.func.linearize(lambda a: a * 2, m.tensor([1, 2])), ValueError),
    (
        "functional.jvp of int",
        lambda m: m.autograd.functional.jvp(lambda a: a * 2, m.tensor([1, 2]), m.tensor([1, 1])),
        RuntimeError,
    ),
]


@pytest.mark.parametrize("what", [m[0] for m in MISUSES])
def test_misuse_raises_torchs_builtin(what):
    _, call, builtin = next(m for m in MISUSES if m[0] == what)
    from pushforward.errors import PushforwardError

    with pytest.raises(builtin) as ei:
        call(pf)
    assert isinstance(ei.value, PushforwardError), type(ei.value)


@needs_torch
@pytest.mark.parametrize("what", [m[0] for m in MISUSES])
def test_misuse_builtin_agrees_with_torch(what):
    _, call, builtin = next(m for m in MISUSES if m[0] == what)
    import torch.func  # noqa: F401 - pf.func's counterpart
    import torch.autograd.forward_ad  # noqa: F401

    with pytest.raises(builtin):
        call(torch)


def test_make_dual_errors_as_torch():
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="int64"):
            fwAD.make_dual(pf.tensor([1, 2]), pf.ones(2))
        with pytest.raises(RuntimeError, match="complex128"):
            fwAD.make_dual(pf.ones(2), pf.ones(2, dtype=pf.complex128))
        with pytest.raises(RuntimeError, match="shape"):
            fwAD.make_dual(pf.ones(2), pf.ones(3))


@needs_torch
def test_make_dual_casts_precision_as_torch():
    import torch.autograd.forward_ad as tfw

    with tfw.dual_level():
        td = tfw.make_dual(torch.ones(2, dtype=torch.float64), torch.full((2,), 0.5, dtype=torch.float32))
        tt = tfw.unpack_dual(td * 3).tangent
    with fwAD.dual_level():
        pd = fwAD.make_dual(pf.ones(2, dtype=pf.float64), pf.full((2,), 0.5, dtype=pf.float32))
        pt = tangent(pd * 3)
    assert str(tt.dtype) == "torch." + pt.dtype.name
    close(pt, tt.numpy())


def test_level_numbers_in_messages_are_the_users():
    for _ in range(3):  # internal ids move on; the user's numbers do not
        with fwAD.dual_level():
            pass
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        d = fwAD.make_dual(pf.ones(2), pf.ones(2))
        with pytest.raises(RuntimeError, match="at level 0;"):
            fwAD.make_dual(d, pf.ones(2))
        with pytest.raises(RuntimeError, match=r"live levels: \[0\]"):
            fwAD.make_dual(pf.ones(2), pf.ones(2), level=3)


# -- formatting ----------------------------------------------------------------------------------


def test_format_of_0d_tensors():
    loss = (pf.tensor([1.23456, 2.0], requires_grad=True) ** 2).sum()
    assert f"{loss:.4f}" == "5.5241" and f"{pf.tensor(7):>3d}" == "  7" and f"{loss}" == str(loss.item())
    assert f"{pf.tensor([1.5])}" == "tensor([1.5])"
    with pytest.raises(TypeError):
        f"{pf.tensor([1.5]):.2f}"


@needs_torch
def test_format_agrees_with_torch():
    for v, spec in ((1.23456, ".3f"), (2.0, "e"), (3, "d"), (0.5, ">10.2%"), (0.25, "")):
        assert format(pf.tensor(v), spec) == format(torch.tensor(v), spec)


def test_repr_of_dual_shows_tangent_values_per_level():
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.tensor([1.0, 2.0]), pf.tensor([0.5, 0.25]))
        assert repr(d) == "tensor([1., 2.], tangent=tensor([0.5 , 0.25]))"
        assert "tangent=tensor([1. , 0.5])" in repr(d * 2)
        assert "tangent=tensor(0.5)" in repr(d[0])  # a view shows its base's tangent
        assert "tangent" not in repr(fwAD.unpack_dual(d).primal)
        with fwAD.dual_level():
            e = fwAD.make_dual(d, pf.tensor([3.0, 3.0]))
            r = repr(e)
            assert r.startswith("tensor([1., 2.], tangents={0: tensor([0.5 , 0.25]), 1: tensor([3., 3.])}")
        assert "level" not in repr(d)
    assert repr(d) == "tensor([1., 2.])"  # its level is gone


@needs_torch
def test_repr_of_dual_matches_torch_layout():
    import torch.autograd.forward_ad as tfw

    with tfw.dual_level():
        t = repr(tfw.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([0.5, 0.25])))
    with fwAD.dual_level():
        p = repr(fwAD.make_dual(pf.tensor([1.0, 2.0], dtype=pf.float32), pf.tensor([0.5, 0.25], dtype=pf.float32)))
    # same structure: primal, then tangent=tensor(...) (number formatting follows NumPy)
    assert t.startswith("tensor([1., 2.], tangent=tensor([") and p.startswith("tensor([1., 2.], dtype=")
    assert "tangent=tensor([0.5 , 0.25], dtype=pushforward.float32)" in p


# -- module examples ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "module",
    [
        "pushforward.numpy._api",
        "pushforward.methods.logic",
        "pushforward.testing.comparison",
        "pushforward.errors",
        "pushforward.core.creation",
        "pushforward.autograd.function",
        "pushforward.core.tensor",
    ],
)
def test_module_examples_run(module):
    mod = importlib.import_module(module)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0
