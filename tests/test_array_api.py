"""pushforward.array_api: the Array API standard's namespace, checked against array-api-strict
(the standard's reference implementation), and differentiable: tangents, gradients, vmap, compile
and lazy tensors go through it."""

import inspect
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import pushforward as pf
import pushforward.array_api as xp

strict = pytest.importorskip("array_api_strict")

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
SQ = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = SQ @ SQ.T
I = np.array([[3, -7, 0, 5], [1, 2, 2, -1]])
DUP = np.array([2.0, 1.0, 2.0, np.nan, 1.0, np.nan, 5.0])


def _is_elementwise(name, arity):
    """Is xp.name an element-wise function of `arity` operands (its signature: x, or x1 and x2, positional)?"""
    f = getattr(xp, name)
    if not inspect.isfunction(f) or f.__module__ != "pushforward.array_api":
        return False
    params = list(inspect.signature(f).parameters)
    return params == (["x"] if arity == 1 else ["x1", "x2"])


# (name, function of a namespace, arrays): each runs in both namespaces, results compared
CASES = [
    ("max_keepdims", lambda n, a: n.max(a, axis=1, keepdims=True), [A]),
    ("min_tuple_axis", lambda n, a: n.min(a, axis=(0, 1)), [A]),
    ("sum_int8", lambda n, a: n.sum(n.astype(a, n.int8), axis=0), [I]),
    ("sum_empty_axes", lambda n, a: n.sum(a, axis=()), [A]),
    ("prod_dtype", lambda n, a: n.prod(a, axis=1, dtype=n.float32), [A]),
    ("mean", lambda n, a: n.mean(a, axis=0), [A]),
    ("std_correction", lambda n, a: n.std(a, axis=1, correction=1), [A]),
    ("var", lambda n, a: n.var(a, keepdims=True), [A]),
    ("cumulative_sum_initial", lambda n, a: n.cumulative_sum(a, axis=1, include_initial=True), [A]),
    ("cumulative_prod", lambda n, a: n.cumulative_prod(a, axis=0), [A]),
    ("sort_desc", lambda n, a: n.sort(a, axis=0, descending=True), [A]),
    ("argsort_stable_desc", lambda n, a: n.argsort(a, descending=True), [np.array([1.0, 2.0, 1.0, 2.0])]),
    ("argmax_keepdims", lambda n, a: n.argmax(a, axis=1, keepdims=True), [A]),
    ("floor_divide_int", lambda n, a: n.floor_divide(a, 2), [I]),
    ("remainder_int", lambda n, a: n.remainder(a, -3), [I]),
    ("greater_scalar", lambda n, a: n.greater(a, 0.5), [A]),
    ("logical_xor", lambda n, a, b: n.logical_xor(a > 0, b > 0), [A, B]),
    ("isinf", lambda n, a: n.isinf(a), [np.array([1.0, np.inf, -np.inf, np.nan])]),
    ("signbit", lambda n, a: n.signbit(a), [np.array([-0.0, 0.0, -2.0, 3.0])]),
    ("sign_complex", lambda n, a: n.sign(a), [np.array([3 + 4j, 0j, -2j])]),
    ("nextafter", lambda n, a, b: n.nextafter(a, b), [np.array([0.0, 1.0, 1.0]), np.array([-0.0, 2.0, 0.0])]),
    ("shifts", lambda n, a: n.bitwise_left_shift(a, 2) + n.bitwise_right_shift(a, 1), [np.abs(I)]),
    ("clip_arrays", lambda n, a, b: n.clip(a, b, b + 1.0), [A, B]),
    ("where_scalars", lambda n, a: n.where(a > 0, a, 0.0), [A]),
    ("count_nonzero", lambda n, a: n.count_nonzero(a, axis=1), [I]),
    ("nonzero", lambda n, a: n.nonzero(a), [I]),
    (
        "searchsorted",
        lambda n, a, b: n.searchsorted(a, b, side="right"),
        [np.array([1.0, 2.0, 2.0, 3.0]), np.array([2.0, 0.5])],
    ),
    ("unique_all", lambda n, a: n.unique_all(a), [DUP]),
    ("unique_inverse_2d", lambda n, a: n.unique_inverse(a), [I]),
    ("unique_counts", lambda n, a: n.unique_counts(a), [I]),
    ("unique_values", lambda n, a: n.unique_values(a), [DUP]),
    ("take", lambda n, a: n.take(a, n.asarray([2, 0, 2]), axis=1), [A]),
    ("take_along_axis", lambda n, a: n.take_along_axis(a, n.argsort(a, axis=1), axis=1), [A]),
    ("take_negative", lambda n, a: n.take(a, n.asarray([-1, 0]), axis=0), [A]),
    ("cumulative_sum_uint8", lambda n, a: n.cumulative_sum(n.astype(a, n.uint8), axis=1, dtype=n.uint8), [np.abs(I)]),
    ("expand_permute", lambda n, a: n.permute_dims(n.expand_dims(a, axis=1), (2, 0, 1)), [A]),
    ("squeeze_unstack", lambda n, a: n.unstack(n.squeeze(n.reshape(a, (1, 3, 4)), axis=0), axis=1), [A]),
    ("repeat_flat", lambda n, a: n.repeat(a, 2), [A]),
    ("repeat_axis", lambda n, a: n.repeat(a, n.asarray([1, 0, 2]), axis=0), [A]),
    ("roll_flat", lambda n, a: n.roll(a, 5), [A]),
    ("concat_none", lambda n, a, b: n.concat([a, b], axis=None), [A, B]),
    ("moveaxis_flip", lambda n, a: n.flip(n.moveaxis(a, 0, 1), axis=0), [A]),
    ("tile_stack", lambda n, a, b: n.tile(n.stack([a, b], axis=-1), (1, 2, 1)), [A, B]),
    ("broadcast", lambda n, a: n.broadcast_arrays(a[:, :1], a[:1, :]), [A]),
    ("diff_prepend", lambda n, a: n.diff(a, axis=1, prepend=a[:, :1]), [A]),
    ("matmul_mT", lambda n, a, b: n.matmul(a, b.mT), [A, B]),
    ("tensordot", lambda n, a, b: n.tensordot(a, b, axes=([1], [1])), [A, B]),
    ("vecdot_complex", lambda n, a, b: n.vecdot(a * 1j + b, b), [A, B]),
    ("tril_k", lambda n, a: n.tril(a, k=-1), [A]),
    ("linalg_cholesky_upper", lambda n, a: n.linalg.cholesky(a, upper=True), [SPD]),
    ("linalg_eigvalsh", lambda n, a: n.linalg.eigvalsh(a), [SPD]),
    ("linalg_slogdet", lambda n, a: n.linalg.slogdet(a), [SQ]),
    ("linalg_solve", lambda n, a, b: n.linalg.solve(a, b[:, 0]), [SQ, A]),
    ("linalg_svdvals", lambda n, a: n.linalg.svdvals(a), [A]),
    ("linalg_pinv", lambda n, a: n.linalg.pinv(a), [A]),
    ("linalg_matrix_rank", lambda n, a: n.linalg.matrix_rank(a @ a.mT), [np.ones((3, 2))]),
    ("linalg_vector_norm", lambda n, a: n.linalg.vector_norm(a, axis=(0, 1), ord=3), [A]),
    ("linalg_matrix_norm", lambda n, a: n.linalg.matrix_norm(a, ord="nuc"), [A]),
    ("linalg_trace_offset", lambda n, a: n.linalg.trace(a, offset=1), [A]),
    ("linalg_outer_cross", lambda n, a, b: n.linalg.cross(a[:, :3], b[:, :3]), [A, B]),
    ("fft_rfftn", lambda n, a: n.fft.rfftn(a, axes=(0, 1), norm="ortho"), [A]),
    ("fft_irfft", lambda n, a: n.fft.irfft(n.fft.rfft(a), n=4), [A]),
    ("fft_hfft", lambda n, a: n.fft.hfft(n.astype(a, n.complex128)), [A]),
    ("fft_shift_freq", lambda n, a: n.fft.fftshift(a, axes=1) + n.fft.fftfreq(4, d=0.5), [A]),
    ("eye_k", lambda n: n.eye(3, 4, k=1, dtype=n.int32), []),
    ("arange_float", lambda n: n.arange(0.5, 3.0, 0.5), []),
    ("linspace_no_endpoint", lambda n: n.linspace(0.0, 1.0, 5, endpoint=False), []),
    ("full_bool", lambda n: n.full((2,), True), []),
    ("meshgrid_xy", lambda n: n.meshgrid(n.arange(2), n.arange(3)), []),
    ("all_any", lambda n, a: n.all(a > -1, axis=0) ^ n.any(a > 1, axis=(0, 1), keepdims=True), [A]),
    ("argmin_none", lambda n, a: n.argmin(a), [A]),
    ("broadcast_to_mT", lambda n, a: n.matrix_transpose(n.broadcast_to(a[:1, :], (2, 4))), [A]),
    ("creation", lambda n: n.zeros_like(n.empty((2, 3), dtype=n.int8)) + n.ones((2, 3), dtype=n.int8), []),
    (
        "like",
        lambda n, a: [n.empty_like(a) * 0, n.full_like(a, 2.5), n.ones_like(a), n.zeros((2,)), n.triu(a, k=1)],
        [A],
    ),
    ("expm1_tanh", lambda n, a: n.expm1(a) + n.tanh(a), [A]),
    (
        "linalg_factorisations",
        lambda n, a: [n.linalg.det(a), n.linalg.inv(a), n.linalg.qr(a).R, n.linalg.svd(a).S],
        [SQ],
    ),
    ("linalg_eigh", lambda n, a: n.abs(n.linalg.eigh(a).eigenvectors), [SPD]),
    ("linalg_views", lambda n, a: n.linalg.diagonal(n.linalg.matrix_transpose(a), offset=-1), [A]),
    ("linalg_power_outer", lambda n, a, b: [n.linalg.matrix_power(a, 3), n.linalg.outer(a[0, :], b[1, :])], [SQ, A]),
    (
        "fft_complex",
        lambda n, a: [n.fft.ifft(n.fft.fftn(a, axes=(0, 1))), n.fft.ifftn(n.fft.fftn(a), s=(2, 3))],
        [A + 1j * B],
    ),
    ("fft_real", lambda n, a: [n.fft.irfftn(n.fft.rfftn(a)), n.fft.ihfft(a), n.fft.ifftshift(a, axes=0)], [A]),
    (
        "linalg_products",
        lambda n, a, b: [n.linalg.matmul(a, b.mT), n.linalg.tensordot(a, b), n.linalg.vecdot(a, b)],
        [A, B],
    ),
    ("fft_rfftfreq", lambda n: n.fft.rfftfreq(5, d=0.1, dtype=n.float32), []),
]
# the functions the cases above do not sweep, and where they are checked instead
NOT_SWEPT = {"can_cast", "finfo", "iinfo", "isdtype", "result_type"}  # test_dtype_functions, test_result_type...
NOT_SWEPT |= {"from_dlpack", "__array_namespace_info__"}  # test_dlpack_with_numpy, test_namespace_of_tensors


def _np(v):
    if isinstance(v, (tuple, list)):
        return [_np(u) for u in v]
    return np.asarray(v.detach().numpy() if isinstance(v, pf.Tensor) else np.asarray(v))


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_array_api_strict(name, fn, arrays):
    ours = fn(xp, *(xp.asarray(a) for a in arrays))
    ref = fn(strict, *(strict.asarray(a) for a in arrays))
    for o, r in zip(_flat(ours), _flat(ref), strict=True):
        o, r = _np(o), np.asarray(r)
        assert o.dtype == r.dtype, f"{name}: dtype {o.dtype} != {r.dtype}"
        assert o.shape == r.shape, f"{name}: shape {o.shape} != {r.shape}"
        np.testing.assert_allclose(o, r, rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=name)


def _flat(v):
    return list(v) if isinstance(v, (tuple, list)) else [v]


def _functions(module):
    return {n for n in module.__all__ if inspect.isroutine(getattr(module, n)) or callable(getattr(module, n))} - {
        n for n in module.__all__ if isinstance(getattr(module, n), (type, np.dtype, types.ModuleType))
    }


def test_every_function_of_the_namespace_is_swept():
    """Each function of xp, xp.linalg and xp.fft runs against array-api-strict above (values and dtypes),
    in the element-wise sweep below, or is listed in NOT_SWEPT with the test that checks it."""
    used = set().union(*(set(c[1].__code__.co_names) for c in CASES)) | set(UNARY) | set(BINARY)
    linalg_used = set().union(*(set(c[1].__code__.co_names) for c in CASES if "linalg" in c[1].__code__.co_names))
    fft_used = set().union(*(set(c[1].__code__.co_names) for c in CASES if "fft" in c[1].__code__.co_names))
    assert not _functions(xp) - used - NOT_SWEPT - {"fft", "linalg", "special"}
    assert not _functions(xp.linalg) - linalg_used
    assert not _functions(xp.fft) - fft_used


# the element-wise functions, over every dtype of the standard, special values included
UNARY = [n for n in xp.__all__ if _is_elementwise(n, 1)]
BINARY = [n for n in xp.__all__ if _is_elementwise(n, 2)]
REAL = [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan]
VALUES = {
    "bool": [True, False, True, True, False, False, True, False, True, False],
    "int8": [-3, -1, 0, 1, 2, 5, 7, -8, 3, 0],
    "int64": [-3, -1, 0, 1, 2, 5, 7, -8, 3, 0],
    "uint8": [0, 1, 2, 5, 200, 3, 7, 255, 4, 9],
    "float32": REAL,
    "float64": REAL,
    # finite, and a NaN (the standard's complex special cases at infinities: the conformance suite's)
    "complex128": [complex(r, i) for r, i in zip(REAL[:7] + [2.0, -0.5, np.nan], REAL[6::-1] + [1.0, 0.0, 1.0])],
}
SCALAR = {"b": True, "i": 3, "u": 3, "f": -1.5, "c": 1.5 - 2j}
# where pushforward follows the standard's special cases and NumPy (array-api-strict's kernels) does not:
# test_array_object_operators and test_complex_expm1_at_signed_zeros check these
STANDARDS_SPECIAL_CASES = {("floor_divide", "nonfinite"), ("expm1", "c"), ("tanh", "c")}


def _compare(name, ours_fn, ref_fn):
    try:
        ref = ref_fn()
    except (TypeError, ValueError):  # not defined by the standard (array-api-strict refuses it)
        return
    with np.errstate(all="ignore"):
        ours = ours_fn()
    o, r = _np(ours), np.asarray(ref)
    assert o.dtype == r.dtype, f"{name}: dtype {o.dtype} != {r.dtype}"
    tol = 1e-5 if o.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(o, r, rtol=tol, atol=tol, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("dtype", list(VALUES))
@pytest.mark.parametrize("name", UNARY)
def test_unary_elementwise_matches_array_api_strict(name, dtype):
    if (name, np.dtype(dtype).kind) in STANDARDS_SPECIAL_CASES:
        return
    a = np.array(VALUES[dtype], dtype=dtype)
    _compare(name, lambda: getattr(xp, name)(xp.asarray(a)), lambda: getattr(strict, name)(strict.asarray(a)))


@pytest.mark.parametrize("dtype", list(VALUES))
@pytest.mark.parametrize("name", BINARY)
def test_binary_elementwise_matches_array_api_strict(name, dtype):
    a = np.array(VALUES[dtype], dtype=dtype)
    b = a[::-1].copy()
    if (name, "nonfinite") in STANDARDS_SPECIAL_CASES and a.dtype.kind in "fc":
        a, b = np.where(np.isfinite(a), a, 1), np.where(np.isfinite(b), b, 2)
    s = SCALAR[a.dtype.kind]
    f, g = getattr(xp, name), getattr(strict, name)
    _compare(name, lambda: f(xp.asarray(a), xp.asarray(b)), lambda: g(strict.asarray(a), strict.asarray(b)))
    _compare(name + "(x, scalar)", lambda: f(xp.asarray(a), s), lambda: g(strict.asarray(a), s))
    _compare(name + "(scalar, x)", lambda: f(s, xp.asarray(b)), lambda: g(s, strict.asarray(b)))


REDUCTIONS = ["sum", "prod", "mean", "std", "var", "max", "min", "all", "any", "argmax", "argmin", "count_nonzero"]


@pytest.mark.parametrize("dtype", list(VALUES))
@pytest.mark.parametrize("name", REDUCTIONS + ["cumulative_sum", "cumulative_prod"])
def test_reductions_match_array_api_strict_over_dtypes_and_axes(name, dtype):
    a = np.array(VALUES[dtype], dtype=dtype).reshape(2, 5)
    if name in ("cumulative_sum", "cumulative_prod"):
        options = [{"axis": ax, "include_initial": i} for ax in (0, 1, -1) for i in (False, True)]
    else:
        axes = [None, 0, 1, (0, 1)] + ([()] if name not in ("argmax", "argmin") else [])
        options = [{"axis": ax, "keepdims": k} for ax in axes for k in (False, True)]
    for kw in options:
        f, g = getattr(xp, name), getattr(strict, name)
        _compare(f"{name}({kw})", lambda: f(xp.asarray(a), **kw), lambda: g(strict.asarray(a), **kw))


def test_namespace_of_tensors():
    x = pf.tensor([1.0, 2.0])
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ValueError, match="unsupported Array API version"):
        x.__array_namespace__(api_version="2019.01")
    assert xp.__array_api_version__ == "2024.12"
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["indexing"] == xp.int64
    assert set(info.dtypes(kind="numeric")) == set(strict.__array_namespace_info__().dtypes(kind="numeric"))
    assert info.capabilities()["data-dependent shapes"]


def test_array_api_compat_recognises_tensors():
    compat = pytest.importorskip("array_api_compat")
    x = xp.asarray([1.0])
    assert compat.is_array_api_obj(x)
    assert compat.array_namespace(x) is xp
    assert compat.array_namespace(x, xp.asarray(2)) is xp


# array-api-strict's own helpers, and the names the standard's next version (2025.12) adds
NOT_2024 = {"isin", "broadcast_shapes", "eig", "eigvals", "EigResult", "Device", "ArrayAPIStrictFlags"}
NOT_2024 |= {"get_array_api_strict_flags", "set_array_api_strict_flags", "reset_array_api_strict_flags"}


def test_names_of_the_standard():
    # every name array-api-strict (the reference) exports for 2024.12 is here too, extensions included
    assert not {n for n in strict.__all__ if not hasattr(xp, n)} - NOT_2024 - {"__version__"}
    assert not set(strict.linalg.__all__) - set(dir(xp.linalg))
    assert not set(strict.fft.__all__) - set(dir(xp.fft))


def test_copy_semantics():
    a = np.arange(3.0)
    t = xp.asarray(a, copy=False)
    a[0] = 9.0
    assert float(t[0]) == 9.0  # shares the buffer
    c = xp.asarray(a, copy=True)
    a[1] = 7.0
    assert float(c[1]) == 1.0
    assert xp.asarray(t) is t and xp.asarray(t, copy=True) is not t
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(t, dtype=xp.float32, copy=False)
    assert xp.astype(t, xp.float64, copy=False) is t
    # a list holding tensors is stacked by ops: derivatives flow, never dropped
    _, tangent = pf.func.jvp(lambda a: xp.asarray([a, 2.0 * a, 1.0]), (pf.tensor(1.0),), (pf.tensor(1.0),))
    assert tangent.tolist() == [1.0, 2.0, 0.0]
    r = xp.reshape(t, (3, 1), copy=True)
    r[0, 0] = -1.0
    assert float(t[0]) == 9.0


def test_dlpack_with_numpy():
    t = pf.tensor([1.0, 2.0, 3.0])
    a = np.from_dlpack(t)
    a[0] = 5.0  # shares memory, as a DLPack export does
    assert float(t[0]) == 5.0
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="drop its derivative"):
        np.from_dlpack(pf.tensor([1.0], requires_grad=True))
    back = xp.from_dlpack(np.arange(4.0))
    assert isinstance(back, pf.Tensor) and back.shape == (4,)
    assert t.to_device("cpu") is t and t.device == xp.__array_namespace_info__().default_device()
    with pytest.raises(pf.OpError, match="not available"):
        t.to_device("cuda")


def test_array_object_operators():
    i = pf.tensor([5, -6], dtype=pf.int8)
    assert (i << 1).tolist() == [10, -12] and (i >> 1).tolist() == [2, -3] and (1 << pf.tensor([3])).tolist() == [8]
    f = pf.tensor([1.5], dtype=pf.float32)
    assert (f + 1.0).dtype == pf.float32 and (2 * f).dtype == pf.float32 and (f > 1).dtype == pf.bool
    j = pf.tensor([7, 8])
    j //= 2
    j %= 3
    j <<= 1
    assert j.tolist() == [0, 2]
    inf = float("inf")
    # the standard's special cases (NumPy, and array-api-strict with it, give nan and -1.0)
    q = xp.floor_divide(xp.asarray([inf, 1.0, -1.0]), xp.asarray([2.0, -inf, inf]))
    assert q.tolist() == [inf, -0.0, -0.0] and xp.all(xp.signbit(q[1:]))
    assert (pf.tensor([inf, 1.0]) // pf.tensor([2.0, -inf])).tolist() == [inf, -0.0]
    assert xp.asarray([[1.0, 2.0]]).mT.shape == (2, 1)


def test_complex_expm1_at_signed_zeros():
    # the standard: expm1(±0 + 0j) is +0 + 0j (NumPy's kernel, and array-api-strict with it, give -0 + 0j
    # for -0 + 0j); conjugate symmetry keeps -0j; the tangent at 0 is exp(0) = 1
    z = xp.asarray([complex(-0.0, 0.0), complex(0.0, 0.0), complex(-0.0, -0.0)], dtype=xp.complex128)
    out = xp.expm1(z)
    assert not xp.any(xp.signbit(xp.real(out)))
    assert xp.signbit(xp.imag(out)).tolist() == [False, False, True]
    _, t = pf.func.jvp(xp.expm1, (z,), (xp.ones(3, dtype=xp.complex128),))
    assert t.tolist() == [1, 1, 1]


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"squeeze: .*size not equal to one: axis 0 of shape \(3, 1\)"):
        xp.squeeze(xp.zeros((3, 1)), axis=0)
    with pytest.raises(pf.PushforwardError, match=r"array_api\.max\(\).*empty"):
        xp.max(xp.zeros((0, 2)), axis=0)
    with pytest.raises(pf.PushforwardError, match=r"array_api\.take\(\): axis is required"):
        xp.take(xp.zeros((2, 2)), xp.asarray([0]))
    with pytest.raises(pf.PushforwardError, match=r"array_api\.add\(\): at least one operand"):
        xp.add(1.0, 2.0)
    with pytest.raises(TypeError, match="not a data type of the Array API"):
        xp.astype(xp.zeros(1), np.float16)
    with pytest.raises(ValueError, match="nonzero"):  # NumPy's error
        xp.nonzero(xp.asarray(1.0))


def test_dtype_functions():
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert strict.result_type(strict.int8, strict.uint8) == strict.int16
    assert xp.result_type(xp.asarray([1], dtype=xp.uint8), 300) == xp.uint8
    assert xp.result_type(xp.float32, 1j) == xp.complex64
    with pytest.raises(TypeError):
        xp.result_type(xp.int64, xp.uint64)
    with pytest.raises(TypeError, match="int8 and uint64"):
        xp.result_type(xp.int8, xp.uint64)  # NumPy's float64 is of another kind; the standard has none
    assert xp.can_cast(xp.uint8, xp.int16) == strict.can_cast(strict.uint8, strict.int16)
    assert not xp.can_cast(xp.complex64, xp.float64) and not xp.can_cast(xp.float32, xp.int64)
    assert xp.can_cast(xp.int16, xp.float64)  # cross-kind: the standard leaves it open, NumPy allows it
    assert xp.finfo(xp.complex64).dtype == xp.float32 and isinstance(xp.finfo(xp.float64).eps, float)
    assert xp.iinfo(xp.uint16).max == 65535
    assert xp.isdtype(xp.uint8, ("signed integer", "unsigned integer")) and not xp.isdtype(xp.bool, "numeric")


NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
NAMES += ["float32", "float64", "complex64", "complex128"]


def _strict_result_type(a, b):
    try:
        return str(strict.result_type(getattr(strict, a), getattr(strict, b))).rsplit(".", 1)[-1]
    except TypeError:
        return None


@pytest.mark.parametrize("a", NAMES)
def test_result_type_is_the_standards_table(a):
    """Every pair of the standard's dtypes: the reference's promotion, or a TypeError where the standard
    has none (mixed kinds, bool with a number, a signed integer with uint64)."""
    for b in NAMES:
        want = _strict_result_type(a, b)
        if want is None:
            with pytest.raises(TypeError):
                xp.result_type(getattr(xp, a), getattr(xp, b))
        else:
            assert str(xp.result_type(getattr(xp, a), getattr(xp, b))) == want, (a, b)


@pytest.mark.parametrize("a", NAMES)
def test_can_cast_within_a_kind_is_the_references(a):
    """Within a kind (and float to complex) can_cast is the reference's: True exactly when the
    promotion of the two is the target; never complex to real (can_cast(complex64, float64) is False
    in the standard, whose complex64/float64 promotion is complex128). Across other kinds the standard
    leaves it open and NumPy's safe casting answers (int16 to float64: True)."""
    kind = {"b": "b", "i": "iu", "u": "iu", "f": "fc", "c": "fc"}
    for b in NAMES:
        da, db = getattr(xp, a), getattr(xp, b)
        if db.kind not in kind[da.kind] or (da.kind == "c" and db.kind == "f"):
            assert xp.can_cast(da, db) == (da.kind != "c" and np.can_cast(da, db, "safe")), (a, b)
            continue
        assert xp.can_cast(da, db) == strict.can_cast(getattr(strict, a), getattr(strict, b)), (a, b)
    assert xp.can_cast(xp.asarray([1], dtype=getattr(xp, a)), getattr(xp, a))  # an array as from_


def test_writing_into_the_input_of_max_keeps_the_gradient():
    """SciPy's logsumexp takes xp.max(a), then writes into a in place (xpx.at(a, i_max).set(-inf)):
    max (and min, var, std) read a private copy of an input the tape records, so the write does not
    invalidate the gradient, and the gradient is that of the values computed."""

    def f(x):
        a = x * 1.0
        m = xp.max(a, axis=0)
        s = xp.std(a) + xp.var(a) + xp.min(a)
        a[xp.argmax(x)] = -1.0  # written after max/min/std/var saved their input
        return m + s + xp.sum(a)

    x0 = np.array([0.3, 1.4, -0.2, 0.9])
    g = pf.func.grad(f)(pf.tensor(x0)).numpy()
    h = 1e-6
    fd = [(f(pf.tensor(x0 + h * e)).item() - f(pf.tensor(x0 - h * e)).item()) / (2 * h) for e in np.eye(4)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_special_namespace_is_scipys_names_over_our_ops():
    """xp.special holds pushforward.scipy.special's functions (SciPy's names and signatures), which SciPy
    looks up as xp.special.<name> before falling back to NumPy."""
    from pushforward.scipy import special as psp

    for name in ["gamma", "betaln", "betainc", "polygamma", "multigammaln", "erfcx", "sinc", "kl_div", "boxcox"]:
        assert getattr(xp.special, name) is getattr(psp, name), name
    assert set(xp.special.__all__) == set(psp.__all__)
    import scipy.special as ss

    x0 = np.array([0.4, 1.3])
    got = pf.func.grad(lambda t: xp.sum(xp.special.gamma(t)))(pf.tensor(x0)).numpy()
    np.testing.assert_allclose(got, ss.gamma(x0) * ss.psi(x0), rtol=1e-10)  # gamma' = gamma psi


# functions whose values come from our ops: their derivatives are the ops' (finite differences decide)
DIFFERENTIABLE = [
    ("max", lambda x: xp.max(x, axis=1)),
    ("sort", lambda x: xp.sort(x, axis=0, descending=True)),
    ("unique_values", lambda x: xp.unique_values(x)),
    ("take", lambda x: xp.take(x, xp.asarray([3, 0]), axis=1)),
    ("std", lambda x: xp.std(x, axis=0, correction=1)),
    ("cumulative_prod", lambda x: xp.cumulative_prod(x, axis=1, include_initial=True)),
    ("vecdot", lambda x: xp.vecdot(x, xp.flip(x, axis=1))),
    ("floor_divide_plus", lambda x: x + xp.floor_divide(x, 0.5)),
    ("clip", lambda x: xp.clip(x, -0.5, 0.5)),
    ("nextafter", lambda x: xp.nextafter(x, xp.asarray(10.0))),
    ("svdvals", lambda x: xp.linalg.svdvals(x)),
    ("vector_norm", lambda x: xp.linalg.vector_norm(x, ord=3)),
    ("pinv", lambda x: xp.linalg.pinv(x)),
    ("rfft", lambda x: xp.abs(xp.fft.rfft(x, axis=0))),
]


@pytest.mark.parametrize("name, fn", DIFFERENTIABLE, ids=[d[0] for d in DIFFERENTIABLE])
def test_derivatives_in_both_modes(name, fn):
    x = pf.tensor(
        np.array([[0.3, -1.2, 0.7, 2.1], [1.4, 0.2, -0.9, 0.45], [-0.35, 0.8, 1.9, -1.6]]), requires_grad=True
    )
    assert pf.autograd.gradcheck(fn, (x,), check_forward_ad=True)


def test_transforms_flow_through():
    x = pf.tensor(RNG.standard_normal((5, 3)))
    per_row = pf.func.vmap(lambda r: xp.max(r, axis=0))(x)
    np.testing.assert_allclose(per_row.numpy(), x.numpy().max(axis=1))
    f = pf.compile(lambda t: xp.sum(xp.exp(t) * xp.sort(t, axis=1), axis=1))
    np.testing.assert_allclose(f(x).numpy(), (np.exp(x.numpy()) * np.sort(x.numpy(), axis=1)).sum(1))
    h = pf.func.hessian(lambda t: xp.sum(xp.sin(t) ** 2))(x[0])
    np.testing.assert_allclose(np.diag(h.numpy()), 2 * np.cos(2 * x[0].numpy()), rtol=1e-10)
    # Taylor mode: d^2/dt^2 sum(exp(x0 + t v)) = sum(v^2 exp(x0))
    x0, v = x[0], pf.tensor([1.0, 0.5, -1.0])
    _, (d1, d2) = pf.func.jet(lambda t: xp.sum(xp.exp(t)), (x0,), ([v, pf.zeros(3)],))
    np.testing.assert_allclose(float(d2), float((v**2 * x0.exp()).sum()), rtol=1e-10)


def test_lazy_tensors_flow_through():
    da = pytest.importorskip("dask.array")
    x = pf.as_tensor(da.from_array(RNG.standard_normal((4, 3)), chunks=2))
    y = xp.mean(xp.abs(x), axis=0)
    assert y.is_lazy
    (yv,), (xv,) = pf.compute(y), pf.compute(x)  # (a tuple, as dask.compute)
    np.testing.assert_allclose(yv.numpy(), np.abs(xv.numpy()).mean(0))


def test_namespace_loads_lazily():
    # importing pushforward stays as fast as before: the namespace loads on first use
    code = "import sys, pushforward as pf; print('pushforward.array_api' in sys.modules); pf.zeros(1).__array_namespace__(); print('pushforward.array_api' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env()
    ).stdout.split()
    assert out == ["False", "True"]


def _env():
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_the_standard_holds_where_pushforward_numpy_differs_from_numpy():
    """The wrappers the face keeps while pushforward.numpy differs from NumPy here (docs/array-api.md):
    each gives NumPy's (and array-api-strict's) answer."""
    e = np.empty(0, np.uint8)
    for name in ("cumulative_sum", "cumulative_prod"):
        ours = getattr(xp, name)(xp.asarray(e), axis=0, include_initial=True)
        ref = getattr(strict, name)(strict.asarray(e), axis=0, include_initial=True)
        assert ours.dtype == np.asarray(ref).dtype == np.uint64 and ours.tolist() == [
            0 if name == "cumulative_sum" else 1
        ]
    assert xp.clip(xp.asarray([1.5])).tolist() == [1.5]
    with pytest.raises(IndexError):
        xp.expand_dims(xp.asarray(1.0), axis=-2)
    got = xp.take_along_axis(xp.asarray([[1.0, 2.0, 3.0]]), xp.asarray([[-1, 0]]), axis=1)
    assert got.tolist() == [[3.0, 1.0]]
    u = np.array([200, 100], np.uint8)
    assert (
        xp.vecdot(xp.asarray(u), xp.asarray(u)).dtype
        == np.asarray(strict.vecdot(strict.asarray(u), strict.asarray(u))).dtype
    )
    with pytest.raises(ValueError, match="sizes 2 and 1"):
        xp.vecdot(xp.asarray(u), xp.asarray(u[:1]))
    stack = RNG.standard_normal((2, 3, 3))
    rtol = np.array([0.05, 0.9])
    np.testing.assert_allclose(
        xp.linalg.pinv(xp.asarray(stack), rtol=xp.asarray(rtol)).numpy(), np.linalg.pinv(stack, rtol=rtol), atol=1e-12
    )
    assert (
        xp.linalg.matrix_rank(xp.asarray(stack), rtol=xp.asarray(rtol)).tolist()
        == np.linalg.matrix_rank(stack, rtol=rtol).tolist()
    )
    assert xp.add(0, xp.asarray([1.0], dtype=xp.float32)).dtype == xp.float32  # a weak scalar as x1
    assert xp.max(xp.asarray(A), axis=()).shape == A.shape
