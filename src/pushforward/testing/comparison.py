"""`assert_close`: torch.testing.assert_close's rules (default tolerances by dtype) for pushforward.

>>> import pushforward as pf
>>> pf.testing.assert_close(pf.tensor([1.0, 2.0]), pf.tensor([1.0, 2.0 + 1e-9]))
>>> pf.testing.assert_close(pf.tensor([1.0]), pf.tensor([1.1]))
Traceback (most recent call last):
    ...
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 1 (100.0%)
Greatest absolute difference: 0.10000000000000009 at index (0,) (up to 1e-07 allowed)
Greatest relative difference: 0.09090909090909098 at index (0,) (up to 1e-07 allowed)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.tensor import Tensor

__all__ = ["assert_close"]

# torch's defaults (rtol, atol) by dtype; integers and bools compare exactly.
_TOLERANCES = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.complex64): (1.3e-6, 1e-5),
    np.dtype(np.complex128): (1e-7, 1e-7),
}


def _is_tensor_like(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic, int, float, complex, bool))


def _array(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_dtype: bool = True,
    check_device: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | None = None,
) -> None:
    """Raise AssertionError unless `actual` and `expected` (tensors, arrays, numbers, or sequences
    and mappings of them) have equal shapes, dtypes (``check_dtype``) and values within
    ``atol + rtol * |expected|``. Unset tolerances take torch's defaults for the dtype."""
    if (rtol is None) != (atol is None):
        raise ValueError(
            "assert_close: both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}."
        )
    _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, ())


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path: tuple) -> None:
    where = "" if not path else " at item " + "".join(f"[{p!r}]" for p in path)
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        _compare_arrays(
            _array(actual),
            _array(expected),
            rtol,
            atol,
            equal_nan,
            check_dtype and not _python_number(actual) and not _python_number(expected),
            msg,
            where,
        )
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(
                msg
                or f"The keys of the mappings do not match{where}: "
                f"{sorted(map(repr, actual))} != {sorted(map(repr, expected))}"
            )
        for k in actual:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, msg, path + (k,))
        return
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) and not isinstance(actual, str):
        if len(actual) != len(expected):
            raise AssertionError(
                msg or f"The length of the sequences mismatch{where}: {len(actual)} != {len(expected)}"
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, msg, path + (i,))
        return
    raise TypeError(
        f"assert_close: no comparison for inputs of types {type(actual).__name__} and {type(expected).__name__}{where}"
    )


def _python_number(x) -> bool:
    return isinstance(x, (int, float, complex, bool))


def _compare_arrays(a: np.ndarray, e: np.ndarray, rtol, atol, equal_nan, check_dtype, msg, where) -> None:
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match{where}: {a.shape} != {e.shape}.")
    if check_dtype and a.dtype != e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match{where}: {a.dtype} != {e.dtype}.")
    if rtol is None:
        rtol, atol = max((_TOLERANCES.get(d, (0.0, 0.0)) for d in (a.dtype, e.dtype)), key=lambda t: t[0])
    if a.dtype.kind == "b" or e.dtype.kind == "b":
        a, e = a.astype(np.int64), e.astype(np.int64)
    common = np.result_type(a.dtype, e.dtype, np.float64)
    af, ef = a.astype(common), e.astype(common)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ok = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=equal_nan)
        # isclose treats equal infinities as close; NaN only with equal_nan, as torch
        if ok.all():
            return
        abs_diff = np.abs(af - ef)
        rel_diff = abs_diff / np.abs(ef)
    bad = ~ok
    n_bad, n = int(bad.sum()), ok.size
    kind = "Scalars" if a.ndim == 0 else "Tensor-likes"
    abs_masked = np.where(bad, np.nan_to_num(abs_diff, nan=np.inf), -np.inf)
    rel_masked = np.where(bad, np.nan_to_num(rel_diff, nan=np.inf), -np.inf)
    ia = np.unravel_index(int(np.argmax(abs_masked)), a.shape) if a.ndim else ()
    ir = np.unravel_index(int(np.argmax(rel_masked)), a.shape) if a.ndim else ()
    ia = tuple(int(i) for i in ia)
    ir = tuple(int(i) for i in ir)
    if a.ndim == 0:
        text = (
            f"{kind} are not close{where}!\n\nExpected {e.item()} but got {a.item()}.\n"
            f"Absolute difference: {abs_diff.item()} (up to {atol} allowed)\n"
            f"Relative difference: {rel_diff.item()} (up to {rtol} allowed)"
        )
    else:
        text = (
            f"{kind} are not close{where}!\n\nMismatched elements: {n_bad} / {n} ({100 * n_bad / n:.1f}%)\n"
            f"Greatest absolute difference: {abs_diff[ia]} at index {ia} (up to {atol} allowed)\n"
            f"Greatest relative difference: {rel_diff[ir]} at index {ir} (up to {rtol} allowed)"
        )
    raise AssertionError(msg or text)
