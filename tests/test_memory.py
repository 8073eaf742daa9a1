import sys

import numpy as np

import pushforward as pf


def test_reuse_freed_memory_reports_support_and_keeps_results_right():
    ok = pf.memory.reuse_freed_memory()
    assert ok is (sys.platform.startswith("linux") and ok)  # a bool; False off glibc
    x = pf.tensor(np.linspace(0.0, 1.0, 200_000), requires_grad=True)
    (g,) = pf.autograd.grad((x * x).sum(), x)
    assert np.allclose(g.numpy(), 2 * x.detach().numpy())
