"""The faces call the ops of derivatives.yaml: NumPy's names are read off the YAML (`aliases:`,
`numpy:`), and where the faces and NumPy disagreed (float_power's dtype, isinf of a complex
infinity, fabs of a complex number, reshape without copy, eigh's triangle) the op decides, as NumPy
or the standard does."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import pushforward as pf
import pushforward.array_api as xp
import pushforward.numpy as pnp
from pushforward.numpy import _api as numpy_api, _math as numpy_math
from pushforward.ops import generated as G
from pushforward.ops.numpy_names import numpy_name, numpy_ufuncs

FACES = [pytest.param(np, id="dispatch"), pytest.param(pnp, id="drop-in")]


# ----------------------------------------------------------------------------- names from the YAML


def test_the_ufunc_table_is_the_yamls_and_the_composites_are_what_no_op_answers_to():
    """NumPy's dispatch runs the op derivatives.yaml gives a ufunc's name to; a face composite for a
    ufunc an op answers to would be a second rule for it."""
    assert numpy_api.UFUNCS == numpy_ufuncs()
    assert not set(numpy_math.UFUNC_COMPOSITES) & set(numpy_ufuncs())
    i = np.array([1, 2, 3])
    for name, args in [
        ("left_shift", (i, 1)),
        ("right_shift", (i, 1)),
        ("cbrt", (i,)),
        ("fabs", (-i,)),
        ("rint", (i,)),
    ]:
        got = getattr(np, name)(pf.tensor(args[0]), *args[1:])
        np.testing.assert_array_equal(got.numpy(), getattr(np, name)(*args), err_msg=name)


def test_numpy_names_cover_the_numpy_only_spellings():
    assert numpy_name("power") is pf.pow and numpy_name("invert") is pf.bitwise_not
    assert numpy_name("left_shift") is pf.bitwise_left_shift and numpy_name("radians") is pf.deg2rad
    assert numpy_name("fabs") is G._fabs and numpy_name("sin") is pf.sin
    assert numpy_name("no_such_function") is None
    assert not hasattr(pf, "power") and not hasattr(pf, "fabs")  # (NumPy's names stay out of torch's namespace)


def test_torch_numpy_named_aliases_are_in_the_torch_namespace():
    for alias, op in [
        ("negative", pf.neg),
        ("greater", pf.gt),
        ("greater_equal", pf.ge),
        ("less", pf.lt),
        ("less_equal", pf.le),
        ("not_equal", pf.ne),
        ("multiply", pf.mul),
        ("divide", pf.div),
        ("subtract", pf.sub),
        ("true_divide", pf.div),
        ("absolute", pf.abs),
        ("arccos", pf.acos),
        ("swapdims", pf.transpose),
    ]:
        assert getattr(pf, alias) is op, alias
    assert pf.tensor([1.0]).greater(0.0).item() and pf.ones(2, 3).swapdims(0, 1).shape == (3, 2)


pytest.importorskip("yaml")
from pushforward.codegen.load import SpecError, load  # noqa: E402


def _load(tmp_path, text):
    p = tmp_path / "d.yaml"
    p.write_text(textwrap.dedent(text))
    return load(p)


def test_the_loader_reads_and_checks_numpy_names(tmp_path):
    e = _load(
        tmp_path, "- name: s(Tensor self) -> Tensor\n  kernel: xp.sin\n  numpy: [sine]\n  differentiable: false\n"
    )
    assert e[0].numpy == ("sine",)
    with pytest.raises(SpecError, match=r"line 1, entry 's': 'numpy' must be a list of names"):
        _load(tmp_path, "- name: s(Tensor self) -> Tensor\n  kernel: xp.sin\n  numpy: sine\n  differentiable: false\n")
    with pytest.raises(SpecError, match=r"entry 't': NumPy name 's' is already taken"):
        _load(
            tmp_path,
            """
            - name: s(Tensor self) -> Tensor
              kernel: xp.sin
              differentiable: false
            - name: t(Tensor self) -> Tensor
              kernel: xp.cos
              numpy: [s]
              differentiable: false
            """,
        )
    with pytest.raises(SpecError, match=r"unknown key 'numpy_name'"):
        _load(
            tmp_path, "- name: s(Tensor self) -> Tensor\n  kernel: xp.sin\n  numpy_name: [a]\n  differentiable: false\n"
        )


# ----------------------------------------------------------------------------- the disagreements


@pytest.mark.parametrize("face", FACES)
def test_float_power_computes_in_float64_as_numpy(face):
    for a, b in [(np.array([2, 3]), 2), (np.array([2.0, 3.0], np.float32), 2), (np.array([1 + 1j]), 2)]:
        got = face.float_power(pf.tensor(a), b)
        want = np.float_power(a, b)
        assert got.dtype == want.dtype and np.allclose(got.detach().numpy(), want)
    assert pf.float_power(pf.tensor([2], dtype=pf.int64), pf.tensor([0.5], dtype=pf.float32)).dtype == np.float64


def test_float_power_is_differentiable_in_both_operands():
    x = pf.tensor([1.5, 2.0], dtype=pf.float32, requires_grad=True)
    e = pf.tensor([2.0, 0.5], requires_grad=True)
    pf.float_power(x, e).sum().backward()
    xv, ev = np.array([1.5, 2.0]), np.array([2.0, 0.5])
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), ev * xv ** (ev - 1), rtol=1e-6)
    np.testing.assert_allclose(e.grad.numpy(), xv**ev * np.log(xv), rtol=1e-12)


@pytest.mark.parametrize("face", FACES + [pytest.param(xp, id="array_api")])
def test_isinf_of_a_complex_infinity_with_a_nan_part_is_true(face):
    z = np.array([complex(np.inf, np.nan), complex(np.nan, np.inf), complex(np.nan, 1.0), complex(1.0, 2.0)])
    t = xp.asarray(z) if face is xp else pf.tensor(z)
    assert face.isinf(t).tolist() == np.isinf(z).tolist() == [True, True, False, False]


@pytest.mark.parametrize("face", FACES)
def test_fabs_of_complex_raises_type_error_as_numpy(face):
    with pytest.raises(TypeError):
        np.fabs(np.array([1 + 1j]))
    with pytest.raises(TypeError, match="fabs: complex"):
        face.fabs(pf.tensor([1 + 1j]))
    got = face.fabs(pf.tensor([-1, 2]))
    assert got.dtype == np.float64 and got.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("face", FACES)
def test_the_ufuncs_that_became_ops_keep_numpy_values_and_dtypes(face):
    a = np.array([-2.0, -0.0, 0.5, np.nan, np.inf], np.float32)
    i = np.array([-3, 0, 4])
    cases = [
        ("signbit", (a,)),
        ("cbrt", (i,)),
        ("deg2rad", (i,)),
        ("rad2deg", (a,)),
        ("logaddexp2", (i, i)),
        ("fmax", (a, a[::-1].copy())),
        ("fmin", (a, a[::-1].copy())),
        ("heaviside", (i, np.array(0.5))),
        ("ldexp", (i, np.array([1, 2, 3]))),
        ("logical_xor", (i, np.array([True, False, True]))),
        ("nan_to_num", (a,)),
    ]
    for name, args in cases:
        want = getattr(np, name)(*args)
        got = getattr(face, name)(*[pf.tensor(v) for v in args])
        assert isinstance(got, pf.Tensor) and got.dtype == want.dtype, name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
    assert face.trapezoid(pf.tensor(i), dx=0.5).item() == np.trapezoid(i, dx=0.5)
    assert face.floor_divide(pf.tensor([7.0, -7.0]), 2).tolist() == [3.0, -4.0]


def test_floor_division_is_numpys_in_the_op_and_the_standards_in_the_array_api():
    a, b = np.array([np.inf, 1.0, -7.0]), np.array([2.0, -np.inf, 2.0])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(pf.floor_divide(pf.tensor(a), pf.tensor(b)).numpy(), np.floor_divide(a, b))
        np.testing.assert_array_equal(np.floor_divide(pf.tensor(a), pf.tensor(b)).numpy(), np.floor_divide(a, b))
    # the standard: an infinite operand gives the quotient's limit
    assert xp.floor_divide(xp.asarray(a), xp.asarray(b)).tolist() == [np.inf, -0.0, -4.0]
    assert pf.remainder(pf.tensor([-3.0, 3.0]), -2.0).tolist() == [-3.0 % -2.0, 3.0 % -2.0]  # Python's sign: other's


def test_nan_to_num_gradient_is_one_where_finite_and_zero_where_replaced():
    x = pf.tensor([np.nan, 1.5, np.inf, -np.inf], requires_grad=True)
    pf.nan_to_num(x, posinf=2.0).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0]
    z = pf.tensor([complex(np.inf, 1.0)], requires_grad=True)
    pf.nan_to_num(z).real.sum().backward()
    pf.nan_to_num(z.detach().requires_grad_()).imag.sum().backward()
    assert z.grad.tolist() == [0j]  # the real part was replaced


def test_fmax_ignores_nan_and_its_gradient_follows_the_value_picked():
    a = pf.tensor([np.nan, 1.0, 3.0], requires_grad=True)
    b = pf.tensor([2.0, np.nan, 1.0], requires_grad=True)
    assert pf.fmax(a, b).tolist() == [2.0, 1.0, 3.0]
    pf.fmax(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 1.0] and b.grad.tolist() == [1.0, 0.0, 0.0]


def test_the_array_api_count_nonzero_and_searchsorted_run_the_ops():
    x = xp.asarray([[0.0, 1.0], [2.0, 0.0]])
    assert xp.count_nonzero(x, axis=1, keepdims=True).tolist() == [[1], [1]]
    assert xp.count_nonzero(x).dtype == np.int64
    assert xp.searchsorted(xp.asarray([1.0, 2.0, 3.0]), xp.asarray([2.0]), side="right").tolist() == [2]
    with pytest.raises(TypeError, match="integer operands only"):
        xp.bitwise_left_shift(xp.asarray([1.0]), 1)
    assert pf.searchsorted(pf.tensor([[1.0, 2.0], [0.0, 5.0]]), pf.tensor([[1.5], [6.0]])).tolist() == [[1], [2]]
    with pytest.raises(pf.errors.OpError, match="side='left' and right=True"):
        pf.searchsorted(pf.tensor([1.0]), pf.tensor([1.0]), right=True, side="left")


def test_shift_operators_run_the_shift_ops_under_vmap():
    """`x << k` and `x >> k` are the shift ops: under vmap the values are not at hand (the fuzzer
    found `count_nonzero(x) << 3` refused there, as the operators shifted NumPy's copy of the values)."""
    x = pf.tensor([[-1.3, 2.0, 0.0], [0.0, 0.0, 1.0]])
    assert pf.func.vmap(lambda r: pf.count_nonzero(r) << 3)(x).tolist() == [16, 8]
    assert pf.func.vmap(lambda r: (r * 3).long() >> 1)(x).tolist() == [[-2, 3, 0], [0, 0, 1]]
    assert pf.func.vmap(lambda r: 1 << r.long().abs())(x).tolist() == [[2, 4, 1], [1, 1, 2]]
    i = pf.tensor([3], dtype=pf.int32)
    assert (i << 2).dtype == pf.int32 and (i << 2).tolist() == [12]
    with pytest.raises(TypeError, match="integer tensors only"):
        pf.tensor([1.0]) << 1
    with pytest.raises(TypeError, match="integer tensors only"):
        pf.tensor([1]) >> 1.5


def test_array_api_reshape_without_copy_raises_value_error_when_a_copy_is_needed():
    x = xp.reshape(xp.arange(6.0), (2, 3)).mT  # (not contiguous: flattening it copies)
    with pytest.raises(ValueError, match="copy=False"):
        xp.reshape(x, (6,), copy=False)
    v = xp.reshape(xp.arange(6.0), (3, 2), copy=False)  # a view is fine
    assert v.shape == (3, 2) and xp.reshape(x, (6,)).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def _eigh_loss(face, a, uplo, c, d):
    """A function of eigh's values and vectors that does not depend on the vectors' phases."""
    w, v = face.linalg.eigh(a, uplo)
    return (w * c).sum() + (abs(v) ** 2 * d).sum()


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("cplx", [False, True])
def test_numpy_eigh_equals_numpys_and_differentiates_the_triangle_it_reads(uplo, cplx):
    rng = np.random.default_rng(3)
    n = 4
    a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if cplx else 0)
    w, v = np.linalg.eigh(a, uplo)
    for face in (np, pnp):
        got_w, got_v = face.linalg.eigh(pf.tensor(a), uplo)
        np.testing.assert_array_equal(got_w.numpy(), w)
        np.testing.assert_array_equal(got_v.numpy(), v)  # eigenvector signs included
        np.testing.assert_array_equal(face.linalg.eigvalsh(pf.tensor(a), uplo).numpy(), np.linalg.eigvalsh(a, uplo))
    c, d = rng.standard_normal(n), rng.standard_normal((n, n))
    x = pf.tensor(a, requires_grad=True)
    _eigh_loss(np, x, uplo, c, d).backward()
    # finite differences of NumPy's own function, entry by entry (real and imaginary parts)
    h = 1e-6
    parts = [1.0, 1j] if cplx else [1.0]
    num = np.zeros(a.shape, dtype=a.dtype)
    for i, j in np.ndindex(n, n):
        for p in parts:
            e = np.zeros(a.shape, dtype=a.dtype)
            e[i, j] = p * h
            diff = (_eigh_loss(np, a + e, uplo, c, d) - _eigh_loss(np, a - e, uplo, c, d)) / (2 * h)
            num[i, j] += diff * p  # (torch's convention: the gradient is d/dRe + i d/dIm)
    np.testing.assert_allclose(x.grad.numpy(), num, atol=1e-6)
    outside = np.triu(np.ones((n, n)), 1) if uplo == "L" else np.tril(np.ones((n, n)), -1)
    assert np.all(x.grad.numpy()[outside == 1] == 0)  # the triangle eigh does not read


def test_nansum_sums_in_the_dtype_asked_for():
    t = pf.tensor([1.0, np.nan, 2.0])
    for face in (np, pnp):
        r = face.nansum(t, dtype=np.float32)
        assert r.dtype == np.float32 and r.item() == 3.0
    out = pf.zeros(())
    assert np.nansum(t, out=out) is out and out.item() == 3.0


def test_argsort_and_take_with_a_batched_index_run_under_vmap():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4))
    idx = np.array([[0, 1], [2, 3], [1, -1]])
    got = pf.func.vmap(np.argsort)(pf.tensor(x))
    np.testing.assert_array_equal(got.numpy(), np.argsort(x, axis=-1))
    got = pf.func.vmap(np.take)(pf.tensor(x), pf.tensor(idx))
    np.testing.assert_array_equal(got.numpy(), np.stack([np.take(a, i) for a, i in zip(x, idx)]))
    # the index computed from the data, as a sort's permutation is
    perm = pf.func.vmap(lambda r: np.take(r, np.argsort(r)))(pf.tensor(x))
    np.testing.assert_array_equal(perm.numpy(), np.sort(x, axis=-1))
    np.testing.assert_array_equal(np.argsort(pf.tensor(x), axis=None).numpy(), np.argsort(x, axis=None))
