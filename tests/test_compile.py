"""pf.compile: tracing, emitted source, guards and retracing, fallback and errors, composition both
ways, in-place writes into inputs and views."""

import functools
import re
import warnings

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.compiler.compiled import MAX_SIGNATURES
from pushforward.errors import CompileError, PushforwardError

from helpers import cholesky_in_place, durbin


def chain(y):
    for _ in range(4):
        y = pf.sin(y) * y + pf.tanh(y)
    return y


def close(a, b, tol=1e-12):
    a = a.detach().numpy() if isinstance(a, pf.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, pf.Tensor) else np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_primal_matches_eager_and_source_is_numpy():
    c = pf.compile(chain)
    x = pf.randn(5)
    close(c(x), chain(x))
    src = c.source(x)
    assert "np.sin(y)" in src and "np.tanh(" in src and " * " in src
    assert "Tensor" not in src and "pf." not in src
    big = c.source(pf.randn(4096))  # large temporaries: freed early, results written into dead buffers
    assert re.search(r"= np\.tanh\(\w+, \w+\)", big) and "del " in big, big
    close(c(x * 2), chain(x * 2))  # same signature, new values: no stale trace


def test_compile_error_is_a_pushforward_error():
    assert issubclass(CompileError, PushforwardError)
    assert pf.errors.CompileError is CompileError


@pytest.mark.parametrize(
    "make",
    [
        lambda f: pf.func.grad(lambda y: f(y).sum()),
        lambda f: pf.func.jacfwd(f),
        lambda f: pf.func.jacrev(f),
        lambda f: pf.func.vmap(f),
        lambda f: pf.func.hessian(lambda y: f(y).sum()),
    ],
    ids=["grad", "jacfwd", "jacrev", "vmap", "hessian"],
)
def test_transforms_compile_inside(make):
    g = make(chain)
    c = pf.compile(g)
    x = pf.randn(3)
    close(c(x), g(x))
    assert "np." in c.source(x)
    close(c(x + 1), g(x + 1))


def test_jvp_hvp_and_nested_levels_compile():
    f = lambda y: (pf.sin(y) * y).sum()  # noqa: E731
    x, v = pf.randn(4), pf.randn(4)
    j = pf.compile(lambda x, v: pf.func.jvp(chain, (x,), (v,)))
    for a, b in zip(j(x, v), pf.func.jvp(chain, (x,), (v,))):
        close(a, b)
    h = pf.compile(lambda x, v: pf.autograd.functional.hvp(f, x, v))
    close(h(x, v)[1], pf.autograd.functional.hvp(f, x, v)[1])

    def nested(x, v, w):
        with fwAD.dual_level():
            xd = fwAD.make_dual(x, v)
            with fwAD.dual_level():
                xdd = fwAD.make_dual(xd, w)
                y = pf.sin(xdd) * xdd
                inner = fwAD.unpack_dual(y).tangent
            return fwAD.unpack_dual(inner).tangent

    w = pf.randn(4)
    close(pf.compile(nested)(x, v, w), nested(x, v, w))


def test_vector_mode_inside():
    def f(x):
        with fwAD.dual_level(batch=3):
            d = fwAD.make_dual(x, pf.eye(3))
            return fwAD.unpack_dual(pf.sin(d) * d).tangent

    x = pf.randn(3)
    r = pf.compile(f)(x)
    close(r, f(x))


def test_composition_from_outside():
    c = pf.compile(chain)
    x = pf.randn(3)
    close(pf.func.grad(lambda y: c(y).sum())(x), pf.func.grad(lambda y: chain(y).sum())(x))
    close(pf.func.jacfwd(c)(x), pf.func.jacfwd(chain)(x))
    close(pf.func.jacrev(c)(x), pf.func.jacrev(chain)(x))
    xr = pf.randn(3, requires_grad=True)
    y = c(xr)
    assert y.grad_fn is not None
    assert pf.autograd.gradcheck(c, (xr,), check_forward_ad=True)
    assert pf.autograd.gradgradcheck(c, (xr,))
    with fwAD.dual_level():
        d = c(fwAD.make_dual(x, pf.ones(3)))
        t = fwAD.unpack_dual(d).tangent
    close(t, pf.func.jvp(chain, (x,), (pf.ones(3),))[1])


def test_guards_retrace_on_shape_dtype_layout_and_static_args():
    calls = []

    def f(x, n):
        calls.append(1)  # a Python side effect: runs at trace time only
        return x * n

    c = pf.compile(f)
    x = pf.ones(3)
    c(x, 2)
    n0 = len(calls)
    c(x + 1, 2)
    assert len(calls) == n0  # same signature: the program, not fn
    close(c(x, 3), x * 3)  # a new static value: a new trace
    close(c(pf.ones(4), 2), pf.ones(4) * 2)
    close(c(pf.ones(3, dtype=pf.float32), 2), pf.ones(3, dtype=pf.float32) * 2)
    m = pf.randn(3, 4)
    close(c(m.T, 2), m.T * 2)
    assert len(c._cache) == 5
    with pytest.raises(TypeError, match="not hashable"):
        c(x, {1, 2})


def test_signature_limit_warns_once_and_runs_eagerly():
    c = pf.compile(lambda x, n: x * n)
    for n in range(MAX_SIGNATURES):
        c(pf.ones(2), n)
    with pytest.warns(RuntimeWarning, match="recompile limit"):
        r = c(pf.ones(2), 100)
    close(r, pf.ones(2) * 100)
    close(c(pf.ones(2), 101), pf.ones(2) * 101)  # no second warning (the fixture turns it into an error)


@pytest.mark.parametrize(
    "fn, op",
    [
        (lambda x: x * 2 if (x == 1.0).any() else x, "bool()"),  # (a branch other inputs take otherwise)
        (lambda x: x * float(x[0]), ".item()"),
        (lambda x: x * x.sum().item(), ".item()"),
        (lambda x: pf.tensor(x.tolist()), ".tolist()"),
        (lambda x: pf.as_tensor(np.asarray(x) + 1), "np.asarray()"),
        (lambda x: pf.tensor(np.nonzero(x.detach().numpy())[0]), "nonzero"),
    ],
    ids=["bool", "float", "item", "tolist", "asarray", "nonzero"],
)
def test_data_dependent_errors_and_fallback(fn, op):
    x = pf.tensor([1.0, -2.0, 3.0])
    with pytest.raises(CompileError, match="test_compile.py:") as e:
        pf.compile(fn, fullgraph=True)(x)
    assert op in str(e.value) and "<lambda>" in str(e.value)
    c = pf.compile(fn)
    with pytest.warns(RuntimeWarning, match="running eagerly"):
        r = c(x)
    close(r, fn(x))
    close(c(-x), fn(-x))  # eager again, without a second warning


def test_stale_constant_is_caught():
    # SciPy's expm computes in compiled code on the array's memory: its result leaves the trace and
    # would come back as a constant. The check on perturbed inputs catches it: eager, right numbers.
    import scipy.linalg

    def f(x):
        return x + pf.as_tensor(scipy.linalg.expm(x.detach().numpy()))

    m = pf.tensor([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(CompileError, match="disagrees"):
        pf.compile(f, fullgraph=True)(m)
    c = pf.compile(f)
    with pytest.warns(RuntimeWarning, match="disagrees"):
        c(m)
    close(c(m * 2), f(m * 2))


def test_inplace_on_inputs_and_versions():
    def f(x, y):
        x.add_(y)
        return x * 2

    c = pf.compile(f)
    x, y = pf.ones(3), pf.arange(3.0)
    xe = pf.ones(3)
    r = c(x, y)
    re_ = f(xe, y)
    close(r, re_)
    close(x, xe)
    assert x._version == xe._version
    c(x, y)
    f(xe, y)
    close(x, xe)
    assert x._version == xe._version

    # a tensor saved for backward and then modified in place by a compiled function: the node keeps
    # its values first, as eagerly; under torch's rule the check fires
    a = pf.randn(3, requires_grad=True)
    b = pf.randn(3)
    old = b.clone()
    out = (a * b).sum()
    c(b, y)
    out.backward()
    close(a.grad, old)
    out = (a * b).sum()
    with pf.autograd.forbid_mutation_on_saved_tensors():
        c(b, y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_view_of_input_returned_is_a_view():
    c = pf.compile(lambda x: x[1:])
    x = pf.arange(4.0)
    v = c(x)
    assert v._base is x
    v[0] = 10.0
    assert x[1].item() == 10.0
    t = pf.compile(lambda x: x.T)
    m = pf.randn(2, 3)
    assert np.shares_memory(t(m).numpy(), m.numpy())


def test_outputs_do_not_alias_between_calls():
    c = pf.compile(lambda x: (x * 0 + pf.zeros(3), pf.zeros(3)))
    a = c(pf.ones(3))
    a[1][0] = 5.0
    b = c(pf.ones(3))
    assert b[1][0].item() == 0.0
    assert not np.shares_memory(a[1].numpy(), b[1].numpy())


def test_pytree_args_and_outputs():
    c = pf.compile(lambda d, s: {"y": d["a"] * s, "z": [d["b"] + 1]})
    d = {"a": pf.ones(2), "b": pf.zeros(2)}
    out = c(d, 3.0)
    close(out["y"], pf.ones(2) * 3.0)
    close(out["z"][0], pf.ones(2))


def test_bad_input():
    with pytest.raises(TypeError, match="callable"):
        pf.compile(3)


def test_check_command_has_a_compiled_column(capsys):
    from pushforward import cli

    assert cli.main(["check", "--ops", "sin,expand", "--compiled", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "compiled" in out.splitlines()[0]


def test_doc_example_runs():
    import pathlib

    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "compile.md").read_text()
    block = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    exec(compile(block.replace("print(", "str("), "docs/compile.md", "exec"), {})


def test_aliased_arguments_with_inplace_writes_run_eagerly():
    def f(a, b):
        a.mul_(2)
        return a + b

    c = pf.compile(f)
    x, y = pf.ones(3), pf.ones(3)
    c(x, y)
    z, ze = pf.arange(3.0), pf.arange(3.0)
    close(c(z, z), f(ze, ze))  # the same tensor twice: b sees the write into a, as eagerly
    close(z, ze)


def test_closures_read_by_reference_and_writes_into_them_refused():
    w = pf.ones(3)
    c = pf.compile(lambda x: x * w)
    close(c(pf.ones(3)), pf.ones(3))
    w.mul_(2)  # an in-place update of a closed-over tensor is seen (read by reference)
    close(c(pf.ones(3)), pf.full((3,), 2.0))
    same = pf.compile(lambda x: w)
    assert np.shares_memory(same(pf.ones(1)).numpy(), w.numpy())

    def bump(x):
        w.add_(x)
        return w * 1

    with pytest.raises(CompileError, match="closes over|disagrees"):
        pf.compile(bump, fullgraph=True)(pf.ones(3))


def test_none_arguments_are_part_of_the_signature():
    c = pf.compile(lambda a, b, d: (a if b is None else b) * 2 + (0 if d is None else d))
    x, y = pf.ones(2), pf.full((2,), 3.0)
    close(c(x, None, y), x * 2 + y)
    close(c(x, y, None), y * 2)  # the same tensor leaves, another structure: another program


def test_autodiff_inside_and_outside_together():
    # fn differentiates internally; the compiled function is differentiated again from outside
    g = pf.compile(pf.func.grad(lambda y: (y**3).sum()))  # 3 y^2
    x = pf.tensor([1.0, 2.0])
    close(pf.func.grad(lambda y: g(y).sum())(x), 6 * x)
    close(pf.func.jacfwd(g)(x), pf.diag(6 * x))


def test_inplace_on_inputs_that_need_autodiff_runs_eagerly():
    c = pf.compile(lambda x, b: b.mul_(2) * x)
    x = pf.ones(2, requires_grad=True)
    b = pf.ones(2)
    with pytest.warns(RuntimeWarning, match="in-place"):
        out = c(x, b)
    out.sum().backward()
    close(x.grad, pf.full((2,), 2.0))
    close(b, pf.full((2,), 2.0))


# ---- simplification: shape-only reads, folded constants, constant factors
def _rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def test_hvp_program_drops_the_primal_pass_and_merges_negations():
    """functional.hvp seeds its backward with ones_like(f(x)): recorded as ones(shape), it keeps no
    primal statement alive (the sum is gone); the backward's negations merge into constant factors
    and the broadcast seed's scaling is computed once. Values are eager's to the last bit."""
    rng = np.random.default_rng(3)
    x, v = pf.tensor(rng.uniform(-1, 1, 5000)), pf.tensor(rng.uniform(-1, 1, 5000))
    hvp = pf.compile(lambda x, v: pf.autograd.functional.hvp(_rosenbrock, x, v)[1])
    src = hvp.source(x, v)
    assert "np.sum" not in src and "np.negative" not in src and not re.search(r" = -[a-z]", src)
    assert "ones_like" not in src and "as_strided" not in src
    want = pf.autograd.functional.hvp(_rosenbrock, x, v)[1].numpy()
    assert np.array_equal(hvp(x, v).numpy(), want)
    grad = pf.compile(pf.func.grad(_rosenbrock))
    assert "np.negative" not in grad.source(x) and not re.search(r" = -[a-z]", grad.source(x))
    assert np.array_equal(grad(x).numpy(), pf.func.grad(_rosenbrock)(x).numpy())


def test_simplification_leaves_shared_outputs_and_outside_constants_alone():
    """A negation that is an output, a product read twice and a constant the caller may change
    between calls are not rewritten: outputs, and later calls after the caller's change, are eager's."""
    c = pf.tensor(np.full(2000, 3.0))

    def f(x):
        p = c * x
        return -p, p * 2.0, -(x * 2.0)

    g = pf.compile(f)
    x = pf.tensor(np.random.default_rng(4).uniform(-1, 1, 2000))
    for k in range(3):
        got, want = g(x), f(x)
        for a, b in zip(got, want):
            assert np.array_equal(a.numpy(), b.numpy())
        c.add_(1.0)  # (a closed-over tensor: read by reference, never folded)
    y = pf.tensor(np.random.default_rng(5).uniform(-1, 1, 2000))
    assert np.array_equal(g(y)[2].numpy(), f(y)[2].numpy())


def test_ones_like_of_a_permuted_input_keeps_its_layout():
    """ones_like of a non-contiguous array is recorded as itself (its layout is its input's)."""
    f = pf.compile(lambda x: pf.ones_like(x) * x)
    x = pf.tensor(np.arange(12.0).reshape(3, 4)).t()
    assert f(x).stride() == (x * 1.0).stride() and np.array_equal(f(x).numpy(), x.numpy())


# ---- the tracer's arrays behave as eager's (compiled fuzzer findings)
def test_traced_results_keep_eager_layouts_so_views_and_inplace_agree():
    """pow of permuted inputs is laid out by them (eagerly); under the tracer's ndarray subclass it
    was C-ordered, so a flatten was a view and relu_ invalidated pow's saved result."""

    def f(x):
        x = x.detach().requires_grad_()
        v = ((x.mT.abs() + 0.5) ** x.mT.contiguous().tanh()).flatten()
        v.relu_()
        return pf.autograd.grad((v * v).sum(), x)[0]

    x = pf.tensor(np.random.default_rng(0).uniform(-1, 1, (3, 4)))
    assert np.array_equal(pf.compile(f)(x).numpy(), f(x).numpy())


def test_batched_tangents_keep_their_layout_when_traced():
    """A fresh traced result keeps a permuted 3-d layout (neither C nor F): a vector-mode tangent
    of a column-major product then views as eagerly."""

    def f(x, t):
        with fwAD.dual_level(batch=2):
            d = fwAD.make_dual(x, t)
            v = ((pf.ones_like(d.mT) + pf.full_like(d.mT, 0.5)) * d.mT).mT.view(-1)
            return fwAD.unpack_dual(v).tangent

    rng = np.random.default_rng(1)
    x, t = pf.tensor(rng.uniform(-1, 1, (3, 2))), pf.tensor(rng.uniform(-1, 1, (2, 3, 2)))
    assert np.array_equal(pf.compile(f)(x, t).numpy(), f(x, t).numpy())


def test_several_scalar_results_of_one_call_stay_arrays():
    """slogdet's two 0-d results, one then written in place: each replayed as a 0-d array."""

    def f(a):
        sign, logabs = pf.linalg.slogdet(a)
        logabs.add_(logabs)
        return sign, logabs

    a = pf.tensor(np.random.default_rng(2).uniform(-1, 1, (3, 3)) + 2 * np.eye(3))
    for got, want in zip(pf.compile(f)(a), f(a)):
        assert np.array_equal(got.numpy(), want.numpy())


def test_a_traced_tangent_that_views_an_expanded_input_is_copied_as_eagerly():
    """The tangent of `expand(...) + c` is the expanded tangent itself unless copied; eagerly it is
    (engine.outputs.own_array), and under the tracer too, so `+=` into the result is allowed."""

    def f(x1, x2, t1, t2):
        with fwAD.dual_level():
            v3 = fwAD.make_dual(x2, t2) + fwAD.make_dual(x1, t1)
            v7 = v3.expand(2) + 1.69
            v7 += v3.sqrt()
            return fwAD.unpack_dual(v7).tangent

    args = [pf.tensor(np.array(v)) for v in ([0.5], 0.7, [0.3], 0.2)]
    assert np.array_equal(pf.compile(f)(*args).numpy(), f(*args).numpy())


def test_an_expanded_input_saved_for_backward_is_kept_as_eagerly():
    """A node keeps a copy of an expanded (broadcast) input, so a later in-place write into its
    base leaves the gradient computable (eagerly); under the tracer it kept the view and failed."""

    def f(x):
        x = x.detach().requires_grad_()
        v = x * 1.0
        y = v.expand(2, 4, 3).cos()
        v.sub_(v)
        return pf.autograd.grad(y.sum(), x)[0]

    x = pf.tensor(np.random.default_rng(3).uniform(-1, 1, (4, 3)))
    assert np.array_equal(pf.compile(f)(x).numpy(), f(x).numpy())


def test_values_a_kernel_writes_past_the_tracer_never_go_stale():
    """cummin's kernel wrote its indices into an array NumPy made, which the tracer cannot see: the
    indices reached the program as constants (the perturbed inputs keep the order; the shuffled
    ones do not). Now they are traced, and the gather of them is one recorded call (its index check
    runs with the program): the whole graph compiles, with right values for any later input."""

    def f(x):
        return pf.cummin(pf.sinh(x), -1)[0]

    rng = np.random.default_rng(5)
    g = pf.compile(f)
    x = pf.tensor(rng.uniform(-2, 2, (4, 5)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no eager fallback)
        assert np.array_equal(g(x).numpy(), f(x).numpy())
    for _ in range(3):
        x = pf.tensor(rng.uniform(-2, 2, (4, 5)))
        assert np.array_equal(g(x).numpy(), f(x).numpy())


def test_a_piecewise_constant_function_of_one_value_never_goes_stale():
    """polygamma of round(x) for a 0-d x: SciPy's polygamma escaped the tracer (np.asarray) and a 1%
    perturbation keeps round(x), so its value reached the program as a constant. polygamma now
    runs on SciPy's ufuncs (traced), and a single value is also checked moved by half its size."""
    f = lambda x: pf.polygamma(0, x.round().abs()) + pf.polygamma(2, x.abs() + 1.0)  # noqa: E731
    g = pf.compile(f)
    for v in (-1.44, -1.6, 0.3, 2.7):
        x = pf.tensor(v)
        assert np.array_equal(g(x).numpy(), f(x).numpy())
    assert "psi" in g.source(pf.tensor(1.0)) and "zeta" in g.source(pf.tensor(1.0))


@pytest.mark.parametrize("view", ["narrow", "getitem", "select", "transpose_reshape"])
def test_the_backward_of_a_view_compiles(view):
    """A view's backward writes the gradient into zeros through the view chain: by NumPy functions
    (copyto, put), which the tracer records, so the vjp compiles (it ran eagerly, with a warning,
    when `region[...] = grad` wrote past the tracer)."""
    fn = {
        "narrow": lambda x: x.narrow(0, 1, 2),
        "getitem": lambda x: x[1:3, ::2],
        "select": lambda x: x[2],
        "transpose_reshape": lambda x: (x * 1.0).mT.reshape(-1),
    }[view]
    x = pf.tensor(np.random.default_rng(6).uniform(-1, 1, (4, 5)))
    g = pf.ones_like(fn(x)) * 0.5

    def vjp(x, g):
        return pf.func.vjp(fn, x)[1](g)[0]

    c = pf.compile(vjp)  # (warnings are errors here: a fallback to eager fails the test)
    assert np.array_equal(c(x, g).numpy(), vjp(x, g).numpy())
    x2 = pf.tensor(np.random.default_rng(7).uniform(-1, 1, (4, 5)))
    assert np.array_equal(c(x2, g * 3.0).numpy(), vjp(x2, g * 3.0).numpy())


@pytest.mark.parametrize(
    "name", ["flip", "diag_embed", "index_vjp", "gather_vjp", "index_select_vjp", "conv2d_vjp", "fold"]
)
def test_kernels_that_fill_new_arrays_compile(name):
    """flip, diag_embed and the backward of indexing, gather and index_select fill an array of
    their own: made through the input (zeros_like, a copy in its layout), so the tracer follows
    it; from np.zeros it left the trace and the call ran eagerly (or, for a function piecewise
    constant at the traced point, kept its traced value)."""
    idx = pf.tensor([[0], [2], [1]])
    w = pf.tensor(np.random.default_rng(9).uniform(-1, 1, (2, 1, 2, 2)))
    fn = {
        "flip": lambda x: x.round().flip((0, 1)) * 2.0,
        "diag_embed": lambda x: pf.diag_embed(x, 1),
        "index_vjp": lambda x: pf.func.vjp(lambda y: y[[0, 2]], x)[1](pf.ones(2, 3))[0],
        "gather_vjp": lambda x: pf.func.vjp(lambda y: y.gather(1, idx), x)[1](pf.ones(3, 1))[0],
        "index_select_vjp": lambda x: pf.func.vjp(lambda y: y.index_select(0, pf.tensor([2, 0])), x)[1](pf.ones(2, 3))[
            0
        ],
        # (col2im sums the columns into its own buffer: made through them now)
        "conv2d_vjp": lambda x: pf.func.vjp(lambda y: pf.nn.functional.conv2d(y.reshape(1, 1, 3, 3), w), x)[1](
            pf.ones(1, 2, 2, 2)
        )[0],
        "fold": lambda x: pf.nn.functional.fold(x.reshape(1, 9, 1).expand(1, 9, 4), (4, 4), 3, padding=1, stride=2),
    }[name]
    g = pf.compile(fn)  # (warnings are errors here: a fallback to eager fails the test)
    for k in range(3):
        x = pf.tensor(np.random.default_rng(k).uniform(-2, 2, (3, 3)))
        assert np.array_equal(g(x).numpy(), fn(x).numpy())


def test_a_gradient_whose_tangent_is_summed_into_an_engine_buffer_stays_traced():
    """The engine summed a gradient's first tangent into a buffer it made with np.zeros, which the
    tracer cannot follow: the negation in the backward of `w.sub_(v)` read it by plain NumPy, so its
    value reached the program as a constant. The buffer is made through the tangent now. (The
    fuzzer's case: the constant was ~1e-13 at any input, so the check on shuffled inputs passed
    and the compiled gradient's tangent was 2e-12 off eager's and torch's.)"""

    def f(x, t):
        with fwAD.dual_level():
            xi = fwAD.make_dual(x.detach().requires_grad_(), t)
            v = (xi * xi).sum()
            w = v * 3.0
            w.sub_(v)
            (g,) = pf.autograd.grad(w + w.asin() + v.atan(), [xi])
            return fwAD.unpack_dual(g).tangent

    c = pf.compile(f)  # (warnings are errors here: a fallback to eager fails the test)
    for k in range(3):
        rng = np.random.default_rng(k)
        x, t = pf.tensor(rng.uniform(-0.4, 0.4, 2)), pf.tensor(rng.uniform(-1, 1, 2))
        assert np.array_equal(c(x, t).numpy(), f(x, t).numpy())


@pytest.mark.parametrize("make", ["zeros", "zeros_like", "empty", "tensor"])
def test_a_new_tensor_written_then_read_stays_traced(make):
    """A tensor made in fn (pf.zeros, pf.tensor) and written with traced values, then read: a
    plain array, its reads by NumPy left the trace; it is a recorded copy while tracing now."""
    new = {
        "zeros": lambda x: pf.zeros(3),
        "zeros_like": lambda x: pf.zeros_like(x),
        "empty": lambda x: pf.empty(3),
        "tensor": lambda x: pf.tensor([0.0, 0.0, 0.0]),
    }[make]

    def fn(x):
        z = new(x)
        z.copy_(x.sin())
        return (-z).exp() * 2.0

    c = pf.compile(fn)
    for k in range(3):
        x = pf.tensor(np.random.default_rng(k).uniform(-2, 2, 3))
        assert np.array_equal(c(x).numpy(), fn(x).numpy())


def test_large_temporaries_go_into_scratch_arrays_and_never_into_results():
    """A large temporary with no dead buffer goes into a scratch array kept between calls: the
    results of one call (and views of temporaries returned) are never overwritten by the next."""

    def f(x):
        t = x.sin() * 2.0 + x.cos()  # temporaries of 2^15 elements
        return (t * t.exp())[::2], t.tanh() + 1.0

    c = pf.compile(f)
    x = pf.tensor(np.random.default_rng(0).uniform(-1, 1, 1 << 15))
    assert "scratch" in c.source(x)
    first = c(x)
    kept = [r.numpy().copy() for r in first]
    c(x * 3.0)
    for r, k in zip(first, kept):
        assert np.array_equal(r.numpy(), k)
    for r, e in zip(c(x * 2.0), f(x * 2.0)):
        assert np.array_equal(r.numpy(), e.numpy())


def test_threads_running_one_compiled_program_have_their_own_scratch():
    import threading

    def f(x):
        return ((x.sin() * 2.0 + x.cos()) * x.exp()).tanh()

    c = pf.compile(f)
    xs = [pf.tensor(np.random.default_rng(k).uniform(-1, 1, 1 << 15)) for k in range(4)]
    c(xs[0])
    bad = []

    def run(x):
        want = f(x).numpy()
        for _ in range(30):
            if not np.array_equal(c(x).numpy(), want):
                bad.append(1)

    threads = [threading.Thread(target=run, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def test_a_call_returning_a_tuple_of_one_array_replays():
    """np.unravel_index over a 1-d shape returns a tuple of one array: the program assigned the
    tuple to one name (`i = np.unravel_index(...)`), so the next call failed (the check ran the
    signature eagerly). (A kernel's NumPy call, written here on the tensor's array directly.)"""

    def f(x):
        return pf.from_numpy(np.unravel_index(x._data.argmax(-1), (5,))[0]) * 2

    c = pf.compile(f)  # (warnings are errors here: a fallback to eager fails the test)
    for k in range(3):
        x = pf.tensor(np.random.default_rng(k).uniform(-1, 1, (2, 5)))
        a, b = c(x), f(x)
        assert np.array_equal(a.numpy(), b.numpy()) and a.dtype == b.dtype
    assert "unravel_index_0, = " in c.source(x)


@pytest.mark.parametrize("name", ["lu", "lu_factor", "matrix_exp", "eig"])
def test_kernels_on_scipy_routines_are_recorded_as_one_call(name):
    """SciPy's routines convert their input with np.asarray, past the tracer: such a kernel
    (core.backend.opaque) is one recorded call of it, so these compile (they ran eagerly)."""
    fn = {
        "lu": lambda a: pf.linalg.lu(a),
        "lu_factor": lambda a: pf.linalg.lu_factor(a),
        "matrix_exp": lambda a: pf.linalg.matrix_exp(a * 0.3),
        "eig": lambda a: pf.linalg.eig(a),
    }[name]
    c = pf.compile(fn)  # (warnings are errors here: a fallback to eager fails the test)
    for k in range(3):
        a = pf.tensor(np.random.default_rng(k).uniform(-1, 1, (2, 3, 3)))
        got, want = c(a), fn(a)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert np.allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12) and g.dtype == w.dtype
    assert re.search(r"= (lu_packed|matrix_exp|eig_packed)\w*\(", c.source(a)), c.source(a)


def test_a_traced_value_used_as_a_dict_key_is_data_dependent():
    def fn(x):
        seen = {v: 1 for v in x._data}  # noqa: F841 - hashing reads the values
        return x * 2.0

    with pytest.raises(CompileError, match="hash"):
        pf.compile(fn, fullgraph=True)(pf.tensor([1.0, 2.0]))


def test_a_one_value_exponent_array_stays_an_array():
    """A constant array of one value becomes a number in element-wise ufuncs, but not as power's
    exponent: NumPy computes x ** 0.5 by sqrt (nan at -inf, -0.0 at -0.0) and x ** [0.5, ...] by
    pow (inf, 0.0), and the program must give eager's bits."""

    def f(x):
        return x ** pf.full((3,), 0.5) + x * pf.full((3,), 2.0)

    c = pf.compile(f)
    x = pf.tensor([4.0, 1.0, 9.0])
    c(x)
    src = c.source(x)
    assert "** 0.5" not in src and "0.5)" not in src and "2.0" in src, src
    with np.errstate(invalid="ignore"):
        y = pf.tensor([-np.inf, -0.0, 2.0])
        got, want = c(y).numpy(), f(y).numpy()
    assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("make", ["tensor", "folded"])
def test_zeros_of_both_signs_are_not_one_value(make):
    """A constant holding 0.0 and -0.0 is not one repeated value: as a number (or broadcast from
    its first element) it gave x * -0.0 everywhere, -0.0 where eager gives 0.0."""
    const = {
        "tensor": lambda: pf.tensor([-0.0, 0.0, 0.0]),
        "folded": lambda: pf.tensor([-0.0, 0.0, 0.0]) * 2.0,  # (folded when the program is emitted)
    }[make]

    def f(x):
        return x * const()

    c = pf.compile(f)
    x = pf.tensor([1.0, 2.0, 3.0])
    c(x)
    got, want = c(x).numpy(), f(x).numpy()
    assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want, c.source(x))


_X3 = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 0.0, 1.5]]
_INDEXED_REDUCTIONS = {
    "stack_max_logsumexp": lambda x: pf.stack([x, x * 2]).max(0).values.logsumexp(0),
    "max_dim": lambda x: x.max(1).values.sum(),
    "min_dim": lambda x: x.min(0).values.sum(),
    "median_dim": lambda x: x.median(1).values.sum(),
    "sort_values": lambda x: (x.sort(1).values * pf.tensor([1.0, 2.0, 3.0])).sum(),
    "topk_values": lambda x: (x.topk(2, 1).values ** 2).sum(),
    "cummax": lambda x: (x.cummax(1).values * x).sum(),
    "kthvalue": lambda x: x.kthvalue(2, 1).values.sum(),
}


@pytest.mark.parametrize("name", sorted(_INDEXED_REDUCTIONS))
def test_fullgraph_compile_of_reductions_with_indices_and_their_gradients(name):
    # their backward selects by the indices (a gather / scatter): no Python branch on values, so the
    # whole graph compiles; the index check runs when the compiled program runs
    f = _INDEXED_REDUCTIONS[name]
    x = pf.tensor(_X3[0]) if name == "stack_max_logsumexp" else pf.tensor(_X3)
    g = pf.compile(pf.func.grad(f), fullgraph=True)
    for scale in (1.0, -1.5):
        assert pf.allclose(g(x * scale), pf.func.grad(f)(x * scale))
    hv = pf.compile(lambda a, t: pf.func.jvp(pf.func.grad(f), (a,), (t,))[1], fullgraph=True)
    t = pf.ones_like(x)
    assert pf.allclose(hv(x, t), pf.func.jvp(pf.func.grad(f), (x,), (t,))[1])
    assert pf.allclose(pf.compile(f, fullgraph=True)(x), f(x))


def test_compiled_gather_still_checks_its_index_when_it_runs():
    gather = pf.compile(lambda x, i: pf.gather(x, 0, i), fullgraph=True)
    x = pf.tensor([1.0, 2.0, 3.0])
    assert gather(x, pf.tensor([2, 0])).tolist() == [3.0, 1.0]
    with pytest.raises(RuntimeError, match="out of bounds"):
        gather(x, pf.tensor([5, 0]))


def test_a_compiled_program_raising_gives_the_eager_error_naming_the_op():
    # the program called np.linalg.cholesky directly and raised NumPy's LinAlgError
    def f(x):
        return pf.linalg.cholesky(x @ x.mT - 2 * pf.eye(2))

    c = pf.compile(f)
    c(pf.tensor([[3.0, 0.0], [0.5, 3.0]]))
    with pytest.raises(pf.errors.OpError, match="linalg_cholesky: the input is not positive-definite"):
        c(pf.tensor([[1.0, 0.0], [0.0, 1.0]]))


# ---- loop programs: element reads, writes into slices, guards ------------------------------------


def cholesky_loop(a):
    n = a.shape[0]
    low = pf.zeros_like(a)
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j] - (low[i, :j] * low[j, :j]).sum()
            low[i, j] = pf.sqrt(s) if i == j else s / low[j, j]
    return low


def spd(n, seed=0):
    m = np.random.default_rng(seed).standard_normal((n, n))
    return pf.tensor(m @ m.T + n * np.eye(n))


def test_element_loop_jvp_is_scalar_numpy():
    """An element loop's jvp compiles to NumPy scalar arithmetic: element reads `a[i, j]` (not 0-d
    views), no 0-d array made again from a scalar, writes as assignments `b[i, j] = s` (not copyto
    of a broadcast copy), and the tangent of each element written into the tangent buffer."""
    x, v = spd(4), pf.tensor(np.random.default_rng(1).standard_normal((4, 4)))
    f = lambda x, v: pf.func.jvp(cholesky_loop, (x,), (v,))  # noqa: E731
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        close(got, want)
    src = c.source(x, v)
    assert "np.asarray" not in src and "copyto" not in src and "broadcast_to" not in src and ".copy()" not in src
    assert re.search(r"= x\[2, 1\]\n", src) and re.search(r"\w+\[2, 1\] = \w+\n", src), src
    x2, v2 = spd(4, 5), pf.tensor(np.random.default_rng(6).standard_normal((4, 4)))
    for got, want in zip(c(x2, v2), f(x2, v2)):
        close(got, want)


def test_an_element_read_is_a_view_until_its_last_use():
    """e = a[0, 0] is a view of a: a write into a before e's last use is seen (the read is not
    replaced by a scalar copy there), one after it is not needed."""

    def f(x):
        a = x.clone()
        e = a[0, 0]
        d = a[1, 1] * 3.0  # read, used, then written: a scalar read
        a[0, 0] = 5.0
        a[1, 1] = d
        return e * 2.0 + a

    c = pf.compile(f, fullgraph=True)
    x = pf.tensor([[1.0, 2.0], [3.0, 4.0]])
    close(c(x), f(x))
    close(c(x * 3), f(x * 3))
    src = c.source(x)
    assert re.search(r"= copy_0\[1, 1\]\n", src) and "copy_0[0, 0] = const_0" in src, src
    assert re.search(r"= copy_0\[0, 0, \.\.\.\]", src), src  # e stays a view


def test_a_view_reused_across_writes_sees_them():
    def f(x):
        a = x.clone()
        r0 = a[0, :]
        s0 = r0.sum()
        a[0, 1] = 7.0
        r1 = a[0, :]  # the same view again: after the write
        return s0 + r1.sum() + r0

    c = pf.compile(f, fullgraph=True)
    x = pf.tensor([[1.0, 2.0], [3.0, 4.0]])
    close(c(x), f(x))
    close(c(x - 1), f(x - 1))


def sweep(a):
    """Seidel-like in-place sweep: a slice update, then each element updated twice."""
    a = a.clone()
    n = a.shape[0]
    for i in range(1, n - 1):
        a[i, 1:-1] += a[i - 1, :-2] + a[i + 1, 2:]
        for j in range(1, n - 1):
            a[i, j] += a[i, j - 1]
            a[i, j] /= 9.0
    return a


def test_in_place_updates_of_elements_write_each_element_once():
    """`a[i, 1:-1] += x` writes the view and then assigns the view to itself: that assignment
    (a copy written back) is gone; `a[i, j] += s; a[i, j] /= 9.0` reads a[i, j] once and writes
    it once, primal and tangent, and the reads after a write take the value written."""
    x, v = pf.tensor(np.random.default_rng(2).standard_normal((5, 5))), pf.ones(5, 5)
    f = lambda x, v: pf.func.jvp(sweep, (x,), (v,))  # noqa: E731
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        close(got, want)
    src = c.source(x, v)
    assert "astype" not in src and ".copy()" not in src.split("\n", 3)[3], src
    for name in re.findall(r"^    (\w+)\[1, 2\] = ", src, re.M):
        assert src.count(f"    {name}[1, 2] = ") == 1, src  # one write per element and buffer
    assert len(re.findall(r"= \w+\[1, 2\]\n", src)) == 2, src  # read once, primal and tangent
    x2, v2 = x * 2 - 1, pf.tensor(np.random.default_rng(3).standard_normal((5, 5)))
    for got, want in zip(c(x2, v2), f(x2, v2)):
        close(got, want)


def test_an_element_store_seen_through_a_view_is_kept():
    """A store overwritten later but read in between through a view of the row (and a store into
    an element a slice write then covers) is kept: the reads see it."""

    def f(x):
        a = x.clone()
        r = a[0, :]
        a[0, 1] = a[1, 1] * 2.0
        s = r.sum()  # reads the first store
        a[0, 1] = a[1, 0] + 1.0
        a[1, 1] = a[0, 0] * 3.0
        a[1, :] = a[1, :] * 2.0  # reads the element store through the slice
        t = a[0, 1] * 2.0  # the value of the second store
        return a + s + t

    c = pf.compile(f, fullgraph=True)
    x = pf.tensor([[1.0, 2.0], [3.0, 4.0]])
    close(c(x), f(x))
    close(c(x * 3 - 1), f(x * 3 - 1))


def recurrence(r):
    """durbin-like: a 0-d accumulator updated in place, read after each update."""
    beta = r[0] * 1.0
    y = pf.zeros_like(r)
    for k in range(1, r.shape[0]):
        beta *= 1.0 - r[k] * r[k - 1]
        y[k] = r[k] / beta
    return y + beta


def test_a_0d_value_overwritten_in_place_is_read_as_the_value_written():
    """`beta *= x` on a 0-d tensor writes the whole of it: the program reads the product instead
    (no copyto), and beta's value at each read is the one eagerly."""
    x, v = pf.tensor(np.random.default_rng(4).uniform(0.1, 0.5, 6)), pf.ones(6)
    f = lambda x, v: pf.func.jvp(recurrence, (x,), (v,))  # noqa: E731
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        close(got, want)
    assert "copyto" not in c.source(x, v)
    x2 = x * 1.5
    for got, want in zip(c(x2, v * 3), f(x2, v * 3)):
        close(got, want)


def test_a_0d_value_seen_through_a_view_keeps_its_writes():
    def f(x):
        b = x.sum()
        e = b[...]  # a view of b: b's writes must reach it
        b *= 2.0
        s = e * 1.0
        b *= 3.0
        return s + b

    c = pf.compile(f, fullgraph=True)
    x = pf.tensor([1.0, 2.0])
    close(c(x), f(x))
    close(c(x - 4), f(x - 4))


def test_an_in_place_update_of_a_whole_array_computes_into_it():
    """`a += b * 2` on a whole array: the sum goes into a (`+=`), not into a temporary copied
    over a; where a is read between the sum and the write, the copy stays."""

    def f(x, y):
        a = x.clone()
        a += y * 2.0
        a -= pf.sin(a)
        return a

    c = pf.compile(f, fullgraph=True)
    x, y = pf.tensor(np.linspace(0.0, 1.0, 12).reshape(3, 4)), pf.tensor(np.ones((3, 4)))
    close(c(x, y), f(x, y))
    close(c(y, x), f(y, x))
    src = c.source(x, y)
    assert "copyto" not in src and " += " in src and " -= " in src, src

    def g(x, y):
        a = x.clone()
        s = a + y
        b = a * 3.0  # a read between s and its copy into a: s cannot be computed into a
        a.copy_(s)
        return a + b

    c = pf.compile(g, fullgraph=True)
    close(c(x, y), g(x, y))
    close(c(y, x), g(y, x))

    def h(x, y):
        s = x * y
        a = pf.zeros_like(x)  # made after s: s cannot be computed into it
        a.copy_(s)
        return a

    c = pf.compile(h, fullgraph=True)
    close(c(x, y), h(x, y))


def test_a_copy_of_a_value_written_later_is_kept():
    def f(x):
        a = x.clone()
        b = a[0].clone()  # a copy: a's later write must not reach it
        a[0] = 9.0
        return a + b

    c = pf.compile(f, fullgraph=True)
    x = pf.tensor([[1.0, 2.0], [3.0, 4.0]])
    close(c(x), f(x))
    close(c(x * 2), f(x * 2))


def test_branch_on_a_traced_value_is_guarded_and_retraced():
    """A branch on a traced value that does not move with the inputs compiles with a guard; a call
    where it goes the other way runs another trace of the same signature (traced then)."""
    fn = lambda x: x * 2 if x.sum() > 0 else x - 1  # noqa: E731
    c = pf.compile(fn, fullgraph=True)
    x = pf.tensor([1.0, -2.0, 3.0])
    close(c(x), fn(x))
    src = c.source(x)
    assert "raise GuardFailed" in src and "test_compile.py:" in src, src
    close(c(-x), fn(-x))
    close(c(x * 3), fn(x * 3))
    close(c(-x * 3), fn(-x * 3))
    (entry,) = c._cache.values()
    assert len(entry.others) == 1


def test_while_on_a_tolerance_is_guarded():
    def halve(x):
        while (x.abs() > 1.0).any():
            x = x / 2.0
        return x

    c = pf.compile(halve)  # (warnings are errors here: no fallback to eager)
    x = pf.tensor([3.0, -1.5, 0.25])
    for k in (1.0, 1.1, 0.3, 2.5):
        close(c(x * k), halve(x * k))


def test_a_guard_failing_after_a_write_into_an_input_restores_it():
    def f(x):
        x.mul_(2.0)
        if x.sum() > 0:
            return x + 1.0
        return x - 1.0

    c = pf.compile(f, fullgraph=True)
    a, b = pf.tensor([1.0, 2.0]), pf.tensor([1.0, 2.0])
    close(c(a), f(b))
    close(a, b)
    a, b = pf.tensor([-1.0, -2.0]), pf.tensor([-1.0, -2.0])
    close(c(a), f(b))
    close(a, b)  # written once, not twice


@pytest.mark.parametrize("chol", [pf.linalg.cholesky, np.linalg.cholesky], ids=["pf", "np"])
def test_cholesky_jvp_compiles(chol):
    """The jvp of cholesky solves with the factor: solve_triangular checks its diagonal for a zero,
    a branch on a value that is a guard now, not a refusal."""
    x, v = spd(5), pf.tensor(np.random.default_rng(2).standard_normal((5, 5)))
    f = lambda x, v: pf.func.jvp(chol, (x,), (v,))  # noqa: E731
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        close(got, want, 1e-10)
    x2 = spd(5, 3)
    for got, want in zip(c(x2, v), f(x2, v)):
        close(got, want, 1e-10)


def test_jet_compiles():
    """jet's recurrences stack coefficients into a buffer (taylor.py's conv): the buffer is made
    from a coefficient (empty_like), so under the tracer it is recorded and the values written into
    it stay in the program (np.empty made it a constant: the check disagreed)."""
    f = lambda x, v: pf.func.jet(chain, (x,), ([v, pf.zeros_like(v), pf.zeros_like(v)],))  # noqa: E731
    c = pf.compile(f, fullgraph=True)
    x, v = pf.randn(6), pf.randn(6)
    for x_ in (x, x * 1.5 - 0.2):
        got, want = c(x_, v), f(x_, v)
        close(got[0], want[0])
        for g, w in zip(got[1], want[1]):
            close(g, w, 1e-10)


def test_the_check_gives_no_warning_of_its_own_inputs():
    """The check runs fn on shuffled inputs, where sqrt meets negative values (the differences of
    a decreasing sequence put in another order): no warning of those runs reaches the caller."""
    fn = lambda x: pf.sqrt(x[:-1] - x[1:])  # noqa: E731
    c = pf.compile(fn, fullgraph=True)
    x = pf.tensor([5.0, 4.0, 3.0, 2.0, 1.0, 0.5])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        close(c(x), fn(x))
    assert not caught, [str(w.message) for w in caught]


def test_a_guarded_function_composes_with_autodiff_from_outside():
    fn = lambda x: (x * x).sum() if x.sum() > 0 else (x * 3.0).sum()  # noqa: E731
    c = pf.compile(fn)
    for x in (pf.tensor([1.0, 2.0]), pf.tensor([-1.0, -2.0])):
        close(pf.func.grad(c)(x), pf.func.grad(fn)(x))


def test_empty_views_of_inputs_come_out_fresh_through_autodiff_from_outside():
    # NumPy sees no shared memory in an empty array, so the view is told by its base
    def f(x0):
        v1 = x0.swapaxes(0, 1)
        return v1, v1.detach(), x0.real

    x = pf.randn(0, 3).to(pf.complex128)
    primals, tangents = pf.func.jvp(pf.compile(f), (x,), (pf.ones(0, 3).to(pf.complex128),))
    assert [tuple(t.shape) for t in tangents] == [(3, 0), (3, 0), (0, 3)]


def element_recurrence(a):
    """An element loop: each element updated from the one before it and the first, twice (the
    first's reads come after every store before them)."""
    a = a.clone()
    for i in range(1, a.shape[0]):
        a[i] += a[i - 1] * a[0]
        a[i] /= 3.0
    return a


def _compiler_lines(n: int) -> int:
    """Lines of pf.compile's own code run to trace, check and emit the jvp of an n-element loop:
    a count of the work, not a time (the same on a loaded machine)."""
    import os
    import sys

    import pushforward.compiler as compiler

    here = os.path.dirname(compiler.__file__)
    count = [0]

    def line(frame, event, arg):
        if event == "line":
            count[0] += 1
        return line

    def call(frame, event, arg):  # (lines counted in the compiler's frames only)
        return line if frame.f_code.co_filename.startswith(here) else None

    x, v = pf.tensor(np.linspace(0.0, 1.0, n)), pf.ones(n)
    c = pf.compile(lambda x, v: pf.func.jvp(element_recurrence, (x,), (v,)), fullgraph=True)
    sys.settrace(call)
    try:
        got = c(x, v)
    finally:
        sys.settrace(None)
    for g, w in zip(got, pf.func.jvp(element_recurrence, (x,), (v,))):
        close(g, w)
    return count[0]


def test_compile_work_is_linear_in_the_trace():
    """Tracing, the check and each pass cost the same per statement however long the loop: the
    work for twice the elements is twice the work (a pass that rescans the trace per statement
    would make it four times)."""
    small, large = _compiler_lines(150), _compiler_lines(300)
    assert 1.9 < large / small < 2.08, (small, large)


def test_a_slice_bound_read_from_a_tensor_is_guarded():
    """A slice bound taken from a tensor's element (a CSR row pointer, `x[ptr[i]:ptr[i + 1]]`) is
    read once as a Python int under a guard: the program slices with it, and other bounds trace again
    rather than reuse it."""

    def segment_sums(x, ptr):
        return pf.stack([x[ptr[i] : ptr[i + 1]].sum() for i in range(2)])

    c = pf.compile(segment_sums, fullgraph=True)
    x = pf.tensor(np.arange(1.0, 7.0))
    p1, p2 = pf.tensor(np.array([0, 2, 6])), pf.tensor(np.array([0, 4, 5]))
    for p in (p1, p2, p1):
        close(c(x, p), segment_sums(x, p))
    with fwAD.dual_level():
        d = fwAD.make_dual(x, pf.ones(6))
        _, t = fwAD.unpack_dual(c(d, p2))
        close(t, pf.tensor([4.0, 1.0]))


def test_a_branch_near_its_threshold_compiles():
    """A branch whose value is close to its threshold (`abs(z) < 1` at |z| = 0.9993, as a contour
    integral's test of its nodes) is still one program with a guard: the check on other inputs
    moves the values less when the larger move flips the branch."""

    def inside(z):
        return z * 2.0 if (z.abs() < 1.0).all() else z - 1.0

    c = pf.compile(inside, fullgraph=True)
    z = pf.tensor([0.9993, -0.5])
    close(c(z), inside(z))
    assert "raise GuardFailed" in c.source(z)
    close(c(z * 1.01), inside(z * 1.01))


@pytest.mark.parametrize("gram", [lambda x: x @ x.T, lambda x: np.cov(x), lambda x: x.mT @ x])
def test_a_gram_products_tangent_is_one_product(gram):
    """The jvp of `x @ x.T` is `t @ x.T + x @ t.T`, the second the first's transpose: the program
    computes one product for it and takes its transpose (a view), with the same values."""
    x = pf.tensor(np.random.default_rng(0).standard_normal((5, 7)))
    v = pf.tensor(np.random.default_rng(1).standard_normal((5, 7)))

    def f(x, v):
        with fwAD.dual_level():
            return fwAD.unpack_dual(gram(fwAD.make_dual(x, v)))

    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        close(got, want)
    src = c.source(x, v)
    assert src.count(" @ ") + src.count("np.matmul(") == 2 and src.count("np.swapaxes(matmul") == 1, src


# ---- boolean masks: evaluated by the program behind a guard on their count (docs/design.md,
# "Boolean masks under the compiler"); weighted histograms into fixed shapes


def only_entry(c):
    (e,) = c._cache.values()
    return e


def test_a_boolean_mask_compiles_behind_a_guard_on_its_count():
    """`x[x > 0]` is one program: another mask of the same count runs it (the program computes the
    mask), a mask of another count fails its guard and runs another trace."""

    def positives(x):
        return x[x > 0] * 2.0

    c = pf.compile(positives, fullgraph=True)
    x = pf.tensor([1.0, -2.0, 3.0, -4.0])
    close(c(x), positives(x))
    src = c.source(x)
    assert "raise GuardFailed('the count of a boolean mask'" in src
    other_mask = pf.tensor([-1.0, 2.0, -3.0, 4.0])
    close(c(other_mask), positives(other_mask))
    assert only_entry(c).others == []  # (the same program)
    other_count = pf.tensor([1.0, 2.0, 3.0, -4.0])
    close(c(other_count), positives(other_count))
    assert len(only_entry(c).others) == 1
    for y in (x, other_mask, other_count, -other_count):
        close(c(y), positives(y))


def test_a_zero_dimensional_mask_is_guarded_too():
    def rows_if_positive(x):
        return x[x.sum() > 0] + 1.0

    c = pf.compile(rows_if_positive, fullgraph=True)
    x = pf.tensor([[1.0, 2.0], [3.0, 4.0]])
    for y in (x, -x, x):
        close(c(y), rows_if_positive(y))


def softened(x, v):
    """nbody's pattern: a masked read and a masked write of the same mask, under a dual level."""
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), v.clone())
        r = d * d - 0.25
        r[r > 0] = r[r > 0] ** -1.5
        s = r[r < 0].sum() + r.sum()
        p, t = fwAD.unpack_dual(s)
        return p.detach().clone(), t.detach().clone()


def test_the_jvp_of_masked_reads_and_writes_matches_eager():
    c = pf.compile(softened, fullgraph=True)
    rng = np.random.default_rng(0)
    x, v = pf.tensor(rng.standard_normal(30)), pf.tensor(rng.standard_normal(30))
    for y in (x, x.flip(0), x * 0.3, x):  # (the same mask moved, another count, the first again)
        for got, want in zip(c(y, v), softened(y, v)):
            close(got, want)
    # a guard per mask the code makes (`r > 0` twice, `r < 0` once): the primal's and the tangent's
    # reads and writes with one mask share its guard
    assert c.source(x, v).count("raise GuardFailed") == 3


def test_a_masked_write_into_an_input_is_restored_when_its_guard_fails():
    """The program writes into its input before a later mask's count differs: the input is restored
    before another trace runs, so it ends as the eager call leaves it."""

    def halve_negatives(x):
        x[x < 0] = x[x < 0] * 0.5
        return x[x > 0.2] * 1.0

    c = pf.compile(halve_negatives, fullgraph=True)
    base = np.array([1.0, -2.0, 3.0, 0.1, 0.5])
    for values in (base, base, np.array([1.0, -2.0, 3.0, 0.3, 0.5]), np.array([-1.0, -2.0, 3.0, 0.1, 0.5])):
        a, b = pf.tensor(values.copy()), pf.tensor(values.copy())
        close(c(a), halve_negatives(b))
        close(a, b)
        assert a._version == b._version


def azimuthal(data, radius):
    """azimint_naive's pattern: a mean over the samples under each of n fractions of the largest."""
    rmax = radius.max()
    out = []
    for i in range(5):
        mask = (rmax * i / 5 <= radius) & (radius < rmax * (i + 1) / 5)
        out.append(data[mask].mean())
    return pf.stack(out)


def test_masks_of_values_under_fractions_of_their_max_compile():
    """Samples just under each bin's edge cross it when the check moves them by 1% or by 1e-5: the
    check's next inputs, the values doubled (exact), keep every count."""
    edges = np.arange(1, 6) / 5
    radius = pf.tensor(np.concatenate([np.repeat(edges * (1 - 1e-12), 20), edges * 0.9, [1.0]]))
    data = pf.tensor(np.random.default_rng(0).standard_normal(radius.shape[0]))
    c = pf.compile(azimuthal, fullgraph=True)
    close(c(data, radius), azimuthal(data, radius))
    assert "the count of a boolean mask" in c.source(data, radius)
    with fwAD.dual_level():
        d = fwAD.make_dual(data, pf.ones_like(data))
        p, t = fwAD.unpack_dual(c(d, radius))
        close(t, pf.ones(5))
    shuffled = pf.tensor(radius.numpy()[::-1].copy())
    close(c(data, shuffled), azimuthal(data, shuffled))


def test_a_mask_whose_count_moves_with_every_other_input_is_refused():
    """Values just under the threshold of a constant: every input the check tries moves the count,
    so the program cannot be checked: refused with the line (eager with fullgraph=False)."""

    def above_one(x):
        return x[x > 1.0] * 2.0

    x = pf.tensor([1.0 - 1e-9] * 20 + [3.0])
    with pytest.raises(CompileError, match="the count of a boolean mask at .*test_compile.py:"):
        pf.compile(above_one, fullgraph=True)(x)
    c = pf.compile(above_one)
    with pytest.warns(RuntimeWarning, match="running eagerly"):
        close(c(x), above_one(x))


def weighted_histogram(data, radius):
    counts = np.histogram(radius, 8)[0]
    sums = np.histogram(radius, 8, weights=data)[0]
    clipped = np.histogram(radius, 4, range=(0.2, 0.7), weights=data)[0]
    # (densities divide by the sums' total: read back from the array the sums were written into)
    densities = np.histogram(radius, 8, density=True)[0], np.histogram(radius, 8, density=True, weights=data)[0]
    return sums / counts, clipped, *densities


def test_a_weighted_histogram_compiles_to_one_program():
    """Which bin a sample falls into is computed by the program, into fixed shapes (samples outside
    the range summed into a bin the result drops): no guard on the samples' values."""
    rng = np.random.default_rng(0)
    radius, data = pf.tensor(rng.random(200)), pf.tensor(rng.standard_normal(200))
    c = pf.compile(weighted_histogram, fullgraph=True)
    for r in (radius, radius * 0.5 + 0.1, pf.tensor(rng.random(200))):
        for got, want in zip(c(data, r), weighted_histogram(data, r)):
            close(got, want)
    assert "count of a boolean mask" not in c.source(data, radius)
    with fwAD.dual_level():
        d = fwAD.make_dual(data, pf.ones_like(data))
        _, t = fwAD.unpack_dual(c(d, radius)[1])
        close(t, pf.tensor(np.histogram(radius.numpy(), 4, range=(0.2, 0.7))[0].astype(float)))


def test_a_trace_past_the_statement_limit_stops_with_the_line(monkeypatch):
    """A loop of many steps (a while on a tolerance) traces too long a program: the trace stops at
    recording.MAX_STATEMENTS, naming the loop's line, and the function runs eagerly."""
    from pushforward.compiler import recording

    def relax(x):
        err = x.sum() * 0.0 + 1.0
        while err > 0.05:
            x = x * 0.9 + 0.01
            err = err * 0.99
        return x

    monkeypatch.setattr(recording, "MAX_STATEMENTS", 400)
    with pytest.raises(CompileError, match=r"passed 400 statements.*test_compile.py:"):
        pf.compile(relax, fullgraph=True)(pf.ones(3))
    c = pf.compile(relax)
    with pytest.warns(RuntimeWarning, match="running eagerly"):
        close(c(pf.ones(3)), relax(pf.ones(3)))
    monkeypatch.setattr(recording, "MAX_STATEMENTS", 4000)
    close(pf.compile(relax, fullgraph=True)(pf.ones(3)), relax(pf.ones(3)))


def test_an_output_viewing_a_buffer_the_program_fills_is_that_view():
    """A result that is a plain view into an array made outside the trace and filled by recorded
    calls (a kernel's sum buffer) is the same view of the program's buffer, not a constant."""

    def sums(x):
        buf = np.zeros(4)
        np.add.at(buf, np.array([0, 1, 1, 3]), x.detach().numpy())
        return pf.as_tensor(buf[:3])

    c = pf.compile(sums, fullgraph=True)
    for x in (pf.tensor([1.0, 2.0, 3.0, 4.0]), pf.tensor([5.0, -1.0, 0.5, 2.0])):
        close(c(x), sums(x))


def jvp_of(fn):
    def f(x, v):
        with fwAD.dual_level():
            return fwAD.unpack_dual(fn(fwAD.make_dual(x, v)))

    return f


def test_a_recursions_flips_products_and_slice_updates_are_cheap_numpy():
    """The jvp of Durbin's recursion: `np.flip` is the view `x[::-1]`, a product of two vectors
    `x.dot(y)`, the flipped vector that only `+ - * /` read is not copied into C order (the one a
    product reads is: its summation order depends on it), and `y[:k] += alpha * flip(y[:k])` on the
    tangent computes into the tangent buffer's slice. The same bits as eagerly."""
    rng = np.random.default_rng(0)
    x, v = pf.tensor(rng.standard_normal(40) * 0.1), pf.tensor(rng.standard_normal(40))
    f = jvp_of(functools.partial(durbin, np))
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    src = c.source(x, v)
    assert "np.flip(" not in src and "np.ascontiguousarray(" not in src and " @ " not in src, src
    assert re.search(r"= getitem_\d+\[::-1\]\n", src) and src.count(".dot(") == 3 * 39, src
    assert src.count(".copy()") == 2 * 38, src  # (r[:k] flipped for k >= 2, primal and tangent)
    assert len(re.findall(r"^    getitem_\d+ \+= \w+$", src, re.M)) == 2 * 39, src
    assert not re.search(r"^    \w+\[:\d+\] = ", src, re.M), src


def test_a_product_of_a_reversed_vector_stays_a_matmul():
    """NumPy's matmul sums a vector with a negative stride in another order than `x.dot(y)` (which
    then leaves BLAS): the program keeps `@` there, and the eager bits."""
    rng = np.random.default_rng(1)
    x, v = pf.tensor(rng.standard_normal(100)), pf.tensor(rng.standard_normal(100))
    f = jvp_of(lambda x: x[::-1] @ x)
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    src = c.source(x, v)
    assert src.count(" @ ") == 3 and ".dot(" not in src, src


def test_a_flipped_vector_read_by_other_ufuncs_keeps_its_copy():
    """Only exactly rounded ufuncs read a flipped vector in place of its C-ordered copy: a sine may
    take another loop for a strided operand."""
    x = pf.tensor(np.random.default_rng(2).standard_normal(64))
    f = lambda x: pf.sin(pf.flip(x, (0,))) + pf.flip(x, (0,)) * 2.0  # noqa: E731
    c = pf.compile(f, fullgraph=True)
    np.testing.assert_array_equal(c(x).numpy(), f(x).numpy())
    src = c.source(x)
    assert src.count(".copy()") == 1 and re.search(r"np\.sin\(\w+\)", src), src


def test_views_are_indexed_without_a_trailing_ellipsis():
    """`a[1:, 2, ...]` and `a[1, ...]` are the views `a[1:, 2]` and `a[1]` (NumPy parses those
    faster); an element `a[0, 0, ...]` read as a 0-d view keeps its Ellipsis (without it, a scalar)."""

    def f(x):
        a = x.clone()
        e = a[0, 0]
        col = a[1:, 2] * 2.0
        row = a[1] + 1.0
        a[0, 0] = 5.0
        return e * 2.0 + col.sum() + row.sum() + a

    c = pf.compile(f, fullgraph=True)
    x = pf.tensor(np.arange(9.0).reshape(3, 3))
    close(c(x), f(x))
    src = c.source(x)
    assert "[1:, 2]" in src and re.search(r"= copy_0\[1\]\n", src) and "[0, 0, ...]" in src, src
    assert "[1:, 2, ...]" not in src and "[1, ...]" not in src, src


def test_an_element_store_a_scalar_read_of_another_element_follows_is_overwritten():
    """A Cholesky row: `L[i, j] = s` then `L[i, j] = s / L[j, j]` writes L[i, j] once (the read of
    L[j, j] in between reads another element), primal and tangent; the same bits as eagerly."""

    def chol(a):
        return cholesky_in_place(pf, a.clone())

    x, v = spd(5), pf.tensor(np.random.default_rng(3).standard_normal((5, 5)))
    f = jvp_of(chol)
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    src = c.source(x, v)
    names = re.findall(r"^    (\w+)\[3, 1\] = ", src, re.M)
    assert len(names) == 2 and len(set(names)) == 2, src  # once per buffer


def column_recurrence(x):
    """A recurrence over columns, as an IIR filter's: each column from the input's and the two before."""
    y = pf.zeros_like(x)
    y[:, 0] = 0.5 * x[:, 0]
    y[:, 1] = 0.5 * x[:, 1] + 0.25 * y[:, 0]
    for j in range(2, x.shape[1]):
        y[:, j] = 0.5 * x[:, j] + 0.25 * y[:, j - 1] - 0.125 * y[:, j - 2]
    return y


def test_a_column_written_then_read_is_read_as_the_array_written():
    """`y[:, j - 1]` and `y[:, j - 2]`, assigned before (primal and tangent), are read as the
    contiguous arrays assigned, not as strided views of y: the stores into other columns in
    between do not touch them. The same bits as eagerly."""
    rng = np.random.default_rng(4)
    x, v = pf.tensor(rng.standard_normal((6, 9))), pf.tensor(rng.standard_normal((6, 9)))
    f = jvp_of(column_recurrence)
    c = pf.compile(f, fullgraph=True)
    for got, want in zip(c(x, v), f(x, v)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    src = c.source(x, v)
    assert len(re.findall(r"^    \w+ = (?:x|v)\[:, \d\]$", src, re.M)) == 2 * 9, src  # the inputs' columns
    assert not re.search(r"= (?!x\[|v\[)\w+\[:, \d\]$", src, re.M), src  # no column of y read back
    assert len(re.findall(r"^    \w+\[:, \d\] = \w+$", src, re.M)) == 2 * 9, src


def test_a_region_read_after_an_overlapping_write_or_by_another_ufunc_stays_a_view():
    """The view `y[:, 1]` after `y[1:, :] *= 2` (which overlaps it) reads the written memory, and
    one that `sin` reads stays a view (a strided operand may take another loop)."""

    def overlapped(x):
        y = pf.zeros_like(x)
        y[:, 1] = x[:, 0] * 3.0
        y[1:, :] *= 2.0
        return y[:, 1] * 1.5

    def sine(x):
        y = pf.zeros_like(x)
        y[:, 1] = x[:, 0] * 3.0
        return pf.sin(y[:, 1])

    x = pf.tensor(np.random.default_rng(5).standard_normal((4, 3)))
    for f in (overlapped, sine):
        c = pf.compile(f, fullgraph=True)
        np.testing.assert_array_equal(c(x).numpy(), f(x).numpy())
        assert re.search(r"= new_0\[:, 1\]$", c.source(x), re.M), c.source(x)


def test_an_output_copied_from_a_temporary_at_its_last_use_is_the_temporary():
    """`y.clone()` returned, y a temporary of this call nothing uses afterwards, is y: no copy (a
    pass over an array's memory); each call still returns new arrays. A clone of an input, of a
    value used after it, or of a view stays a copy."""

    def f(x):
        y = x * 2.0
        y += 1.0
        z = x + 1.0
        return y.clone(), z.clone(), z.sum(), x.clone(), x[1:].clone()

    c = pf.compile(f, fullgraph=True)
    x = pf.tensor(np.random.default_rng(6).standard_normal(2000))
    first = c(x)
    for got, want in zip(first, f(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    again = c(x)
    assert not any(np.shares_memory(a.numpy(), b.numpy()) for a, b in zip(first[:2], again[:2]))
    src = c.source(x)
    assert src.count(".copy()") == 3 and "return (multiply_0, copy_" in src, src  # z's, x's and x[1:]'s
