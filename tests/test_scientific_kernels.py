"""Scientific NumPy kernels written as NumPy users write them (allocate, then fill; in-place slice
updates; row loops; np.newaxis; histograms with weights), differentiated as written.

Each kernel is a function of `np` (the module it calls) and its float arrays. It runs
- in the drop-in (`np` = pushforward.numpy) and via NumPy's dispatch (`np` = numpy, the kernels
  that allocate with `np.zeros_like(x)` or `like=x`, so every buffer is a tensor);
and is checked: its primal equals NumPy's; its jvp equals central finite differences; its
gradient satisfies the adjoint identity <u, J v> == <J^T u, v>; and vmap and compile of it
agree with the loop over the batch and with the eager run.

The row-loop factorisations overwrite values the tape saved: their gradients rely on the tape
keeping them (docs/design.md, "Overwritten saved values").
"""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
import pushforward.numpy as pnp
from pushforward.errors import OpError

from helpers import lu_rows

RNG = onp.random.default_rng(7)


# -- the kernels ------------------------------------------------------------------------------


def jacobi_stencil(np, a):
    """Two sweeps of a 2-D five-point stencil, updated in place through slices."""
    b = np.zeros_like(a)
    for _ in range(2):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a


def heat_1d(np, u):
    """Explicit heat equation, each step into a fresh buffer allocated with np.empty."""
    for _ in range(3):
        new = np.empty(u.shape)
        new[0] = u[0]
        new[-1] = u[-1]
        new[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = new
    return u


def cholesky_rows(np, a):
    """Cholesky by rows into a fresh buffer (the input is not overwritten)."""
    n = a.shape[0]
    L = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            s = a[i, j] - np.dot(L[i, :j], L[j, :j])
            L[i, j] = np.sqrt(s) if i == j else s / L[j, j]
    return L


def recurrence_like(np, x):
    """The recurrence with its buffer allocated like the input (NEP 35): a tensor under plain NumPy too."""
    y = np.zeros(x.shape[0], like=x)
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = 0.5 * y[t - 1] + np.sin(x[t])
    return y


def recurrence(np, x):
    """A linear recurrence y[t] = 0.5 y[t-1] + x[t] element by element into a buffer."""
    y = np.empty(x.shape[0])
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = 0.5 * y[t - 1] + x[t] * x[t - 1]
    return y


def fill_reduce(np, x):
    """Allocate-and-fill row statistics, then a normalised covariance with np.eye on the diagonal."""
    m = x.shape[1]
    mean = np.zeros(m)
    for j in range(m):
        mean[j] = np.sum(x[:, j]) / x.shape[0]
    c = x - mean[np.newaxis, :]
    cov = np.eye(m)
    for i in range(m):
        for j in range(i + 1, m):
            cov[i, j] = cov[j, i] = np.sum(c[:, i] * c[:, j])
    return cov


def conv_pool(np, img, w):
    """A 'valid' 2-D convolution written with loops and np.newaxis, then 2x2 max pooling."""
    k = w.shape[0]
    h, wd = img.shape[1] - k + 1, img.shape[2] - k + 1
    out = np.empty((img.shape[0], h, wd, w.shape[-1]))
    for i in range(h):
        for j in range(wd):
            out[:, i, j, :] = np.sum(img[:, i : i + k, j : j + k, :, np.newaxis] * w[np.newaxis], axis=(1, 2, 3))
    pooled = np.empty((out.shape[0], h // 2, wd // 2, out.shape[3]))
    for i in range(h // 2):
        for j in range(wd // 2):
            pooled[:, i, j, :] = np.max(out[:, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2, :], axis=(1, 2))
    return pooled


def weighted_histogram(np, r, data):
    """Azimuthal averaging: a weighted histogram divided by the counts."""
    edges = np.linspace(0.0, 1.0, 5)
    counts = np.histogram(r, edges)[0]
    sums = np.histogram(r, edges, weights=data)[0]
    return sums / np.maximum(counts, 1)


def nbody_step(np, pos, vel):
    """One leapfrog step of softened gravity, accelerations filled per body."""
    n = pos.shape[0]
    acc = np.zeros((n, 3))
    for i in range(n):
        d = pos - pos[i]
        inv = (np.sum(d**2, axis=1) + 0.1) ** -1.5
        acc[i] = np.sum(d * inv[:, np.newaxis], axis=0)
    vel = vel + 0.05 * acc
    pos = pos + 0.05 * vel
    return np.concatenate([pos.ravel(), vel.ravel()])


def nbody_energy(np, pos):
    """Pairwise potential energy: a distance matrix whose zero diagonal a masked write and triu
    leave out. sqrt(0) meets a zero cotangent there (docs/design.md, "Zero cotangents at singular
    points"): the gradient is finite, as finite differences say (torch's and JAX's are nan)."""
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    inv_r = np.sqrt((x.T - x) ** 2 + (y.T - y) ** 2 + (z.T - z) ** 2)
    inv_r[inv_r > 0] = 1.0 / inv_r[inv_r > 0]
    return np.sum(np.triu(-inv_r, 1))


def cfd_step(np, u, v):
    """One step of 2-D Burgers' equations (upwind differences), boundaries held at zero."""
    un, vn = u.copy(), v.copy()
    u[1:-1, 1:-1] = (
        un[1:-1, 1:-1]
        - 0.1 * un[1:-1, 1:-1] * (un[1:-1, 1:-1] - un[1:-1, :-2])
        - 0.1 * vn[1:-1, 1:-1] * (un[1:-1, 1:-1] - un[:-2, 1:-1])
    )
    v[1:-1, 1:-1] = (
        vn[1:-1, 1:-1]
        - 0.1 * un[1:-1, 1:-1] * (vn[1:-1, 1:-1] - vn[1:-1, :-2])
        - 0.1 * vn[1:-1, 1:-1] * (vn[1:-1, 1:-1] - vn[:-2, 1:-1])
    )
    u[0, :] = u[-1, :] = u[:, 0] = u[:, -1] = 0.0
    v[0, :] = v[-1, :] = v[:, 0] = v[:, -1] = 0.0
    return np.stack([u, v])


def _spd(n):
    m = RNG.random((n, n))
    return m @ m.T + n * onp.eye(n)


# name -> (kernel, inputs, whether reverse mode needs in-place overwrites of saved values)
KERNELS = {
    "jacobi_stencil": (jacobi_stencil, lambda: [RNG.random((5, 5))]),
    "heat_1d": (heat_1d, lambda: [RNG.random(7)]),
    "lu_rows": (lu_rows, lambda: [_spd(4)]),
    "cholesky_rows": (cholesky_rows, lambda: [_spd(4)]),
    "recurrence": (recurrence, lambda: [RNG.random(6)]),
    "recurrence_like": (recurrence_like, lambda: [RNG.random(6)]),
    "fill_reduce": (fill_reduce, lambda: [RNG.random((5, 3))]),
    "conv_pool": (conv_pool, lambda: [RNG.random((2, 5, 5, 2)), RNG.random((2, 2, 2, 3))]),
    "weighted_histogram": (weighted_histogram, lambda: [RNG.random(12), RNG.random(12)]),
    "nbody_step": (nbody_step, lambda: [RNG.random((4, 3)), RNG.random((4, 3))]),
    "cfd_step": (cfd_step, lambda: [RNG.random((5, 5)), RNG.random((5, 5))]),
    "nbody_energy": (nbody_energy, lambda: [RNG.random((4, 3))]),
}

# the weighted histogram: its bins are piecewise constant in r; differentiate in the weights only
_DIFF_ARGS = {"weighted_histogram": (1,)}


def _diff_args(name, n):
    return _DIFF_ARGS.get(name, tuple(range(n)))


def _run_numpy(kernel, arrays):
    return onp.asarray(kernel(onp, *[a.copy() for a in arrays]), dtype=float)


def _fd(kernel, arrays, v, which, h=1e-6):
    plus = [a + h * v[i] if i in which else a for i, a in enumerate(arrays)]
    minus = [a - h * v[i] if i in which else a for i, a in enumerate(arrays)]
    return (_run_numpy(kernel, plus) - _run_numpy(kernel, minus)) / (2 * h)


def _inputs(name):
    kernel, make = KERNELS[name]
    arrays = make()
    which = _diff_args(name, len(arrays))
    v = {i: RNG.standard_normal(arrays[i].shape) for i in which}
    return kernel, arrays, which, v


MODES = ["dropin", "dispatch"]


def _np(mode):
    return pnp if mode == "dropin" else onp


def _dispatch_ok(name, mode):
    """Via plain NumPy a kernel that allocates with np.zeros/np.empty/np.eye (a NumPy buffer) gets
    the clear error instead (tested below); the others run on tensors as written."""
    return mode == "dropin" or not _ALLOCATES[name]


_ALLOCATES = {
    "jacobi_stencil": False,
    "heat_1d": True,
    "lu_rows": False,
    "cholesky_rows": True,
    "recurrence": True,
    "recurrence_like": False,
    "fill_reduce": True,
    "conv_pool": True,
    "weighted_histogram": False,
    "nbody_step": True,
    "cfd_step": False,
    "nbody_energy": False,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_primal(name, mode):
    kernel, arrays, _, _ = _inputs(name)
    if not _dispatch_ok(name, mode):
        pytest.skip("allocates NumPy buffers: see test_dispatch_buffer_error")
    ours = kernel(_np(mode), *[pf.tensor(a.copy()) for a in arrays])
    assert isinstance(ours, pf.Tensor)
    onp.testing.assert_allclose(ours.numpy(), _run_numpy(kernel, arrays), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_jvp_finite_differences(name, mode):
    kernel, arrays, which, v = _inputs(name)
    with fwAD.dual_level():
        args = [
            fwAD.make_dual(pf.tensor(a.copy()), pf.tensor(v[i])) if i in which else pf.tensor(a.copy())
            for i, a in enumerate(arrays)
        ]
        if not _dispatch_ok(name, mode):
            with pytest.raises((OpError, ValueError), match="setting an array element|like=x"):
                kernel(_np(mode), *args)
            return
        t = fwAD.unpack_dual(kernel(_np(mode), *args)).tangent.numpy()
    onp.testing.assert_allclose(t, _fd(kernel, arrays, v, which), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_gradient_adjoint_identity(name, mode):
    kernel, arrays, which, v = _inputs(name)
    if not _dispatch_ok(name, mode):
        pytest.skip("allocates NumPy buffers: see test_dispatch_buffer_error")
    leaves = {i: pf.tensor(arrays[i].copy(), requires_grad=True) for i in which}
    args = [leaves[i].clone() if i in which else pf.tensor(a.copy()) for i, a in enumerate(arrays)]
    out = kernel(_np(mode), *args)
    u = RNG.standard_normal(out.shape)
    grads = pf.autograd.grad((out * pf.tensor(u)).sum(), [leaves[i] for i in which])
    lhs = float(onp.sum(u * _fd(kernel, arrays, v, which)))
    rhs = sum(float(onp.sum(g.numpy() * v[i])) for g, i in zip(grads, which))
    assert abs(lhs - rhs) <= 1e-6 * max(1.0, abs(lhs))


@pytest.mark.parametrize("name", list(KERNELS))
def test_vmap_matches_loop(name):
    kernel, make = KERNELS[name]
    batch = [make() for _ in range(3)]
    which = _diff_args(name, len(batch[0]))
    stacked = [onp.stack([b[i] for b in batch]) for i in range(len(batch[0]))]
    in_dims = tuple(0 if i in which else None for i in range(len(stacked)))
    args = [pf.tensor(s) if i in which else pf.tensor(batch[0][i]) for i, s in enumerate(stacked)]
    try:
        got = pf.func.vmap(lambda *a: kernel(pnp, *[x.clone() for x in a]), in_dims=in_dims)(*args)
    except OpError as e:  # a batched write into a buffer that is not batched: the documented refusal
        pytest.skip(f"vmap refuses: {str(e).splitlines()[0][:120]}")
    want = onp.stack([_run_numpy(kernel, [b[i] if i in which else batch[0][i] for i in range(len(b))]) for b in batch])
    onp.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(KERNELS))
def test_compile_matches_eager(name):
    kernel, arrays, _, _ = _inputs(name)
    f = pf.compile(lambda *a: kernel(pnp, *[x.clone() for x in a]))
    args = [pf.tensor(a) for a in arrays]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = f(*args)
    onp.testing.assert_allclose(got.numpy(), _run_numpy(kernel, arrays), rtol=1e-10, atol=1e-12)
    eager = [str(w.message) for w in caught if "running eagerly" in str(w.message)]
    if eager:  # compile's own refusal (data-dependent control flow, ...): the result is still right
        pytest.skip(f"pf.compile runs it eagerly: {eager[0][:160]}")


@pytest.mark.parametrize("name", [n for n in KERNELS if _ALLOCATES[n]])
def test_dispatch_buffer_error(name):
    """Plain NumPy: a NumPy buffer receiving a value with a derivative raises the one error naming
    the fix (the element form reaches us through float(), which NumPy wraps in its ValueError)."""
    kernel, arrays, which, v = _inputs(name)
    leaves = [pf.tensor(a.copy(), requires_grad=True) for a in arrays]
    with pytest.raises((OpError, ValueError)) as info:
        kernel(onp, *[x.clone() for x in leaves])
    err = info.value if isinstance(info.value, OpError) else info.value.__cause__
    assert isinstance(err, OpError) and "like=x" in str(err) and "pushforward.numpy" in str(err)
