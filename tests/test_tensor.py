"""Tensor basics: dtypes and NumPy promotion, creation, properties, memory sharing, versions, repr, indexing."""

import numpy as np
import pytest

import pushforward as pf


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -- dtypes and promotion ------------------------------------------------------------------------


def test_dtype_objects_are_numpy_dtypes():
    assert pf.float32 == np.float32 and pf.float64 == np.float64
    assert pf.complex64 == np.complex64 and pf.complex128 == np.complex128
    assert pf.int32 == np.int32 and pf.int64 == np.int64 and pf.bool == np.bool_


@pytest.mark.parametrize(
    "data,dtype",
    [
        (1.0, np.float64),
        ([1.0, 2.0], np.float64),
        ([1, 2], np.int64),
        (True, np.bool_),
        (1 + 2j, np.complex128),
        ([[1, 2.5]], np.float64),
    ],
)
def test_inferred_dtype_follows_numpy(data, dtype):
    assert pf.tensor(data).dtype == dtype


@pytest.mark.parametrize("dtype", [pf.float32, np.float32, "float32"])
def test_explicit_dtype_accepts_numpy_spellings(dtype):
    assert pf.tensor([1, 2], dtype=dtype).dtype == np.float32


@pytest.mark.parametrize(
    "make,expected",
    [
        (lambda: pf.ones(2, dtype=pf.float32) * 2.0, np.float32),  # weak Python float
        (lambda: pf.ones(2, dtype=pf.float32) * 2, np.float32),
        (lambda: 2.0 * pf.ones(2, dtype=pf.float32), np.float32),
        (lambda: pf.ones(2, dtype=pf.float32) + pf.ones(2), np.float64),
        (lambda: pf.tensor([1, 2]) * 1.5, np.float64),
        (lambda: pf.tensor([1, 2], dtype=pf.int32) + pf.tensor([1], dtype=pf.int64), np.int64),
        (lambda: pf.tensor([1, 2], dtype=pf.int32) + 1, np.int32),
        (lambda: pf.ones(2, dtype=pf.float32) * 1j, np.complex64),
        (lambda: pf.tensor([1, 2]) / 2, np.float64),
        (lambda: pf.ones(2, dtype=pf.float32).sin(), np.float32),
        (lambda: pf.tensor([True, False]) + pf.tensor([True, True]), np.bool_),
        (lambda: pf.ones(2, dtype=pf.complex64) * pf.ones(2, dtype=pf.float64), np.complex128),
    ],
)
def test_promotion_follows_numpy(make, expected):
    assert make().dtype == expected


def test_promotion_matches_numpy_on_grid():
    dts = [np.float32, np.float64, np.complex64, np.int32, np.int64, np.bool_]
    for a in dts:
        for b in dts:
            x = np.ones(2, dtype=a)
            y = np.ones(2, dtype=b)
            assert (pf.tensor(x) + pf.tensor(y)).dtype == (x + y).dtype, (a, b)
            assert (pf.tensor(x) * 3.0).dtype == (x * 3.0).dtype, a


def test_to_and_conversions():
    x = pf.tensor([1.5, 2.5])
    assert x.to(pf.float32).dtype == np.float32
    assert x.float().dtype == np.float32 and x.double().dtype == np.float64
    assert x.long().dtype == np.int64 and x.long().tolist() == [1, 2]
    assert x.cdouble().dtype == np.complex128


# -- creation ------------------------------------------------------------------------------------


def test_creation_functions():
    assert pf.zeros(2, 3).shape == (2, 3) and pf.zeros((2, 3)).shape == (2, 3)
    assert pf.zeros(2).dtype == np.float64
    close(pf.ones(2, 2), np.ones((2, 2)))
    close(pf.full((2,), 3.0), [3.0, 3.0])
    assert pf.arange(5).tolist() == [0, 1, 2, 3, 4] and pf.arange(5).dtype == np.int64
    close(pf.arange(0, 1, 0.25), [0, 0.25, 0.5, 0.75])
    close(pf.linspace(0, 1, 5), [0, 0.25, 0.5, 0.75, 1.0])
    close(pf.eye(2), np.eye(2))
    assert pf.empty(3, 2).shape == (3, 2)
    a = pf.ones(2, dtype=pf.float32)
    assert pf.zeros_like(a).dtype == np.float32 and pf.zeros_like(a).tolist() == [0.0, 0.0]
    assert pf.ones_like(a).dtype == np.float32
    assert pf.full_like(a, 7).tolist() == [7.0, 7.0] and pf.full_like(a, 7).dtype == np.float32
    assert pf.zeros(2, dtype=pf.int32).dtype == np.int32


def test_creation_requires_grad_flag():
    assert pf.zeros(2, requires_grad=True).requires_grad
    assert pf.tensor([1.0], requires_grad=True).is_leaf


def test_random_seeded():
    pf.manual_seed(123)
    a = pf.rand(4)
    b = pf.randn(2, 3)
    pf.manual_seed(123)
    close(pf.rand(4), a)
    close(pf.randn(2, 3), b)
    assert ((a.numpy() >= 0) & (a.numpy() < 1)).all()
    assert b.shape == (2, 3) and b.dtype == np.float64


def test_tensor_copies_but_from_numpy_and_as_tensor_share():
    n = np.arange(3.0)
    t = pf.tensor(n)
    f = pf.from_numpy(n)
    a = pf.as_tensor(n)
    n[0] = 9.0
    assert t.tolist()[0] == 0.0
    assert f.tolist()[0] == 9.0 and a.tolist()[0] == 9.0
    f.add_(1)
    assert n[0] == 10.0


# -- properties ----------------------------------------------------------------------------------


def test_shape_dtype_ndim_numel():
    x = pf.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.numel() == 24 and x.dim() == 3
    assert x.size() == (2, 3, 4) and x.size(1) == 3
    assert len(x) == 2


def test_item_and_tolist():
    assert pf.tensor(3.5).item() == 3.5 and isinstance(pf.tensor(3.5).item(), float)
    assert pf.tensor([7]).item() == 7 and isinstance(pf.tensor([7]).item(), int)
    assert pf.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    with pytest.raises(RuntimeError, match="2 elements"):
        pf.tensor([1.0, 2.0]).item()


def test_numpy_shares_memory_and_array_protocol():
    x = pf.tensor([1.0, 2.0])
    n = x.numpy()
    n[0] = 5.0
    assert x.tolist() == [5.0, 2.0]
    a = np.asarray(x)
    assert np.shares_memory(a, n)
    assert np.array(x, dtype=np.float32).dtype == np.float32
    close(np.sin(np.asarray(x)), np.sin([5.0, 2.0]))


def test_iteration_and_bool_and_scalars():
    rows = list(pf.tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    assert bool(pf.tensor([1.0])) and not bool(pf.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(pf.tensor([1.0, 2.0]))
    assert float(pf.tensor(2.5)) == 2.5 and int(pf.tensor(3)) == 3
    with pytest.raises(TypeError):  # torch's class
        len(pf.tensor(1.0))


def test_comparisons():
    a = pf.tensor([1.0, 2.0, 3.0])
    assert (a == pf.tensor([1.0, 0.0, 3.0])).tolist() == [True, False, True]
    assert (a < 2).tolist() == [True, False, False]
    assert (a >= 2).dtype == np.bool_
    assert (a != 2).tolist() == [True, False, True]


# -- views, memory, versions -----------------------------------------------------------------------

VIEW_FNS = {
    "slice": lambda t: t[1:],
    "int_index": lambda t: t[0],
    "element": lambda t: t[0, 1],
    "view": lambda t: t.view(6),
    "reshape": lambda t: t.reshape(3, 2),
    "transpose": lambda t: t.transpose(0, 1),
    "permute": lambda t: t.permute(1, 0),
    "t": lambda t: t.t(),
    "T": lambda t: t.T,
    "mT": lambda t: t.mT,
    "unsqueeze": lambda t: t.unsqueeze(1),
    "squeeze": lambda t: t.unsqueeze(0).squeeze(0),
    "expand": lambda t: t[:1].expand(4, 3),
    "flatten": lambda t: t.flatten(),
    "diagonal": lambda t: t.diagonal(),
    "narrow": lambda t: t.narrow(1, 1, 2),
    "select": lambda t: t.select(1, 0),
    "split": lambda t: t.split(1)[1],
    "chunk": lambda t: t.chunk(3, dim=1)[2],
    "unbind": lambda t: t.unbind(1)[2],
    "ellipsis": lambda t: t[..., None],
}


@pytest.mark.parametrize("name", list(VIEW_FNS))
def test_views_share_memory(name):
    x = pf.arange(6.0).reshape(2, 3).clone()
    v = VIEW_FNS[name](x)
    assert np.shares_memory(v.numpy(), x.numpy())


@pytest.mark.parametrize("name", [n for n in VIEW_FNS if n != "expand"])
def test_inplace_through_view_writes_base_and_bumps_shared_version(name):
    x = pf.arange(6.0).reshape(2, 3).clone()
    v = VIEW_FNS[name](x)
    before = x.numpy().copy()
    v0 = x._version
    v.add_(100)
    assert x._version == v0 + 1 and v._version == x._version
    assert (x.numpy() != before).sum() == v.numel()
    close(v, VIEW_FNS[name](pf.tensor(before)) + 100)


def test_view_of_view_shares_version_with_root():
    x = pf.zeros(4, 4)
    a = x[1:]
    b = a.t()[0]
    c = x.view(16)
    b.fill_(1.0)
    assert x._version == a._version == b._version == c._version == 1
    assert x.numpy()[1:, 0].tolist() == [1.0, 1.0, 1.0]


def test_out_of_place_result_is_independent():
    x = pf.zeros(3)
    y = x + 1
    y.add_(1)
    assert x.tolist() == [0.0, 0.0, 0.0] and x._version == 0
    c = x.clone()
    assert not np.shares_memory(c.numpy(), x.numpy())


def test_reshape_copies_when_not_viewable():
    x = pf.arange(6.0).reshape(2, 3).clone()
    r = x.t().reshape(6)
    assert not np.shares_memory(r.numpy(), x.numpy())
    close(r, np.arange(6.0).reshape(2, 3).T.reshape(6))


def test_view_incompatible_shape_errors():
    with pytest.raises(RuntimeError):
        pf.zeros(2, 3).view(4)


def test_expand_is_read_only():
    x = pf.zeros(1, 3)
    e = x.expand(2, 3)
    with pytest.raises(RuntimeError):
        e.add_(1)


# -- repr ------------------------------------------------------------------------------------------


def test_repr():
    assert repr(pf.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    x = pf.tensor([1.0, 2.0], requires_grad=True)
    assert "requires_grad=True" in repr(x)
    r = repr(x.sin())
    assert "grad_fn=<SinBackward0>" in r and r.startswith("tensor(")
    assert "dtype=pushforward.float32" in repr(pf.zeros(2, dtype=pf.float32))
    assert "dtype" not in repr(pf.tensor([1, 2]))
    assert "dtype=pushforward.int32" in repr(pf.zeros(2, dtype=pf.int32))


# -- indexing --------------------------------------------------------------------------------------


def test_getitem_basic_and_advanced():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = pf.tensor(a)
    for idx in [
        0,
        -1,
        (1, 2),
        (slice(None), 1),
        (Ellipsis, 2),
        (None, 0),
        (slice(None, None, 2),),
        ([0, 1], [2, 0]),
        (a > 10,),
        (slice(None), [0, 2]),
        (0, slice(None), [3, 1]),
    ]:
        close(x[idx], a[idx])


def test_getitem_with_tensor_indices():
    x = pf.arange(10.0)
    close(x[pf.tensor([1, 3])], [1.0, 3.0])
    close(x[pf.tensor(4)], 4.0)
    close(x[x > 7], [8.0, 9.0])
    with pytest.raises(IndexError, match="long, int or bool"):
        x[pf.tensor([1.0])]


def test_getitem_out_of_range_names_shape():
    with pytest.raises(IndexError, match=r"\(3,\)"):
        pf.zeros(3)[5]


def test_setitem_basic():
    x = pf.zeros(3, 4)
    x[1, 2] = 5
    x[:, 0] = pf.tensor([1.0, 2.0, 3.0])
    x[2] = 9.0
    x[0, 1:3] = pf.tensor([7.0, 8.0])
    exp = np.zeros((3, 4))
    exp[1, 2] = 5
    exp[:, 0] = [1, 2, 3]
    exp[2] = 9
    exp[0, 1:3] = [7, 8]
    close(x, exp)
    assert x._version == 4


def test_setitem_advanced():
    x = pf.zeros(3, 4)
    x[[0, 2], [1, 3]] = pf.tensor([7.0, 8.0])
    x[x > 7.5] = -1.0
    x[pf.tensor([1])] = 2.0
    exp = np.zeros((3, 4))
    exp[[0, 2], [1, 3]] = [7, 8]
    exp[exp > 7.5] = -1
    exp[[1]] = 2
    close(x, exp)


def test_setitem_broadcast_and_cast():
    x = pf.zeros(2, 3, dtype=pf.float32)
    x[:] = pf.tensor([1.0, 2.0, 3.0])  # float64 value into float32 target
    assert x.dtype == np.float32
    close(x, [[1, 2, 3], [1, 2, 3]])


def test_setitem_bad_shape_errors():
    x = pf.zeros(3)
    with pytest.raises(RuntimeError):
        x[:2] = pf.tensor([1.0, 2.0, 3.0])


# -- augmented operators ---------------------------------------------------------------------------


def test_augmented_operators_are_in_place():
    x = pf.ones(3)
    alias = x
    data = x.numpy()
    x += 1
    x *= pf.tensor([1.0, 2.0, 3.0])
    x -= 1
    x /= 2
    assert x is alias and x.numpy() is data or np.shares_memory(x.numpy(), data)
    close(x, [0.5, 1.5, 2.5])
    assert x._version == 4


def test_augmented_operator_on_view_updates_base():
    x = pf.zeros(2, 2)
    row = x[1]
    row += 3
    close(x, [[0, 0], [3, 3]])


def test_augmented_int_by_float_errors_like_numpy():
    x = pf.tensor([1, 2])
    with pytest.raises(RuntimeError, match="cast"):
        x += 1.5
    x *= 2
    assert x.tolist() == [2, 4] and x.dtype == np.int64


def test_operator_overloads():
    a = pf.tensor([1.0, 2.0])
    b = pf.tensor([3.0, 4.0])
    close(a + b, [4, 6])
    close(a - b, [-2, -2])
    close(a * b, [3, 8])
    close(a / b, [1 / 3, 0.5])
    close(a**2, [1, 4])
    close(2**a, [2, 4])
    close(-a, [-1, -2])
    close(1 - a, [0, -1])
    close(6 / a, [6, 3])
    close(a @ b, 11.0)
    close(np.array([1.0, 1.0]) @ pf.tensor([[1.0, 2.0], [3.0, 4.0]]), [4, 6])
    assert isinstance(np.array([1.0, 1.0]) + a, pf.Tensor)


def test_misc_creation_and_conversion():
    assert pf.tensor([pf.tensor(1.0), pf.tensor(2.0)]).tolist() == [1.0, 2.0]
    a = pf.tensor([1.0])
    b = pf.tensor(a)
    b.add_(1)
    assert a.tolist() == [1.0]  # tensor() copies
    assert pf.eye(2, 3).shape == (2, 3)
    assert pf.full((2,), 3).dtype == np.int64
    assert pf.linspace(0, 1, 3, dtype=pf.float32).dtype == np.float32
    assert pf.randn(2, dtype=pf.float32).dtype == np.float32
    assert pf.empty_like(pf.ones(2, dtype=pf.int32)).dtype == np.int32


def test_numpy_interop_returns_tensor():
    assert isinstance(np.ones(2) + pf.ones(2), pf.Tensor)
    assert isinstance(np.float64(2.0) * pf.ones(2), pf.Tensor)
    assert isinstance(abs(pf.tensor([-1.0])), pf.Tensor)


def test_integer_ops_stay_integer():
    assert (pf.tensor([7, 8]) // 2).tolist() == [3, 4]
    assert (pf.tensor([7, 8]) % 3).tolist() == [1, 2]
    assert (pf.tensor([2, 3]) ** 2).dtype == np.int64


def test_setitem_negative_tensor_and_bool_list_indices():
    x = pf.zeros(3)
    x[-1] = 5.0
    x[pf.tensor(0)] = 1.0
    assert x.tolist() == [1.0, 0.0, 5.0]
    x[[True, False, True]] = 7.0
    assert x.tolist() == [7.0, 0.0, 7.0]


def test_stride_as_torch():
    """Tensor.stride(), in elements, as torch's (porting: layout-aware code reads it)."""
    torch = pytest.importorskip("torch")
    a = np.arange(24.0).reshape(2, 3, 4)
    for f in (lambda t: t, lambda t: t.permute(2, 0, 1), lambda t: t[:, 1], lambda t: t.transpose(0, 1)[..., ::2]):
        p, t = f(pf.tensor(a)), f(torch.tensor(a))
        assert p.stride() == t.stride() and p.stride(-1) == t.stride(-1)
    with pytest.raises(IndexError, match="out of range"):  # torch's IndexError
        pf.zeros(2).stride(1)


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"])
def test_in_place_comparisons_as_torch_with_zero_derivatives(name):
    import torch

    import pushforward.autograd.forward_ad as fwAD

    a, b = [1.0, 2.0, 3.0], [2.0, 2.0, 1.0]
    x = pf.tensor(a)
    assert getattr(x, name)(pf.tensor(b)) is x
    want = getattr(torch.tensor(a, dtype=torch.float64), name)(torch.tensor(b, dtype=torch.float64))
    assert x.tolist() == want.tolist() and x.dtype == pf.float64
    n = pf.tensor([1, 5])
    getattr(n, name)(3)
    assert n.tolist() == getattr(torch.tensor([1, 5]), name)(3).tolist()
    with fwAD.dual_level():  # forward mode: the tangent becomes zero
        d = fwAD.make_dual(pf.tensor(a), pf.ones(3))
        getattr(d, name)(pf.tensor(b))
        assert fwAD.unpack_dual(d).tangent.tolist() == [0.0, 0.0, 0.0]
    leaf = pf.tensor(a, requires_grad=True)  # reverse mode: zero gradient through it
    y = leaf * 2
    getattr(y, name)(pf.tensor(b))
    (y * leaf).sum().backward()
    assert leaf.grad.tolist() == y.detach().tolist()


def test_out_argument_as_torch():
    import pushforward.autograd.forward_ad as fwAD

    x, y = pf.tensor([1.0, 2.0]), pf.tensor([3.0, 4.0])
    buf = pf.zeros(2)
    assert pf.add(x, y, alpha=2, out=buf) is buf and buf.tolist() == [7.0, 10.0]
    view = pf.zeros(2, 2)[:, 0]  # a view: the write reaches its base
    pf.mul(x, y, out=view)
    assert view._base.tolist() == [[3.0, 0.0], [8.0, 0.0]]
    assert pf.cat([x, y], out=pf.zeros(4)).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert pf.sum(pf.ones(2, 3), 1, out=pf.zeros(2)).tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="out= tensor 0 has shape"):
        pf.add(x, y, out=pf.zeros(3))
    with pytest.raises(TypeError, match="argument 'out' must be a Tensor"):
        pf.sin(x, out=[1.0, 2.0])
    # out= functions are not differentiable: torch's rule, in both modes
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        pf.add(pf.ones(2, requires_grad=True), y, out=buf)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        pf.add(x, y, out=pf.zeros(2, requires_grad=True))
    with fwAD.dual_level():
        d = fwAD.make_dual(pf.rand(2), pf.rand(2))
        with pytest.raises(RuntimeError, match="out= function"):
            pf.add(x, x, out=d)
        with pytest.raises(RuntimeError, match="out= function"):
            pf.add(d, x, out=pf.zeros(2))
    with pf.no_grad():  # with grad mode off, an input requiring grad is only a value
        assert pf.add(pf.ones(2, requires_grad=True), y, out=buf).tolist() == [4.0, 5.0]
