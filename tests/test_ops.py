"""Generic tests over the op database (pushforward.testing.opdb).

For every op of derivatives.yaml: primal values against NumPy/SciPy (float64, float32 and
complex where supported), gradcheck in backward and forward mode, gradgradcheck
forward-over-reverse, complex gradcheck, in-place variant == out-of-place (values and
tangents), view ops share memory (primal and tangent), and proof that the checks bite.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.ops import generated as ops
from pushforward.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from pushforward.testing.opdb import (
    C128,
    F64,
    OPS,
    SampleInput,
    check_batched,
    check_op,
    check_sample,
    diff_leaves,
    backward_forms,
    forward_forms,
    gradcheck_fn,
    op_record,
    yaml_op_names,
)

ALL = sorted(OPS)
DIFF = [n for n in ALL if OPS[n].differentiable]
COMPLEX = [n for n in DIFF if OPS[n].supports_complex]
INPLACE = [n for n in ALL if OPS[n].inplace]
VIEWS = [n for n in ALL if OPS[n].is_view]
# ops without a NumPy reference (pf.nn.functional) are compared with torch in tests/test_nn.py
PRIMAL = [(n, np.dtype(d).name) for n in ALL for d in OPS[n].dtypes if OPS[n].ref is not None]


def _outputs(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _arr(x):
    return np.asarray(x._data) if isinstance(x, pf.Tensor) else np.asarray(x)


def _run_all(name, samples, check) -> None:
    """Run check(sample) on every sample; fail once with every sample's message."""
    errors = []
    for s in samples:
        try:
            check(s)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{s!r}: {type(e).__name__}: {e}")
    if errors:
        pytest.fail(f"{name}: {len(errors)}/{len(samples)} samples failed:\n" + "\n\n".join(errors), pytrace=False)


# -- coverage --------------------------------------------------------------------------------------


def test_every_yaml_op_has_an_entry():
    names = yaml_op_names()
    missing = sorted(set(names) - set(OPS))
    assert not missing, f"ops in derivatives.yaml without an op-database entry: {missing}"
    stale = sorted(set(OPS) - set(names))
    assert not stale, f"op-database entries for ops not in derivatives.yaml: {stale}"


def test_yaml_coverage_test_would_bite(monkeypatch):
    """The coverage test itself fails on an op without an entry, and on an entry without an op."""
    import sys

    here = sys.modules[__name__]
    monkeypatch.setattr(here, "yaml_op_names", lambda: list(OPS) + ["brand_new_op"])
    with pytest.raises(AssertionError, match="without an op-database entry: \\['brand_new_op'\\]"):
        test_every_yaml_op_has_an_entry()
    monkeypatch.setattr(here, "yaml_op_names", lambda: [n for n in OPS if n != "sin"])
    with pytest.raises(AssertionError, match="for ops not in derivatives.yaml: \\['sin'\\]"):
        test_every_yaml_op_has_an_entry()


def test_entries_match_yaml_metadata():
    pytest.importorskip("yaml")
    from pushforward.codegen.load import load

    for e in load():
        info = OPS[e.name]
        assert info.composite == (e.composite is not None), e.name
        assert info.differentiable == e.differentiable, e.name
        expect_inplace = None if not e.inplace else (e.inplace if isinstance(e.inplace, str) else f"{e.name}_")
        if info.inplace != "fill_" and info.inplace != "index_put_":  # composite fill_, method index_put_
            assert info.inplace == expect_inplace, e.name
        view = {"yes": True, "no": False, "maybe": "maybe"}[e.view]
        if not info.composite:
            assert info.is_view == view, e.name
            fw = dict(e.forward)
            key = fw.get("result", fw.get("result0"))
            kind = "none" if key is None else key if (key.startswith("auto_") or key == "zero") else "explicit"
            assert info.jvp_kind == kind, e.name


@pytest.mark.parametrize("name", ALL)
def test_has_samples(name):
    info = OPS[name]
    assert info.dtypes
    for d in info.dtypes:
        assert info.samples(d), f"{name}: no samples for {np.dtype(d)}"
    if info.differentiable:
        assert any(diff_leaves(s) for s in info.samples(info.dtypes[0])), f"{name}: no differentiable sample"


# -- primal values against NumPy --------------------------------------------------------------------


@pytest.mark.parametrize("name,dtype", PRIMAL, ids=[f"{n}-{d}" for n, d in PRIMAL])
def test_primal_matches_reference(name, dtype):
    info = OPS[name]

    def check(s: SampleInput):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expect = info.reference(s)
            got = info(s)
        exp_l, got_l = _outputs(expect), _outputs(got)
        assert len(exp_l) == len(got_l), f"{len(got_l)} outputs, reference has {len(exp_l)}"
        for g, e in zip(got_l, exp_l):
            assert isinstance(g, pf.Tensor), f"output is {type(g).__name__}, not a Tensor"
            e = np.asarray(e)
            ga = _arr(g)
            assert ga.shape == e.shape, f"shape {ga.shape}, reference {e.shape}"
            assert ga.dtype == e.dtype, f"dtype {ga.dtype}, reference {e.dtype}"
            tol = 1e-5 if np.dtype(dtype) == np.float32 or e.dtype in (np.float32, np.complex64) else 1e-10
            np.testing.assert_allclose(ga, e, rtol=tol, atol=tol, equal_nan=True)

    _run_all(name, info.samples(dtype), check)


METHOD_OPS = [n for n in ALL if n in ops.METHODS]


@pytest.mark.parametrize("name", METHOD_OPS)
def test_method_matches_function(name):
    """x.name(...) (the generated Tensor method) computes the same as the function."""
    info = OPS[name]

    def check(s):
        meth = getattr(s.input, name)
        if not callable(meth):  # a property (x.real, x.mT)
            got = meth
            assert not s.args and not s.kwargs
        else:
            got = meth(*s.args, **s.kwargs)
        for g, e in zip(_outputs(got), _outputs(info(s))):
            np.testing.assert_array_equal(_arr(g), _arr(e))

    _run_all(name, [s for s in info.samples(info.dtypes[0]) if isinstance(s.input, pf.Tensor)], check)


# -- derivatives ---------------------------------------------------------------------------------------


def _grad_samples(info, dtype=F64):
    return [s for s in info.samples(dtype) if s.grad and diff_leaves(s)]


@pytest.mark.parametrize("name", DIFF)
def test_gradcheck_backward_and_forward(name):
    """Backward, and forward in every form of the formula (array, Tensor, nested: check_sample)."""
    info = OPS[name]
    _run_all(name, _grad_samples(info), lambda s: check_sample(info, s))


@pytest.mark.parametrize("name", DIFF)
def test_gradgradcheck_forward_over_reverse(name):
    info = OPS[name]
    if not info.gradgrad:
        pytest.skip("second derivatives not checked for this op")

    def check(s):
        fn, inputs = gradcheck_fn(info, s)
        gradgradcheck(fn, inputs, check_rev_over_rev=False, fast_mode=info.fast_mode, atol=info.atol, rtol=info.rtol)

    samples = [s for s in _grad_samples(info) if s.gradgrad and sum(t.numel() for t in diff_leaves(s)) <= 24][:4]
    _run_all(name, samples, check)


@pytest.mark.parametrize("name", DIFF)
def test_batched_grads(name):
    """Vector mode: every op's batching rules, through its forward and its backward
    formulas, against the jvp column by column and the vjp row by row, real and complex samples
    (torch's check_batched_forward_grad and check_batched_grad)."""
    info = OPS[name]
    samples = [s for s in info.samples(F64) if s.grad] + [s for s in info.samples(C128) if s.grad]
    _run_all(name, samples, lambda s: check_batched(info, s))


@pytest.mark.parametrize("name", COMPLEX)
def test_gradcheck_complex(name):
    info = OPS[name]
    _run_all(name, _grad_samples(info, C128), lambda s: check_sample(info, s))


@pytest.mark.parametrize(
    "name,make",
    [
        ("sin", lambda r: (r.standard_normal(10_000),)),
        ("mul", lambda r: (r.standard_normal((100, 100)), r.standard_normal(100))),
        ("matmul", lambda r: (r.standard_normal((60, 50)), r.standard_normal((50, 40)))),
        ("softmax", lambda r: (r.standard_normal((100, 100)), 1)),
        ("cumprod", lambda r: (r.uniform(0.5, 1.5, 2_000), 0)),
    ],
)
def test_fast_mode_on_large_inputs(name, make):
    """fast_mode checks big inputs (random projections instead of whole Jacobians)."""
    info = OPS[name]
    vals = make(np.random.default_rng(0))
    s = SampleInput(
        pf.from_numpy(vals[0]), tuple(pf.from_numpy(v) if isinstance(v, np.ndarray) else v for v in vals[1:])
    )
    fn, inputs = gradcheck_fn(info, s)
    assert gradcheck(fn, inputs, fast_mode=True, check_undefined_grad=False, check_forward_ad=True)


def test_check_op_interface():
    r = check_op("sin")
    assert r == {
        "backward": True,
        "forward": True,
        "fwd_over_rev": True,
        "complex": True,
        "batched": True,
        "taylor": True,
        "kind": "auto_element_wise",
        "error": None,
    }
    r = check_op("eq")
    assert r["backward"] is None and r["forward"] is None and r["kind"] == "none"
    r = check_op("split", fast=True)
    assert r["kind"] == "composite" and r["backward"] is True


# -- in-place variants --------------------------------------------------------------------------------


def _inplace_samples(info):
    """float64 samples whose out-of-place result has the input's shape and dtype (so in-place is legal)."""
    out = []
    for s in info.samples(F64):
        if not isinstance(s.input, pf.Tensor):
            continue
        r = info(s)
        if isinstance(r, pf.Tensor) and r.shape == s.input.shape and r.dtype == s.input.dtype:
            out.append(s)
    return out


def _dual_sample(s: SampleInput, rng, skip_first=False, requires_grad=False):
    """A copy of the sample whose float tensors are duals (fresh primals and random tangents)."""
    from pushforward.testing.opdb import _rebuild

    leaves = diff_leaves(s)
    duals, tangents = [], []
    for k, t in enumerate(leaves):
        p = pf.from_numpy(np.array(t._data, copy=True)).requires_grad_(requires_grad)
        if skip_first and k == 0:
            duals.append(p)
            tangents.append(None)
            continue
        tan = rng.standard_normal(t.shape)
        if t.dtype.kind == "c":
            tan = tan + 1j * rng.standard_normal(t.shape)
        tan = pf.from_numpy(np.asarray(tan, dtype=t.dtype))
        duals.append(fwAD.make_dual(p, tan))
        tangents.append(tan)
    return _rebuild(s, duals), tangents


def _primal_tangent(x):
    p, t = fwAD.unpack_dual(x)
    return _arr(p).copy(), (None if t is None else _arr(t).copy())


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_matches_out_of_place(name):
    info = OPS[name]

    def check(s):
        # values, no autodiff
        expect = _arr(info(s)).copy()
        x = s.input.clone()
        got = getattr(x, info.inplace)(*s.args, **s.kwargs)
        assert got is x, f"{info.inplace} must return self"
        np.testing.assert_allclose(_arr(x), expect, rtol=1e-12, atol=1e-12)
        # values and tangents under a dual level; also with a self that has no tangent (it gets zeros)
        for skip_first in (False, True):
            if skip_first and len(diff_leaves(s)) < 2:
                continue
            with fwAD.dual_level():
                ref_s, _ = _dual_sample(s, np.random.default_rng(1), skip_first)
                p_ref, t_ref = _primal_tangent(info(ref_s))
                in_s, _ = _dual_sample(s, np.random.default_rng(1), skip_first)
                getattr(in_s.input, info.inplace)(*in_s.args, **in_s.kwargs)
                p_in, t_in = _primal_tangent(in_s.input)
            np.testing.assert_allclose(p_in, p_ref, rtol=1e-12, atol=1e-12)
            if t_ref is None:
                assert t_in is None or not np.any(t_in), "in-place made a nonzero tangent"
            else:
                assert t_in is not None, "in-place lost the tangent"
                np.testing.assert_allclose(t_in, t_ref, rtol=1e-10, atol=1e-12)

    samples = _inplace_samples(info)
    assert samples, f"{name}: no sample suitable for {info.inplace}"
    _run_all(name, samples, check)


# -- deferred tangents ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DIFF)
def test_deferred_tangent_matches_eager(name):
    """On an untracked level while a tape is recorded (forward-over-reverse), tangents are
    deferred (autograd/pending.py); read back, they equal the eagerly computed ones."""
    info = OPS[name]

    def check(s):
        with fwAD.dual_level():
            ref_s, _ = _dual_sample(s, np.random.default_rng(2))
            expect = [_primal_tangent(o)[1] for o in _outputs(info(ref_s)) if isinstance(o, pf.Tensor)]
        with fwAD.untracked_level():
            lazy_s, _ = _dual_sample(s, np.random.default_rng(2), requires_grad=True)
            got = [_primal_tangent(o)[1] for o in _outputs(info(lazy_s)) if isinstance(o, pf.Tensor)]
        assert len(got) == len(expect)
        for g, e in zip(got, expect):
            if e is None:
                assert g is None or not np.any(g)
            else:
                assert g is not None, "the deferred tangent was lost"
                np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)

    _run_all(name, info.samples(F64), check)


# -- vmap ------------------------------------------------------------------------------------------------

# Training-mode normalisation writes the batch's statistics into running buffers that are not batched
# (torch's vmap refuses the same write); every other op runs under vmap.
_VMAP_REFUSED = {"batch_norm", "instance_norm"}
# as_strided reads storage: under vmap each batch element's memory is its own storage (torch's rule),
# while an element of the stacked batch, called alone, views the whole batch's memory (test_vmap.py
# checks it against a loop over separate tensors).
_VMAP_REFUSED |= {"as_strided", "_as_strided"}


@pytest.mark.parametrize("name", [n for n in DIFF if n not in _VMAP_REFUSED])
def test_vmap_matches_the_loop(name):
    """vmap over the sample's floating inputs (a batch of two: the values and the values times
    1.001) equals the op on each batch element, stacked: by a batching rule, or once per element
    (the `loop` rule; `loop_batched` for a composite that reads its inputs' arrays)."""
    info = OPS[name]

    def check(s):
        fn, inputs = gradcheck_fn(info, s)
        if not inputs:
            return
        batched = [pf.stack([x.detach(), x.detach() * 1.001]) for x in inputs]
        got = _outputs(pf.func.vmap(fn)(*batched))
        each = [_outputs(fn(*[b[i] for b in batched])) for i in range(2)]
        assert len(got) == len(each[0])
        for k, g in enumerate(got):
            np.testing.assert_allclose(_arr(g), np.stack([_arr(e[k]) for e in each]), rtol=1e-10, atol=1e-12)

    _run_all(name, info.samples(F64)[:3], check)


# -- views ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", VIEWS)
def test_view_shares_memory_with_input_and_tangent(name):
    info = OPS[name]
    dtype = C128 if name == "imag" else F64
    checked = []

    def check(s):
        x = s.input
        outs = [o for o in _outputs(info(s)) if o.numel() > 0]
        if info.is_view == "maybe" and not all(np.shares_memory(_arr(o), _arr(x)) for o in outs):
            return  # a copy this time (allowed for reshape/flatten/...)
        for o in outs:
            assert np.shares_memory(_arr(o), _arr(x)), "output does not share memory with the input"
        with fwAD.dual_level():
            tan = pf.from_numpy(np.random.default_rng(0).standard_normal(x.shape).astype(x.dtype))
            d = fwAD.make_dual(x.clone(), tan)
            base_t = fwAD.unpack_dual(d).tangent
            douts = _outputs(info.op(d, *s.args, **s.kwargs))
            expects = _outputs(info.op(tan, *s.args, **s.kwargs))
            for o, do, expect in zip(_outputs(info(s)), douts, expects):
                if o.numel() == 0:
                    continue
                t = fwAD.unpack_dual(do).tangent
                assert t is not None, "the view of a dual has no tangent"
                assert np.shares_memory(_arr(t), _arr(base_t)), (
                    "the view's tangent does not share memory with the input's tangent"
                )
                np.testing.assert_allclose(_arr(t), _arr(expect))
        checked.append(s)

    _run_all(name, info.samples(dtype), check)
    assert checked, f"{name}: no sample produced a view"


# -- the checks bite --------------------------------------------------------------------------------------


def _x():
    return pf.tensor([0.3, -1.2, 2.0], requires_grad=True)


def test_corrupted_forward_formula_fails(monkeypatch):
    rec = op_record("sin")
    assert gradcheck(pf.sin, (_x(),), check_forward_ad=True)
    # both compiled forms of the formula: over Tensors and over bare arrays
    monkeypatch.setattr(rec, "jvp", lambda self_p, self_t, result: self_t * self_p.cos() * 1.01)
    monkeypatch.setattr(rec, "jvp_np", lambda self_p, self_t, result: self_t * np.cos(self_p) * 1.01)
    assert gradcheck(pf.sin, (_x(),), check_forward_ad=False)  # backward is untouched
    with pytest.raises(GradcheckError, match="forward"):
        gradcheck(pf.sin, (_x(),), check_backward_ad=False, check_forward_ad=True)
    assert not gradcheck(pf.sin, (_x(),), raise_exception=False, fast_mode=True, check_forward_ad=True)


def test_corrupted_explicit_forward_formula_fails(monkeypatch):
    rec = op_record("mul")
    a, b = _x(), pf.tensor([1.5, 0.5, -0.7], requires_grad=True)
    assert gradcheck(pf.mul, (a, b), check_forward_ad=True)

    # forget the product rule's second term
    def bad(self_p, other_p, self_t, other_t, result):
        return other_p * self_t if self_t is not None else 0 * other_t

    monkeypatch.setattr(rec, "jvp", bad)
    monkeypatch.setattr(rec, "jvp_np", bad)
    with pytest.raises(GradcheckError, match="forward"):
        gradcheck(pf.mul, (a, b), check_backward_ad=False, check_forward_ad=True)


def test_corrupted_backward_formula_fails(monkeypatch):
    rec = op_record("sin")
    monkeypatch.setattr(rec, "backward", lambda grad, self, result, needs: (grad * self.cos() * 1.01,))
    monkeypatch.setattr(rec, "backward_np", lambda grad, self, result, needs: (grad * np.cos(self) * 1.01,))
    assert gradcheck(
        pf.sin, (_x(),), check_backward_ad=False, check_undefined_grad=False, check_forward_ad=True
    )  # forward untouched
    with pytest.raises(GradcheckError, match="backward"):
        gradcheck(pf.sin, (_x(),), check_forward_ad=False)
    assert not gradcheck(pf.sin, (_x(),), raise_exception=False, fast_mode=True, check_forward_ad=False)


def test_corrupted_second_derivative_fails(monkeypatch):
    """A backward formula that is right to first order but not differentiable correctly."""
    rec = op_record("sin")
    x = pf.tensor([0.3, -1.2, 2.0])

    def bad(grad, self, result, needs):  # right value, but its own derivative is lost (detached)
        return (grad * self.detach().cos(),)

    monkeypatch.setattr(rec, "backward", bad)
    assert gradcheck(pf.sin, (x.requires_grad_(),), check_forward_ad=False)
    with pytest.raises(GradcheckError):
        gradgradcheck(pf.sin, (pf.tensor([0.3, -1.2, 2.0], requires_grad=True),), check_rev_over_rev=False)


def test_check_op_reports_corruption(monkeypatch):
    rec = op_record("exp")
    monkeypatch.setattr(rec, "jvp", lambda self_p, self_t, result: self_t * result * 1.01)
    monkeypatch.setattr(rec, "jvp_np", lambda self_p, self_t, result: self_t * result * 1.01)
    r = check_op("exp")
    assert r["backward"] is True and r["forward"] is False and "forward" in r["error"]


@pytest.mark.parametrize(
    "name,form", [("exp", "jvp"), ("mul", "jvp"), ("pow", "jvp"), ("exp", "jvp_np"), ("div", "jvp_np")]
)
def test_check_op_reports_either_compiled_form_wrong(monkeypatch, name, form):
    """One compiled form wrong, the other right: `pushforward check` fails the op (it used to
    check only the array form where one exists)."""
    rec = op_record(name)
    monkeypatch.setattr(rec, form, _scaled(getattr(rec, form)))
    r = check_op(name)
    assert r["forward"] is False and r["backward"] is True, r
    assert ("tensor form" if form == "jvp" else "array form") in r["error"], r["error"]


# -- every compiled form is checked: wrong by 1.5x, each one fails its op's checks ---------------------------


def _scale(r, k):
    if r is None:
        return None
    if isinstance(r, (tuple, list)):
        return type(r)(_scale(x, k) for x in r)
    return r * k


def _scaled(fn, k=1.5):
    def wrong(*args):
        return _scale(fn(*args), k)

    return wrong


def _bites(info, **kw) -> bool:
    """Does check_sample fail on some sample (float64 or complex)?"""
    for dt in (F64, C128):
        for s in _grad_samples(info, dt):
            try:
                check_sample(info, s, **kw)
            except GradcheckError:
                return True
    return False


def _zero_derivative(info) -> bool:
    """The op's derivative is zero on every sample (floor, round, ...): a scaled formula is right."""
    for s in _grad_samples(info):
        fn, inputs = gradcheck_fn(info, s)
        for out in _outputs(fn(*inputs)):
            if isinstance(out, pf.Tensor) and out.requires_grad and out.dtype.kind in "fc":
                (g,) = pf.autograd.grad(out.sum(), inputs[:1], allow_unused=True)
                if g is not None and np.any(_arr(g)):
                    return False
    return True


TWO_FORMS = [n for n in DIFF if op_record(n) is not None and op_record(n).jvp_np is not None]
RECORDS = [n for n in DIFF if op_record(n) is not None]


def test_both_forms_are_checked_for_every_op_that_has_them():
    assert len(TWO_FORMS) > 80
    assert all(forward_forms(OPS[n]) == ("array", "tensor", "nested") for n in TWO_FORMS)


def _missed_when_scaled(monkeypatch, names: list, form: str, **checks) -> list:
    """The ops among `names` whose checks (check_sample with `checks`) pass with the compiled form
    `form` of their formula off by 1.5x; asserts they are those whose derivative is zero."""
    missed = []
    for name in names:
        rec = op_record(name)
        with monkeypatch.context() as m:
            m.setattr(rec, form, _scaled(getattr(rec, form)))
            if not _bites(OPS[name], **checks):
                missed.append(name)
    assert missed == [n for n in missed if _zero_derivative(OPS[n])], (
        f"a {form} off by 1.5x passes the checks ({checks}) of: {missed}"
    )
    return missed


@pytest.mark.parametrize("form", ["jvp", "jvp_np"])
def test_a_wrong_compiled_forward_form_fails_the_checks(monkeypatch, form):
    assert len(_missed_when_scaled(monkeypatch, TWO_FORMS, form, backward=False)) < 6


def test_a_wrong_backward_formula_fails_the_checks(monkeypatch):
    assert len(_missed_when_scaled(monkeypatch, RECORDS, "backward", forward=False)) < 6


TWO_BACKWARD_FORMS = [n for n in DIFF if op_record(n) is not None and op_record(n).backward_np is not None]


def test_both_backward_forms_are_checked_for_every_op_that_has_them():
    assert len(TWO_BACKWARD_FORMS) > 60
    assert all(backward_forms(OPS[n]) == ("array", "tensor") for n in TWO_BACKWARD_FORMS)


@pytest.mark.parametrize("form", ["backward", "backward_np"])
def test_a_wrong_compiled_backward_form_fails_the_checks(monkeypatch, form):
    """The backward formula compiled over Tensors and over arrays: either one off by 1.5x fails
    the op's backward checks (the array form runs in a plain backward pass, the Tensor form when
    the gradient is differentiated)."""
    assert len(_missed_when_scaled(monkeypatch, TWO_BACKWARD_FORMS, form, forward=False)) < 6


# -- conventions where the derivative is a choice (ties, zeros, kinks, complex): torch as the oracle --------


def _vnorm(L, x, p=2):
    return L.linalg.norm(x, p) if L is pf else L.linalg.vector_norm(x, p)


_A = np.array
ORACLE = {
    "abs at 0": (lambda L, x: L.abs(x), [_A([0.0, -1.0, 2.0])]),
    "abs complex at 0": (lambda L, x: L.abs(x), [_A([0j, 1 + 1j])]),
    "relu at 0": (lambda L, x: L.relu(x), [_A([0.0, -1.0, 2.0])]),
    "maximum tie": (lambda L, x, y: L.maximum(x, y), [_A([1.0, 2.0]), _A([1.0, 0.0])]),
    "minimum tie": (lambda L, x, y: L.minimum(x, y), [_A([1.0, 2.0]), _A([1.0, 0.0])]),
    "amax ties dim": (lambda L, x: L.amax(x, 1), [_A([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0]])]),
    "amax ties all": (lambda L, x: L.amax(x), [_A([[1.0, 1.0, 0.0], [0.0, 1.0, 0.5]])]),
    "max dim ties": (lambda L, x: L.max(x, 1).values, [_A([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0]])]),
    "min full ties": (lambda L, x: L.min(x), [_A([[0.0, 1.0, 0.0]])]),
    "norm at 0": (lambda L, x: _vnorm(L, x), [_A([0.0, 0.0])]),
    "norm inf ties": (lambda L, x: _vnorm(L, x, float("inf")), [_A([1.0, -1.0, 0.5])]),
    "norm 1 with 0": (lambda L, x: _vnorm(L, x, 1), [_A([1.0, 0.0, 0.5])]),
    "norm complex": (lambda L, x: _vnorm(L, x, 3), [_A([1 + 1j, 0.5j])]),
    "clamp at bounds": (lambda L, x: L.clamp(x, -1.0, 1.0), [_A([-1.0, 1.0, 0.5, 2.0])]),
    "sgn complex": (lambda L, x: L.sgn(x), [_A([0j, 1 + 1j, -2 + 0.5j])]),
    "angle complex": (lambda L, x: L.angle(x), [_A([0j, 1 + 1j, -2 + 0.5j])]),
    "angle real": (lambda L, x: L.angle(x), [_A([0.0, 1.0, -2.0])]),
    "prod one zero": (lambda L, x: L.prod(x), [_A([2.0, 0.0, 3.0])]),
    "prod two zeros": (lambda L, x: L.prod(x), [_A([2.0, 0.0, 0.0])]),
    "prod dim zeros": (lambda L, x: L.prod(x, 1), [_A([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0]])]),
    "cumprod zeros": (lambda L, x: L.cumprod(x, 0), [_A([2.0, 0.0, 3.0, 0.0, 2.0])]),
    "xlogy at x=0": (lambda L, x, y: L.xlogy(x, y), [_A([0.0, 1.0]), _A([2.0, 3.0])]),
    "pow zero base": (lambda L, x, y: L.pow(x, y), [_A([0.0, 0.0, 0.0, 2.0]), _A([0.0, 2.0, 0.5, 0.0])]),
    "pow exponent 0": (lambda L, x: L.pow(x, 0.0), [_A([0.0, 2.0])]),
    "pow complex": (lambda L, x, y: L.pow(x, y), [_A([0j, 1 + 1j]), _A([2 + 0j, 0.5 + 0.5j])]),
    "var complex": (lambda L, x: L.var(x), [_A([1 + 1j, 2 - 1j, 0.5j])]),
    "std at 0": (lambda L, x: L.std(x), [_A([1.0, 1.0, 1.0])]),
    "copysign at 0": (lambda L, x, y: L.copysign(x, y), [_A([0.0, 1.0, -2.0]), _A([-1.0, -1.0, 1.0])]),
    "logit eps": (lambda L, x: L.logit(x, 0.2), [_A([0.1, 0.2, 0.5, 0.95])]),
    "div floor": (lambda L, x, y: L.div(x, y, rounding_mode="floor"), [_A([1.5, -2.5]), _A([2.0, 0.7])]),
    "fmod": (lambda L, x, y: L.fmod(x, y), [_A([1.5, -2.5]), _A([0.4, 0.7])]),
    "remainder": (lambda L, x, y: L.remainder(x, y), [_A([1.5, -2.5]), _A([-0.4, 0.7])]),
    "atan2 axes": (lambda L, x, y: L.atan2(x, y), [_A([0.0, 1.0]), _A([1.0, 0.0])]),
    "sqrt at 0": (lambda L, x: L.sqrt(x), [_A([0.0, 1.0])]),
    "masked_fill value": (
        lambda L, x, v: L.masked_fill(x, L.tensor([True, False, True]), v),
        [_A([1.0, 2.0, 3.0]), _A(0.5)],
    ),
    "dot complex": (lambda L, x, y: L.dot(x, y), [_A([1 + 1j, 2j]), _A([1 - 1j, 3 + 0j])]),
    "real/imag": (lambda L, x: L.real(x) * L.imag(x), [_A([1 + 1j, 2j])]),
    "lgamma negative": (lambda L, x: L.lgamma(x), [_A([-0.5, 2.5])]),
    "round halves": (lambda L, x: L.round(x), [_A([0.5, 1.5])]),
    "matmul broadcast": (lambda L, x, y: L.matmul(x, y), [np.ones((1, 2, 3)), np.arange(12.0).reshape(2, 3, 2)]),
    "expand": (lambda L, x: x.expand(2, 3), [_A([1.0, 2.0, 3.0])]),
}


@pytest.mark.parametrize("case", list(ORACLE))
def test_derivative_conventions_match_torch(case):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw

    f, arrays = ORACLE[case]
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pt = [pf.from_numpy(a.copy()).requires_grad_() for a in arrays]
        tt = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
        po, to = f(pf, *pt), f(torch, *tt)
        np.testing.assert_allclose(_arr(po), to.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg="value")
        go = np.asarray(rng.standard_normal(tuple(to.shape)))
        if to.is_complex():
            go = np.asarray(go + 1j * rng.standard_normal(tuple(to.shape)))
        pg = pf.autograd.grad(po, pt, pf.from_numpy(go.copy()), allow_unused=True)
        tg = torch.autograd.grad(to, tt, torch.from_numpy(go.copy()), allow_unused=True)
        for i, (a, b, x) in enumerate(zip(pg, tg, arrays)):
            a = np.zeros_like(x) if a is None else _arr(a)
            b = np.zeros_like(x) if b is None else b.numpy()
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=f"grad of input {i}")
        tans = []
        for a in arrays:
            t = np.asarray(rng.standard_normal(a.shape))
            if np.iscomplexobj(a):
                t = t + 1j * rng.standard_normal(a.shape)
            tans.append(t.astype(a.dtype))
        with fwAD.dual_level():
            pj = fwAD.unpack_dual(
                f(pf, *[fwAD.make_dual(pf.from_numpy(a.copy()), pf.from_numpy(t.copy())) for a, t in zip(arrays, tans)])
            ).tangent
            pj = None if pj is None else _arr(pj).copy()
        with tfw.dual_level():
            tj = tfw.unpack_dual(
                f(
                    torch,
                    *[
                        tfw.make_dual(torch.from_numpy(a.copy()), torch.from_numpy(t.copy()))
                        for a, t in zip(arrays, tans)
                    ],
                )
            ).tangent
            tj = None if tj is None else tj.detach().numpy().copy()
    shape = tuple(to.shape)
    np.testing.assert_allclose(
        np.zeros(shape) if pj is None else pj,
        np.zeros(shape) if tj is None else tj,
        rtol=1e-10,
        atol=1e-12,
        equal_nan=True,
        err_msg="jvp",
    )
