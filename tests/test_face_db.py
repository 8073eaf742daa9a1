"""The faces' database (testing/facedb.py): every function pushforward.numpy (with linalg, fft,
random), pushforward.scipy and pushforward.array_api offer has an entry or a reasoned exclusion;
every entry's values and dtypes equal the reference's (NumPy through its own dispatch on tensors
and through pushforward.numpy, SciPy, array_api_strict), its derivatives pass gradcheck in reverse
and forward mode and at second order, and it runs under vmap, jet, pf.compile and on Dask-backed
inputs; a function the face refuses to differentiate raises naming it."""

from __future__ import annotations

import numpy as np
import pytest

import pushforward as pf
import pushforward.array_api as xp
from pushforward.errors import PushforwardError
from pushforward.testing.faceinfo import face_inputs
from pushforward.testing.faces_coverage import EXCLUDED, covered, face_functions, same_objects
from pushforward.testing.facedb import DATABASE, ROOT_ENTRIES, asarrays, check_entry, namespaces

KEYS = sorted(DATABASE)


def _all_functions() -> set:
    return {f"{label}.{n}" for label, names in face_functions().items() for n in names}


def _covered() -> set:
    seen = set()
    for root, entries in ROOT_ENTRIES.items():
        seen |= covered(entries, root, asarrays(root)[1])
    return seen | same_objects(seen)


def _missing(functions: set, seen: set) -> list:
    return sorted(functions - seen - set(EXCLUDED))


# ----------------------------------------------------------------------------- coverage


def test_every_face_function_has_an_entry_or_a_reason():
    missing = _missing(_all_functions(), _covered())
    assert not missing, f"face functions with no entry in the faces' database and no exclusion: {missing}"


def test_the_coverage_test_bites():
    functions = _all_functions() | {"np.brand_new_function"}
    assert _missing(functions, _covered()) == ["np.brand_new_function"]


def test_exclusions_are_current():
    """Every excluded name is a face function no entry calls (an entry makes its exclusion stale)."""
    functions, seen = _all_functions(), _covered()
    assert sorted(set(EXCLUDED) - functions) == []
    assert sorted(set(EXCLUDED) & seen) == []


def test_counts():
    """The sweep's size (reported in the closing note): functions per face, entries, exclusions."""
    functions = face_functions()
    assert sum(len(v) for v in functions.values()) > 800
    assert len(DATABASE) > 1400 and len(EXCLUDED) < 60


# ----------------------------------------------------------------------------- the sweep


_run = check_entry  # (one entry's checks: `pushforward check --faces` runs them too)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("key", KEYS)
def test_face(key):
    """Values and dtypes in every namespace, then each derivative and transform check that applies."""
    errors, unsupported = _run(key)
    assert not errors, "\n".join(errors)
    if unsupported and all(u.startswith("values") for u in unsupported):
        pytest.skip(unsupported[0])


REFUSING = [k for k in KEYS if DATABASE[k][1].refuses]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("key", REFUSING)
def test_a_refused_derivative_raises_naming_the_function(key):
    root, face = DATABASE[key]
    label, ns = namespaces(root, face)[-1]
    inputs = face_inputs(face)
    for t in inputs:
        if isinstance(t, pf.Tensor) and t.dtype.kind == "f":
            t.requires_grad_(True)
    with pytest.raises((TypeError, PushforwardError)):
        face.fn(ns, *inputs)


def test_the_sweep_bites(monkeypatch):
    """A wrong value, a wrong dtype and a wrong derivative each fail their entry."""
    from pushforward.numpy import _api

    # (the fast paths' one table of the ufuncs already called, which both faces read: emptied
    # for each wrong cbrt, and given back its entries at the end)
    calls = dict(_api._CALL)
    try:
        _sweep_bites(monkeypatch, _api)
    finally:
        _api._CALL.clear()
        _api._CALL.update(calls)


def _sweep_bites(monkeypatch, _api):
    _api._CALL.clear()
    monkeypatch.setitem(_api.UFUNCS, "cbrt", lambda x: pf.cbrt(x) * 1.0001)
    assert any("values" in e for e in _run("np:cbrt")[0])
    _api._CALL.clear()
    monkeypatch.setitem(_api.UFUNCS, "cbrt", lambda x: pf.cbrt(x).to(np.float32))
    assert any("float32" in e for e in _run("np:cbrt")[0])
    _api._CALL.clear()

    class Wrong(pf.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return pf.cbrt(x.detach())

        @staticmethod
        def backward(ctx, g):
            return g  # (d cbrt(x) / dx is not 1)

    monkeypatch.setitem(_api.UFUNCS, "cbrt", Wrong.apply)
    assert any(e.startswith("backward") for e in _run("np:cbrt")[0])


# ----------------------------------------------------------------------------- the disagreements
# float_power of integers, isinf(inf + nan j), fabs of complex, xp.reshape(copy=False), eigh's
# triangle and signs, nansum's dtype and out=, vmap of argsort and take with a batched index:
# tests/test_face_ops.py; np.float_power/np.fabs/np.isinf in every dtype: the element-wise sweep
# above ("np:float_power.i64", "np:fabs.c128", ...). The element count below.


@pytest.mark.parametrize("make", [xp.asarray, pf.tensor], ids=["array_api", "tensor"])
def test_size_is_the_element_count_and_torch_calls_it(make):
    x = make(np.zeros((2, 3)))
    assert x.size == 6 and x.size != 5 and int(x.size) == 6
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-2) == 2
    assert make(np.zeros((0, 3))).size == 0
    assert np.size(x) == 6


def test_numpy_named_disagreements_hold_in_the_database():
    keys = ("np:float_power.int", "np:fabs.c128", "np:isinf.complex_infinity", "xp:isinf.complex_infinity")
    for key in keys + ("np:nansum.dtype", "xp:linalg.eigh", "np:eigh_upper_vectors"):
        assert key in DATABASE, key


def test_a_dtype_numpy_has_no_loop_for_is_numpys_type_error_and_torchs_runtime_error():
    z = pf.tensor([1.5 + 1j])
    for face in (np, pf):
        with pytest.raises(TypeError, match="floor") as e:
            face.floor(z)
        assert isinstance(e.value, RuntimeError) and isinstance(e.value, pf.errors.OpDtypeError)
    with pytest.raises(TypeError):
        np.floor(z.numpy())
