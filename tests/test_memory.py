import platform
import sys

import numpy as np

import pushforward as pf


def test_reuse_freed_memory_reports_support_and_keeps_results_right(monkeypatch):
    ok = pf.memory.reuse_freed_memory()
    assert type(ok) is bool
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert ok is True  # mallopt exists and accepts both settings
    monkeypatch.setattr(sys, "platform", "darwin")
    assert pf.memory.reuse_freed_memory() is False  # unsupported: says so, changes nothing
    monkeypatch.undo()
    x = pf.tensor(np.linspace(0.0, 1.0, 200_000), requires_grad=True)
    (g,) = pf.autograd.grad((x * x).sum(), x)
    assert np.allclose(g.numpy(), 2 * x.detach().numpy())
