"""Every test starts with grad mode on and no live dual level, and fails if it leaks either."""
import pytest

import pushforward as pf
import pushforward.autograd.forward_ad as fwAD
from pushforward.engine.state import STATE


@pytest.fixture(autouse=True)
def _clean_autodiff_state():
    while STATE.levels:
        fwAD.exit_dual_level()
    pf.set_grad_enabled(True)
    yield
    leaked_levels = len(STATE.levels)
    leaked_mode = not pf.is_grad_enabled()
    while STATE.levels:
        fwAD.exit_dual_level()
    pf.set_grad_enabled(True)
    assert not leaked_levels, "test left a dual level open"
    assert not leaked_mode, "test left grad mode disabled"
