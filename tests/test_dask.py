"""Lazy (Dask-backed) tensors: nothing computes before compute(), both modes of AD give lazy
derivatives equal to the NumPy path's, unsupported and in-place ops raise naming the op, the
op database runs op by op on lazy inputs, and a LocalCluster of worker processes gives the same."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.core.lazy import LazyUnsupportedError

if os.environ.get("CI"):  # CI installs the test extras: a missing Dask is a failure there
    import dask
    import dask.array as da
else:
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")

TOL = 1e-12


class Refuse:
    """A scheduler that refuses to run: set it to prove nothing computes, count what would."""

    def __init__(self):
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        raise AssertionError("a Dask array was computed")


class Counting:
    """The synchronous scheduler, counting its passes."""

    def __init__(self):
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return dask.get(*args, **kwargs)


def lazy(a, chunks=2):
    return pf.as_tensor(da.from_array(np.asarray(a), chunks=chunks))


def close(got, want, tol=TOL):
    g = got.detach().numpy() if isinstance(got, pf.Tensor) else np.asarray(got)
    w = want.detach().numpy() if isinstance(want, pf.Tensor) else np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


A = np.linspace(0.1, 1.2, 12).reshape(3, 4)
V = np.cos(np.arange(12.0)).reshape(3, 4)


def f(x):
    """A chain of element-wise ops, a view, broadcasting, a matmul and reductions."""
    y = x.sin() * x[:, :1] + x.exp().mean(0) - (x**2).tanh()
    return (y @ x.T).sum() + pf.where(x > 0.5, x, -x).logsumexp(1).sum()


# -- lazy tensors: creation, compute, conversions ---------------------------------------------------


def test_as_tensor_and_tensor_are_lazy_and_keep_chunks():
    a = da.from_array(A, chunks=(2, 3))
    for t in (pf.as_tensor(a), pf.tensor(a), pf.tensor(a, dtype=pf.float32)):
        assert t.is_lazy and t.to_dask().chunks[0] == (2, 1)
    assert pf.tensor(a, dtype=pf.float32).dtype == np.float32
    y = pf.as_tensor(a).sin() + 1.0
    assert y.is_lazy and y.to_dask().chunks == a.chunks  # ops keep the user's chunks
    assert not pf.tensor(A).is_lazy
    assert "dask.array<shape=(3, 4)" in repr(y)  # printing computes nothing


def test_nothing_computes_until_asked_and_the_ways_out_compute():
    x = lazy(A)
    with dask.config.set(scheduler=Refuse()):
        y = f(x)
        repr(y)
        assert y.is_lazy
    close(y.compute(), f(pf.tensor(A)))
    assert isinstance(np.asarray(y), np.ndarray) and y.item() == pytest.approx(f(pf.tensor(A)).item(), rel=TOL)
    assert float(y) == y.item() and isinstance(x.numpy(), np.ndarray) and x.tolist() == A.tolist()


def test_mixed_lazy_and_numpy_operands_give_lazy_results():
    x, n = lazy(A), pf.tensor(V)
    for r in (x + n, n + x, n * x, x @ n.T, pf.stack([n, x]), pf.where(n > 0, x, n), 2.0 * x):
        assert r.is_lazy
    close(n - x, pf.tensor(V) - pf.tensor(A))


def test_compute_several_in_one_pass():
    x = lazy(A)
    s = x.sin()
    a, b, c = s.sum(), s.mean(), pf.tensor(1.0)
    sched = Counting()
    ra, rb, rc = pf.compute(a, b, c, scheduler=sched)
    assert sched.calls == 1 and rc is c and not ra.is_lazy
    close(ra, pf.tensor(np.sin(A).sum()))
    close(rb, pf.tensor(np.sin(A).mean()))


def test_to_dask_of_a_numpy_tensor_and_of_one_requiring_grad():
    assert pf.tensor(A).to_dask().sum().compute() == pytest.approx(A.sum())
    with pytest.raises(pf.errors.OpError, match="requires grad"):
        lazy(A).requires_grad_().to_dask()


# -- forward mode, reverse mode, both ------------------------------------------------------------------


def test_dual_level_lazy_tangents_and_compute_of_a_dual_in_one_pass():
    with fwAD.dual_level():
        with dask.config.set(scheduler=Refuse()):
            y = f(fwAD.make_dual(lazy(A), lazy(V)))
        sched = Counting()
        (c,) = pf.compute(y, scheduler=sched)
        assert sched.calls == 1
        p, t = fwAD.unpack_dual(c)
        assert not p.is_lazy and not t.is_lazy
        pn, tn = fwAD.unpack_dual(f(fwAD.make_dual(pf.tensor(A), pf.tensor(V))))
    close(p, pn)
    close(t, tn)


def test_backward_and_grad_on_lazy_leaves_give_lazy_gradients():
    x = lazy(A).requires_grad_()
    xn = pf.tensor(A, requires_grad=True)
    with dask.config.set(scheduler=Refuse()):
        f(x).backward()
        f(x).backward()  # accumulated into .grad (out of place: Dask arrays are immutable)
        (g,) = pf.autograd.grad(f(x), [x])
        assert x.grad.is_lazy and g.is_lazy
    f(xn).backward()
    f(xn).backward()
    close(x.grad, xn.grad)
    close(g, pf.autograd.grad(f(xn), [xn])[0])


@pytest.mark.parametrize("transform", ["jvp", "grad", "vjp", "hvp", "vector"])
def test_functional_transforms_on_lazy_inputs(transform):
    def run(make):
        x, v = make(A), make(V)
        if transform == "jvp":
            return pf.func.jvp(f, (x,), (v,))[1]
        if transform == "grad":
            return pf.func.grad(f)(x)
        if transform == "vjp":
            return pf.func.vjp(f, x)[1](pf.tensor(1.0))[0]
        if transform == "hvp":
            return pf.autograd.functional.hvp(f, x, v)[1]
        with fwAD.dual_level(batch=3):
            d = fwAD.make_dual(x, make(np.stack([V, 2 * V, V * V])))
            return fwAD.unpack_dual(f(d)).tangent

    with dask.config.set(scheduler=Refuse()):
        got = run(lazy)
        assert got.is_lazy
    close(got, run(pf.tensor))


# -- errors: unsupported ops, in-place ops, no silent compute ------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: pf.linalg.det(x), "det"),
        (lambda x: pf.linalg.eigh(x), "eigh"),
        (lambda x: x.sort(), "sort"),
        (lambda x: x.index_add(0, pf.tensor([0, 1]), x[:2]), "index_add"),
        (lambda x: pf.linalg.pinv(x), "pinv"),
        (lambda x: x.median(), "median"),
        (lambda x: x.cummax(0), "cum"),
    ],
)
def test_unsupported_ops_raise_naming_the_op_and_compute_nothing(call, name):
    x = lazy(A[:3, :3] + 3 * np.eye(3))
    sched = Refuse()
    with dask.config.set(scheduler=sched), pytest.raises(LazyUnsupportedError, match=name) as e:
        call(x)
    assert "not supported on Dask-backed tensors" in str(e.value) and "compute()" in str(e.value)
    assert sched.calls == 0 or "would compute" in str(e.value)


def test_dask_fallback_for_unknown_numpy_functions_is_never_reached(recwarn):
    # np.kron is not in dask.array: Dask would warn (FutureWarning) and compute its inputs; under
    # the guard every op runs in, that is the error naming the op, with nothing computed
    from pushforward.core.lazy import guarded

    x = da.ones(4, chunks=2)
    sched = Refuse()
    with dask.config.set(scheduler=sched), pytest.raises(LazyUnsupportedError, match="kron"):
        guarded("kron", np.kron, x, x)
    assert sched.calls == 0
    assert not [w for w in recwarn if "not implemented by Dask" in str(w.message)]


@pytest.mark.parametrize(
    "write, name",
    [
        (lambda x, y: x.add_(y), "add_"),
        (lambda x, y: x.mul_(2.0), "mul_"),
        (lambda x, y: x.__setitem__(0, 1.0), "in-place write"),
        (lambda x, y: x.__setitem__(pf.tensor([0, 2]), 1.0), "index_put_"),
        (lambda x, y: x[0].zero_(), "in-place write"),
    ],
)
def test_in_place_ops_on_lazy_tensors_raise_saying_what_to_write(write, name):
    x, y = lazy(A), lazy(V)
    with pytest.raises(LazyUnsupportedError, match=name) as e:
        write(x, y)
    assert "out of place" in str(e.value)
    close(x.compute(), pf.tensor(A))  # nothing was written


def test_writing_a_lazy_value_into_a_numpy_tensor_raises():
    n = pf.tensor(A)
    with pytest.raises(LazyUnsupportedError):
        n.add_(lazy(V))
    with pytest.raises(LazyUnsupportedError):
        n[0] = lazy(V)[0]
    close(n, pf.tensor(A))


# -- the op database, op by op ---------------------------------------------------------------------------


def _ops():
    from pushforward.testing.opdb import OPS

    return sorted(OPS)


@pytest.mark.parametrize("name", _ops())
def test_op_on_lazy_inputs_matches_numpy(name):
    """Values, jvp and vjp of every sample on lazy inputs equal the NumPy path's to 1e-12, built
    without computing; an op Dask cannot run says so (LazyUnsupportedError)."""
    from pushforward.testing.lazycheck import check_lazy

    res = check_lazy(name)
    assert res["lazy"] is not False, res["error"]


def test_the_core_ops_run_lazily():
    from pushforward.testing.lazycheck import runs_lazily

    for name in "sin exp add mul div sum mean matmul einsum cumsum where cat reshape getitem fft_fft".split():
        assert runs_lazily(name), name


# -- import cost and the distributed engine ---------------------------------------------------------------


def test_import_pushforward_does_not_import_dask():
    code = "import sys, pushforward; print(any(m == 'dask' or m.startswith('dask.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_local_cluster_of_worker_processes_gives_the_same_results():
    if os.environ.get("CI"):
        from dask.distributed import Client, LocalCluster
    else:
        distributed = pytest.importorskip("distributed")
        Client, LocalCluster = distributed.Client, distributed.LocalCluster
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            x, v = lazy(A), lazy(V)
            jv = pf.func.jvp(f, (x,), (v,))[1]
            g = pf.func.grad(f)(lazy(A))
            got_jv, got_g = pf.compute(jv, g)
            assert client.run(lambda: 1)  # the workers are alive processes
    close(got_jv, pf.func.jvp(f, (pf.tensor(A),), (pf.tensor(V),))[1])
    close(got_g, pf.func.grad(f)(pf.tensor(A)))


# -- streaming: a gradient's graph has no task every chunk waits on ---------------------------------


def smoothed(x):
    """A stencil by shifted slices and a difference penalty (examples/dask_sensitivity.py's)."""
    s = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    return pf.log1p(s * s).sum() + 0.1 * ((x[1:] - x[:-1]) ** 2).sum()


def _ancestors(graph: dict, key, seen: dict) -> frozenset:
    """The keys `key`'s task depends on, directly or not (memoised in `seen`)."""
    from dask.core import get_dependencies

    if key not in seen:
        deps = get_dependencies(graph, key)
        seen[key] = frozenset(deps).union(*(_ancestors(graph, d, seen) for d in deps))
    return seen[key]


def _widest_fan_in(arr) -> int:
    """How many of arr's chunks the most shared task of its (optimized) graph feeds."""
    (opt,) = dask.optimize(arr)
    graph, seen, count = dict(opt.__dask_graph__()), {}, {}
    for key in dask.core.flatten(opt.__dask_keys__()):
        for k in _ancestors(graph, key, seen):
            count[k] = count.get(k, 0) + 1
    return max(count.values())


def test_gradient_of_shifted_slices_streams_no_task_feeds_every_chunk():
    # the seed of a gradient times constants, expanded by a sum's backward, was one task that every
    # chunk's gradient depended on: Dask then ran the data-free products for all chunks first
    fan, tasks = {}, {}
    for nchunks in (8, 16):
        x = pf.as_tensor(da.sin(da.arange(100 * nchunks, chunks=100, dtype=np.float64) * 0.1))
        g = pf.func.grad(smoothed)(x).to_dask()
        fan[nchunks] = _widest_fan_in(g)  # (a chunk reads its neighbours' edges: a few chunks)
        tasks[nchunks] = len(dask.optimize(g)[0].__dask_graph__())
    assert fan[16] == fan[8] < g.numblocks[0] // 2, fan
    assert tasks[16] <= 2.1 * tasks[8], tasks  # tasks grow with the chunks, not faster
    xn = pf.tensor(x.numpy())
    close(pf.func.grad(smoothed)(x), pf.func.grad(smoothed)(xn))


def test_a_scalar_over_the_data_is_broadcast_as_it_is():
    # x - x.mean(): the mean reads every chunk and is not recomputed per chunk (two passes)
    from pushforward.kernels.lazyconst import tiny_graph_of

    x = da.arange(1000, chunks=100, dtype=np.float64)
    assert tiny_graph_of(x.mean()) is None
    assert tiny_graph_of(da.ones((), dtype=np.float64) * 0.1) is not None
    xt = pf.as_tensor(x)
    g = pf.func.grad(lambda t: ((t - t.mean()) ** 2).sum() * 0.5)(xt)
    close(g, pf.func.grad(lambda t: ((t - t.mean()) ** 2).sum() * 0.5)(pf.tensor(x.compute())))


def test_compute_always_returns_a_tuple_as_dask_compute():
    # dask.compute(x) returns (x,): a Dask user writes (y,) = pf.compute(t)
    t = pf.tensor(A).to_dask(chunks=2)
    res = pf.compute(pf.as_tensor(t) if not isinstance(t, pf.Tensor) else t)
    assert isinstance(res, tuple) and len(res) == 1
    (y,) = pf.compute(lazy(A) * 2)
    assert not y.is_lazy
    close(y, pf.tensor(A) * 2)
    assert pf.compute() == ()
    assert isinstance(pf.compute(pf.tensor([1.0])), tuple)
    assert (lazy(A) * 2).compute().shape == tuple(A.shape)
