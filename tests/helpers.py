"""Helpers shared by the test files (imported as `from helpers import ...`)."""
from __future__ import annotations

import numpy as np
import pytest

import pushforward.autograd.forward_ad as fwAD

try:
    import torch
except ImportError:  # pragma: no cover - torch is in the test extras
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def tangent(t, level=None):
    return fwAD.unpack_dual(t, level=level).tangent
